//! Issue 15: record-batch decode speed against `kafka-protocol` on the SAME bytes.
//!
//! A Fetch-sized blob (20 batches of 500 records: 16-byte keys, 100-byte values, one header)
//! is encoded once by this crate, uncompressed and lz4. Before anything is measured, both
//! decoders must read the same record count and the same key/value/header byte totals.
//! Both sides do the same work per record: touch key, value and headers. kafka-protocol
//! decodes from `bytes::Bytes` into owned `Record`s (ref-counted slices, a header map per
//! record; lz4 through the C `lz4` crate); this crate indexes each batch once and hands out
//! borrowed records (lz4 through pure-Rust `lz4_flex`).
//!
//! `cargo bench --bench records -- --warm-up-time 1 --measurement-time 3`

// criterion_group!/criterion_main! generate undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafka_protocol::records::RecordBatchDecoder;
use kafka_streams_group::protocol::records::{
    BatchBuilder, BatchReader, Compression, DecodeLimits, Header, RecordSpec,
};

const BATCHES: usize = 20;
const PER_BATCH: usize = 500;

fn blob(codec: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    for b in 0..BATCHES {
        let mut builder = BatchBuilder::new(codec)
            .base_offset((b * PER_BATCH) as i64)
            .producer(4242, 0, (b * PER_BATCH) as i32);
        for i in 0..PER_BATCH {
            let n = b * PER_BATCH + i;
            let key = format!("user-{n:011}");
            let value = format!(
                "{{\"id\":{n},\"name\":\"customer {n}\",\"amount\":{}.{:02},\"pad\":\"{}\"}}",
                n % 997,
                n % 100,
                "x".repeat(40)
            );
            let value = &value.as_bytes()[..100.min(value.len())];
            let trace = n.to_be_bytes();
            let headers = [Header {
                key: b"trace",
                value: Some(&trace),
            }];
            builder
                .push(
                    &RecordSpec::new(
                        Some(key.as_bytes()),
                        Some(value),
                        1_700_000_000_000 + n as i64,
                    )
                    .with_headers(&headers),
                )
                .expect("record");
        }
        builder.finish(&mut out).expect("batch");
    }
    out
}

/// (records, key+value+header-value bytes) as this crate reads them.
fn ours(wire: &[u8]) -> (usize, usize) {
    let limits = DecodeLimits::default();
    let (mut n, mut bytes) = (0, 0);
    for raw in BatchReader::new(wire) {
        let batch = raw.expect("valid").decode(&limits).expect("decodes");
        for r in batch.records() {
            n += 1;
            bytes += r.key.map_or(0, <[u8]>::len) + r.value.map_or(0, <[u8]>::len);
            bytes += r
                .headers()
                .map(|h| h.value.map_or(0, <[u8]>::len))
                .sum::<usize>();
        }
    }
    (n, bytes)
}

/// The same, as kafka-protocol reads them.
fn theirs(wire: &Bytes) -> (usize, usize) {
    let mut buf = wire.clone();
    let sets = RecordBatchDecoder::decode_all(&mut buf).expect("kafka-protocol decodes");
    let (mut n, mut bytes) = (0, 0);
    for set in &sets {
        for r in &set.records {
            n += 1;
            bytes +=
                r.key.as_ref().map_or(0, |b| b.len()) + r.value.as_ref().map_or(0, |b| b.len());
            bytes += r
                .headers
                .values()
                .map(|v| v.as_ref().map_or(0, |b| b.len()))
                .sum::<usize>();
        }
    }
    (n, bytes)
}

fn bench(c: &mut Criterion) {
    for codec in [Compression::None, Compression::Lz4] {
        let wire = blob(codec);
        let shared = Bytes::from(wire.clone());
        let a = ours(&wire);
        let b = theirs(&shared);
        assert_eq!(a, b, "{codec}: the decoders disagree on the same bytes");
        assert_eq!(a.0, BATCHES * PER_BATCH);
        let mut g = c.benchmark_group(format!("record_batch_decode/{codec}"));
        g.throughput(Throughput::Elements(a.0 as u64));
        g.bench_function("crate", |bn| bn.iter(|| ours(black_box(&wire))));
        g.bench_function("kafka-protocol", |bn| {
            bn.iter(|| theirs(black_box(&shared)))
        });
        g.finish();
        eprintln!(
            "record_batch_decode/{codec}: {} bytes on the wire, {} records",
            wire.len(),
            a.0
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
