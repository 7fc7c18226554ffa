use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::decode_message;
use proptest::prelude::*;

#[test]
fn golden_bytes() {
    for v in 0..=1 {
        golden(
            &SaslHandshakeRequest {
                mechanism: "PLAIN".into(),
            },
            v,
            &[0, 5, b'P', b'L', b'A', b'I', b'N'],
        );
        let r = SaslHandshakeResponse {
            error_code: 33,
            mechanisms: vec!["A".into(), "BC".into()],
        };
        golden(&r, v, &[0, 33, 0, 0, 0, 2, 0, 1, b'A', 0, 2, b'B', b'C']);
    }
    assert!(!SaslHandshakeRequest::is_flexible(1));
    assert_eq!(SaslHandshakeRequest::request_header_version(1), 1);
    assert_eq!(SaslHandshakeRequest::response_header_version(1), 0);
}

#[test]
fn errors_name_field() {
    let e =
        decode_message::<SaslHandshakeResponse>(&[0, 0, 0, 0, 0, 1, 0, 9, b'x'], 1).unwrap_err();
    assert!(
        e.to_string().contains("SaslHandshakeResponse v1") && e.to_string().contains("Mechanisms"),
        "{e}"
    );
    assert!(decode_message::<SaslHandshakeRequest>(&[0, 0], 2).is_err());
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_round_trip(q in any::<SaslHandshakeRequest>(), r in any::<SaslHandshakeResponse>()) {
        for v in 0..=1 {
            prop_assert_eq!(round_trip(&q, v), Ok(()));
            prop_assert_eq!(round_trip(&r, v), Ok(()));
        }
    }
}
