//! Idempotence as its own sans-IO state machine: the producer id and epoch batches are
//! stamped with, each partition's next sequence number, and Java's rules for what a
//! Produce answer does to them (`TransactionManager` of a non-transactional idempotent
//! producer: OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID, a batch that failed for good,
//! an epoch bump).
//!
//! ```text
//!   set_identity(id)                  InitProducerId answered (or NONE: no idempotence)
//!   identity()                        the identity for the next batches, after a bump
//!   prepare(tp, identity, in_flight)  before a partition is drained: restart its numbering
//!                                     at 0 under a new epoch, rewriting a rejected batch
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
}

/// One partition's numbering.
#[derive(Debug, Default, Clone)]
struct PartitionSequence {
    next_sequence: i32,
    /// The identity `next_sequence` counts under (`None`: nothing numbered yet).
    numbered_as: Option<ProducerIdentity>,
    /// Restart numbering at 0 under the next epoch, rewriting the in-flight batch (Java's
    /// `partitionsToRewriteSequences`).
    rewrite: bool,
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
    /// returned). `in_flight` is the record count of its in-flight batch, if any. Returns
    /// `true` when that batch must be rewritten from sequence 0 under `identity` (it was
    /// rejected, so resending it cannot duplicate it); once nothing of an old epoch is in
    /// flight, the partition numbers from 0 under the new one (Java's
    /// `maybeUpdateProducerIdAndEpoch`).
    pub fn prepare(
        &mut self,
        tp: &TopicPartition,
        identity: ProducerIdentity,
        in_flight: Option<i32>,
    ) -> bool {
        if !identity.is_idempotent() {
            return false;
        }
        let q = match self.partitions.get_mut(tp) {
            Some(q) => q,
            None => self.partitions.entry(tp.clone()).or_default(),
        };
        let mut rewrite = false;
        if q.rewrite {
            q.rewrite = false;
            q.numbered_as = Some(identity);
            q.next_sequence = 0;
            if let Some(records) = in_flight {
                rewrite = true;
                q.next_sequence = records;
            }
        }
        if in_flight.is_none() && q.numbered_as != Some(identity) {
            q.numbered_as = Some(identity);
            q.next_sequence = 0;
        }
        rewrite
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
    /// a rejected sequence bumps the epoch and rewrites the batch (unless it was already
    /// rewritten under the current epoch: then it is retried as is); a batch that failed for
    /// good leaves a gap, so the epoch is bumped too. `settled` is the record count the
    /// answer settled (a failed batch with records leaves a gap).
    pub fn on_outcome(
        &mut self,
        tp: &TopicPartition,
        outcome: &BatchOutcome,
        batch: Option<InFlight>,
        settled: usize,
    ) {
        match outcome {
            BatchOutcome::Retry { .. } | BatchOutcome::Written(_) => {}
            BatchOutcome::RetryWithNewEpoch => {
                let already_reset =
                    batch.is_some_and(|b| b.reset && Some(b.identity) == self.identity);
                if batch.is_some() && !already_reset {
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
