//! Field tables for StreamsGroupHeartbeat (88) and StreamsGroupDescribe (89), from
//! StreamsGroupHeartbeat{Request,Response}.json and StreamsGroupDescribe{Request,Response}.json.

use crate::model::{ANY, NEVER};
use crate::Run;
use kafka_streams_group::protocol::api::streams_group_describe as d;
use kafka_streams_group::protocol::api::streams_group_heartbeat as hb;

// Common structs (shared by both APIs).
conf!(hb::KeyValue {
    key: "key" [0, ANY, NEVER] = String::new(),
    value: "value" [0, ANY, NEVER] = String::new(),
});
conf!(hb::TopicInfo {
    name: "name" [0, ANY, NEVER] = String::new(),
    partitions: "partitions" [0, ANY, NEVER] = 0,
    replication_factor: "replicationFactor" [0, ANY, NEVER] = 0,
    topic_configs: "topicConfigs" [0, ANY, NEVER] = Vec::new(),
});
conf!(hb::Endpoint {
    host: "host" [0, ANY, NEVER] = String::new(),
    port: "port" [0, ANY, NEVER] = 0,
});
conf!(hb::TaskOffset {
    subtopology_id: "subtopologyId" [0, ANY, NEVER] = String::new(),
    partition: "partition" [0, ANY, NEVER] = 0,
    offset: "offset" [0, ANY, NEVER] = 0,
});
conf!(hb::TaskIds {
    subtopology_id: "subtopologyId" [0, ANY, NEVER] = String::new(),
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});

// StreamsGroupHeartbeatRequest.
conf!(hb::CopartitionGroup {
    source_topics: "sourceTopics" [0, ANY, NEVER] = Vec::new(),
    source_topic_regex: "sourceTopicRegex" [0, ANY, NEVER] = Vec::new(),
    repartition_source_topics: "repartitionSourceTopics" [0, ANY, NEVER] = Vec::new(),
});
conf!(hb::Subtopology {
    subtopology_id: "subtopologyId" [0, ANY, NEVER] = String::new(),
    source_topics: "sourceTopics" [0, ANY, NEVER] = Vec::new(),
    source_topic_regex: "sourceTopicRegex" [0, ANY, NEVER] = Vec::new(),
    state_changelog_topics: "stateChangelogTopics" [0, ANY, NEVER] = Vec::new(),
    repartition_sink_topics: "repartitionSinkTopics" [0, ANY, NEVER] = Vec::new(),
    repartition_source_topics: "repartitionSourceTopics" [0, ANY, NEVER] = Vec::new(),
    copartition_groups: "copartitionGroups" [0, ANY, NEVER] = Vec::new(),
});
conf!(hb::Topology {
    epoch: "epoch" [0, ANY, NEVER] = 0,
    subtopologies: "subtopologies" [0, ANY, NEVER] = Vec::new(),
});
conf!(hb::StreamsGroupHeartbeatRequest {
    group_id: "groupId" [0, ANY, NEVER] = String::new(),
    member_id: "memberId" [0, ANY, NEVER] = String::new(),
    member_epoch: "memberEpoch" [0, ANY, NEVER] = 0,
    endpoint_information_epoch: "endpointInformationEpoch" [0, ANY, NEVER] = 0,
    instance_id: "instanceId" [0, ANY, 0] = None,
    rack_id: "rackId" [0, ANY, 0] = None,
    rebalance_timeout_ms: "rebalanceTimeoutMs" [0, ANY, NEVER] = -1,
    topology: "topology" [0, ANY, 0] = None,
    active_tasks: "activeTasks" [0, ANY, 0] = None,
    standby_tasks: "standbyTasks" [0, ANY, 0] = None,
    warmup_tasks: "warmupTasks" [0, ANY, 0] = None,
    process_id: "processId" [0, ANY, 0] = None,
    user_endpoint: "userEndpoint" [0, ANY, 0] = None,
    client_tags: "clientTags" [0, ANY, 0] = None,
    task_offsets: "taskOffsets" [0, ANY, 0] = None,
    task_end_offsets: "taskEndOffsets" [0, ANY, 0] = None,
    shutdown_application: "shutdownApplication" [0, ANY, NEVER] = false,
});

// StreamsGroupHeartbeatResponse.
conf!(hb::Status {
    status_code: "statusCode" [0, ANY, NEVER] = 0,
    status_detail: "statusDetail" [0, ANY, NEVER] = String::new(),
});
conf!(hb::TopicPartitions {
    topic: "topic" [0, ANY, NEVER] = String::new(),
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(hb::EndpointToPartitions {
    user_endpoint: "userEndpoint" [0, ANY, NEVER] = hb::Endpoint::default(),
    active_partitions: "activePartitions" [0, ANY, NEVER] = Vec::new(),
    standby_partitions: "standbyPartitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(hb::StreamsGroupHeartbeatResponse {
    throttle_time_ms: "throttleTimeMs" [0, ANY, NEVER] = 0,
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    error_message: "errorMessage" [0, ANY, 0] = None,
    member_id: "memberId" [0, ANY, NEVER] = String::new(),
    member_epoch: "memberEpoch" [0, ANY, NEVER] = 0,
    heartbeat_interval_ms: "heartbeatIntervalMs" [0, ANY, NEVER] = 0,
    acceptable_recovery_lag_legacy: "acceptableRecoveryLagLegacy" [0, 0, NEVER] = 0,
    task_offset_interval_ms: "taskOffsetIntervalMs" [0, ANY, NEVER] = 0,
    acceptable_recovery_lag: "acceptableRecoveryLag" [1, ANY, NEVER] = -1,
    status: "status" [0, ANY, 0] = None,
    active_tasks: "activeTasks" [0, ANY, 0] = None,
    standby_tasks: "standbyTasks" [0, ANY, 0] = None,
    warmup_tasks: "warmupTasks" [0, ANY, 0] = None,
    topology_description_required: "topologyDescriptionRequired" [1, ANY, NEVER] = false,
    endpoint_information_epoch: "endpointInformationEpoch" [0, ANY, NEVER] = 0,
    partitions_by_user_endpoint: "partitionsByUserEndpoint" [0, ANY, 0] = None,
});

// StreamsGroupDescribeRequest / Response.
conf!(d::StreamsGroupDescribeRequest {
    group_ids: "groupIds" [0, ANY, NEVER] = Vec::new(),
    include_authorized_operations: "includeAuthorizedOperations" [0, ANY, NEVER] = false,
    include_topology_description: "includeTopologyDescription" [1, ANY, NEVER] = false,
});
conf!(d::DescribedSubtopology {
    subtopology_id: "subtopologyId" [0, ANY, NEVER] = String::new(),
    source_topics: "sourceTopics" [0, ANY, NEVER] = Vec::new(),
    repartition_sink_topics: "repartitionSinkTopics" [0, ANY, NEVER] = Vec::new(),
    state_changelog_topics: "stateChangelogTopics" [0, ANY, NEVER] = Vec::new(),
    repartition_source_topics: "repartitionSourceTopics" [0, ANY, NEVER] = Vec::new(),
});
conf!(d::DescribedTopology {
    epoch: "epoch" [0, ANY, NEVER] = 0,
    subtopologies: "subtopologies" [0, ANY, 0] = None,
});
conf!(d::Assignment {
    active_tasks: "activeTasks" [0, ANY, NEVER] = Vec::new(),
    standby_tasks: "standbyTasks" [0, ANY, NEVER] = Vec::new(),
    warmup_tasks: "warmupTasks" [0, ANY, NEVER] = Vec::new(),
});
conf!(d::Member {
    member_id: "memberId" [0, ANY, NEVER] = String::new(),
    member_epoch: "memberEpoch" [0, ANY, NEVER] = 0,
    instance_id: "instanceId" [0, ANY, 0] = None,
    rack_id: "rackId" [0, ANY, 0] = None,
    client_id: "clientId" [0, ANY, NEVER] = String::new(),
    client_host: "clientHost" [0, ANY, NEVER] = String::new(),
    topology_epoch: "topologyEpoch" [0, ANY, NEVER] = 0,
    process_id: "processId" [0, ANY, NEVER] = String::new(),
    user_endpoint: "userEndpoint" [0, ANY, 0] = None,
    client_tags: "clientTags" [0, ANY, NEVER] = Vec::new(),
    task_offsets: "taskOffsets" [0, ANY, NEVER] = Vec::new(),
    task_end_offsets: "taskEndOffsets" [0, ANY, NEVER] = Vec::new(),
    assignment: "assignment" [0, ANY, NEVER] = d::Assignment::default(),
    target_assignment: "targetAssignment" [0, ANY, NEVER] = d::Assignment::default(),
    is_classic: "isClassic" [0, ANY, NEVER] = false,
});
conf!(d::TopologyDescriptionNode {
    name: "name" [1, ANY, NEVER] = String::new(),
    node_type: "nodeType" [1, ANY, NEVER] = 0,
    source_topics: "sourceTopics" [1, ANY, NEVER] = Vec::new(),
    sink_topic: "sinkTopic" [1, ANY, 1] = None,
    stores: "stores" [1, ANY, NEVER] = Vec::new(),
    successors: "successors" [1, ANY, NEVER] = Vec::new(),
});
conf!(d::TopologyDescriptionSubtopology {
    subtopology_id: "subtopologyId" [1, ANY, NEVER] = String::new(),
    nodes: "nodes" [1, ANY, NEVER] = Vec::new(),
});
conf!(d::TopologyDescriptionGlobalStore {
    source: "source" [1, ANY, NEVER] = d::TopologyDescriptionNode::default(),
    processor: "processor" [1, ANY, NEVER] = d::TopologyDescriptionNode::default(),
});
conf!(d::TopologyDescription {
    subtopologies: "subtopologies" [1, ANY, NEVER] = Vec::new(),
    global_stores: "globalStores" [1, ANY, NEVER] = Vec::new(),
});
conf!(d::DescribedGroup {
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    error_message: "errorMessage" [0, ANY, 0] = None,
    group_id: "groupId" [0, ANY, NEVER] = String::new(),
    group_state: "groupState" [0, ANY, NEVER] = String::new(),
    group_epoch: "groupEpoch" [0, ANY, NEVER] = 0,
    assignment_epoch: "assignmentEpoch" [0, ANY, NEVER] = 0,
    topology: "topology" [0, ANY, 0] = None,
    members: "members" [0, ANY, NEVER] = Vec::new(),
    authorized_operations: "authorizedOperations" [0, ANY, NEVER] = i32::MIN,
    topology_description: "topologyDescription" [1, ANY, 1] = None,
    topology_description_status: "topologyDescriptionStatus" [1, ANY, NEVER] = 0,
    assignor_name: "assignorName" [1, ANY, 1] = None,
});
conf!(d::StreamsGroupDescribeResponse {
    throttle_time_ms: "throttleTimeMs" [0, ANY, NEVER] = 0,
    groups: "groups" [0, ANY, NEVER] = Vec::new(),
});

/// Runs both streams APIs, every version.
pub fn run(run: &mut Run) {
    run.pair::<hb::StreamsGroupHeartbeatRequest, hb::StreamsGroupHeartbeatResponse>(0..=1);
    run.pair::<d::StreamsGroupDescribeRequest, d::StreamsGroupDescribeResponse>(0..=1);
}
