//! `isolation.level=read_committed`: drop the data of aborted transactions, as Java's
//! consumer does (`CompletedFetch.nextFetchedRecord`), from the Fetch response's
//! `abortedTransactions` list.

use std::collections::HashSet;

use super::{ControlRecordType, DecodeLimits, RawBatch, RecordsError};

/// One entry of a Fetch response partition's `abortedTransactions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AbortedTransaction {
    /// The producer whose transaction aborted.
    pub producer_id: i64,
    /// The first offset of the aborted transaction.
    pub first_offset: i64,
}

/// What to do with a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Hand its records to the application.
    Deliver,
    /// A control batch (commit/abort marker): never delivered, but its offsets count.
    SkipControl,
    /// Data of an aborted transaction: skipped under `read_committed`.
    SkipAborted,
}

/// The read-committed filter for one partition's fetched batches, fed in offset order.
///
/// ```
/// use kafka_streams_group::protocol::records::{AbortedTransaction, Admit, ReadCommitted};
/// let mut rc = ReadCommitted::new([AbortedTransaction { producer_id: 7, first_offset: 0 }]);
/// # let _ = &mut rc;
/// // for batch in BatchReader::new(records) { match rc.admit(&batch?)? { Admit::Deliver => .. } }
/// ```
#[derive(Debug, Clone, Default)]
pub struct ReadCommitted {
    /// Aborted transactions not yet reached, sorted by first offset, last first.
    pending: Vec<AbortedTransaction>,
    /// Producers whose current transaction is known to be aborted.
    aborted: HashSet<i64>,
    limits: DecodeLimits,
}

impl ReadCommitted {
    /// A filter for one fetch response partition's batches.
    pub fn new(aborted: impl IntoIterator<Item = AbortedTransaction>) -> ReadCommitted {
        let mut pending: Vec<_> = aborted.into_iter().collect();
        pending.sort_by_key(|t| std::cmp::Reverse(t.first_offset));
        ReadCommitted {
            pending,
            aborted: HashSet::new(),
            limits: DecodeLimits::default(),
        }
    }

    /// Whether to deliver `batch`. Batches must be given in offset order. A control batch's
    /// marker is decoded to see whether it ends an aborted transaction.
    pub fn admit(&mut self, batch: &RawBatch<'_>) -> Result<Admit, RecordsError> {
        let h = &batch.header;
        if h.has_producer_id() {
            // Every aborted transaction that began at or before this batch's end is now open.
            while let Some(t) = self.pending.last() {
                if t.first_offset > h.last_offset() {
                    break;
                }
                self.aborted.insert(t.producer_id);
                self.pending.pop();
            }
            if h.attributes.control {
                let decoded = batch.decode(&self.limits)?;
                if let Some(marker) = decoded.control_record() {
                    if marker?.kind == ControlRecordType::Abort {
                        self.aborted.remove(&h.producer_id);
                    }
                }
            } else if h.attributes.transactional && self.aborted.contains(&h.producer_id) {
                return Ok(Admit::SkipAborted);
            }
        }
        Ok(if h.attributes.control {
            Admit::SkipControl
        } else {
            Admit::Deliver
        })
    }
}

/// The `read_uncommitted` rule: everything but control batches.
pub fn admit_uncommitted(batch: &RawBatch<'_>) -> Admit {
    if batch.header.attributes.control {
        Admit::SkipControl
    } else {
        Admit::Deliver
    }
}
