//! TxnOffsetCommit (API key 28), versions 0-6; flexible from v3.
//!
//! A transactional producer commits a group's offsets inside its transaction, sent to the
//! *group* coordinator: they become visible when the transaction commits. v3+ carries the
//! member id, member epoch (generation) and group instance id the coordinator validates
//! (KIP-447; for a Streams group like an OffsetCommit). v5 is the transaction version 2
//! form (KIP-890: no AddOffsetsToTxn before it); v6 names topics by id.

use crate::protocol::codec::{
    ensure_default, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder,
    Request, Uuid,
};
use crate::protocol::error::BrokerErrorKind;

const REQ: &str = "TxnOffsetCommitRequest";

/// One partition's offset (`TxnOffsetCommitRequestPartition`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct TxnOffsetCommitRequestPartition {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `CommittedOffset`: the offset of the next record to process.
    pub committed_offset: i64,
    /// `CommittedLeaderEpoch` (v2+, default -1, ignorable).
    pub committed_leader_epoch: i32,
    /// `CommittedMetadata` (nullable).
    pub committed_metadata: Option<String>,
}

impl Default for TxnOffsetCommitRequestPartition {
    fn default() -> Self {
        TxnOffsetCommitRequestPartition {
            partition_index: 0,
            committed_offset: 0,
            committed_leader_epoch: -1,
            committed_metadata: None,
        }
    }
}

impl Encodable for TxnOffsetCommitRequestPartition {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.i32(self.partition_index);
        enc.i64(self.committed_offset);
        if version >= 2 {
            enc.i32(self.committed_leader_epoch);
        }
        enc.nullable_string_as(
            "CommittedMetadata",
            self.committed_metadata.as_deref(),
            flex,
        )?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for TxnOffsetCommitRequestPartition {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let mut p = TxnOffsetCommitRequestPartition {
            partition_index: dec.i32("PartitionIndex")?,
            committed_offset: dec.i64("CommittedOffset")?,
            ..Default::default()
        };
        if version >= 2 {
            p.committed_leader_epoch = dec.i32("CommittedLeaderEpoch")?;
        }
        p.committed_metadata = dec.nullable_string_as("CommittedMetadata", flex)?;
        dec.end_struct(flex)?;
        Ok(p)
    }
}

/// One topic's offsets (`TxnOffsetCommitRequestTopic`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct TxnOffsetCommitRequestTopic {
    /// `Name` (v0-5, ignorable).
    pub name: String,
    /// `TopicId` (v6+, ignorable).
    pub topic_id: Uuid,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<TxnOffsetCommitRequestPartition>,
}

impl Encodable for TxnOffsetCommitRequestTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        if version <= 5 {
            enc.string_as("Name", &self.name, flex)?;
        } else {
            enc.uuid(self.topic_id);
        }
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for TxnOffsetCommitRequestTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let mut t = TxnOffsetCommitRequestTopic::default();
        if version <= 5 {
            t.name = dec.string_as("Name", flex)?;
        } else {
            t.topic_id = dec.uuid("TopicId")?;
        }
        t.partitions = dec.array("Partitions", flex, version)?;
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `TxnOffsetCommitRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct TxnOffsetCommitRequest {
    /// `TransactionalId`.
    pub transactional_id: String,
    /// `GroupId`.
    pub group_id: String,
    /// `ProducerId`.
    pub producer_id: i64,
    /// `ProducerEpoch`.
    pub producer_epoch: i16,
    /// `GenerationIdOrMemberEpoch` (v3+, default -1, not ignorable).
    pub generation_id_or_member_epoch: i32,
    /// `MemberId` (v3+, default "", not ignorable).
    pub member_id: String,
    /// `GroupInstanceId` (v3+, nullable, default null, not ignorable).
    pub group_instance_id: Option<String>,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<TxnOffsetCommitRequestTopic>,
}

impl Default for TxnOffsetCommitRequest {
    fn default() -> Self {
        TxnOffsetCommitRequest {
            transactional_id: String::new(),
            group_id: String::new(),
            producer_id: -1,
            producer_epoch: -1,
            generation_id_or_member_epoch: -1,
            member_id: String::new(),
            group_instance_id: None,
            topics: Vec::new(),
        }
    }
}

impl Encodable for TxnOffsetCommitRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.string_as("TransactionalId", &self.transactional_id, flex)?;
        enc.string_as("GroupId", &self.group_id, flex)?;
        enc.i64(self.producer_id);
        enc.i16(self.producer_epoch);
        if version >= 3 {
            enc.i32(self.generation_id_or_member_epoch);
            enc.string_as("MemberId", &self.member_id, flex)?;
            enc.nullable_string_as("GroupInstanceId", self.group_instance_id.as_deref(), flex)?;
        } else {
            let field = if self.generation_id_or_member_epoch != -1 {
                "GenerationIdOrMemberEpoch"
            } else if !self.member_id.is_empty() {
                "MemberId"
            } else {
                "GroupInstanceId"
            };
            ensure_default(
                self.generation_id_or_member_epoch == -1
                    && self.member_id.is_empty()
                    && self.group_instance_id.is_none(),
                REQ,
                version,
                field,
            )?;
        }
        enc.array("Topics", &self.topics, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for TxnOffsetCommitRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let mut r = TxnOffsetCommitRequest {
            transactional_id: dec.string_as("TransactionalId", flex)?,
            group_id: dec.string_as("GroupId", flex)?,
            producer_id: dec.i64("ProducerId")?,
            producer_epoch: dec.i16("ProducerEpoch")?,
            ..Default::default()
        };
        if version >= 3 {
            r.generation_id_or_member_epoch = dec.i32("GenerationIdOrMemberEpoch")?;
            r.member_id = dec.string_as("MemberId", flex)?;
            r.group_instance_id = dec.nullable_string_as("GroupInstanceId", flex)?;
        }
        r.topics = dec.array("Topics", flex, version)?;
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for TxnOffsetCommitRequest {
    const API_KEY: i16 = 28;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = REQ;
}

impl Request for TxnOffsetCommitRequest {
    type Response = TxnOffsetCommitResponse;
}

/// One partition's result (`TxnOffsetCommitResponsePartition`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct TxnOffsetCommitResponsePartition {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `ErrorCode`.
    pub error_code: i16,
}

impl TxnOffsetCommitResponsePartition {
    /// The error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for TxnOffsetCommitResponsePartition {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.partition_index);
        enc.i16(self.error_code);
        enc.end_struct(version >= 3);
        Ok(())
    }
}

impl Decodable for TxnOffsetCommitResponsePartition {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let r = TxnOffsetCommitResponsePartition {
            partition_index: dec.i32("PartitionIndex")?,
            error_code: dec.i16("ErrorCode")?,
        };
        dec.end_struct(version >= 3)?;
        Ok(r)
    }
}

/// One topic's results (`TxnOffsetCommitResponseTopic`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct TxnOffsetCommitResponseTopic {
    /// `Name` (v0-5, ignorable).
    pub name: String,
    /// `TopicId` (v6+, ignorable).
    pub topic_id: Uuid,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<TxnOffsetCommitResponsePartition>,
}

impl Encodable for TxnOffsetCommitResponseTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        if version <= 5 {
            enc.string_as("Name", &self.name, flex)?;
        } else {
            enc.uuid(self.topic_id);
        }
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for TxnOffsetCommitResponseTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let mut t = TxnOffsetCommitResponseTopic::default();
        if version <= 5 {
            t.name = dec.string_as("Name", flex)?;
        } else {
            t.topic_id = dec.uuid("TopicId")?;
        }
        t.partitions = dec.array("Partitions", flex, version)?;
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `TxnOffsetCommitResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct TxnOffsetCommitResponse {
    /// `ThrottleTimeMs`.
    pub throttle_time_ms: i32,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<TxnOffsetCommitResponseTopic>,
}

impl TxnOffsetCommitResponse {
    /// Every `(topic name, partition, error)` of the answer (the name is empty at v6+).
    pub fn errors(&self) -> impl Iterator<Item = (&str, i32, BrokerErrorKind)> {
        self.topics.iter().flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| (t.name.as_str(), p.partition_index, p.error()))
        })
    }
}

impl Encodable for TxnOffsetCommitResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.i32(self.throttle_time_ms);
        enc.array("Topics", &self.topics, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for TxnOffsetCommitResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let r = TxnOffsetCommitResponse {
            throttle_time_ms: dec.i32("ThrottleTimeMs")?,
            topics: dec.array("Topics", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for TxnOffsetCommitResponse {
    const API_KEY: i16 = 28;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = "TxnOffsetCommitResponse";
}

impl crate::protocol::codec::Response for TxnOffsetCommitResponse {
    type Request = TxnOffsetCommitRequest;
}

#[cfg(test)]
mod tests;
