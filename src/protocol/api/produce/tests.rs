use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::{decode_message, encode_message, DecodeError, EncodeError};
use proptest::prelude::*;

fn req_expected(m: &ProduceRequest, v: i16) -> Option<ProduceRequest> {
    let mut e = m.clone();
    for t in &mut e.topic_data {
        if v <= 12 {
            t.topic_id = Uuid::ZERO;
        } else {
            t.name.clear();
        }
    }
    Some(e)
}

fn resp_expected(m: &ProduceResponse, v: i16) -> Option<ProduceResponse> {
    let partitions = || m.responses.iter().flat_map(|t| &t.partition_responses);
    if v < 10
        && (!m.node_endpoints.is_empty()
            || partitions().any(|p| p.current_leader != LeaderIdAndEpoch::default()))
    {
        return None;
    }
    let mut e = m.clone();
    for t in &mut e.responses {
        if v <= 12 {
            t.topic_id = Uuid::ZERO;
        } else {
            t.name.clear();
        }
        for p in &mut t.partition_responses {
            if v < 5 {
                p.log_start_offset = -1;
            }
            if v < 8 {
                p.record_errors.clear();
                p.error_message = None;
            }
        }
    }
    Some(e)
}

fn request(records: Option<Vec<u8>>) -> ProduceRequest {
    ProduceRequest {
        transactional_id: None,
        acks: ACKS_ALL,
        timeout_ms: 30_000,
        topic_data: vec![TopicProduceData {
            name: "t".into(),
            topic_id: Uuid([9; 16]),
            partition_data: vec![PartitionProduceData { index: 2, records }],
        }],
    }
}

#[test]
fn request_golden() {
    let r = request(Some(vec![0xaa, 0xbb]));
    let v3 = ProduceRequest {
        topic_data: vec![TopicProduceData {
            topic_id: Uuid::ZERO,
            ..r.topic_data[0].clone()
        }],
        ..r.clone()
    };
    #[rustfmt::skip]
    golden(&v3, 3, &[
        0xff, 0xff,                   // TransactionalId null
        0xff, 0xff, 0, 0, 0x75, 0x30, // Acks -1, TimeoutMs
        0, 0, 0, 1, 0, 1, b't',       // TopicData: 1, Name
        0, 0, 0, 1, 0, 0, 0, 2,       // PartitionData: 1, Index 2
        0, 0, 0, 2, 0xaa, 0xbb,       // Records
    ]);
    #[rustfmt::skip]
    golden(&v3, 9, &[
        0, 0xff, 0xff, 0, 0, 0x75, 0x30,
        2, 2, b't', 2, 0, 0, 0, 2, 3, 0xaa, 0xbb, 0, 0,
        0,
    ]);
    let null = request(None);
    let v13 = ProduceRequest {
        topic_data: vec![TopicProduceData {
            name: String::new(),
            ..null.topic_data[0].clone()
        }],
        ..null.clone()
    };
    let mut want = vec![0, 0xff, 0xff, 0, 0, 0x75, 0x30, 2];
    want.extend_from_slice(&[9; 16]);
    want.extend_from_slice(&[2, 0, 0, 0, 2, 0, 0, 0, 0]); // null records (compact 0)
    golden(&v13, 13, &want);
    // A name is silently dropped at v13, an id before it (both ignorable).
    let mut buf = Vec::new();
    encode_message(&mut buf, &r, 13).expect("encode");
    let back: ProduceRequest = decode_message(&buf, 13).expect("decode");
    assert_eq!(back.topic_data[0].name, "");
    assert_eq!(back.topic_data[0].topic_id, Uuid([9; 16]));
}

#[test]
fn records_length_is_bounded_by_the_frame() {
    // v3 request whose Records claims 2^31-1 bytes with 1 behind it.
    #[rustfmt::skip]
    let bytes = [
        0xff, 0xff, 0xff, 0xff, 0, 0, 0x75, 0x30,
        0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 2,
        0x7f, 0xff, 0xff, 0xff, 0xaa,
    ];
    let e = decode_message::<ProduceRequest>(&bytes, 3).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::InvalidLength {
                field: "Records",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn response_golden() {
    let r = ProduceResponse {
        responses: vec![TopicProduceResponse {
            name: "t".into(),
            topic_id: Uuid::ZERO,
            partition_responses: vec![PartitionProduceResponse {
                index: 0,
                error_code: 6, // NOT_LEADER_OR_FOLLOWER
                base_offset: -1,
                current_leader: LeaderIdAndEpoch {
                    leader_id: 2,
                    leader_epoch: 5,
                },
                ..Default::default()
            }],
        }],
        throttle_time_ms: 0,
        node_endpoints: vec![NodeEndpoint {
            node_id: 2,
            host: "h".into(),
            port: 9092,
            rack: None,
        }],
    };
    assert_eq!(
        r.responses[0].partition_responses[0].error(),
        BrokerErrorKind::NotLeaderOrFollower
    );
    #[rustfmt::skip]
    golden(&r, 10, &[
        2, 2, b't', 2,                                  // Responses, Name, PartitionResponses
        0, 0, 0, 0, 0, 6,                               // Index, ErrorCode
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // BaseOffset -1
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // LogAppendTimeMs -1
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // LogStartOffset -1
        1, 0,                                           // RecordErrors [], ErrorMessage null
        1, 0, 9, 0, 0, 0, 2, 0, 0, 0, 5, 0,             // tag 0: CurrentLeader {2, 5}
        0,                                              // topic tags
        0, 0, 0, 0,                                     // ThrottleTimeMs
        1, 0, 13, 2, 0, 0, 0, 2, 2, b'h', 0, 0, 0x23, 0x84, 0, 0, // tag 0: NodeEndpoints
    ]);
    let mut buf = Vec::new();
    assert!(matches!(
        encode_message(&mut buf, &r, 9),
        Err(EncodeError::FieldNotInVersion {
            field: "CurrentLeader",
            ..
        })
    ));
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_request(m in any::<ProduceRequest>()) {
        for v in 3..=13 {
            prop_assert_eq!(lossy_or_rejected(&m, req_expected(&m, v), v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<ProduceResponse>()) {
        for v in 3..=13 {
            prop_assert_eq!(lossy_or_rejected(&m, resp_expected(&m, v), v), Ok(()));
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..120)) {
        for v in 3..=13 {
            let _ = decode_message::<ProduceResponse>(&b, v);
            let _ = decode_message::<ProduceRequest>(&b, v);
        }
    }
}
