//! The record collector (Kafka Streams' `RecordCollectorImpl` with its `StreamsProducer`):
//! every record a processor sends and every change-log record of its stores goes through
//! here to the produce side, and [`commit`](RecordCollector::commit) is the one commit path
//! (at-least-once: flush, then commit the offsets). Exactly-once replaces that one function
//! (send the offsets to the transaction, then commit the transaction).

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use crate::error::Error;
use crate::producer::ProducerRecord;
use crate::streams::commit::{CommitOffset, OffsetCommitOutcome, TopicPartition};
use crate::streams::StreamsTaskId;

use super::ports::{GroupPort, ProducePort, OP_TIMEOUT};
use crate::state::{changelog_topic, ChangelogRecord, StateStore};

/// Sends records to sinks and changelogs, and commits.
pub(crate) struct RecordCollector {
    producer: Box<dyn ProducePort + Send>,
    application_id: String,
    /// Records sent by processors.
    pub(crate) sent: u64,
    /// Change-log records sent.
    pub(crate) changelog_records: u64,
    /// Changelog topic per store name, computed once (`<application.id>-<store>-changelog`).
    changelog_topics: HashMap<String, String>,
    /// The changelog records of one store while they are sent (kept for its capacity).
    changelog_buffer: Vec<ChangelogRecord>,
}

impl RecordCollector {
    pub(crate) fn new(producer: Box<dyn ProducePort + Send>, application_id: &str) -> Self {
        RecordCollector {
            producer,
            application_id: application_id.to_string(),
            sent: 0,
            changelog_records: 0,
            changelog_topics: HashMap::new(),
            changelog_buffer: Vec::new(),
        }
    }

    /// Sends a processor's record; returns its partition.
    pub(crate) fn send(&mut self, record: ProducerRecord) -> Result<i32, Error> {
        self.sent += 1;
        self.producer.send(record)
    }

    /// Sends the change-log records `store` queued to its changelog partition (the task's
    /// partition), as Java's change-logging store does after each write.
    pub(crate) fn send_changelog(
        &mut self,
        task: &StreamsTaskId,
        store: &mut dyn StateStore,
    ) -> Result<(), Error> {
        let mut records = std::mem::take(&mut self.changelog_buffer);
        store.drain_changelog_into(&mut records);
        if records.is_empty() {
            self.changelog_buffer = records;
            return Ok(());
        }
        let topic = match self.changelog_topics.get(store.name()) {
            Some(t) => t,
            None => {
                let t = changelog_topic(&self.application_id, store.name());
                self.changelog_topics
                    .entry(store.name().to_string())
                    .or_insert(t)
            }
        };
        let mut failed = None;
        // Each record moves into the producer (key and value are not copied again); after
        // a failure the rest are dropped, as before.
        for c in records.drain(..) {
            match self
                .producer
                .send(c.into_producer_record_for(topic, task.partition))
            {
                Ok(_) => self.changelog_records += 1,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        self.changelog_buffer = records;
        failed.map_or(Ok(()), Err)
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
