//! The input side over the [`Fetcher`]: fetched records are copied into the task queues only
//! as far as each queue has room (`buffered.records.per.partition`); what a Fetch answer
//! holds beyond stays in its fetched buffer (as on the wire, not copied per record) and is
//! handed out by the next polls, and its partition is paused in the fetcher meanwhile, so
//! owned record copies are bounded by the setting and fetched bytes by one answer per
//! partition (`max.partition.fetch.bytes`), not by how much the broker has.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use crate::consumer::{Fetcher, PartitionRecords};
use crate::error::Error;
use crate::protocol::records::RawBatch;
use crate::streams::commit::TopicPartition;

use super::ports::InputPort;
use super::task::InputRecord;

/// The records of one Fetch answer not handed out yet.
struct Leftover {
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
}

impl FetchInput {
    pub(crate) fn new(fetcher: Fetcher) -> Self {
        FetchInput {
            fetcher,
            left: BTreeMap::new(),
            paused: BTreeSet::new(),
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
            if take(&mut l, limit, out)? {
                self.left.insert(tp, l);
            }
        }
        Ok(())
    }
}

/// Copies up to `limit` records of `l` into `out`; true if records remain.
fn take(l: &mut Leftover, limit: usize, out: &mut Vec<InputRecord>) -> Result<bool, Error> {
    let tp = l.part.topic_partition().clone();
    let from = l.part.first_offset().max(l.next);
    let mut taken = 0usize;
    while let Some((header, range)) = l.part.batches.get(l.batch) {
        if header.last_offset() < from {
            l.batch += 1;
            continue;
        }
        let raw = RawBatch {
            header: *header,
            bytes: l.part.buf.get(range.clone()).unwrap_or_default(),
        };
        let batch = raw.decode(&l.part.limits).map_err(|e| Error::Protocol {
            broker: None,
            message: format!("a fetched batch of {tp} does not decode: {e}"),
        })?;
        for r in batch.records().filter(|r| r.offset >= from) {
            if taken == limit {
                l.next = r.offset;
                return Ok(true);
            }
            out.push(InputRecord {
                partition: tp.clone(),
                offset: r.offset,
                timestamp: r.timestamp,
                key: r.key.map(<[u8]>::to_vec),
                value: r.value.map(<[u8]>::to_vec),
                headers: r
                    .headers()
                    .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                    .collect(),
            });
            taken += 1;
        }
        l.batch += 1;
    }
    Ok(false)
}

impl InputPort for FetchInput {
    fn assign(&mut self, partitions: Vec<TopicPartition>) {
        self.left.retain(|tp, _| partitions.contains(tp));
        self.paused.retain(|tp| partitions.contains(tp));
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
            let tp = part.topic_partition().clone();
            let mut l = Leftover {
                next: part.first_offset(),
                part,
                batch: 0,
            };
            if take(&mut l, room(&tp), &mut out)? {
                self.left.insert(tp, l);
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

    /// A fetched answer is handed out in chunks of at most the room, each record once, in
    /// offset order, from the fetch position on, compressed or not.
    #[test]
    fn a_fetched_answer_is_copied_out_in_chunks_of_the_room() {
        for compression in [Compression::None, Compression::Lz4] {
            let part = fetched(compression);
            let mut l = Leftover {
                next: part.first_offset(),
                part,
                batch: 0,
            };
            let mut chunks = Vec::new();
            loop {
                let mut out = Vec::new();
                let more = take(&mut l, 5, &mut out).unwrap();
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
