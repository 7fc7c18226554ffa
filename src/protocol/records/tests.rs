//! Unit tests of the record layer: round trips, every attribute, hostile input.

use super::*;

fn hdr<'a>(k: &'a [u8], v: Option<&'a [u8]>) -> Header<'a> {
    Header { key: k, value: v }
}

fn one(wire: &[u8]) -> RawBatch<'_> {
    let mut r = BatchReader::new(wire);
    let b = r.next().expect("a batch").expect("valid");
    assert!(r.next().is_none());
    b
}

fn sample(builder: BatchBuilder, big: &[u8]) -> Vec<u8> {
    let h = [
        hdr(b"a", Some(b"1")),
        hdr(b"", None),
        hdr(b"\xff", Some(b"")),
    ];
    let recs = [
        RecordSpec::new(Some(b"k0"), Some(b"v0"), 1_000).with_headers(&h),
        RecordSpec::new(None, Some(b""), 999),
        RecordSpec::new(Some(b""), None, 5_000),
        RecordSpec::new(Some(b"big"), Some(big), -1),
    ];
    let mut out = Vec::new();
    encode_batch(&mut out, builder, &recs).unwrap();
    out
}

#[test]
fn round_trip_every_codec_and_attribute() {
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    for codec in Compression::ALL {
        for (tx, ts) in [
            (false, TimestampType::CreateTime),
            (true, TimestampType::LogAppendTime),
        ] {
            let b = BatchBuilder::new(codec)
                .producer(42, 3, 100)
                .transactional(tx)
                .timestamp_type(ts)
                .base_offset(1_000)
                .partition_leader_epoch(9);
            let wire = sample(b, &big);
            let raw = one(&wire);
            let h = raw.header;
            assert_eq!(h.size_in_bytes(), wire.len());
            assert_eq!(
                (h.base_offset, h.partition_leader_epoch, h.magic),
                (1_000, 9, 2)
            );
            assert_eq!(
                (h.producer_id, h.producer_epoch, h.base_sequence),
                (42, 3, 100)
            );
            assert_eq!((h.records_count, h.last_offset_delta), (4, 3));
            assert_eq!((h.base_timestamp, h.max_timestamp), (1_000, 5_000));
            assert_eq!(h.next_offset(), 1_004);
            assert_eq!(h.attributes.compression, codec);
            assert_eq!(h.attributes.transactional, tx);
            assert_eq!(h.attributes.timestamp_type, ts);
            assert!(!h.attributes.control);
            let batch = raw.decode(&DecodeLimits::default()).unwrap();
            assert_eq!(batch.is_borrowed(), codec == Compression::None);
            let rs: Vec<_> = batch.records().collect();
            assert_eq!(rs.len(), 4);
            let offsets: Vec<_> = rs.iter().map(|r| r.offset).collect();
            assert_eq!(offsets, [1_000, 1_001, 1_002, 1_003]);
            let seqs: Vec<_> = rs.iter().map(|r| r.sequence).collect();
            assert_eq!(seqs, [100, 101, 102, 103]);
            let stamps: Vec<_> = rs.iter().map(|r| r.timestamp).collect();
            if ts == TimestampType::CreateTime {
                assert_eq!(stamps, [1_000, 999, 5_000, -1]);
            } else {
                assert_eq!(stamps, [5_000; 4]);
            }
            assert_eq!(
                (rs[0].key, rs[0].value),
                (Some(&b"k0"[..]), Some(&b"v0"[..]))
            );
            assert_eq!((rs[1].key, rs[1].value), (None, Some(&b""[..])));
            assert_eq!((rs[2].key, rs[2].value), (Some(&b""[..]), None));
            assert_eq!(rs[3].value, Some(&big[..]));
            let hs: Vec<_> = rs[0].headers().collect();
            assert_eq!(hs.len(), 3);
            assert_eq!(hs[0], hdr(b"a", Some(b"1")));
            assert_eq!(hs[1], hdr(b"", None));
            assert_eq!(hs[2].key_str(), "\u{fffd}");
            assert_eq!(rs[1].headers().len(), 0);
        }
    }
}

#[test]
fn compression_shrinks_repetitive_data() {
    let big = vec![b'x'; 100_000];
    let plain = sample(BatchBuilder::new(Compression::None), &big).len();
    for codec in &Compression::ALL[1..] {
        let n = sample(BatchBuilder::new(*codec), &big).len();
        assert!(n < plain / 10, "{codec}: {n} vs {plain}");
    }
}

#[test]
fn sequences_wrap_like_java() {
    let mut wire = Vec::new();
    let recs = [RecordSpec::new(None, None, 0); 3];
    encode_batch(
        &mut wire,
        BatchBuilder::new(Compression::None).producer(1, 0, i32::MAX - 1),
        &recs,
    )
    .unwrap();
    let b = one(&wire).decode(&DecodeLimits::default()).unwrap();
    let seqs: Vec<_> = b.records().map(|r| r.sequence).collect();
    assert_eq!(seqs, [i32::MAX - 1, i32::MAX, 0]);
}

#[test]
fn several_batches_and_a_partial_tail() {
    let mut wire = Vec::new();
    for i in 0..3 {
        let recs = [RecordSpec::new(None, Some(b"v"), i)];
        encode_batch(
            &mut wire,
            BatchBuilder::new(Compression::Gzip).base_offset(i),
            &recs,
        )
        .unwrap();
    }
    let full = wire.len();
    for cut in 0..=full {
        let mut r = BatchReader::new(&wire[..cut]);
        let n = r.by_ref().inspect(|b| assert!(b.is_ok())).count();
        let sizes = full / 3;
        assert_eq!(n, cut / sizes, "cut {cut}");
        assert_eq!(r.remainder().len(), cut % sizes);
    }
}

#[test]
fn magic_0_and_1_are_a_typed_error() {
    let wire = sample(BatchBuilder::new(Compression::None).base_offset(77), b"x");
    for magic in [0u8, 1, 3] {
        let mut w = wire.clone();
        w[16] = magic;
        let mut r = BatchReader::new(&w);
        let err = r.next().unwrap().unwrap_err();
        assert_eq!(
            err,
            RecordsError::UnsupportedMagic {
                base_offset: 77,
                magic: magic as i8
            }
        );
        assert!(err.to_string().contains("magic"));
        assert!(r.next().is_none(), "the reader stops after an error");
    }
}

#[test]
fn every_flipped_bit_is_caught_by_the_crc_or_the_framing() {
    let wire = sample(
        BatchBuilder::new(Compression::Lz4).producer(1, 1, 1),
        b"payload",
    );
    for i in 0..wire.len() {
        for bit in 0..8 {
            let mut w = wire.clone();
            w[i] ^= 1 << bit;
            let items: Vec<_> = BatchReader::new(&w).collect();
            match i {
                // base offset is outside the CRC; partition leader epoch too (the broker
                // rewrites it), exactly as in Java.
                0..=7 | 12..=15 => {
                    let b = items[0].as_ref().unwrap();
                    b.decode(&DecodeLimits::default()).unwrap();
                }
                // length: too short, too long (partial) or impossible.
                8..=11 => assert!(items.iter().all(|b| b.is_err()) || items.len() <= 1),
                _ => assert!(
                    items.iter().any(|b| b.is_err()) || items.is_empty(),
                    "byte {i} bit {bit} went unnoticed"
                ),
            }
        }
    }
}

#[test]
fn truncated_and_garbage_records_never_panic() {
    let wire = sample(BatchBuilder::new(Compression::None), b"0123456789");
    // Re-CRC each damaged copy so the record decoder itself is exercised.
    for i in BATCH_HEADER_LEN - 4..wire.len() {
        for v in [0u8, 0x7f, 0x80, 0xff, 1] {
            let mut w = wire.clone();
            w[i] = v;
            let crc = crc32c::crc32c(&w[21..]);
            w[17..21].copy_from_slice(&crc.to_be_bytes());
            if let Some(Ok(raw)) = BatchReader::new(&w).next() {
                if let Ok(b) = raw.decode(&DecodeLimits::default()) {
                    for r in b.records() {
                        let _ = r.headers().count();
                    }
                }
            }
        }
    }
}

#[test]
fn record_count_mismatch_is_an_error() {
    let mut wire = sample(BatchBuilder::new(Compression::None), b"v");
    for count in [3i32, 5, 1_000_000, -1] {
        let mut w = wire.clone();
        w[57..61].copy_from_slice(&count.to_be_bytes());
        let crc = crc32c::crc32c(&w[21..]);
        w[17..21].copy_from_slice(&crc.to_be_bytes());
        let r = BatchReader::new(&w)
            .next()
            .unwrap()
            .and_then(|b| b.decode(&DecodeLimits::default()).map(|_| ()));
        assert!(
            matches!(
                r,
                Err(RecordsError::InvalidRecord { .. }) | Err(RecordsError::Malformed { .. })
            ),
            "{count}: {r:?}"
        );
    }
    wire.truncate(wire.len() - 1);
    assert!(BatchReader::new(&wire).next().is_none());
}

#[test]
fn decompression_bombs_are_bounded() {
    let zeros = vec![0u8; 4 << 20];
    let limits = DecodeLimits {
        max_decompressed_bytes: 1 << 20,
    };
    for codec in &Compression::ALL[1..] {
        let mut wire = Vec::new();
        let recs = [RecordSpec::new(None, Some(&zeros), 0)];
        encode_batch(&mut wire, BatchBuilder::new(*codec), &recs).unwrap();
        assert!(wire.len() < 512 << 10, "{codec}: {}", wire.len());
        let err = one(&wire).decode(&limits).unwrap_err();
        assert_eq!(
            err,
            RecordsError::DecompressedTooLarge {
                base_offset: 0,
                codec: *codec,
                limit: 1 << 20
            }
        );
        one(&wire).decode(&DecodeLimits::default()).unwrap();
    }
}

#[test]
fn snappy_reads_bare_blocks_as_java_does() {
    let body = b"records section".repeat(10);
    let bare = snap::raw::Encoder::new().compress_vec(&body).unwrap();
    assert_eq!(snappy::decompress(&bare, 1 << 20).ok(), Some(body.clone()));
    let mut framed = Vec::new();
    snappy::compress(&body, &mut framed).unwrap();
    assert!(framed.starts_with(&snappy::XERIAL_HEADER));
    assert_eq!(snappy::decompress(&framed, 1 << 20).ok(), Some(body));
}

fn control_batch(out: &mut Vec<u8>, offset: i64, pid: i64, kind: ControlRecordType) {
    let key = ControlRecord::key_bytes(kind);
    let value = ControlRecord::marker_value_bytes(5);
    let recs = [RecordSpec::new(Some(&key), Some(&value), 0)];
    let b = BatchBuilder::new(Compression::None)
        .producer(pid, 0, -1)
        .transactional(true)
        .control(true)
        .base_offset(offset);
    encode_batch(out, b, &recs).unwrap();
}

fn tx_batch(out: &mut Vec<u8>, offset: i64, pid: i64, value: &[u8]) {
    let recs = [RecordSpec::new(None, Some(value), 0)];
    let b = BatchBuilder::new(Compression::Snappy)
        .producer(pid, 0, 0)
        .transactional(true)
        .base_offset(offset);
    encode_batch(out, b, &recs).unwrap();
}

#[test]
fn read_committed_skips_aborted_data_and_markers() {
    // pid 1 aborts at 0..2, pid 2 commits 1..3, pid 1 again (committed) 4..5.
    let mut wire = Vec::new();
    tx_batch(&mut wire, 0, 1, b"aborted-1");
    tx_batch(&mut wire, 1, 2, b"committed-2");
    control_batch(&mut wire, 2, 1, ControlRecordType::Abort);
    control_batch(&mut wire, 3, 2, ControlRecordType::Commit);
    tx_batch(&mut wire, 4, 1, b"committed-1");
    control_batch(&mut wire, 5, 1, ControlRecordType::Commit);
    let aborted = [AbortedTransaction {
        producer_id: 1,
        first_offset: 0,
    }];
    let mut rc = ReadCommitted::new(aborted);
    let mut got = Vec::new();
    let mut verdicts = Vec::new();
    let mut uncommitted = Vec::new();
    for raw in BatchReader::new(&wire) {
        let raw = raw.unwrap();
        let v = rc.admit(&raw).unwrap();
        verdicts.push(v);
        let b = raw.decode(&DecodeLimits::default()).unwrap();
        if v == Admit::Deliver {
            got.extend(b.records().map(|r| r.value.unwrap().to_vec()));
        }
        if admit_uncommitted(&raw) == Admit::Deliver {
            uncommitted.extend(b.records().map(|r| r.value.unwrap().to_vec()));
        } else {
            let c = b.control_record().unwrap().unwrap();
            assert_eq!(c.coordinator_epoch, Some(5));
        }
    }
    assert_eq!(got, [&b"committed-2"[..], b"committed-1"]);
    assert_eq!(uncommitted.len(), 3);
    use Admit::*;
    assert_eq!(
        verdicts,
        [
            SkipAborted,
            Deliver,
            SkipControl,
            SkipControl,
            Deliver,
            SkipControl
        ]
    );
}

#[test]
fn encoder_refuses_empty_batches() {
    let mut out = vec![1, 2, 3];
    assert_eq!(
        BatchBuilder::new(Compression::Zstd).finish(&mut out),
        Err(RecordsError::EmptyBatch)
    );
    assert_eq!(out, [1, 2, 3]);
}

#[test]
fn size_estimate_tracks_the_uncompressed_batch() {
    let mut b = BatchBuilder::new(Compression::None);
    let r = RecordSpec::new(Some(b"key"), Some(b"value"), 123);
    let add = b.record_size(&r).unwrap();
    b.push(&r).unwrap();
    assert_eq!(b.size_estimate(), BATCH_HEADER_LEN + add);
    let mut out = Vec::new();
    b.clone().finish(&mut out).unwrap();
    assert_eq!(out.len(), b.size_estimate());
}
