//! The producer's pure core: per-partition batching (`linger.ms`, `batch.size`), idempotent
//! sequences and what a Produce answer does to a batch. No I/O and no clock: every call that
//! needs the time takes `now`.
//!
//! Each partition has a FIFO of batches. The newest one is open (records are encoded into it
//! as they arrive); older ones are closed. Up to `max.in.flight.requests.per.connection`
//! batches per partition are in flight ([`Accumulator::set_max_in_flight`], 1 by default),
//! each sealed with its sequence when drained, at most one per partition per drain (one per
//! Produce request, as Java's `RecordAccumulator.drain`). Ordering is Java's
//! (`Sender`/`TransactionManager` with idempotence): a batch to retry goes again with the same
//! bytes and base sequence, only once every batch before it is settled, and no new batch of
//! its partition goes before it; the broker's idempotence check turns a resend of an already
//! written batch into `DUPLICATE_SEQUENCE_NUMBER` (or the original offset), never a second
//! copy. An OUT_OF_ORDER_SEQUENCE_NUMBER for a batch behind an unsettled one is a plain
//! retry (the gap may still close); for the oldest one it is a real gap.
//!
//! Producer id, epoch and sequence numbers are [`super::idempotence`]'s, a state machine of
//! its own the accumulator consults at each step. When a partition's sequence has a gap or
//! the broker lost the producer's state, it does what Java's idempotent producer does (`TransactionManager`, non-transactional): it
//! bumps the epoch locally (a new producer id once the epoch is `i16::MAX`) and restarts
//! *that* partition's numbering at 0, rewriting its in-flight batches once none of them
//! awaits an answer and the oldest was rejected (OUT_OF_ORDER_SEQUENCE_NUMBER,
//! UNKNOWN_PRODUCER_ID: not written, and nothing after a batch not written can be, so
//! resending them under the new epoch cannot duplicate). Other partitions move to the new
//! epoch, from sequence 0, once their in-flight batches are settled; until then those are
//! resent unchanged and no new batch of theirs goes (Java's `hasStaleProducerIdAndEpoch`).
//!
//! Every batch has a delivery deadline (`delivery.timeout.ms` from its creation, as in Java):
//! [`Accumulator::expire`] fails what passed it instead of retrying forever.
//!
//! The accumulator also keeps Java's `buffer.memory` account: the (uncompressed) bytes of
//! every batch not yet acknowledged or failed ([`Accumulator::queued_bytes`]).
//! [`Accumulator::room`] says whether a record fits now, must wait for acknowledgements, or
//! can never fit; the shell waits (`max.block.ms`) while it must.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::protocol::records::{
    BatchBuilder, Compression, Header, RecordSpec, RecordsError, BATCH_HEADER_LEN,
};

pub use super::idempotence::{classify, BatchOutcome, ProducerIdentity};
use super::idempotence::{Idempotence, InFlight};
use super::queues::Queues;
pub use crate::common::TopicPartition;

/// Batching settings of the accumulator.
#[derive(Debug, Clone, Copy)]
pub struct BatchSettings {
    /// `linger.ms`: how long an open batch waits for more records before it is ready.
    pub linger: Duration,
    /// `batch.size`: a batch is closed once its (uncompressed) size would pass this.
    pub batch_size: usize,
    /// `compression.type`.
    pub compression: Compression,
    /// `buffer.memory`: the most bytes (uncompressed batch sizes) queued and not yet
    /// acknowledged or failed.
    pub buffer_memory: usize,
}

/// Slack for the varints of a record's offset and timestamp deltas, which are 1 byte each
/// in an empty batch and at most 5 and 10 bytes in a fuller one.
const DELTA_SLACK: usize = 4 + 9;

/// The most a new batch's buffer is sized for up front (`batch.size` if smaller).
const MAX_RESERVE: usize = 1 << 20;

/// Whether a record fits in `buffer.memory` (see [`Accumulator::room`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Room {
    /// Append it now.
    Fits,
    /// Wait until acknowledgements (or failures) free `needed - (limit - queued)` bytes.
    Wait {
        /// Bytes queued now.
        queued: usize,
        /// Upper bound of the bytes the record takes.
        needed: usize,
    },
    /// The record is larger than `buffer.memory` itself: it can never be queued (Java's
    /// `RecordTooLargeException`).
    TooLarge {
        /// Upper bound of the bytes the record takes.
        needed: usize,
    },
}

/// One record as the application gave it (owned: `send` returns before it is written).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProducerRecord {
    /// The topic.
    pub topic: String,
    /// An explicit partition (changelogs), or `None` for the partitioner.
    pub partition: Option<i32>,
    /// The key, `None` for null.
    pub key: Option<Vec<u8>>,
    /// The value, `None` for null (a tombstone).
    pub value: Option<Vec<u8>>,
    /// Headers in order: key and nullable value.
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// Milliseconds since the epoch; `None` = the time of `send`.
    pub timestamp: Option<i64>,
}

impl ProducerRecord {
    /// A record for `topic` with `key` and `value`.
    pub fn new(topic: impl Into<String>, key: Option<&[u8]>, value: Option<&[u8]>) -> Self {
        ProducerRecord {
            topic: topic.into(),
            key: key.map(<[u8]>::to_vec),
            value: value.map(<[u8]>::to_vec),
            ..Default::default()
        }
    }

    /// The same record for an explicit partition.
    pub fn partition(mut self, partition: i32) -> Self {
        self.partition = Some(partition);
        self
    }

    /// The same record with one more header.
    pub fn header(mut self, key: &[u8], value: Option<&[u8]>) -> Self {
        self.headers.push((key.to_vec(), value.map(<[u8]>::to_vec)));
        self
    }

    /// The same record with an explicit timestamp (ms since the epoch).
    pub fn timestamp(mut self, ms: i64) -> Self {
        self.timestamp = Some(ms);
        self
    }
}

/// A batch being filled or waiting to be sent.
#[derive(Debug)]
struct Pending {
    builder: BatchBuilder,
    created: Instant,
    /// Closed: no more records go in (full, or a newer batch follows).
    closed: bool,
}

impl Pending {
    /// What the batch counts against `buffer.memory`: its uncompressed size.
    fn charged(&self) -> usize {
        self.builder.size_estimate()
    }
}

/// A batch with its bytes fixed: sequence assigned, compressed, CRC written.
#[derive(Debug, Clone)]
pub struct SealedBatch {
    /// Names the batch in [`Accumulator::complete_batch`] (unique in its accumulator).
    pub id: u64,
    /// The encoded batch (what goes into `PartitionProduceData::records`).
    pub bytes: Vec<u8>,
    /// Records in the batch.
    pub records: i32,
    /// Its first sequence (`-1` without idempotence).
    pub base_sequence: i32,
    /// Identity it was stamped with.
    pub identity: ProducerIdentity,
    /// Sends so far (1 after the first).
    pub attempts: u32,
    /// When its first record was appended: `delivery.timeout.ms` counts from here.
    pub created: Instant,
    /// Its sequence was restarted at 0 under a bumped epoch (Java's
    /// `sequenceHasBeenReset`): another OUT_OF_ORDER_SEQUENCE_NUMBER is retried as is.
    pub reset: bool,
    /// The last retriable error it met, for the delivery-timeout message.
    pub last_error: Option<String>,
}

/// A sealed batch of a partition, sent at least once and not settled.
#[derive(Debug)]
struct Flight {
    batch: SealedBatch,
    /// What it counts against `buffer.memory` (its size before sealing).
    charged: usize,
    /// Sent, its answer not yet applied.
    awaiting: bool,
    /// The broker refused its sequence (it was not written).
    rejected: bool,
}

#[derive(Debug, Default)]
struct PartitionQueue {
    pending: VecDeque<Pending>,
    /// Sealed batches not settled, in sequence order.
    in_flight: VecDeque<Flight>,
}

impl PartitionQueue {
    /// Some batch waits to be sent again.
    fn has_retry(&self) -> bool {
        self.in_flight.iter().any(|f| !f.awaiting)
    }

    /// The oldest batch waits to be sent again (the only one that may go: Java's
    /// `isNextSequence`).
    fn head_retry(&self) -> bool {
        self.in_flight.front().is_some_and(|f| !f.awaiting)
    }
}

/// Records of one partition that passed their `delivery.timeout.ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    /// The partition.
    pub tp: TopicPartition,
    /// Records given up on.
    pub records: usize,
    /// Whether one of the batches had been sent (it may have been written).
    pub sent: bool,
    /// Sends of the in-flight batch.
    pub attempts: u32,
    /// The last retriable error it met.
    pub last_error: Option<String>,
}

/// The per-partition accumulator. See the module docs.
#[derive(Debug)]
pub struct Accumulator {
    settings: BatchSettings,
    queues: Queues<PartitionQueue>,
    /// Closed pending batches (full, or followed by a newer one) in all queues: ready by
    /// size, so [`has_ready`](Self::has_ready) looks closer only when there is one.
    closed_pending: usize,
    /// In-flight batches waiting to be sent again (not awaiting an answer), all queues.
    retries: usize,
    /// No pending batch was created before this (a lower bound, made exact by `drain`):
    /// none is ready by `linger.ms` before `linger_floor + linger`.
    linger_floor: Option<Instant>,
    /// Records appended and not yet written or failed.
    outstanding: usize,
    /// Bytes of the batches not yet written or failed (the `buffer.memory` account).
    queued_bytes: usize,
    /// Producer id, epoch and sequences (see [`super::idempotence`]).
    idempotence: Idempotence,
    /// Seal batches as part of a transaction (the transactional bit of each batch).
    transactional: bool,
    /// Most batches of one partition in flight (`max.in.flight.requests.per.connection`).
    max_in_flight: usize,
    /// The id of the next sealed batch.
    next_batch_id: u64,
}

impl Accumulator {
    /// An empty accumulator.
    pub fn new(settings: BatchSettings) -> Self {
        Accumulator {
            settings,
            queues: Queues::default(),
            closed_pending: 0,
            retries: 0,
            linger_floor: None,
            outstanding: 0,
            queued_bytes: 0,
            idempotence: Idempotence::new(),
            transactional: false,
            max_in_flight: 1,
            next_batch_id: 0,
        }
    }

    /// Lets up to `n` batches of one partition be in flight (at least 1; Java's
    /// `max.in.flight.requests.per.connection`, at most 5 with idempotence: the broker
    /// remembers the last 5 batches of a producer to recognise a resend).
    pub fn set_max_in_flight(&mut self, n: usize) {
        self.max_in_flight = n.max(1);
    }

    /// Records appended and not yet acknowledged or failed.
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// Bytes queued and not yet acknowledged or failed: the uncompressed size of every
    /// pending and in-flight batch, what `buffer.memory` bounds.
    pub fn queued_bytes(&self) -> usize {
        self.queued_bytes
    }

    /// Whether `r` (with its resolved `timestamp`) can be appended without passing
    /// `buffer.memory`. The record is counted at an upper bound of what it adds: its
    /// encoded size, delta slack and a batch header (it may open a batch), so that
    /// [`queued_bytes`](Self::queued_bytes) never exceeds the limit after an append that
    /// [`Room::Fits`].
    pub fn room(&self, r: &ProducerRecord, timestamp: i64) -> Result<Room, RecordsError> {
        let headers = header_views(r);
        let spec =
            RecordSpec::new(r.key.as_deref(), r.value.as_deref(), timestamp).with_headers(&headers);
        self.room_spec(&spec)
    }

    /// [`room`](Self::room) for a borrowed record (`spec` holds its resolved timestamp).
    pub fn room_spec(&self, spec: &RecordSpec<'_>) -> Result<Room, RecordsError> {
        let needed = BATCH_HEADER_LEN
            + BatchBuilder::new(self.settings.compression).record_size(spec)?
            + DELTA_SLACK;
        let limit = self.settings.buffer_memory;
        Ok(if needed > limit {
            Room::TooLarge { needed }
        } else if self.queued_bytes.saturating_add(needed) > limit {
            Room::Wait {
                queued: self.queued_bytes,
                needed,
            }
        } else {
            Room::Fits
        })
    }

    /// The identity batches are stamped with, after any pending epoch bump; `None` means
    /// the producer needs one (InitProducerId, or [`ProducerIdentity::NONE`] without
    /// idempotence) before [`drain`](Self::drain) sends anything.
    pub fn identity(&mut self) -> Option<ProducerIdentity> {
        self.idempotence.identity()
    }

    /// The identity in use, without applying a pending epoch bump.
    pub fn current_identity(&self) -> Option<ProducerIdentity> {
        self.idempotence.current_identity()
    }

    /// Sets the identity (from InitProducerId, or [`ProducerIdentity::NONE`]).
    pub fn set_identity(&mut self, identity: ProducerIdentity) {
        self.idempotence.set_identity(identity);
    }

    /// The idempotence state machine (identity, epoch bumps, sequences).
    pub fn idempotence(&self) -> &Idempotence {
        &self.idempotence
    }

    /// The idempotence state machine, to change (the transactional layer sets the identity
    /// its InitProducerId and EndTxn answers give).
    pub fn idempotence_mut(&mut self) -> &mut Idempotence {
        &mut self.idempotence
    }

    /// Seals the next batches as transactional (or not); a transactional producer's epoch
    /// is bumped by its coordinator only.
    pub fn set_transactional(&mut self, on: bool) {
        self.transactional = on;
        self.idempotence.set_transactional(on);
    }

    /// Drops every queued and in-flight batch (an aborted transaction: the coordinator
    /// aborts whatever of them was written). Returns the records dropped and whether one of
    /// the batches had a sequence number (a gap in its partition's numbering).
    pub fn drop_all(&mut self) -> (usize, bool) {
        let mut sealed = false;
        let mut records = 0;
        for q in self.queues.values_mut() {
            for f in q.in_flight.drain(..) {
                sealed |= f.batch.base_sequence >= 0;
                records += f.batch.records as usize;
            }
            records += q.pending.drain(..).map(|p| p.builder.len()).sum::<usize>();
        }
        self.outstanding = 0;
        self.queued_bytes = 0;
        self.closed_pending = 0;
        self.retries = 0;
        self.linger_floor = None;
        (records, sealed)
    }

    /// Appends `r` (its timestamp already resolved) to partition `tp`'s open batch, opening a
    /// new one when the open one is closed or `r` would take it past `batch.size` (a record
    /// larger than `batch.size` gets a batch of its own). Returns whether a batch got full.
    /// `tp` is copied only for a partition the accumulator has no queue for yet.
    pub fn append(
        &mut self,
        tp: &TopicPartition,
        r: &ProducerRecord,
        timestamp: i64,
        now: Instant,
    ) -> Result<bool, RecordsError> {
        let headers = header_views(r);
        let spec =
            RecordSpec::new(r.key.as_deref(), r.value.as_deref(), timestamp).with_headers(&headers);
        self.append_spec(&tp.topic, tp.partition, &spec, now)
    }

    /// [`append`](Self::append) of a borrowed record (`spec` holds its resolved timestamp)
    /// to `topic`-`partition`: the producer's per-record path, which copies nothing but the
    /// record's encoding into the batch (the topic name only for a partition the accumulator
    /// has no queue for yet).
    pub fn append_spec(
        &mut self,
        topic: &str,
        partition: i32,
        spec: &RecordSpec<'_>,
        now: Instant,
    ) -> Result<bool, RecordsError> {
        let q = self
            .queues
            .get_or_insert_with(topic, partition, PartitionQueue::default);
        let mut filled = false;
        let fits = match q.pending.back() {
            Some(p) if !p.closed => {
                p.builder.is_empty()
                    || p.builder.size_estimate() + p.builder.record_size(spec)?
                        <= self.settings.batch_size
            }
            _ => false,
        };
        if !fits {
            if let Some(p) = q.pending.back_mut() {
                filled = !p.closed;
                if !p.closed {
                    p.closed = true;
                    self.closed_pending += 1;
                }
            }
            let mut builder = BatchBuilder::new(self.settings.compression);
            // The body grows to about batch.size: one allocation instead of a doubling
            // series (a record larger than that gets what it needs).
            builder.reserve(
                self.settings
                    .batch_size
                    .min(MAX_RESERVE)
                    .max(builder.record_size(spec)?),
            );
            q.pending.push_back(Pending {
                builder,
                created: now,
                closed: false,
            });
            self.linger_floor = Some(self.linger_floor.map_or(now, |f| f.min(now)));
        }
        let Some(p) = q.pending.back_mut().filter(|p| !p.closed) else {
            return Err(RecordsError::EmptyBatch);
        };
        let before = if p.builder.is_empty() { 0 } else { p.charged() };
        p.builder.push(spec)?;
        self.queued_bytes += p.charged() - before;
        if p.builder.size_estimate() >= self.settings.batch_size {
            p.closed = true;
            self.closed_pending += 1;
            filled = true;
        }
        self.outstanding += 1;
        Ok(filled)
    }

    /// Whether some partition has a batch ready to send: closed, lingered long enough, or
    /// any batch at all when `flushing`.
    ///
    /// O(1) in the usual case of a send: without a retry, a closed batch or a batch past
    /// its linger (kept as counters and a deadline as batches come and go), nothing is
    /// ready and no queue is looked at.
    pub fn has_ready(&self, now: Instant, flushing: bool) -> bool {
        #[cfg(debug_assertions)]
        self.check_counters();
        let lingered = self
            .linger_floor
            .is_some_and(|f| now.saturating_duration_since(f) >= self.settings.linger);
        if !flushing && self.closed_pending == 0 && self.retries == 0 && !lingered {
            debug_assert!(!self.scan_ready(now, flushing), "has_ready's fast path");
            return false;
        }
        self.scan_ready(now, flushing)
    }

    /// [`has_ready`](Self::has_ready) by looking at every queue.
    fn scan_ready(&self, now: Instant, flushing: bool) -> bool {
        self.queues.iter().any(|(tp, q)| {
            q.head_retry() || self.ready(q, now, flushing) && self.room_for_new(tp, q)
        })
    }

    /// Checks the counters [`has_ready`](Self::has_ready) relies on against the queues.
    #[cfg(debug_assertions)]
    fn check_counters(&self) {
        let closed: usize = self
            .queues
            .values()
            .map(|q| q.pending.iter().filter(|p| p.closed).count())
            .sum();
        let retries: usize = self
            .queues
            .values()
            .map(|q| q.in_flight.iter().filter(|f| !f.awaiting).count())
            .sum();
        assert_eq!(
            (closed, retries),
            (self.closed_pending, self.retries),
            "closed pending batches and retries"
        );
        let earliest = self
            .queues
            .values()
            .flat_map(|q| q.pending.iter().map(|p| p.created))
            .min();
        if let Some(e) = earliest {
            assert!(
                self.linger_floor.is_some_and(|f| f <= e),
                "the linger floor is at or before every pending batch"
            );
        }
    }

    /// Makes the linger floor exact again (after batches left their queues).
    fn reset_linger_floor(&mut self) {
        self.linger_floor = self
            .queues
            .values()
            .flat_map(|q| q.pending.iter().map(|p| p.created))
            .min();
    }

    /// Whether a new batch of `tp` (queue `q`) may go: fewer than `max_in_flight` in flight
    /// (one until a batch was written under the producer id, see
    /// [`Idempotence::may_pipeline`]), none waiting for a resend, and none stamped with an
    /// older identity (the partition moves to a new epoch only once they are settled).
    fn room_for_new(&self, tp: &TopicPartition, q: &PartitionQueue) -> bool {
        let max = match self.idempotence.current_identity() {
            Some(id) if !self.idempotence.may_pipeline(tp, id) => 1,
            _ => self.max_in_flight,
        };
        q.in_flight.len() < max
            && !q.has_retry()
            && q.in_flight
                .back()
                .is_none_or(|f| Some(f.batch.identity) == self.idempotence.current_identity())
    }

    fn ready(&self, q: &PartitionQueue, now: Instant, flushing: bool) -> bool {
        q.pending.front().is_some_and(|p| {
            flushing
                || p.closed
                || q.pending.len() > 1
                || now.saturating_duration_since(p.created) >= self.settings.linger
        })
    }

    /// Earliest time an open batch becomes ready by `linger.ms` (`None` = no open batch).
    pub fn next_linger_expiry(&self) -> Option<Instant> {
        self.queues
            .values()
            .filter_map(|q| q.pending.front())
            .map(|p| p.created + self.settings.linger)
            .min()
    }

    /// The batches to send now, at most one per partition: its oldest in-flight batch if
    /// that must be sent again (a retry), else its oldest ready batch, sealed with the
    /// current identity and the partition's next sequence, while fewer than
    /// [`set_max_in_flight`](Self::set_max_in_flight) are in flight and none waits for a
    /// resend. Applies a pending epoch bump first; sends nothing while there is no identity
    /// (see [`identity`](Self::identity)). Each batch returned awaits its answer
    /// ([`complete_batch`](Self::complete_batch)).
    pub fn drain(
        &mut self,
        now: Instant,
        flushing: bool,
    ) -> Result<Vec<(TopicPartition, SealedBatch)>, RecordsError> {
        let Some(identity) = self.identity() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for tp in self.queues.keys().cloned().collect::<Vec<_>>() {
            self.rewrite_if_due(&tp, identity)?;
            let Some(q) = self.queues.get(&tp) else {
                continue;
            };
            if q.head_retry() {
                if q.in_flight.front().is_some_and(|f| f.rejected)
                    && self.idempotence.rewrite_pending(&tp)
                {
                    // Rejected: it goes again once rewritten under the new epoch.
                    continue;
                }
                if let Some(f) = self
                    .queues
                    .get_mut(&tp)
                    .and_then(|q| q.in_flight.front_mut())
                {
                    f.awaiting = true;
                    self.retries -= 1;
                    f.batch.attempts += 1;
                    out.push((tp, f.batch.clone()));
                }
                continue;
            }
            if !(self.ready(q, now, flushing) && self.room_for_new(&tp, q)) {
                continue;
            }
            let Some(b) = self.seal_next(&tp, identity)? else {
                continue;
            };
            out.push((tp, b));
        }
        self.reset_linger_floor();
        Ok(out)
    }

    /// Applies a pending sequence restart of `tp` under `identity`: once none of its
    /// batches awaits an answer and the oldest was rejected (or none is left), renumbers
    /// them from 0 (Java's `startSequencesAtBeginning`).
    fn rewrite_if_due(
        &mut self,
        tp: &TopicPartition,
        identity: ProducerIdentity,
    ) -> Result<(), RecordsError> {
        let Some(q) = self.queues.get_mut(tp) else {
            return Ok(());
        };
        let settled = q.in_flight.iter().all(|f| !f.awaiting)
            && q.in_flight.front().is_none_or(|f| f.rejected);
        let records: Vec<i32> = q.in_flight.iter().map(|f| f.batch.records).collect();
        if let Some(bases) = self.idempotence.prepare(tp, identity, &records, settled) {
            // Not written, so rewriting them under the bumped epoch cannot duplicate.
            for (f, base) in q.in_flight.iter_mut().zip(bases) {
                restamp(&mut f.batch.bytes, identity, base)?;
                f.batch.identity = identity;
                f.batch.base_sequence = base;
                f.batch.reset = true;
            }
        }
        Ok(())
    }

    /// Seals `tp`'s oldest pending batch with `identity` and the next sequence, and puts it
    /// in flight (awaiting).
    fn seal_next(
        &mut self,
        tp: &TopicPartition,
        identity: ProducerIdentity,
    ) -> Result<Option<SealedBatch>, RecordsError> {
        let Some(q) = self.queues.get_mut(tp) else {
            return Ok(None);
        };
        let Some(p) = q.pending.pop_front() else {
            return Ok(None);
        };
        if p.closed {
            self.closed_pending -= 1;
        }
        let records = p.builder.len() as i32;
        let charged = if p.builder.is_empty() { 0 } else { p.charged() };
        let base_sequence = self.idempotence.assign(tp, identity, records);
        let mut bytes = Vec::with_capacity(p.builder.size_estimate());
        p.builder
            .producer(identity.producer_id, identity.producer_epoch, base_sequence)
            .transactional(self.transactional)
            .finish(&mut bytes)?;
        let id = self.next_batch_id;
        self.next_batch_id += 1;
        let batch = SealedBatch {
            id,
            bytes,
            records,
            base_sequence,
            identity,
            attempts: 1,
            created: p.created,
            reset: false,
            last_error: None,
        };
        q.in_flight.push_back(Flight {
            batch: batch.clone(),
            charged,
            awaiting: true,
            rejected: false,
        });
        Ok(Some(batch))
    }

    /// Notes why partition `tp`'s oldest in-flight batch is being retried (for the message
    /// of its delivery timeout).
    pub fn note_retry(&mut self, tp: &TopicPartition, reason: impl Into<String>) {
        let id = self
            .queues
            .get(tp)
            .and_then(|q| q.in_flight.front())
            .map(|f| f.batch.id);
        if let Some(id) = id {
            self.note_batch_retry(tp, id, reason);
        }
    }

    /// Notes why batch `id` of `tp` is being retried.
    pub fn note_batch_retry(&mut self, tp: &TopicPartition, id: u64, reason: impl Into<String>) {
        if let Some(f) = self
            .queues
            .get_mut(tp)
            .and_then(|q| q.in_flight.iter_mut().find(|f| f.batch.id == id))
        {
            f.batch.last_error = Some(reason.into());
        }
    }

    /// Whether batch `id` is `tp`'s oldest unsettled batch (every batch before it settled:
    /// Java's `isNextSequence`).
    pub fn is_oldest(&self, tp: &TopicPartition, id: u64) -> bool {
        self.queues
            .get(tp)
            .and_then(|q| q.in_flight.front())
            .is_some_and(|f| f.batch.id == id)
    }

    /// [`complete_batch`](Self::complete_batch) for `tp`'s oldest in-flight batch.
    pub fn complete(&mut self, tp: &TopicPartition, outcome: &BatchOutcome) -> usize {
        let id = self
            .queues
            .get(tp)
            .and_then(|q| q.in_flight.front())
            .map(|f| f.batch.id);
        id.map_or(0, |id| self.complete_batch(tp, id, outcome))
    }

    /// Applies `outcome` to batch `id` of partition `tp`. Returns the records it settled
    /// (written or failed), 0 for a retry or a batch no longer in flight (expired, dropped).
    ///
    /// A retry waits for the next [`drain`](Self::drain), which resends it once every batch
    /// before it is settled. With idempotence, a batch that failed for good leaves a gap in
    /// the partition's sequence, and a [`BatchOutcome::RetryWithNewEpoch`] for the oldest
    /// batch says the broker will not take the next one: both bump the epoch and restart the
    /// partition at sequence 0 (a batch already restarted that way is retried as is, as
    /// Java does). A [`BatchOutcome::RetryWithNewEpoch`] for a later batch is a plain retry:
    /// the batch before it may still be written.
    pub fn complete_batch(
        &mut self,
        tp: &TopicPartition,
        id: u64,
        outcome: &BatchOutcome,
    ) -> usize {
        let Some(q) = self.queues.get_mut(tp) else {
            return 0;
        };
        let Some(at) = q.in_flight.iter().position(|f| f.batch.id == id) else {
            return 0;
        };
        let batch = q.in_flight.get(at).map(|f| InFlight {
            identity: f.batch.identity,
            reset: f.batch.reset,
            oldest: at == 0,
        });
        let settled = match outcome {
            BatchOutcome::Retry { .. } | BatchOutcome::RetryWithNewEpoch => {
                if let Some(f) = q.in_flight.get_mut(at) {
                    if f.awaiting {
                        self.retries += 1;
                    }
                    f.awaiting = false;
                    f.rejected |= *outcome == BatchOutcome::RetryWithNewEpoch;
                }
                0
            }
            BatchOutcome::Written(_) | BatchOutcome::Failed(_) => {
                let Some(f) = q.in_flight.remove(at) else {
                    return 0;
                };
                if !f.awaiting {
                    self.retries -= 1;
                }
                let n = f.batch.records as usize;
                self.outstanding -= n.min(self.outstanding);
                self.queued_bytes -= f.charged.min(self.queued_bytes);
                n
            }
        };
        self.idempotence.on_outcome(tp, outcome, batch, settled);
        settled
    }

    /// Fails every batch whose `delivery.timeout.ms` (`timeout`, counted from the batch's
    /// creation) has passed at `now`, one entry per partition. An in-flight batch given up
    /// on may have been written, so its partition restarts at sequence 0 under a bumped
    /// epoch; batches never sealed leave no gap.
    pub fn expire(&mut self, now: Instant, timeout: Duration) -> Vec<Expired> {
        let mut out = Vec::new();
        let mut bump = Vec::new();
        let mut freed = 0;
        let (mut closed, mut retries) = (0, 0);
        let due = |created: Instant| now.saturating_duration_since(created) >= timeout;
        for (tp, q) in self.queues.iter_mut() {
            let nothing_due = match q.in_flight.front() {
                Some(f) => !due(f.batch.created),
                None => !q.pending.front().is_some_and(|p| due(p.created)),
            };
            if nothing_due {
                // The usual case, every round: no key copied for it.
                continue;
            }
            let mut e = Expired {
                tp: tp.clone(),
                records: 0,
                sent: false,
                attempts: 0,
                last_error: None,
            };
            while q
                .in_flight
                .front()
                .is_some_and(|f| now.saturating_duration_since(f.batch.created) >= timeout)
            {
                if let Some(f) = q.in_flight.pop_front() {
                    retries += usize::from(!f.awaiting);
                    freed += f.charged;
                    e.records += f.batch.records as usize;
                    e.sent |= f.batch.attempts > 0;
                    e.attempts = e.attempts.max(f.batch.attempts);
                    e.last_error = f.batch.last_error.or(e.last_error.take());
                    if bump.last() != Some(tp) {
                        bump.push(tp.clone());
                    }
                }
            }
            if q.in_flight.is_empty() {
                while q
                    .pending
                    .front()
                    .is_some_and(|p| now.saturating_duration_since(p.created) >= timeout)
                {
                    if let Some(p) = q.pending.pop_front() {
                        closed += usize::from(p.closed);
                        e.records += p.builder.len();
                        if !p.builder.is_empty() {
                            freed += p.charged();
                        }
                    }
                }
            }
            if e.records > 0 {
                out.push(e);
            }
        }
        self.closed_pending -= closed;
        self.retries -= retries;
        self.reset_linger_floor();
        for tp in bump {
            self.idempotence.on_expired(&tp);
        }
        let n: usize = out.iter().map(|e| e.records).sum();
        self.outstanding -= n.min(self.outstanding);
        self.queued_bytes -= freed.min(self.queued_bytes);
        out
    }

    /// When the oldest batch was created (`None` = nothing queued): the first delivery
    /// deadline is this plus `delivery.timeout.ms`.
    pub fn oldest_batch(&self) -> Option<Instant> {
        self.queues
            .values()
            .filter_map(|q| {
                q.in_flight
                    .front()
                    .map(|f| f.batch.created)
                    .or_else(|| q.pending.front().map(|p| p.created))
            })
            .min()
    }

    /// Partitions with records waiting or in flight.
    pub fn busy_partitions(&self) -> impl Iterator<Item = &TopicPartition> {
        self.queues
            .iter()
            .filter(|(_, q)| !q.in_flight.is_empty() || !q.pending.is_empty())
            .map(|(tp, _)| tp)
    }

    /// The next sequence of `tp` (for tests and diagnostics).
    pub fn next_sequence(&self, tp: &TopicPartition) -> i32 {
        self.idempotence.next_sequence(tp)
    }
}

/// Rewrites a sealed v2 batch's producer id, epoch and base sequence in place and
/// recomputes its CRC-32C (which covers everything from the attributes on), as Java's
/// `ProducerBatch.resetProducerState` does before a batch is resent under a new epoch.
fn restamp(
    batch: &mut [u8],
    identity: ProducerIdentity,
    base_sequence: i32,
) -> Result<(), RecordsError> {
    const CRC: usize = 17;
    const CRC_START: usize = 21;
    const PRODUCER_ID: usize = 43;
    const RECORDS_COUNT: usize = 57;
    if batch.len() < RECORDS_COUNT + 4 {
        return Err(RecordsError::EmptyBatch);
    }
    batch[PRODUCER_ID..PRODUCER_ID + 8].copy_from_slice(&identity.producer_id.to_be_bytes());
    batch[PRODUCER_ID + 8..PRODUCER_ID + 10]
        .copy_from_slice(&identity.producer_epoch.to_be_bytes());
    batch[PRODUCER_ID + 10..PRODUCER_ID + 14].copy_from_slice(&base_sequence.to_be_bytes());
    let crc = crc32c::crc32c(&batch[CRC_START..]);
    batch[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// `r`'s headers as the borrowed views a [`RecordSpec`] takes.
fn header_views(r: &ProducerRecord) -> Vec<Header<'_>> {
    r.headers
        .iter()
        .map(|(k, v)| Header {
            key: k,
            value: v.as_deref(),
        })
        .collect()
}
