//! Golden bytes (derived by hand from the schema), version checks and property round-trips for
//! StreamsGroupDescribe.

use super::*;
use crate::protocol::codec::{decode_message, encode_message};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

fn encode<M: ApiMessage>(m: &M, v: i16) -> Vec<u8> {
    let mut buf = Vec::new();
    encode_message(&mut buf, m, v).expect("encodes");
    buf
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn request_golden() {
    let r = StreamsGroupDescribeRequest {
        group_ids: vec!["a".into(), "bc".into()],
        include_authorized_operations: true,
        include_topology_description: false,
    };
    let v0 = hex("03 02 61 03 62 63  01  00");
    assert_eq!(encode(&r, 0), v0);
    assert_eq!(
        decode_message::<StreamsGroupDescribeRequest>(&v0, 0).unwrap(),
        r
    );
    let r1 = StreamsGroupDescribeRequest {
        include_topology_description: true,
        ..r.clone()
    };
    let v1 = hex("03 02 61 03 62 63  01 01  00");
    assert_eq!(encode(&r1, 1), v1);
    assert_eq!(
        decode_message::<StreamsGroupDescribeRequest>(&v1, 1).unwrap(),
        r1
    );
    // v0 cannot carry IncludeTopologyDescription = true.
    assert!(matches!(
        encode_message(&mut Vec::new(), &r1, 0),
        Err(EncodeError::FieldNotInVersion {
            field: "IncludeTopologyDescription",
            ..
        })
    ));
}

fn plain_node(name: &str, t: i8) -> TopologyDescriptionNode {
    TopologyDescriptionNode {
        name: name.into(),
        node_type: t,
        source_topics: vec![],
        sink_topic: None,
        stores: vec![],
        successors: vec![],
    }
}

fn group(v1: bool) -> DescribedGroup {
    DescribedGroup {
        error_code: 0,
        error_message: None,
        group_id: "g".into(),
        group_state: "s".into(),
        group_epoch: 2,
        assignment_epoch: 1,
        topology: Some(DescribedTopology {
            epoch: 7,
            subtopologies: Some(vec![DescribedSubtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["t".into()],
                repartition_sink_topics: vec![],
                state_changelog_topics: vec![],
                repartition_source_topics: vec![TopicInfo {
                    name: "r".into(),
                    partitions: 4,
                    replication_factor: -1,
                    topic_configs: vec![],
                }],
            }]),
        }),
        members: vec![Member {
            member_id: "m".into(),
            member_epoch: 5,
            instance_id: None,
            rack_id: Some("k".into()),
            client_id: "c".into(),
            client_host: "h".into(),
            topology_epoch: 7,
            process_id: "p".into(),
            user_endpoint: None,
            client_tags: vec![],
            task_offsets: vec![],
            task_end_offsets: vec![TaskOffset {
                subtopology_id: "0".into(),
                partition: 0,
                offset: -1,
            }],
            assignment: Assignment {
                active_tasks: vec![TaskIds {
                    subtopology_id: "0".into(),
                    partitions: vec![3],
                }],
                standby_tasks: vec![],
                warmup_tasks: vec![],
            },
            target_assignment: Assignment::default(),
            is_classic: false,
        }],
        authorized_operations: i32::MIN,
        topology_description: v1.then(|| TopologyDescription {
            subtopologies: vec![TopologyDescriptionSubtopology {
                subtopology_id: "0".into(),
                nodes: vec![TopologyDescriptionNode {
                    source_topics: vec!["t".into()],
                    sink_topic: Some("o".into()),
                    successors: vec!["x".into()],
                    ..plain_node("n", 1)
                }],
            }],
            global_stores: vec![TopologyDescriptionGlobalStore {
                source: plain_node("a", 1),
                processor: plain_node("b", 2),
            }],
        }),
        topology_description_status: if v1 { 3 } else { 0 },
        assignor_name: v1.then(|| "sticky".into()),
    }
}

const GROUP_V0: &str = "
    0000 00 02 67 02 73 00000002 00000001
    01 00000007 02  02 30 02 02 74 01 01 02 02 72 00000004 ffff 01 00 00  00
    02  02 6d 00000005 00 02 6b 02 63 02 68 00000007 02 70 ff 01 01
        02 02 30 00000000 ffffffffffffffff 00
        02 02 30 02 00000003 00 01 01 00
        01 01 01 00
        00 00
    80000000";

#[test]
fn response_golden_v0() {
    let r = StreamsGroupDescribeResponse {
        throttle_time_ms: 3,
        groups: vec![group(false)],
    };
    let want = hex(&format!("00000003 02 {GROUP_V0} 00 00"));
    assert_eq!(encode(&r, 0), want);
    assert_eq!(
        decode_message::<StreamsGroupDescribeResponse>(&want, 0).unwrap(),
        r
    );
    // At v1 the same group gets the three v1 fields: null description, status 0, null assignor.
    let want1 = hex(&format!("00000003 02 {GROUP_V0} ff 00 00 00 00"));
    assert_eq!(encode(&r, 1), want1);
}

#[test]
fn response_golden_v1() {
    let r = StreamsGroupDescribeResponse {
        throttle_time_ms: 0,
        groups: vec![group(true)],
    };
    let want = hex(&format!(
        "00000000 02 {GROUP_V0}
         01
           02 02 30 02  02 6e 01 02 02 74 02 6f 01 02 02 78 00  00
           02  02 61 01 01 00 01 01 00  02 62 02 01 00 01 01 00  00
           00
         03 07 73 74 69 63 6b 79 00
         00"
    ));
    assert_eq!(encode(&r, 1), want);
    assert_eq!(
        decode_message::<StreamsGroupDescribeResponse>(&want, 1).unwrap(),
        r
    );
}

#[test]
fn v1_only_group_fields() {
    let r = StreamsGroupDescribeResponse {
        throttle_time_ms: 0,
        groups: vec![group(true)],
    };
    let mut buf = vec![1, 2];
    assert!(matches!(
        encode_message(&mut buf, &r, 0),
        Err(EncodeError::FieldNotInVersion {
            field: "TopologyDescription",
            ..
        })
    ));
    assert_eq!(buf, [1, 2]);
    let mut g = group(false);
    g.topology_description_status = 1;
    let r = StreamsGroupDescribeResponse {
        throttle_time_ms: 0,
        groups: vec![g],
    };
    assert!(matches!(
        encode_message(&mut Vec::new(), &r, 0),
        Err(EncodeError::FieldNotInVersion {
            field: "TopologyDescriptionStatus",
            ..
        })
    ));
    // AssignorName is ignorable: dropped at v0.
    let mut g = group(false);
    g.assignor_name = Some("x".into());
    let r = StreamsGroupDescribeResponse {
        throttle_time_ms: 0,
        groups: vec![g],
    };
    let back = decode_message::<StreamsGroupDescribeResponse>(&encode(&r, 0), 0).unwrap();
    assert_eq!(back.groups[0].assignor_name, None);
    assert_eq!(
        back.groups[0].error(),
        crate::protocol::BrokerErrorKind::None
    );
}

#[test]
fn every_truncation_fails_cleanly() {
    let r = StreamsGroupDescribeResponse {
        throttle_time_ms: 0,
        groups: vec![group(true)],
    };
    let b = encode(&r, 1);
    for n in 0..b.len() {
        assert!(
            decode_message::<StreamsGroupDescribeResponse>(&b[..n], 1).is_err(),
            "{n}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Property round-trips.

fn s() -> impl Strategy<Value = String> {
    "[a-z0-9\u{e9}-]{0,6}"
}
fn key_value() -> impl Strategy<Value = KeyValue> {
    (s(), s()).prop_map(|(key, value)| KeyValue { key, value })
}
fn topic_info() -> impl Strategy<Value = TopicInfo> {
    (s(), any::<i32>(), any::<i16>(), vec(key_value(), 0..2)).prop_map(|(name, p, rf, c)| {
        TopicInfo {
            name,
            partitions: p,
            replication_factor: rf,
            topic_configs: c,
        }
    })
}
fn task_ids() -> impl Strategy<Value = TaskIds> {
    (s(), vec(any::<i32>(), 0..3)).prop_map(|(subtopology_id, partitions)| TaskIds {
        subtopology_id,
        partitions,
    })
}
fn assignment() -> impl Strategy<Value = Assignment> {
    (
        vec(task_ids(), 0..2),
        vec(task_ids(), 0..2),
        vec(task_ids(), 0..2),
    )
        .prop_map(|(a, s, w)| Assignment {
            active_tasks: a,
            standby_tasks: s,
            warmup_tasks: w,
        })
}
fn task_offset() -> impl Strategy<Value = TaskOffset> {
    (s(), any::<i32>(), any::<i64>()).prop_map(|(id, p, o)| TaskOffset {
        subtopology_id: id,
        partition: p,
        offset: o,
    })
}
fn member() -> impl Strategy<Value = Member> {
    (
        (
            s(),
            any::<i32>(),
            option::of(s()),
            option::of(s()),
            s(),
            s(),
            any::<i32>(),
            s(),
        ),
        option::of((s(), any::<u16>()).prop_map(|(host, port)| Endpoint { host, port })),
        (
            vec(key_value(), 0..2),
            vec(task_offset(), 0..2),
            vec(task_offset(), 0..2),
        ),
        (assignment(), assignment(), any::<bool>()),
    )
        .prop_map(|(a, user_endpoint, b, c)| Member {
            member_id: a.0,
            member_epoch: a.1,
            instance_id: a.2,
            rack_id: a.3,
            client_id: a.4,
            client_host: a.5,
            topology_epoch: a.6,
            process_id: a.7,
            user_endpoint,
            client_tags: b.0,
            task_offsets: b.1,
            task_end_offsets: b.2,
            assignment: c.0,
            target_assignment: c.1,
            is_classic: c.2,
        })
}
fn node() -> impl Strategy<Value = TopologyDescriptionNode> {
    (
        s(),
        any::<i8>(),
        vec(s(), 0..2),
        option::of(s()),
        vec(s(), 0..2),
        vec(s(), 0..2),
    )
        .prop_map(
            |(name, node_type, source_topics, sink_topic, stores, successors)| {
                TopologyDescriptionNode {
                    name,
                    node_type,
                    source_topics,
                    sink_topic,
                    stores,
                    successors,
                }
            },
        )
}
fn description() -> impl Strategy<Value = TopologyDescription> {
    (
        vec(
            (s(), vec(node(), 0..3)).prop_map(|(subtopology_id, nodes)| {
                TopologyDescriptionSubtopology {
                    subtopology_id,
                    nodes,
                }
            }),
            0..2,
        ),
        vec(
            (node(), node()).prop_map(|(source, processor)| TopologyDescriptionGlobalStore {
                source,
                processor,
            }),
            0..2,
        ),
    )
        .prop_map(|(subtopologies, global_stores)| TopologyDescription {
            subtopologies,
            global_stores,
        })
}
fn subtopology() -> impl Strategy<Value = DescribedSubtopology> {
    (
        s(),
        vec(s(), 0..2),
        vec(s(), 0..2),
        vec(topic_info(), 0..2),
        vec(topic_info(), 0..2),
    )
        .prop_map(|(id, src, sink, ch, rs)| DescribedSubtopology {
            subtopology_id: id,
            source_topics: src,
            repartition_sink_topics: sink,
            state_changelog_topics: ch,
            repartition_source_topics: rs,
        })
}
fn described_group(version: i16) -> impl Strategy<Value = DescribedGroup> {
    (
        (
            any::<i16>(),
            option::of(s()),
            s(),
            s(),
            any::<i32>(),
            any::<i32>(),
        ),
        option::of(
            (any::<i32>(), option::of(vec(subtopology(), 0..2))).prop_map(
                |(epoch, subtopologies)| DescribedTopology {
                    epoch,
                    subtopologies,
                },
            ),
        ),
        vec(member(), 0..3),
        any::<i32>(),
        (option::of(description()), any::<i8>(), option::of(s())),
    )
        .prop_map(move |(a, topology, members, ops, v1)| DescribedGroup {
            error_code: a.0,
            error_message: a.1,
            group_id: a.2,
            group_state: a.3,
            group_epoch: a.4,
            assignment_epoch: a.5,
            topology,
            members,
            authorized_operations: ops,
            topology_description: if version >= 1 { v1.0 } else { None },
            topology_description_status: if version >= 1 { v1.1 } else { 0 },
            assignor_name: if version >= 1 { v1.2 } else { None },
        })
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
    fn prop_request_round_trip(ids in vec(s(), 0..4), ops in any::<bool>(), td in any::<bool>(), v in 0i16..=1) {
        let r = StreamsGroupDescribeRequest {
            group_ids: ids,
            include_authorized_operations: ops,
            include_topology_description: td && v >= 1,
        };
        round_trip(&r, v)?;
    }

    #[test]
    fn prop_response_v0_round_trip(t in any::<i32>(), groups in vec(described_group(0), 0..3)) {
        round_trip(&StreamsGroupDescribeResponse { throttle_time_ms: t, groups }, 0)?;
    }

    #[test]
    fn prop_response_v1_round_trip(t in any::<i32>(), groups in vec(described_group(1), 0..3)) {
        round_trip(&StreamsGroupDescribeResponse { throttle_time_ms: t, groups }, 1)?;
    }

    #[test]
    fn prop_decode_never_panics(bytes in vec(any::<u8>(), 0..200), v in 0i16..=1) {
        let _ = decode_message::<StreamsGroupDescribeRequest>(&bytes, v);
        let _ = decode_message::<StreamsGroupDescribeResponse>(&bytes, v);
    }
}
