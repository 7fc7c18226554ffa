//! One active task's buffered input: a queue per input partition, records taken in timestamp
//! order across them (Java's `PartitionGroup`), partition times and consumed offsets.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::consumer::{FetchedRecord, RecordHeaders, SharedBytes};
use crate::streams::commit::{CommitOffset, TopicPartition};

/// An input record: its key, value and headers are shares of the buffer its batch was
/// fetched (or decompressed) into, not copies, and its partition is shared by the records
/// of the partition. A processor that keeps bytes past [`process`](super::Processor::process)
/// copies them itself (`record.value.as_deref().map(<[u8]>::to_vec)`, or
/// [`SharedBytes`]' `to_vec`); cloning the record, or a key or value, copies no bytes.
///
/// `record.key.as_deref()` and `record.value.as_deref()` are `Option<&[u8]>` as before
/// (`SharedBytes` dereferences to `[u8]`); `&record.headers` is sent on as it is
/// ([`TaskContext::send`](super::TaskContext::send) takes [`RecordHeaders`] as well as a list
/// of pairs). [`InputRecord::new`] builds one from bytes of its own (tests, replays).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputRecord {
    /// The partition it was read from (one allocation per partition, shared).
    pub partition: Arc<TopicPartition>,
    /// Its offset.
    pub offset: i64,
    /// Its timestamp (CreateTime as written by the producer).
    pub timestamp: i64,
    /// The key, `None` for a Kafka null.
    pub key: Option<SharedBytes>,
    /// The value, `None` for a Kafka null.
    pub value: Option<SharedBytes>,
    /// The headers, in order (a `None` value is a null header value).
    pub headers: RecordHeaders,
}

impl InputRecord {
    /// A record of `partition` at `offset` with copies of `key` and `value` and no headers
    /// (set [`headers`](Self::headers) to add some).
    pub fn new(
        partition: impl Into<Arc<TopicPartition>>,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Self {
        InputRecord {
            partition: partition.into(),
            offset,
            timestamp,
            key: key.map(SharedBytes::from),
            value: value.map(SharedBytes::from),
            headers: RecordHeaders::default(),
        }
    }

    /// The fetched `record` of `partition`, its key, value and headers left in the fetched
    /// buffer (no copy, no allocation).
    pub fn from_fetched(partition: Arc<TopicPartition>, record: FetchedRecord) -> Self {
        let (offset, timestamp) = (record.offset, record.timestamp);
        let (key, value, headers) = record.into_shared();
        InputRecord {
            partition,
            offset,
            timestamp,
            key,
            value,
            headers,
        }
    }
}

/// Partition time of a partition nothing was processed from (Java's `RecordQueue.UNKNOWN`).
pub const UNKNOWN_TIME: i64 = -1;

#[derive(Debug, Default)]
struct Queue {
    records: VecDeque<InputRecord>,
    /// Max timestamp processed from this partition (`UNKNOWN_TIME` if none).
    partition_time: i64,
    /// Next offset to process, once a record was processed (the offset to commit).
    next_offset: Option<i64>,
}

/// The input partitions of one task: a record queue each, timestamps and offsets.
///
/// [`next_record`](Self::next_record) takes, among the partitions with buffered records, the
/// head record with the smallest timestamp (ties: the first partition in name order), as
/// `PartitionGroup.nextRecord` does with `max.task.idle.ms=0`.
#[derive(Debug, Default)]
pub struct PartitionGroup {
    queues: BTreeMap<TopicPartition, Queue>,
    dirty: bool,
}

impl PartitionGroup {
    /// A group over `partitions`, each starting with partition time `times[tp]` (from the
    /// committed metadata) or unknown.
    pub fn new(
        partitions: impl IntoIterator<Item = TopicPartition>,
        times: &BTreeMap<TopicPartition, i64>,
    ) -> Self {
        let queues = partitions
            .into_iter()
            .map(|tp| {
                let partition_time = times.get(&tp).copied().unwrap_or(UNKNOWN_TIME);
                (
                    tp,
                    Queue {
                        partition_time,
                        ..Queue::default()
                    },
                )
            })
            .collect();
        PartitionGroup {
            queues,
            dirty: false,
        }
    }

    /// Appends a fetched record to its partition's queue; false if the partition is not one
    /// of this group's.
    pub fn add(&mut self, record: InputRecord) -> bool {
        match self.queues.get_mut(&*record.partition) {
            Some(q) => {
                q.records.push_back(record);
                true
            }
            None => false,
        }
    }

    /// Records buffered, all partitions.
    pub fn buffered(&self) -> usize {
        self.queues.values().map(|q| q.records.len()).sum()
    }

    /// Records buffered for `tp` (0 if it is not one of this group's partitions).
    pub fn buffered_in(&self, tp: &TopicPartition) -> usize {
        self.queues.get(tp).map_or(0, |q| q.records.len())
    }

    /// Java's `PartitionGroup#readyToProcess` under `max.task.idle.ms=0`: false while a
    /// partition's queue is empty and the broker holds records for it (`lag` above zero) or
    /// nothing is known of it yet (`lag` `None`): taking a record now could take it before
    /// an earlier one of that partition (a stream-table join would miss a table update).
    /// A partition known to be caught up (lag 0) is not waited for.
    pub fn ready(&self, lag: &dyn Fn(&TopicPartition) -> Option<i64>) -> bool {
        if self.queues.len() < 2 {
            return true;
        }
        self.queues
            .iter()
            .all(|(tp, q)| !q.records.is_empty() || lag(tp) == Some(0))
    }

    /// Takes the next record to process (smallest head timestamp). Nothing is committable
    /// for it until [`processed`](Self::processed) says it was processed: a record whose
    /// processing failed is never committed past (Java records the consumed offset only
    /// after `process` returned).
    pub fn next_record(&mut self) -> Option<InputRecord> {
        let (_, q) = self
            .queues
            .iter_mut()
            .filter(|(_, q)| !q.records.is_empty())
            .min_by_key(|(_, q)| q.records.front().map_or(i64::MAX, |r| r.timestamp))?;
        q.records.pop_front()
    }

    /// Records `record` (taken with [`next_record`](Self::next_record)) as processed: its
    /// partition's next offset and partition time move.
    pub fn processed(&mut self, record: &InputRecord) {
        if let Some(q) = self.queues.get_mut(&*record.partition) {
            q.partition_time = q.partition_time.max(record.timestamp);
            q.next_offset = Some(record.offset + 1);
            self.dirty = true;
        }
    }

    /// True if records were processed since the last [`committed`](Self::committed).
    pub fn commit_needed(&self) -> bool {
        self.dirty
    }

    /// The offsets to commit: for each partition something was processed from, the next
    /// offset, with the partition time as Kafka Streams' commit metadata.
    pub fn committable(&self) -> BTreeMap<TopicPartition, CommitOffset> {
        self.queues
            .iter()
            .filter_map(|(tp, q)| {
                q.next_offset.map(|o| {
                    (
                        tp.clone(),
                        CommitOffset::new(o).partition_time(q.partition_time),
                    )
                })
            })
            .collect()
    }

    /// Marks the current progress committed.
    pub fn committed(&mut self) {
        self.dirty = false;
    }

    /// The partition time of `tp` (`UNKNOWN_TIME` if nothing is known).
    pub fn partition_time(&self, tp: &TopicPartition) -> i64 {
        self.queues
            .get(tp)
            .map_or(UNKNOWN_TIME, |q| q.partition_time)
    }

    /// The group's partitions.
    pub fn partitions(&self) -> impl Iterator<Item = &TopicPartition> {
        self.queues.keys()
    }
}

/// Decodes the partition time from Kafka Streams' commit metadata
/// (`base64(0x01|0x02 ‖ BE64 time ‖ …)`); anything else is unknown (-1), as Java's
/// `TopicPartitionMetadata.decode` answers for garbage.
pub fn decode_partition_time(metadata: &str) -> i64 {
    let Some(raw) = crate::common::base64::decode(metadata.as_bytes()) else {
        return UNKNOWN_TIME;
    };
    match raw.split_first() {
        Some((1 | 2, rest)) if rest.len() >= 8 => {
            let mut b = [0u8; 8];
            b.copy_from_slice(&rest[..8]);
            i64::from_be_bytes(b)
        }
        _ => UNKNOWN_TIME,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(tp: &TopicPartition, offset: i64, ts: i64) -> InputRecord {
        InputRecord::new(tp.clone(), offset, ts, None, Some(&[offset as u8]))
    }

    #[test]
    fn takes_records_in_timestamp_order_across_partitions() {
        let a = TopicPartition::new("a", 0);
        let b = TopicPartition::new("b", 0);
        let mut g = PartitionGroup::new([a.clone(), b.clone()], &BTreeMap::new());
        for (o, ts) in [(0, 5), (1, 9), (2, 10)] {
            assert!(g.add(rec(&a, o, ts)));
        }
        for (o, ts) in [(7, 1), (8, 7)] {
            assert!(g.add(rec(&b, o, ts)));
        }
        assert!(!g.add(rec(&TopicPartition::new("c", 0), 0, 0)));
        let order: Vec<_> = std::iter::from_fn(|| {
            let r = g.next_record()?;
            g.processed(&r);
            Some(r)
        })
        .map(|r| (r.partition.topic.clone(), r.offset))
        .collect();
        let want = [("b", 7), ("a", 0), ("b", 8), ("a", 1), ("a", 2)];
        let want: Vec<_> = want.iter().map(|(t, o)| (t.to_string(), *o)).collect();
        assert_eq!(order, want);
        assert_eq!(g.partition_time(&a), 10);
        assert_eq!(g.partition_time(&b), 7);
        let c = g.committable();
        assert_eq!(c[&a].offset, 3);
        assert_eq!(c[&b].offset, 9);
        // Java's TopicPartitionMetadata(10) = base64(02 ‖ BE64 10).
        assert_eq!(
            decode_partition_time(c[&a].metadata.as_deref().unwrap()),
            10
        );
        assert!(g.commit_needed());
        g.committed();
        assert!(!g.commit_needed());
    }

    /// A record taken but not processed (its processor failed) moves nothing: the
    /// committable offset stays at the last processed record. (With the offset moved in
    /// `next_record`, as before issue 16, the commit skipped the failed record.)
    #[test]
    fn a_record_taken_but_not_processed_is_not_committable() {
        let a = TopicPartition::new("a", 0);
        let mut g = PartitionGroup::new([a.clone()], &BTreeMap::new());
        for o in 4..7 {
            assert!(g.add(rec(&a, o, 100 + o)));
        }
        assert!(g.committable().is_empty());
        let r = g.next_record().unwrap();
        assert!(!g.commit_needed(), "taken, not processed");
        assert!(g.committable().is_empty());
        g.processed(&r);
        let failed = g.next_record().unwrap();
        assert_eq!(failed.offset, 5);
        assert_eq!(
            g.committable()[&a].offset,
            5,
            "the failed record stays uncommitted"
        );
        assert_eq!(g.partition_time(&a), 104);
        assert!(g.commit_needed());
    }

    #[test]
    fn decodes_java_metadata_probes() {
        // streams-data-path.md appendix: TPM(1700000000000) and TPM(-1), garbage, v1.
        assert_eq!(decode_partition_time("AgAAAYvP5WgA"), 1_700_000_000_000);
        assert_eq!(decode_partition_time("Av//////////"), -1);
        assert_eq!(decode_partition_time(""), -1);
        assert_eq!(decode_partition_time("garbage!"), -1);
        assert_eq!(decode_partition_time("AQAAAAAAAAAH"), 7);
        assert_eq!(
            decode_partition_time("AgAAAAAAAAAFAAAAAQAAAAVzdG9yZQAAAAAAAAAq"),
            5
        );
    }
}
