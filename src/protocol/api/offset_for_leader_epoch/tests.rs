use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::{decode_message, DecodeError};
use crate::protocol::BrokerErrorKind;
use proptest::prelude::*;

fn req_expected(m: &OffsetForLeaderEpochRequest, v: i16) -> Option<OffsetForLeaderEpochRequest> {
    let mut e = m.clone();
    if v < 3 {
        e.replica_id = -2;
    }
    Some(e)
}

fn consumer_request() -> OffsetForLeaderEpochRequest {
    OffsetForLeaderEpochRequest {
        replica_id: CONSUMER_REPLICA_ID,
        topics: vec![OffsetForLeaderTopic {
            topic: "t".into(),
            partitions: vec![OffsetForLeaderPartition {
                partition: 1,
                current_leader_epoch: 5,
                leader_epoch: 4,
            }],
        }],
    }
}

#[test]
fn request_golden() {
    let r = OffsetForLeaderEpochRequest {
        replica_id: -2,
        ..consumer_request()
    };
    #[rustfmt::skip]
    golden(&r, 2, &[
        0, 0, 0, 1, 0, 1, b't',             // Topics: 1, Topic
        0, 0, 0, 1, 0, 0, 0, 1,             // Partitions: 1, Partition 1
        0, 0, 0, 5, 0, 0, 0, 4,             // CurrentLeaderEpoch, LeaderEpoch
    ]);
    #[rustfmt::skip]
    golden(&consumer_request(), 4, &[
        0xff, 0xff, 0xff, 0xff,             // ReplicaId -1
        2, 2, b't', 2, 0, 0, 0, 1,
        0, 0, 0, 5, 0, 0, 0, 4, 0,          // partition + tags
        0, 0,                               // topic tags, tags
    ]);
}

#[test]
fn response_golden() {
    let r = OffsetForLeaderEpochResponse {
        throttle_time_ms: 0,
        topics: vec![OffsetForLeaderTopicResult {
            topic: "t".into(),
            partitions: vec![EpochEndOffset {
                error_code: 0,
                partition: 1,
                leader_epoch: 4,
                end_offset: 100,
            }],
        }],
    };
    #[rustfmt::skip]
    golden(&r, 3, &[
        0, 0, 0, 0, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1,
        0, 0, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 100,
    ]);
    assert_eq!(r.topics[0].partitions[0].error(), BrokerErrorKind::None);
    let e = decode_message::<OffsetForLeaderEpochResponse>(&[0, 0, 0, 0, 0x7f, 0, 0, 0], 2)
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
    fn prop_request(m in any::<OffsetForLeaderEpochRequest>()) {
        for v in 2..=4 {
            prop_assert_eq!(lossy_or_rejected(&m, req_expected(&m, v), v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<OffsetForLeaderEpochResponse>()) {
        for v in 2..=4 {
            prop_assert_eq!(lossy_or_rejected(&m, Some(m.clone()), v), Ok(()));
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..60)) {
        for v in 2..=4 {
            let _ = decode_message::<OffsetForLeaderEpochResponse>(&b, v);
            let _ = decode_message::<OffsetForLeaderEpochRequest>(&b, v);
        }
    }
}
