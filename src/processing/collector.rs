//! The record collector (Kafka Streams' `RecordCollectorImpl` with its `StreamsProducer`):
//! every record a processor sends and every change-log record of its stores goes through
//! here to the produce side, and [`commit`](RecordCollector::commit) is the one commit path
//! (at-least-once: flush, then commit the offsets). Exactly-once replaces that one function
//! (send the offsets to the transaction, then commit the transaction).

use std::collections::BTreeMap;
use std::time::Instant;

use crate::error::Error;
use crate::producer::ProducerRecord;
use crate::streams::commit::{CommitOffset, OffsetCommitOutcome, TopicPartition};

use super::ports::{GroupPort, ProducePort, OP_TIMEOUT};
use super::state_manager::TaskStore;
use crate::state::{ChangelogRecord, ChangelogSink};

/// Sends records to sinks and changelogs, and commits.
pub(crate) struct RecordCollector {
    producer: Box<dyn ProducePort + Send>,
    /// Records sent by processors.
    pub(crate) sent: u64,
    /// Change-log records sent.
    pub(crate) changelog_records: u64,
}

/// The collector bound to one store's changelog partition: the [`ChangelogSink`] the store's
/// change-logging writes through (Java's `ChangeLoggingKeyValueBytesStore` →
/// `RecordCollector.send`).
struct ChangelogSender<'a> {
    collector: &'a mut RecordCollector,
    changelog: &'a TopicPartition,
}

impl ChangelogSink for ChangelogSender<'_> {
    fn log_change(&mut self, record: ChangelogRecord) -> Result<(), Error> {
        // Key and value move into the producer record; only the topic name is copied.
        let r = record.into_producer_record(self.changelog);
        self.collector.producer.send(r)?;
        self.collector.changelog_records += 1;
        Ok(())
    }
}

impl RecordCollector {
    pub(crate) fn new(producer: Box<dyn ProducePort + Send>) -> Self {
        RecordCollector {
            producer,
            sent: 0,
            changelog_records: 0,
        }
    }

    /// Sends a processor's record; returns its partition.
    pub(crate) fn send(&mut self, record: ProducerRecord) -> Result<i32, Error> {
        self.sent += 1;
        self.producer.send(record)
    }

    /// Sends the change-log records `store` queued to its changelog partition (the task's
    /// partition), as Java's change-logging store does after each write: the store writes
    /// through this collector as its [`ChangelogSink`].
    pub(crate) fn send_changelog(&mut self, store: &mut TaskStore) -> Result<(), Error> {
        let mut sink = ChangelogSender {
            collector: self,
            changelog: &store.changelog,
        };
        store.store.log_changes(&mut sink)
    }

    /// Sends the batches whose linger passed (the loop does it every iteration, as Java's
    /// producer I/O thread would).
    pub(crate) fn send_ready(&mut self, deadline: Instant) -> Result<(), Error> {
        self.producer.send_ready(deadline)
    }

    /// Sends everything queued and waits for the answers (before a checkpoint).
    pub(crate) fn flush(&mut self) -> Result<(), Error> {
        self.producer.flush(Instant::now() + OP_TIMEOUT)
    }

    /// The commit path, at-least-once: every record sent so far is acknowledged (flush)
    /// before `offsets` are committed, so a committed offset never runs ahead of the output
    /// of the records before it; `None` if there was nothing to commit. Exactly-once replaces
    /// this function.
    pub(crate) fn commit(
        &mut self,
        group: &mut dyn GroupPort,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
    ) -> Result<Option<OffsetCommitOutcome>, Error> {
        self.flush()?;
        if offsets.is_empty() {
            return Ok(None);
        }
        group.commit(offsets).map(Some)
    }
}
