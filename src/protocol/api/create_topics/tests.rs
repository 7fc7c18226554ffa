use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::{decode_message, DecodeError};
use proptest::prelude::*;

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn resp_expected(m: &CreateTopicsResponse, v: i16) -> CreateTopicsResponse {
    let mut e = m.clone();
    for t in &mut e.topics {
        if v < 7 {
            t.topic_id = Uuid::ZERO;
        }
        if v < 5 {
            t.topic_config_error_code = 0;
            t.num_partitions = -1;
            t.replication_factor = -1;
            t.configs = None;
        }
    }
    e
}

fn sample_request() -> CreateTopicsRequest {
    CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: "t".into(),
            num_partitions: 3,
            replication_factor: 1,
            assignments: vec![],
            configs: vec![CreatableTopicConfig {
                name: "a".into(),
                value: Some("b".into()),
            }],
        }],
        timeout_ms: 1000,
        validate_only: false,
    }
}

#[test]
fn request_golden() {
    let r = sample_request();
    #[rustfmt::skip]
    let classic = [
        0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 3, 0, 1,   // Topics: 1, Name, NumPartitions, ReplicationFactor
        0, 0, 0, 0,                                 // Assignments []
        0, 0, 0, 1, 0, 1, b'a', 0, 1, b'b',         // Configs [a=b]
        0, 0, 0x03, 0xe8, 0,                        // timeoutMs 1000, validateOnly
    ];
    for v in 2..=4 {
        golden(&r, v, &classic);
    }
    #[rustfmt::skip]
    let flex = [
        2, 2, b't', 0, 0, 0, 3, 0, 1,
        1,
        2, 2, b'a', 2, b'b', 0,
        0,                                          // CreatableTopic tags
        0, 0, 0x03, 0xe8, 0, 0,
    ];
    for v in 5..=7 {
        golden(&r, v, &flex);
    }
    let with_assign = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: "t".into(),
            assignments: vec![CreatableReplicaAssignment {
                partition_index: 0,
                broker_ids: vec![1, 2],
            }],
            ..Default::default()
        }],
        validate_only: true,
        ..Default::default()
    };
    golden(
        &with_assign,
        5,
        &[
            2, 2, b't', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0,
            2, 0, 1, 0, 0, 0, 0xea, 0x60, 1, 0,
        ],
    );
}

#[test]
fn response_golden() {
    let t = CreatableTopicResult {
        name: "t".into(),
        error_code: 36,
        error_message: Some("x".into()),
        ..Default::default()
    };
    let r = CreateTopicsResponse {
        throttle_time_ms: 0,
        topics: vec![t.clone()],
    };
    for v in 2..=4 {
        golden(
            &r,
            v,
            &[0, 0, 0, 0, 0, 0, 0, 1, 0, 1, b't', 0, 36, 0, 1, b'x'],
        );
    }
    golden(
        &r,
        5,
        &[
            0, 0, 0, 0, 2, 2, b't', 0, 36, 2, b'x', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0,
        ],
    );
    let full = CreatableTopicResult {
        topic_id: Uuid([9; 16]),
        error_message: None,
        error_code: 0,
        topic_config_error_code: 29,
        num_partitions: 1,
        replication_factor: 1,
        configs: Some(vec![CreatableTopicConfigs {
            name: "k".into(),
            value: None,
            read_only: true,
            config_source: 5,
            is_sensitive: false,
        }]),
        ..t
    };
    let r7 = CreateTopicsResponse {
        throttle_time_ms: 0,
        topics: vec![full],
    };
    golden(
        &r7,
        7,
        &cat(&[
            &[0, 0, 0, 0, 2, 2, b't'],
            &[9; 16],
            &[0, 0, 0, 0, 0, 0, 1, 0, 1],
            &[2, 2, b'k', 0, 1, 5, 0, 0],
            &[1, 0, 2, 0, 29],
            &[0],
        ]),
    );
    assert_eq!(r7.topics[0].error().name(), "NONE");
}

#[test]
fn unsupported_versions() {
    assert!(matches!(
        decode_message::<CreateTopicsRequest>(&[0, 0, 0, 0, 0, 0, 0, 0, 0], 1),
        Err(DecodeError::UnsupportedVersion {
            api: "CreateTopicsRequest",
            version: 1
        })
    ));
    let mut buf = Vec::new();
    assert!(
        crate::protocol::codec::encode_message(&mut buf, &CreateTopicsRequest::default(), 8)
            .is_err()
    );
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_request(m in any::<CreateTopicsRequest>()) {
        for v in 2..=7 {
            prop_assert_eq!(round_trip(&m, v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<CreateTopicsResponse>()) {
        for v in 2..=7 {
            prop_assert_eq!(lossy_or_rejected(&m, Some(resp_expected(&m, v)), v), Ok(()));
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..100)) {
        for v in 2..=7 {
            let _ = decode_message::<CreateTopicsResponse>(&b, v);
            let _ = decode_message::<CreateTopicsRequest>(&b, v);
        }
    }
}
