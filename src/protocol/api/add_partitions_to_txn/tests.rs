use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::decode_message;
use proptest::prelude::*;

#[test]
fn golden_bytes() {
    let r = AddPartitionsToTxnRequest {
        transactional_id: "t".into(),
        producer_id: 7,
        producer_epoch: 3,
        topics: vec![AddPartitionsToTxnTopic {
            name: "a".into(),
            partitions: vec![0, 2],
        }],
    };
    #[rustfmt::skip]
    golden(&r, 2, &[
        0, 1, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 3,
        0, 0, 0, 1, 0, 1, b'a', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2,
    ]);
    #[rustfmt::skip]
    golden(&r, 3, &[
        2, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 3,
        2, 2, b'a', 3, 0, 0, 0, 0, 0, 0, 0, 2, 0,
        0,
    ]);
    let resp = AddPartitionsToTxnResponse {
        throttle_time_ms: 0,
        results: vec![AddPartitionsToTxnTopicResult {
            name: "a".into(),
            results_by_partition: vec![AddPartitionsToTxnPartitionResult {
                partition_index: 2,
                partition_error_code: 48,
            }],
        }],
    };
    #[rustfmt::skip]
    golden(&resp, 3, &[0, 0, 0, 0, 2, 2, b'a', 2, 0, 0, 0, 2, 0, 48, 0, 0, 0]);
    let errors: Vec<_> = resp.errors().collect();
    assert_eq!(
        errors,
        vec![("a", 2, BrokerErrorKind::InvalidTxnState)],
        "48 = INVALID_TXN_STATE"
    );
    // v4+ is the broker-to-broker batched form: not spoken.
    assert_eq!(AddPartitionsToTxnRequest::MAX_VERSION, 3);
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_round_trip(
        m in any::<AddPartitionsToTxnRequest>(),
        r in any::<AddPartitionsToTxnResponse>(),
    ) {
        for v in 0..=3 {
            prop_assert_eq!(lossy_or_rejected(&m, Some(m.clone()), v), Ok(()));
            prop_assert_eq!(lossy_or_rejected(&r, Some(r.clone()), v), Ok(()));
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..60)) {
        for v in 0..=3 {
            let _ = decode_message::<AddPartitionsToTxnResponse>(&b, v);
            let _ = decode_message::<AddPartitionsToTxnRequest>(&b, v);
        }
    }
}
