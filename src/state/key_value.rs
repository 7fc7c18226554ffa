//! In-memory key-value stores over bytes that read and write Kafka Streams' changelog format
//! (streams-data-path.md §5.2), so a store moves between a Java and a Rust instance through
//! its changelog topic.
//!
//! * Plain store (`ChangeLoggingKeyValueBytesStore`): the local value is the serialized
//!   value; the changelog record is `(key, value, timestamp of the record processed)`.
//! * Timestamped store (DSL default for `count`/`reduce`/`aggregate`,
//!   `ChangeLoggingTimestampedKeyValueBytesStore`): the local value is
//!   `[timestamp: i64 BE][value]` (`ValueAndTimestampSerializer`); the changelog holds the
//!   value **without** the 8-byte prefix and the timestamp as the record timestamp. Restore
//!   rebuilds the prefix from the record timestamp (`RecordConverters.rawValueToTimestampedValue`).
//!
//! A delete is a tombstone (null value) in both formats. No headers are written.

use std::collections::BTreeMap;

use std::any::Any;

use crate::error::Error;

use super::logging::{ChangeLog, ChangelogSink};
use super::store::{ChangelogRecord, StateStore, StoreFormat, NO_TIMESTAMP};

/// An in-memory key-value store of one task, in key order. See the module docs.
///
/// ```
/// use kafka_streams_group::state::{KeyValueStore, StoreFormat};
/// let mut s = KeyValueStore::new("counts", StoreFormat::TimestampedKeyValue);
/// s.put(b"kafka", Some(&3i64.to_be_bytes()), 1_700_000_000_000);
/// assert_eq!(s.get_with_timestamp(b"kafka"), Some((&3i64.to_be_bytes()[..], 1_700_000_000_000)));
/// let log = s.take_changelog();
/// assert_eq!(log[0].value.as_deref(), Some(&3i64.to_be_bytes()[..])); // no timestamp prefix
/// ```
#[derive(Debug, Clone)]
pub struct KeyValueStore {
    name: String,
    format: StoreFormat,
    /// Local layout: the value (plain) or `[ts BE8][value]` (timestamped).
    entries: BTreeMap<Vec<u8>, Vec<u8>>,
    /// The change-logging layer: records of writes not yet sent.
    log: ChangeLog,
    changelog_offset: Option<i64>,
}

/// The local `[ts BE8][value]` layout of a timestamped value.
fn with_timestamp(timestamp: i64, value: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + value.len());
    v.extend_from_slice(&timestamp.to_be_bytes());
    v.extend_from_slice(value);
    v
}

/// Splits a local timestamped value; `None` for fewer than 8 bytes (never stored).
fn split_timestamp(local: &[u8]) -> Option<(&[u8], i64)> {
    let (ts, value) = local.split_first_chunk::<8>()?;
    Some((value, i64::from_be_bytes(*ts)))
}

impl KeyValueStore {
    /// An empty store named `name` (the store name in the topology, e.g. `counts`).
    pub fn new(name: impl Into<String>, format: StoreFormat) -> Self {
        KeyValueStore {
            name: name.into(),
            format,
            entries: BTreeMap::new(),
            log: ChangeLog::default(),
            changelog_offset: None,
        }
    }

    /// The store name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The format.
    pub fn format(&self) -> StoreFormat {
        self.format
    }

    /// The value of `key` (for a timestamped store without its timestamp).
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.get_with_timestamp(key).map(|(v, _)| v)
    }

    /// The value of `key` and its timestamp; [`NO_TIMESTAMP`] (-1) in a plain store.
    pub fn get_with_timestamp(&self, key: &[u8]) -> Option<(&[u8], i64)> {
        let local = self.entries.get(key)?;
        match self.format {
            StoreFormat::KeyValue => Some((local, NO_TIMESTAMP)),
            StoreFormat::TimestampedKeyValue => split_timestamp(local),
        }
    }

    /// Writes `value` for `key` (`None` deletes) and queues the changelog record Java
    /// writes: key, the value without timestamp prefix (or a tombstone), record timestamp
    /// `timestamp` (the value's timestamp in a timestamped store, the timestamp of the
    /// record being processed in a plain one).
    pub fn put(&mut self, key: &[u8], value: Option<&[u8]>, timestamp: i64) {
        self.write(key, value, timestamp);
        self.log
            .log(key.to_vec(), value.map(<[u8]>::to_vec), timestamp);
    }

    fn write(&mut self, key: &[u8], value: Option<&[u8]>, timestamp: i64) {
        match value {
            None => {
                self.entries.remove(key);
            }
            Some(v) => {
                // An existing key keeps its key bytes and reuses its value's buffer: a
                // count update allocates nothing here.
                if let Some(local) = self.entries.get_mut(key) {
                    local.clear();
                    if self.format == StoreFormat::TimestampedKeyValue {
                        local.extend_from_slice(&timestamp.to_be_bytes());
                    }
                    local.extend_from_slice(v);
                    return;
                }
                let local = match self.format {
                    StoreFormat::KeyValue => v.to_vec(),
                    StoreFormat::TimestampedKeyValue => with_timestamp(timestamp, v),
                };
                self.entries.insert(key.to_vec(), local);
            }
        }
    }

    /// The changelog records queued by [`put`](Self::put) since the last call, in write
    /// order (the caller sends them to the changelog partition of the task).
    pub fn take_changelog(&mut self) -> Vec<ChangelogRecord> {
        self.log.take()
    }

    /// Moves the queued changelog records to the end of `out`, in write order; the store
    /// keeps its queue's capacity, so the next writes queue without allocating it again.
    pub fn drain_changelog_into(&mut self, out: &mut Vec<ChangelogRecord>) {
        self.log.drain_into(out);
    }

    /// Moves the queued changelog records into `sink` (the record collector), in write
    /// order.
    pub fn log_changes(&mut self, sink: &mut dyn ChangelogSink) -> Result<(), Error> {
        self.log.send_to(sink)
    }

    /// Applies one changelog record at `offset` (restore or standby): a timestamped store
    /// keeps `[timestamp BE8][value]`; `None` deletes. Nothing is queued for the changelog.
    pub fn apply_changelog(
        &mut self,
        offset: i64,
        key: &[u8],
        value: Option<&[u8]>,
        timestamp: i64,
    ) {
        self.write(key, value, timestamp);
        self.changelog_offset = Some(offset);
    }

    /// Records that the store reflects its changelog up to `offset` (inclusive): every write
    /// was sent and acknowledged, as Java checkpoints an active task's produced offsets.
    pub(crate) fn checkpoint(&mut self, offset: i64) {
        self.changelog_offset = Some(offset);
    }

    /// The offset of the last changelog record applied, `None` if none was.
    pub fn changelog_offset(&self) -> Option<i64> {
        self.changelog_offset
    }

    /// Removes every entry, the queued changelog records and the changelog offset (a store
    /// whose changelog position is no longer valid is rebuilt from scratch, as Java wipes a
    /// corrupted task).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.log.clear();
        self.changelog_offset = None;
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the store holds no key.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Keys and values (without timestamps), in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let timestamped = self.format == StoreFormat::TimestampedKeyValue;
        self.entries.iter().map(move |(k, v)| {
            let v = if timestamped {
                v.get(8..).unwrap_or_default()
            } else {
                v.as_slice()
            };
            (k.as_slice(), v)
        })
    }
}

impl StateStore for KeyValueStore {
    fn name(&self) -> &str {
        KeyValueStore::name(self)
    }

    fn changelog_offset(&self) -> Option<i64> {
        KeyValueStore::changelog_offset(self)
    }

    fn apply_changelog(&mut self, offset: i64, key: &[u8], value: Option<&[u8]>, timestamp: i64) {
        KeyValueStore::apply_changelog(self, offset, key, value, timestamp);
    }

    fn take_changelog(&mut self) -> Vec<ChangelogRecord> {
        KeyValueStore::take_changelog(self)
    }

    fn drain_changelog_into(&mut self, out: &mut Vec<ChangelogRecord>) {
        KeyValueStore::drain_changelog_into(self, out);
    }

    fn log_changes(&mut self, sink: &mut dyn ChangelogSink) -> Result<(), Error> {
        KeyValueStore::log_changes(self, sink)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn checkpoint(&mut self, offset: i64) {
        KeyValueStore::checkpoint(self, offset);
    }

    fn clear(&mut self) {
        KeyValueStore::clear(self);
    }

    fn is_empty(&self) -> bool {
        KeyValueStore::is_empty(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::TopicPartition;
    use crate::producer::ProducerRecord;
    use crate::state::changelog_topic;

    const TS: i64 = 1_700_000_000_000;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// streams-data-path.md §5.2: "kafka" counted 3 times, last seen at t=1700000000000 →
    /// key 6b61666b61, value 0000000000000003, timestamp 1700000000000, no prefix.
    #[test]
    fn word_count_changelog_record_matches_java() {
        let mut s = KeyValueStore::new("counts", StoreFormat::TimestampedKeyValue);
        for (n, ts) in [(1i64, TS - 20), (2, TS - 10), (3, TS)] {
            s.put(b"kafka", Some(&n.to_be_bytes()), ts);
        }
        let log = s.take_changelog();
        assert_eq!(log.len(), 3);
        let last = log.last().unwrap();
        assert_eq!(hex(&last.key), "6b61666b61");
        assert_eq!(hex(last.value.as_deref().unwrap()), "0000000000000003");
        assert_eq!(last.timestamp, TS);
        assert!(s.take_changelog().is_empty(), "drained");
        // Local layout: [ts BE8][value].
        assert_eq!(
            hex(s.entries.get(&b"kafka"[..]).unwrap()),
            "0000018bcfe568000000000000000003"
        );
        assert_eq!(s.get(b"kafka"), Some(&3i64.to_be_bytes()[..]));
        assert_eq!(s.get_with_timestamp(b"kafka").unwrap().1, TS);
    }

    #[test]
    fn restore_rebuilds_the_timestamp_prefix() {
        let mut s = KeyValueStore::new("counts", StoreFormat::TimestampedKeyValue);
        s.apply_changelog(41, b"kafka", Some(&[0, 0, 0, 0, 0, 0, 0, 3]), TS);
        assert_eq!(s.changelog_offset(), Some(41));
        assert_eq!(
            s.get_with_timestamp(b"kafka"),
            Some((&[0u8, 0, 0, 0, 0, 0, 0, 3][..], TS))
        );
        assert!(s.take_changelog().is_empty(), "restore writes no changelog");
        s.apply_changelog(42, b"kafka", None, TS + 1);
        assert_eq!(s.get(b"kafka"), None);
        assert_eq!(s.changelog_offset(), Some(42));
        assert!(s.is_empty());
    }

    #[test]
    fn a_store_written_here_restores_equal_through_its_changelog() {
        for format in [StoreFormat::KeyValue, StoreFormat::TimestampedKeyValue] {
            let mut a = KeyValueStore::new("s", format);
            a.put(b"x", Some(b"1"), 10);
            a.put(b"y", Some(b""), 11);
            a.put(b"z", Some(b"3"), 12);
            a.put(b"x", None, 13);
            a.put(b"z", Some(b"4"), 14);
            let mut b = KeyValueStore::new("s", format);
            for (offset, r) in a.take_changelog().into_iter().enumerate() {
                b.apply_changelog(offset as i64, &r.key, r.value.as_deref(), r.timestamp);
            }
            let av: Vec<_> = a.iter().collect();
            let bv: Vec<_> = b.iter().collect();
            assert_eq!(av, bv, "{format:?}");
            assert_eq!(bv, vec![(&b"y"[..], &b""[..]), (&b"z"[..], &b"4"[..])]);
            assert_eq!(
                a.get_with_timestamp(b"z"),
                b.get_with_timestamp(b"z"),
                "{format:?}"
            );
            assert_eq!(b.changelog_offset(), Some(4));
            assert_eq!(b.len(), 2);
        }
    }

    #[test]
    fn plain_store_keeps_values_as_is_and_logs_the_record_timestamp() {
        let mut s = KeyValueStore::new("kv", StoreFormat::KeyValue);
        s.put(b"k", Some(b"v"), 5);
        assert_eq!(s.get_with_timestamp(b"k"), Some((&b"v"[..], NO_TIMESTAMP)));
        s.put(b"k", None, 6);
        let log = s.take_changelog();
        assert_eq!(
            log,
            vec![
                ChangelogRecord {
                    key: b"k".to_vec(),
                    value: Some(b"v".to_vec()),
                    timestamp: 5
                },
                ChangelogRecord {
                    key: b"k".to_vec(),
                    value: None,
                    timestamp: 6
                },
            ]
        );
        assert_eq!(s.format(), StoreFormat::KeyValue);
        assert_eq!(s.name(), "kv");
        assert_eq!(s.changelog_offset(), None, "put does not move the offset");
    }

    #[test]
    fn iteration_is_in_key_byte_order_and_clear_forgets_everything() {
        let mut s = KeyValueStore::new("t", StoreFormat::TimestampedKeyValue);
        for k in ["b", "a", "é", "c"] {
            s.apply_changelog(1, k.as_bytes(), Some(k.as_bytes()), 1);
        }
        let keys: Vec<_> = s.iter().map(|(k, _)| k.to_vec()).collect();
        assert_eq!(
            keys,
            vec![
                b"a".to_vec(),
                b"b".to_vec(),
                b"c".to_vec(),
                "é".as_bytes().to_vec()
            ]
        );
        assert!(s.iter().all(|(k, v)| k == v));
        s.put(b"q", Some(b"1"), 1);
        s.clear();
        assert!(s.is_empty());
        assert_eq!(s.changelog_offset(), None);
        assert!(s.take_changelog().is_empty());
    }

    #[test]
    fn changelog_records_go_to_the_task_partition_with_their_timestamp_and_no_headers() {
        let mut s = KeyValueStore::new("counts", StoreFormat::TimestampedKeyValue);
        s.put(b"kafka", Some(&3i64.to_be_bytes()), TS);
        s.put(b"gone", None, TS + 1);
        let tp = TopicPartition::new("app-counts-changelog", 2);
        let recs: Vec<ProducerRecord> = s
            .take_changelog()
            .into_iter()
            .map(|r| r.into_producer_record(&tp))
            .collect();
        assert_eq!(
            recs[0],
            ProducerRecord::new(
                "app-counts-changelog",
                Some(b"kafka"),
                Some(&[0, 0, 0, 0, 0, 0, 0, 3])
            )
            .partition(2)
            .timestamp(TS)
        );
        assert_eq!(recs[1].value, None, "a tombstone");
        assert_eq!(
            (recs[1].partition, recs[1].timestamp),
            (Some(2), Some(TS + 1))
        );
        assert!(recs.iter().all(|r| r.headers.is_empty()));
    }

    #[test]
    fn changelog_topic_name() {
        assert_eq!(
            changelog_topic(
                "streams-wordcount",
                "KSTREAM-AGGREGATE-STATE-STORE-0000000003"
            ),
            "streams-wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog"
        );
    }
}
