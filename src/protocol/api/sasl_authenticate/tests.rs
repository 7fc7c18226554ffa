use super::*;
use crate::protocol::api::test_util::*;
use proptest::prelude::*;

#[test]
fn golden_bytes() {
    let q = SaslAuthenticateRequest {
        auth_bytes: vec![0, b'u', 0, b'p'],
    };
    golden(&q, 0, &[0, 0, 0, 4, 0, b'u', 0, b'p']);
    golden(&q, 1, &[0, 0, 0, 4, 0, b'u', 0, b'p']);
    golden(&q, 2, &[5, 0, b'u', 0, b'p', 0]);

    let r = SaslAuthenticateResponse {
        error_code: 58,
        error_message: Some("no".into()),
        auth_bytes: vec![],
        session_lifetime_ms: 0,
    };
    golden(&r, 0, &[0, 58, 0, 2, b'n', b'o', 0, 0, 0, 0]);
    let r1 = SaslAuthenticateResponse {
        session_lifetime_ms: 256,
        error_message: None,
        ..r.clone()
    };
    golden(
        &r1,
        1,
        &[0, 58, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0],
    );
    golden(&r1, 2, &[0, 58, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0]);
    assert_eq!(r1.error().name(), "SASL_AUTHENTICATION_FAILED");
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_round_trip(q in any::<SaslAuthenticateRequest>(), r in any::<SaslAuthenticateResponse>()) {
        for v in 0..=2 {
            prop_assert_eq!(round_trip(&q, v), Ok(()));
            let mut expected = r.clone();
            if v < 1 {
                expected.session_lifetime_ms = 0;
            }
            prop_assert_eq!(lossy_or_rejected(&r, Some(expected), v), Ok(()));
        }
    }
}
