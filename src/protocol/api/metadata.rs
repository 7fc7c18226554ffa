//! Metadata (API key 3), versions 0-13; flexible from v9.
//!
//! Topic selection: in v0 an empty `topics` list means "all topics" and null is not allowed; in
//! v1+ `None` means "all topics" and an empty list means "no topics" (brokers and controller only).

use crate::protocol::codec::{
    ensure_default, non_null, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError,
    Encoder, Request, Uuid,
};
use crate::protocol::error::BrokerErrorKind;
use crate::protocol::node_ids::{NodeIds, WINDOW};

const REQ: &str = "MetadataRequest";
const RESP: &str = "MetadataResponse";

/// Default of the `*AuthorizedOperations` bitfields: "not requested".
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

/// A requested topic (`Topics` element of the request).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct MetadataRequestTopic {
    /// `TopicId` (v10+, ignorable).
    pub topic_id: Uuid,
    /// `Name` (nullable in v10+, when querying by id).
    pub name: Option<String>,
}

impl Encodable for MetadataRequestTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        if version >= 10 {
            enc.uuid(self.topic_id);
            enc.compact_nullable_string("Name", self.name.as_deref())?;
        } else {
            let name = non_null(self.name.as_deref(), REQ, version, "Name")?;
            enc.string_as("Name", name, flex)?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for MetadataRequestTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut t = MetadataRequestTopic::default();
        if version >= 10 {
            t.topic_id = dec.uuid("TopicId")?;
            t.name = dec.compact_nullable_string("Name")?;
        } else {
            t.name = Some(dec.string_as("Name", flex)?);
        }
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `MetadataRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct MetadataRequest {
    /// `Topics`: `None` = all topics (v1+); see the module docs.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_opt_vec()")
    )]
    pub topics: Option<Vec<MetadataRequestTopic>>,
    /// `AllowAutoTopicCreation` (v4+, default true, not ignorable).
    pub allow_auto_topic_creation: bool,
    /// `IncludeClusterAuthorizedOperations` (v8-10).
    pub include_cluster_authorized_operations: bool,
    /// `IncludeTopicAuthorizedOperations` (v8+).
    pub include_topic_authorized_operations: bool,
}

impl Default for MetadataRequest {
    fn default() -> Self {
        MetadataRequest {
            topics: Some(Vec::new()),
            allow_auto_topic_creation: true,
            include_cluster_authorized_operations: false,
            include_topic_authorized_operations: false,
        }
    }
}

impl MetadataRequest {
    /// A request for the named topics, without auto-creation.
    pub fn for_topics<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        MetadataRequest {
            topics: Some(
                names
                    .into_iter()
                    .map(|n| MetadataRequestTopic {
                        topic_id: Uuid::ZERO,
                        name: Some(n.into()),
                    })
                    .collect(),
            ),
            allow_auto_topic_creation: false,
            ..Default::default()
        }
    }
}

impl Encodable for MetadataRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        if version >= 1 {
            enc.nullable_array("Topics", self.topics.as_deref(), flex, version)?;
        } else {
            let topics = non_null(self.topics.as_deref(), REQ, version, "Topics")?;
            enc.array("Topics", topics, flex, version)?;
        }
        if version >= 4 {
            enc.bool(self.allow_auto_topic_creation);
        } else {
            ensure_default(
                self.allow_auto_topic_creation,
                REQ,
                version,
                "AllowAutoTopicCreation",
            )?;
        }
        if (8..=10).contains(&version) {
            enc.bool(self.include_cluster_authorized_operations);
        } else {
            ensure_default(
                !self.include_cluster_authorized_operations,
                REQ,
                version,
                "IncludeClusterAuthorizedOperations",
            )?;
        }
        if version >= 8 {
            enc.bool(self.include_topic_authorized_operations);
        } else {
            ensure_default(
                !self.include_topic_authorized_operations,
                REQ,
                version,
                "IncludeTopicAuthorizedOperations",
            )?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for MetadataRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let topics = if version >= 1 {
            dec.nullable_array("Topics", flex, version)?
        } else {
            Some(dec.array("Topics", flex, version)?)
        };
        let mut r = MetadataRequest {
            topics,
            ..Default::default()
        };
        if version >= 4 {
            r.allow_auto_topic_creation = dec.bool("AllowAutoTopicCreation")?;
        }
        if (8..=10).contains(&version) {
            r.include_cluster_authorized_operations =
                dec.bool("IncludeClusterAuthorizedOperations")?;
        }
        if version >= 8 {
            r.include_topic_authorized_operations = dec.bool("IncludeTopicAuthorizedOperations")?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for MetadataRequest {
    const API_KEY: i16 = 3;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 13;
    const FLEXIBLE_FROM: i16 = 9;
    const NAME: &'static str = REQ;
}

impl crate::protocol::codec::Response for MetadataResponse {
    type Request = MetadataRequest;
}

impl Request for MetadataRequest {
    type Response = MetadataResponse;
}

/// A broker in the cluster (`Brokers` element).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct MetadataResponseBroker {
    /// `NodeId`.
    pub node_id: i32,
    /// `Host`.
    pub host: String,
    /// `Port`.
    pub port: i32,
    /// `Rack` (v1+, nullable, ignorable).
    pub rack: Option<String>,
}

impl Encodable for MetadataResponseBroker {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        enc.i32(self.node_id);
        enc.string_as("Host", &self.host, flex)?;
        enc.i32(self.port);
        if version >= 1 {
            enc.nullable_string_as("Rack", self.rack.as_deref(), flex)?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for MetadataResponseBroker {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut b = MetadataResponseBroker {
            node_id: dec.i32("NodeId")?,
            host: dec.string_as("Host", flex)?,
            port: dec.i32("Port")?,
            rack: None,
        };
        if version >= 1 {
            b.rack = dec.nullable_string_as("Rack", flex)?;
        }
        dec.end_struct(flex)?;
        Ok(b)
    }
}

/// A partition of a topic (`Partitions` element).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct MetadataResponsePartition {
    /// `ErrorCode`.
    pub error_code: i16,
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `LeaderId`.
    pub leader_id: i32,
    /// `LeaderEpoch` (v7+, default -1, ignorable).
    pub leader_epoch: i32,
    /// `ReplicaNodes`.
    pub replica_nodes: NodeIds,
    /// `IsrNodes`.
    pub isr_nodes: NodeIds,
    /// `OfflineReplicas` (v5+, ignorable).
    pub offline_replicas: NodeIds,
}

impl Default for MetadataResponsePartition {
    fn default() -> Self {
        MetadataResponsePartition {
            error_code: 0,
            partition_index: 0,
            leader_id: 0,
            leader_epoch: -1,
            replica_nodes: NodeIds::new(),
            isr_nodes: NodeIds::new(),
            offline_replicas: NodeIds::new(),
        }
    }
}

impl Encodable for MetadataResponsePartition {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        enc.i16(self.error_code);
        enc.i32(self.partition_index);
        enc.i32(self.leader_id);
        if version >= 7 {
            enc.i32(self.leader_epoch);
        }
        enc.i32_array("ReplicaNodes", &self.replica_nodes, flex)?;
        enc.i32_array("IsrNodes", &self.isr_nodes, flex)?;
        if version >= 5 {
            enc.i32_array("OfflineReplicas", &self.offline_replicas, flex)?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for MetadataResponsePartition {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let error_code = dec.i16("ErrorCode")?;
        let partition_index = dec.i32("PartitionIndex")?;
        let leader_id = dec.i32("LeaderId")?;
        let leader_epoch = if version >= 7 {
            dec.i32("LeaderEpoch")?
        } else {
            -1
        };
        let replica_nodes = node_ids(dec, "ReplicaNodes", flex)?;
        let isr_nodes = node_ids(dec, "IsrNodes", flex)?;
        let offline_replicas = if version >= 5 {
            node_ids(dec, "OfflineReplicas", flex)?
        } else {
            NodeIds::new()
        };
        end_struct(dec, flex)?;
        Ok(MetadataResponsePartition {
            error_code,
            partition_index,
            leader_id,
            leader_epoch,
            replica_nodes,
            isr_nodes,
            offline_replicas,
        })
    }
}

// Partitions are the bulk of a big cluster's Metadata response (10^4-10^6 of them), so the two
// helpers below take a shortcut for what nearly every partition holds — one-byte compact
// counts, no tagged fields — and defer to the general `Decoder` methods (same results, same
// errors) for everything else.

/// Reads a non-null `[]int32` array of broker ids straight into a [`NodeIds`]: one bounds
/// check for the whole run and no heap allocation for the usual replication factors. Errors
/// are those of [`Decoder::i32_array`].
///
/// Inlined, it is only the common case: a flexible version, a one-byte count of at most
/// [`NodeIds::INLINE_CAPACITY`] ids, and a window's worth of input behind it, read with no
/// copy of variable length. Anything else goes to [`node_ids_general`].
#[inline(always)]
fn node_ids(
    dec: &mut Decoder<'_>,
    field: &'static str,
    flex: bool,
) -> Result<NodeIds, DecodeError> {
    if flex {
        if let Some((&count, tail)) = dec.rest().split_first() {
            // A compact count byte holds `n + 1` (0 is null).
            let n = usize::from(count).wrapping_sub(1);
            if n <= NodeIds::INLINE_CAPACITY {
                if let Some(window) = tail.first_chunk::<WINDOW>() {
                    let ids = NodeIds::from_be_window(window, n);
                    dec.raw(field, 1 + 4 * n)?;
                    return Ok(ids);
                }
            }
        }
    }
    node_ids_general(dec, field, flex)
}

/// [`node_ids`] for classic arrays, long lists, the end of the input and malformed input.
#[cold]
#[inline(never)]
fn node_ids_general(
    dec: &mut Decoder<'_>,
    field: &'static str,
    flex: bool,
) -> Result<NodeIds, DecodeError> {
    let n = dec.array_len_as(field, flex)?;
    match n.checked_mul(4) {
        Some(len) if len <= dec.remaining() => Ok(NodeIds::from_be_bytes(dec.raw(field, len)?)),
        _ => Err(DecodeError::InvalidLength {
            api: dec.api(),
            version: dec.version(),
            field,
            length: n as i64,
            remaining: dec.remaining(),
        }),
    }
}

/// [`Decoder::end_struct`], with the empty tagged-field section (one zero byte) read inline.
fn end_struct(dec: &mut Decoder<'_>, flex: bool) -> Result<(), DecodeError> {
    if flex && dec.rest().first() == Some(&0) {
        dec.raw("TaggedFields", 1).map(drop)
    } else {
        dec.end_struct(flex)
    }
}

/// A topic in the response (`Topics` element).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct MetadataResponseTopic {
    /// `ErrorCode`.
    pub error_code: i16,
    /// `Name` (nullable in v12+, for unknown topics queried by id).
    pub name: Option<String>,
    /// `TopicId` (v10+, ignorable).
    pub topic_id: Uuid,
    /// `IsInternal` (v1+, ignorable).
    pub is_internal: bool,
    /// `Partitions`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub partitions: Vec<MetadataResponsePartition>,
    /// `TopicAuthorizedOperations` (v8+, default [`AUTHORIZED_OPERATIONS_OMITTED`]).
    pub topic_authorized_operations: i32,
}

impl Default for MetadataResponseTopic {
    fn default() -> Self {
        MetadataResponseTopic {
            error_code: 0,
            name: None,
            topic_id: Uuid::ZERO,
            is_internal: false,
            partitions: Vec::new(),
            topic_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
        }
    }
}

impl MetadataResponseTopic {
    /// The topic-level error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for MetadataResponseTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        enc.i16(self.error_code);
        if version >= 12 {
            enc.compact_nullable_string("Name", self.name.as_deref())?;
        } else {
            let name = non_null(self.name.as_deref(), RESP, version, "Name")?;
            enc.string_as("Name", name, flex)?;
        }
        if version >= 10 {
            enc.uuid(self.topic_id);
        }
        if version >= 1 {
            enc.bool(self.is_internal);
        }
        enc.array("Partitions", &self.partitions, flex, version)?;
        if version >= 8 {
            enc.i32(self.topic_authorized_operations);
        } else {
            ensure_default(
                self.topic_authorized_operations == AUTHORIZED_OPERATIONS_OMITTED,
                RESP,
                version,
                "TopicAuthorizedOperations",
            )?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for MetadataResponseTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut t = MetadataResponseTopic {
            error_code: dec.i16("ErrorCode")?,
            ..Default::default()
        };
        t.name = if version >= 12 {
            dec.compact_nullable_string("Name")?
        } else {
            Some(dec.string_as("Name", flex)?)
        };
        if version >= 10 {
            t.topic_id = dec.uuid("TopicId")?;
        }
        if version >= 1 {
            t.is_internal = dec.bool("IsInternal")?;
        }
        t.partitions = dec.array("Partitions", flex, version)?;
        if version >= 8 {
            t.topic_authorized_operations = dec.i32("TopicAuthorizedOperations")?;
        }
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `MetadataResponse`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct MetadataResponse {
    /// `ThrottleTimeMs` (v3+, ignorable).
    pub throttle_time_ms: i32,
    /// `Brokers`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub brokers: Vec<MetadataResponseBroker>,
    /// `ClusterId` (v2+, nullable, ignorable).
    pub cluster_id: Option<String>,
    /// `ControllerId` (v1+, default -1, ignorable).
    pub controller_id: i32,
    /// `Topics`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<MetadataResponseTopic>,
    /// `ClusterAuthorizedOperations` (v8-10, default [`AUTHORIZED_OPERATIONS_OMITTED`]).
    pub cluster_authorized_operations: i32,
    /// `ErrorCode` (v13+, ignorable): top-level error, e.g. REBOOTSTRAP_REQUIRED.
    pub error_code: i16,
}

impl Default for MetadataResponse {
    fn default() -> Self {
        MetadataResponse {
            throttle_time_ms: 0,
            brokers: Vec::new(),
            cluster_id: None,
            controller_id: -1,
            topics: Vec::new(),
            cluster_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
            error_code: 0,
        }
    }
}

impl MetadataResponse {
    /// The top-level error (v13+; `NONE` before).
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }

    /// The broker with `node_id`, if listed.
    pub fn broker(&self, node_id: i32) -> Option<&MetadataResponseBroker> {
        self.brokers.iter().find(|b| b.node_id == node_id)
    }

    /// The topic named `name`, if listed.
    pub fn topic(&self, name: &str) -> Option<&MetadataResponseTopic> {
        self.topics.iter().find(|t| t.name.as_deref() == Some(name))
    }
}

impl Encodable for MetadataResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 9;
        if version >= 3 {
            enc.i32(self.throttle_time_ms);
        }
        enc.array("Brokers", &self.brokers, flex, version)?;
        if version >= 2 {
            enc.nullable_string_as("ClusterId", self.cluster_id.as_deref(), flex)?;
        }
        if version >= 1 {
            enc.i32(self.controller_id);
        }
        enc.array("Topics", &self.topics, flex, version)?;
        if (8..=10).contains(&version) {
            enc.i32(self.cluster_authorized_operations);
        } else {
            ensure_default(
                self.cluster_authorized_operations == AUTHORIZED_OPERATIONS_OMITTED,
                RESP,
                version,
                "ClusterAuthorizedOperations",
            )?;
        }
        if version >= 13 {
            enc.i16(self.error_code);
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for MetadataResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut r = MetadataResponse::default();
        if version >= 3 {
            r.throttle_time_ms = dec.i32("ThrottleTimeMs")?;
        }
        r.brokers = dec.array("Brokers", flex, version)?;
        if version >= 2 {
            r.cluster_id = dec.nullable_string_as("ClusterId", flex)?;
        }
        if version >= 1 {
            r.controller_id = dec.i32("ControllerId")?;
        }
        r.topics = dec.array("Topics", flex, version)?;
        if (8..=10).contains(&version) {
            r.cluster_authorized_operations = dec.i32("ClusterAuthorizedOperations")?;
        }
        if version >= 13 {
            r.error_code = dec.i16("ErrorCode")?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for MetadataResponse {
    const API_KEY: i16 = 3;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 13;
    const FLEXIBLE_FROM: i16 = 9;
    const NAME: &'static str = RESP;
}

#[cfg(test)]
mod tests;
