//! Change-logging (Kafka Streams' `ChangeLogging*BytesStore` → `RecordCollector`): a store
//! queues the changelog records of its writes in a [`ChangeLog`] and hands them, moved, to a
//! [`ChangelogSink`]. The sink is the runtime's record collector, bound to the store's
//! changelog partition; the store knows neither the producer nor the topic.

use crate::error::Error;

use super::store::ChangelogRecord;

/// Where a store's changelog records go: the record collector, bound to one changelog
/// partition (named once per store). Each record is moved into the producer record.
pub trait ChangelogSink {
    /// Sends one changelog record of the store to its changelog partition.
    fn log_change(&mut self, record: ChangelogRecord) -> Result<(), Error>;
}

/// A sink that keeps what it is given, in order (for tests and for callers that send the
/// records themselves).
impl ChangelogSink for Vec<ChangelogRecord> {
    fn log_change(&mut self, record: ChangelogRecord) -> Result<(), Error> {
        self.push(record);
        Ok(())
    }
}

/// The change-logging layer of a store: the records its writes logged and not yet sent, in
/// write order.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChangeLog {
    pending: Vec<ChangelogRecord>,
}

impl ChangeLog {
    /// Queues the record of one write (`value` without any timestamp prefix).
    pub(crate) fn log(&mut self, key: Vec<u8>, value: Option<Vec<u8>>, timestamp: i64) {
        self.pending.push(ChangelogRecord {
            key,
            value,
            timestamp,
        });
    }

    /// The queued records, in write order.
    pub(crate) fn take(&mut self) -> Vec<ChangelogRecord> {
        std::mem::take(&mut self.pending)
    }

    /// Moves the queued records to the end of `out`; the queue keeps its capacity.
    pub(crate) fn drain_into(&mut self, out: &mut Vec<ChangelogRecord>) {
        out.append(&mut self.pending);
    }

    /// Moves the queued records into `sink`, in write order; after a failure the rest are
    /// dropped (the runtime fails, and the task's uncommitted input is processed again).
    pub(crate) fn send_to(&mut self, sink: &mut dyn ChangelogSink) -> Result<(), Error> {
        let mut records = self.pending.drain(..);
        for r in records.by_ref() {
            sink.log_change(r)?;
        }
        Ok(())
    }

    /// Forgets the queued records.
    pub(crate) fn clear(&mut self) {
        self.pending.clear();
    }
}
