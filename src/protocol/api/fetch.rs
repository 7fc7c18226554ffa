//! Fetch (API key 1), versions 4-18 (what Kafka 4.x brokers accept); flexible from v12.
//!
//! Topics are named up to v12 and identified by [`Uuid`] from v13 (`topic` and `topic_id` are
//! both ignorable: the one a version does not carry is dropped on encode). Incremental fetch
//! sessions (KIP-227) are v7+: `session_id` 0 with `session_epoch` -1 is a full, sessionless
//! fetch, which is what a plain consumer may always send.
//!
//! Leader tracking: a partition answered with NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH
//! carries the new leader in [`PartitionData::current_leader`] (v12+) and, from v16, the
//! leader's address in [`FetchResponse::node_endpoints`].
//!
//! Record payloads are opaque here: [`PartitionData::records`] holds the partition's record
//! batches exactly as the broker sent them. Decoding copies each partition's record set once,
//! in one `memcpy` of the exact range out of the frame (no per-batch or per-record copy); the
//! record-batch codec then reads batches straight from that buffer.

use crate::protocol::codec::{
    ensure_default, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder,
    Request, Uuid,
};

const REQ: &str = "FetchRequest";
const RESP: &str = "FetchResponse";

/// `IsolationLevel` READ_UNCOMMITTED: every record is visible.
pub const READ_UNCOMMITTED: i8 = 0;
/// `IsolationLevel` READ_COMMITTED: only records below the last stable offset, with the
/// aborted transactions listed so the consumer can drop them.
pub const READ_COMMITTED: i8 = 1;

/// The number of tagged fields present, for the count that opens a tagged-field section.
pub(crate) fn count(present: &[bool]) -> u32 {
    present.iter().filter(|p| **p).count() as u32
}

/// `LeaderIdAndEpoch` (Fetch and Produce responses): the partition's current leader, sent with
/// NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH so the client need not wait for Metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct LeaderIdAndEpoch {
    /// `LeaderId`, -1 if unknown.
    pub leader_id: i32,
    /// `LeaderEpoch`, -1 if unknown.
    pub leader_epoch: i32,
}

impl Default for LeaderIdAndEpoch {
    fn default() -> Self {
        LeaderIdAndEpoch {
            leader_id: -1,
            leader_epoch: -1,
        }
    }
}

impl LeaderIdAndEpoch {
    /// True if the broker named a leader (not the default "unknown").
    pub fn is_known(&self) -> bool {
        self.leader_id >= 0
    }
}

impl Encodable for LeaderIdAndEpoch {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        // Only ever inside a tagged field, hence always flexible.
        enc.i32(self.leader_id);
        enc.i32(self.leader_epoch);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for LeaderIdAndEpoch {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let l = LeaderIdAndEpoch {
            leader_id: dec.i32("LeaderId")?,
            leader_epoch: dec.i32("LeaderEpoch")?,
        };
        dec.skip_tagged_fields()?;
        Ok(l)
    }
}

/// `NodeEndpoint` (Fetch v16+, Produce v10+ responses): the address of a leader named in
/// [`LeaderIdAndEpoch`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct NodeEndpoint {
    /// `NodeId`.
    pub node_id: i32,
    /// `Host`.
    pub host: String,
    /// `Port`.
    pub port: i32,
    /// `Rack` (nullable).
    pub rack: Option<String>,
}

impl Encodable for NodeEndpoint {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.i32(self.node_id);
        enc.compact_string("Host", &self.host)?;
        enc.i32(self.port);
        enc.compact_nullable_string("Rack", self.rack.as_deref())?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for NodeEndpoint {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let n = NodeEndpoint {
            node_id: dec.i32("NodeId")?,
            host: dec.compact_string("Host")?,
            port: dec.i32("Port")?,
            rack: dec.compact_nullable_string("Rack")?,
        };
        dec.skip_tagged_fields()?;
        Ok(n)
    }
}

/// `ReplicaState` (request, tagged, v15+): only followers set it; consumers leave the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ReplicaState {
    /// `ReplicaId`, -1 for a consumer.
    pub replica_id: i32,
    /// `ReplicaEpoch`, -1 if not available.
    pub replica_epoch: i64,
}

impl Default for ReplicaState {
    fn default() -> Self {
        ReplicaState {
            replica_id: -1,
            replica_epoch: -1,
        }
    }
}

impl Encodable for ReplicaState {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.i32(self.replica_id);
        enc.i64(self.replica_epoch);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for ReplicaState {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let r = ReplicaState {
            replica_id: dec.i32("ReplicaId")?,
            replica_epoch: dec.i64("ReplicaEpoch")?,
        };
        dec.skip_tagged_fields()?;
        Ok(r)
    }
}

/// A partition to fetch (`FetchPartition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct FetchPartition {
    /// `Partition`.
    pub partition: i32,
    /// `CurrentLeaderEpoch` (v9+, default -1, ignorable): fences fetches from a stale leader.
    pub current_leader_epoch: i32,
    /// `FetchOffset`.
    pub fetch_offset: i64,
    /// `LastFetchedEpoch` (v12+, default -1, not ignorable): followers only.
    pub last_fetched_epoch: i32,
    /// `LogStartOffset` (v5+, default -1, ignorable): followers only.
    pub log_start_offset: i64,
    /// `PartitionMaxBytes`.
    pub partition_max_bytes: i32,
    /// `ReplicaDirectoryId` (tagged 0, v17+, ignorable): followers only.
    pub replica_directory_id: Uuid,
    /// `HighWatermark` (tagged 1, v18+, default `i64::MAX`, ignorable): followers only.
    pub high_watermark: i64,
}

impl Default for FetchPartition {
    fn default() -> Self {
        FetchPartition {
            partition: 0,
            current_leader_epoch: -1,
            fetch_offset: 0,
            last_fetched_epoch: -1,
            log_start_offset: -1,
            partition_max_bytes: 0,
            replica_directory_id: Uuid::ZERO,
            high_watermark: i64::MAX,
        }
    }
}

impl Encodable for FetchPartition {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.partition);
        if version >= 9 {
            enc.i32(self.current_leader_epoch);
        }
        enc.i64(self.fetch_offset);
        if version >= 12 {
            enc.i32(self.last_fetched_epoch);
        } else {
            ensure_default(
                self.last_fetched_epoch == -1,
                REQ,
                version,
                "LastFetchedEpoch",
            )?;
        }
        if version >= 5 {
            enc.i64(self.log_start_offset);
        }
        enc.i32(self.partition_max_bytes);
        if version >= 12 {
            let dir = version >= 17 && self.replica_directory_id != Uuid::ZERO;
            let hw = version >= 18 && self.high_watermark != i64::MAX;
            enc.unsigned_varint(count(&[dir, hw]));
            if dir {
                enc.tagged_field(0, |e| {
                    e.uuid(self.replica_directory_id);
                    Ok(())
                })?;
            }
            if hw {
                enc.tagged_field(1, |e| {
                    e.i64(self.high_watermark);
                    Ok(())
                })?;
            }
        }
        Ok(())
    }
}

impl Decodable for FetchPartition {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let mut p = FetchPartition {
            partition: dec.i32("Partition")?,
            ..Default::default()
        };
        if version >= 9 {
            p.current_leader_epoch = dec.i32("CurrentLeaderEpoch")?;
        }
        p.fetch_offset = dec.i64("FetchOffset")?;
        if version >= 12 {
            p.last_fetched_epoch = dec.i32("LastFetchedEpoch")?;
        }
        if version >= 5 {
            p.log_start_offset = dec.i64("LogStartOffset")?;
        }
        p.partition_max_bytes = dec.i32("PartitionMaxBytes")?;
        if version >= 12 {
            dec.tagged_fields(|tag, sub| {
                match tag {
                    0 if version >= 17 => {
                        p.replica_directory_id = sub.uuid("ReplicaDirectoryId")?
                    }
                    1 if version >= 18 => p.high_watermark = sub.i64("HighWatermark")?,
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
        }
        Ok(p)
    }
}

/// A topic to fetch (`FetchTopic`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct FetchTopic {
    /// `Topic` (v4-12, ignorable).
    pub topic: String,
    /// `TopicId` (v13+, ignorable).
    pub topic_id: Uuid,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<FetchPartition>,
}

impl Encodable for FetchTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 12;
        if version <= 12 {
            enc.string_as("Topic", &self.topic, flex)?;
        } else {
            enc.uuid(self.topic_id);
        }
        enc.array("Partitions", &self.partitions, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for FetchTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut t = FetchTopic::default();
        if version <= 12 {
            t.topic = dec.string_as("Topic", flex)?;
        } else {
            t.topic_id = dec.uuid("TopicId")?;
        }
        t.partitions = dec.array("Partitions", flex, version)?;
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// Partitions to remove from an incremental fetch session (`ForgottenTopic`, v7+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ForgottenTopic {
    /// `Topic` (v7-12, ignorable).
    pub topic: String,
    /// `TopicId` (v13+, ignorable).
    pub topic_id: Uuid,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<i32>,
}

impl Encodable for ForgottenTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 12;
        if version <= 12 {
            enc.string_as("Topic", &self.topic, flex)?;
        } else {
            enc.uuid(self.topic_id);
        }
        enc.i32_array("Partitions", &self.partitions, flex)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for ForgottenTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut t = ForgottenTopic::default();
        if version <= 12 {
            t.topic = dec.string_as("Topic", flex)?;
        } else {
            t.topic_id = dec.uuid("TopicId")?;
        }
        t.partitions = dec.i32_array("Partitions", flex)?;
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `FetchRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct FetchRequest {
    /// `ClusterId` (tagged 0, v12+, nullable, ignorable).
    pub cluster_id: Option<String>,
    /// `ReplicaId` (v4-14, default -1 = consumer; not ignorable).
    pub replica_id: i32,
    /// `ReplicaState` (tagged 1, v15+; default = consumer; not ignorable).
    pub replica_state: ReplicaState,
    /// `MaxWaitMs`: how long the broker may wait for `min_bytes`.
    pub max_wait_ms: i32,
    /// `MinBytes`.
    pub min_bytes: i32,
    /// `MaxBytes` (default `i32::MAX`).
    pub max_bytes: i32,
    /// `IsolationLevel`: [`READ_UNCOMMITTED`] or [`READ_COMMITTED`].
    pub isolation_level: i8,
    /// `SessionId` (v7+, default 0, ignorable).
    pub session_id: i32,
    /// `SessionEpoch` (v7+, default -1, ignorable).
    pub session_epoch: i32,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<FetchTopic>,
    /// `ForgottenTopicsData` (v7+, not ignorable).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub forgotten_topics_data: Vec<ForgottenTopic>,
    /// `RackId` (v11+, default "", ignorable).
    pub rack_id: String,
}

impl Default for FetchRequest {
    fn default() -> Self {
        FetchRequest {
            cluster_id: None,
            replica_id: -1,
            replica_state: ReplicaState::default(),
            max_wait_ms: 0,
            min_bytes: 0,
            max_bytes: i32::MAX,
            isolation_level: READ_UNCOMMITTED,
            session_id: 0,
            session_epoch: -1,
            topics: Vec::new(),
            forgotten_topics_data: Vec::new(),
            rack_id: String::new(),
        }
    }
}

impl Encodable for FetchRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 12;
        if version <= 14 {
            enc.i32(self.replica_id);
        } else {
            ensure_default(self.replica_id == -1, REQ, version, "ReplicaId")?;
        }
        if version < 15 {
            ensure_default(
                self.replica_state == ReplicaState::default(),
                REQ,
                version,
                "ReplicaState",
            )?;
        }
        enc.i32(self.max_wait_ms);
        enc.i32(self.min_bytes);
        enc.i32(self.max_bytes);
        enc.i8(self.isolation_level);
        if version >= 7 {
            enc.i32(self.session_id);
            enc.i32(self.session_epoch);
        }
        enc.array("Topics", &self.topics, flex, version)?;
        if version >= 7 {
            enc.array(
                "ForgottenTopicsData",
                &self.forgotten_topics_data,
                flex,
                version,
            )?;
        } else {
            ensure_default(
                self.forgotten_topics_data.is_empty(),
                REQ,
                version,
                "ForgottenTopicsData",
            )?;
        }
        if version >= 11 {
            enc.string_as("RackId", &self.rack_id, flex)?;
        }
        if flex {
            let cluster = self.cluster_id.is_some();
            let state = version >= 15 && self.replica_state != ReplicaState::default();
            enc.unsigned_varint(count(&[cluster, state]));
            if let Some(id) = self.cluster_id.as_deref().filter(|_| cluster) {
                enc.tagged_field(0, |e| e.compact_nullable_string("ClusterId", Some(id)))?;
            }
            if state {
                enc.tagged_field(1, |e| self.replica_state.encode(e, version))?;
            }
        }
        Ok(())
    }
}

impl Decodable for FetchRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut r = FetchRequest::default();
        if version <= 14 {
            r.replica_id = dec.i32("ReplicaId")?;
        }
        r.max_wait_ms = dec.i32("MaxWaitMs")?;
        r.min_bytes = dec.i32("MinBytes")?;
        r.max_bytes = dec.i32("MaxBytes")?;
        r.isolation_level = dec.i8("IsolationLevel")?;
        if version >= 7 {
            r.session_id = dec.i32("SessionId")?;
            r.session_epoch = dec.i32("SessionEpoch")?;
        }
        r.topics = dec.array("Topics", flex, version)?;
        if version >= 7 {
            r.forgotten_topics_data = dec.array("ForgottenTopicsData", flex, version)?;
        }
        if version >= 11 {
            r.rack_id = dec.string_as("RackId", flex)?;
        }
        if flex {
            dec.tagged_fields(|tag, sub| {
                match tag {
                    0 => r.cluster_id = sub.compact_nullable_string("ClusterId")?,
                    1 if version >= 15 => r.replica_state = ReplicaState::decode(sub, version)?,
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
        }
        Ok(r)
    }
}

impl ApiMessage for FetchRequest {
    const API_KEY: i16 = 1;
    const MIN_VERSION: i16 = 4;
    const MAX_VERSION: i16 = 18;
    const FLEXIBLE_FROM: i16 = 12;
    const NAME: &'static str = REQ;
}

impl crate::protocol::codec::Response for FetchResponse {
    type Request = FetchRequest;
}

impl Request for FetchRequest {
    type Response = FetchResponse;
}

mod response;
pub use response::{
    AbortedTransaction, EpochEndOffset, FetchResponse, FetchableTopicResponse, PartitionData,
    SnapshotId,
};

#[cfg(test)]
mod tests;
