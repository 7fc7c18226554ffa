//! Unit tests of the producer's pure core: batching, sequences, Java's epoch-bump rules and
//! the delivery timeout.

use std::time::{Duration, Instant};

use super::accumulator::*;
use crate::protocol::records::{BatchReader, Compression, DecodeLimits};
use crate::protocol::BrokerErrorKind;

mod inflight;

fn acc(batch_size: usize, linger_ms: u64) -> Accumulator {
    let mut a = Accumulator::new(BatchSettings {
        linger: Duration::from_millis(linger_ms),
        batch_size,
        compression: Compression::None,
        buffer_memory: 32 << 20,
    });
    a.set_identity(ID);
    a
}

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

const ID: ProducerIdentity = ProducerIdentity {
    producer_id: 7,
    producer_epoch: 3,
};

fn rec(v: &[u8]) -> ProducerRecord {
    ProducerRecord::new("t", Some(b"k"), Some(v))
}

/// (producer id, epoch, base sequence, values) of a sealed batch, CRC verified.
fn header(b: &SealedBatch) -> (i64, i16, i32, Vec<Vec<u8>>) {
    let raw = BatchReader::new(&b.bytes).next().unwrap().unwrap();
    let batch = raw
        .decode(&DecodeLimits::default())
        .expect("CRC and records valid");
    let values = batch
        .records()
        .map(|r| r.value.unwrap_or_default().to_vec())
        .collect();
    (
        raw.header.producer_id,
        raw.header.producer_epoch,
        raw.header.base_sequence,
        values,
    )
}

#[test]
fn batches_close_at_batch_size_and_sequences_follow_records() {
    let mut a = acc(200, 1_000);
    let now = Instant::now();
    let mut full = 0;
    for i in 0..10u8 {
        if a.append(&tp(0), &rec(&[i; 40]), 5, now).unwrap() {
            full += 1;
        }
    }
    assert!(full >= 2, "200-byte batches of ~50-byte records fill up");
    assert_eq!(a.outstanding(), 10);
    // Not flushing: only closed batches go, one per partition at a time.
    let first = a.drain(now, false).unwrap();
    assert_eq!(first.len(), 1);
    let b = &first[0].1;
    assert_eq!(b.base_sequence, 0);
    let (pid, epoch, _, _) = header(b);
    assert_eq!((pid, epoch), (7, 3));
    // Nothing else goes while it is in flight (one at most by default); a retry resends
    // the same bytes.
    assert!(!a.has_ready(now, true));
    assert!(a.drain(now, true).unwrap().is_empty());
    a.complete(&tp(0), &BatchOutcome::Retry { refresh: false });
    assert!(a.has_ready(now, false), "a retry is ready at once");
    let again = a.drain(now, true).unwrap();
    assert_eq!(again[0].1.bytes, b.bytes);
    assert_eq!(again[0].1.attempts, 2);
    let n = a.complete(&tp(0), &BatchOutcome::Written(Some(0)));
    assert_eq!(n, b.records as usize);
    // The next batch continues the sequence; a flush drains everything in order.
    let mut seq = b.records;
    let mut total = b.records;
    while a.outstanding() > 0 {
        let d = a.drain(now, true).unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].1.base_sequence, seq);
        assert_eq!(header(&d[0].1).3.len() as i32, d[0].1.records);
        seq += d[0].1.records;
        total += d[0].1.records;
        a.complete(&tp(0), &BatchOutcome::Written(None));
    }
    assert_eq!(total, 10);
    assert_eq!(a.next_sequence(&tp(0)), 10);
}

#[test]
fn linger_makes_an_open_batch_ready() {
    let mut a = acc(16_384, 50);
    let t0 = Instant::now();
    a.append(&tp(1), &rec(b"x"), 1, t0).unwrap();
    assert!(!a.has_ready(t0, false));
    assert_eq!(a.next_linger_expiry(), Some(t0 + Duration::from_millis(50)));
    assert!(a.has_ready(t0 + Duration::from_millis(50), false));
    assert!(a.has_ready(t0, true), "a flush does not wait for linger");
}

#[test]
fn a_record_larger_than_batch_size_gets_its_own_batch() {
    let mut a = acc(100, 0);
    a.set_identity(ProducerIdentity::NONE);
    let now = Instant::now();
    a.append(&tp(0), &rec(b"small"), 1, now).unwrap();
    a.append(&tp(0), &rec(&[0; 500]), 1, now).unwrap();
    a.append(&tp(0), &rec(b"after"), 1, now).unwrap();
    let mut sizes = Vec::new();
    while a.outstanding() > 0 {
        let d = a.drain(now, true).unwrap();
        assert_eq!(d[0].1.base_sequence, -1, "no idempotence, no sequence");
        sizes.push(d[0].1.records);
        a.complete(&tp(0), &BatchOutcome::Written(None));
    }
    assert_eq!(sizes, [1, 1, 1]);
}

#[test]
fn nothing_is_sent_without_an_identity() {
    let mut a = Accumulator::new(BatchSettings {
        linger: Duration::ZERO,
        batch_size: 1024,
        compression: Compression::None,
        buffer_memory: 32 << 20,
    });
    let now = Instant::now();
    a.append(&tp(0), &rec(b"v"), 1, now).unwrap();
    assert_eq!(a.identity(), None);
    assert!(a.drain(now, true).unwrap().is_empty());
    a.set_identity(ID);
    assert_eq!(a.drain(now, true).unwrap().len(), 1);
}

#[test]
fn classification_follows_java() {
    let cases = [
        (
            BrokerErrorKind::DuplicateSequenceNumber,
            BatchOutcome::Written(None),
        ),
        (BrokerErrorKind::None, BatchOutcome::Written(Some(42))),
        (
            BrokerErrorKind::NotLeaderOrFollower,
            BatchOutcome::Retry { refresh: true },
        ),
        (
            BrokerErrorKind::RequestTimedOut,
            BatchOutcome::Retry { refresh: false },
        ),
        (
            BrokerErrorKind::NotEnoughReplicas,
            BatchOutcome::Retry { refresh: false },
        ),
        (
            BrokerErrorKind::OutOfOrderSequenceNumber,
            BatchOutcome::RetryWithNewEpoch,
        ),
        (
            BrokerErrorKind::UnknownProducerId,
            BatchOutcome::RetryWithNewEpoch,
        ),
        (
            BrokerErrorKind::InvalidProducerEpoch,
            BatchOutcome::Failed(BrokerErrorKind::InvalidProducerEpoch),
        ),
        (
            BrokerErrorKind::MessageTooLarge,
            BatchOutcome::Failed(BrokerErrorKind::MessageTooLarge),
        ),
    ];
    for (kind, want) in cases {
        assert_eq!(classify(kind, 42), want, "{kind:?}");
    }
}

/// OUT_OF_ORDER_SEQUENCE_NUMBER (or UNKNOWN_PRODUCER_ID) on partition 0: the epoch goes up
/// by one, partition 0's rejected batch is resent with the same records from sequence 0
/// under it, and later batches continue from there; partition 1's in-flight batch (maybe
/// written) is resent unchanged under the old epoch and only its next batch moves, from 0.
#[test]
fn out_of_order_sequence_bumps_the_epoch_and_rewrites_only_that_partition() {
    for error in [
        BrokerErrorKind::OutOfOrderSequenceNumber,
        BrokerErrorKind::UnknownProducerId,
    ] {
        let mut a = acc(16_384, 0);
        let now = Instant::now();
        for p in 0..2 {
            for i in 0..3u8 {
                a.append(&tp(p), &rec(&[p as u8, i]), 1, now).unwrap();
            }
        }
        let d = a.drain(now, true).unwrap();
        assert_eq!(d.len(), 2);
        // Settle a first batch on both so that sequences are past 0.
        for p in 0..2 {
            a.complete(&tp(p), &BatchOutcome::Written(Some(0)));
            a.append(&tp(p), &rec(&[p as u8, 9]), 1, now).unwrap();
        }
        let d = a.drain(now, true).unwrap();
        assert!(d.iter().all(|(_, b)| b.base_sequence == 3));
        let p1_bytes = d[1].1.bytes.clone();
        let outcome = classify(error, -1);
        assert_eq!(a.complete(&tp(0), &outcome), 0, "{error:?}: not settled");
        assert_eq!(
            a.complete(&tp(1), &BatchOutcome::Retry { refresh: false }),
            0
        );
        let bumped = ProducerIdentity {
            producer_id: 7,
            producer_epoch: 4,
        };
        assert_eq!(a.identity(), Some(bumped));
        let d = a.drain(now, true).unwrap();
        let (pid, epoch, seq, values) = header(&d[0].1);
        assert_eq!((pid, epoch, seq), (7, 4, 0), "{error:?}: rewritten from 0");
        assert_eq!(values, [vec![0, 9]], "same records");
        assert!(d[0].1.reset);
        assert_eq!(d[1].1.bytes, p1_bytes, "partition 1 resends the same bytes");
        assert_eq!(header(&d[1].1).1, 3, "under the old epoch");
        // A second rejection of the rewritten batch is retried without another bump.
        a.complete(&tp(0), &outcome);
        a.complete(&tp(1), &BatchOutcome::Retry { refresh: false });
        assert_eq!(a.identity(), Some(bumped));
        assert_eq!(a.drain(now, true).unwrap().len(), 2, "both retried");
        for p in 0..2 {
            assert_eq!(a.complete(&tp(p), &BatchOutcome::Written(None)), 1);
        }
        for p in 0..2 {
            a.append(&tp(p), &rec(b"next"), 1, now).unwrap();
        }
        let d = a.drain(now, true).unwrap();
        let seqs: Vec<_> = d.iter().map(|(_, b)| header(b)).collect();
        assert_eq!(
            (seqs[0].1, seqs[0].2),
            (4, 1),
            "partition 0 continues after 0"
        );
        assert_eq!((seqs[1].1, seqs[1].2), (4, 0), "partition 1 restarts at 0");
        assert_eq!(a.outstanding(), 2);
    }
}

/// A batch that fails for good (MESSAGE_TOO_LARGE, INVALID_PRODUCER_EPOCH, ...) leaves a
/// gap: the epoch is bumped and that partition restarts at 0; other partitions lose
/// nothing (their in-flight batches are still sent).
#[test]
fn a_failed_batch_bumps_the_epoch_and_loses_nothing_else() {
    let mut a = acc(16_384, 0);
    let now = Instant::now();
    for p in 0..3 {
        a.append(&tp(p), &rec(b"v"), 1, now).unwrap();
    }
    let d = a.drain(now, false).unwrap();
    assert_eq!(d.len(), 3);
    assert!(d.iter().all(|(_, b)| b.base_sequence == 0));
    a.complete(&tp(0), &BatchOutcome::Written(None));
    a.append(&tp(0), &rec(b"w"), 1, now).unwrap();
    a.drain(now, false).unwrap();
    assert_eq!(
        a.complete(
            &tp(0),
            &BatchOutcome::Failed(BrokerErrorKind::InvalidProducerEpoch)
        ),
        1
    );
    assert_eq!(a.outstanding(), 2, "partitions 1 and 2 are still in flight");
    for p in 1..3 {
        a.complete(&tp(p), &BatchOutcome::Retry { refresh: false });
    }
    a.append(&tp(0), &rec(b"x"), 1, now).unwrap();
    let d = a.drain(now, false).unwrap();
    assert_eq!(d.len(), 3);
    let h: Vec<_> = d.iter().map(|(_, b)| header(b)).collect();
    assert_eq!((h[0].1, h[0].2), (4, 0), "partition 0: new epoch from 0");
    assert_eq!((h[1].1, h[1].2), (3, 0), "partition 1: its batch unchanged");
    assert_eq!((h[2].1, h[2].2), (3, 0));
}

/// Java resets the producer id instead of bumping an epoch at `i16::MAX`; until the new
/// id arrives nothing is sent, then the partition restarts at 0 under it.
#[test]
fn the_epoch_at_its_maximum_asks_for_a_new_producer_id() {
    let mut a = acc(16_384, 0);
    let max = ProducerIdentity {
        producer_id: 7,
        producer_epoch: i16::MAX,
    };
    a.set_identity(max);
    let now = Instant::now();
    a.append(&tp(0), &rec(b"v"), 1, now).unwrap();
    a.drain(now, true).unwrap();
    a.complete(&tp(0), &BatchOutcome::RetryWithNewEpoch);
    assert_eq!(a.identity(), None);
    assert!(a.drain(now, true).unwrap().is_empty());
    let fresh = ProducerIdentity {
        producer_id: 8,
        producer_epoch: 0,
    };
    a.set_identity(fresh);
    let d = a.drain(now, true).unwrap();
    let (pid, epoch, seq, values) = header(&d[0].1);
    assert_eq!((pid, epoch, seq, values), (8, 0, 0, vec![b"v".to_vec()]));
}

/// `delivery.timeout.ms`: batches older than the timeout fail, counted per partition; an
/// in-flight one (maybe written) bumps the epoch, queued ones leave no gap.
#[test]
fn the_delivery_timeout_fails_old_batches() {
    let mut a = acc(16_384, 0);
    let t0 = Instant::now();
    let timeout = Duration::from_secs(10);
    a.append(&tp(0), &rec(b"a"), 1, t0).unwrap();
    a.drain(t0, true).unwrap();
    a.note_retry(&tp(0), "NOT_ENOUGH_REPLICAS");
    a.append(&tp(0), &rec(b"b"), 1, t0 + Duration::from_secs(1))
        .unwrap();
    a.append(&tp(1), &rec(b"c"), 1, t0 + Duration::from_secs(5))
        .unwrap();
    assert!(a.expire(t0 + Duration::from_secs(9), timeout).is_empty());
    let e = a.expire(t0 + Duration::from_secs(12), timeout);
    assert_eq!(
        e,
        [Expired {
            tp: tp(0),
            records: 2,
            sent: true,
            attempts: 1,
            last_error: Some("NOT_ENOUGH_REPLICAS".into()),
        }]
    );
    assert_eq!(a.outstanding(), 1);
    assert_eq!(a.identity().map(|i| i.producer_epoch), Some(4), "bumped");
    // Partition 1's batch was never sealed: it expires without another bump.
    let e = a.expire(t0 + Duration::from_secs(15), timeout);
    assert_eq!(
        (e[0].tp.clone(), e[0].records, e[0].sent),
        (tp(1), 1, false)
    );
    assert_eq!(a.identity().map(|i| i.producer_epoch), Some(4));
    assert_eq!(a.outstanding(), 0);
    // Partition 0 goes on from sequence 0 under the new epoch.
    a.append(&tp(0), &rec(b"d"), 1, t0 + Duration::from_secs(16))
        .unwrap();
    let d = a.drain(t0 + Duration::from_secs(16), true).unwrap();
    let h = header(&d[0].1);
    assert_eq!((h.1, h.2), (4, 0));
}

fn with_memory(buffer_memory: usize) -> Accumulator {
    let mut a = Accumulator::new(BatchSettings {
        linger: Duration::from_secs(60),
        batch_size: 1024,
        compression: Compression::Lz4,
        buffer_memory,
    });
    a.set_identity(ID);
    a
}

/// `buffer.memory`: each batch counts its uncompressed size from its first record until it
/// is written, failed or expired; `room` asks a record to wait while the account is full
/// and refuses one larger than the limit for good.
#[test]
fn queued_bytes_follow_batches_until_acknowledged() {
    let mut a = with_memory(1_700);
    let now = Instant::now();
    assert_eq!(a.queued_bytes(), 0);
    let r = rec(&[1; 300]);
    assert_eq!(a.room(&r, 1).unwrap(), Room::Fits);
    a.append(&tp(0), &r, 1, now).unwrap();
    let one = a.queued_bytes();
    assert!(
        one > 300 && one < 400,
        "one record and a batch header: {one}"
    );
    a.append(&tp(1), &r, 1, now).unwrap();
    assert_eq!(a.queued_bytes(), 2 * one, "a second partition's batch");
    // Appending to an open batch adds the record only (no second header).
    a.append(&tp(0), &r, 1, now).unwrap();
    let three = a.queued_bytes();
    assert!(three > 2 * one + 300 && three < 3 * one, "{three}");
    // 1,700 bytes: a fourth 300-byte record could still go, a fifth could not.
    a.append(&tp(2), &r, 1, now).unwrap();
    let full = a.queued_bytes();
    match a.room(&r, 1).unwrap() {
        Room::Wait { queued, needed } => {
            assert_eq!(queued, full);
            assert!(
                queued + needed > 1_700 && needed >= one,
                "{queued} + {needed}"
            );
        }
        other => panic!("expected to wait: {other:?}"),
    }
    assert!(
        matches!(a.room(&rec(&[0; 1_700]), 1).unwrap(), Room::TooLarge { needed } if needed > 1_761),
        "a record larger than buffer.memory never fits (with its batch header)"
    );
    // Sealing (compression) does not change the account; the answer releases it.
    let d = a.drain(now, true).unwrap();
    assert_eq!(d.len(), 3);
    assert_eq!(a.queued_bytes(), full, "in flight still counts");
    a.complete(&tp(0), &BatchOutcome::Retry { refresh: false });
    assert_eq!(a.queued_bytes(), full, "a retry keeps the bytes");
    a.complete(&tp(0), &BatchOutcome::Written(Some(0)));
    assert_eq!(a.queued_bytes(), full - (three - 2 * one) - one);
    assert_eq!(
        a.room(&r, 1).unwrap(),
        Room::Fits,
        "the acknowledgement made room"
    );
    a.complete(
        &tp(1),
        &BatchOutcome::Failed(BrokerErrorKind::MessageTooLarge),
    );
    assert_eq!(a.queued_bytes(), one, "a failed batch is released too");
    // Expiry releases in-flight and pending batches alike.
    a.append(&tp(2), &r, 1, now).unwrap();
    assert_eq!(a.queued_bytes(), 2 * one);
    let e = a.expire(now + Duration::from_secs(10), Duration::from_secs(5));
    assert_eq!(e.iter().map(|e| e.records).sum::<usize>(), 2);
    assert_eq!(a.queued_bytes(), 0);
    assert_eq!(a.outstanding(), 0);
}

/// Whatever the record sizes, appending only what `room` lets in keeps the account within
/// `buffer.memory`, and settling every batch brings it back to 0.
#[test]
fn room_keeps_the_account_within_buffer_memory() {
    let limit = 5_000;
    let mut a = with_memory(limit);
    let now = Instant::now();
    let mut waited = 0;
    for i in 0..2_000usize {
        let r = ProducerRecord::new("t", Some(&[i as u8; 3]), Some(&vec![7; (i * 37) % 900]))
            .header(b"h", (i % 2 == 0).then_some(&b"v"[..]));
        let ts = 1_700_000_000_000 + (i as i64 * 7_919) % 1_000_000;
        match a.room(&r, ts).unwrap() {
            Room::Fits => {
                a.append(&tp((i % 4) as i32), &r, ts, now).unwrap();
            }
            Room::Wait { .. } => {
                waited += 1;
                // Settle one partition's batches, as acknowledgements would.
                for b in a.drain(now, true).unwrap() {
                    a.complete(&b.0, &BatchOutcome::Written(None));
                }
            }
            Room::TooLarge { .. } => panic!("900 bytes fit in 5,000"),
        }
        assert!(a.queued_bytes() <= limit, "{} > {limit}", a.queued_bytes());
    }
    assert!(waited > 10, "the limit was reached: {waited}");
    while a.outstanding() > 0 {
        for b in a.drain(now, true).unwrap() {
            a.complete(&b.0, &BatchOutcome::Written(None));
        }
    }
    assert_eq!(a.queued_bytes(), 0);
}
