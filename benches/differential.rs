//! Issue 8, item 2: decode speed against the `kafka-protocol` crate on the SAME bytes.
//!
//! Every body is encoded once with this crate; before anything is measured, kafka-protocol
//! must decode those bytes to the same counts (topics, partitions, replicas, api keys …).
//! kafka-protocol decodes from `bytes::Bytes` (its zero-copy best case: strings are
//! reference-counted slices of the input); this crate decodes from `&[u8]` into owned types.
//!
//! `cargo bench --bench differential -- --warm-up-time 1 --measurement-time 3`

// criterion_group!/criterion_main! generate undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use kafka_protocol::protocol::Decodable as KpDecodable;
use kafka_streams_group::protocol::api::api_versions::{ApiVersion, ApiVersionsResponse};
use kafka_streams_group::protocol::api::find_coordinator::{Coordinator, FindCoordinatorResponse};
use kafka_streams_group::protocol::api::metadata::MetadataResponse;
use kafka_streams_group::protocol::codec::{decode_message, encode_message};
use kafka_streams_group::protocol::ApiMessage;

#[path = "support/metadata_case.rs"]
mod metadata_case;

use metadata_case::{metadata, METADATA_V};

const FIND_COORDINATOR_V: i16 = 4;
const API_VERSIONS_V: i16 = 3;

fn find_coordinator() -> FindCoordinatorResponse {
    FindCoordinatorResponse {
        coordinators: vec![Coordinator {
            key: "bench-application".into(),
            node_id: 2,
            host: "broker-2.kafka.example".into(),
            port: 9092,
            error_code: 0,
            error_message: None,
        }],
        ..Default::default()
    }
}

fn api_versions() -> ApiVersionsResponse {
    ApiVersionsResponse {
        // Roughly what a 4.x broker advertises: ~90 APIs.
        api_keys: (0..90)
            .map(|k| ApiVersion {
                api_key: k,
                min_version: 0,
                max_version: 4 + k % 9,
            })
            .collect(),
        finalized_features_epoch: -1,
        ..Default::default()
    }
}

fn enc<M: ApiMessage>(m: &M, v: i16) -> Vec<u8> {
    let mut b = Vec::new();
    encode_message(&mut b, m, v).expect("encode");
    b
}

fn kp<T: KpDecodable>(bytes: &Bytes, v: i16) -> T {
    let mut b = bytes.clone();
    let r = T::decode(&mut b, v).expect("kafka-protocol decodes our bytes");
    assert!(b.is_empty(), "kafka-protocol left bytes unread");
    r
}

fn bench(c: &mut Criterion) {
    use kafka_protocol::messages as k;

    // ---- Metadata: 1,000 topics x 16 partitions ----
    let md = metadata(1000, 16);
    let md_bytes = enc(&md, METADATA_V);
    let md_b = Bytes::from(md_bytes.clone());
    let theirs: k::MetadataResponse = kp(&md_b, METADATA_V);
    let ours: MetadataResponse = decode_message(&md_bytes, METADATA_V).expect("decode");
    assert_eq!(ours, md);
    assert_eq!(theirs.topics.len(), 1000);
    assert_eq!(theirs.brokers.len(), 3);
    let their_parts: usize = theirs.topics.iter().map(|t| t.partitions.len()).sum();
    let their_replicas: usize = theirs
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter())
        .map(|p| p.replica_nodes.len() + p.isr_nodes.len())
        .sum();
    assert_eq!(their_parts, 16_000);
    assert_eq!(their_replicas, 16_000 * 6);
    // Not only the counts: every partition's id lists agree, element by element.
    let ids = |l: &[k::BrokerId]| l.iter().map(|b| b.0).collect::<Vec<i32>>();
    for (o, t) in ours.topics.iter().zip(&theirs.topics) {
        assert_eq!(o.partitions.len(), t.partitions.len());
        for (p, q) in o.partitions.iter().zip(&t.partitions) {
            assert_eq!(
                (p.partition_index, p.leader_id),
                (q.partition_index, q.leader_id.0)
            );
            assert_eq!(p.replica_nodes, ids(&q.replica_nodes));
            assert_eq!(p.isr_nodes, ids(&q.isr_nodes));
            assert_eq!(p.offline_replicas, ids(&q.offline_replicas));
        }
    }
    assert_eq!(
        theirs.topics[999].name.as_ref().map(|n| n.as_str()),
        Some("bench-topic-0999")
    );
    eprintln!("metadata response: {} bytes", md_bytes.len());

    let mut g = c.benchmark_group("metadata_decode_1000x16");
    g.bench_function("ours", |b| {
        b.iter(|| {
            let r: MetadataResponse =
                decode_message(black_box(&md_bytes), METADATA_V).expect("decode");
            black_box(r.topics.len())
        })
    });
    g.bench_function("kafka_protocol", |b| {
        b.iter(|| {
            let mut buf = black_box(&md_b).clone();
            let r = k::MetadataResponse::decode(&mut buf, METADATA_V).expect("decode");
            black_box(r.topics.len())
        })
    });
    g.finish();

    // ---- FindCoordinator ----
    let fc = find_coordinator();
    let fc_bytes = enc(&fc, FIND_COORDINATOR_V);
    let fc_b = Bytes::from(fc_bytes.clone());
    let theirs: k::FindCoordinatorResponse = kp(&fc_b, FIND_COORDINATOR_V);
    assert_eq!(theirs.coordinators.len(), 1);
    assert_eq!(theirs.coordinators[0].port, 9092);
    assert_eq!(
        theirs.coordinators[0].host.as_str(),
        "broker-2.kafka.example"
    );
    let mut g = c.benchmark_group("find_coordinator_decode");
    g.bench_function("ours", |b| {
        b.iter(|| {
            let r: FindCoordinatorResponse =
                decode_message(black_box(&fc_bytes), FIND_COORDINATOR_V).expect("decode");
            black_box(r)
        })
    });
    g.bench_function("kafka_protocol", |b| {
        b.iter(|| {
            let mut buf = black_box(&fc_b).clone();
            black_box(k::FindCoordinatorResponse::decode(&mut buf, FIND_COORDINATOR_V).expect("d"))
        })
    });
    g.finish();

    // ---- ApiVersions ----
    let av = api_versions();
    let av_bytes = enc(&av, API_VERSIONS_V);
    let av_b = Bytes::from(av_bytes.clone());
    let theirs: k::ApiVersionsResponse = kp(&av_b, API_VERSIONS_V);
    assert_eq!(theirs.api_keys.len(), 90);
    assert_eq!(theirs.api_keys[89].max_version, 4 + 89 % 9);
    let mut g = c.benchmark_group("api_versions_decode");
    g.bench_function("ours", |b| {
        b.iter(|| {
            let r: ApiVersionsResponse =
                decode_message(black_box(&av_bytes), API_VERSIONS_V).expect("decode");
            black_box(r)
        })
    });
    g.bench_function("kafka_protocol", |b| {
        b.iter(|| {
            let mut buf = black_box(&av_b).clone();
            black_box(k::ApiVersionsResponse::decode(&mut buf, API_VERSIONS_V).expect("d"))
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
