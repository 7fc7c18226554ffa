//! Valid messages of every fuzzed API, built with the library's own types: the raw material
//! of the seeds (see [`crate::seeds`]).

use kafka_streams_group::protocol::api::api_versions::{
    ApiVersion, ApiVersionsResponse, FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_streams_group::protocol::api::create_topics::{
    CreatableTopicConfigs, CreatableTopicResult, CreateTopicsResponse,
};
use kafka_streams_group::protocol::api::fetch::{
    AbortedTransaction, FetchResponse, FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint,
    PartitionData,
};
use kafka_streams_group::protocol::api::find_coordinator::{Coordinator, FindCoordinatorResponse};
use kafka_streams_group::protocol::api::metadata::{
    MetadataResponse, MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_streams_group::protocol::api::offset_commit::{
    OffsetCommitResponse, OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_streams_group::protocol::api::offset_fetch::{
    OffsetFetchResponse, OffsetFetchResponseGroup, OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
};
use kafka_streams_group::protocol::api::produce::{
    BatchIndexAndErrorMessage, PartitionProduceResponse, ProduceResponse, TopicProduceResponse,
};
use kafka_streams_group::protocol::api::streams_group_describe::{
    Assignment, DescribedGroup, DescribedSubtopology as DescribeSubtopology,
    DescribedTopology as DescribeTopology, Member, StreamsGroupDescribeResponse,
    TopologyDescription, TopologyDescriptionGlobalStore, TopologyDescriptionNode,
    TopologyDescriptionSubtopology,
};
use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    CopartitionGroup, Endpoint, EndpointToPartitions, KeyValue, Status,
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, Subtopology, TaskOffset,
    TopicInfo, TopicPartitions, Topology,
};
use kafka_streams_group::protocol::Uuid;

use crate::mock_coordinator::tasks;

pub(crate) fn heartbeat_response_full(version: i16) -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        throttle_time_ms: 0,
        error_code: 0,
        error_message: None,
        member_id: "m-7c1e".into(),
        member_epoch: 12,
        heartbeat_interval_ms: 5000,
        acceptable_recovery_lag_legacy: if version == 0 { 10_000 } else { 0 },
        task_offset_interval_ms: 60_000,
        acceptable_recovery_lag: if version == 0 { -1 } else { 10_000 },
        status: Some(vec![Status {
            status_code: 1,
            status_detail: "missing source topics: in".into(),
        }]),
        active_tasks: Some(tasks(&[("0", &[0, 2]), ("1", &[1])])),
        standby_tasks: Some(tasks(&[("0", &[1])])),
        warmup_tasks: Some(Vec::new()),
        topology_description_required: version >= 1,
        endpoint_information_epoch: 3,
        partitions_by_user_endpoint: Some(vec![EndpointToPartitions {
            user_endpoint: Endpoint {
                host: "app-1".into(),
                port: 8080,
            },
            active_partitions: vec![TopicPartitions {
                topic: "in".into(),
                partitions: vec![0, 2],
            }],
            standby_partitions: Vec::new(),
        }]),
    }
}

pub(crate) fn heartbeat_response_error() -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        error_code: 25, // UNKNOWN_MEMBER_ID
        error_message: Some("unknown member".into()),
        member_id: "m-7c1e".into(),
        ..StreamsGroupHeartbeatResponse::default()
    }
}

pub(crate) fn heartbeat_request_join() -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: "app".into(),
        member_id: "m-7c1e".into(),
        member_epoch: 0,
        rebalance_timeout_ms: 300_000,
        topology: Some(Topology {
            epoch: 1,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["in".into()],
                source_topic_regex: Vec::new(),
                state_changelog_topics: vec![TopicInfo {
                    name: "app-store-changelog".into(),
                    partitions: 0,
                    replication_factor: 0,
                    topic_configs: vec![KeyValue {
                        key: "cleanup.policy".into(),
                        value: "compact".into(),
                    }],
                }],
                repartition_sink_topics: Vec::new(),
                repartition_source_topics: Vec::new(),
                copartition_groups: vec![CopartitionGroup {
                    source_topics: vec![0],
                    source_topic_regex: Vec::new(),
                    repartition_source_topics: Vec::new(),
                }],
            }],
        }),
        active_tasks: Some(Vec::new()),
        standby_tasks: Some(Vec::new()),
        warmup_tasks: Some(Vec::new()),
        process_id: Some("p-1".into()),
        user_endpoint: Some(Endpoint {
            host: "app-1".into(),
            port: 8080,
        }),
        client_tags: Some(vec![KeyValue {
            key: "rack".into(),
            value: "r1".into(),
        }]),
        task_offsets: Some(vec![TaskOffset {
            subtopology_id: "0".into(),
            partition: 0,
            offset: 42,
        }]),
        task_end_offsets: Some(Vec::new()),
        ..StreamsGroupHeartbeatRequest::default()
    }
}

pub(crate) fn heartbeat_request_steady() -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: "app".into(),
        member_id: "m-7c1e".into(),
        member_epoch: 12,
        endpoint_information_epoch: 3,
        ..StreamsGroupHeartbeatRequest::default()
    }
}

fn describe_node(name: &str, node_type: i8) -> TopologyDescriptionNode {
    TopologyDescriptionNode {
        name: name.into(),
        node_type,
        source_topics: if node_type == 1 {
            vec!["in".into()]
        } else {
            Vec::new()
        },
        sink_topic: (node_type == 3).then(|| "out".into()),
        stores: Vec::new(),
        successors: Vec::new(),
    }
}

pub(crate) fn describe_response(version: i16) -> StreamsGroupDescribeResponse {
    let member = Member {
        member_id: "m-7c1e".into(),
        member_epoch: 12,
        instance_id: None,
        rack_id: Some("r1".into()),
        client_id: "app-client".into(),
        client_host: "/127.0.0.1".into(),
        topology_epoch: 1,
        process_id: "p-1".into(),
        user_endpoint: Some(Endpoint {
            host: "app-1".into(),
            port: 8080,
        }),
        client_tags: Vec::new(),
        task_offsets: Vec::new(),
        task_end_offsets: Vec::new(),
        assignment: Assignment {
            active_tasks: tasks(&[("0", &[0, 1])]),
            standby_tasks: Vec::new(),
            warmup_tasks: Vec::new(),
        },
        target_assignment: Assignment::default(),
        is_classic: false,
    };
    let group = DescribedGroup {
        group_id: "app".into(),
        group_state: "Stable".into(),
        group_epoch: 4,
        assignment_epoch: 4,
        topology: Some(DescribeTopology {
            epoch: 1,
            subtopologies: Some(vec![DescribeSubtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["in".into()],
                repartition_sink_topics: Vec::new(),
                state_changelog_topics: Vec::new(),
                repartition_source_topics: Vec::new(),
            }]),
        }),
        members: vec![member],
        topology_description: (version >= 1).then(|| TopologyDescription {
            subtopologies: vec![TopologyDescriptionSubtopology {
                subtopology_id: "0".into(),
                nodes: vec![
                    describe_node("KSTREAM-SOURCE-0000000000", 1),
                    describe_node("KSTREAM-SINK-0000000001", 3),
                ],
            }],
            global_stores: vec![TopologyDescriptionGlobalStore {
                source: describe_node("KSTREAM-SOURCE-0000000002", 1),
                processor: describe_node("KTABLE-SOURCE-0000000003", 2),
            }],
        }),
        topology_description_status: if version >= 1 { 3 } else { 0 },
        assignor_name: (version >= 1).then(|| "sticky".into()),
        ..DescribedGroup::default()
    };
    let missing = DescribedGroup {
        error_code: 69, // GROUP_ID_NOT_FOUND
        error_message: Some("no such group".into()),
        group_id: "other".into(),
        ..DescribedGroup::default()
    };
    StreamsGroupDescribeResponse {
        throttle_time_ms: 0,
        groups: vec![group, missing],
    }
}

pub(crate) fn api_versions_response() -> ApiVersionsResponse {
    ApiVersionsResponse {
        error_code: 0,
        api_keys: [(3, 0, 13), (10, 0, 6), (18, 0, 4), (88, 0, 1)]
            .iter()
            .map(|&(api_key, min_version, max_version)| ApiVersion {
                api_key,
                min_version,
                max_version,
            })
            .collect(),
        throttle_time_ms: 0,
        supported_features: vec![SupportedFeatureKey {
            name: "streams.version".into(),
            min_version: 0,
            max_version: 1,
        }],
        finalized_features_epoch: 7,
        finalized_features: vec![FinalizedFeatureKey {
            name: "streams.version".into(),
            max_version_level: 1,
            min_version_level: 1,
        }],
        zk_migration_ready: false,
    }
}

pub(crate) fn api_versions_response_basic() -> ApiVersionsResponse {
    ApiVersionsResponse {
        error_code: 35, // UNSUPPORTED_VERSION: what a broker answers to a too-new request
        api_keys: vec![ApiVersion {
            api_key: 18,
            min_version: 0,
            max_version: 4,
        }],
        ..ApiVersionsResponse::default()
    }
}

pub(crate) fn metadata_response() -> MetadataResponse {
    MetadataResponse {
        throttle_time_ms: 0,
        brokers: vec![MetadataResponseBroker {
            node_id: 1,
            host: "localhost".into(),
            port: 9092,
            rack: Some("r1".into()),
        }],
        cluster_id: Some("q1Sh-9_ISia_zwGINzRvyQ".into()),
        controller_id: 1,
        topics: vec![MetadataResponseTopic {
            error_code: 0,
            name: Some("in".into()),
            topic_id: Uuid([7; 16]),
            is_internal: false,
            partitions: vec![MetadataResponsePartition {
                error_code: 0,
                partition_index: 0,
                leader_id: 1,
                leader_epoch: 3,
                replica_nodes: [1].into(),
                isr_nodes: [1].into(),
                offline_replicas: Default::default(),
            }],
            topic_authorized_operations: i32::MIN,
        }],
        cluster_authorized_operations: i32::MIN,
        error_code: 0,
    }
}

pub(crate) fn metadata_response_basic() -> MetadataResponse {
    MetadataResponse {
        brokers: vec![MetadataResponseBroker {
            node_id: 1,
            host: "localhost".into(),
            port: 9092,
            rack: None,
        }],
        topics: vec![MetadataResponseTopic {
            name: Some("in".into()),
            ..MetadataResponseTopic::default()
        }],
        ..MetadataResponse::default()
    }
}

pub(crate) fn find_coordinator_response() -> FindCoordinatorResponse {
    FindCoordinatorResponse {
        coordinators: vec![
            Coordinator {
                key: "app".into(),
                node_id: 1,
                host: "localhost".into(),
                port: 9092,
                error_code: 0,
                error_message: None,
            },
            Coordinator {
                key: "other".into(),
                node_id: -1,
                host: String::new(),
                port: -1,
                error_code: 15, // COORDINATOR_NOT_AVAILABLE
                error_message: Some("not available".into()),
            },
        ],
        ..FindCoordinatorResponse::default()
    }
}

pub(crate) fn find_coordinator_response_basic() -> FindCoordinatorResponse {
    FindCoordinatorResponse {
        node_id: 1,
        host: "localhost".into(),
        port: 9092,
        ..FindCoordinatorResponse::default()
    }
}

pub(crate) fn create_topics_response() -> CreateTopicsResponse {
    CreateTopicsResponse {
        throttle_time_ms: 0,
        topics: vec![
            CreatableTopicResult {
                name: "app-store-changelog".into(),
                topic_id: Uuid([9; 16]),
                num_partitions: 3,
                replication_factor: 1,
                configs: Some(vec![CreatableTopicConfigs {
                    name: "cleanup.policy".into(),
                    value: Some("compact".into()),
                    read_only: false,
                    config_source: 5,
                    is_sensitive: false,
                }]),
                ..CreatableTopicResult::default()
            },
            CreatableTopicResult {
                name: "exists".into(),
                error_code: 36, // TOPIC_ALREADY_EXISTS
                error_message: Some("Topic 'exists' already exists.".into()),
                ..CreatableTopicResult::default()
            },
        ],
    }
}

pub(crate) fn create_topics_response_basic() -> CreateTopicsResponse {
    CreateTopicsResponse {
        throttle_time_ms: 0,
        topics: vec![CreatableTopicResult {
            name: "exists".into(),
            error_code: 36,
            ..CreatableTopicResult::default()
        }],
    }
}

/// A fetched partition with records, an aborted transaction and (v12+) a new leader.
pub(crate) fn fetch_response(rich: bool) -> FetchResponse {
    let mut p = PartitionData {
        partition_index: 0,
        high_watermark: 10,
        last_stable_offset: 10,
        log_start_offset: 0,
        aborted_transactions: Some(vec![AbortedTransaction {
            producer_id: 7,
            first_offset: 3,
        }]),
        records: Some(vec![0; 70]),
        ..PartitionData::default()
    };
    let mut r = FetchResponse::default();
    if rich {
        p.current_leader = LeaderIdAndEpoch {
            leader_id: 2,
            leader_epoch: 5,
        };
        p.error_code = 6; // NOT_LEADER_OR_FOLLOWER
        p.preferred_read_replica = 1;
        r.node_endpoints = vec![NodeEndpoint {
            node_id: 2,
            host: "localhost".into(),
            port: 9092,
            rack: Some("r1".into()),
        }];
    }
    r.responses = vec![FetchableTopicResponse {
        topic: if rich { String::new() } else { "in".into() },
        topic_id: if rich { Uuid([3; 16]) } else { Uuid::ZERO },
        partitions: vec![p],
    }];
    r
}

pub(crate) fn produce_response(rich: bool) -> ProduceResponse {
    let mut p = PartitionProduceResponse {
        index: 1,
        base_offset: 42,
        ..PartitionProduceResponse::default()
    };
    let mut r = ProduceResponse::default();
    if rich {
        p.record_errors = vec![BatchIndexAndErrorMessage {
            batch_index: 0,
            batch_index_error_message: Some("bad".into()),
        }];
        p.error_message = Some("dropped".into());
        p.current_leader = LeaderIdAndEpoch {
            leader_id: 1,
            leader_epoch: 2,
        };
        r.node_endpoints = vec![NodeEndpoint {
            node_id: 1,
            host: "h".into(),
            port: 1,
            rack: None,
        }];
    }
    r.responses = vec![TopicProduceResponse {
        name: if rich { String::new() } else { "out".into() },
        topic_id: if rich { Uuid([4; 16]) } else { Uuid::ZERO },
        partition_responses: vec![p],
    }];
    r
}

pub(crate) fn offset_commit_response() -> OffsetCommitResponse {
    OffsetCommitResponse {
        throttle_time_ms: 0,
        topics: vec![OffsetCommitResponseTopic {
            name: "in".into(),
            topic_id: Uuid([3; 16]),
            partitions: vec![
                OffsetCommitResponsePartition {
                    partition_index: 0,
                    error_code: 0,
                },
                OffsetCommitResponsePartition {
                    partition_index: 1,
                    error_code: 113, // STALE_MEMBER_EPOCH
                },
            ],
        }],
    }
}

fn offset_fetch_topics() -> Vec<OffsetFetchResponseTopic> {
    vec![OffsetFetchResponseTopic {
        name: "in".into(),
        topic_id: Uuid([3; 16]),
        partitions: vec![
            OffsetFetchResponsePartition {
                partition_index: 0,
                committed_offset: 42,
                committed_leader_epoch: 0,
                metadata: Some("AgAAAYvP5WgA".into()),
                error_code: 0,
            },
            OffsetFetchResponsePartition {
                partition_index: 1,
                committed_offset: -1,
                committed_leader_epoch: -1,
                metadata: Some(String::new()),
                error_code: 0,
            },
        ],
    }]
}

pub(crate) fn offset_fetch_response(version: i16) -> OffsetFetchResponse {
    if version <= 7 {
        OffsetFetchResponse {
            topics: offset_fetch_topics(),
            ..OffsetFetchResponse::default()
        }
    } else {
        OffsetFetchResponse {
            groups: vec![OffsetFetchResponseGroup {
                group_id: "app".into(),
                topics: offset_fetch_topics(),
                error_code: 0,
            }],
            ..OffsetFetchResponse::default()
        }
    }
}
