//! OffsetForLeaderEpoch (API key 23), versions 2-4; flexible from v4.
//!
//! What a consumer needs after a leader change (KIP-320): for a position fetched under leader
//! epoch `e`, ask the current leader where epoch `e` ends. An end offset below the position
//! means the log was truncated under the consumer (unclean leader election), and the position
//! must be reset. `current_leader_epoch` fences a stale leader (FENCED_LEADER_EPOCH) or a stale
//! client (UNKNOWN_LEADER_EPOCH).

use crate::protocol::codec::{
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder, Request,
};
use crate::protocol::error::BrokerErrorKind;

const REQ: &str = "OffsetForLeaderEpochRequest";
const RESP: &str = "OffsetForLeaderEpochResponse";

/// `ReplicaId` of a consumer (what Java's consumer sends).
pub const CONSUMER_REPLICA_ID: i32 = -1;

/// A partition to look up (`OffsetForLeaderPartition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetForLeaderPartition {
    /// `Partition`.
    pub partition: i32,
    /// `CurrentLeaderEpoch` (default -1): the epoch the client believes current.
    pub current_leader_epoch: i32,
    /// `LeaderEpoch`: the epoch whose end offset is wanted.
    pub leader_epoch: i32,
}

impl Default for OffsetForLeaderPartition {
    fn default() -> Self {
        OffsetForLeaderPartition {
            partition: 0,
            current_leader_epoch: -1,
            leader_epoch: 0,
        }
    }
}

impl Encodable for OffsetForLeaderPartition {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.partition);
        enc.i32(self.current_leader_epoch);
        enc.i32(self.leader_epoch);
        enc.end_struct(version >= 4);
        Ok(())
    }
}

impl Decodable for OffsetForLeaderPartition {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let p = OffsetForLeaderPartition {
            partition: dec.i32("Partition")?,
            current_leader_epoch: dec.i32("CurrentLeaderEpoch")?,
            leader_epoch: dec.i32("LeaderEpoch")?,
        };
        dec.end_struct(version >= 4)?;
        Ok(p)
    }
}

/// A topic to look up (`OffsetForLeaderTopic`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetForLeaderTopic {
    /// `Topic`.
    pub topic: String,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<OffsetForLeaderPartition>,
}

impl Encodable for OffsetForLeaderTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 4;
        enc.string_as("Topic", &self.topic, flex)?;
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetForLeaderTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 4;
        let t = OffsetForLeaderTopic {
            topic: dec.string_as("Topic", flex)?,
            partitions: dec.array("Partitions", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `OffsetForLeaderEpochRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetForLeaderEpochRequest {
    /// `ReplicaId` (v3+, schema default -2, ignorable): [`CONSUMER_REPLICA_ID`] for a consumer.
    pub replica_id: i32,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<OffsetForLeaderTopic>,
}

impl Default for OffsetForLeaderEpochRequest {
    fn default() -> Self {
        OffsetForLeaderEpochRequest {
            replica_id: -2,
            topics: Vec::new(),
        }
    }
}

impl Encodable for OffsetForLeaderEpochRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 4;
        if version >= 3 {
            enc.i32(self.replica_id);
        }
        enc.array("Topics", &self.topics, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetForLeaderEpochRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 4;
        let mut r = OffsetForLeaderEpochRequest::default();
        if version >= 3 {
            r.replica_id = dec.i32("ReplicaId")?;
        }
        r.topics = dec.array("Topics", flex, version)?;
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for OffsetForLeaderEpochRequest {
    const API_KEY: i16 = 23;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 4;
    const FLEXIBLE_FROM: i16 = 4;
    const NAME: &'static str = REQ;
}

impl crate::protocol::codec::Response for OffsetForLeaderEpochResponse {
    type Request = OffsetForLeaderEpochRequest;
}

impl Request for OffsetForLeaderEpochRequest {
    type Response = OffsetForLeaderEpochResponse;
}

/// One partition's answer (`EpochEndOffset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct EpochEndOffset {
    /// `ErrorCode`.
    pub error_code: i16,
    /// `Partition`.
    pub partition: i32,
    /// `LeaderEpoch` (default -1): the largest epoch not above the one asked for.
    pub leader_epoch: i32,
    /// `EndOffset` (default -1): where that epoch ends.
    pub end_offset: i64,
}

impl Default for EpochEndOffset {
    fn default() -> Self {
        EpochEndOffset {
            error_code: 0,
            partition: 0,
            leader_epoch: -1,
            end_offset: -1,
        }
    }
}

impl EpochEndOffset {
    /// The partition-level error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for EpochEndOffset {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i16(self.error_code);
        enc.i32(self.partition);
        enc.i32(self.leader_epoch);
        enc.i64(self.end_offset);
        enc.end_struct(version >= 4);
        Ok(())
    }
}

impl Decodable for EpochEndOffset {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let e = EpochEndOffset {
            error_code: dec.i16("ErrorCode")?,
            partition: dec.i32("Partition")?,
            leader_epoch: dec.i32("LeaderEpoch")?,
            end_offset: dec.i64("EndOffset")?,
        };
        dec.end_struct(version >= 4)?;
        Ok(e)
    }
}

/// One topic's answer (`OffsetForLeaderTopicResult`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetForLeaderTopicResult {
    /// `Topic`.
    pub topic: String,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<EpochEndOffset>,
}

impl Encodable for OffsetForLeaderTopicResult {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 4;
        enc.string_as("Topic", &self.topic, flex)?;
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetForLeaderTopicResult {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 4;
        let t = OffsetForLeaderTopicResult {
            topic: dec.string_as("Topic", flex)?,
            partitions: dec.array("Partitions", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `OffsetForLeaderEpochResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetForLeaderEpochResponse {
    /// `ThrottleTimeMs` (ignorable).
    pub throttle_time_ms: i32,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<OffsetForLeaderTopicResult>,
}

impl Encodable for OffsetForLeaderEpochResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 4;
        enc.i32(self.throttle_time_ms);
        enc.array("Topics", &self.topics, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetForLeaderEpochResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 4;
        let r = OffsetForLeaderEpochResponse {
            throttle_time_ms: dec.i32("ThrottleTimeMs")?,
            topics: dec.array("Topics", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for OffsetForLeaderEpochResponse {
    const API_KEY: i16 = 23;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 4;
    const FLEXIBLE_FROM: i16 = 4;
    const NAME: &'static str = RESP;
}

#[cfg(test)]
mod tests;
