//! The record collector (Kafka Streams' `RecordCollectorImpl` with its `StreamsProducer`):
//! every record a processor sends and every change-log record of its stores goes through
//! here to the produce side, and [`commit`](RecordCollector::commit) is the one commit path:
//! at-least-once flushes, then commits the offsets; exactly-once ([`super::eos`]) sends the
//! offsets to the open transaction and commits it, and on a failure aborts it.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::error::Error;
use crate::producer::{ProducerRecord, RecordRef};
use crate::streams::commit::{CommitOffset, OffsetCommitOutcome, TopicPartition};

use super::eos::{on_failure, Failure};
use super::ports::{GroupPort, ProducePort, OP_TIMEOUT};
use super::state_manager::TaskStore;
use crate::state::{ChangelogRecord, ChangelogSink};

/// What a commit did.
#[derive(Debug)]
pub(crate) enum Commit {
    /// Nothing to commit.
    Nothing,
    /// The answer of the offset commit (at-least-once), or `Committed` (exactly-once).
    Done(OffsetCommitOutcome),
    /// Exactly-once: the transaction failed and was aborted (Java's `TaskMigratedException`):
    /// every active task must be closed dirty and revived from committed state.
    Migrated(String),
}

/// Sends records to sinks and changelogs, and commits.
pub(crate) struct RecordCollector {
    producer: Box<dyn ProducePort + Send>,
    /// Records sent by processors.
    pub(crate) sent: u64,
    /// Change-log records sent.
    pub(crate) changelog_records: u64,
    /// A send failed since [`take_send_failed`](Self::take_send_failed) (the producer
    /// surfaced a failed batch, or a stale epoch, on a send rather than on `send_ready`).
    send_failed: bool,
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
        // Lent to the producer, which copies only the record's encoding into the batch.
        let sent = self.collector.producer.send_ref(RecordRef {
            topic: &self.changelog.topic,
            partition: Some(self.changelog.partition),
            key: Some(&record.key),
            value: record.value.as_deref(),
            headers: &[],
            timestamp: Some(record.timestamp),
        });
        self.collector.send_failed |= sent.is_err();
        sent?;
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
            send_failed: false,
        }
    }

    /// Sends a processor's record; returns its partition.
    pub(crate) fn send(&mut self, record: ProducerRecord) -> Result<i32, Error> {
        self.sent += 1;
        let sent = self.producer.send(record);
        self.send_failed |= sent.is_err();
        sent
    }

    /// Whether a send failed since the last call (and resets it): under exactly-once the
    /// error is the producer's (a batch of the open transaction failed), not the
    /// processor's, and is handled as a failed transaction, as Java's `RecordCollectorImpl`
    /// turns it into `TaskMigratedException`.
    pub(crate) fn take_send_failed(&mut self) -> bool {
        std::mem::take(&mut self.send_failed)
    }

    /// Sends a processor's record, lent (nothing copied before the batch); returns its
    /// partition.
    pub(crate) fn send_ref(&mut self, record: RecordRef<'_>) -> Result<i32, Error> {
        self.sent += 1;
        let sent = self.producer.send_ref(record);
        self.send_failed |= sent.is_err();
        sent
    }

    /// Sends the change-log records `store` queued to its changelog partition (the task's
    /// partition), as Java's change-logging store does after each write: the store writes
    /// through this collector as its [`ChangelogSink`].
    /// A store without a changelog drops what it queued: it logs nothing.
    pub(crate) fn send_changelog(&mut self, store: &mut TaskStore) -> Result<(), Error> {
        let Some(changelog) = &store.changelog else {
            store.store.take_changelog();
            return Ok(());
        };
        let mut sink = ChangelogSender {
            collector: self,
            changelog,
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

    /// Whether the producer is transactional (`exactly_once_v2`).
    pub(crate) fn is_eos(&mut self) -> bool {
        self.producer.transactions().is_some()
    }

    /// The commit path. At-least-once: every record sent so far is acknowledged (flush)
    /// before `offsets` are committed, so a committed offset never runs ahead of the output
    /// of the records before it. Exactly-once: `offsets` (with their metadata, the partition
    /// time, as Java's) go into the open transaction with the group's member id and epoch,
    /// and the transaction commits (its records are flushed
    /// first); a failure aborts it ([`Commit::Migrated`]) or, if fatal, is returned.
    pub(crate) fn commit(
        &mut self,
        group: &mut dyn GroupPort,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
    ) -> Result<Commit, Error> {
        let Some(txn) = self.producer.transactions() else {
            self.flush()?;
            if offsets.is_empty() {
                return Ok(Commit::Nothing);
            }
            return group.commit(offsets).map(Commit::Done);
        };
        if offsets.is_empty() && !txn.in_transaction() {
            return Ok(Commit::Nothing);
        }
        let meta = group.group_metadata();
        match txn.commit(offsets, &meta) {
            Ok(()) => Ok(Commit::Done(OffsetCommitOutcome::Committed {
                member_epoch: meta.member_epoch,
                stale_epoch_retries: 0,
                partitions: offsets.len(),
            })),
            Err(e) => match on_failure(&e) {
                Failure::TaskMigrated { reset } => {
                    log::warn!("transaction commit failed ({e}): aborting, tasks migrated");
                    self.abort(reset)?;
                    Ok(Commit::Migrated(e.to_string()))
                }
                Failure::Fatal => Err(e.into()),
            },
        }
    }

    /// Exactly-once: aborts the open transaction (nothing of it becomes visible); with
    /// `reset`, or if the abort fails, a new producer is initialised instead, which aborts it
    /// at the coordinator. Nothing under at-least-once.
    pub(crate) fn abort(&mut self, reset: bool) -> Result<(), Error> {
        let Some(txn) = self.producer.transactions() else {
            return Ok(());
        };
        if !reset {
            match txn.abort() {
                Ok(()) => return Ok(()),
                Err(e) => log::warn!("abort failed ({e}): re-initialising the producer"),
            }
        }
        txn.reset()
    }
}
