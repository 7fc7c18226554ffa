use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::decode_message;
use proptest::prelude::*;

#[test]
fn golden_bytes() {
    let r = AddOffsetsToTxnRequest {
        transactional_id: "t".into(),
        producer_id: 7,
        producer_epoch: 3,
        group_id: "g".into(),
    };
    #[rustfmt::skip]
    golden(&r, 0, &[0, 1, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 3, 0, 1, b'g']);
    #[rustfmt::skip]
    golden(&r, 3, &[2, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 3, 2, b'g', 0]);
    let resp = AddOffsetsToTxnResponse {
        throttle_time_ms: 1,
        error_code: 51,
    };
    golden(&resp, 2, &[0, 0, 0, 1, 0, 51]);
    golden(&resp, 4, &[0, 0, 0, 1, 0, 51, 0]);
    assert_eq!(resp.error().name(), "CONCURRENT_TRANSACTIONS");
}

proptest! {
    #![proptest_config(prop_config(256))]

    #[test]
    fn prop_round_trip(m in any::<AddOffsetsToTxnRequest>(), r in any::<AddOffsetsToTxnResponse>()) {
        for v in 0..=4 {
            prop_assert_eq!(lossy_or_rejected(&m, Some(m.clone()), v), Ok(()));
            prop_assert_eq!(lossy_or_rejected(&r, Some(r.clone()), v), Ok(()));
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..40)) {
        for v in 0..=4 {
            let _ = decode_message::<AddOffsetsToTxnResponse>(&b, v);
            let _ = decode_message::<AddOffsetsToTxnRequest>(&b, v);
        }
    }
}
