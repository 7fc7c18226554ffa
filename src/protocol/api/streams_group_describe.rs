//! `StreamsGroupDescribe` (API key 89, versions 0–1; KIP-1071, KIP-1331, KIP-1357).
//!
//! Every version is flexible. v1 adds `IncludeTopologyDescription` to the request and
//! `TopologyDescription`, `TopologyDescriptionStatus` and `AssignorName` to each described
//! group. Field names mirror the schema in snake_case; nullable fields are `Option`s. The common
//! structs that are identical to `StreamsGroupHeartbeat`'s ([`KeyValue`], [`TopicInfo`],
//! [`Endpoint`], [`TaskOffset`], [`TaskIds`]) are re-exported from there.
//!
//! Writing a field that the version does not carry follows Kafka: ignorable fields
//! (`AssignorName`) and default values are dropped silently, anything else fails with
//! [`EncodeError::FieldNotInVersion`].

use super::streams_group_heartbeat::{
    get_nullable_struct, get_nullable_structs, get_strings, get_structs, not_in_version,
    put_nullable_struct, put_nullable_structs, put_strings, put_structs,
};
pub use super::streams_group_heartbeat::{Endpoint, KeyValue, TaskIds, TaskOffset, TopicInfo};
use crate::protocol::codec::{
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder, Request,
};
use crate::protocol::BrokerErrorKind;

/// `StreamsGroupDescribeRequest`: describe streams groups.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamsGroupDescribeRequest {
    /// The ids of the groups to describe.
    pub group_ids: Vec<String>,
    /// Whether to include authorized operations.
    pub include_authorized_operations: bool,
    /// **v1+**: whether to include the full topology description. `true` cannot be encoded at
    /// v0.
    pub include_topology_description: bool,
}

/// `StreamsGroupDescribeResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamsGroupDescribeResponse {
    /// Throttle time caused by a quota violation, in milliseconds.
    pub throttle_time_ms: i32,
    /// Each described group.
    pub groups: Vec<DescribedGroup>,
}

/// One described group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribedGroup {
    /// The describe error, or 0.
    pub error_code: i16,
    /// The error message, if any.
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: String,
    /// The group state string, or empty.
    pub group_state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The assignment epoch.
    pub assignment_epoch: i32,
    /// The topology initialised for the group; `None` on a describe error.
    pub topology: Option<DescribedTopology>,
    /// The members.
    pub members: Vec<Member>,
    /// Bitfield of authorized operations; `i32::MIN` (the default) when not requested.
    pub authorized_operations: i32,
    /// **v1+**: the full topology description; `Some` iff the status is AVAILABLE (3). A `Some`
    /// cannot be encoded at v0.
    pub topology_description: Option<TopologyDescription>,
    /// **v1+**: 0 NOT_REQUESTED, 1 NOT_STORED, 2 ERROR, 3 AVAILABLE (typed view:
    /// [`DescribedGroup::description_status`]). Non-zero cannot be encoded at v0.
    pub topology_description_status: i8,
    /// **v1+**, ignorable: the task assignor the coordinator will use next; dropped at v0.
    pub assignor_name: Option<String>,
}

impl Default for DescribedGroup {
    /// Schema defaults (`authorized_operations` is `i32::MIN`).
    fn default() -> Self {
        Self {
            error_code: 0,
            error_message: None,
            group_id: String::new(),
            group_state: String::new(),
            group_epoch: 0,
            assignment_epoch: 0,
            topology: None,
            members: Vec::new(),
            authorized_operations: i32::MIN,
            topology_description: None,
            topology_description_status: 0,
            assignor_name: None,
        }
    }
}

impl DescribedGroup {
    /// [`topology_description_status`](Self::topology_description_status) as a typed value.
    pub fn description_status(&self) -> TopologyDescriptionStatus {
        TopologyDescriptionStatus::from_code(self.topology_description_status)
    }
}

code_enum! {
    /// Typed view of [`DescribedGroup::topology_description_status`].
    TopologyDescriptionStatus(i8) {
        /// 0: the request did not set `IncludeTopologyDescription`.
        NotRequested = 0 => "NOT_REQUESTED",
        /// 1: no description is recorded for the group.
        NotStored = 1 => "NOT_STORED",
        /// 2: the broker failed to fetch the description (see its log).
        Error = 2 => "ERROR",
        /// 3: [`DescribedGroup::topology_description`] carries the description.
        Available = 3 => "AVAILABLE",
    }
}

code_enum! {
    /// Typed view of [`TopologyDescriptionNode::node_type`].
    NodeType(i8) {
        /// 1: a source node.
        Source = 1 => "SOURCE",
        /// 2: a processor node.
        Processor = 2 => "PROCESSOR",
        /// 3: a sink node.
        Sink = 3 => "SINK",
    }
}

/// The topology initialised for a group (describe `Topology`; unlike the heartbeat request's,
/// its sub-topologies are resolved and may be null).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DescribedTopology {
    /// The epoch of the initialised topology.
    pub epoch: i32,
    /// The sub-topologies; `None` if the group is uninitialised or its topics are not ready.
    pub subtopologies: Option<Vec<DescribedSubtopology>>,
}

/// One resolved sub-topology.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DescribedSubtopology {
    /// The sub-topology identifier.
    pub subtopology_id: String,
    /// The topics it reads from.
    pub source_topics: Vec<String>,
    /// The repartition topics it writes to.
    pub repartition_sink_topics: Vec<String>,
    /// Its state changelog topics.
    pub state_changelog_topics: Vec<TopicInfo>,
    /// Its repartition source topics.
    pub repartition_source_topics: Vec<TopicInfo>,
}

/// One member of a described group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Member {
    /// The member id.
    pub member_id: String,
    /// The member epoch.
    pub member_epoch: i32,
    /// Static-membership instance id.
    pub instance_id: Option<String>,
    /// Rack id.
    pub rack_id: Option<String>,
    /// Client id.
    pub client_id: String,
    /// Client host.
    pub client_host: String,
    /// The topology epoch on the client.
    pub topology_epoch: i32,
    /// Identity of the streams process.
    pub process_id: String,
    /// Interactive-queries endpoint, if defined.
    pub user_endpoint: Option<Endpoint>,
    /// Client tags.
    pub client_tags: Vec<KeyValue>,
    /// Cumulative changelog offsets.
    pub task_offsets: Vec<TaskOffset>,
    /// Cumulative changelog end offsets.
    pub task_end_offsets: Vec<TaskOffset>,
    /// The current assignment.
    pub assignment: Assignment,
    /// The target assignment.
    pub target_assignment: Assignment,
    /// True for classic members not yet upgraded.
    pub is_classic: bool,
}

/// Active, standby and warm-up tasks of a member.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assignment {
    /// Active tasks.
    pub active_tasks: Vec<TaskIds>,
    /// Standby tasks.
    pub standby_tasks: Vec<TaskIds>,
    /// Warm-up tasks.
    pub warmup_tasks: Vec<TaskIds>,
}

/// **v1+**: the full topology description of a group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopologyDescription {
    /// The sub-topologies.
    pub subtopologies: Vec<TopologyDescriptionSubtopology>,
    /// The global state stores.
    pub global_stores: Vec<TopologyDescriptionGlobalStore>,
}

/// A sub-topology of a [`TopologyDescription`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopologyDescriptionSubtopology {
    /// The sub-topology identifier.
    pub subtopology_id: String,
    /// Its processing nodes.
    pub nodes: Vec<TopologyDescriptionNode>,
}

/// A processing node of a [`TopologyDescription`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopologyDescriptionNode {
    /// Node name, e.g. `KSTREAM-SOURCE-0000000000`.
    pub name: String,
    /// 1 SOURCE, 2 PROCESSOR, 3 SINK (typed view: [`TopologyDescriptionNode::kind`]).
    pub node_type: i8,
    /// Source topics (source nodes).
    pub source_topics: Vec<String>,
    /// Sink topic (sink nodes); `None` if dynamic or not a sink.
    pub sink_topic: Option<String>,
    /// State stores accessed (processor nodes).
    pub stores: Vec<String>,
    /// Names of successor nodes.
    pub successors: Vec<String>,
}

impl TopologyDescriptionNode {
    /// [`node_type`](Self::node_type) as a typed value.
    pub fn kind(&self) -> NodeType {
        NodeType::from_code(self.node_type)
    }
}

/// A global store of a [`TopologyDescription`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopologyDescriptionGlobalStore {
    /// The source node feeding the store.
    pub source: TopologyDescriptionNode,
    /// The processor node populating the store.
    pub processor: TopologyDescriptionNode,
}

// ---------------------------------------------------------------------------------------------
// Request.

impl Encodable for StreamsGroupDescribeRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        if version < 1 && self.include_topology_description {
            return Err(not_in_version(
                Self::NAME,
                version,
                "IncludeTopologyDescription",
            ));
        }
        put_strings(enc, "GroupIds", &self.group_ids)?;
        enc.bool(self.include_authorized_operations);
        if version >= 1 {
            enc.bool(self.include_topology_description);
        }
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for StreamsGroupDescribeRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let group_ids = get_strings(dec, "GroupIds")?;
        let include_authorized_operations = dec.bool("IncludeAuthorizedOperations")?;
        let include_topology_description = if version >= 1 {
            dec.bool("IncludeTopologyDescription")?
        } else {
            false
        };
        dec.skip_tagged_fields()?;
        Ok(Self {
            group_ids,
            include_authorized_operations,
            include_topology_description,
        })
    }
}

impl ApiMessage for StreamsGroupDescribeRequest {
    const API_KEY: i16 = 89;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_FROM: i16 = 0;
    const NAME: &'static str = "StreamsGroupDescribeRequest";
}

impl crate::protocol::codec::Response for StreamsGroupDescribeResponse {
    type Request = StreamsGroupDescribeRequest;
}

impl Request for StreamsGroupDescribeRequest {
    type Response = StreamsGroupDescribeResponse;
}

// ---------------------------------------------------------------------------------------------
// Response.

impl Encodable for DescribedSubtopology {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.compact_string("SubtopologyId", &self.subtopology_id)?;
        put_strings(enc, "SourceTopics", &self.source_topics)?;
        put_strings(enc, "RepartitionSinkTopics", &self.repartition_sink_topics)?;
        put_structs(
            enc,
            "StateChangelogTopics",
            &self.state_changelog_topics,
            version,
        )?;
        put_structs(
            enc,
            "RepartitionSourceTopics",
            &self.repartition_source_topics,
            version,
        )?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for DescribedSubtopology {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let subtopology_id = dec.compact_string("SubtopologyId")?;
        let source_topics = get_strings(dec, "SourceTopics")?;
        let repartition_sink_topics = get_strings(dec, "RepartitionSinkTopics")?;
        let state_changelog_topics = get_structs(dec, "StateChangelogTopics", version)?;
        let repartition_source_topics = get_structs(dec, "RepartitionSourceTopics", version)?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            subtopology_id,
            source_topics,
            repartition_sink_topics,
            state_changelog_topics,
            repartition_source_topics,
        })
    }
}

impl Encodable for DescribedTopology {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.epoch);
        put_nullable_structs(enc, "Subtopologies", self.subtopologies.as_deref(), version)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for DescribedTopology {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let epoch = dec.i32("Epoch")?;
        let subtopologies = get_nullable_structs(dec, "Subtopologies", version)?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            epoch,
            subtopologies,
        })
    }
}

impl Encodable for Assignment {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        put_structs(enc, "ActiveTasks", &self.active_tasks, version)?;
        put_structs(enc, "StandbyTasks", &self.standby_tasks, version)?;
        put_structs(enc, "WarmupTasks", &self.warmup_tasks, version)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for Assignment {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let active_tasks = get_structs(dec, "ActiveTasks", version)?;
        let standby_tasks = get_structs(dec, "StandbyTasks", version)?;
        let warmup_tasks = get_structs(dec, "WarmupTasks", version)?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            active_tasks,
            standby_tasks,
            warmup_tasks,
        })
    }
}

impl Encodable for Member {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.compact_string("MemberId", &self.member_id)?;
        enc.i32(self.member_epoch);
        enc.compact_nullable_string("InstanceId", self.instance_id.as_deref())?;
        enc.compact_nullable_string("RackId", self.rack_id.as_deref())?;
        enc.compact_string("ClientId", &self.client_id)?;
        enc.compact_string("ClientHost", &self.client_host)?;
        enc.i32(self.topology_epoch);
        enc.compact_string("ProcessId", &self.process_id)?;
        put_nullable_struct(enc, self.user_endpoint.as_ref(), version)?;
        put_structs(enc, "ClientTags", &self.client_tags, version)?;
        put_structs(enc, "TaskOffsets", &self.task_offsets, version)?;
        put_structs(enc, "TaskEndOffsets", &self.task_end_offsets, version)?;
        self.assignment.encode(enc, version)?;
        self.target_assignment.encode(enc, version)?;
        enc.bool(self.is_classic);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for Member {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let member_id = dec.compact_string("MemberId")?;
        let member_epoch = dec.i32("MemberEpoch")?;
        let instance_id = dec.compact_nullable_string("InstanceId")?;
        let rack_id = dec.compact_nullable_string("RackId")?;
        let client_id = dec.compact_string("ClientId")?;
        let client_host = dec.compact_string("ClientHost")?;
        let topology_epoch = dec.i32("TopologyEpoch")?;
        let process_id = dec.compact_string("ProcessId")?;
        let user_endpoint = get_nullable_struct(dec, "UserEndpoint", version)?;
        let client_tags = get_structs(dec, "ClientTags", version)?;
        let task_offsets = get_structs(dec, "TaskOffsets", version)?;
        let task_end_offsets = get_structs(dec, "TaskEndOffsets", version)?;
        let assignment = Assignment::decode(dec, version)?;
        let target_assignment = Assignment::decode(dec, version)?;
        let is_classic = dec.bool("IsClassic")?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            member_id,
            member_epoch,
            instance_id,
            rack_id,
            client_id,
            client_host,
            topology_epoch,
            process_id,
            user_endpoint,
            client_tags,
            task_offsets,
            task_end_offsets,
            assignment,
            target_assignment,
            is_classic,
        })
    }
}

impl Encodable for TopologyDescriptionNode {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.compact_string("Name", &self.name)?;
        enc.i8(self.node_type);
        put_strings(enc, "SourceTopics", &self.source_topics)?;
        enc.compact_nullable_string("SinkTopic", self.sink_topic.as_deref())?;
        put_strings(enc, "Stores", &self.stores)?;
        put_strings(enc, "Successors", &self.successors)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for TopologyDescriptionNode {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let name = dec.compact_string("Name")?;
        let node_type = dec.i8("NodeType")?;
        let source_topics = get_strings(dec, "SourceTopics")?;
        let sink_topic = dec.compact_nullable_string("SinkTopic")?;
        let stores = get_strings(dec, "Stores")?;
        let successors = get_strings(dec, "Successors")?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            name,
            node_type,
            source_topics,
            sink_topic,
            stores,
            successors,
        })
    }
}

impl Encodable for TopologyDescriptionSubtopology {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.compact_string("SubtopologyId", &self.subtopology_id)?;
        put_structs(enc, "Nodes", &self.nodes, version)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for TopologyDescriptionSubtopology {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let subtopology_id = dec.compact_string("SubtopologyId")?;
        let nodes = get_structs(dec, "Nodes", version)?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            subtopology_id,
            nodes,
        })
    }
}

impl Encodable for TopologyDescriptionGlobalStore {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        self.source.encode(enc, version)?;
        self.processor.encode(enc, version)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for TopologyDescriptionGlobalStore {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let source = TopologyDescriptionNode::decode(dec, version)?;
        let processor = TopologyDescriptionNode::decode(dec, version)?;
        dec.skip_tagged_fields()?;
        Ok(Self { source, processor })
    }
}

impl Encodable for TopologyDescription {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        put_structs(enc, "Subtopologies", &self.subtopologies, version)?;
        put_structs(enc, "GlobalStores", &self.global_stores, version)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for TopologyDescription {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let subtopologies = get_structs(dec, "Subtopologies", version)?;
        let global_stores = get_structs(dec, "GlobalStores", version)?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            subtopologies,
            global_stores,
        })
    }
}

impl DescribedGroup {
    /// The group's describe error as a typed value (unknown codes are preserved).
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }

    /// Fails if a non-ignorable v1 field holds a non-default value and `version` is 0.
    fn check_version(&self, version: i16) -> Result<(), EncodeError> {
        const API: &str = StreamsGroupDescribeResponse::NAME;
        if version < 1 {
            if self.topology_description.is_some() {
                return Err(not_in_version(API, version, "TopologyDescription"));
            }
            if self.topology_description_status != 0 {
                return Err(not_in_version(API, version, "TopologyDescriptionStatus"));
            }
        }
        Ok(())
    }
}

impl Encodable for DescribedGroup {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        self.check_version(version)?;
        enc.i16(self.error_code);
        enc.compact_nullable_string("ErrorMessage", self.error_message.as_deref())?;
        enc.compact_string("GroupId", &self.group_id)?;
        enc.compact_string("GroupState", &self.group_state)?;
        enc.i32(self.group_epoch);
        enc.i32(self.assignment_epoch);
        put_nullable_struct(enc, self.topology.as_ref(), version)?;
        put_structs(enc, "Members", &self.members, version)?;
        enc.i32(self.authorized_operations);
        if version >= 1 {
            put_nullable_struct(enc, self.topology_description.as_ref(), version)?;
            enc.i8(self.topology_description_status);
            enc.compact_nullable_string("AssignorName", self.assignor_name.as_deref())?;
        }
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for DescribedGroup {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let error_code = dec.i16("ErrorCode")?;
        let error_message = dec.compact_nullable_string("ErrorMessage")?;
        let group_id = dec.compact_string("GroupId")?;
        let group_state = dec.compact_string("GroupState")?;
        let group_epoch = dec.i32("GroupEpoch")?;
        let assignment_epoch = dec.i32("AssignmentEpoch")?;
        let topology = get_nullable_struct(dec, "Topology", version)?;
        let members = get_structs(dec, "Members", version)?;
        let authorized_operations = dec.i32("AuthorizedOperations")?;
        let (topology_description, topology_description_status, assignor_name) = if version >= 1 {
            (
                get_nullable_struct(dec, "TopologyDescription", version)?,
                dec.i8("TopologyDescriptionStatus")?,
                dec.compact_nullable_string("AssignorName")?,
            )
        } else {
            (None, 0, None)
        };
        dec.skip_tagged_fields()?;
        Ok(Self {
            error_code,
            error_message,
            group_id,
            group_state,
            group_epoch,
            assignment_epoch,
            topology,
            members,
            authorized_operations,
            topology_description,
            topology_description_status,
            assignor_name,
        })
    }
}

impl Encodable for StreamsGroupDescribeResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        // Validate every group first so a failure writes nothing.
        self.groups
            .iter()
            .try_for_each(|g| g.check_version(version))?;
        enc.i32(self.throttle_time_ms);
        put_structs(enc, "Groups", &self.groups, version)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for StreamsGroupDescribeResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let throttle_time_ms = dec.i32("ThrottleTimeMs")?;
        let groups = get_structs(dec, "Groups", version)?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            throttle_time_ms,
            groups,
        })
    }
}

impl ApiMessage for StreamsGroupDescribeResponse {
    const API_KEY: i16 = 89;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_FROM: i16 = 0;
    const NAME: &'static str = "StreamsGroupDescribeResponse";
}

#[cfg(test)]
mod tests;
