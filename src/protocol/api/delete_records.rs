//! DeleteRecords (API key 21), versions 0-2; flexible from v2.
//!
//! Moves a partition's log start offset up to `Offset`: every record below it is deleted
//! (Kafka Streams purges consumed repartition records this way, since repartition topics
//! have `retention.ms=-1`). Sent to each partition's leader; the answer carries the new low
//! watermark (log start offset) per partition.

use crate::protocol::codec::{
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder, Request,
};
use crate::protocol::error::BrokerErrorKind;

const REQ: &str = "DeleteRecordsRequest";
const RESP: &str = "DeleteRecordsResponse";
const FLEX: i16 = 2;

/// `Offset` value meaning "up to the high watermark" (Java's `DeleteRecordsRequest.HIGH_WATERMARK`).
pub const HIGH_WATERMARK: i64 = -1;

/// A partition to delete records from (`DeleteRecordsPartition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct DeleteRecordsPartition {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `Offset`: records below it are deleted ([`HIGH_WATERMARK`] = all).
    pub offset: i64,
}

impl Encodable for DeleteRecordsPartition {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.partition_index);
        enc.i64(self.offset);
        enc.end_struct(version >= FLEX);
        Ok(())
    }
}

impl Decodable for DeleteRecordsPartition {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let p = DeleteRecordsPartition {
            partition_index: dec.i32("PartitionIndex")?,
            offset: dec.i64("Offset")?,
        };
        dec.end_struct(version >= FLEX)?;
        Ok(p)
    }
}

/// A topic to delete records from (`DeleteRecordsTopic`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct DeleteRecordsTopic {
    /// `Name`.
    pub name: String,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<DeleteRecordsPartition>,
}

impl Encodable for DeleteRecordsTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= FLEX;
        enc.string_as("Name", &self.name, flex)?;
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for DeleteRecordsTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= FLEX;
        let t = DeleteRecordsTopic {
            name: dec.string_as("Name", flex)?,
            partitions: dec.array("Partitions", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `DeleteRecordsRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct DeleteRecordsRequest {
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<DeleteRecordsTopic>,
    /// `TimeoutMs`: how long the leader waits for the followers to move their log start.
    pub timeout_ms: i32,
}

impl Encodable for DeleteRecordsRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= FLEX;
        enc.array("Topics", &self.topics, flex, version)?;
        enc.i32(self.timeout_ms);
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for DeleteRecordsRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= FLEX;
        let r = DeleteRecordsRequest {
            topics: dec.array("Topics", flex, version)?,
            timeout_ms: dec.i32("TimeoutMs")?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for DeleteRecordsRequest {
    const API_KEY: i16 = 21;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FLEXIBLE_FROM: i16 = FLEX;
    const NAME: &'static str = REQ;
}

impl Request for DeleteRecordsRequest {
    type Response = DeleteRecordsResponse;
}

impl crate::protocol::codec::Response for DeleteRecordsResponse {
    type Request = DeleteRecordsRequest;
}

/// One partition's answer (`DeleteRecordsPartitionResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct DeleteRecordsPartitionResult {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `LowWatermark`: the partition's log start offset after the deletion.
    pub low_watermark: i64,
    /// `ErrorCode`.
    pub error_code: i16,
}

impl DeleteRecordsPartitionResult {
    /// The partition-level error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for DeleteRecordsPartitionResult {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.partition_index);
        enc.i64(self.low_watermark);
        enc.i16(self.error_code);
        enc.end_struct(version >= FLEX);
        Ok(())
    }
}

impl Decodable for DeleteRecordsPartitionResult {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let p = DeleteRecordsPartitionResult {
            partition_index: dec.i32("PartitionIndex")?,
            low_watermark: dec.i64("LowWatermark")?,
            error_code: dec.i16("ErrorCode")?,
        };
        dec.end_struct(version >= FLEX)?;
        Ok(p)
    }
}

/// One topic's answer (`DeleteRecordsTopicResult`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct DeleteRecordsTopicResult {
    /// `Name`.
    pub name: String,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<DeleteRecordsPartitionResult>,
}

impl Encodable for DeleteRecordsTopicResult {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= FLEX;
        enc.string_as("Name", &self.name, flex)?;
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for DeleteRecordsTopicResult {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= FLEX;
        let t = DeleteRecordsTopicResult {
            name: dec.string_as("Name", flex)?,
            partitions: dec.array("Partitions", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `DeleteRecordsResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct DeleteRecordsResponse {
    /// `ThrottleTimeMs`.
    pub throttle_time_ms: i32,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<DeleteRecordsTopicResult>,
}

impl DeleteRecordsResponse {
    /// The answer for `topic`/`partition`, if the broker sent one.
    pub fn partition(&self, topic: &str, partition: i32) -> Option<&DeleteRecordsPartitionResult> {
        self.topics
            .iter()
            .filter(|t| t.name == topic)
            .flat_map(|t| &t.partitions)
            .find(|p| p.partition_index == partition)
    }
}

impl Encodable for DeleteRecordsResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= FLEX;
        enc.i32(self.throttle_time_ms);
        enc.array("Topics", &self.topics, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for DeleteRecordsResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= FLEX;
        let r = DeleteRecordsResponse {
            throttle_time_ms: dec.i32("ThrottleTimeMs")?,
            topics: dec.array("Topics", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for DeleteRecordsResponse {
    const API_KEY: i16 = 21;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FLEXIBLE_FROM: i16 = FLEX;
    const NAME: &'static str = RESP;
}

#[cfg(test)]
mod tests;
