use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::decode_message;
use proptest::prelude::*;

#[test]
fn request_golden() {
    let r = EndTxnRequest {
        transactional_id: "t".into(),
        producer_id: 7,
        producer_epoch: 3,
        committed: true,
    };
    #[rustfmt::skip]
    golden(&r, 0, &[0, 1, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 3, 1]);
    #[rustfmt::skip]
    golden(&r, 5, &[2, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 3, 1, 0]);
}

#[test]
fn response_golden() {
    let r = EndTxnResponse {
        error_code: 0,
        producer_id: 7,
        producer_epoch: 4,
        ..Default::default()
    };
    // v5 (transaction version 2): the producer id and the bumped epoch.
    #[rustfmt::skip]
    golden(&r, 5, &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 4, 0]);
    // v4 has no such fields: ignorable, dropped, decoded as -1.
    let v4 = EndTxnResponse {
        error_code: 47,
        ..Default::default()
    };
    golden(&v4, 4, &[0, 0, 0, 0, 0, 47, 0]);
    assert_eq!(v4.error().name(), "INVALID_PRODUCER_EPOCH");
    let back: EndTxnResponse = decode_message(&[0, 0, 0, 0, 0, 0, 0], 4).unwrap();
    assert_eq!((back.producer_id, back.producer_epoch), (-1, -1));
}

proptest! {
    #![proptest_config(prop_config(256))]

    #[test]
    fn prop_request(m in any::<EndTxnRequest>()) {
        for v in 0..=5 {
            prop_assert_eq!(lossy_or_rejected(&m, Some(m.clone()), v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<EndTxnResponse>()) {
        for v in 0..=5 {
            let mut e = m.clone();
            if v < 5 {
                e.producer_id = -1;
                e.producer_epoch = -1;
            }
            prop_assert_eq!(lossy_or_rejected(&m, Some(e), v), Ok(()));
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..40)) {
        for v in 0..=5 {
            let _ = decode_message::<EndTxnResponse>(&b, v);
            let _ = decode_message::<EndTxnRequest>(&b, v);
        }
    }
}
