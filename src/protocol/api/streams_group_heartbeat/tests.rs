//! Golden bytes (derived by hand from the schema), version differences, hostile input and
//! property round-trips for StreamsGroupHeartbeat.

use super::*;
use crate::protocol::codec::{decode_message, encode_message};
use crate::protocol::codec::{ApiMessage, EncodeError};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

fn encode<M: ApiMessage>(m: &M, v: i16) -> Vec<u8> {
    let mut buf = Vec::new();
    encode_message(&mut buf, m, v).expect("encodes");
    buf
}

/// Hex with spaces/newlines allowed, for readable golden vectors.
fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn join_request() -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: "m".into(),
        member_epoch: 0,
        endpoint_information_epoch: -1,
        instance_id: None,
        rack_id: Some("r".into()),
        rebalance_timeout_ms: 300_000,
        topology: Some(Topology {
            epoch: 1,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["in".into()],
                source_topic_regex: vec![],
                state_changelog_topics: vec![TopicInfo {
                    name: "c".into(),
                    partitions: 0,
                    replication_factor: 3,
                    topic_configs: vec![KeyValue {
                        key: "k".into(),
                        value: "v".into(),
                    }],
                }],
                repartition_sink_topics: vec![],
                repartition_source_topics: vec![],
                copartition_groups: vec![CopartitionGroup {
                    source_topics: vec![0, 1],
                    source_topic_regex: vec![],
                    repartition_source_topics: vec![-1],
                }],
            }],
        }),
        active_tasks: Some(vec![]),
        standby_tasks: None,
        warmup_tasks: Some(vec![TaskIds {
            subtopology_id: "0".into(),
            partitions: vec![2],
        }]),
        process_id: Some("p".into()),
        user_endpoint: Some(Endpoint {
            host: "h".into(),
            port: 0xfffe,
        }),
        client_tags: Some(vec![KeyValue {
            key: "z".into(),
            value: "a".into(),
        }]),
        task_offsets: Some(vec![TaskOffset {
            subtopology_id: "0".into(),
            partition: 1,
            offset: 258,
        }]),
        task_end_offsets: None,
        shutdown_application: true,
    }
}

/// The request is identical on the wire in v0 and v1.
const JOIN_REQUEST_HEX: &str = "
    02 67                 GroupId 'g'
    02 6d                 MemberId 'm'
    00000000              MemberEpoch 0
    ffffffff              EndpointInformationEpoch -1
    00                    InstanceId null
    02 72                 RackId 'r'
    000493e0              RebalanceTimeoutMs 300000
    01                    Topology present
      00000001            Epoch 1
      02                  Subtopologies: 1
        02 30             SubtopologyId '0'
        02 03 69 6e       SourceTopics ['in']
        01                SourceTopicRegex []
        02                StateChangelogTopics: 1
          02 63 00000000 0003   Name 'c', Partitions 0, ReplicationFactor 3
          02 02 6b 02 76 00     TopicConfigs [k=v], KeyValue tags
          00              TopicInfo tags
        01                RepartitionSinkTopics []
        01                RepartitionSourceTopics []
        02                CopartitionGroups: 1
          03 0000 0001    SourceTopics [0,1]
          01              SourceTopicRegex []
          02 ffff         RepartitionSourceTopics [-1]
          00              CopartitionGroup tags
        00                Subtopology tags
      00                  Topology tags
    01                    ActiveTasks []
    00                    StandbyTasks null
    02 02 30 02 00000002 00   WarmupTasks [{'0', [2]}]
    02 70                 ProcessId 'p'
    01 02 68 fffe 00      UserEndpoint present {'h', 65534}
    02 02 7a 02 61 00     ClientTags [z=a]
    02 02 30 00000001 0000000000000102 00   TaskOffsets [{'0', 1, 258}]
    00                    TaskEndOffsets null
    01                    ShutdownApplication true
    00                    tags";

fn strip_comments(s: &str) -> String {
    // Keep only leading hex tokens of each line (comments start at the first non-hex word).
    s.lines()
        .flat_map(|l| {
            l.split_whitespace()
                .take_while(|w| w.chars().all(|c| c.is_ascii_hexdigit()) && w.len() % 2 == 0)
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>()
        .join("")
}

#[test]
fn request_golden_v0_v1() {
    let want = hex(&strip_comments(JOIN_REQUEST_HEX));
    for v in 0..=1 {
        assert_eq!(encode(&join_request(), v), want, "v{v}");
        assert_eq!(
            decode_message::<StreamsGroupHeartbeatRequest>(&want, v).unwrap(),
            join_request()
        );
    }
}

#[test]
fn default_request_golden() {
    let r = StreamsGroupHeartbeatRequest::default();
    let want = hex("01 01 00000000 00000000 00 00 ffffffff ff 00 00 00 00 ff 00 00 00 00 00");
    assert_eq!(encode(&r, 0), want);
}

fn response() -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        throttle_time_ms: 1,
        error_code: 0,
        error_message: None,
        member_id: "m".into(),
        member_epoch: 3,
        heartbeat_interval_ms: 5000,
        acceptable_recovery_lag_legacy: 0,
        task_offset_interval_ms: 9,
        acceptable_recovery_lag: -1,
        status: Some(vec![Status {
            status_code: 1,
            status_detail: "x".into(),
        }]),
        active_tasks: Some(vec![TaskIds {
            subtopology_id: "0".into(),
            partitions: vec![1, 2],
        }]),
        standby_tasks: None,
        warmup_tasks: Some(vec![]),
        topology_description_required: false,
        endpoint_information_epoch: 4,
        partitions_by_user_endpoint: Some(vec![EndpointToPartitions {
            user_endpoint: Endpoint {
                host: "h".into(),
                port: 65535,
            },
            active_partitions: vec![TopicPartitions {
                topic: "t".into(),
                partitions: vec![0],
            }],
            standby_partitions: vec![],
        }]),
    }
}

const RESPONSE_HEAD: &str = "00000001 0000 00 02 6d 00000003 00001388";
const RESPONSE_TAIL: &str = "
    02 01 02 78 00                  Status [{1, 'x'}]
    02 02 30 03 00000001 00000002 00   ActiveTasks [{'0', [1,2]}]
    00                              StandbyTasks null
    01                              WarmupTasks []";
const RESPONSE_IQ: &str = "
    00000004                        EndpointInformationEpoch 4
    02 02 68 ffff 00                PartitionsByUserEndpoint: 1, Endpoint {'h', 65535}
       02 02 74 02 00000000 00      ActivePartitions [{'t', [0]}]
       01 00                        StandbyPartitions [], entry tags
    00                              tags";

#[test]
fn response_golden_v0() {
    let mut r = response();
    r.acceptable_recovery_lag_legacy = 7;
    let want = hex(&strip_comments(&format!(
        "{RESPONSE_HEAD}\n00000007 legacy lag\n00000009 offset interval\n{RESPONSE_TAIL}\n{RESPONSE_IQ}"
    )));
    assert_eq!(encode(&r, 0), want);
    assert_eq!(
        decode_message::<StreamsGroupHeartbeatResponse>(&want, 0).unwrap(),
        r
    );
    assert_eq!(r.recovery_lag(0), Some(7));
}

#[test]
fn response_golden_v1() {
    let mut r = response();
    r.acceptable_recovery_lag = 0x1_0000_0000;
    r.topology_description_required = true;
    let want = hex(&strip_comments(&format!(
        "{RESPONSE_HEAD}\n00000009 offset interval\n0000000100000000 lag\n{RESPONSE_TAIL}\n01 topo desc required\n{RESPONSE_IQ}"
    )));
    assert_eq!(encode(&r, 1), want);
    assert_eq!(
        decode_message::<StreamsGroupHeartbeatResponse>(&want, 1).unwrap(),
        r
    );
    assert_eq!(r.recovery_lag(1), Some(0x1_0000_0000));
}

#[test]
fn v0_and_v1_layouts_differ() {
    // The same bytes mean different things: a v1 body is not a valid v0 body and vice versa.
    let r = response();
    let v0 = encode(&r, 0);
    let v1 = encode(&r, 1);
    assert_eq!(v1.len(), v0.len() - 4 + 8 + 1);
    assert!(decode_message::<StreamsGroupHeartbeatResponse>(&v0, 1).is_err());
    assert!(decode_message::<StreamsGroupHeartbeatResponse>(&v1, 0).is_err());
    // v1 fields read back as their defaults at v0 and vice versa.
    let d0 = decode_message::<StreamsGroupHeartbeatResponse>(&v0, 0).unwrap();
    assert_eq!(d0.acceptable_recovery_lag, -1);
    assert!(!d0.topology_description_required);
    assert_eq!(d0.recovery_lag(1), None);
}

#[test]
fn version_specific_fields_are_checked_on_encode() {
    let mut r = response();
    r.topology_description_required = true;
    let mut buf = vec![9];
    let err = encode_message(&mut buf, &r, 0).unwrap_err();
    assert!(matches!(
        err,
        EncodeError::FieldNotInVersion {
            field: "TopologyDescriptionRequired",
            ..
        }
    ));
    assert_eq!(buf, [9], "nothing written on failure");

    let mut r = response();
    r.acceptable_recovery_lag_legacy = 1;
    let err = encode_message(&mut Vec::new(), &r, 1).unwrap_err();
    assert!(matches!(
        err,
        EncodeError::FieldNotInVersion {
            field: "AcceptableRecoveryLagLegacy",
            ..
        }
    ));

    // Ignorable AcceptableRecoveryLag is silently dropped at v0.
    let mut r = response();
    r.acceptable_recovery_lag = 42;
    let d = decode_message::<StreamsGroupHeartbeatResponse>(&encode(&r, 0), 0).unwrap();
    assert_eq!(d.acceptable_recovery_lag, -1);
}

#[test]
fn unsupported_versions_rejected() {
    assert!(encode_message(&mut Vec::new(), &response(), 2).is_err());
    assert!(
        decode_message::<StreamsGroupHeartbeatRequest>(&encode(&join_request(), 0), -1).is_err()
    );
}

#[test]
fn status_codes() {
    let names = [
        "STALE_TOPOLOGY",
        "MISSING_SOURCE_TOPICS",
        "INCORRECTLY_PARTITIONED_TOPICS",
        "MISSING_INTERNAL_TOPICS",
        "SHUTDOWN_APPLICATION",
        "ASSIGNMENT_DELAYED",
        "MISSING_CLIENT_TAGS",
    ];
    for (i, name) in names.iter().enumerate() {
        let c = StatusCode::from_code(i as i8);
        assert_eq!(c.name(), *name);
        assert_eq!(c.code(), i as i8);
        assert!(!matches!(c, StatusCode::Unknown(_)));
    }
    assert_eq!(StatusCode::from_code(5), StatusCode::AssignmentDelayed);
    assert_eq!(StatusCode::from_code(7), StatusCode::Unknown(7));
    assert_eq!(StatusCode::from_code(-3).code(), -3);
    assert_eq!(i8::from(StatusCode::from(100)), 100);
    let s = Status {
        status_code: 6,
        status_detail: String::new(),
    };
    assert_eq!(s.code(), StatusCode::MissingClientTags);
}

#[test]
fn error_accessor() {
    let mut r = response();
    r.error_code = 22;
    assert_eq!(r.error().code(), 22);
    r.error_code = 0;
    assert!(r.error().is_none());
}

#[test]
fn unknown_tagged_fields_are_skipped() {
    // Replace the final empty tag section of a TaskIds and of the message with one unknown tag.
    let r = StreamsGroupHeartbeatResponse {
        active_tasks: Some(vec![TaskIds {
            subtopology_id: "a".into(),
            partitions: vec![],
        }]),
        ..Default::default()
    };
    let mut bytes = encode(&r, 1);
    assert_eq!(bytes.pop(), Some(0));
    bytes.extend_from_slice(&[1, 5, 2, 0xab, 0xcd]); // 1 field, tag 5, 2 bytes
    assert_eq!(
        decode_message::<StreamsGroupHeartbeatResponse>(&bytes, 1).unwrap(),
        r
    );
}

#[test]
fn nullable_struct_marker_any_negative_is_null() {
    let mut bytes = encode(&StreamsGroupHeartbeatRequest::default(), 0);
    // Topology marker sits after 2+4+4+1+1+4 bytes of fixed fields.
    assert_eq!(bytes[16], 0xff);
    bytes[16] = 0x80;
    assert_eq!(
        decode_message::<StreamsGroupHeartbeatRequest>(&bytes, 0).unwrap(),
        StreamsGroupHeartbeatRequest::default()
    );
}

#[test]
fn every_truncation_fails_cleanly() {
    let req = encode(&join_request(), 1);
    for n in 0..req.len() {
        assert!(
            decode_message::<StreamsGroupHeartbeatRequest>(&req[..n], 1).is_err(),
            "{n}"
        );
    }
    for v in 0..=1 {
        let resp = encode(&response(), v);
        for n in 0..resp.len() {
            assert!(
                decode_message::<StreamsGroupHeartbeatResponse>(&resp[..n], v).is_err(),
                "{n}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Property round-trips.

fn s() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9._\u{e9}\u{1f600}-]{0,8}"
}
fn os() -> impl Strategy<Value = Option<String>> {
    option::of(s())
}
fn key_value() -> impl Strategy<Value = KeyValue> {
    (s(), s()).prop_map(|(key, value)| KeyValue { key, value })
}
fn topic_info() -> impl Strategy<Value = TopicInfo> {
    (s(), any::<i32>(), any::<i16>(), vec(key_value(), 0..3)).prop_map(
        |(name, partitions, replication_factor, topic_configs)| TopicInfo {
            name,
            partitions,
            replication_factor,
            topic_configs,
        },
    )
}
fn task_ids() -> impl Strategy<Value = TaskIds> {
    (s(), vec(any::<i32>(), 0..4)).prop_map(|(subtopology_id, partitions)| TaskIds {
        subtopology_id,
        partitions,
    })
}
fn task_offset() -> impl Strategy<Value = TaskOffset> {
    (s(), any::<i32>(), any::<i64>()).prop_map(|(subtopology_id, partition, offset)| TaskOffset {
        subtopology_id,
        partition,
        offset,
    })
}
fn endpoint() -> impl Strategy<Value = Endpoint> {
    (s(), any::<u16>()).prop_map(|(host, port)| Endpoint { host, port })
}
fn subtopology() -> impl Strategy<Value = Subtopology> {
    (
        s(),
        vec(s(), 0..3),
        vec(s(), 0..2),
        vec(topic_info(), 0..2),
        vec(s(), 0..2),
        vec(topic_info(), 0..2),
        vec(
            (
                vec(any::<i16>(), 0..3),
                vec(any::<i16>(), 0..2),
                vec(any::<i16>(), 0..2),
            )
                .prop_map(|(a, b, c)| CopartitionGroup {
                    source_topics: a,
                    source_topic_regex: b,
                    repartition_source_topics: c,
                }),
            0..2,
        ),
    )
        .prop_map(|(id, st, rx, ch, sink, rsrc, cg)| Subtopology {
            subtopology_id: id,
            source_topics: st,
            source_topic_regex: rx,
            state_changelog_topics: ch,
            repartition_sink_topics: sink,
            repartition_source_topics: rsrc,
            copartition_groups: cg,
        })
}

prop_compose! {
    fn request()(
        ids in (s(), s(), any::<i32>(), any::<i32>(), os(), os(), any::<i32>()),
        topology in option::of((any::<i32>(), vec(subtopology(), 0..3))
            .prop_map(|(epoch, subtopologies)| Topology { epoch, subtopologies })),
        tasks in (option::of(vec(task_ids(), 0..3)), option::of(vec(task_ids(), 0..3)),
                  option::of(vec(task_ids(), 0..3))),
        rest in (os(), option::of(endpoint()), option::of(vec(key_value(), 0..3)),
                 option::of(vec(task_offset(), 0..3)), option::of(vec(task_offset(), 0..3)),
                 any::<bool>()),
    ) -> StreamsGroupHeartbeatRequest {
        StreamsGroupHeartbeatRequest {
            group_id: ids.0, member_id: ids.1, member_epoch: ids.2,
            endpoint_information_epoch: ids.3, instance_id: ids.4, rack_id: ids.5,
            rebalance_timeout_ms: ids.6, topology,
            active_tasks: tasks.0, standby_tasks: tasks.1, warmup_tasks: tasks.2,
            process_id: rest.0, user_endpoint: rest.1, client_tags: rest.2,
            task_offsets: rest.3, task_end_offsets: rest.4, shutdown_application: rest.5,
        }
    }
}

fn topic_partition() -> impl Strategy<Value = TopicPartitions> {
    (s(), vec(any::<i32>(), 0..3))
        .prop_map(|(topic, partitions)| TopicPartitions { topic, partitions })
}

prop_compose! {
    fn response_for(version: i16)(
        head in (any::<i32>(), any::<i16>(), os(), s(), any::<i32>(), any::<i32>(), any::<i32>(),
                 any::<i32>(), any::<i64>()),
        status in option::of(vec((any::<i8>(), s()).prop_map(|(status_code, status_detail)|
            Status { status_code, status_detail }), 0..3)),
        tasks in (option::of(vec(task_ids(), 0..3)), option::of(vec(task_ids(), 0..3)),
                  option::of(vec(task_ids(), 0..3))),
        tdr in any::<bool>(),
        epoch in any::<i32>(),
        iq in option::of(vec((endpoint(), vec(topic_partition(), 0..3), vec(topic_partition(), 0..2))
            .prop_map(|(user_endpoint, active_partitions, standby_partitions)| EndpointToPartitions {
                user_endpoint, active_partitions, standby_partitions }), 0..3)),
    ) -> StreamsGroupHeartbeatResponse {
        StreamsGroupHeartbeatResponse {
            throttle_time_ms: head.0, error_code: head.1, error_message: head.2, member_id: head.3,
            member_epoch: head.4, heartbeat_interval_ms: head.5,
            acceptable_recovery_lag_legacy: if version == 0 { head.6 } else { 0 },
            task_offset_interval_ms: head.7,
            acceptable_recovery_lag: if version >= 1 { head.8 } else { -1 },
            status, active_tasks: tasks.0, standby_tasks: tasks.1, warmup_tasks: tasks.2,
            topology_description_required: version >= 1 && tdr,
            endpoint_information_epoch: epoch, partitions_by_user_endpoint: iq,
        }
    }
}

fn round_trip<M: ApiMessage + PartialEq + std::fmt::Debug>(
    m: &M,
    v: i16,
) -> Result<(), TestCaseError> {
    let bytes = encode(m, v);
    let back = decode_message::<M>(&bytes, v).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, m);
    prop_assert_eq!(encode(&back, v), bytes);
    Ok(())
}

proptest! {
    #[test]
    fn prop_request_round_trip(r in request(), v in 0i16..=1) {
        round_trip(&r, v)?;
    }

    #[test]
    fn prop_response_v0_round_trip(r in response_for(0)) {
        round_trip(&r, 0)?;
    }

    #[test]
    fn prop_response_v1_round_trip(r in response_for(1)) {
        round_trip(&r, 1)?;
    }

    #[test]
    fn prop_decode_never_panics(bytes in vec(any::<u8>(), 0..200), v in 0i16..=1) {
        let _ = decode_message::<StreamsGroupHeartbeatRequest>(&bytes, v);
        let _ = decode_message::<StreamsGroupHeartbeatResponse>(&bytes, v);
    }
}
