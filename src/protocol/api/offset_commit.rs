//! OffsetCommit (API key 8), versions 2-10; flexible from v8.
//!
//! A Streams group member commits with `GenerationIdOrMemberEpoch` = its member epoch and
//! `MemberId` = its member id, and must use v9+ (the coordinator refuses older versions for
//! streams groups). v10 names topics by id instead of by name.

use crate::protocol::codec::{
    ensure_default, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder,
    Request, Uuid,
};
use crate::protocol::error::BrokerErrorKind;

const REQ: &str = "OffsetCommitRequest";

/// One partition to commit (`Partitions` element of the request).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetCommitRequestPartition {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `CommittedOffset`: the offset of the next record to process.
    pub committed_offset: i64,
    /// `CommittedLeaderEpoch` (v6+, default -1, ignorable).
    pub committed_leader_epoch: i32,
    /// `CommittedMetadata` (nullable).
    pub committed_metadata: Option<String>,
}

impl Default for OffsetCommitRequestPartition {
    fn default() -> Self {
        OffsetCommitRequestPartition {
            partition_index: 0,
            committed_offset: 0,
            committed_leader_epoch: -1,
            committed_metadata: None,
        }
    }
}

impl Encodable for OffsetCommitRequestPartition {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 8;
        enc.i32(self.partition_index);
        enc.i64(self.committed_offset);
        if version >= 6 {
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

impl Decodable for OffsetCommitRequestPartition {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 8;
        let mut p = OffsetCommitRequestPartition {
            partition_index: dec.i32("PartitionIndex")?,
            committed_offset: dec.i64("CommittedOffset")?,
            ..Default::default()
        };
        if version >= 6 {
            p.committed_leader_epoch = dec.i32("CommittedLeaderEpoch")?;
        }
        p.committed_metadata = dec.nullable_string_as("CommittedMetadata", flex)?;
        dec.end_struct(flex)?;
        Ok(p)
    }
}

/// One topic to commit (`Topics` element of the request).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetCommitRequestTopic {
    /// `Name` (v2-9, ignorable).
    pub name: String,
    /// `TopicId` (v10+, ignorable).
    pub topic_id: Uuid,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<OffsetCommitRequestPartition>,
}

impl Encodable for OffsetCommitRequestTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 8;
        if version <= 9 {
            enc.string_as("Name", &self.name, flex)?;
        } else {
            enc.uuid(self.topic_id);
        }
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetCommitRequestTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 8;
        let mut t = OffsetCommitRequestTopic::default();
        if version <= 9 {
            t.name = dec.string_as("Name", flex)?;
        } else {
            t.topic_id = dec.uuid("TopicId")?;
        }
        t.partitions = dec.array("Partitions", flex, version)?;
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `OffsetCommitRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetCommitRequest {
    /// `GroupId`.
    pub group_id: String,
    /// `GenerationIdOrMemberEpoch` (default -1, ignorable): the member epoch for streams groups.
    pub generation_id_or_member_epoch: i32,
    /// `MemberId` (ignorable).
    pub member_id: String,
    /// `GroupInstanceId` (v7+, nullable, default null).
    pub group_instance_id: Option<String>,
    /// `RetentionTimeMs` (v2-4, default -1, ignorable).
    pub retention_time_ms: i64,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<OffsetCommitRequestTopic>,
}

impl Default for OffsetCommitRequest {
    fn default() -> Self {
        OffsetCommitRequest {
            group_id: String::new(),
            generation_id_or_member_epoch: -1,
            member_id: String::new(),
            group_instance_id: None,
            retention_time_ms: -1,
            topics: Vec::new(),
        }
    }
}

impl Encodable for OffsetCommitRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 8;
        enc.string_as("GroupId", &self.group_id, flex)?;
        enc.i32(self.generation_id_or_member_epoch);
        enc.string_as("MemberId", &self.member_id, flex)?;
        if version >= 7 {
            enc.nullable_string_as("GroupInstanceId", self.group_instance_id.as_deref(), flex)?;
        } else {
            ensure_default(
                self.group_instance_id.is_none(),
                REQ,
                version,
                "GroupInstanceId",
            )?;
        }
        if version <= 4 {
            enc.i64(self.retention_time_ms);
        }
        enc.array("Topics", &self.topics, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetCommitRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 8;
        let mut r = OffsetCommitRequest {
            group_id: dec.string_as("GroupId", flex)?,
            generation_id_or_member_epoch: dec.i32("GenerationIdOrMemberEpoch")?,
            member_id: dec.string_as("MemberId", flex)?,
            ..Default::default()
        };
        if version >= 7 {
            r.group_instance_id = dec.nullable_string_as("GroupInstanceId", flex)?;
        }
        if version <= 4 {
            r.retention_time_ms = dec.i64("RetentionTimeMs")?;
        }
        r.topics = dec.array("Topics", flex, version)?;
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for OffsetCommitRequest {
    const API_KEY: i16 = 8;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 10;
    const FLEXIBLE_FROM: i16 = 8;
    const NAME: &'static str = REQ;
}

impl Request for OffsetCommitRequest {
    type Response = OffsetCommitResponse;
}

/// One partition's result (`Partitions` element of the response).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetCommitResponsePartition {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `ErrorCode`.
    pub error_code: i16,
}

impl OffsetCommitResponsePartition {
    /// The error for this partition.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for OffsetCommitResponsePartition {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.partition_index);
        enc.i16(self.error_code);
        enc.end_struct(version >= 8);
        Ok(())
    }
}

impl Decodable for OffsetCommitResponsePartition {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let p = OffsetCommitResponsePartition {
            partition_index: dec.i32("PartitionIndex")?,
            error_code: dec.i16("ErrorCode")?,
        };
        dec.end_struct(version >= 8)?;
        Ok(p)
    }
}

/// One topic's results (`Topics` element of the response).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetCommitResponseTopic {
    /// `Name` (v2-9, ignorable).
    pub name: String,
    /// `TopicId` (v10+, ignorable).
    pub topic_id: Uuid,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<OffsetCommitResponsePartition>,
}

impl Encodable for OffsetCommitResponseTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 8;
        if version <= 9 {
            enc.string_as("Name", &self.name, flex)?;
        } else {
            enc.uuid(self.topic_id);
        }
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetCommitResponseTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 8;
        let mut t = OffsetCommitResponseTopic::default();
        if version <= 9 {
            t.name = dec.string_as("Name", flex)?;
        } else {
            t.topic_id = dec.uuid("TopicId")?;
        }
        t.partitions = dec.array("Partitions", flex, version)?;
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `OffsetCommitResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetCommitResponse {
    /// `ThrottleTimeMs` (v3+, ignorable).
    pub throttle_time_ms: i32,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<OffsetCommitResponseTopic>,
}

impl Encodable for OffsetCommitResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 8;
        if version >= 3 {
            enc.i32(self.throttle_time_ms);
        }
        enc.array("Topics", &self.topics, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetCommitResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 8;
        let mut r = OffsetCommitResponse::default();
        if version >= 3 {
            r.throttle_time_ms = dec.i32("ThrottleTimeMs")?;
        }
        r.topics = dec.array("Topics", flex, version)?;
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for OffsetCommitResponse {
    const API_KEY: i16 = 8;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 10;
    const FLEXIBLE_FROM: i16 = 8;
    const NAME: &'static str = "OffsetCommitResponse";
}

#[cfg(test)]
mod tests;
