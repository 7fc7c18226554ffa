use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::{decode_message, DecodeError};
use proptest::prelude::*;

fn req_expected(m: &ApiVersionsRequest, v: i16) -> ApiVersionsRequest {
    let mut e = m.clone();
    if v < 3 {
        e.client_software_name.clear();
        e.client_software_version.clear();
    }
    if v < 5 {
        e.cluster_id = None;
        e.node_id = -1;
    }
    e
}

fn resp_expected(m: &ApiVersionsResponse, v: i16) -> ApiVersionsResponse {
    let mut e = m.clone();
    if v < 1 {
        e.throttle_time_ms = 0;
    }
    if v < 3 {
        e.supported_features.clear();
        e.finalized_features_epoch = -1;
        e.finalized_features.clear();
        e.zk_migration_ready = false;
    }
    e
}

#[test]
fn request_golden() {
    golden(&ApiVersionsRequest::default(), 0, &[]);
    golden(&ApiVersionsRequest::default(), 2, &[]);
    let r = ApiVersionsRequest {
        client_software_name: "ksg".into(),
        client_software_version: "0.1".into(),
        ..Default::default()
    };
    golden(&r, 3, &[4, b'k', b's', b'g', 4, b'0', b'.', b'1', 0]);
    golden(&r, 4, &[4, b'k', b's', b'g', 4, b'0', b'.', b'1', 0]);
    let r5 = ApiVersionsRequest {
        cluster_id: Some("c".into()),
        node_id: 2,
        ..r.clone()
    };
    golden(
        &r5,
        5,
        &[
            4, b'k', b's', b'g', 4, b'0', b'.', b'1', 2, b'c', 0, 0, 0, 2, 0,
        ],
    );
    golden(
        &r,
        5,
        &[
            4, b'k', b's', b'g', 4, b'0', b'.', b'1', 0, 0xff, 0xff, 0xff, 0xff, 0,
        ],
    );
}

#[test]
fn response_golden() {
    let keys = vec![ApiVersion {
        api_key: 18,
        min_version: 0,
        max_version: 4,
    }];
    let r0 = ApiVersionsResponse {
        api_keys: keys.clone(),
        ..Default::default()
    };
    golden(&r0, 0, &[0, 0, 0, 0, 0, 1, 0, 18, 0, 0, 0, 4]);
    let r1 = ApiVersionsResponse {
        error_code: 35,
        throttle_time_ms: 7,
        ..r0.clone()
    };
    golden(&r1, 1, &[0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 4, 0, 0, 0, 7]);
    golden(&r0, 3, &[0, 0, 2, 0, 18, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0]);
    let full = ApiVersionsResponse {
        supported_features: vec![SupportedFeatureKey {
            name: "x".into(),
            min_version: 1,
            max_version: 2,
        }],
        finalized_features_epoch: 5,
        zk_migration_ready: true,
        ..r0.clone()
    };
    #[rustfmt::skip]
    let bytes = [
        0, 0,                       // ErrorCode
        2, 0, 18, 0, 0, 0, 4, 0,    // ApiKeys (compact, 1 element + tags)
        0, 0, 0, 0,                 // ThrottleTimeMs
        3,                          // 3 tagged fields
        0, 8, 2, 2, b'x', 0, 1, 0, 2, 0,  // tag 0 SupportedFeatures, 8 bytes
        1, 8, 0, 0, 0, 0, 0, 0, 0, 5,     // tag 1 FinalizedFeaturesEpoch
        3, 1, 1,                          // tag 3 ZkMigrationReady
    ];
    golden(&full, 3, &bytes);
    golden(&full, 5, &bytes);
    let ff = ApiVersionsResponse {
        finalized_features: vec![FinalizedFeatureKey {
            name: "y".into(),
            max_version_level: 3,
            min_version_level: 1,
        }],
        ..r0
    };
    golden(
        &ff,
        4,
        &[
            0, 0, 2, 0, 18, 0, 0, 0, 4, 0, 0, 0, 0, 0, 1, 2, 8, 2, 2, b'y', 0, 3, 0, 1, 0,
        ],
    );
    assert_eq!(ff.find(18).map(|k| k.max_version), Some(4));
    assert_eq!(ff.find(88), None);
}

#[test]
fn unknown_tags_skipped() {
    // v3 response with an unknown tag 7 (3 bytes) before the known tag 3.
    let bytes = [0, 0, 1, 0, 0, 0, 0, 2, 7, 3, 9, 9, 9, 3, 1, 1];
    let r: ApiVersionsResponse = decode_message(&bytes, 3).unwrap();
    assert!(r.zk_migration_ready);
    assert!(r.api_keys.is_empty());
}

#[test]
fn unsupported_version_fallback_to_v0() {
    // Correlation id 9, then a v0 body: UNSUPPORTED_VERSION (35) and ApiVersions 0..3.
    let frame = [0, 0, 0, 9, 0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 3];
    let (h, r, used) = decode_api_versions_response_frame(&frame, 5).unwrap();
    assert_eq!((h.correlation_id, used), (9, 0));
    assert_eq!(r.error().name(), "UNSUPPORTED_VERSION");
    assert_eq!(r.find(18).map(|k| k.max_version), Some(3));
    // A well-formed v3 body decodes at v3.
    let frame = [0, 0, 0, 9, 0, 0, 1, 0, 0, 0, 0, 0];
    let (_, r, used) = decode_api_versions_response_frame(&frame, 3).unwrap();
    assert_eq!((used, r.throttle_time_ms), (3, 0));
    // Garbage: the error names the requested version.
    let e = decode_api_versions_response_frame(&[0, 0, 0, 9, 0], 3).unwrap_err();
    assert!(e.to_string().contains("ApiVersionsResponse v3"), "{e}");
    assert!(decode_api_versions_response_frame(&[0, 0], 3).is_err());
}

#[test]
fn header_versions() {
    assert_eq!(ApiVersionsRequest::request_header_version(0), 1);
    assert_eq!(ApiVersionsRequest::request_header_version(3), 2);
    for v in 0..=5 {
        assert_eq!(ApiVersionsRequest::response_header_version(v), 0);
    }
}

#[test]
fn hostile_api_keys_count() {
    let bytes = [0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0];
    let e = decode_message::<ApiVersionsResponse>(&bytes, 0).unwrap_err();
    assert!(matches!(
        e,
        DecodeError::InvalidLength {
            api: "ApiVersionsResponse",
            version: 0,
            field: "ApiKeys",
            ..
        }
    ));
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_request(m in any::<ApiVersionsRequest>()) {
        for v in 0i16..=5 {
            prop_assert_eq!(lossy_or_rejected(&m, Some(req_expected(&m, v)), v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<ApiVersionsResponse>()) {
        for v in 0i16..=5 {
            prop_assert_eq!(lossy_or_rejected(&m, Some(resp_expected(&m, v)), v), Ok(()));
        }
    }

    #[test]
    fn prop_response_garbage(b in proptest::collection::vec(any::<u8>(), 0..80)) {
        for v in 0i16..=5 {
            let _ = decode_message::<ApiVersionsResponse>(&b, v);
        }
    }
}
