//! What every state store is to the runtime ([`StateStore`], Kafka Streams' `StateStore`
//! with its change-logging duties), the two value layouts of the key-value stores
//! ([`StoreFormat`]), one changelog record ([`ChangelogRecord`]) and the changelog topic name
//! ([`changelog_topic`]).

use std::any::Any;

use crate::common::TopicPartition;
use crate::error::Error;
use crate::producer::ProducerRecord;

use super::logging::ChangelogSink;

/// The timestamp [`KeyValueStore::get_with_timestamp`](super::KeyValueStore::get_with_timestamp) gives for a plain store's values,
/// like Java's `ConsumerRecord.NO_TIMESTAMP`.
pub const NO_TIMESTAMP: i64 = -1;

/// How a store keeps values and writes its changelog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreFormat {
    /// A plain `KeyValueStore`: values as serialized.
    KeyValue,
    /// A `TimestampedKeyValueStore` (the DSL default): values with their timestamp.
    TimestampedKeyValue,
}

/// One record to write to (or read from) a store's changelog partition: key and value bytes
/// as they go on the wire (`None` = tombstone), the record timestamp, no headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangelogRecord {
    /// The serialized key.
    pub key: Vec<u8>,
    /// The serialized value without any timestamp prefix; `None` for a delete.
    pub value: Option<Vec<u8>>,
    /// The record timestamp (CreateTime).
    pub timestamp: i64,
}

impl ChangelogRecord {
    /// The record to produce: to `changelog` (the task's partition, explicitly), with the
    /// record timestamp and no headers, as Kafka Streams writes it. Moves key and value.
    pub fn into_producer_record(self, changelog: &TopicPartition) -> ProducerRecord {
        self.into_producer_record_for(&changelog.topic, changelog.partition)
    }

    /// [`into_producer_record`](Self::into_producer_record) to partition `partition` of
    /// `topic`, for a caller that keeps the changelog topic name rather than a
    /// [`TopicPartition`]. Moves key and value.
    pub fn into_producer_record_for(self, topic: &str, partition: i32) -> ProducerRecord {
        ProducerRecord {
            topic: topic.into(),
            partition: Some(partition),
            key: Some(self.key),
            value: self.value,
            headers: Vec::new(),
            timestamp: Some(self.timestamp),
        }
    }
}

/// What the runtime needs of every state store, whatever it keeps (today the in-memory
/// [`KeyValueStore`](super::KeyValueStore); window and session stores later): its name, its changelog position,
/// applying changelog records (restore, standby), the change-log records its writes
/// queued (sent through the record collector after each processed record), checkpoints and
/// wiping. Kafka Streams' `StateStore` plus its `ChangeLogging*` wrapper's duties.
///
/// The runtime holds a task's stores as `Box<dyn StateStore>` and finds them by name; a
/// processor reaches a store of a known kind through [`as_any_mut`](Self::as_any_mut)
/// (`TaskContext::store` does it for the key-value store). Restore and standby reads feed
/// raw changelog records through [`apply_changelog`](Self::apply_changelog); the records a
/// store's writes log leave through [`log_changes`](Self::log_changes) into the collector's
/// [`ChangelogSink`].
pub trait StateStore: Send + Any {
    /// The store name (its changelog is `<application.id>-<name>-changelog`).
    fn name(&self) -> &str;
    /// The offset of the last changelog record the store reflects, `None` if none.
    fn changelog_offset(&self) -> Option<i64>;
    /// Applies one changelog record at `offset` (`None` value = delete); queues nothing.
    fn apply_changelog(&mut self, offset: i64, key: &[u8], value: Option<&[u8]>, timestamp: i64);
    /// The changelog records queued by writes since the last call, in write order.
    fn take_changelog(&mut self) -> Vec<ChangelogRecord>;
    /// Moves the changelog records queued since the last call to the end of `out`, in
    /// write order (what the record collector calls, with a buffer it reuses). By default
    /// [`take_changelog`](Self::take_changelog); a store overrides it to keep its queue's
    /// capacity.
    fn drain_changelog_into(&mut self, out: &mut Vec<ChangelogRecord>) {
        out.append(&mut self.take_changelog());
    }
    /// Moves the changelog records queued since the last call into `sink` (the record
    /// collector, bound to this store's changelog partition), in write order. By default
    /// [`take_changelog`](Self::take_changelog), one record after the other; after a failed
    /// send the rest are dropped.
    fn log_changes(&mut self, sink: &mut dyn ChangelogSink) -> Result<(), Error> {
        for r in self.take_changelog() {
            sink.log_change(r)?;
        }
        Ok(())
    }
    /// Writes what the store's record cache holds dirty to the store and queues its
    /// changelog records (the runtime calls it on every commit of the task, before the
    /// offsets are committed). Nothing by default (no cache).
    fn flush_cache(&mut self) {}
    /// The store as [`Any`], to reach its own type (`downcast_ref`).
    fn as_any(&self) -> &dyn Any;
    /// The store as [`Any`], to reach its own type (`downcast_mut`).
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// Records that the store reflects its changelog up to `offset` (inclusive): every write
    /// was sent and acknowledged (a clean close).
    fn checkpoint(&mut self, offset: i64);
    /// Removes every entry, queued record and the changelog offset.
    fn clear(&mut self);
    /// Whether the store holds nothing.
    fn is_empty(&self) -> bool;
}

/// The changelog topic of `store` in application `application_id`:
/// `<application.id>-<store>-changelog` (`ProcessorStateManager.storeChangelogTopic`).
pub fn changelog_topic(application_id: &str, store: &str) -> String {
    format!("{application_id}-{store}-changelog")
}
