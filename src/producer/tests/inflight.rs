//! Several batches of a partition in flight (`max.in.flight.requests.per.connection`):
//! sequences assigned at drain, Java's ordering of retries, OUT_OF_ORDER_SEQUENCE_NUMBER
//! behind an unsettled batch, and the epoch bump that rewrites what is in flight.

use std::time::Instant;

use super::{acc, header, rec, tp, ID};
use crate::producer::accumulator::*;
use crate::producer::idempotence::InFlight;

/// Records that the broker has state of producer `ID` for partition `p` (a batch of it was
/// written), so that several batches may be in flight.
fn known_to_broker(a: &mut Accumulator, p: i32) {
    let written = InFlight {
        identity: ID,
        reset: false,
        oldest: true,
    };
    a.idempotence_mut()
        .on_outcome(&tp(p), &BatchOutcome::Written(None), Some(written), 1);
}

/// An accumulator allowing 5 in flight with `batches` full batches of one record each
/// queued for partition 0 (and `batches` for partition 1 when `two`).
fn queued(batches: usize, two: bool) -> (Accumulator, Instant) {
    let mut a = acc(60, 1_000);
    a.set_max_in_flight(5);
    let now = Instant::now();
    known_to_broker(&mut a, 0);
    known_to_broker(&mut a, 1);
    for i in 0..batches {
        for p in 0..1 + i32::from(two) {
            a.append(&tp(p), &rec(&[i as u8; 40]), 5, now).unwrap();
        }
    }
    (a, now)
}

/// The batches drained for partition 0, one drain at a time, until a drain has none.
fn drain_p0(a: &mut Accumulator, now: Instant) -> Vec<SealedBatch> {
    let mut out = Vec::new();
    loop {
        let d = a.drain(now, true).unwrap();
        let mine: Vec<_> = d.into_iter().filter(|(t, _)| *t == tp(0)).collect();
        if mine.is_empty() {
            return out;
        }
        assert_eq!(
            mine.len(),
            1,
            "one batch per partition per drain (per request)"
        );
        out.extend(mine.into_iter().map(|(_, b)| b));
    }
}

#[test]
fn up_to_five_batches_of_a_partition_go_with_consecutive_sequences() {
    let (mut a, now) = queued(7, false);
    let first = drain_p0(&mut a, now);
    let seqs: Vec<i32> = first.iter().map(|b| header(b).2).collect();
    assert_eq!(seqs, [0, 1, 2, 3, 4], "five in flight, numbered at drain");
    assert!(a.drain(now, true).unwrap().is_empty(), "the sixth waits");
    // The oldest is written: one more may go, continuing the numbering.
    assert_eq!(
        a.complete_batch(&tp(0), first[0].id, &BatchOutcome::Written(Some(0))),
        1
    );
    let next = drain_p0(&mut a, now);
    assert_eq!(next.iter().map(|b| header(b).2).collect::<Vec<_>>(), [5]);
}

#[test]
fn with_one_in_flight_a_partition_waits_for_each_answer() {
    let (mut a, now) = queued(3, false);
    a.set_max_in_flight(1);
    assert_eq!(drain_p0(&mut a, now).len(), 1);
    assert!(a.drain(now, true).unwrap().is_empty());
}

/// Java: a retried batch goes again alone, with the same bytes and sequence, once every
/// batch before it is settled; no new batch of its partition goes before it.
#[test]
fn a_retry_goes_first_and_alone_with_its_bytes() {
    let (mut a, now) = queued(6, false);
    let b = drain_p0(&mut a, now);
    assert_eq!(b.len(), 5);
    a.complete_batch(&tp(0), b[0].id, &BatchOutcome::Retry { refresh: true });
    // 1..4 still await answers; the oldest goes again at once, nothing new goes.
    let again = drain_p0(&mut a, now);
    assert_eq!(again.len(), 1);
    assert_eq!((again[0].id, &again[0].bytes), (b[0].id, &b[0].bytes));
    assert_eq!(again[0].attempts, 2);
    // Batch 1 meets a gap (batch 0 not written yet): a plain retry, no epoch bump; it
    // waits while batch 0 is unsettled.
    a.complete_batch(&tp(0), b[1].id, &BatchOutcome::RetryWithNewEpoch);
    assert!(!a.idempotence().epoch_bump_required());
    assert!(drain_p0(&mut a, now).is_empty());
    a.complete_batch(&tp(0), b[2].id, &BatchOutcome::Retry { refresh: false });
    a.complete_batch(&tp(0), b[0].id, &BatchOutcome::Written(Some(0)));
    // Now batch 1 is the oldest: it goes, alone (batch 2 waits for it).
    let again = drain_p0(&mut a, now);
    assert_eq!(again.iter().map(|b| b.id).collect::<Vec<_>>(), [b[1].id]);
    assert_eq!(header(&again[0]).2, 1, "same sequence");
    a.complete_batch(&tp(0), b[1].id, &BatchOutcome::Written(None));
    // Batch 2 goes again; with no retry left and 4 in flight, the sixth batch follows it.
    let again = drain_p0(&mut a, now);
    assert_eq!(again.len(), 2);
    assert_eq!((again[0].id, header(&again[0]).2), (b[2].id, 2));
    assert_eq!(header(&again[1]).2, 5);
}

/// OUT_OF_ORDER_SEQUENCE_NUMBER for the oldest batch is a real gap: the epoch is bumped,
/// and once none of the partition's batches awaits an answer all of them are rewritten
/// from sequence 0 under the new epoch (none was written), then resent one by one.
#[test]
fn a_gap_at_the_oldest_batch_rewrites_every_batch_in_flight_under_a_new_epoch() {
    let (mut a, now) = queued(3, false);
    let b = drain_p0(&mut a, now);
    a.complete_batch(&tp(0), b[0].id, &BatchOutcome::RetryWithNewEpoch);
    assert!(a.idempotence().epoch_bump_required());
    // Batches 1 and 2 still await answers: nothing is rewritten or resent yet.
    assert!(drain_p0(&mut a, now).is_empty());
    let bumped = a.current_identity().unwrap();
    assert_eq!(bumped.producer_epoch, ID.producer_epoch + 1);
    a.complete_batch(&tp(0), b[1].id, &BatchOutcome::RetryWithNewEpoch);
    assert!(drain_p0(&mut a, now).is_empty(), "batch 2 still awaits");
    a.complete_batch(&tp(0), b[2].id, &BatchOutcome::RetryWithNewEpoch);
    let first = drain_p0(&mut a, now);
    assert_eq!(first.len(), 1, "the rewritten batches go one by one");
    let (pid, epoch, seq, _) = header(&first[0]);
    assert_eq!((pid, epoch, seq, first[0].reset), (7, 4, 0, true));
    a.complete_batch(&tp(0), first[0].id, &BatchOutcome::Written(Some(0)));
    let second = drain_p0(&mut a, now);
    assert_eq!(header(&second[0]).1..=header(&second[0]).1, 4..=4);
    assert_eq!((second[0].id, header(&second[0]).2), (b[1].id, 1));
    // A second gap on a batch already rewritten under this epoch: retried as is.
    a.complete_batch(&tp(0), second[0].id, &BatchOutcome::RetryWithNewEpoch);
    assert!(!a.idempotence().epoch_bump_required());
}

/// A batch that failed for good leaves a gap: the batches behind it (rejected by the
/// broker) are rewritten from 0 under a bumped epoch.
#[test]
fn a_failed_batch_restarts_the_batches_behind_it() {
    let (mut a, now) = queued(3, false);
    let b = drain_p0(&mut a, now);
    let failed = BatchOutcome::Failed(crate::protocol::BrokerErrorKind::MessageTooLarge);
    assert_eq!(a.complete_batch(&tp(0), b[0].id, &failed), 1);
    assert!(a.idempotence().epoch_bump_required());
    for x in &b[1..] {
        a.complete_batch(&tp(0), x.id, &BatchOutcome::RetryWithNewEpoch);
    }
    let d = drain_p0(&mut a, now);
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].id, header(&d[0]).1, header(&d[0]).2), (b[1].id, 4, 0));
    assert_eq!(a.outstanding(), 2);
}

/// After an epoch bump, a partition whose batches in flight carry the old epoch sends no
/// new batch until they are settled (Java's `hasStaleProducerIdAndEpoch`); then it numbers
/// from 0 under the new epoch.
#[test]
fn a_partition_moves_to_a_new_epoch_only_once_its_batches_in_flight_settle() {
    let (mut a, now) = queued(3, true);
    let d = a.drain(now, true).unwrap();
    assert_eq!(d.len(), 2);
    let p1 = d.iter().find(|(t, _)| *t == tp(1)).unwrap().1.clone();
    let p0 = d.iter().find(|(t, _)| *t == tp(0)).unwrap().1.clone();
    a.complete_batch(&tp(0), p0.id, &BatchOutcome::RetryWithNewEpoch);
    let d = a.drain(now, true).unwrap();
    assert_eq!(d.iter().map(|(t, _)| t.partition).collect::<Vec<_>>(), [0]);
    assert_eq!(header(&d[0].1).1, 4, "partition 0 rewritten under epoch 4");
    assert!(
        !a.drain(now, true).unwrap().iter().any(|(t, _)| *t == tp(1)),
        "partition 1 has an epoch-3 batch in flight"
    );
    a.complete_batch(&tp(1), p1.id, &BatchOutcome::Written(Some(0)));
    let d = a.drain(now, true).unwrap();
    let (_, b) = d.iter().find(|(t, _)| *t == tp(1)).unwrap();
    assert_eq!((header(b).1, header(b).2), (4, 0));
}

/// An answer for a batch no longer in flight (expired, or dropped by an abort) settles
/// nothing.
#[test]
fn an_answer_for_a_batch_no_longer_in_flight_is_ignored() {
    let (mut a, now) = queued(2, false);
    let b = drain_p0(&mut a, now);
    let expired = a.expire(
        now + std::time::Duration::from_secs(10),
        std::time::Duration::from_secs(5),
    );
    assert_eq!(expired.iter().map(|e| e.records).sum::<usize>(), 2);
    assert_eq!(
        a.complete_batch(&tp(0), b[0].id, &BatchOutcome::Written(Some(0))),
        0
    );
    assert_eq!(a.outstanding(), 0);
}

/// Until a batch of a partition is written under the producer id, only one goes: a broker
/// with no state of the producer takes any first sequence, so a second batch written while
/// the first failed (a new partition's NOT_LEADER_OR_FOLLOWER) would put the first after it.
#[test]
fn one_batch_goes_alone_until_the_broker_knows_the_producer() {
    let mut a = acc(60, 1_000);
    a.set_max_in_flight(5);
    let now = Instant::now();
    for i in 0..4u8 {
        a.append(&tp(0), &rec(&[i; 40]), 5, now).unwrap();
    }
    let first = drain_p0(&mut a, now);
    assert_eq!(first.len(), 1, "the first batch alone");
    a.complete_batch(&tp(0), first[0].id, &BatchOutcome::Retry { refresh: true });
    assert_eq!(drain_p0(&mut a, now).len(), 1, "its retry, alone");
    a.complete_batch(&tp(0), first[0].id, &BatchOutcome::Written(Some(0)));
    assert_eq!(drain_p0(&mut a, now).len(), 3, "then the rest together");
    // A new producer id (not a bumped epoch): alone again.
    a.set_identity(ProducerIdentity {
        producer_id: 9,
        producer_epoch: 0,
    });
    for i in 0..3u8 {
        a.append(&tp(1), &rec(&[i; 40]), 5, now).unwrap();
    }
    let d = a.drain(now, true).unwrap();
    assert_eq!(d.iter().filter(|(t, _)| *t == tp(1)).count(), 1);
    assert!(a.drain(now, true).unwrap().iter().all(|(t, _)| *t != tp(1)));
}
