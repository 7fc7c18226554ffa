//! The input side over the [`Fetcher`]: fetched records go into the task queues only as far
//! as each queue has room (`buffered.records.per.partition`); what a Fetch answer holds
//! beyond stays in its fetched buffer and is handed out by the next polls, and its partition
//! is paused in the fetcher meanwhile.
//!
//! A queued [`InputRecord`] copies nothing: its key, value and headers are shares of the
//! buffer its batch was fetched into (or, compressed, decompressed into once per hand-out),
//! and its partition name is one `Arc` per assigned partition. A buffer lives until the last
//! of its records is processed, so what a partition holds is at most the bytes of its queued
//! records plus the answers at either end of its queue (each at most
//! `max.partition.fetch.bytes`): every answer between has all its records in the queue.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use crate::consumer::{Fetcher, PartitionRecords, Spans};
use crate::error::Error;
use crate::streams::commit::TopicPartition;

use super::ports::InputPort;
use super::task::InputRecord;

/// The records of one Fetch answer not handed out yet.
struct Leftover {
    /// The partition's shared name.
    tp: Arc<TopicPartition>,
    part: PartitionRecords,
    /// The first batch that may still hold records to hand out.
    batch: usize,
    /// The offset of the next record to hand out.
    next: i64,
}

/// The [`InputPort`] of a processing member: a [`Fetcher`] and the fetched records its task
/// queues had no room for yet.
pub(crate) struct FetchInput {
    fetcher: Fetcher,
    left: BTreeMap<TopicPartition, Leftover>,
    /// Partitions the stream thread paused (their queue is full).
    paused: BTreeSet<TopicPartition>,
    /// The assigned partitions' names, shared by their records.
    names: BTreeMap<TopicPartition, Arc<TopicPartition>>,
    /// Reused between hand-outs.
    scratch: Vec<Spans>,
}

impl FetchInput {
    pub(crate) fn new(fetcher: Fetcher) -> Self {
        FetchInput {
            fetcher,
            left: BTreeMap::new(),
            paused: BTreeSet::new(),
            names: BTreeMap::new(),
            scratch: Vec::new(),
        }
    }

    /// The shared name of `tp` (made once per assignment).
    fn name(&self, tp: &TopicPartition) -> Arc<TopicPartition> {
        match self.names.get(tp) {
            Some(name) => Arc::clone(name),
            None => Arc::new(tp.clone()),
        }
    }

    /// Pauses in the fetcher exactly the partitions whose queue is full or whose fetched
    /// records are not all handed out (a Fetch for them would fetch past what is held).
    fn sync_paused(&mut self) {
        for tp in self.fetcher.assignment() {
            let pause = self.paused.contains(&tp) || self.left.contains_key(&tp);
            let result = match pause {
                true => self.fetcher.pause(&tp),
                false => self.fetcher.resume(&tp),
            };
            if let Err(e) = result {
                log::debug!("pausing/resuming {tp}: {e}");
            }
        }
    }

    /// Hands out what earlier answers left, within each queue's room.
    fn take_left(
        &mut self,
        room: &dyn Fn(&TopicPartition) -> usize,
        out: &mut Vec<InputRecord>,
    ) -> Result<(), Error> {
        let tps: Vec<TopicPartition> = self.left.keys().cloned().collect();
        for tp in tps {
            let Some(mut l) = self.left.remove(&tp) else {
                continue;
            };
            let limit = room(&tp);
            if limit == 0 || self.paused.contains(&tp) {
                self.left.insert(tp, l);
                continue;
            }
            if take(&mut l, limit, &mut self.scratch, out)? {
                self.left.insert(tp, l);
            }
        }
        Ok(())
    }
}

/// Hands up to `limit` records of `l` out into `out` (shares of the fetched bytes, not
/// copies); true if records remain.
fn take(
    l: &mut Leftover,
    limit: usize,
    scratch: &mut Vec<Spans>,
    out: &mut Vec<InputRecord>,
) -> Result<bool, Error> {
    let from = l.part.first_offset().max(l.next);
    let mut taken = 0usize;
    while let Some((header, _)) = l.part.batches.get(l.batch) {
        if header.last_offset() < from {
            l.batch += 1;
            continue;
        }
        let tp = &l.tp;
        let mut push = |r| out.push(InputRecord::from_fetched(Arc::clone(tp), r));
        let batch = l
            .part
            .batch_shared(l.batch, from, limit - taken, scratch, &mut push)
            .map_err(|e| Error::Protocol {
                broker: None,
                message: format!("a fetched batch of {} does not decode: {e}", l.tp),
            })?;
        taken += batch.count;
        if let Some(next) = batch.next {
            l.next = next;
            return Ok(true);
        }
        l.batch += 1;
    }
    Ok(false)
}

impl InputPort for FetchInput {
    fn assign(&mut self, partitions: Vec<TopicPartition>) {
        self.left.retain(|tp, _| partitions.contains(tp));
        self.paused.retain(|tp| partitions.contains(tp));
        self.names.retain(|tp, _| partitions.contains(tp));
        for tp in &partitions {
            if !self.names.contains_key(tp) {
                self.names.insert(tp.clone(), Arc::new(tp.clone()));
            }
        }
        self.fetcher.assign(partitions);
    }

    fn seek(&mut self, tp: &TopicPartition, offset: Option<i64>) -> Result<(), Error> {
        self.left.remove(tp);
        match offset {
            Some(o) => self.fetcher.seek(tp, o),
            None => self.fetcher.seek_to_beginning(tp),
        }
    }

    fn pause(&mut self, tp: &TopicPartition) {
        self.paused.insert(tp.clone());
    }

    fn resume(&mut self, tp: &TopicPartition) {
        self.paused.remove(tp);
    }

    fn fetched_lag(&self, tp: &TopicPartition) -> Option<i64> {
        match self.left.get(tp) {
            // Fetched records not handed out yet: the partition has data.
            Some(l) => Some((l.part.next_offset() - l.next).max(1)),
            None => self.fetcher.fetched_lag(tp),
        }
    }

    /// Records left by earlier answers come first and without a Fetch (the partitions
    /// without any are fetched once those are handed out, as the loop did when it processed
    /// a whole answer per iteration).
    fn poll(
        &mut self,
        deadline: Instant,
        room: &dyn Fn(&TopicPartition) -> usize,
    ) -> Result<Vec<InputRecord>, Error> {
        let mut out = Vec::new();
        self.take_left(room, &mut out)?;
        if !out.is_empty() {
            return Ok(out);
        }
        self.sync_paused();
        for part in self.fetcher.poll(deadline)? {
            let tp = self.name(part.topic_partition());
            let mut l = Leftover {
                next: part.first_offset(),
                tp,
                part,
                batch: 0,
            };
            let limit = room(&l.tp);
            if take(&mut l, limit, &mut self.scratch, &mut out)? {
                self.left.insert(TopicPartition::clone(&l.tp), l);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::records::RecordSpec;
    use crate::protocol::records::{BatchBuilder, BatchReader, Compression, DecodeLimits};

    /// Three batches of 4 records (offsets 10..22), the fetch made at offset 11.
    fn fetched(compression: Compression) -> PartitionRecords {
        let mut buf = Vec::new();
        for b in 0..3i64 {
            let mut builder = BatchBuilder::new(compression).base_offset(10 + 4 * b);
            for i in 0..4 {
                let v = format!("v{}", 10 + 4 * b + i);
                builder
                    .push(&RecordSpec::new(Some(b"k"), Some(v.as_bytes()), i))
                    .unwrap();
            }
            builder.finish(&mut buf).unwrap();
        }
        let mut batches = Vec::new();
        let mut at = 0;
        for raw in BatchReader::new(&buf) {
            let raw = raw.unwrap();
            batches.push((raw.header, at..at + raw.bytes.len()));
            at += raw.bytes.len();
        }
        PartitionRecords {
            tp: TopicPartition::new("in", 0),
            buf: buf.into(),
            batches,
            from: 11,
            next_offset: 22,
            high_watermark: 22,
            limits: DecodeLimits::default(),
        }
    }

    fn leftover(part: PartitionRecords) -> Leftover {
        Leftover {
            tp: Arc::new(part.topic_partition().clone()),
            next: part.first_offset(),
            part,
            batch: 0,
        }
    }

    /// The records handed out are shares of the fetched buffer, not copies: an uncompressed
    /// batch's keys and values point into the answer's bytes, every record of the partition
    /// holds the same name, and the records outlive the answer. (With keys and values
    /// copied into `Vec`s, as before, the addresses lie outside the buffer.)
    #[test]
    fn handed_out_records_share_the_fetched_bytes_and_the_partition_name() {
        let part = fetched(Compression::None);
        let buf = Arc::clone(&part.buf);
        let inside = |b: &[u8]| {
            let (at, start) = (b.as_ptr() as usize, buf.as_ptr() as usize);
            at >= start && at + b.len() <= start + buf.len()
        };
        let mut l = leftover(part);
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        while take(&mut l, 4, &mut scratch, &mut out).unwrap() {}
        drop(l);
        assert_eq!(out.len(), 11, "offsets 11..22");
        for r in &out {
            assert!(
                inside(r.key.as_deref().unwrap()),
                "key of {} copied",
                r.offset
            );
            assert!(
                inside(r.value.as_deref().unwrap()),
                "value of {} copied",
                r.offset
            );
            assert!(Arc::ptr_eq(&r.partition, &out[0].partition), "one name");
            assert_eq!(
                r.value.as_deref().unwrap(),
                format!("v{}", r.offset).as_bytes()
            );
        }
        assert_eq!(
            Arc::strong_count(&buf),
            1 + 2 * out.len(),
            "key + value each"
        );
    }

    /// A fetched answer is handed out in chunks of at most the room, each record once, in
    /// offset order, from the fetch position on, compressed or not.
    #[test]
    fn a_fetched_answer_is_handed_out_in_chunks_of_the_room() {
        for compression in [Compression::None, Compression::Lz4] {
            let part = fetched(compression);
            let mut l = leftover(part);
            let mut chunks = Vec::new();
            loop {
                let mut out = Vec::new();
                let more = take(&mut l, 5, &mut Vec::new(), &mut out).unwrap();
                assert!(out.len() <= 5);
                chunks.push(out.iter().map(|r| r.offset).collect::<Vec<_>>());
                let v = out.last().and_then(|r| r.value.clone()).unwrap();
                assert_eq!(v, format!("v{}", out.last().unwrap().offset).into_bytes());
                if !more {
                    break;
                }
            }
            assert_eq!(
                chunks,
                [(11..16).collect::<Vec<i64>>(), (16..21).collect(), vec![21]],
                "{compression:?}"
            );
        }
    }
}
