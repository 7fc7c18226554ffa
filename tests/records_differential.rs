//! Differential tests of the record-batch codec against an independent implementation,
//! `kafka-protocol`'s `RecordBatchEncoder`/`RecordBatchDecoder` (with its own gzip, snappy,
//! lz4 and zstd bindings): batches it writes decode here to the same records, and batches
//! written here decode there to the same records, for every codec.

use bytes::{Bytes, BytesMut};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression as KpCompression, Record as KpRecord, RecordBatchDecoder, RecordBatchEncoder,
    RecordEncodeOptions, TimestampType as KpTimestampType,
};
use kafka_streams_group::protocol::records::{
    BatchBuilder, BatchReader, Compression, DecodeLimits, Header, RecordSpec,
};
use rand::{rngs::StdRng, Rng, RngCore, SeedableRng};

/// One record as both sides see it; header keys are unique (kafka-protocol keeps them in a map).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rec {
    offset: i64,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Option<Vec<u8>>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Batch {
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    records: Vec<Rec>,
}

fn kp(c: Compression) -> KpCompression {
    match c {
        Compression::None => KpCompression::None,
        Compression::Gzip => KpCompression::Gzip,
        Compression::Snappy => KpCompression::Snappy,
        Compression::Lz4 => KpCompression::Lz4,
        Compression::Zstd => KpCompression::Zstd,
    }
}

fn bytes(rng: &mut StdRng) -> Option<Vec<u8>> {
    if rng.random_ratio(1, 8) {
        return None;
    }
    let n = match rng.random_range(0..30) {
        0 => 70_000,
        i => [0, 1, 7, 100, 2000][i % 5],
    };
    let mut v: Vec<u8> = (0..n).map(|i| (i % 13) as u8 + b'a').collect();
    if rng.random_bool(0.5) {
        rng.fill_bytes(&mut v);
    }
    Some(v)
}

fn gen(rng: &mut StdRng) -> Batch {
    let base_offset = rng.random_range(0..1i64 << 40);
    let base_ts = rng.random_range(0..1i64 << 41);
    let n = rng.random_range(1..40);
    let idempotent = rng.random_bool(0.7);
    Batch {
        producer_id: if idempotent {
            rng.random_range(0..1 << 40)
        } else {
            -1
        },
        producer_epoch: if idempotent {
            rng.random_range(0..i16::MAX)
        } else {
            -1
        },
        base_sequence: if idempotent {
            rng.random_range(0..1 << 30)
        } else {
            -1
        },
        transactional: idempotent && rng.random_bool(0.3),
        records: (0..n)
            .map(|i| Rec {
                offset: base_offset + i,
                // kafka-protocol bases timestamps on the minimum; keep the first the minimum so
                // both encoders agree on the base.
                timestamp: base_ts + i * rng.random_range(0..1000),
                key: bytes(rng),
                value: bytes(rng),
                headers: (0..rng.random_range(0..4))
                    .map(|h| (format!("h{h}-ü"), bytes(rng)))
                    .collect(),
            })
            .collect(),
    }
}

fn encode_kp(b: &Batch, codec: Compression) -> Vec<u8> {
    let recs: Vec<KpRecord> = b
        .records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut k = KpRecord {
                transactional: b.transactional,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: -1,
                producer_id: b.producer_id,
                producer_epoch: b.producer_epoch,
                timestamp_type: KpTimestampType::Creation,
                offset: r.offset,
                sequence: if b.base_sequence < 0 {
                    -1
                } else {
                    b.base_sequence + i as i32
                },
                timestamp: r.timestamp,
                key: r.key.clone().map(Bytes::from),
                value: r.value.clone().map(Bytes::from),
                headers: Default::default(),
            };
            for (hk, hv) in &r.headers {
                k.headers.insert(
                    StrBytes::from_string(hk.clone()),
                    hv.clone().map(Bytes::from),
                );
            }
            k
        })
        .collect();
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: kp(codec),
    };
    RecordBatchEncoder::encode(&mut buf, &recs, &opts).expect("kafka-protocol encodes");
    buf.to_vec()
}

fn encode_ours(b: &Batch, codec: Compression) -> Vec<u8> {
    let mut builder = BatchBuilder::new(codec)
        .base_offset(b.records[0].offset)
        .producer(b.producer_id, b.producer_epoch, b.base_sequence)
        .transactional(b.transactional);
    for r in &b.records {
        let headers: Vec<Header<'_>> = r
            .headers
            .iter()
            .map(|(k, v)| Header {
                key: k.as_bytes(),
                value: v.as_deref(),
            })
            .collect();
        builder
            .push(
                &RecordSpec::new(r.key.as_deref(), r.value.as_deref(), r.timestamp)
                    .with_headers(&headers),
            )
            .unwrap();
    }
    let mut out = Vec::new();
    builder.finish(&mut out).unwrap();
    out
}

/// Reads every batch of `wire` (kafka-protocol writes one batch per record when there is no
/// producer sequence); the producer fields come from the first batch.
fn decode_ours(wire: &[u8]) -> Batch {
    let mut reader = BatchReader::new(wire);
    let mut out: Option<Batch> = None;
    for raw in reader.by_ref() {
        let raw = raw.expect("valid batch");
        let h = raw.header;
        let batch = raw.decode(&DecodeLimits::default()).expect("decodes");
        let b = out.get_or_insert_with(|| Batch {
            producer_id: h.producer_id,
            producer_epoch: h.producer_epoch,
            base_sequence: h.base_sequence,
            transactional: h.attributes.transactional,
            records: Vec::new(),
        });
        b.records.extend(batch.records().map(|r| {
            Rec {
                offset: r.offset,
                timestamp: r.timestamp,
                key: r.key.map(<[u8]>::to_vec),
                value: r.value.map(<[u8]>::to_vec),
                headers: r
                    .headers()
                    .map(|h| (h.key_str().into_owned(), h.value.map(<[u8]>::to_vec)))
                    .collect(),
            }
        }));
    }
    assert!(reader.remainder().is_empty(), "trailing bytes");
    out.expect("at least one batch")
}

fn decode_kp(wire: &[u8]) -> Batch {
    let mut buf = Bytes::copy_from_slice(wire);
    let set = RecordBatchDecoder::decode(&mut buf).expect("kafka-protocol decodes");
    let first = &set.records[0];
    let base_sequence = first.sequence;
    Batch {
        producer_id: first.producer_id,
        producer_epoch: first.producer_epoch,
        base_sequence,
        transactional: first.transactional,
        records: set
            .records
            .iter()
            .map(|r| Rec {
                offset: r.offset,
                timestamp: r.timestamp,
                key: r.key.as_ref().map(|b| b.to_vec()),
                value: r.value.as_ref().map(|b| b.to_vec()),
                headers: r
                    .headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.as_ref().map(|b| b.to_vec())))
                    .collect(),
            })
            .collect(),
    }
}

#[test]
fn kafka_protocol_batches_decode_here_and_ours_decode_there() {
    let mut rng = StdRng::seed_from_u64(0x6b70_6469_6666);
    let mut checked = 0;
    for round in 0..30 {
        for codec in Compression::ALL {
            let b = gen(&mut rng);
            let theirs = encode_kp(&b, codec);
            assert_eq!(
                decode_ours(&theirs),
                b,
                "round {round} {codec}: kafka-protocol → crate"
            );
            let ours = encode_ours(&b, codec);
            assert_eq!(
                decode_kp(&ours),
                b,
                "round {round} {codec}: crate → kafka-protocol"
            );
            if codec == Compression::None && b.producer_id >= 0 {
                assert_eq!(ours, theirs, "round {round}: uncompressed bytes differ");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 150);
}
