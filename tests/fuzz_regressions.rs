//! Replays every committed fuzz input — the seeds under `fuzz/seeds/<target>/` and the crash
//! reproducers under `fuzz/regressions/<target>/` — through the same checks the fuzz targets run
//! (`fuzz/src/harness.rs`, compiled into this test), so a fixed crash stays fixed without
//! needing cargo-fuzz.
//!
//! It also (re)generates the seeds, on request only:
//!
//! ```text
//! KSG_WRITE_FUZZ_SEEDS=1 cargo test --test fuzz_regressions -- --ignored write_fuzz_seeds
//! ```
//!
//! Seeds are valid messages built with the library's own encoders, prefixed as the targets
//! expect (see `harness::message_input`), so fuzzing starts from inputs that reach deep into
//! each decoder.

#[path = "../fuzz/src/harness.rs"]
mod harness;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use kafka_streams_group::protocol::api::api_versions::{
    decode_api_versions_response_frame, ApiVersion, ApiVersionsRequest, ApiVersionsResponse,
    FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_streams_group::protocol::api::create_topics::{
    CreatableTopicConfigs, CreatableTopicResult, CreateTopicsResponse,
};
use kafka_streams_group::protocol::api::delete_records::{
    DeleteRecordsPartitionResult, DeleteRecordsResponse, DeleteRecordsTopicResult,
};
use kafka_streams_group::protocol::api::fetch::{
    AbortedTransaction, FetchResponse, FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint,
    PartitionData,
};
use kafka_streams_group::protocol::api::find_coordinator::{Coordinator, FindCoordinatorResponse};
use kafka_streams_group::protocol::api::init_producer_id::InitProducerIdResponse;
use kafka_streams_group::protocol::api::list_offsets::{
    ListOffsetsPartitionResponse, ListOffsetsResponse, ListOffsetsTopicResponse,
};
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
use kafka_streams_group::protocol::api::offset_for_leader_epoch::{
    EpochEndOffset, OffsetForLeaderEpochResponse, OffsetForLeaderTopicResult,
};
use kafka_streams_group::protocol::api::produce::{
    BatchIndexAndErrorMessage, PartitionProduceData, PartitionProduceResponse, ProduceRequest,
    ProduceResponse, TopicProduceData, TopicProduceResponse,
};
use kafka_streams_group::protocol::api::sasl_authenticate::SaslAuthenticateResponse;
use kafka_streams_group::protocol::api::sasl_handshake::SaslHandshakeResponse;
use kafka_streams_group::protocol::api::streams_group_describe::{
    Assignment, DescribedGroup, DescribedSubtopology as DescribeSubtopology,
    DescribedTopology as DescribeTopology, Member, StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse, TopologyDescription, TopologyDescriptionGlobalStore,
    TopologyDescriptionNode, TopologyDescriptionSubtopology,
};
use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    CopartitionGroup, Endpoint, EndpointToPartitions, KeyValue, Status,
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, Subtopology, TaskIds, TaskOffset,
    TopicInfo, TopicPartition, Topology,
};
use kafka_streams_group::protocol::codec::encode_message;
use kafka_streams_group::protocol::frame::{encode_request_frame, encode_response_frame};
use kafka_streams_group::protocol::{ApiMessage, Uuid};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The input files of `fuzz/<kind>/<target>/` (dot-files such as `.gitkeep` excluded).
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_target_has_a_binary_and_seeds() {
    for (name, _) in harness::TARGETS {
        let bin = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        assert!(bin.is_file(), "no fuzz binary {}", bin.display());
        assert!(
            !inputs("seeds", name).is_empty(),
            "no seeds for {name}: run the write_fuzz_seeds test (see the module docs)"
        );
    }
}

#[test]
fn replay_seeds_and_regressions() {
    let mut failures = Vec::new();
    let mut replayed = 0;
    for (name, check) in harness::TARGETS {
        for kind in ["seeds", "regressions"] {
            for file in inputs(kind, name) {
                let data = std::fs::read(&file).expect("readable input file");
                replayed += 1;
                if catch_unwind(AssertUnwindSafe(|| check(&data))).is_err() {
                    failures.push(file.display().to_string());
                }
            }
        }
    }
    assert!(
        replayed > 0,
        "no fuzz inputs found under {}",
        fuzz_dir().display()
    );
    assert!(failures.is_empty(), "fuzz inputs that fail: {failures:#?}");
}

/// Known, unfixed findings (see `fuzz/known-bugs/README.md`): fails while any still fails.
/// Fixed findings move to `fuzz/regressions/`, which every run replays.
#[test]
fn known_bugs_are_fixed() {
    let mut still_failing = Vec::new();
    for (name, check) in harness::TARGETS {
        for file in inputs("known-bugs", name) {
            let data = std::fs::read(&file).expect("readable input file");
            if catch_unwind(AssertUnwindSafe(|| check(&data))).is_err() {
                still_failing.push(file.display().to_string());
            }
        }
    }
    assert!(
        still_failing.is_empty(),
        "still failing: {still_failing:#?}"
    );
}

#[test]
fn an_unknown_target_name_is_not_registered() {
    // The fuzz binaries look their check up by name; a typo must not silently fuzz nothing.
    assert!(harness::target("no_such_target").is_none());
    assert!(harness::target("frame_decoder").is_some());
}

// ---------------------------------------------------------------------------------------------
// Seed generation.

fn tasks(ids: &[(&str, &[i32])]) -> Vec<TaskIds> {
    ids.iter()
        .map(|(s, p)| TaskIds {
            subtopology_id: (*s).to_owned(),
            partitions: p.to_vec(),
        })
        .collect()
}

fn heartbeat_response_full(version: i16) -> StreamsGroupHeartbeatResponse {
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
            active_partitions: vec![TopicPartition {
                topic: "in".into(),
                partitions: vec![0, 2],
            }],
            standby_partitions: Vec::new(),
        }]),
    }
}

fn heartbeat_response_error() -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        error_code: 25, // UNKNOWN_MEMBER_ID
        error_message: Some("unknown member".into()),
        member_id: "m-7c1e".into(),
        ..StreamsGroupHeartbeatResponse::default()
    }
}

fn heartbeat_request_join() -> StreamsGroupHeartbeatRequest {
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

fn heartbeat_request_steady() -> StreamsGroupHeartbeatRequest {
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

fn describe_response(version: i16) -> StreamsGroupDescribeResponse {
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

fn api_versions_response() -> ApiVersionsResponse {
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

fn api_versions_response_basic() -> ApiVersionsResponse {
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

fn metadata_response() -> MetadataResponse {
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

fn metadata_response_basic() -> MetadataResponse {
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

fn find_coordinator_response() -> FindCoordinatorResponse {
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

fn find_coordinator_response_basic() -> FindCoordinatorResponse {
    FindCoordinatorResponse {
        node_id: 1,
        host: "localhost".into(),
        port: 9092,
        ..FindCoordinatorResponse::default()
    }
}

fn create_topics_response() -> CreateTopicsResponse {
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

fn create_topics_response_basic() -> CreateTopicsResponse {
    CreateTopicsResponse {
        throttle_time_ms: 0,
        topics: vec![CreatableTopicResult {
            name: "exists".into(),
            error_code: 36,
            ..CreatableTopicResult::default()
        }],
    }
}

/// One seed per implemented version: `rich` where that version can carry it, else `basic`.
fn every_version<M: ApiMessage>(
    out: &mut Vec<(&'static str, String, Vec<u8>)>,
    target: &'static str,
    label: &str,
    rich: &M,
    basic: &M,
) {
    for v in M::MIN_VERSION..=M::MAX_VERSION {
        let mut probe = Vec::new();
        let (name, msg) = if encode_message(&mut probe, rich, v).is_ok() {
            (label.to_owned(), rich)
        } else {
            (format!("{label}-basic"), basic)
        };
        out.push((
            target,
            format!("{name}-v{v}"),
            harness::message_input(msg, v),
        ));
    }
}

/// A fetched partition with records, an aborted transaction and (v12+) a new leader.
fn fetch_response(rich: bool) -> FetchResponse {
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

fn produce_response(rich: bool) -> ProduceResponse {
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

/// A frame-target input: `[max/4, splits.len(), splits..., stream...]`.
/// Record batches: one per codec (with headers, null key/value, an idempotent producer), a
/// transactional batch followed by an abort marker, and a blob cut inside its second batch.
fn record_batch_seeds(out: &mut Vec<(&'static str, String, Vec<u8>)>) {
    use kafka_streams_group::protocol::records::{
        BatchBuilder, Compression, ControlRecord, ControlRecordType, Header, RecordSpec,
    };
    let headers = [
        Header {
            key: b"trace",
            value: Some(b"0af7651916cd43dd"),
        },
        Header {
            key: b"",
            value: None,
        },
    ];
    let value = b"{\"user\":42,\"name\":\"kafka streams kafka streams\"}";
    for codec in Compression::ALL {
        let mut b = BatchBuilder::new(codec).producer(7, 1, 100).base_offset(10);
        b.push(
            &RecordSpec::new(Some(b"k1"), Some(value), 1_700_000_000_000).with_headers(&headers),
        )
        .expect("record");
        b.push(&RecordSpec::new(None, None, 1_700_000_000_005))
            .expect("record");
        b.push(&RecordSpec::new(Some(b""), Some(value), -1))
            .expect("record");
        let mut wire = Vec::new();
        b.finish(&mut wire).expect("batch");
        out.push(("record_batches", format!("three-records-{codec}"), wire));
    }
    let mut wire = Vec::new();
    let mut b = BatchBuilder::new(Compression::None)
        .producer(1, 0, 0)
        .transactional(true);
    b.push(&RecordSpec::new(Some(b"k"), Some(b"v"), 5))
        .expect("record");
    b.finish(&mut wire).expect("batch");
    let key = ControlRecord::key_bytes(ControlRecordType::Abort);
    let val = ControlRecord::marker_value_bytes(3);
    let mut m = BatchBuilder::new(Compression::None)
        .producer(1, 0, -1)
        .transactional(true)
        .control(true)
        .base_offset(1);
    m.push(&RecordSpec::new(Some(&key), Some(&val), 6))
        .expect("marker");
    m.finish(&mut wire).expect("marker batch");
    out.push((
        "record_batches",
        "transaction-then-abort".into(),
        wire.clone(),
    ));
    wire.truncate(wire.len() - 5);
    out.push(("record_batches", "partial-second-batch".into(), wire));
}

fn frame_input(max_div4: u8, splits: &[u8], stream: &[u8]) -> Vec<u8> {
    let mut v = vec![max_div4, splits.len() as u8];
    v.extend_from_slice(splits);
    v.extend_from_slice(stream);
    v
}

fn offset_commit_response() -> OffsetCommitResponse {
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

fn offset_fetch_response(version: i16) -> OffsetFetchResponse {
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

/// Every seed: (target, file name, bytes).
fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    use harness::message_input;
    let mut out = Vec::new();
    for v in 2..=10 {
        out.push((
            "offset_commit_response",
            format!("two-partitions-v{v}"),
            message_input(&offset_commit_response(), v),
        ));
    }
    for v in 1..=10 {
        out.push((
            "offset_fetch_response",
            format!("two-partitions-v{v}"),
            message_input(&offset_fetch_response(v), v),
        ));
    }
    every_version(
        &mut out,
        "api_versions_response",
        "full",
        &api_versions_response(),
        &api_versions_response_basic(),
    );
    // ApiVersions frames: header v0 + body at the requested version; and a v0 UNSUPPORTED_VERSION
    // answer to a v4 request (the fallback path).
    for v in [0, 3, 4] {
        let mut frame = Vec::new();
        encode_response_frame::<ApiVersionsRequest>(&mut frame, 5, &api_versions_response(), v)
            .expect("ApiVersions frame encodes");
        let mut input = vec![v as u8];
        input.extend_from_slice(&frame[4..]);
        out.push(("api_versions_response_frame", format!("full-v{v}"), input));
    }
    let mut frame = Vec::new();
    encode_response_frame::<ApiVersionsRequest>(&mut frame, 6, &api_versions_response_basic(), 0)
        .expect("ApiVersions frame encodes");
    let mut input = vec![4];
    input.extend_from_slice(&frame[4..]);
    out.push((
        "api_versions_response_frame",
        "v0-fallback-for-v4".into(),
        input,
    ));
    every_version(
        &mut out,
        "fetch_response",
        "leader-moved",
        &fetch_response(true),
        &fetch_response(false),
    );
    every_version(
        &mut out,
        "produce_response",
        "leader-moved",
        &produce_response(true),
        &produce_response(false),
    );
    let produce = ProduceRequest {
        transactional_id: None,
        acks: -1,
        timeout_ms: 30_000,
        topic_data: vec![TopicProduceData {
            name: "out".into(),
            topic_id: Uuid::ZERO,
            partition_data: vec![PartitionProduceData {
                index: 0,
                records: Some(vec![0; 70]),
            }],
        }],
    };
    every_version(&mut out, "produce_request", "one-batch", &produce, &produce);
    let offsets = ListOffsetsResponse {
        throttle_time_ms: 0,
        topics: vec![ListOffsetsTopicResponse {
            name: "in".into(),
            partitions: vec![ListOffsetsPartitionResponse {
                partition_index: 0,
                error_code: 0,
                timestamp: -1,
                offset: 42,
                leader_epoch: 3,
            }],
        }],
    };
    let mut offsets_basic = offsets.clone();
    offsets_basic.topics[0].partitions[0].leader_epoch = -1;
    every_version(
        &mut out,
        "list_offsets_response",
        "one-partition",
        &offsets,
        &offsets_basic,
    );
    let pid = InitProducerIdResponse {
        producer_id: 1000,
        producer_epoch: 1,
        ..InitProducerIdResponse::default()
    };
    every_version(
        &mut out,
        "init_producer_id_response",
        "idempotent",
        &pid,
        &pid,
    );
    let epochs = OffsetForLeaderEpochResponse {
        throttle_time_ms: 0,
        topics: vec![OffsetForLeaderTopicResult {
            topic: "in".into(),
            partitions: vec![EpochEndOffset {
                error_code: 0,
                partition: 0,
                leader_epoch: 4,
                end_offset: 100,
            }],
        }],
    };
    every_version(
        &mut out,
        "offset_for_leader_epoch_response",
        "one-partition",
        &epochs,
        &epochs,
    );
    let purged = DeleteRecordsResponse {
        throttle_time_ms: 0,
        topics: vec![DeleteRecordsTopicResult {
            name: "app-counts-repartition".into(),
            partitions: vec![
                DeleteRecordsPartitionResult {
                    partition_index: 0,
                    low_watermark: 42,
                    error_code: 0,
                },
                DeleteRecordsPartitionResult {
                    partition_index: 1,
                    low_watermark: -1,
                    error_code: 1,
                },
            ],
        }],
    };
    every_version(
        &mut out,
        "delete_records_response",
        "two-partitions",
        &purged,
        &purged,
    );
    every_version(
        &mut out,
        "metadata_response",
        "one-topic",
        &metadata_response(),
        &metadata_response_basic(),
    );
    every_version(
        &mut out,
        "find_coordinator_response",
        "two-keys",
        &find_coordinator_response(),
        &find_coordinator_response_basic(),
    );
    let handshake = SaslHandshakeResponse {
        error_code: 0,
        mechanisms: vec![
            "PLAIN".into(),
            "SCRAM-SHA-256".into(),
            "SCRAM-SHA-512".into(),
        ],
    };
    every_version(
        &mut out,
        "sasl_handshake_response",
        "three",
        &handshake,
        &handshake,
    );
    let authenticate = SaslAuthenticateResponse {
        error_code: 0,
        error_message: None,
        auth_bytes: b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
            .to_vec(),
        session_lifetime_ms: 3_600_000,
    };
    let auth_failed = SaslAuthenticateResponse {
        error_code: 58, // SASL_AUTHENTICATION_FAILED
        error_message: Some("Authentication failed: Invalid username or password".into()),
        ..SaslAuthenticateResponse::default()
    };
    every_version(
        &mut out,
        "sasl_authenticate_response",
        "scram",
        &authenticate,
        &auth_failed,
    );
    every_version(
        &mut out,
        "sasl_authenticate_response",
        "failed",
        &auth_failed,
        &auth_failed,
    );
    every_version(
        &mut out,
        "create_topics_response",
        "created-and-exists",
        &create_topics_response(),
        &create_topics_response_basic(),
    );
    for v in 0..=1 {
        out.push((
            "streams_group_heartbeat_response",
            format!("full-v{v}"),
            message_input(&heartbeat_response_full(v), v),
        ));
        out.push((
            "streams_group_heartbeat_response",
            format!("error-v{v}"),
            message_input(&heartbeat_response_error(), v),
        ));
        out.push((
            "streams_group_describe_response",
            format!("two-groups-v{v}"),
            message_input(&describe_response(v), v),
        ));
        out.push((
            "streams_group_heartbeat_request",
            format!("join-v{v}"),
            message_input(&heartbeat_request_join(), v),
        ));
        out.push((
            "streams_group_heartbeat_request",
            format!("steady-v{v}"),
            message_input(&heartbeat_request_steady(), v),
        ));
        out.push((
            "streams_group_describe_request",
            format!("two-ids-v{v}"),
            message_input(
                &StreamsGroupDescribeRequest {
                    group_ids: vec!["app".into(), "other".into()],
                    include_authorized_operations: true,
                    include_topology_description: v >= 1,
                },
                v,
            ),
        ));
        // A request frame payload (no length prefix), as a mock broker receives it.
        let mut frame = Vec::new();
        encode_request_frame(
            &mut frame,
            7,
            Some("app-client"),
            &heartbeat_request_join(),
            v,
        )
        .expect("request frame encodes");
        out.push((
            "streams_group_heartbeat_request_frame",
            format!("join-v{v}"),
            frame[4..].to_vec(),
        ));
    }

    // Frame streams: two complete heartbeat response frames and the start of a third, cut in
    // a few places; one stream whose second prefix exceeds the maximum.
    let mut stream = Vec::new();
    encode_response_frame::<StreamsGroupHeartbeatRequest>(
        &mut stream,
        1,
        &heartbeat_response_full(1),
        1,
    )
    .expect("response frame encodes");
    encode_response_frame::<StreamsGroupHeartbeatRequest>(
        &mut stream,
        2,
        &heartbeat_response_error(),
        0,
    )
    .expect("response frame encodes");
    let complete = stream.len();
    stream.extend_from_slice(&[0, 0, 0, 9, 0, 0]);
    out.push((
        "frame_decoder",
        "two-and-a-half".into(),
        frame_input(255, &[3, 1, 40], &stream),
    ));
    out.push((
        "frame_decoder",
        "one-byte-pushes".into(),
        frame_input(255, &[1, 1, 1, 1, 1, 1, 1], &stream[..complete]),
    ));
    let mut oversized = stream[..complete].to_vec();
    oversized.extend_from_slice(&[0, 0, 4, 0]); // 1024 > 4 × 255
    out.push((
        "frame_decoder",
        "oversized-second".into(),
        frame_input(255, &[5], &oversized),
    ));
    record_batch_seeds(&mut out);
    out
}

/// Writes `fuzz/seeds/<target>/<name>` for every seed; see the module docs.
#[test]
#[ignore = "writes files; run explicitly with KSG_WRITE_FUZZ_SEEDS=1"]
fn write_fuzz_seeds() {
    if std::env::var_os("KSG_WRITE_FUZZ_SEEDS").is_none() {
        eprintln!("KSG_WRITE_FUZZ_SEEDS is not set; nothing written");
        return;
    }
    for (target, name, bytes) in seeds() {
        let dir = fuzz_dir().join("seeds").join(target);
        std::fs::create_dir_all(&dir).expect("create seed dir");
        std::fs::write(dir.join(name), bytes).expect("write seed");
    }
}

#[test]
fn seeds_pass_the_checks_they_seed() {
    // Built fresh (not read from disk), so a stale committed seed cannot mask a broken builder.
    for (target, name, bytes) in seeds() {
        let check = harness::target(target).expect("seed target is registered");
        check(&bytes);
        // The seed must actually decode, or it would only exercise the error paths.
        if target != "frame_decoder" {
            assert!(
                decodes(target, &bytes),
                "seed {target}/{name} does not decode"
            );
        }
    }
}

/// Whether a message seed decodes at all (the checks pass silently on undecodable input).
fn decodes(target: &str, data: &[u8]) -> bool {
    use kafka_streams_group::protocol::codec::decode_message;
    use kafka_streams_group::protocol::frame::decode_request_frame;
    fn body<M: kafka_streams_group::protocol::ApiMessage>(data: &[u8]) -> bool {
        let (sel, rest) = data.split_first().expect("non-empty seed");
        decode_message::<M>(rest, harness::pick_version::<M>(*sel)).is_ok()
    }
    match target {
        "api_versions_response" => body::<ApiVersionsResponse>(data),
        "metadata_response" => body::<MetadataResponse>(data),
        "find_coordinator_response" => body::<FindCoordinatorResponse>(data),
        "sasl_handshake_response" => body::<SaslHandshakeResponse>(data),
        "sasl_authenticate_response" => body::<SaslAuthenticateResponse>(data),
        "create_topics_response" => body::<CreateTopicsResponse>(data),
        "streams_group_heartbeat_response" => body::<StreamsGroupHeartbeatResponse>(data),
        "streams_group_describe_response" => body::<StreamsGroupDescribeResponse>(data),
        "streams_group_heartbeat_request" => body::<StreamsGroupHeartbeatRequest>(data),
        "streams_group_describe_request" => body::<StreamsGroupDescribeRequest>(data),
        "offset_commit_response" => body::<OffsetCommitResponse>(data),
        "offset_fetch_response" => body::<OffsetFetchResponse>(data),
        "fetch_response" => body::<FetchResponse>(data),
        "list_offsets_response" => body::<ListOffsetsResponse>(data),
        "produce_response" => body::<ProduceResponse>(data),
        "produce_request" => body::<ProduceRequest>(data),
        "init_producer_id_response" => body::<InitProducerIdResponse>(data),
        "offset_for_leader_epoch_response" => body::<OffsetForLeaderEpochResponse>(data),
        "delete_records_response" => body::<DeleteRecordsResponse>(data),
        "api_versions_response_frame" => {
            let (sel, rest) = data.split_first().expect("non-empty seed");
            let v = harness::pick_version::<ApiVersionsResponse>(*sel);
            decode_api_versions_response_frame(rest, v).is_ok()
        }
        "streams_group_heartbeat_request_frame" => {
            decode_request_frame::<StreamsGroupHeartbeatRequest>(data).is_ok()
        }
        "record_batches" => {
            use kafka_streams_group::protocol::records::{BatchReader, DecodeLimits};
            let mut n = 0;
            for raw in BatchReader::new(data) {
                match raw.and_then(|b| b.decode(&DecodeLimits::default())) {
                    Ok(_) => n += 1,
                    Err(_) => return false,
                }
            }
            n > 0
        }
        other => panic!("no decodes() case for {other}"),
    }
}
