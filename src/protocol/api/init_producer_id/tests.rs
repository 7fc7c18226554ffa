use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::{decode_message, encode_message, DecodeError, EncodeError};
use proptest::prelude::*;

fn req_expected(m: &InitProducerIdRequest, v: i16) -> Option<InitProducerIdRequest> {
    if v < 3 && (m.producer_id != -1 || m.producer_epoch != -1) {
        return None;
    }
    if v < 6 && (m.enable_2pc || m.keep_prepared_txn) {
        return None;
    }
    Some(m.clone())
}

fn resp_expected(m: &InitProducerIdResponse, v: i16) -> Option<InitProducerIdResponse> {
    if v < 6 && (m.ongoing_txn_producer_id != -1 || m.ongoing_txn_producer_epoch != -1) {
        return None;
    }
    Some(m.clone())
}

#[test]
fn request_golden() {
    let idempotent = InitProducerIdRequest {
        transaction_timeout_ms: 60_000,
        ..Default::default()
    };
    // v0: null TransactionalId (int16 -1), TransactionTimeoutMs.
    golden(&idempotent, 0, &[0xff, 0xff, 0, 0, 0xea, 0x60]);
    // v2 (flexible): compact null, timeout, tags.
    golden(&idempotent, 2, &[0, 0, 0, 0xea, 0x60, 0]);
    // v3+: ProducerId -1, ProducerEpoch -1.
    #[rustfmt::skip]
    golden(&idempotent, 5, &[
        0, 0, 0, 0xea, 0x60,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0,
    ]);
    let bump = InitProducerIdRequest {
        transactional_id: Some("t".into()),
        producer_id: 7,
        producer_epoch: 3,
        enable_2pc: true,
        ..idempotent
    };
    #[rustfmt::skip]
    golden(&bump, 6, &[
        2, b't', 0, 0, 0xea, 0x60,
        0, 0, 0, 0, 0, 0, 0, 7, 0, 3,
        1, 0,
        0,
    ]);
    let mut buf = Vec::new();
    assert_eq!(
        encode_message(&mut buf, &bump, 2),
        Err(EncodeError::FieldNotInVersion {
            api: "InitProducerIdRequest",
            version: 2,
            field: "ProducerId"
        })
    );
    assert!(buf.is_empty());
}

#[test]
fn response_golden() {
    let r = InitProducerIdResponse {
        producer_id: 1000,
        producer_epoch: 0,
        ..Default::default()
    };
    #[rustfmt::skip]
    golden(&r, 1, &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0]);
    #[rustfmt::skip]
    golden(&r, 6, &[
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0,
    ]);
    let e = decode_message::<InitProducerIdResponse>(&[0, 0, 0, 0, 0], 0).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::Truncated {
                field: "ErrorCode",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        InitProducerIdResponse {
            error_code: 15,
            ..r
        }
        .error()
        .name(),
        "COORDINATOR_NOT_AVAILABLE"
    );
}

proptest! {
    #![proptest_config(prop_config(256))]

    #[test]
    fn prop_request(m in any::<InitProducerIdRequest>()) {
        for v in 0..=6 {
            prop_assert_eq!(lossy_or_rejected(&m, req_expected(&m, v), v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<InitProducerIdResponse>()) {
        for v in 0..=6 {
            prop_assert_eq!(lossy_or_rejected(&m, resp_expected(&m, v), v), Ok(()));
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..40)) {
        for v in 0..=6 {
            let _ = decode_message::<InitProducerIdResponse>(&b, v);
            let _ = decode_message::<InitProducerIdRequest>(&b, v);
        }
    }
}
