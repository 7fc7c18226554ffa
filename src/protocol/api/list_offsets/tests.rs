use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::{decode_message, encode_message, DecodeError, EncodeError};
use proptest::prelude::*;

fn req_expected(m: &ListOffsetsRequest, v: i16) -> Option<ListOffsetsRequest> {
    if v < 2 && m.isolation_level != 0 {
        return None;
    }
    let mut e = m.clone();
    if v < 10 {
        e.timeout_ms = 0;
    }
    if v < 4 {
        e.topics
            .iter_mut()
            .flat_map(|t| &mut t.partitions)
            .for_each(|p| p.current_leader_epoch = -1);
    }
    Some(e)
}

fn resp_expected(m: &ListOffsetsResponse, v: i16) -> Option<ListOffsetsResponse> {
    let partitions = || m.topics.iter().flat_map(|t| &t.partitions);
    if v < 4 && partitions().any(|p| p.leader_epoch != -1) {
        return None;
    }
    let mut e = m.clone();
    if v < 2 {
        e.throttle_time_ms = 0;
    }
    Some(e)
}

fn earliest(topic: &str) -> ListOffsetsRequest {
    ListOffsetsRequest {
        topics: vec![ListOffsetsTopic {
            name: topic.into(),
            partitions: vec![ListOffsetsPartition {
                partition_index: 1,
                timestamp: EARLIEST_TIMESTAMP,
                ..Default::default()
            }],
        }],
        ..Default::default()
    }
}

#[test]
fn request_golden() {
    let r = earliest("t");
    #[rustfmt::skip]
    golden(&r, 1, &[
        0xff, 0xff, 0xff, 0xff,                         // ReplicaId -1
        0, 0, 0, 1, 0, 1, b't',                         // Topics: 1, Name
        0, 0, 0, 1, 0, 0, 0, 1,                         // Partitions: 1, index 1
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, // Timestamp -2
    ]);
    let c = ListOffsetsRequest {
        isolation_level: 1,
        timeout_ms: 500,
        ..r.clone()
    };
    #[rustfmt::skip]
    golden(&c, 10, &[
        0xff, 0xff, 0xff, 0xff, 1,                      // ReplicaId, IsolationLevel
        2, 2, b't',                                     // Topics (compact), Name
        2, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff,          // Partition 1, CurrentLeaderEpoch -1
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0, // Timestamp -2, tags
        0,                                              // topic tags
        0, 0, 0x01, 0xf4,                               // TimeoutMs
        0,
    ]);
    let mut buf = Vec::new();
    assert_eq!(
        encode_message(&mut buf, &c, 1),
        Err(EncodeError::FieldNotInVersion {
            api: "ListOffsetsRequest",
            version: 1,
            field: "IsolationLevel"
        })
    );
}

#[test]
fn response_golden() {
    let r = ListOffsetsResponse {
        throttle_time_ms: 0,
        topics: vec![ListOffsetsTopicResponse {
            name: "t".into(),
            partitions: vec![ListOffsetsPartitionResponse {
                partition_index: 0,
                error_code: 0,
                timestamp: -1,
                offset: 42,
                leader_epoch: 3,
            }],
        }],
    };
    #[rustfmt::skip]
    golden(&r, 6, &[
        0, 0, 0, 0,                                     // ThrottleTimeMs
        2, 2, b't', 2,                                  // Topics, Name, Partitions
        0, 0, 0, 0, 0, 0,                               // PartitionIndex, ErrorCode
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // Timestamp -1
        0, 0, 0, 0, 0, 0, 0, 42,                        // Offset
        0, 0, 0, 3, 0,                                  // LeaderEpoch, tags
        0, 0,
    ]);
    assert_eq!(r.partition("t", 0).map(|p| p.offset), Some(42));
    assert!(r.partition("t", 1).is_none());
    assert!(r.partition("u", 0).is_none());
    let e = decode_message::<ListOffsetsResponse>(&[0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff], 2)
        .unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::InvalidLength {
                field: "Topics",
                ..
            }
        ),
        "{e}"
    );
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_request(m in any::<ListOffsetsRequest>()) {
        for v in 1..=11 {
            prop_assert_eq!(lossy_or_rejected(&m, req_expected(&m, v), v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<ListOffsetsResponse>()) {
        for v in 1..=11 {
            prop_assert_eq!(lossy_or_rejected(&m, resp_expected(&m, v), v), Ok(()));
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..80)) {
        for v in 1..=11 {
            let _ = decode_message::<ListOffsetsResponse>(&b, v);
            let _ = decode_message::<ListOffsetsRequest>(&b, v);
        }
    }
}
