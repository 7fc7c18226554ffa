//! The seeds: every fuzz target's inputs built from valid messages, checked against the
//! targets they seed, and written to `fuzz/seeds/` on request (see the crate docs).

use kafka_streams_group::protocol::api::api_versions::{
    decode_api_versions_response_frame, ApiVersionsRequest, ApiVersionsResponse,
};
use kafka_streams_group::protocol::api::create_topics::CreateTopicsResponse;
use kafka_streams_group::protocol::api::delete_records::{
    DeleteRecordsPartitionResult, DeleteRecordsResponse, DeleteRecordsTopicResult,
};
use kafka_streams_group::protocol::api::fetch::FetchResponse;
use kafka_streams_group::protocol::api::find_coordinator::FindCoordinatorResponse;
use kafka_streams_group::protocol::api::init_producer_id::InitProducerIdResponse;
use kafka_streams_group::protocol::api::list_offsets::{
    ListOffsetsPartitionResponse, ListOffsetsResponse, ListOffsetsTopicResponse,
};
use kafka_streams_group::protocol::api::metadata::MetadataResponse;
use kafka_streams_group::protocol::api::offset_commit::OffsetCommitResponse;
use kafka_streams_group::protocol::api::offset_fetch::OffsetFetchResponse;
use kafka_streams_group::protocol::api::offset_for_leader_epoch::{
    EpochEndOffset, OffsetForLeaderEpochResponse, OffsetForLeaderTopicResult,
};
use kafka_streams_group::protocol::api::produce::{
    PartitionProduceData, ProduceRequest, ProduceResponse, TopicProduceData,
};
use kafka_streams_group::protocol::api::sasl_authenticate::SaslAuthenticateResponse;
use kafka_streams_group::protocol::api::sasl_handshake::SaslHandshakeResponse;
use kafka_streams_group::protocol::api::streams_group_describe::{
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
};
use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
};
use kafka_streams_group::protocol::codec::encode_message;
use kafka_streams_group::protocol::frame::{encode_request_frame, encode_response_frame};
use kafka_streams_group::protocol::{ApiMessage, Uuid};

use crate::messages::*;
use crate::{fuzz_dir, harness};

/// One seed per implemented version: `rich` where that version can carry it, else `basic`.
fn every_version<M: ApiMessage>(
    out: &mut Vec<(&'static str, String, Vec<u8>)>,
    target: &'static str,
    label: &str,
    rich: &M,
    basic: &M,
) {
    for v in M::MIN_VERSION..=M::MAX_VERSION {
        let mut probe = Vec::new();
        let (name, msg) = if encode_message(&mut probe, rich, v).is_ok() {
            (label.to_owned(), rich)
        } else {
            (format!("{label}-basic"), basic)
        };
        out.push((
            target,
            format!("{name}-v{v}"),
            harness::message_input(msg, v),
        ));
    }
}
/// Record batches: one per codec (with headers, null key/value, an idempotent producer), a
/// transactional batch followed by an abort marker, and a blob cut inside its second batch.
fn record_batch_seeds(out: &mut Vec<(&'static str, String, Vec<u8>)>) {
    use kafka_streams_group::protocol::records::{
        BatchBuilder, Compression, ControlRecord, ControlRecordType, Header, RecordSpec,
    };
    let headers = [
        Header {
            key: b"trace",
            value: Some(b"0af7651916cd43dd"),
        },
        Header {
            key: b"",
            value: None,
        },
    ];
    let value = b"{\"user\":42,\"name\":\"kafka streams kafka streams\"}";
    for codec in Compression::ALL {
        let mut b = BatchBuilder::new(codec).producer(7, 1, 100).base_offset(10);
        b.push(
            &RecordSpec::new(Some(b"k1"), Some(value), 1_700_000_000_000).with_headers(&headers),
        )
        .expect("record");
        b.push(&RecordSpec::new(None, None, 1_700_000_000_005))
            .expect("record");
        b.push(&RecordSpec::new(Some(b""), Some(value), -1))
            .expect("record");
        let mut wire = Vec::new();
        b.finish(&mut wire).expect("batch");
        out.push(("record_batches", format!("three-records-{codec}"), wire));
    }
    let mut wire = Vec::new();
    let mut b = BatchBuilder::new(Compression::None)
        .producer(1, 0, 0)
        .transactional(true);
    b.push(&RecordSpec::new(Some(b"k"), Some(b"v"), 5))
        .expect("record");
    b.finish(&mut wire).expect("batch");
    let key = ControlRecord::key_bytes(ControlRecordType::Abort);
    let val = ControlRecord::marker_value_bytes(3);
    let mut m = BatchBuilder::new(Compression::None)
        .producer(1, 0, -1)
        .transactional(true)
        .control(true)
        .base_offset(1);
    m.push(&RecordSpec::new(Some(&key), Some(&val), 6))
        .expect("marker");
    m.finish(&mut wire).expect("marker batch");
    out.push((
        "record_batches",
        "transaction-then-abort".into(),
        wire.clone(),
    ));
    wire.truncate(wire.len() - 5);
    out.push(("record_batches", "partial-second-batch".into(), wire));
}

/// A frame-target input: `[max/4, splits.len(), splits..., stream...]`.
fn frame_input(max_div4: u8, splits: &[u8], stream: &[u8]) -> Vec<u8> {
    let mut v = vec![max_div4, splits.len() as u8];
    v.extend_from_slice(splits);
    v.extend_from_slice(stream);
    v
}

/// Every seed: (target, file name, bytes).
fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    use harness::message_input;
    let mut out = Vec::new();
    for v in 2..=10 {
        out.push((
            "offset_commit_response",
            format!("two-partitions-v{v}"),
            message_input(&offset_commit_response(), v),
        ));
    }
    for v in 1..=10 {
        out.push((
            "offset_fetch_response",
            format!("two-partitions-v{v}"),
            message_input(&offset_fetch_response(v), v),
        ));
    }
    every_version(
        &mut out,
        "api_versions_response",
        "full",
        &api_versions_response(),
        &api_versions_response_basic(),
    );
    // ApiVersions frames: header v0 + body at the requested version; and a v0 UNSUPPORTED_VERSION
    // answer to a v4 request (the fallback path).
    for v in [0, 3, 4] {
        let mut frame = Vec::new();
        encode_response_frame::<ApiVersionsRequest>(&mut frame, 5, &api_versions_response(), v)
            .expect("ApiVersions frame encodes");
        let mut input = vec![v as u8];
        input.extend_from_slice(&frame[4..]);
        out.push(("api_versions_response_frame", format!("full-v{v}"), input));
    }
    let mut frame = Vec::new();
    encode_response_frame::<ApiVersionsRequest>(&mut frame, 6, &api_versions_response_basic(), 0)
        .expect("ApiVersions frame encodes");
    let mut input = vec![4];
    input.extend_from_slice(&frame[4..]);
    out.push((
        "api_versions_response_frame",
        "v0-fallback-for-v4".into(),
        input,
    ));
    every_version(
        &mut out,
        "fetch_response",
        "leader-moved",
        &fetch_response(true),
        &fetch_response(false),
    );
    every_version(
        &mut out,
        "produce_response",
        "leader-moved",
        &produce_response(true),
        &produce_response(false),
    );
    let produce = ProduceRequest {
        transactional_id: None,
        acks: -1,
        timeout_ms: 30_000,
        topic_data: vec![TopicProduceData {
            name: "out".into(),
            topic_id: Uuid::ZERO,
            partition_data: vec![PartitionProduceData {
                index: 0,
                records: Some(vec![0; 70]),
            }],
        }],
    };
    every_version(&mut out, "produce_request", "one-batch", &produce, &produce);
    let offsets = ListOffsetsResponse {
        throttle_time_ms: 0,
        topics: vec![ListOffsetsTopicResponse {
            name: "in".into(),
            partitions: vec![ListOffsetsPartitionResponse {
                partition_index: 0,
                error_code: 0,
                timestamp: -1,
                offset: 42,
                leader_epoch: 3,
            }],
        }],
    };
    let mut offsets_basic = offsets.clone();
    offsets_basic.topics[0].partitions[0].leader_epoch = -1;
    every_version(
        &mut out,
        "list_offsets_response",
        "one-partition",
        &offsets,
        &offsets_basic,
    );
    let pid = InitProducerIdResponse {
        producer_id: 1000,
        producer_epoch: 1,
        ..InitProducerIdResponse::default()
    };
    every_version(
        &mut out,
        "init_producer_id_response",
        "idempotent",
        &pid,
        &pid,
    );
    let epochs = OffsetForLeaderEpochResponse {
        throttle_time_ms: 0,
        topics: vec![OffsetForLeaderTopicResult {
            topic: "in".into(),
            partitions: vec![EpochEndOffset {
                error_code: 0,
                partition: 0,
                leader_epoch: 4,
                end_offset: 100,
            }],
        }],
    };
    every_version(
        &mut out,
        "offset_for_leader_epoch_response",
        "one-partition",
        &epochs,
        &epochs,
    );
    let purged = DeleteRecordsResponse {
        throttle_time_ms: 0,
        topics: vec![DeleteRecordsTopicResult {
            name: "app-counts-repartition".into(),
            partitions: vec![
                DeleteRecordsPartitionResult {
                    partition_index: 0,
                    low_watermark: 42,
                    error_code: 0,
                },
                DeleteRecordsPartitionResult {
                    partition_index: 1,
                    low_watermark: -1,
                    error_code: 1,
                },
            ],
        }],
    };
    every_version(
        &mut out,
        "delete_records_response",
        "two-partitions",
        &purged,
        &purged,
    );
    every_version(
        &mut out,
        "metadata_response",
        "one-topic",
        &metadata_response(),
        &metadata_response_basic(),
    );
    every_version(
        &mut out,
        "find_coordinator_response",
        "two-keys",
        &find_coordinator_response(),
        &find_coordinator_response_basic(),
    );
    let handshake = SaslHandshakeResponse {
        error_code: 0,
        mechanisms: vec![
            "PLAIN".into(),
            "SCRAM-SHA-256".into(),
            "SCRAM-SHA-512".into(),
        ],
    };
    every_version(
        &mut out,
        "sasl_handshake_response",
        "three",
        &handshake,
        &handshake,
    );
    let authenticate = SaslAuthenticateResponse {
        error_code: 0,
        error_message: None,
        auth_bytes: b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
            .to_vec(),
        session_lifetime_ms: 3_600_000,
    };
    let auth_failed = SaslAuthenticateResponse {
        error_code: 58, // SASL_AUTHENTICATION_FAILED
        error_message: Some("Authentication failed: Invalid username or password".into()),
        ..SaslAuthenticateResponse::default()
    };
    every_version(
        &mut out,
        "sasl_authenticate_response",
        "scram",
        &authenticate,
        &auth_failed,
    );
    every_version(
        &mut out,
        "sasl_authenticate_response",
        "failed",
        &auth_failed,
        &auth_failed,
    );
    every_version(
        &mut out,
        "create_topics_response",
        "created-and-exists",
        &create_topics_response(),
        &create_topics_response_basic(),
    );
    for v in 0..=1 {
        out.push((
            "streams_group_heartbeat_response",
            format!("full-v{v}"),
            message_input(&heartbeat_response_full(v), v),
        ));
        out.push((
            "streams_group_heartbeat_response",
            format!("error-v{v}"),
            message_input(&heartbeat_response_error(), v),
        ));
        out.push((
            "streams_group_describe_response",
            format!("two-groups-v{v}"),
            message_input(&describe_response(v), v),
        ));
        out.push((
            "streams_group_heartbeat_request",
            format!("join-v{v}"),
            message_input(&heartbeat_request_join(), v),
        ));
        out.push((
            "streams_group_heartbeat_request",
            format!("steady-v{v}"),
            message_input(&heartbeat_request_steady(), v),
        ));
        out.push((
            "streams_group_describe_request",
            format!("two-ids-v{v}"),
            message_input(
                &StreamsGroupDescribeRequest {
                    group_ids: vec!["app".into(), "other".into()],
                    include_authorized_operations: true,
                    include_topology_description: v >= 1,
                },
                v,
            ),
        ));
        // A request frame payload (no length prefix), as a mock broker receives it.
        let mut frame = Vec::new();
        encode_request_frame(
            &mut frame,
            7,
            Some("app-client"),
            &heartbeat_request_join(),
            v,
        )
        .expect("request frame encodes");
        out.push((
            "streams_group_heartbeat_request_frame",
            format!("join-v{v}"),
            frame[4..].to_vec(),
        ));
    }

    // Frame streams: two complete heartbeat response frames and the start of a third, cut in
    // a few places; one stream whose second prefix exceeds the maximum.
    let mut stream = Vec::new();
    encode_response_frame::<StreamsGroupHeartbeatRequest>(
        &mut stream,
        1,
        &heartbeat_response_full(1),
        1,
    )
    .expect("response frame encodes");
    encode_response_frame::<StreamsGroupHeartbeatRequest>(
        &mut stream,
        2,
        &heartbeat_response_error(),
        0,
    )
    .expect("response frame encodes");
    let complete = stream.len();
    stream.extend_from_slice(&[0, 0, 0, 9, 0, 0]);
    out.push((
        "frame_decoder",
        "two-and-a-half".into(),
        frame_input(255, &[3, 1, 40], &stream),
    ));
    out.push((
        "frame_decoder",
        "one-byte-pushes".into(),
        frame_input(255, &[1, 1, 1, 1, 1, 1, 1], &stream[..complete]),
    ));
    let mut oversized = stream[..complete].to_vec();
    oversized.extend_from_slice(&[0, 0, 4, 0]); // 1024 > 4 × 255
    out.push((
        "frame_decoder",
        "oversized-second".into(),
        frame_input(255, &[5], &oversized),
    ));
    record_batch_seeds(&mut out);
    out
}

/// Writes `fuzz/seeds/<target>/<name>` for every seed; see the module docs.
#[test]
#[ignore = "writes files; run explicitly with KSG_WRITE_FUZZ_SEEDS=1"]
fn write_fuzz_seeds() {
    if std::env::var_os("KSG_WRITE_FUZZ_SEEDS").is_none() {
        eprintln!("KSG_WRITE_FUZZ_SEEDS is not set; nothing written");
        return;
    }
    for (target, name, bytes) in seeds() {
        let dir = fuzz_dir().join("seeds").join(target);
        std::fs::create_dir_all(&dir).expect("create seed dir");
        std::fs::write(dir.join(name), bytes).expect("write seed");
    }
}

#[test]
fn seeds_pass_the_checks_they_seed() {
    // Built fresh (not read from disk), so a stale committed seed cannot mask a broken builder.
    for (target, name, bytes) in seeds() {
        let check = harness::target(target).expect("seed target is registered");
        check(&bytes);
        // The seed must actually decode, or it would only exercise the error paths.
        if target != "frame_decoder" {
            assert!(
                decodes(target, &bytes),
                "seed {target}/{name} does not decode"
            );
        }
    }
}

/// Whether a message seed decodes at all (the checks pass silently on undecodable input).
fn decodes(target: &str, data: &[u8]) -> bool {
    use kafka_streams_group::protocol::codec::decode_message;
    use kafka_streams_group::protocol::frame::decode_request_frame;
    fn body<M: kafka_streams_group::protocol::ApiMessage>(data: &[u8]) -> bool {
        let (sel, rest) = data.split_first().expect("non-empty seed");
        decode_message::<M>(rest, harness::pick_version::<M>(*sel)).is_ok()
    }
    match target {
        "api_versions_response" => body::<ApiVersionsResponse>(data),
        "metadata_response" => body::<MetadataResponse>(data),
        "find_coordinator_response" => body::<FindCoordinatorResponse>(data),
        "sasl_handshake_response" => body::<SaslHandshakeResponse>(data),
        "sasl_authenticate_response" => body::<SaslAuthenticateResponse>(data),
        "create_topics_response" => body::<CreateTopicsResponse>(data),
        "streams_group_heartbeat_response" => body::<StreamsGroupHeartbeatResponse>(data),
        "streams_group_describe_response" => body::<StreamsGroupDescribeResponse>(data),
        "streams_group_heartbeat_request" => body::<StreamsGroupHeartbeatRequest>(data),
        "streams_group_describe_request" => body::<StreamsGroupDescribeRequest>(data),
        "offset_commit_response" => body::<OffsetCommitResponse>(data),
        "offset_fetch_response" => body::<OffsetFetchResponse>(data),
        "fetch_response" => body::<FetchResponse>(data),
        "list_offsets_response" => body::<ListOffsetsResponse>(data),
        "produce_response" => body::<ProduceResponse>(data),
        "produce_request" => body::<ProduceRequest>(data),
        "init_producer_id_response" => body::<InitProducerIdResponse>(data),
        "offset_for_leader_epoch_response" => body::<OffsetForLeaderEpochResponse>(data),
        "delete_records_response" => body::<DeleteRecordsResponse>(data),
        "api_versions_response_frame" => {
            let (sel, rest) = data.split_first().expect("non-empty seed");
            let v = harness::pick_version::<ApiVersionsResponse>(*sel);
            decode_api_versions_response_frame(rest, v).is_ok()
        }
        "streams_group_heartbeat_request_frame" => {
            decode_request_frame::<StreamsGroupHeartbeatRequest>(data).is_ok()
        }
        "record_batches" => {
            use kafka_streams_group::protocol::records::{BatchReader, DecodeLimits};
            let mut n = 0;
            for raw in BatchReader::new(data) {
                match raw.and_then(|b| b.decode(&DecodeLimits::default())) {
                    Ok(_) => n += 1,
                    Err(_) => return false,
                }
            }
            n > 0
        }
        other => panic!("no decodes() case for {other}"),
    }
}
