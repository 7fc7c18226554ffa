//! OffsetFetch (API key 9), versions 1-10; flexible from v6.
//!
//! v1-7 fetch for one group (`group_id`, `topics`); v8+ fetch for a batch of `groups`, each
//! with its own topics, and v9+ carry the member id and epoch (a Streams member sends both, so
//! the coordinator can check it still owns what it asks about). v10 names topics by id.
//! `require_stable` (v7+) makes the broker answer UNSTABLE_OFFSET_COMMIT for partitions with a
//! pending transactional commit instead of returning the last stable offset.

use crate::protocol::codec::{
    ensure_default, non_null, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError,
    Encoder, Request, Uuid,
};
use crate::protocol::error::BrokerErrorKind;

const REQ: &str = "OffsetFetchRequest";
const RESP: &str = "OffsetFetchResponse";

/// One topic asked about (`Topics` element, top level in v1-7 and per group in v8+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetFetchRequestTopic {
    /// `Name` (v1-9; ignorable in v8-9).
    pub name: String,
    /// `TopicId` (v10+, ignorable).
    pub topic_id: Uuid,
    /// `PartitionIndexes`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partition_indexes: Vec<i32>,
}

impl Encodable for OffsetFetchRequestTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 6;
        if version <= 9 {
            enc.string_as("Name", &self.name, flex)?;
        } else {
            enc.uuid(self.topic_id);
        }
        enc.i32_array("PartitionIndexes", &self.partition_indexes, flex)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetFetchRequestTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 6;
        let mut t = OffsetFetchRequestTopic::default();
        if version <= 9 {
            t.name = dec.string_as("Name", flex)?;
        } else {
            t.topic_id = dec.uuid("TopicId")?;
        }
        t.partition_indexes = dec.i32_array("PartitionIndexes", flex)?;
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// One group asked about (`Groups` element, v8+).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetFetchRequestGroup {
    /// `GroupId`.
    pub group_id: String,
    /// `MemberId` (v9+, nullable, default null, ignorable).
    pub member_id: Option<String>,
    /// `MemberEpoch` (v9+, default -1, ignorable).
    pub member_epoch: i32,
    /// `Topics` (nullable: `None` asks for every partition with a committed offset).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_opt_vec()")
    )]
    pub topics: Option<Vec<OffsetFetchRequestTopic>>,
}

impl Default for OffsetFetchRequestGroup {
    fn default() -> Self {
        OffsetFetchRequestGroup {
            group_id: String::new(),
            member_id: None,
            member_epoch: -1,
            topics: Some(Vec::new()),
        }
    }
}

impl Encodable for OffsetFetchRequestGroup {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        // Only in v8+, which is flexible.
        enc.compact_string("GroupId", &self.group_id)?;
        if version >= 9 {
            enc.compact_nullable_string("MemberId", self.member_id.as_deref())?;
            enc.i32(self.member_epoch);
        }
        enc.nullable_array("Topics", self.topics.as_deref(), true, version)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for OffsetFetchRequestGroup {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let mut g = OffsetFetchRequestGroup {
            group_id: dec.compact_string("GroupId")?,
            ..Default::default()
        };
        if version >= 9 {
            g.member_id = dec.compact_nullable_string("MemberId")?;
            g.member_epoch = dec.i32("MemberEpoch")?;
        }
        g.topics = dec.nullable_array("Topics", true, version)?;
        dec.skip_tagged_fields()?;
        Ok(g)
    }
}

/// `OffsetFetchRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetFetchRequest {
    /// `GroupId` (v1-7).
    pub group_id: String,
    /// `Topics` (v1-7; nullable from v2: `None` asks for every committed partition).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_opt_vec()")
    )]
    pub topics: Option<Vec<OffsetFetchRequestTopic>>,
    /// `Groups` (v8+).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub groups: Vec<OffsetFetchRequestGroup>,
    /// `RequireStable` (v7+, default false).
    pub require_stable: bool,
}

impl Default for OffsetFetchRequest {
    fn default() -> Self {
        OffsetFetchRequest {
            group_id: String::new(),
            topics: Some(Vec::new()),
            groups: Vec::new(),
            require_stable: false,
        }
    }
}

impl Encodable for OffsetFetchRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 6;
        if version <= 7 {
            enc.string_as("GroupId", &self.group_id, flex)?;
            if version >= 2 {
                enc.nullable_array("Topics", self.topics.as_deref(), flex, version)?;
            } else {
                let topics = non_null(self.topics.as_deref(), REQ, version, "Topics")?;
                enc.array("Topics", topics, flex, version)?;
            }
            ensure_default(self.groups.is_empty(), REQ, version, "Groups")?;
        } else {
            ensure_default(self.group_id.is_empty(), REQ, version, "GroupId")?;
            ensure_default(
                self.topics.as_ref().is_some_and(Vec::is_empty),
                REQ,
                version,
                "Topics",
            )?;
            enc.array("Groups", &self.groups, flex, version)?;
        }
        if version >= 7 {
            enc.bool(self.require_stable);
        } else {
            ensure_default(!self.require_stable, REQ, version, "RequireStable")?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetFetchRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 6;
        let mut r = OffsetFetchRequest::default();
        if version <= 7 {
            r.group_id = dec.string_as("GroupId", flex)?;
            r.topics = if version >= 2 {
                dec.nullable_array("Topics", flex, version)?
            } else {
                Some(dec.array("Topics", flex, version)?)
            };
        } else {
            r.groups = dec.array("Groups", flex, version)?;
        }
        if version >= 7 {
            r.require_stable = dec.bool("RequireStable")?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for OffsetFetchRequest {
    const API_KEY: i16 = 9;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 10;
    const FLEXIBLE_FROM: i16 = 6;
    const NAME: &'static str = REQ;
}

impl Request for OffsetFetchRequest {
    type Response = OffsetFetchResponse;
}

/// One partition's committed offset (`Partitions` element of the response, every version).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetFetchResponsePartition {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `CommittedOffset`: -1 when nothing is committed.
    pub committed_offset: i64,
    /// `CommittedLeaderEpoch` (v5+, default -1, ignorable).
    pub committed_leader_epoch: i32,
    /// `Metadata` (nullable).
    pub metadata: Option<String>,
    /// `ErrorCode`.
    pub error_code: i16,
}

impl Default for OffsetFetchResponsePartition {
    fn default() -> Self {
        OffsetFetchResponsePartition {
            partition_index: 0,
            committed_offset: 0,
            committed_leader_epoch: -1,
            metadata: None,
            error_code: 0,
        }
    }
}

impl OffsetFetchResponsePartition {
    /// The error for this partition.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for OffsetFetchResponsePartition {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 6;
        enc.i32(self.partition_index);
        enc.i64(self.committed_offset);
        if version >= 5 {
            enc.i32(self.committed_leader_epoch);
        }
        enc.nullable_string_as("Metadata", self.metadata.as_deref(), flex)?;
        enc.i16(self.error_code);
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetFetchResponsePartition {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 6;
        let mut p = OffsetFetchResponsePartition {
            partition_index: dec.i32("PartitionIndex")?,
            committed_offset: dec.i64("CommittedOffset")?,
            ..Default::default()
        };
        if version >= 5 {
            p.committed_leader_epoch = dec.i32("CommittedLeaderEpoch")?;
        }
        p.metadata = dec.nullable_string_as("Metadata", flex)?;
        p.error_code = dec.i16("ErrorCode")?;
        dec.end_struct(flex)?;
        Ok(p)
    }
}

/// One topic's committed offsets (`Topics` element, top level in v1-7 and per group in v8+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetFetchResponseTopic {
    /// `Name` (v1-9; ignorable in v8-9).
    pub name: String,
    /// `TopicId` (v10+, ignorable).
    pub topic_id: Uuid,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<OffsetFetchResponsePartition>,
}

impl Encodable for OffsetFetchResponseTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 6;
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

impl Decodable for OffsetFetchResponseTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 6;
        let mut t = OffsetFetchResponseTopic::default();
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

/// One group's answer (`Groups` element, v8+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetFetchResponseGroup {
    /// `GroupId`.
    pub group_id: String,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<OffsetFetchResponseTopic>,
    /// `ErrorCode` (group level).
    pub error_code: i16,
}

impl OffsetFetchResponseGroup {
    /// The group-level error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for OffsetFetchResponseGroup {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.compact_string("GroupId", &self.group_id)?;
        enc.array("Topics", &self.topics, true, version)?;
        enc.i16(self.error_code);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for OffsetFetchResponseGroup {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let g = OffsetFetchResponseGroup {
            group_id: dec.compact_string("GroupId")?,
            topics: dec.array("Topics", true, version)?,
            error_code: dec.i16("ErrorCode")?,
        };
        dec.skip_tagged_fields()?;
        Ok(g)
    }
}

/// `OffsetFetchResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct OffsetFetchResponse {
    /// `ThrottleTimeMs` (v3+, ignorable).
    pub throttle_time_ms: i32,
    /// `Topics` (v1-7).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<OffsetFetchResponseTopic>,
    /// `ErrorCode` (v2-7, ignorable): the top-level error.
    pub error_code: i16,
    /// `Groups` (v8+).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub groups: Vec<OffsetFetchResponseGroup>,
}

impl OffsetFetchResponse {
    /// The top-level error (v2-7).
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for OffsetFetchResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 6;
        if version >= 3 {
            enc.i32(self.throttle_time_ms);
        }
        if version <= 7 {
            enc.array("Topics", &self.topics, flex, version)?;
            if version >= 2 {
                enc.i16(self.error_code);
            }
            ensure_default(self.groups.is_empty(), RESP, version, "Groups")?;
        } else {
            ensure_default(self.topics.is_empty(), RESP, version, "Topics")?;
            enc.array("Groups", &self.groups, flex, version)?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for OffsetFetchResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 6;
        let mut r = OffsetFetchResponse::default();
        if version >= 3 {
            r.throttle_time_ms = dec.i32("ThrottleTimeMs")?;
        }
        if version <= 7 {
            r.topics = dec.array("Topics", flex, version)?;
            if version >= 2 {
                r.error_code = dec.i16("ErrorCode")?;
            }
        } else {
            r.groups = dec.array("Groups", flex, version)?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for OffsetFetchResponse {
    const API_KEY: i16 = 9;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 10;
    const FLEXIBLE_FROM: i16 = 6;
    const NAME: &'static str = RESP;
}

#[cfg(test)]
mod tests;
