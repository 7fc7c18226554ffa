//! AddPartitionsToTxn (API key 24), the client versions 0-3; flexible from v3.
//!
//! Transaction version 1: before its first batch to a partition in a transaction, a
//! transactional producer adds the partition to the transaction at its transaction
//! coordinator. (v4+ batches several transactions and is broker-to-broker only; Java's
//! client builder stops at v3 too. Transaction version 2, KIP-890, adds partitions
//! implicitly with Produce v12+.)

use crate::protocol::codec::{
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder, Request,
};
use crate::protocol::error::BrokerErrorKind;

/// One topic's partitions to add (`AddPartitionsToTxnTopic`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct AddPartitionsToTxnTopic {
    /// `Name`.
    pub name: String,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<i32>,
}

impl Encodable for AddPartitionsToTxnTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.string_as("Name", &self.name, flex)?;
        enc.i32_array("Partitions", &self.partitions, flex)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for AddPartitionsToTxnTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let t = AddPartitionsToTxnTopic {
            name: dec.string_as("Name", flex)?,
            partitions: dec.i32_array("Partitions", flex)?,
        };
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `AddPartitionsToTxnRequest` in its client form (v0-3: `V3AndBelow*` fields).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct AddPartitionsToTxnRequest {
    /// `V3AndBelowTransactionalId`.
    pub transactional_id: String,
    /// `V3AndBelowProducerId`.
    pub producer_id: i64,
    /// `V3AndBelowProducerEpoch`.
    pub producer_epoch: i16,
    /// `V3AndBelowTopics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<AddPartitionsToTxnTopic>,
}

impl Encodable for AddPartitionsToTxnRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.string_as("V3AndBelowTransactionalId", &self.transactional_id, flex)?;
        enc.i64(self.producer_id);
        enc.i16(self.producer_epoch);
        enc.array("V3AndBelowTopics", &self.topics, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for AddPartitionsToTxnRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let r = AddPartitionsToTxnRequest {
            transactional_id: dec.string_as("V3AndBelowTransactionalId", flex)?,
            producer_id: dec.i64("V3AndBelowProducerId")?,
            producer_epoch: dec.i16("V3AndBelowProducerEpoch")?,
            topics: dec.array("V3AndBelowTopics", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for AddPartitionsToTxnRequest {
    const API_KEY: i16 = 24;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 3;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = "AddPartitionsToTxnRequest";
}

impl Request for AddPartitionsToTxnRequest {
    type Response = AddPartitionsToTxnResponse;
}

/// One partition's result (`AddPartitionsToTxnPartitionResult`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct AddPartitionsToTxnPartitionResult {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `PartitionErrorCode`.
    pub partition_error_code: i16,
}

impl AddPartitionsToTxnPartitionResult {
    /// The error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.partition_error_code)
    }
}

impl Encodable for AddPartitionsToTxnPartitionResult {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.partition_index);
        enc.i16(self.partition_error_code);
        enc.end_struct(version >= 3);
        Ok(())
    }
}

impl Decodable for AddPartitionsToTxnPartitionResult {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let r = AddPartitionsToTxnPartitionResult {
            partition_index: dec.i32("PartitionIndex")?,
            partition_error_code: dec.i16("PartitionErrorCode")?,
        };
        dec.end_struct(version >= 3)?;
        Ok(r)
    }
}

/// One topic's results (`AddPartitionsToTxnTopicResult`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct AddPartitionsToTxnTopicResult {
    /// `Name`.
    pub name: String,
    /// `ResultsByPartition`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub results_by_partition: Vec<AddPartitionsToTxnPartitionResult>,
}

impl Encodable for AddPartitionsToTxnTopicResult {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.string_as("Name", &self.name, flex)?;
        enc.array(
            "ResultsByPartition",
            &self.results_by_partition,
            flex,
            version,
        )?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for AddPartitionsToTxnTopicResult {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let r = AddPartitionsToTxnTopicResult {
            name: dec.string_as("Name", flex)?,
            results_by_partition: dec.array("ResultsByPartition", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

/// `AddPartitionsToTxnResponse` in its client form (v0-3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct AddPartitionsToTxnResponse {
    /// `ThrottleTimeMs`.
    pub throttle_time_ms: i32,
    /// `ResultsByTopicV3AndBelow`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub results: Vec<AddPartitionsToTxnTopicResult>,
}

impl AddPartitionsToTxnResponse {
    /// Every `(topic, partition, error)` of the answer.
    pub fn errors(&self) -> impl Iterator<Item = (&str, i32, BrokerErrorKind)> {
        self.results.iter().flat_map(|t| {
            t.results_by_partition
                .iter()
                .map(move |p| (t.name.as_str(), p.partition_index, p.error()))
        })
    }
}

impl Encodable for AddPartitionsToTxnResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.i32(self.throttle_time_ms);
        enc.array("ResultsByTopicV3AndBelow", &self.results, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for AddPartitionsToTxnResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let r = AddPartitionsToTxnResponse {
            throttle_time_ms: dec.i32("ThrottleTimeMs")?,
            results: dec.array("ResultsByTopicV3AndBelow", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for AddPartitionsToTxnResponse {
    const API_KEY: i16 = 24;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 3;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = "AddPartitionsToTxnResponse";
}

impl crate::protocol::codec::Response for AddPartitionsToTxnResponse {
    type Request = AddPartitionsToTxnRequest;
}

#[cfg(test)]
mod tests;
