//! ListOffsets (API key 2), versions 1-11; flexible from v6.
//!
//! A partition's `timestamp` is either a real timestamp (the first offset whose record
//! timestamp is at or after it) or one of the special values below. A broker checks that the
//! request version is high enough for the special value it carries (e.g. [`MAX_TIMESTAMP`]
//! needs v7); [`EARLIEST_TIMESTAMP`] and [`LATEST_TIMESTAMP`] work in every version.

use crate::protocol::codec::{
    ensure_default, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder,
    Request,
};
use crate::protocol::error::BrokerErrorKind;

const REQ: &str = "ListOffsetsRequest";
const RESP: &str = "ListOffsetsResponse";

/// `Timestamp` -1: the log end offset (`auto.offset.reset=latest`).
pub const LATEST_TIMESTAMP: i64 = -1;
/// `Timestamp` -2: the log start offset (`auto.offset.reset=earliest`).
pub const EARLIEST_TIMESTAMP: i64 = -2;
/// `Timestamp` -3: the offset of the record with the largest timestamp (v7+).
pub const MAX_TIMESTAMP: i64 = -3;
/// `Timestamp` -4: the earliest offset in local (non-tiered) storage (v8+).
pub const EARLIEST_LOCAL_TIMESTAMP: i64 = -4;
/// `Timestamp` -5: the latest offset in tiered storage (v9+).
pub const LATEST_TIERED_TIMESTAMP: i64 = -5;

/// A partition to look up (`ListOffsetsPartition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ListOffsetsPartition {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `CurrentLeaderEpoch` (v4+, default -1, ignorable).
    pub current_leader_epoch: i32,
    /// `Timestamp`: a timestamp or one of the special values of this module.
    pub timestamp: i64,
}

impl Default for ListOffsetsPartition {
    fn default() -> Self {
        ListOffsetsPartition {
            partition_index: 0,
            current_leader_epoch: -1,
            timestamp: LATEST_TIMESTAMP,
        }
    }
}

impl Encodable for ListOffsetsPartition {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.partition_index);
        if version >= 4 {
            enc.i32(self.current_leader_epoch);
        }
        enc.i64(self.timestamp);
        enc.end_struct(version >= 6);
        Ok(())
    }
}

impl Decodable for ListOffsetsPartition {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let mut p = ListOffsetsPartition {
            partition_index: dec.i32("PartitionIndex")?,
            ..Default::default()
        };
        if version >= 4 {
            p.current_leader_epoch = dec.i32("CurrentLeaderEpoch")?;
        }
        p.timestamp = dec.i64("Timestamp")?;
        dec.end_struct(version >= 6)?;
        Ok(p)
    }
}

/// A topic to look up (`ListOffsetsTopic`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ListOffsetsTopic {
    /// `Name`.
    pub name: String,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<ListOffsetsPartition>,
}

impl Encodable for ListOffsetsTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 6;
        enc.string_as("Name", &self.name, flex)?;
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for ListOffsetsTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 6;
        let t = ListOffsetsTopic {
            name: dec.string_as("Name", flex)?,
            partitions: dec.array("Partitions", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `ListOffsetsRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ListOffsetsRequest {
    /// `ReplicaId`: -1 (the default) for a consumer.
    pub replica_id: i32,
    /// `IsolationLevel` (v2+, not ignorable): 0 read_uncommitted, 1 read_committed (the
    /// latest offset is then the last stable offset).
    pub isolation_level: i8,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<ListOffsetsTopic>,
    /// `TimeoutMs` (v10+, ignorable): for lookups that read tiered storage.
    pub timeout_ms: i32,
}

impl Default for ListOffsetsRequest {
    fn default() -> Self {
        ListOffsetsRequest {
            replica_id: -1,
            isolation_level: 0,
            topics: Vec::new(),
            timeout_ms: 0,
        }
    }
}

impl Encodable for ListOffsetsRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 6;
        enc.i32(self.replica_id);
        if version >= 2 {
            enc.i8(self.isolation_level);
        } else {
            ensure_default(self.isolation_level == 0, REQ, version, "IsolationLevel")?;
        }
        enc.array("Topics", &self.topics, flex, version)?;
        if version >= 10 {
            enc.i32(self.timeout_ms);
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for ListOffsetsRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 6;
        let mut r = ListOffsetsRequest {
            replica_id: dec.i32("ReplicaId")?,
            ..Default::default()
        };
        if version >= 2 {
            r.isolation_level = dec.i8("IsolationLevel")?;
        }
        r.topics = dec.array("Topics", flex, version)?;
        if version >= 10 {
            r.timeout_ms = dec.i32("TimeoutMs")?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for ListOffsetsRequest {
    const API_KEY: i16 = 2;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 11;
    const FLEXIBLE_FROM: i16 = 6;
    const NAME: &'static str = REQ;
}

impl crate::protocol::codec::Response for ListOffsetsResponse {
    type Request = ListOffsetsRequest;
}

impl Request for ListOffsetsRequest {
    type Response = ListOffsetsResponse;
}

/// One partition's answer (`ListOffsetsPartitionResponse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ListOffsetsPartitionResponse {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `ErrorCode`.
    pub error_code: i16,
    /// `Timestamp` (default -1).
    pub timestamp: i64,
    /// `Offset` (default -1).
    pub offset: i64,
    /// `LeaderEpoch` (v4+, default -1, not ignorable).
    pub leader_epoch: i32,
}

impl Default for ListOffsetsPartitionResponse {
    fn default() -> Self {
        ListOffsetsPartitionResponse {
            partition_index: 0,
            error_code: 0,
            timestamp: -1,
            offset: -1,
            leader_epoch: -1,
        }
    }
}

impl ListOffsetsPartitionResponse {
    /// The partition-level error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for ListOffsetsPartitionResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.partition_index);
        enc.i16(self.error_code);
        enc.i64(self.timestamp);
        enc.i64(self.offset);
        if version >= 4 {
            enc.i32(self.leader_epoch);
        } else {
            ensure_default(self.leader_epoch == -1, RESP, version, "LeaderEpoch")?;
        }
        enc.end_struct(version >= 6);
        Ok(())
    }
}

impl Decodable for ListOffsetsPartitionResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let mut p = ListOffsetsPartitionResponse {
            partition_index: dec.i32("PartitionIndex")?,
            error_code: dec.i16("ErrorCode")?,
            timestamp: dec.i64("Timestamp")?,
            offset: dec.i64("Offset")?,
            ..Default::default()
        };
        if version >= 4 {
            p.leader_epoch = dec.i32("LeaderEpoch")?;
        }
        dec.end_struct(version >= 6)?;
        Ok(p)
    }
}

/// One topic's answer (`ListOffsetsTopicResponse`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ListOffsetsTopicResponse {
    /// `Name`.
    pub name: String,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<ListOffsetsPartitionResponse>,
}

impl Encodable for ListOffsetsTopicResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 6;
        enc.string_as("Name", &self.name, flex)?;
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for ListOffsetsTopicResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 6;
        let t = ListOffsetsTopicResponse {
            name: dec.string_as("Name", flex)?,
            partitions: dec.array("Partitions", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `ListOffsetsResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ListOffsetsResponse {
    /// `ThrottleTimeMs` (v2+, ignorable).
    pub throttle_time_ms: i32,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<ListOffsetsTopicResponse>,
}

impl ListOffsetsResponse {
    /// The answer for `topic`/`partition`, if the broker sent one.
    pub fn partition(&self, topic: &str, partition: i32) -> Option<&ListOffsetsPartitionResponse> {
        self.topics
            .iter()
            .filter(|t| t.name == topic)
            .flat_map(|t| &t.partitions)
            .find(|p| p.partition_index == partition)
    }
}

impl Encodable for ListOffsetsResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 6;
        if version >= 2 {
            enc.i32(self.throttle_time_ms);
        }
        enc.array("Topics", &self.topics, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for ListOffsetsResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 6;
        let mut r = ListOffsetsResponse::default();
        if version >= 2 {
            r.throttle_time_ms = dec.i32("ThrottleTimeMs")?;
        }
        r.topics = dec.array("Topics", flex, version)?;
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for ListOffsetsResponse {
    const API_KEY: i16 = 2;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 11;
    const FLEXIBLE_FROM: i16 = 6;
    const NAME: &'static str = RESP;
}

#[cfg(test)]
mod tests;
