//! Idempotence as its own sans-IO state machine: the producer id and epoch batches are
//! stamped with, each partition's next sequence number, and Java's rules for what a
//! Produce answer does to them (`TransactionManager` of a non-transactional idempotent
//! producer: OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID, a batch that failed for good,
//! an epoch bump).
//!
//! ```text
//!   set_identity(id)                  InitProducerId answered (or NONE: no idempotence)
//!   identity()                        the identity for the next batches, after a bump
//!   prepare(tp, identity, in_flight,  before a partition is drained: restart its numbering
//!           settled)                  at 0 under a new epoch, rewriting rejected batches
//!   assign(tp, identity, records)     the base sequence of a newly sealed batch
//!   on_outcome(tp, outcome, batch)    a Produce answer: bump the epoch when Java does
//! ```
//!
//! No I/O, no clock: the [`Accumulator`](super::accumulator::Accumulator) owns one and asks it
//! at each step; the transactional layer ([`super::transaction`]) sets the identity its
//! InitProducerId and EndTxn answers give.

use std::collections::BTreeMap;

use crate::common::TopicPartition;
use crate::protocol::BrokerErrorKind;

/// The producer id and epoch batches are stamped with (`-1`/`-1` without idempotence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerIdentity {
    /// The producer id from InitProducerId.
    pub producer_id: i64,
    /// Its epoch.
    pub producer_epoch: i16,
}

impl ProducerIdentity {
    /// No idempotence: batches carry no producer id and no sequence.
    pub const NONE: ProducerIdentity = ProducerIdentity {
        producer_id: -1,
        producer_epoch: -1,
    };

    /// Whether this identity numbers its batches (a real producer id).
    pub fn is_idempotent(self) -> bool {
        self.producer_id >= 0
    }
}

/// What an answer for one partition's in-flight batch means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchOutcome {
    /// Written (or already written: a duplicate sequence); the base offset if known.
    Written(Option<i64>),
    /// Send the same batch again (after a metadata refresh when `refresh` is set).
    Retry {
        /// The leader may have moved.
        refresh: bool,
    },
    /// The broker rejected the batch's sequence (OUT_OF_ORDER_SEQUENCE_NUMBER: a gap) or has
    /// no state of this producer (UNKNOWN_PRODUCER_ID): the batch was not written; it goes
    /// again under a bumped epoch from sequence 0.
    RetryWithNewEpoch,
    /// The batch failed for good; its records are lost to this producer.
    Failed(BrokerErrorKind),
}

/// Classifies a Produce partition error for an idempotent (or plain) batch, following
/// Java's `Sender`/`TransactionManager` rules as far as a non-transactional producer needs.
pub fn classify(kind: BrokerErrorKind, base_offset: i64) -> BatchOutcome {
    match kind {
        BrokerErrorKind::None => BatchOutcome::Written((base_offset >= 0).then_some(base_offset)),
        // The broker already has this batch: a retry of a batch whose answer was lost.
        BrokerErrorKind::DuplicateSequenceNumber => BatchOutcome::Written(None),
        BrokerErrorKind::OutOfOrderSequenceNumber | BrokerErrorKind::UnknownProducerId => {
            BatchOutcome::RetryWithNewEpoch
        }
        BrokerErrorKind::NotLeaderOrFollower
        | BrokerErrorKind::UnknownTopicOrPartition
        | BrokerErrorKind::LeaderNotAvailable
        | BrokerErrorKind::FencedLeaderEpoch
        | BrokerErrorKind::UnknownLeaderEpoch => BatchOutcome::Retry { refresh: true },
        k if k.is_retriable() => BatchOutcome::Retry { refresh: false },
        // INVALID_PRODUCER_EPOCH included: the batch fails and the epoch is bumped (Java).
        k => BatchOutcome::Failed(k),
    }
}

/// What [`Idempotence::on_outcome`] needs of the batch an answer was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    /// The identity it was stamped with.
    pub identity: ProducerIdentity,
    /// Its sequence was already restarted at 0 under a bumped epoch (Java's
    /// `sequenceHasBeenReset`).
    pub reset: bool,
    /// Every batch of its partition before it is settled (Java's `isNextSequence`): a
    /// rejected sequence is a real gap only then.
    pub oldest: bool,
}

/// One partition's numbering.
#[derive(Debug, Default, Clone)]
struct PartitionSequence {
    next_sequence: i32,
    /// The identity `next_sequence` counts under (`None`: nothing numbered yet).
    numbered_as: Option<ProducerIdentity>,
    /// Restart numbering at 0 under the next epoch, rewriting the in-flight batches (Java's
    /// `partitionsToRewriteSequences`).
    rewrite: bool,
    /// The producer id a batch of this partition was last written under: the broker keeps
    /// state of that producer for the partition.
    written_as: Option<i64>,
}

/// The idempotent producer's state: identity, epoch bumps and per-partition sequences. See
/// the module docs.
#[derive(Debug, Default)]
pub struct Idempotence {
    /// The identity new batches are stamped with (`None`: ask the broker for one).
    identity: Option<ProducerIdentity>,
    /// Bump the epoch before the next drain (Java's `epochBumpRequired`).
    epoch_bump_required: bool,
    partitions: BTreeMap<TopicPartition, PartitionSequence>,
    /// A transactional producer never bumps its epoch itself: its transaction coordinator
    /// does (InitProducerId after an abort, or EndTxn with transaction version 2).
    transactional: bool,
}

impl Idempotence {
    /// No identity yet: the producer must ask for one.
    pub fn new() -> Self {
        Self::default()
    }

    /// The identity batches are stamped with, after any pending epoch bump; `None` means
    /// the producer needs one (InitProducerId, or [`ProducerIdentity::NONE`] without
    /// idempotence).
    pub fn identity(&mut self) -> Option<ProducerIdentity> {
        self.bump_epoch_if_needed();
        self.identity
    }

    /// The identity in use, without applying a pending epoch bump.
    pub fn current_identity(&self) -> Option<ProducerIdentity> {
        self.identity
    }

    /// Sets the identity (from InitProducerId, an EndTxn that bumped the epoch, or
    /// [`ProducerIdentity::NONE`]). Partitions number from 0 under it once nothing of the
    /// old identity is in flight.
    pub fn set_identity(&mut self, identity: ProducerIdentity) {
        self.identity = Some(identity);
        self.epoch_bump_required = false;
    }

    /// Makes this a transactional producer's state: no local epoch bumps (a failed batch
    /// fails the transaction instead, and the coordinator hands out the next epoch).
    pub fn set_transactional(&mut self, on: bool) {
        self.transactional = on;
    }

    /// Forgets the identity: the next batches wait for a new one.
    pub fn clear_identity(&mut self) {
        self.identity = None;
        self.epoch_bump_required = false;
    }

    /// Whether batches are numbered (the identity is a real producer id).
    pub fn is_idempotent(&self) -> bool {
        self.identity.is_some_and(ProducerIdentity::is_idempotent)
    }

    /// Whether an epoch bump waits for the next [`identity`](Self::identity) call.
    pub fn epoch_bump_required(&self) -> bool {
        self.epoch_bump_required
    }

    /// Java's `bumpIdempotentProducerEpoch`: epoch + 1, or no identity at all (a new
    /// producer id) once the epoch cannot grow.
    fn bump_epoch_if_needed(&mut self) {
        if !std::mem::take(&mut self.epoch_bump_required) {
            return;
        }
        self.identity = match self.identity {
            Some(i) if i.producer_epoch < i16::MAX && i.is_idempotent() => Some(ProducerIdentity {
                producer_epoch: i.producer_epoch + 1,
                ..i
            }),
            Some(i) if !i.is_idempotent() => Some(i),
            _ => None,
        };
        log::debug!("producer epoch bumped: now {:?}", self.identity);
    }

    /// Asks for an epoch bump that restarts `tp` at sequence 0, rewriting its in-flight
    /// batch (nothing without idempotence).
    pub fn request_epoch_bump(&mut self, tp: &TopicPartition) {
        if !self.is_idempotent() || self.transactional {
            return;
        }
        self.partitions.entry(tp.clone()).or_default().rewrite = true;
        self.epoch_bump_required = true;
    }

    /// Readies `tp` for a drain under `identity` (what [`identity`](Self::identity)
    /// returned). `in_flight` holds the record counts of its batches in flight, oldest first;
    /// `settled` says none of them awaits an answer and the oldest was rejected (so none was
    /// written). A pending restart is applied then: the partition numbers from 0 under
    /// `identity`, and the base sequences its in-flight batches must be rewritten with are
    /// returned (`Some`, empty when none is in flight). Once nothing of an old epoch is in
    /// flight, the partition numbers from 0 under the new one too (Java's
    /// `maybeUpdateProducerIdAndEpoch`).
    pub fn prepare(
        &mut self,
        tp: &TopicPartition,
        identity: ProducerIdentity,
        in_flight: &[i32],
        settled: bool,
    ) -> Option<Vec<i32>> {
        if !identity.is_idempotent() {
            return None;
        }
        let q = match self.partitions.get_mut(tp) {
            Some(q) => q,
            None => self.partitions.entry(tp.clone()).or_default(),
        };
        if q.rewrite && settled && !self.epoch_bump_required {
            q.rewrite = false;
            q.numbered_as = Some(identity);
            let mut bases = Vec::with_capacity(in_flight.len());
            let mut next = 0i32;
            for records in in_flight {
                bases.push(next);
                next = next.wrapping_add(*records) & i32::MAX;
            }
            q.next_sequence = next;
            return (!in_flight.is_empty()).then_some(bases);
        }
        if in_flight.is_empty() && q.numbered_as != Some(identity) {
            q.numbered_as = Some(identity);
            q.next_sequence = 0;
        }
        None
    }

    /// Whether several batches of `tp` may be in flight under `identity`: only once one was
    /// written under its producer id. A broker with no state of a producer takes any first
    /// sequence (Kafka's `ProducerAppendInfo.checkSequence`), so if the first batch failed
    /// (a new partition's NOT_LEADER_OR_FOLLOWER) while the second was written, the first
    /// would be rejected and rewritten after it: the partition's order would be lost.
    pub fn may_pipeline(&self, tp: &TopicPartition, identity: ProducerIdentity) -> bool {
        !identity.is_idempotent()
            || self
                .partitions
                .get(tp)
                .is_some_and(|q| q.written_as == Some(identity.producer_id))
    }

    /// Whether `tp` waits to restart its numbering under a new epoch (its rejected batches
    /// are not resent under the old one meanwhile).
    pub fn rewrite_pending(&self, tp: &TopicPartition) -> bool {
        self.partitions.get(tp).is_some_and(|q| q.rewrite)
    }

    /// The base sequence of a new batch of `records` for `tp` under `identity` (`-1`
    /// without idempotence); advances the partition's sequence.
    pub fn assign(&mut self, tp: &TopicPartition, identity: ProducerIdentity, records: i32) -> i32 {
        if !identity.is_idempotent() {
            return -1;
        }
        let q = match self.partitions.get_mut(tp) {
            Some(q) => q,
            None => self.partitions.entry(tp.clone()).or_default(),
        };
        let base = q.next_sequence;
        q.next_sequence = q.next_sequence.wrapping_add(records) & i32::MAX;
        base
    }

    /// Applies Java's rules to an answer for `tp`'s in-flight `batch`:
    /// a rejected sequence of the partition's oldest batch bumps the epoch and rewrites the
    /// batches (unless it was already rewritten under the current epoch: then it is retried
    /// as is); for a later batch it is a plain retry (Java's `canRetry`: the gap may close);
    /// a batch that failed for good leaves a gap, so the epoch is bumped too. `settled` is the record count the
    /// answer settled (a failed batch with records leaves a gap).
    pub fn on_outcome(
        &mut self,
        tp: &TopicPartition,
        outcome: &BatchOutcome,
        batch: Option<InFlight>,
        settled: usize,
    ) {
        match outcome {
            BatchOutcome::Retry { .. } => {}
            BatchOutcome::Written(_) => {
                if let Some(b) = batch.filter(|b| b.identity.is_idempotent()) {
                    self.partitions.entry(tp.clone()).or_default().written_as =
                        Some(b.identity.producer_id);
                }
            }
            BatchOutcome::RetryWithNewEpoch => {
                let already_reset =
                    batch.is_some_and(|b| b.reset && Some(b.identity) == self.identity);
                if batch.is_some_and(|b| b.oldest) && !already_reset {
                    self.request_epoch_bump(tp);
                }
            }
            BatchOutcome::Failed(_) => {
                if settled > 0 {
                    self.request_epoch_bump(tp);
                }
            }
        }
    }

    /// A batch of `tp` that may have been written was given up on (its delivery timeout):
    /// the partition restarts at 0 under a bumped epoch.
    pub fn on_expired(&mut self, tp: &TopicPartition) {
        self.request_epoch_bump(tp);
    }

    /// Forgets `tp`'s numbering and pending rewrite: for batches dropped unsent (an aborted
    /// transaction) under an identity that is replaced before the next batch.
    pub fn forget(&mut self, tp: &TopicPartition) {
        self.partitions.remove(tp);
    }

    /// The next sequence of `tp` (for tests and diagnostics).
    pub fn next_sequence(&self, tp: &TopicPartition) -> i32 {
        self.partitions.get(tp).map_or(0, |q| q.next_sequence)
    }
}

#[cfg(test)]
mod tests;
