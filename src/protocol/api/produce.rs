//! Produce (API key 0), versions 3-13; flexible from v9.
//!
//! Topics are named up to v12 and identified by [`Uuid`] from v13 (`name` and `topic_id` are
//! both ignorable: the one a version does not carry is dropped on encode). Each partition's
//! `records` are record batches (magic 2) built elsewhere; this module writes them as opaque
//! bytes, and a decoded request copies each partition's record set once, in one `memcpy`.
//!
//! Leader tracking: from v10 a partition answered with NOT_LEADER_OR_FOLLOWER carries the new
//! leader in [`PartitionProduceResponse::current_leader`], and its address in
//! [`ProduceResponse::node_endpoints`].

use super::fetch::count;
pub use super::fetch::{LeaderIdAndEpoch, NodeEndpoint};
use crate::protocol::codec::{
    ensure_default, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder,
    Request, Uuid,
};
use crate::protocol::error::BrokerErrorKind;

const REQ: &str = "ProduceRequest";
const RESP: &str = "ProduceResponse";

/// `Acks` -1: the whole in-sync replica set must have the records (`acks=all`; required for
/// idempotence).
pub const ACKS_ALL: i16 = -1;
/// `Acks` 1: the leader alone.
pub const ACKS_LEADER: i16 = 1;

/// One partition's records (`PartitionProduceData`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct PartitionProduceData {
    /// `Index`: the partition.
    pub index: i32,
    /// `Records` (nullable): the encoded record batches.
    #[cfg_attr(
        test,
        proptest(strategy = "proptest::option::of(crate::protocol::api::test_util::small_vec())")
    )]
    pub records: Option<Vec<u8>>,
}

impl Encodable for PartitionProduceData {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        enc.i32(self.index);
        enc.nullable_bytes_as("Records", self.records.as_deref(), flex)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for PartitionProduceData {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let p = PartitionProduceData {
            index: dec.i32("Index")?,
            records: dec.nullable_bytes_as("Records", flex)?,
        };
        dec.end_struct(flex)?;
        Ok(p)
    }
}

/// One topic's records (`TopicProduceData`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct TopicProduceData {
    /// `Name` (v3-12, ignorable).
    pub name: String,
    /// `TopicId` (v13+, ignorable).
    pub topic_id: Uuid,
    /// `PartitionData`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partition_data: Vec<PartitionProduceData>,
}

impl Encodable for TopicProduceData {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        if version <= 12 {
            enc.string_as("Name", &self.name, flex)?;
        } else {
            enc.uuid(self.topic_id);
        }
        enc.array("PartitionData", &self.partition_data, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for TopicProduceData {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut t = TopicProduceData::default();
        if version <= 12 {
            t.name = dec.string_as("Name", flex)?;
        } else {
            t.topic_id = dec.uuid("TopicId")?;
        }
        t.partition_data = dec.array("PartitionData", flex, version)?;
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `ProduceRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ProduceRequest {
    /// `TransactionalId` (nullable): `None` unless the producer is transactional.
    pub transactional_id: Option<String>,
    /// `Acks`: [`ACKS_ALL`], [`ACKS_LEADER`] or 0 (no response is sent for 0).
    pub acks: i16,
    /// `TimeoutMs`: how long the broker may wait for the acknowledgements.
    pub timeout_ms: i32,
    /// `TopicData`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topic_data: Vec<TopicProduceData>,
}

impl Encodable for ProduceRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        enc.nullable_string_as("TransactionalId", self.transactional_id.as_deref(), flex)?;
        enc.i16(self.acks);
        enc.i32(self.timeout_ms);
        enc.array("TopicData", &self.topic_data, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for ProduceRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let r = ProduceRequest {
            transactional_id: dec.nullable_string_as("TransactionalId", flex)?,
            acks: dec.i16("Acks")?,
            timeout_ms: dec.i32("TimeoutMs")?,
            topic_data: dec.array("TopicData", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for ProduceRequest {
    const API_KEY: i16 = 0;
    const MIN_VERSION: i16 = 3;
    const MAX_VERSION: i16 = 13;
    const FLEXIBLE_FROM: i16 = 9;
    const NAME: &'static str = REQ;
}

impl crate::protocol::codec::Response for ProduceResponse {
    type Request = ProduceRequest;
}

impl Request for ProduceRequest {
    type Response = ProduceResponse;
}

/// A record that made the broker drop its batch (`BatchIndexAndErrorMessage`, v8+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct BatchIndexAndErrorMessage {
    /// `BatchIndex`: the record's index within the batch.
    pub batch_index: i32,
    /// `BatchIndexErrorMessage` (nullable).
    pub batch_index_error_message: Option<String>,
}

impl Encodable for BatchIndexAndErrorMessage {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        enc.i32(self.batch_index);
        enc.nullable_string_as(
            "BatchIndexErrorMessage",
            self.batch_index_error_message.as_deref(),
            flex,
        )?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for BatchIndexAndErrorMessage {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let b = BatchIndexAndErrorMessage {
            batch_index: dec.i32("BatchIndex")?,
            batch_index_error_message: dec.nullable_string_as("BatchIndexErrorMessage", flex)?,
        };
        dec.end_struct(flex)?;
        Ok(b)
    }
}

/// One partition's answer (`PartitionProduceResponse`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct PartitionProduceResponse {
    /// `Index`: the partition.
    pub index: i32,
    /// `ErrorCode`.
    pub error_code: i16,
    /// `BaseOffset`: the offset of the first record appended.
    pub base_offset: i64,
    /// `LogAppendTimeMs` (default -1, ignorable): set only for `LogAppendTime` topics.
    pub log_append_time_ms: i64,
    /// `LogStartOffset` (v5+, default -1, ignorable).
    pub log_start_offset: i64,
    /// `RecordErrors` (v8+, ignorable).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub record_errors: Vec<BatchIndexAndErrorMessage>,
    /// `ErrorMessage` (v8+, nullable, ignorable).
    pub error_message: Option<String>,
    /// `CurrentLeader` (tagged 0, v10+; not ignorable).
    pub current_leader: LeaderIdAndEpoch,
}

impl Default for PartitionProduceResponse {
    fn default() -> Self {
        PartitionProduceResponse {
            index: 0,
            error_code: 0,
            base_offset: 0,
            log_append_time_ms: -1,
            log_start_offset: -1,
            record_errors: Vec::new(),
            error_message: None,
            current_leader: LeaderIdAndEpoch::default(),
        }
    }
}

impl PartitionProduceResponse {
    /// The partition-level error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for PartitionProduceResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        enc.i32(self.index);
        enc.i16(self.error_code);
        enc.i64(self.base_offset);
        enc.i64(self.log_append_time_ms);
        if version >= 5 {
            enc.i64(self.log_start_offset);
        }
        if version >= 8 {
            enc.array("RecordErrors", &self.record_errors, flex, version)?;
            enc.nullable_string_as("ErrorMessage", self.error_message.as_deref(), flex)?;
        }
        let lead = self.current_leader != LeaderIdAndEpoch::default();
        if version < 10 {
            ensure_default(!lead, RESP, version, "CurrentLeader")?;
        }
        if flex {
            enc.unsigned_varint(count(&[lead]));
            if lead {
                enc.tagged_field(0, |e| self.current_leader.encode(e, version))?;
            }
        }
        Ok(())
    }
}

impl Decodable for PartitionProduceResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut p = PartitionProduceResponse {
            index: dec.i32("Index")?,
            error_code: dec.i16("ErrorCode")?,
            base_offset: dec.i64("BaseOffset")?,
            log_append_time_ms: dec.i64("LogAppendTimeMs")?,
            ..Default::default()
        };
        if version >= 5 {
            p.log_start_offset = dec.i64("LogStartOffset")?;
        }
        if version >= 8 {
            p.record_errors = dec.array("RecordErrors", flex, version)?;
            p.error_message = dec.nullable_string_as("ErrorMessage", flex)?;
        }
        if flex {
            dec.tagged_fields(|tag, sub| {
                match tag {
                    0 if version >= 10 => {
                        p.current_leader = LeaderIdAndEpoch::decode(sub, version)?
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
        }
        Ok(p)
    }
}

/// One topic's answer (`TopicProduceResponse`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct TopicProduceResponse {
    /// `Name` (v3-12, ignorable).
    pub name: String,
    /// `TopicId` (v13+, ignorable).
    pub topic_id: Uuid,
    /// `PartitionResponses`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partition_responses: Vec<PartitionProduceResponse>,
}

impl Encodable for TopicProduceResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        if version <= 12 {
            enc.string_as("Name", &self.name, flex)?;
        } else {
            enc.uuid(self.topic_id);
        }
        enc.array(
            "PartitionResponses",
            &self.partition_responses,
            flex,
            version,
        )?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for TopicProduceResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut t = TopicProduceResponse::default();
        if version <= 12 {
            t.name = dec.string_as("Name", flex)?;
        } else {
            t.topic_id = dec.uuid("TopicId")?;
        }
        t.partition_responses = dec.array("PartitionResponses", flex, version)?;
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `ProduceResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ProduceResponse {
    /// `Responses`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub responses: Vec<TopicProduceResponse>,
    /// `ThrottleTimeMs` (ignorable).
    pub throttle_time_ms: i32,
    /// `NodeEndpoints` (tagged 0, v10+): addresses of the leaders named in `current_leader`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub node_endpoints: Vec<NodeEndpoint>,
}

impl Encodable for ProduceResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        enc.array("Responses", &self.responses, flex, version)?;
        enc.i32(self.throttle_time_ms);
        let nodes = !self.node_endpoints.is_empty();
        if version < 10 {
            ensure_default(!nodes, RESP, version, "NodeEndpoints")?;
        }
        if flex {
            enc.unsigned_varint(count(&[nodes]));
            if nodes {
                enc.tagged_field(0, |e| {
                    e.array("NodeEndpoints", &self.node_endpoints, true, version)
                })?;
            }
        }
        Ok(())
    }
}

impl Decodable for ProduceResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut r = ProduceResponse {
            responses: dec.array("Responses", flex, version)?,
            throttle_time_ms: dec.i32("ThrottleTimeMs")?,
            ..Default::default()
        };
        if flex {
            dec.tagged_fields(|tag, sub| {
                match tag {
                    0 if version >= 10 => {
                        r.node_endpoints = sub.array("NodeEndpoints", true, version)?
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
        }
        Ok(r)
    }
}

impl ApiMessage for ProduceResponse {
    const API_KEY: i16 = 0;
    const MIN_VERSION: i16 = 3;
    const MAX_VERSION: i16 = 13;
    const FLEXIBLE_FROM: i16 = 9;
    const NAME: &'static str = RESP;
}

#[cfg(test)]
mod tests;
