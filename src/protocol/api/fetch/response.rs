//! `FetchResponse` and its parts.

use super::{count, LeaderIdAndEpoch, NodeEndpoint, RESP};
use crate::protocol::codec::{
    ensure_default, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder,
    Uuid,
};
use crate::protocol::error::BrokerErrorKind;

/// `EpochEndOffset` (tagged 0 of [`PartitionData`], v12+): log divergence, followers only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct EpochEndOffset {
    /// `Epoch`, default -1.
    pub epoch: i32,
    /// `EndOffset`, default -1.
    pub end_offset: i64,
}

impl Default for EpochEndOffset {
    fn default() -> Self {
        EpochEndOffset {
            epoch: -1,
            end_offset: -1,
        }
    }
}

impl Encodable for EpochEndOffset {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.i32(self.epoch);
        enc.i64(self.end_offset);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for EpochEndOffset {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let e = EpochEndOffset {
            epoch: dec.i32("Epoch")?,
            end_offset: dec.i64("EndOffset")?,
        };
        dec.skip_tagged_fields()?;
        Ok(e)
    }
}

/// `SnapshotId` (tagged 2 of [`PartitionData`], v12+): KRaft followers only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct SnapshotId {
    /// `EndOffset`, default -1.
    pub end_offset: i64,
    /// `Epoch`, default -1.
    pub epoch: i32,
}

impl Default for SnapshotId {
    fn default() -> Self {
        SnapshotId {
            end_offset: -1,
            epoch: -1,
        }
    }
}

impl Encodable for SnapshotId {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.i64(self.end_offset);
        enc.i32(self.epoch);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for SnapshotId {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let s = SnapshotId {
            end_offset: dec.i64("EndOffset")?,
            epoch: dec.i32("Epoch")?,
        };
        dec.skip_tagged_fields()?;
        Ok(s)
    }
}

/// An aborted transaction in the fetched range (`AbortedTransaction`, `read_committed` only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct AbortedTransaction {
    /// `ProducerId`.
    pub producer_id: i64,
    /// `FirstOffset`: the first offset of the aborted transaction.
    pub first_offset: i64,
}

impl Encodable for AbortedTransaction {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i64(self.producer_id);
        enc.i64(self.first_offset);
        enc.end_struct(version >= 12);
        Ok(())
    }
}

impl Decodable for AbortedTransaction {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let a = AbortedTransaction {
            producer_id: dec.i64("ProducerId")?,
            first_offset: dec.i64("FirstOffset")?,
        };
        dec.end_struct(version >= 12)?;
        Ok(a)
    }
}

/// One fetched partition (`PartitionData`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct PartitionData {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `ErrorCode`.
    pub error_code: i16,
    /// `HighWatermark`.
    pub high_watermark: i64,
    /// `LastStableOffset` (default -1).
    pub last_stable_offset: i64,
    /// `LogStartOffset` (v5+, default -1, ignorable).
    pub log_start_offset: i64,
    /// `DivergingEpoch` (tagged 0, v12+; not ignorable).
    pub diverging_epoch: EpochEndOffset,
    /// `CurrentLeader` (tagged 1, v12+; not ignorable): the new leader with
    /// NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH.
    pub current_leader: LeaderIdAndEpoch,
    /// `SnapshotId` (tagged 2, v12+; not ignorable).
    pub snapshot_id: SnapshotId,
    /// `AbortedTransactions` (nullable, ignorable).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_opt_vec()")
    )]
    pub aborted_transactions: Option<Vec<AbortedTransaction>>,
    /// `PreferredReadReplica` (v11+, default -1, not ignorable).
    pub preferred_read_replica: i32,
    /// `Records` (nullable): the partition's record batches, undecoded (see the module docs).
    #[cfg_attr(
        test,
        proptest(strategy = "proptest::option::of(crate::protocol::api::test_util::small_vec())")
    )]
    pub records: Option<Vec<u8>>,
}

impl Default for PartitionData {
    fn default() -> Self {
        PartitionData {
            partition_index: 0,
            error_code: 0,
            high_watermark: 0,
            last_stable_offset: -1,
            log_start_offset: -1,
            diverging_epoch: EpochEndOffset::default(),
            current_leader: LeaderIdAndEpoch::default(),
            snapshot_id: SnapshotId::default(),
            aborted_transactions: None,
            preferred_read_replica: -1,
            records: None,
        }
    }
}

impl PartitionData {
    /// The partition-level error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }

    /// The record bytes, empty if the broker sent null.
    pub fn records_bytes(&self) -> &[u8] {
        self.records.as_deref().unwrap_or_default()
    }
}

impl Encodable for PartitionData {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 12;
        enc.i32(self.partition_index);
        enc.i16(self.error_code);
        enc.i64(self.high_watermark);
        enc.i64(self.last_stable_offset);
        if version >= 5 {
            enc.i64(self.log_start_offset);
        }
        enc.nullable_array(
            "AbortedTransactions",
            self.aborted_transactions.as_deref(),
            flex,
            version,
        )?;
        if version >= 11 {
            enc.i32(self.preferred_read_replica);
        } else {
            ensure_default(
                self.preferred_read_replica == -1,
                RESP,
                version,
                "PreferredReadReplica",
            )?;
        }
        enc.nullable_bytes_as("Records", self.records.as_deref(), flex)?;
        if flex {
            let div = self.diverging_epoch != EpochEndOffset::default();
            let lead = self.current_leader != LeaderIdAndEpoch::default();
            let snap = self.snapshot_id != SnapshotId::default();
            enc.unsigned_varint(count(&[div, lead, snap]));
            if div {
                enc.tagged_field(0, |e| self.diverging_epoch.encode(e, version))?;
            }
            if lead {
                enc.tagged_field(1, |e| self.current_leader.encode(e, version))?;
            }
            if snap {
                enc.tagged_field(2, |e| self.snapshot_id.encode(e, version))?;
            }
        } else {
            ensure_default(
                self.diverging_epoch == EpochEndOffset::default(),
                RESP,
                version,
                "DivergingEpoch",
            )?;
            ensure_default(
                self.current_leader == LeaderIdAndEpoch::default(),
                RESP,
                version,
                "CurrentLeader",
            )?;
            ensure_default(
                self.snapshot_id == SnapshotId::default(),
                RESP,
                version,
                "SnapshotId",
            )?;
        }
        Ok(())
    }
}

impl Decodable for PartitionData {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut p = PartitionData {
            partition_index: dec.i32("PartitionIndex")?,
            error_code: dec.i16("ErrorCode")?,
            high_watermark: dec.i64("HighWatermark")?,
            last_stable_offset: dec.i64("LastStableOffset")?,
            ..Default::default()
        };
        if version >= 5 {
            p.log_start_offset = dec.i64("LogStartOffset")?;
        }
        p.aborted_transactions = dec.nullable_array("AbortedTransactions", flex, version)?;
        if version >= 11 {
            p.preferred_read_replica = dec.i32("PreferredReadReplica")?;
        }
        // One copy of the exact record range, no per-batch work (see the module docs).
        p.records = dec.nullable_bytes_as("Records", flex)?;
        if flex {
            dec.tagged_fields(|tag, sub| {
                match tag {
                    0 => p.diverging_epoch = EpochEndOffset::decode(sub, version)?,
                    1 => p.current_leader = LeaderIdAndEpoch::decode(sub, version)?,
                    2 => p.snapshot_id = SnapshotId::decode(sub, version)?,
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
        }
        Ok(p)
    }
}

/// One topic of the response (`FetchableTopicResponse`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct FetchableTopicResponse {
    /// `Topic` (v4-12, ignorable).
    pub topic: String,
    /// `TopicId` (v13+, ignorable).
    pub topic_id: Uuid,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<PartitionData>,
}

impl Encodable for FetchableTopicResponse {
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

impl Decodable for FetchableTopicResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut t = FetchableTopicResponse::default();
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

/// `FetchResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct FetchResponse {
    /// `ThrottleTimeMs` (ignorable).
    pub throttle_time_ms: i32,
    /// `ErrorCode` (v7+, ignorable): a request-level error (e.g. a fetch-session error).
    pub error_code: i16,
    /// `SessionId` (v7+, default 0, not ignorable).
    pub session_id: i32,
    /// `Responses`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub responses: Vec<FetchableTopicResponse>,
    /// `NodeEndpoints` (tagged 0, v16+): addresses of the leaders named in `current_leader`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub node_endpoints: Vec<NodeEndpoint>,
}

impl FetchResponse {
    /// The request-level error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for FetchResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 12;
        enc.i32(self.throttle_time_ms);
        if version >= 7 {
            enc.i16(self.error_code);
            enc.i32(self.session_id);
        } else {
            ensure_default(self.session_id == 0, RESP, version, "SessionId")?;
        }
        enc.array("Responses", &self.responses, flex, version)?;
        if version < 16 {
            ensure_default(
                self.node_endpoints.is_empty(),
                RESP,
                version,
                "NodeEndpoints",
            )?;
        }
        if flex {
            let nodes = !self.node_endpoints.is_empty();
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

impl Decodable for FetchResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut r = FetchResponse {
            throttle_time_ms: dec.i32("ThrottleTimeMs")?,
            ..Default::default()
        };
        if version >= 7 {
            r.error_code = dec.i16("ErrorCode")?;
            r.session_id = dec.i32("SessionId")?;
        }
        r.responses = dec.array("Responses", flex, version)?;
        if flex {
            dec.tagged_fields(|tag, sub| {
                match tag {
                    0 if version >= 16 => {
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

impl ApiMessage for FetchResponse {
    const API_KEY: i16 = 1;
    const MIN_VERSION: i16 = 4;
    const MAX_VERSION: i16 = 18;
    const FLEXIBLE_FROM: i16 = 12;
    const NAME: &'static str = RESP;
}
