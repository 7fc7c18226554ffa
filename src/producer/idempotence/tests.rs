//! The idempotence state machine alone, without batches: identity, sequences and Java's
//! epoch-bump rules.

use super::*;

const ID: ProducerIdentity = ProducerIdentity {
    producer_id: 7,
    producer_epoch: 3,
};

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

fn with_id() -> Idempotence {
    let mut i = Idempotence::new();
    i.set_identity(ID);
    i
}

#[test]
fn no_identity_until_one_is_set() {
    let mut i = Idempotence::new();
    assert_eq!(i.identity(), None);
    assert!(!i.is_idempotent());
    i.set_identity(ProducerIdentity::NONE);
    assert_eq!(i.identity(), Some(ProducerIdentity::NONE));
    assert!(!i.is_idempotent());
    // Without idempotence nothing is numbered and nothing is bumped.
    assert_eq!(i.assign(&tp(0), ProducerIdentity::NONE, 5), -1);
    i.request_epoch_bump(&tp(0));
    assert!(!i.epoch_bump_required());
    assert_eq!(i.identity(), Some(ProducerIdentity::NONE));
}

#[test]
fn sequences_count_records_per_partition_and_wrap_at_i32_max() {
    let mut i = with_id();
    let id = i.identity().unwrap();
    assert!(i.prepare(&tp(0), id, &[], false).is_none());
    assert_eq!(i.assign(&tp(0), id, 5), 0);
    assert_eq!(i.assign(&tp(0), id, 2), 5);
    assert_eq!(i.assign(&tp(1), id, 1), 0);
    assert_eq!((i.next_sequence(&tp(0)), i.next_sequence(&tp(1))), (7, 1));
    // Java's DefaultRecordBatch.incrementSequence wraps to 0 past Integer.MAX_VALUE.
    let mut w = with_id();
    assert_eq!(w.assign(&tp(0), id, i32::MAX), 0);
    assert_eq!(w.assign(&tp(0), id, 2), i32::MAX);
    assert_eq!(w.next_sequence(&tp(0)), 1);
}

#[test]
fn a_rejected_sequence_bumps_the_epoch_and_rewrites_only_that_partition() {
    let mut i = with_id();
    let id = i.identity().unwrap();
    for p in 0..2 {
        i.prepare(&tp(p), id, &[], false);
        i.assign(&tp(p), id, 4);
    }
    let batch = InFlight {
        identity: id,
        reset: false,
        oldest: true,
    };
    i.on_outcome(&tp(0), &BatchOutcome::RetryWithNewEpoch, Some(batch), 0);
    assert!(i.epoch_bump_required());
    let bumped = i.identity().unwrap();
    assert_eq!(
        bumped,
        ProducerIdentity {
            producer_epoch: 4,
            ..ID
        }
    );
    // Partition 0's in-flight batch of 4 is rewritten from 0: the next batch starts at 4.
    assert_eq!(i.prepare(&tp(0), bumped, &[4], true), Some(vec![0]));
    assert_eq!(i.assign(&tp(0), bumped, 1), 4);
    // Partition 1 still has its old-epoch batch in flight: untouched until it settles.
    assert!(i.prepare(&tp(1), bumped, &[4], false).is_none());
    assert_eq!(i.next_sequence(&tp(1)), 4);
    i.on_outcome(&tp(1), &BatchOutcome::Written(Some(0)), Some(batch), 4);
    assert!(i.prepare(&tp(1), bumped, &[], false).is_none());
    assert_eq!(
        i.assign(&tp(1), bumped, 1),
        0,
        "restarts at 0 under the new epoch"
    );
}

#[test]
fn a_batch_already_reset_under_the_current_epoch_is_retried_as_is() {
    let mut i = with_id();
    i.request_epoch_bump(&tp(0));
    let bumped = i.identity().unwrap();
    let reset = InFlight {
        identity: bumped,
        reset: true,
        oldest: true,
    };
    i.on_outcome(&tp(0), &BatchOutcome::RetryWithNewEpoch, Some(reset), 0);
    assert!(
        !i.epoch_bump_required(),
        "Java: sequenceHasBeenReset → retry"
    );
    // Reset under an older epoch: bumped again.
    let old = InFlight {
        identity: ID,
        reset: true,
        oldest: true,
    };
    i.on_outcome(&tp(0), &BatchOutcome::RetryWithNewEpoch, Some(old), 0);
    assert!(i.epoch_bump_required());
    // No batch in flight: nothing to rewrite, no bump.
    let mut j = with_id();
    j.on_outcome(&tp(0), &BatchOutcome::RetryWithNewEpoch, None, 0);
    assert!(!j.epoch_bump_required());
}

#[test]
fn a_failed_batch_leaves_a_gap_so_the_epoch_is_bumped() {
    let mut i = with_id();
    let batch = InFlight {
        identity: ID,
        reset: false,
        oldest: true,
    };
    i.on_outcome(
        &tp(0),
        &BatchOutcome::Failed(BrokerErrorKind::MessageTooLarge),
        Some(batch),
        0,
    );
    assert!(!i.epoch_bump_required(), "no records settled: no gap");
    i.on_outcome(
        &tp(0),
        &BatchOutcome::Failed(BrokerErrorKind::MessageTooLarge),
        Some(batch),
        3,
    );
    assert!(i.epoch_bump_required());
    i.on_outcome(
        &tp(1),
        &BatchOutcome::Retry { refresh: true },
        Some(batch),
        0,
    );
    assert_eq!(i.identity().unwrap().producer_epoch, 4);
    // An expired batch that may have been written bumps as well.
    i.on_expired(&tp(1));
    assert_eq!(i.identity().unwrap().producer_epoch, 5);
}

#[test]
fn the_epoch_at_its_maximum_asks_for_a_new_producer_id() {
    let mut i = Idempotence::new();
    i.set_identity(ProducerIdentity {
        producer_id: 9,
        producer_epoch: i16::MAX,
    });
    i.request_epoch_bump(&tp(0));
    assert_eq!(i.identity(), None, "a new InitProducerId is due");
    i.set_identity(ID);
    assert_eq!(i.identity(), Some(ID));
}

#[test]
fn a_new_identity_cancels_a_pending_bump_and_renumbers_idle_partitions() {
    let mut i = with_id();
    let id = i.identity().unwrap();
    i.prepare(&tp(0), id, &[], false);
    i.assign(&tp(0), id, 10);
    i.request_epoch_bump(&tp(0));
    let next = ProducerIdentity {
        producer_id: 7,
        producer_epoch: 9,
    };
    // An EndTxn (transaction version 2) handing a new epoch replaces the bump.
    i.set_identity(next);
    assert!(!i.epoch_bump_required());
    assert_eq!(i.identity(), Some(next));
    i.prepare(&tp(0), next, &[], false);
    assert_eq!(i.assign(&tp(0), next, 1), 0);
    i.forget(&tp(0));
    assert_eq!(i.next_sequence(&tp(0)), 0);
    i.clear_identity();
    assert_eq!(i.identity(), None);
}

#[test]
fn classification_follows_java() {
    use BrokerErrorKind as K;
    assert_eq!(classify(K::None, 5), BatchOutcome::Written(Some(5)));
    assert_eq!(
        classify(K::DuplicateSequenceNumber, -1),
        BatchOutcome::Written(None)
    );
    for k in [K::OutOfOrderSequenceNumber, K::UnknownProducerId] {
        assert_eq!(classify(k, -1), BatchOutcome::RetryWithNewEpoch);
    }
    assert_eq!(
        classify(K::NotLeaderOrFollower, -1),
        BatchOutcome::Retry { refresh: true }
    );
    assert_eq!(
        classify(K::InvalidProducerEpoch, -1),
        BatchOutcome::Failed(K::InvalidProducerEpoch)
    );
}

#[test]
fn a_rejected_sequence_behind_an_unsettled_batch_is_a_plain_retry() {
    // Java's canRetry: OUT_OF_ORDER_SEQUENCE_NUMBER for a batch that is not the next
    // sequence (an earlier one is still unsettled) is retried without a bump.
    let mut i = with_id();
    let id = i.identity().unwrap();
    let behind = InFlight {
        identity: id,
        reset: false,
        oldest: false,
    };
    i.on_outcome(&tp(0), &BatchOutcome::RetryWithNewEpoch, Some(behind), 0);
    assert!(!i.epoch_bump_required());
    let oldest = InFlight {
        oldest: true,
        ..behind
    };
    i.on_outcome(&tp(0), &BatchOutcome::RetryWithNewEpoch, Some(oldest), 0);
    assert!(i.epoch_bump_required());
}

#[test]
fn a_restart_rewrites_every_batch_in_flight_once_none_awaits_an_answer() {
    let mut i = with_id();
    let id = i.identity().unwrap();
    i.prepare(&tp(0), id, &[], false);
    for records in [3, 2, 5] {
        i.assign(&tp(0), id, records);
    }
    i.request_epoch_bump(&tp(0));
    let bumped = i.identity().unwrap();
    // One of them still awaits an answer (or the oldest may be written): not yet.
    assert_eq!(i.prepare(&tp(0), bumped, &[3, 2, 5], false), None);
    assert_eq!(i.next_sequence(&tp(0)), 10);
    // Settled and rejected: renumbered 0, 3, 5 under the new epoch; the next one is 10.
    assert_eq!(
        i.prepare(&tp(0), bumped, &[3, 2, 5], true),
        Some(vec![0, 3, 5])
    );
    assert_eq!(i.assign(&tp(0), bumped, 1), 10);
    // Applied once.
    assert_eq!(i.prepare(&tp(0), bumped, &[3, 2, 5, 1], true), None);
}
