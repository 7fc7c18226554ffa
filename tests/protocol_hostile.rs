//! Hostile input: truncation at every prefix, corrupted bytes and absurd lengths must yield
//! typed errors naming the API, version and field — never a panic or a huge allocation.

use kafka_streams_group::protocol::api::api_versions::*;
use kafka_streams_group::protocol::api::create_topics::*;
use kafka_streams_group::protocol::api::find_coordinator::*;
use kafka_streams_group::protocol::api::metadata::*;
use kafka_streams_group::protocol::api::sasl_authenticate::*;
use kafka_streams_group::protocol::api::sasl_handshake::*;
use kafka_streams_group::protocol::codec::{
    decode_message, encode_message, ApiMessage, DecodeError, Uuid,
};
use kafka_streams_group::protocol::frame::FrameDecoder;
use proptest::prelude::*;
use std::fmt::Debug;

/// Encodes `m` at every version it supports and checks every strict prefix fails with an error
/// that names the message and version.
fn every_prefix<M: ApiMessage + Debug + PartialEq>(
    m: &M,
    versions: std::ops::RangeInclusive<i16>,
) -> Vec<Vec<u8>> {
    let mut all = Vec::new();
    for v in versions {
        let mut buf = Vec::new();
        encode_message(&mut buf, m, v).unwrap_or_else(|e| panic!("{} v{v}: {e}", M::NAME));
        assert_eq!(&decode_message::<M>(&buf, v).unwrap(), m);
        for n in 0..buf.len() {
            let e = decode_message::<M>(&buf[..n], v).expect_err("prefix decoded");
            let text = e.to_string();
            assert!(text.contains(&format!("{} v{v}", M::NAME)), "{text}");
        }
        all.push(buf);
    }
    all
}

fn metadata_response(v13: bool) -> MetadataResponse {
    MetadataResponse {
        throttle_time_ms: 1,
        brokers: vec![MetadataResponseBroker {
            node_id: 1,
            host: "broker-1".into(),
            port: 9092,
            rack: Some("r".into()),
        }],
        cluster_id: Some("cluster".into()),
        controller_id: 1,
        topics: vec![MetadataResponseTopic {
            error_code: 0,
            name: Some("input".into()),
            topic_id: Uuid([3; 16]),
            is_internal: false,
            partitions: vec![MetadataResponsePartition {
                error_code: 0,
                partition_index: 0,
                leader_id: 1,
                leader_epoch: 4,
                replica_nodes: [1, 2].into(),
                isr_nodes: [1].into(),
                offline_replicas: [2].into(),
            }],
            topic_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
        }],
        cluster_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
        error_code: if v13 { 5 } else { 0 },
    }
}

#[test]
fn truncation_at_every_prefix_all_messages() {
    every_prefix(&ApiVersionsRequest::default(), 0..=5);
    every_prefix(
        &ApiVersionsResponse {
            api_keys: vec![ApiVersion {
                api_key: 88,
                min_version: 0,
                max_version: 1,
            }],
            ..Default::default()
        },
        0..=5,
    );
    every_prefix(
        &ApiVersionsResponse {
            supported_features: vec![SupportedFeatureKey {
                name: "streams.version".into(),
                min_version: 0,
                max_version: 1,
            }],
            finalized_features_epoch: 3,
            finalized_features: vec![FinalizedFeatureKey {
                name: "streams.version".into(),
                max_version_level: 1,
                min_version_level: 1,
            }],
            zk_migration_ready: true,
            ..Default::default()
        },
        3..=5,
    );
    every_prefix(&MetadataRequest::for_topics(["a"]), 4..=13);
    every_prefix(
        &MetadataRequest {
            topics: None,
            ..Default::default()
        },
        1..=13,
    );
    let mut resp = metadata_response(false);
    every_prefix(&resp, 10..=13);
    resp.topics[0].topic_id = Uuid::ZERO;
    resp.topics[0].partitions[0].leader_epoch = 4;
    every_prefix(&resp, 7..=9);
    every_prefix(
        &FindCoordinatorRequest {
            key: "app".into(),
            ..Default::default()
        },
        0..=3,
    );
    every_prefix(
        &FindCoordinatorRequest {
            coordinator_keys: vec!["app".into()],
            ..Default::default()
        },
        4..=6,
    );
    every_prefix(
        &FindCoordinatorResponse {
            error_code: 15,
            node_id: -1,
            host: String::new(),
            port: -1,
            ..Default::default()
        },
        0..=0,
    );
    every_prefix(
        &FindCoordinatorResponse {
            coordinators: vec![Coordinator {
                key: "app".into(),
                node_id: 1,
                host: "h".into(),
                port: 1,
                error_code: 0,
                error_message: Some("m".into()),
            }],
            ..Default::default()
        },
        4..=6,
    );
    every_prefix(
        &SaslHandshakeRequest {
            mechanism: "PLAIN".into(),
        },
        0..=1,
    );
    every_prefix(
        &SaslHandshakeResponse {
            error_code: 0,
            mechanisms: vec!["PLAIN".into()],
        },
        0..=1,
    );
    every_prefix(
        &SaslAuthenticateRequest {
            auth_bytes: b"\0u\0p".to_vec(),
        },
        0..=2,
    );
    every_prefix(
        &SaslAuthenticateResponse {
            error_message: Some("e".into()),
            auth_bytes: vec![1],
            ..Default::default()
        },
        0..=2,
    );
    let ct = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: "app-changelog".into(),
            num_partitions: 4,
            replication_factor: 1,
            assignments: vec![CreatableReplicaAssignment {
                partition_index: 0,
                broker_ids: vec![1],
            }],
            configs: vec![CreatableTopicConfig {
                name: "cleanup.policy".into(),
                value: Some("compact".into()),
            }],
        }],
        ..Default::default()
    };
    every_prefix(&ct, 2..=7);
    every_prefix(
        &CreateTopicsResponse {
            throttle_time_ms: 0,
            topics: vec![CreatableTopicResult {
                name: "t".into(),
                topic_config_error_code: 1,
                configs: Some(vec![CreatableTopicConfigs {
                    name: "k".into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }],
        },
        5..=7,
    );
}

#[test]
fn absurd_array_lengths_in_tiny_frames() {
    // Each case: a short body whose first array count claims ~2^31 (classic) or ~2^32 (compact).
    let classic_huge = [0x7f, 0xff, 0xff, 0xff];
    let compact_huge = [0xfe, 0xff, 0xff, 0xff, 0x0f];

    let mut b = vec![0, 0];
    b.extend(classic_huge);
    b.extend([0; 4]);
    let e = decode_message::<ApiVersionsResponse>(&b, 2).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::InvalidLength {
                api: "ApiVersionsResponse",
                version: 2,
                field: "ApiKeys",
                ..
            }
        ),
        "{e}"
    );

    let mut b = vec![0, 0];
    b.extend(compact_huge);
    b.extend([0; 4]);
    let e = decode_message::<ApiVersionsResponse>(&b, 3).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::InvalidLength {
                field: "ApiKeys",
                ..
            }
        ),
        "{e}"
    );

    let e = decode_message::<MetadataRequest>(&[0x7f, 0xff, 0xff, 0xff, 1], 4).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::InvalidLength {
                api: "MetadataRequest",
                version: 4,
                field: "Topics",
                ..
            }
        ),
        "{e}"
    );

    let mut b = vec![0, 0, 0, 0];
    b.extend(compact_huge);
    let e = decode_message::<CreateTopicsResponse>(&b, 5).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::InvalidLength {
                api: "CreateTopicsResponse",
                field: "Topics",
                ..
            }
        ),
        "{e}"
    );

    let e =
        decode_message::<SaslHandshakeResponse>(&[0, 0, 0x7f, 0xff, 0xff, 0xff], 1).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::InvalidLength {
                field: "Mechanisms",
                ..
            }
        ),
        "{e}"
    );

    let e = decode_message::<SaslAuthenticateRequest>(&[0x7f, 0xff, 0xff, 0xff, 0], 0).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::InvalidLength {
                field: "AuthBytes",
                ..
            }
        ),
        "{e}"
    );

    // Negative (non-null) counts.
    let e = decode_message::<FindCoordinatorResponse>(&[0, 0, 0, 0, 0xfe, 0, 0], 4).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::InvalidLength {
                field: "Coordinators",
                ..
            } | DecodeError::VarintOverflow { .. }
        ),
        "{e}"
    );
    let e =
        decode_message::<SaslHandshakeResponse>(&[0, 0, 0xff, 0xff, 0xff, 0xfe], 0).unwrap_err();
    assert!(
        matches!(e, DecodeError::InvalidLength { length: -2, .. }),
        "{e}"
    );
    // Null where not nullable.
    let e =
        decode_message::<SaslHandshakeResponse>(&[0, 0, 0xff, 0xff, 0xff, 0xff], 0).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::UnexpectedNull {
                field: "Mechanisms",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn frame_decoder_rejects_hostile_prefix_without_buffering() {
    let mut d = FrameDecoder::new();
    d.push(&[0x7f, 0xff, 0xff, 0xff, 1, 2, 3]);
    assert!(matches!(
        d.next_frame(),
        Err(DecodeError::FrameTooLarge { .. })
    ));
    let mut d = FrameDecoder::with_max_frame_size(1024);
    d.push(&[0, 0, 4, 1]);
    assert!(matches!(
        d.next_frame(),
        Err(DecodeError::FrameTooLarge {
            size: 1025,
            max: 1024
        })
    ));
    let mut d = FrameDecoder::new();
    d.push(&[0x80, 0, 0, 0]);
    assert!(matches!(
        d.next_frame(),
        Err(DecodeError::NegativeFrameLength { size: i32::MIN })
    ));
}

fn corrupt_all<M: ApiMessage + Debug>(bytes: &[u8], v: i16, idx: usize, val: u8) {
    let mut b = bytes.to_vec();
    if !b.is_empty() {
        let i = idx % b.len();
        b[i] = val;
    }
    let _ = decode_message::<M>(&b, v);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Single-byte corruption of valid encodings never panics.
    #[test]
    fn corrupted_bytes_never_panic(idx in any::<usize>(), val in any::<u8>()) {
        for v in 0..=13 {
            let mut buf = Vec::new();
            if encode_message(&mut buf, &metadata_response(v >= 13), v).is_ok() {
                corrupt_all::<MetadataResponse>(&buf, v, idx, val);
            }
        }
        for v in 3..=5 {
            let mut buf = Vec::new();
            let r = ApiVersionsResponse {
                api_keys: vec![ApiVersion { api_key: 1, min_version: 0, max_version: 1 }],
                supported_features: vec![SupportedFeatureKey { name: "f".into(), min_version: 0, max_version: 1 }],
                finalized_features_epoch: 1,
                ..Default::default()
            };
            encode_message(&mut buf, &r, v).unwrap();
            corrupt_all::<ApiVersionsResponse>(&buf, v, idx, val);
        }
    }
}
