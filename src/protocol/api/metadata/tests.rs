use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::{decode_message, encode_message, DecodeError, EncodeError};
use proptest::prelude::*;

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn req_expected(m: &MetadataRequest, v: i16) -> Option<MetadataRequest> {
    if v == 0 && m.topics.is_none() {
        return None;
    }
    if v < 10 && m.topics.iter().flatten().any(|t| t.name.is_none()) {
        return None;
    }
    if (v < 4 && !m.allow_auto_topic_creation)
        || (!(8..=10).contains(&v) && m.include_cluster_authorized_operations)
        || (v < 8 && m.include_topic_authorized_operations)
    {
        return None;
    }
    let mut e = m.clone();
    if v < 10 {
        e.topics
            .iter_mut()
            .flatten()
            .for_each(|t| t.topic_id = Uuid::ZERO);
    }
    Some(e)
}

fn resp_expected(m: &MetadataResponse, v: i16) -> Option<MetadataResponse> {
    if !(8..=10).contains(&v) && m.cluster_authorized_operations != AUTHORIZED_OPERATIONS_OMITTED {
        return None;
    }
    if v < 12 && m.topics.iter().any(|t| t.name.is_none()) {
        return None;
    }
    if v < 8
        && m.topics
            .iter()
            .any(|t| t.topic_authorized_operations != AUTHORIZED_OPERATIONS_OMITTED)
    {
        return None;
    }
    let mut e = m.clone();
    if v < 3 {
        e.throttle_time_ms = 0;
    }
    if v < 2 {
        e.cluster_id = None;
    }
    if v < 1 {
        e.controller_id = -1;
        e.brokers.iter_mut().for_each(|b| b.rack = None);
    }
    if v < 13 {
        e.error_code = 0;
    }
    for t in &mut e.topics {
        if v < 10 {
            t.topic_id = Uuid::ZERO;
        }
        if v < 1 {
            t.is_internal = false;
        }
        for p in &mut t.partitions {
            if v < 7 {
                p.leader_epoch = -1;
            }
            if v < 5 {
                p.offline_replicas = NodeIds::new();
            }
        }
    }
    Some(e)
}

/// Makes `m` representable at `v` without touching ignorable fields.
fn shape_req(m: &MetadataRequest, v: i16) -> MetadataRequest {
    let mut s = m.clone();
    if v == 0 && s.topics.is_none() {
        s.topics = Some(vec![]);
    }
    if v < 10 {
        s.topics.iter_mut().flatten().for_each(|t| {
            t.name.get_or_insert_with(String::new);
        });
    }
    if v < 4 {
        s.allow_auto_topic_creation = true;
    }
    if !(8..=10).contains(&v) {
        s.include_cluster_authorized_operations = false;
    }
    if v < 8 {
        s.include_topic_authorized_operations = false;
    }
    s
}

fn shape_resp(m: &MetadataResponse, v: i16) -> MetadataResponse {
    let mut s = m.clone();
    if !(8..=10).contains(&v) {
        s.cluster_authorized_operations = AUTHORIZED_OPERATIONS_OMITTED;
    }
    for t in &mut s.topics {
        if v < 12 {
            t.name.get_or_insert_with(String::new);
        }
        if v < 8 {
            t.topic_authorized_operations = AUTHORIZED_OPERATIONS_OMITTED;
        }
    }
    s
}

#[test]
fn request_golden() {
    let t = MetadataRequest::for_topics(["t"]);
    let auto = MetadataRequest {
        allow_auto_topic_creation: true,
        ..t.clone()
    };
    golden(&auto, 0, &[0, 0, 0, 1, 0, 1, b't']);
    golden(&auto, 3, &[0, 0, 0, 1, 0, 1, b't']);
    golden(
        &MetadataRequest {
            topics: None,
            ..Default::default()
        },
        1,
        &[0xff, 0xff, 0xff, 0xff],
    );
    golden(&t, 4, &[0, 0, 0, 1, 0, 1, b't', 0]);
    let ops = MetadataRequest {
        include_topic_authorized_operations: true,
        ..t.clone()
    };
    golden(&ops, 8, &[0, 0, 0, 1, 0, 1, b't', 0, 0, 1]);
    golden(&ops, 9, &[2, 2, b't', 0, 0, 0, 1, 0]);
    golden(
        &ops,
        10,
        &cat(&[&[2], &[0; 16], &[2, b't', 0], &[0, 0, 1, 0]]),
    );
    golden(&ops, 11, &cat(&[&[2], &[0; 16], &[2, b't', 0], &[0, 1, 0]]));
    let by_id = MetadataRequest {
        topics: Some(vec![MetadataRequestTopic {
            topic_id: Uuid([7; 16]),
            name: None,
        }]),
        ..t.clone()
    };
    golden(&by_id, 12, &cat(&[&[2], &[7; 16], &[0, 0], &[0, 0, 0]]));
    golden(&MetadataRequest { topics: None, ..t }, 13, &[0, 0, 0, 0]);
}

#[test]
fn request_unrepresentable() {
    let mut buf = Vec::new();
    assert_eq!(
        encode_message(
            &mut buf,
            &MetadataRequest {
                topics: None,
                ..Default::default()
            },
            0
        ),
        Err(EncodeError::NullNotAllowed {
            api: "MetadataRequest",
            version: 0,
            field: "Topics"
        })
    );
    assert!(matches!(
        encode_message(&mut buf, &MetadataRequest::for_topics(["t"]), 3),
        Err(EncodeError::FieldNotInVersion {
            field: "AllowAutoTopicCreation",
            ..
        })
    ));
    let c = MetadataRequest {
        include_cluster_authorized_operations: true,
        ..Default::default()
    };
    assert!(matches!(
        encode_message(&mut buf, &c, 11),
        Err(EncodeError::FieldNotInVersion {
            field: "IncludeClusterAuthorizedOperations",
            ..
        })
    ));
    assert!(buf.is_empty());
}

fn sample_response() -> MetadataResponse {
    MetadataResponse {
        brokers: vec![MetadataResponseBroker {
            node_id: 1,
            host: "h".into(),
            port: 9092,
            rack: None,
        }],
        controller_id: 1,
        topics: vec![MetadataResponseTopic {
            name: Some("t".into()),
            partitions: vec![MetadataResponsePartition {
                leader_id: 1,
                replica_nodes: [1].into(),
                isr_nodes: [1].into(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn response_golden() {
    let r = sample_response();
    let v0 = MetadataResponse {
        controller_id: -1,
        ..r.clone()
    };
    #[rustfmt::skip]
    golden(&v0, 0, &[
        0, 0, 0, 1, 0, 0, 0, 1, 0, 1, b'h', 0, 0, 0x23, 0x84,    // Brokers
        0, 0, 0, 1, 0, 0, 0, 1, b't',                            // Topics: 1, ErrorCode, Name
        0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,                // Partitions: 1, Err, Index, Leader
        0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,          // Replicas [1], Isr [1]
    ]);
    #[rustfmt::skip]
    golden(&r, 1, &[
        0, 0, 0, 1, 0, 0, 0, 1, 0, 1, b'h', 0, 0, 0x23, 0x84, 0xff, 0xff, // Brokers + null Rack
        0, 0, 0, 1,                                               // ControllerId
        0, 0, 0, 1, 0, 0, 0, 1, b't', 0,                          // Topics + IsInternal
        0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
        0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,
    ]);
    #[rustfmt::skip]
    golden(&r, 9, &[
        0, 0, 0, 0,                                   // ThrottleTimeMs
        2, 0, 0, 0, 1, 2, b'h', 0, 0, 0x23, 0x84, 0, 0, // Brokers (null rack, tags)
        0,                                            // ClusterId null
        0, 0, 0, 1,                                   // ControllerId
        2, 0, 0, 2, b't', 0,                          // Topics: ErrorCode, Name, IsInternal
        2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, // Partition + LeaderEpoch -1
        2, 0, 0, 0, 1, 2, 0, 0, 0, 1, 1, 0,           // Replicas, Isr, Offline [], tags
        0x80, 0, 0, 0, 0,                             // TopicAuthorizedOperations, tags
        0x80, 0, 0, 0,                                // ClusterAuthorizedOperations
        0,                                            // tags
    ]);
    let mut r13 = r.clone();
    r13.error_code = 5;
    r13.cluster_id = Some("c".into());
    r13.topics[0].name = None;
    r13.topics[0].topic_id = Uuid([1; 16]);
    r13.topics[0].partitions.clear();
    golden(
        &r13,
        13,
        &cat(&[
            &[0, 0, 0, 0],
            &[2, 0, 0, 0, 1, 2, b'h', 0, 0, 0x23, 0x84, 0, 0],
            &[2, b'c'],
            &[0, 0, 0, 1],
            &[2, 0, 0, 0],
            &[1; 16],
            &[0, 1, 0x80, 0, 0, 0, 0],
            &[0, 5, 0],
        ]),
    );
    assert_eq!(r13.error().name(), "LEADER_NOT_AVAILABLE");
    assert_eq!(r.broker(1).map(|b| b.port), Some(9092));
    assert_eq!(r.topic("t").map(|t| t.partitions.len()), Some(1));
}

#[test]
fn hostile_and_truncated() {
    // v1 response whose Brokers array claims 2^31-1 entries.
    let e =
        decode_message::<MetadataResponse>(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0], 1).unwrap_err();
    assert!(matches!(
        e,
        DecodeError::InvalidLength {
            api: "MetadataResponse",
            version: 1,
            field: "Brokers",
            ..
        }
    ));
    // v9 response whose Host claims 2^32-2 bytes.
    let e = decode_message::<MetadataResponse>(
        &[0, 0, 0, 0, 2, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f],
        9,
    )
    .unwrap_err();
    assert!(
        matches!(e, DecodeError::InvalidLength { field: "Host", .. }),
        "{e}"
    );
    let e = decode_message::<MetadataResponse>(&[], 13).unwrap_err();
    assert!(matches!(
        e,
        DecodeError::Truncated {
            field: "ThrottleTimeMs",
            ..
        }
    ));
}

/// Partition id lists of every length around the inline capacity and the one-byte compact
/// count (126 ids), at every version, in partitions both far from and at the end of the frame
/// (the decoder reads short lists through a fixed window only when enough bytes follow).
#[test]
fn node_id_lists_round_trip_at_every_length_and_version() {
    let lens = (0..=NodeIds::INLINE_CAPACITY + 3).chain([125, 126, 127, 300]);
    for len in lens {
        let ids: NodeIds = (0..len as i32).map(|i| i * 1_000_003 - 7).collect();
        let partition = |index: i32| MetadataResponsePartition {
            partition_index: index,
            leader_id: 1,
            leader_epoch: 5,
            replica_nodes: ids.clone(),
            isr_nodes: ids.iter().rev().copied().collect(),
            offline_replicas: ids.iter().take(len / 2).copied().collect(),
            ..Default::default()
        };
        let mut m = sample_response();
        m.topics[0].partitions = (0..3).map(partition).collect();
        for v in 0..=13 {
            let expected = resp_expected(&m, v).expect("representable");
            assert_eq!(round_trip(&expected, v), Ok(()), "{len} ids, v{v}");
        }
    }
}

/// The Metadata-local list reader must agree with the general `Decoder::i32_array` on any
/// input: same ids, same error, same bytes consumed.
fn node_ids_agree_with_i32_array(bytes: &[u8], flex: bool) -> Result<(), String> {
    let mut fast = Decoder::with_context(bytes, RESP, 12);
    let mut general = Decoder::with_context(bytes, RESP, 12);
    let got = node_ids(&mut fast, "ReplicaNodes", flex);
    let want = general.i32_array("ReplicaNodes", flex);
    match (&got, &want) {
        (Ok(g), Ok(w)) if g == w && fast.position() == general.position() => Ok(()),
        (Err(g), Err(w)) if g == w => Ok(()),
        _ => Err(format!("{bytes:?} flex={flex}: {got:?} != {want:?}")),
    }
}

#[test]
fn node_ids_hostile_counts() {
    // One-byte compact count of 126 ids with 4 bytes behind it.
    let e = node_ids(
        &mut Decoder::with_context(&[127, 0, 0, 0, 1], RESP, 12),
        "IsrNodes",
        true,
    )
    .unwrap_err();
    assert_eq!(
        e,
        DecodeError::InvalidLength {
            api: RESP,
            version: 12,
            field: "IsrNodes",
            length: 126,
            remaining: 4,
        }
    );
    for bytes in [
        &[][..],
        &[0],                            // compact null
        &[1],                            // empty
        &[2, 0, 0, 0],                   // one id, truncated
        &[0x80, 0x01, 0, 0, 0, 1],       // two-byte count (127 ids), truncated
        &[0xff, 0xff, 0xff, 0xff, 0x0f], // huge count
        &[0xff, 0xff, 0xff, 0xff],       // classic: null
        &[0x7f, 0xff, 0xff, 0xff],       // classic: 2^31-1 ids
    ] {
        for flex in [false, true] {
            assert_eq!(node_ids_agree_with_i32_array(bytes, flex), Ok(()));
        }
    }
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_node_ids_agree_with_i32_array(
        count in prop_oneof![0u8..12, 120u8..=130, any::<u8>()],
        body in proptest::collection::vec(any::<u8>(), 0..64),
        flex in any::<bool>(),
    ) {
        let classic = [0, 0, 0, count];
        let header: &[u8] = if flex { &classic[3..] } else { &classic };
        prop_assert_eq!(node_ids_agree_with_i32_array(&[header, &body].concat(), flex), Ok(()));
        prop_assert_eq!(node_ids_agree_with_i32_array(&body, flex), Ok(()));
    }

    #[test]
    fn prop_request(m in any::<MetadataRequest>()) {
        for v in 0..=13 {
            prop_assert_eq!(lossy_or_rejected(&m, req_expected(&m, v), v), Ok(()));
            let s = shape_req(&m, v);
            prop_assert_eq!(lossy_or_rejected(&s, req_expected(&s, v), v), Ok(()));
            prop_assert!(req_expected(&s, v).is_some());
        }
    }

    #[test]
    fn prop_response(m in any::<MetadataResponse>()) {
        for v in 0..=13 {
            prop_assert_eq!(lossy_or_rejected(&m, resp_expected(&m, v), v), Ok(()));
            let s = shape_resp(&m, v);
            prop_assert_eq!(lossy_or_rejected(&s, resp_expected(&s, v), v), Ok(()));
            prop_assert!(resp_expected(&s, v).is_some());
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..120)) {
        for v in 0..=13 {
            let _ = decode_message::<MetadataResponse>(&b, v);
            let _ = decode_message::<MetadataRequest>(&b, v);
        }
    }
}
