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
use std::fmt;

use std::any::Any;

use crate::error::Error;

use super::cache::{DirtyEntry, NamedCache, ThreadCache};
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
///
/// With a record cache ([`with_cache`](Self::with_cache), as the runtime makes its stores
/// unless `statestore.cache.max.bytes` is 0), writes wait in the cache and reach the map and
/// the changelog when [`flush_cache`](Self::flush_cache) is called (the runtime does it on
/// every commit, before the offsets) or when the cache evicts them: repeated updates of a
/// key in between are written once. Reads see the cached values.
pub struct KeyValueStore {
    name: String,
    format: StoreFormat,
    /// Local layout: the value (plain) or `[ts BE8][value]` (timestamped).
    entries: BTreeMap<Vec<u8>, Vec<u8>>,
    /// The change-logging layer: records of writes not yet sent.
    log: ChangeLog,
    changelog_offset: Option<i64>,
    /// The caching layer (Java's `CachingKeyValueStore`), if on.
    cache: Option<NamedCache>,
    /// Told of every entry the cache flushes.
    listener: Option<Box<dyn CacheFlushListener>>,
}

/// Told of each entry the record cache flushes to the store, after it is written (Java's
/// `CacheFlushListener`): the hook through which the DSL will forward a KTable's updates
/// downstream on flush, once per key and commit, as Kafka Streams does.
pub trait CacheFlushListener: Send {
    /// `key` now holds `new_value` (`None`: deleted), written at `timestamp`; `old_value`
    /// is what the store held before. Values are raw (no timestamp prefix).
    fn on_flush(
        &mut self,
        key: &[u8],
        new_value: Option<&[u8]>,
        old_value: Option<&[u8]>,
        timestamp: i64,
    );
}

impl fmt::Debug for KeyValueStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyValueStore")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("entries", &self.entries.len())
            .field("changelog_offset", &self.changelog_offset)
            .field("cache", &self.cache)
            .field("listener", &self.listener.is_some())
            .finish()
    }
}

impl Clone for KeyValueStore {
    /// A copy with the same entries, queued records and cache (on the same thread budget);
    /// the flush listener is not copied.
    fn clone(&self) -> Self {
        KeyValueStore {
            name: self.name.clone(),
            format: self.format,
            entries: self.entries.clone(),
            log: self.log.clone(),
            changelog_offset: self.changelog_offset,
            cache: self.cache.clone(),
            listener: None,
        }
    }
}

/// The local `[ts BE8][value]` layout of a timestamped value.
fn with_timestamp(timestamp: i64, value: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + value.len());
    v.extend_from_slice(&timestamp.to_be_bytes());
    v.extend_from_slice(value);
    v
}

/// Writes `value` (`None` deletes) under `key` in the local layout of `format`.
fn write_local(
    entries: &mut BTreeMap<Vec<u8>, Vec<u8>>,
    format: StoreFormat,
    key: &[u8],
    value: Option<&[u8]>,
    timestamp: i64,
) {
    match value {
        None => {
            entries.remove(key);
        }
        Some(v) => {
            // An existing key keeps its key bytes and reuses its value's buffer: a
            // count update allocates nothing here.
            if let Some(local) = entries.get_mut(key) {
                local.clear();
                if format == StoreFormat::TimestampedKeyValue {
                    local.extend_from_slice(&timestamp.to_be_bytes());
                }
                local.extend_from_slice(v);
                return;
            }
            let local = match format {
                StoreFormat::KeyValue => v.to_vec(),
                StoreFormat::TimestampedKeyValue => with_timestamp(timestamp, v),
            };
            entries.insert(key.to_vec(), local);
        }
    }
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
            cache: None,
            listener: None,
        }
    }

    /// This store with a record cache on `cache`'s budget (none if its budget is 0).
    pub fn with_cache(mut self, cache: &ThreadCache) -> Self {
        self.cache = cache.named();
        self
    }

    /// Whether writes are cached.
    pub fn is_cached(&self) -> bool {
        self.cache.is_some()
    }

    /// Sets the listener told of every entry the cache flushes (see [`CacheFlushListener`]).
    pub fn set_flush_listener(&mut self, listener: Box<dyn CacheFlushListener>) {
        self.listener = Some(listener);
    }

    /// Writes every dirty cached entry to the store and queues its changelog record, in the
    /// order of the entries' last writes (Java's `ThreadCache.flush` on commit).
    pub fn flush_cache(&mut self) {
        if let Some(c) = self.cache.as_mut() {
            let out = c.flush();
            self.write_flushed(out);
        }
    }

    /// Writes flushed cache entries to the map and the change log, and tells the listener
    /// (Java's `CachingKeyValueStore.putAndMaybeForward`).
    fn write_flushed(&mut self, entries: Vec<DirtyEntry>) {
        for DirtyEntry {
            key,
            value,
            timestamp,
        } in entries
        {
            let Some(listener) = self.listener.as_mut() else {
                write_local(
                    &mut self.entries,
                    self.format,
                    &key,
                    value.as_deref(),
                    timestamp,
                );
                self.log.log(key, value, timestamp);
                continue;
            };
            let old = self.entries.get(&key).map(|local| match self.format {
                StoreFormat::KeyValue => local.clone(),
                StoreFormat::TimestampedKeyValue => local.get(8..).unwrap_or_default().to_vec(),
            });
            // Nothing was there and nothing is: no write, nothing downstream (as Java).
            if value.is_none() && old.is_none() {
                continue;
            }
            write_local(
                &mut self.entries,
                self.format,
                &key,
                value.as_deref(),
                timestamp,
            );
            listener.on_flush(&key, value.as_deref(), old.as_deref(), timestamp);
            self.log.log(key, value, timestamp);
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
        if let Some((value, timestamp)) = self.cache.as_ref().and_then(|c| c.get(key)) {
            let timestamp = match self.format {
                StoreFormat::KeyValue => NO_TIMESTAMP,
                StoreFormat::TimestampedKeyValue => timestamp,
            };
            return value.map(|v| (v, timestamp));
        }
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
    ///
    /// With a cache, the write waits in it (see the type docs); a write that takes the
    /// thread's cache over budget evicts this store's eldest entries, and an evicted dirty
    /// entry flushes the store's dirty entries.
    pub fn put(&mut self, key: &[u8], value: Option<&[u8]>, timestamp: i64) {
        if let Some(c) = self.cache.as_mut() {
            c.put_slice(key, value, timestamp);
            while let Some(c) = self.cache.as_mut().filter(|c| c.must_evict()) {
                let out = c.evict();
                self.write_flushed(out);
            }
            return;
        }
        self.write(key, value, timestamp);
        self.log
            .log(key.to_vec(), value.map(<[u8]>::to_vec), timestamp);
    }

    fn write(&mut self, key: &[u8], value: Option<&[u8]>, timestamp: i64) {
        write_local(&mut self.entries, self.format, key, value, timestamp);
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
        if let Some(c) = self.cache.as_mut() {
            c.remove(key);
        }
        self.write(key, value, timestamp);
        self.changelog_offset = Some(offset);
    }

    /// Records that the store reflects its changelog up to `offset` (inclusive): every write
    /// was sent and acknowledged, as Java checkpoints an active task's produced offsets.
    /// A clean cache's entries are dropped: the store is closed on this thread.
    pub(crate) fn checkpoint(&mut self, offset: i64) {
        if let Some(c) = self.cache.as_mut() {
            c.release_clean();
        }
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
        if let Some(c) = self.cache.as_mut() {
            c.clear();
        }
        self.changelog_offset = None;
    }

    /// The number of keys (cached writes included).
    pub fn len(&self) -> usize {
        let Some(c) = self.cache.as_ref() else {
            return self.entries.len();
        };
        let mut n = self.entries.len();
        for (k, v) in c.sorted() {
            match (self.entries.contains_key(k), v.is_some()) {
                (false, true) => n += 1,
                (true, false) => n -= 1,
                _ => {}
            }
        }
        n
    }

    /// Whether the store holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys and values (without timestamps), in key order, cached writes included.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let timestamped = self.format == StoreFormat::TimestampedKeyValue;
        let stored = self.entries.iter().map(move |(k, v)| {
            let v = if timestamped {
                v.get(8..).unwrap_or_default()
            } else {
                v.as_slice()
            };
            (k.as_slice(), Some(v))
        });
        let cached = self
            .cache
            .as_ref()
            .map(NamedCache::sorted)
            .unwrap_or_default();
        Merge {
            stored: stored.peekable(),
            cached: cached.into_iter().peekable(),
        }
    }
}

/// A key with its value, `None` for a delete.
type Entry<'a> = (&'a [u8], Option<&'a [u8]>);

/// The store's entries overlaid with the cache's (both in key order); a cached delete hides
/// the stored entry.
struct Merge<'a, S: Iterator<Item = Entry<'a>>> {
    stored: std::iter::Peekable<S>,
    cached: std::iter::Peekable<std::vec::IntoIter<Entry<'a>>>,
}

impl<'a, S: Iterator<Item = Entry<'a>>> Iterator for Merge<'a, S> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let next = match (self.stored.peek(), self.cached.peek()) {
                (None, None) => return None,
                (Some(_), None) => self.stored.next(),
                (None, Some(_)) => self.cached.next(),
                (Some(s), Some(c)) => match s.0.cmp(c.0) {
                    std::cmp::Ordering::Less => self.stored.next(),
                    std::cmp::Ordering::Greater => self.cached.next(),
                    std::cmp::Ordering::Equal => {
                        self.stored.next();
                        self.cached.next()
                    }
                },
            };
            if let Some((k, Some(v))) = next {
                return Some((k, v));
            }
        }
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

    fn flush_cache(&mut self) {
        KeyValueStore::flush_cache(self);
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
    use crate::state::ThreadCache;

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

    struct Seen(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl CacheFlushListener for Seen {
        fn on_flush(&mut self, key: &[u8], new: Option<&[u8]>, old: Option<&[u8]>, ts: i64) {
            let s = |v: Option<&[u8]>| v.map(|v| String::from_utf8_lossy(v).into_owned());
            let k = String::from_utf8_lossy(key);
            self.0
                .lock()
                .unwrap()
                .push(format!("{k} {:?}<-{:?} @{ts}", s(new), s(old)));
        }
    }

    /// Reads, iteration and length see cached writes; a flush writes each dirty key once
    /// (the timestamped layout kept), tells the listener old and new values, and skips a
    /// delete of a key that never was (Java's `putAndMaybeForward`).
    #[test]
    fn a_cached_store_reads_its_cache_and_flushes_each_key_once() {
        let cache = ThreadCache::new(1 << 20);
        let mut s = KeyValueStore::new("t", StoreFormat::TimestampedKeyValue).with_cache(&cache);
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        s.apply_changelog(0, b"b", Some(b"0"), 1);
        s.apply_changelog(1, b"c", Some(b"0"), 1);
        s.set_flush_listener(Box::new(Seen(seen.clone())));
        s.put(b"a", Some(b"1"), 5);
        s.put(b"a", Some(b"2"), 6);
        s.put(b"c", None, 7);
        s.put(b"z", None, 8);
        assert_eq!(s.get_with_timestamp(b"a"), Some((&b"2"[..], 6)));
        assert_eq!(s.get(b"c"), None, "a cached delete hides the stored value");
        let all: Vec<_> = s.iter().collect();
        assert_eq!(all, vec![(&b"a"[..], &b"2"[..]), (&b"b"[..], &b"0"[..])]);
        assert_eq!(s.len(), 2);
        assert!(s.take_changelog().is_empty());
        s.flush_cache();
        let log = s.take_changelog();
        let keys: Vec<_> = log
            .iter()
            .map(|r| (r.key.clone(), r.value.clone(), r.timestamp))
            .collect();
        assert_eq!(
            keys,
            vec![
                (b"a".to_vec(), Some(b"2".to_vec()), 6),
                (b"c".to_vec(), None, 7)
            ]
        );
        assert_eq!(
            *seen.lock().unwrap(),
            vec!["a Some(\"2\")<-None @6", "c None<-Some(\"0\") @7"]
        );
        assert_eq!(hex(s.entries.get(&b"a"[..]).unwrap()), "000000000000000632");
        assert_eq!(s.len(), 2);
        s.flush_cache();
        assert!(s.take_changelog().is_empty(), "flushed once");
        assert!(cache.size_bytes() > 0);
        s.clear();
        assert_eq!(cache.size_bytes(), 0);
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
