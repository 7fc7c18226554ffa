use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::{encode_message, EncodeError};
use proptest::prelude::*;

fn req_expected(m: &FindCoordinatorRequest, v: i16) -> Option<FindCoordinatorRequest> {
    // No ignorable fields: any non-default absent field makes the value unrepresentable.
    let ok = (v <= 3 || m.key.is_empty())
        && (v >= 1 || m.key_type == 0)
        && (v >= 4 || m.coordinator_keys.is_empty());
    ok.then(|| m.clone())
}

fn resp_expected(m: &FindCoordinatorResponse, v: i16) -> Option<FindCoordinatorResponse> {
    let ok = if v <= 3 {
        m.coordinators.is_empty()
    } else {
        m.error_code == 0 && m.node_id == 0 && m.host.is_empty() && m.port == 0
    };
    ok.then(|| {
        let mut e = m.clone();
        if v < 1 {
            e.throttle_time_ms = 0;
        }
        if !(1..=3).contains(&v) {
            e.error_message = None;
        }
        e
    })
}

#[test]
fn request_golden() {
    let single = FindCoordinatorRequest {
        key: "g".into(),
        ..Default::default()
    };
    golden(&single, 0, &[0, 1, b'g']);
    golden(&single, 1, &[0, 1, b'g', 0]);
    golden(&single, 2, &[0, 1, b'g', 0]);
    golden(&single, 3, &[2, b'g', 0, 0]);
    let batch = FindCoordinatorRequest {
        coordinator_keys: vec!["g".into(), "hi".into()],
        ..Default::default()
    };
    for v in 4..=6 {
        golden(&batch, v, &[0, 3, 2, b'g', 3, b'h', b'i', 0]);
    }
    let txn = FindCoordinatorRequest {
        key: "t".into(),
        key_type: 1,
        ..Default::default()
    };
    golden(&txn, 1, &[0, 1, b't', 1]);
}

#[test]
fn request_non_ignorable_rejected() {
    let mut buf = Vec::new();
    let txn = FindCoordinatorRequest {
        key: "t".into(),
        key_type: 1,
        ..Default::default()
    };
    assert_eq!(
        encode_message(&mut buf, &txn, 0),
        Err(EncodeError::FieldNotInVersion {
            api: "FindCoordinatorRequest",
            version: 0,
            field: "KeyType"
        })
    );
    let single = FindCoordinatorRequest {
        key: "g".into(),
        ..Default::default()
    };
    assert!(matches!(
        encode_message(&mut buf, &single, 4),
        Err(EncodeError::FieldNotInVersion { field: "Key", .. })
    ));
    let batch = FindCoordinatorRequest {
        coordinator_keys: vec!["g".into()],
        ..Default::default()
    };
    assert!(matches!(
        encode_message(&mut buf, &batch, 3),
        Err(EncodeError::FieldNotInVersion {
            field: "CoordinatorKeys",
            ..
        })
    ));
    assert!(buf.is_empty());
}

#[test]
fn response_golden() {
    let r = FindCoordinatorResponse {
        throttle_time_ms: 1,
        error_code: 15,
        error_message: Some("x".into()),
        node_id: 3,
        host: "h".into(),
        port: 9092,
        coordinators: vec![],
    };
    golden(
        &FindCoordinatorResponse {
            throttle_time_ms: 0,
            error_message: None,
            ..r.clone()
        },
        0,
        &[0, 15, 0, 0, 0, 3, 0, 1, b'h', 0, 0, 0x23, 0x84],
    );
    golden(
        &r,
        1,
        &[
            0, 0, 0, 1, 0, 15, 0, 1, b'x', 0, 0, 0, 3, 0, 1, b'h', 0, 0, 0x23, 0x84,
        ],
    );
    golden(
        &r,
        3,
        &[
            0, 0, 0, 1, 0, 15, 2, b'x', 0, 0, 0, 3, 2, b'h', 0, 0, 0x23, 0x84, 0,
        ],
    );
    let b = FindCoordinatorResponse {
        throttle_time_ms: 0,
        coordinators: vec![Coordinator {
            key: "g".into(),
            node_id: 1,
            host: "h".into(),
            port: 1,
            error_code: 0,
            error_message: None,
        }],
        ..Default::default()
    };
    for v in 4..=6 {
        golden(
            &b,
            v,
            &[
                0, 0, 0, 0, 2, 2, b'g', 0, 0, 0, 1, 2, b'h', 0, 0, 0, 1, 0, 0, 0, 0, 0,
            ],
        );
    }
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_request(m in any::<FindCoordinatorRequest>()) {
        for v in 0..=6 {
            prop_assert_eq!(lossy_or_rejected(&m, req_expected(&m, v), v), Ok(()));
            // Also a value shaped for the version, so the success path is always exercised.
            let mut shaped = m.clone();
            if v <= 3 { shaped.coordinator_keys.clear(); } else { shaped.key.clear(); }
            if v == 0 { shaped.key_type = 0; }
            prop_assert_eq!(round_trip(&shaped, v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<FindCoordinatorResponse>()) {
        for v in 0..=6 {
            prop_assert_eq!(lossy_or_rejected(&m, resp_expected(&m, v), v), Ok(()));
            let mut shaped = m.clone();
            if v <= 3 {
                shaped.coordinators.clear();
            } else {
                shaped.error_code = 0;
                shaped.node_id = 0;
                shaped.host.clear();
                shaped.port = 0;
            }
            prop_assert_eq!(lossy_or_rejected(&shaped, resp_expected(&shaped, v), v), Ok(()));
        }
    }
}
