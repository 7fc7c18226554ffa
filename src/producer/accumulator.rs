//! The producer's pure core: per-partition batching (`linger.ms`, `batch.size`), idempotent
//! sequences and what a Produce answer does to a batch. No I/O and no clock: every call that
//! needs the time takes `now`.
//!
//! Each partition has a FIFO of batches. The newest one is open (records are encoded into it
//! as they arrive); older ones are closed. At most one batch per partition is in flight, so
//! a retry resends the same bytes with the same base sequence, in order, and the broker's
//! idempotence check turns a resend of an already written batch into
//! `DUPLICATE_SEQUENCE_NUMBER` (or the original offset), never a second copy.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use crate::protocol::records::{BatchBuilder, Compression, Header, RecordSpec, RecordsError};
use crate::protocol::BrokerErrorKind;

/// A topic and partition.
pub type TopicPartition = (String, i32);

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
}

/// Batching settings of the accumulator.
#[derive(Debug, Clone, Copy)]
pub struct BatchSettings {
    /// `linger.ms`: how long an open batch waits for more records before it is ready.
    pub linger: Duration,
    /// `batch.size`: a batch is closed once its (uncompressed) size would pass this.
    pub batch_size: usize,
    /// `compression.type`.
    pub compression: Compression,
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

/// A batch with its bytes fixed: sequence assigned, compressed, CRC written.
#[derive(Debug, Clone)]
pub struct SealedBatch {
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
}

#[derive(Debug, Default)]
struct PartitionQueue {
    pending: VecDeque<Pending>,
    in_flight: Option<SealedBatch>,
    next_sequence: i32,
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
        BrokerErrorKind::NotLeaderOrFollower
        | BrokerErrorKind::UnknownTopicOrPartition
        | BrokerErrorKind::LeaderNotAvailable
        | BrokerErrorKind::FencedLeaderEpoch
        | BrokerErrorKind::UnknownLeaderEpoch => BatchOutcome::Retry { refresh: true },
        k if k.is_retriable() => BatchOutcome::Retry { refresh: false },
        k => BatchOutcome::Failed(k),
    }
}

/// The per-partition accumulator. See the module docs.
#[derive(Debug)]
pub struct Accumulator {
    settings: BatchSettings,
    queues: BTreeMap<TopicPartition, PartitionQueue>,
    /// Records appended and not yet written or failed.
    outstanding: usize,
}

impl Accumulator {
    /// An empty accumulator.
    pub fn new(settings: BatchSettings) -> Self {
        Accumulator {
            settings,
            queues: BTreeMap::new(),
            outstanding: 0,
        }
    }

    /// Records appended and not yet acknowledged or failed.
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// Appends `r` (its timestamp already resolved) to partition `tp`'s open batch, opening a
    /// new one when the open one is closed or `r` would take it past `batch.size` (a record
    /// larger than `batch.size` gets a batch of its own). Returns whether a batch got full.
    pub fn append(
        &mut self,
        tp: TopicPartition,
        r: &ProducerRecord,
        timestamp: i64,
        now: Instant,
    ) -> Result<bool, RecordsError> {
        let headers: Vec<Header<'_>> = r
            .headers
            .iter()
            .map(|(k, v)| Header {
                key: k,
                value: v.as_deref(),
            })
            .collect();
        let spec =
            RecordSpec::new(r.key.as_deref(), r.value.as_deref(), timestamp).with_headers(&headers);
        let q = self.queues.entry(tp).or_default();
        let mut filled = false;
        let fits = match q.pending.back() {
            Some(p) if !p.closed => {
                p.builder.is_empty()
                    || p.builder.size_estimate() + p.builder.record_size(&spec)?
                        <= self.settings.batch_size
            }
            _ => false,
        };
        if !fits {
            if let Some(p) = q.pending.back_mut() {
                filled = !p.closed;
                p.closed = true;
            }
            q.pending.push_back(Pending {
                builder: BatchBuilder::new(self.settings.compression),
                created: now,
                closed: false,
            });
        }
        let Some(p) = q.pending.back_mut().filter(|p| !p.closed) else {
            return Err(RecordsError::EmptyBatch);
        };
        p.builder.push(&spec)?;
        if p.builder.size_estimate() >= self.settings.batch_size {
            p.closed = true;
            filled = true;
        }
        self.outstanding += 1;
        Ok(filled)
    }

    /// Whether some partition has a batch ready to send: closed, lingered long enough, or
    /// any batch at all when `flushing`.
    pub fn has_ready(&self, now: Instant, flushing: bool) -> bool {
        self.queues
            .values()
            .any(|q| q.in_flight.is_none() && self.ready(q, now, flushing))
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

    /// The batches to send now: each partition's in-flight batch (a retry) or, if none, its
    /// oldest ready batch, sealed with `identity` and the partition's next sequence.
    pub fn drain(
        &mut self,
        identity: ProducerIdentity,
        now: Instant,
        flushing: bool,
    ) -> Result<Vec<(TopicPartition, SealedBatch)>, RecordsError> {
        let mut out = Vec::new();
        let linger = self.settings.linger;
        for (tp, q) in &mut self.queues {
            if q.in_flight.is_none() {
                let ready = q.pending.front().is_some_and(|p| {
                    flushing
                        || p.closed
                        || q.pending.len() > 1
                        || now.saturating_duration_since(p.created) >= linger
                });
                if !ready {
                    continue;
                }
                let Some(p) = q.pending.pop_front() else {
                    continue;
                };
                let records = p.builder.len() as i32;
                let base_sequence = if identity.producer_id >= 0 {
                    q.next_sequence
                } else {
                    -1
                };
                let mut bytes = Vec::with_capacity(p.builder.size_estimate());
                p.builder
                    .producer(identity.producer_id, identity.producer_epoch, base_sequence)
                    .finish(&mut bytes)?;
                if identity.producer_id >= 0 {
                    q.next_sequence = q.next_sequence.wrapping_add(records) & i32::MAX;
                }
                q.in_flight = Some(SealedBatch {
                    bytes,
                    records,
                    base_sequence,
                    identity,
                    attempts: 0,
                });
            }
            if let Some(b) = &mut q.in_flight {
                b.attempts += 1;
                out.push((tp.clone(), b.clone()));
            }
        }
        Ok(out)
    }

    /// Applies `outcome` to partition `tp`'s in-flight batch. Returns the records it
    /// settled (written or failed), 0 for a retry or an unknown partition.
    pub fn complete(&mut self, tp: &TopicPartition, outcome: &BatchOutcome) -> usize {
        let Some(q) = self.queues.get_mut(tp) else {
            return 0;
        };
        match outcome {
            BatchOutcome::Retry { .. } => 0,
            BatchOutcome::Written(_) | BatchOutcome::Failed(_) => {
                let n = q.in_flight.take().map_or(0, |b| b.records as usize);
                self.outstanding -= n.min(self.outstanding);
                n
            }
        }
    }

    /// Forgets every sequence: after a batch failed for good the producer takes a new id and
    /// numbers from 0 again (Java's idempotent producer bumps the epoch instead). Batches in
    /// flight carry the old id in their bytes, so they are dropped; returns how many records
    /// they held.
    pub fn reset_sequences(&mut self) -> usize {
        let mut lost = 0;
        for q in self.queues.values_mut() {
            q.next_sequence = 0;
            if let Some(b) = q.in_flight.take() {
                lost += b.records as usize;
            }
        }
        self.outstanding -= lost.min(self.outstanding);
        lost
    }

    /// Partitions with records waiting or in flight.
    pub fn busy_partitions(&self) -> impl Iterator<Item = &TopicPartition> {
        self.queues
            .iter()
            .filter(|(_, q)| q.in_flight.is_some() || !q.pending.is_empty())
            .map(|(tp, _)| tp)
    }

    /// The next sequence of `tp` (for tests and diagnostics).
    pub fn next_sequence(&self, tp: &TopicPartition) -> i32 {
        self.queues.get(tp).map_or(0, |q| q.next_sequence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::records::{BatchReader, DecodeLimits};

    fn acc(batch_size: usize, linger_ms: u64) -> Accumulator {
        Accumulator::new(BatchSettings {
            linger: Duration::from_millis(linger_ms),
            batch_size,
            compression: Compression::None,
        })
    }

    fn tp(p: i32) -> TopicPartition {
        ("t".to_string(), p)
    }

    const ID: ProducerIdentity = ProducerIdentity {
        producer_id: 7,
        producer_epoch: 3,
    };

    fn rec(v: &[u8]) -> ProducerRecord {
        ProducerRecord::new("t", Some(b"k"), Some(v))
    }

    #[test]
    fn batches_close_at_batch_size_and_sequences_follow_records() {
        let mut a = acc(200, 1_000);
        let now = Instant::now();
        let mut full = 0;
        for i in 0..10u8 {
            if a.append(tp(0), &rec(&[i; 40]), 5, now).unwrap() {
                full += 1;
            }
        }
        assert!(full >= 2, "200-byte batches of ~50-byte records fill up");
        assert_eq!(a.outstanding(), 10);
        // Not flushing: only closed batches go, one per partition at a time.
        let first = a.drain(ID, now, false).unwrap();
        assert_eq!(first.len(), 1);
        let b = &first[0].1;
        assert_eq!(b.base_sequence, 0);
        let raw = BatchReader::new(&b.bytes).next().unwrap().unwrap();
        assert_eq!((raw.header.producer_id, raw.header.producer_epoch), (7, 3));
        // Nothing else goes while it is in flight; a retry resends the same bytes.
        assert!(!a.has_ready(now, true));
        let again = a.drain(ID, now, true).unwrap();
        assert_eq!(again[0].1.bytes, b.bytes);
        assert_eq!(again[0].1.attempts, 2);
        let n = a.complete(&tp(0), &BatchOutcome::Written(Some(0)));
        assert_eq!(n, b.records as usize);
        // The next batch continues the sequence; a flush drains everything in order.
        let mut seq = b.records;
        let mut total = b.records;
        while a.outstanding() > 0 {
            let d = a.drain(ID, now, true).unwrap();
            assert_eq!(d.len(), 1);
            assert_eq!(d[0].1.base_sequence, seq);
            let batch = BatchReader::new(&d[0].1.bytes)
                .next()
                .unwrap()
                .unwrap()
                .decode(&DecodeLimits::default())
                .unwrap();
            assert_eq!(batch.records().count() as i32, d[0].1.records);
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
        a.append(tp(1), &rec(b"x"), 1, t0).unwrap();
        assert!(!a.has_ready(t0, false));
        assert_eq!(a.next_linger_expiry(), Some(t0 + Duration::from_millis(50)));
        assert!(a.has_ready(t0 + Duration::from_millis(50), false));
        assert!(a.has_ready(t0, true), "a flush does not wait for linger");
    }

    #[test]
    fn a_record_larger_than_batch_size_gets_its_own_batch() {
        let mut a = acc(100, 0);
        let now = Instant::now();
        a.append(tp(0), &rec(b"small"), 1, now).unwrap();
        a.append(tp(0), &rec(&[0; 500]), 1, now).unwrap();
        a.append(tp(0), &rec(b"after"), 1, now).unwrap();
        let mut sizes = Vec::new();
        while a.outstanding() > 0 {
            let d = a.drain(ProducerIdentity::NONE, now, true).unwrap();
            assert_eq!(d[0].1.base_sequence, -1, "no idempotence, no sequence");
            sizes.push(d[0].1.records);
            a.complete(&tp(0), &BatchOutcome::Written(None));
        }
        assert_eq!(sizes, [1, 1, 1]);
    }

    #[test]
    fn partitions_drain_independently() {
        let mut a = acc(16_384, 0);
        let now = Instant::now();
        for p in 0..3 {
            a.append(tp(p), &rec(b"v"), 1, now).unwrap();
        }
        let d = a.drain(ID, now, false).unwrap();
        assert_eq!(d.len(), 3);
        assert!(d.iter().all(|(_, b)| b.base_sequence == 0));
        a.complete(
            &tp(1),
            &BatchOutcome::Failed(BrokerErrorKind::MessageTooLarge),
        );
        assert_eq!(a.outstanding(), 2);
        assert_eq!(a.reset_sequences(), 2, "in-flight batches of the old id");
        assert_eq!(a.outstanding(), 0);
    }

    #[test]
    fn classification_follows_java() {
        assert_eq!(
            classify(BrokerErrorKind::DuplicateSequenceNumber, -1),
            BatchOutcome::Written(None)
        );
        assert_eq!(
            classify(BrokerErrorKind::None, 42),
            BatchOutcome::Written(Some(42))
        );
        assert_eq!(
            classify(BrokerErrorKind::NotLeaderOrFollower, -1),
            BatchOutcome::Retry { refresh: true }
        );
        assert_eq!(
            classify(BrokerErrorKind::RequestTimedOut, -1),
            BatchOutcome::Retry { refresh: false }
        );
        assert_eq!(
            classify(BrokerErrorKind::OutOfOrderSequenceNumber, -1),
            BatchOutcome::Failed(BrokerErrorKind::OutOfOrderSequenceNumber)
        );
        assert_eq!(
            classify(BrokerErrorKind::MessageTooLarge, -1),
            BatchOutcome::Failed(BrokerErrorKind::MessageTooLarge)
        );
    }
}
