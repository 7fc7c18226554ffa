//! Fetched records: one owned buffer per partition and answer, decoded on demand.
//!
//! A Fetch response's record bytes move into a [`PartitionRecords`] without a copy. The
//! batches to deliver (control batches and, under `read_committed`, aborted data already
//! dropped) are indexed when the answer is handled; [`PartitionRecords::batches`] decodes them
//! one at a time and the [`Record`]s borrow key, value and headers from the buffer (or from
//! the batch's one decompressed buffer).

use std::ops::Range;
use std::sync::Arc;

use crate::common::TopicPartition;
use crate::protocol::records::{
    BatchHeader, DecodeLimits, RawBatch, Record, RecordBatch, RecordsError,
};

/// The records of one partition from one Fetch answer, owned.
#[derive(Debug, Clone)]
pub struct PartitionRecords {
    pub(crate) tp: TopicPartition,
    /// Shared with the [`FetchedRecord`](super::FetchedRecord)s of uncompressed batches.
    pub(crate) buf: Arc<Vec<u8>>,
    pub(crate) batches: Vec<(BatchHeader, Range<usize>)>,
    /// The position the fetch was made at: records below it (in the first batch) are skipped.
    pub(crate) from: i64,
    /// The position after these records.
    pub(crate) next_offset: i64,
    pub(crate) high_watermark: i64,
    pub(crate) limits: DecodeLimits,
}

impl PartitionRecords {
    /// The partition.
    pub fn topic_partition(&self) -> &TopicPartition {
        &self.tp
    }

    /// The first offset delivered (the position the fetch was made at).
    pub fn first_offset(&self) -> i64 {
        self.from
    }

    /// The fetcher's position after these records: the offset to commit once they are
    /// processed.
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }

    /// The partition's high watermark when the broker answered.
    pub fn high_watermark(&self) -> i64 {
        self.high_watermark
    }

    /// The number of batches to deliver (each may hold records below
    /// [`first_offset`](Self::first_offset), which are skipped).
    pub fn batch_count(&self) -> usize {
        self.batches.len()
    }

    /// Bytes of record data held (compressed as on the wire).
    pub fn size_in_bytes(&self) -> usize {
        self.batches.iter().map(|(_, r)| r.len()).sum()
    }

    /// The batches, decoded one at a time, in offset order.
    pub fn batches(&self) -> impl Iterator<Item = Result<FetchedBatch<'_>, RecordsError>> + '_ {
        self.batches.iter().map(move |(header, range)| {
            let raw = RawBatch {
                header: *header,
                bytes: self.buf.get(range.clone()).unwrap_or_default(),
            };
            Ok(FetchedBatch {
                batch: raw.decode(&self.limits)?,
                from: self.from,
            })
        })
    }

    /// Calls `f` on every record in offset order; returns how many there were.
    pub fn for_each_record(&self, mut f: impl FnMut(&Record<'_>)) -> Result<usize, RecordsError> {
        let mut n = 0;
        for batch in self.batches() {
            let batch = batch?;
            for r in batch.records() {
                f(&r);
                n += 1;
            }
        }
        Ok(n)
    }
}

/// One decoded batch of a [`PartitionRecords`].
#[derive(Debug, Clone)]
pub struct FetchedBatch<'a> {
    batch: RecordBatch<'a>,
    from: i64,
}

impl<'a> FetchedBatch<'a> {
    /// The batch header (base offset, producer, timestamps, compression).
    pub fn header(&self) -> &BatchHeader {
        &self.batch.header
    }

    /// The records at or above the fetch position, in offset order.
    pub fn records(&self) -> impl Iterator<Item = Record<'_>> + '_ {
        let from = self.from;
        self.batch.records().filter(move |r| r.offset >= from)
    }

    /// Whether the records borrow from the fetched bytes (an uncompressed batch).
    pub fn is_borrowed(&self) -> bool {
        self.batch.is_borrowed()
    }
}
