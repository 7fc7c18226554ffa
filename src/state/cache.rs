//! The record cache (Kafka Streams' `ThreadCache` with its `NamedCache`s, read by
//! `CachingKeyValueStore`): writes to a store stay in the cache, dirty, until the task commits
//! or the cache evicts them, so repeated updates of a key between commits reach the store's
//! changelog (and, through a [`CacheFlushListener`], the downstream processors) once.
//!
//! * One [`ThreadCache`] per stream thread: `statestore.cache.max.bytes` (Java's default
//!   10 MiB) shared by the stores of every task of the thread; 0 turns caching off.
//! * One named cache per store of a task, in least-recently-used order (a read or a write
//!   makes an entry the newest). A write that takes the thread's cache over its budget evicts
//!   the eldest entries of the store written to, as Java does (never another store's); an
//!   evicted dirty entry flushes the whole named cache: the evicted entry first, then the
//!   other dirty entries in the order of their last write.
//! * Sizes are Java's estimate (`NamedCache.LRUNode.size()`): key and value bytes plus 45 bytes
//!   of bookkeeping per entry (without the input topic's name and headers that Java's record
//!   context adds).
//!
//! Unlike Java, a read that misses the cache is served by the in-memory map and not copied
//! into the cache: the map is as fast as the cache, and the copy would only take budget.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Kafka Streams' default `statestore.cache.max.bytes`: 10 MiB per process (here per
/// thread, with one stream thread per runtime).
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// Per-entry bookkeeping counted as Java counts it: the node's three references (24), the
/// dirty flag (1), the record context's timestamp, offset and partition (20).
const ENTRY_OVERHEAD: usize = 45;

/// The record cache of one stream thread: a byte budget shared by the cached stores of all
/// its tasks (Java's `ThreadCache`). Clones share the budget.
///
/// ```
/// use kafka_streams_group::state::{KeyValueStore, StoreFormat, ThreadCache};
/// let cache = ThreadCache::new(1024 * 1024);
/// let mut s = KeyValueStore::new("counts", StoreFormat::KeyValue).with_cache(&cache);
/// for n in 1..=3i64 {
///     s.put(b"kafka", Some(&n.to_be_bytes()), n);
/// }
/// assert!(s.take_changelog().is_empty(), "the writes wait in the cache");
/// s.flush_cache();
/// assert_eq!(s.take_changelog().len(), 1, "three updates, one changelog record");
/// ```
#[derive(Clone, Debug)]
pub struct ThreadCache {
    max_bytes: usize,
    size: Arc<AtomicUsize>,
}

impl ThreadCache {
    /// A cache of at most `max_bytes` (0 = no caching: every write goes to the store and
    /// its changelog at once).
    pub fn new(max_bytes: u64) -> Self {
        ThreadCache {
            max_bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX),
            size: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The budget in bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The bytes held now by the stores sharing this cache.
    pub fn size_bytes(&self) -> usize {
        self.size.load(Ordering::Relaxed)
    }

    fn over_budget(&self) -> bool {
        self.size_bytes() > self.max_bytes
    }

    /// A named cache of one store on this budget; `None` when caching is off.
    pub(crate) fn named(&self) -> Option<NamedCache> {
        (self.max_bytes > 0).then(|| NamedCache {
            budget: self.clone(),
            entries: HashMap::new(),
            lru: RefCell::new(BTreeMap::new()),
            next: Cell::new(0),
            dirty: BTreeMap::new(),
            bytes: 0,
        })
    }
}

/// One dirty entry leaving the cache: the raw value (`None` = delete) and the timestamp of
/// the write.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct DirtyEntry {
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
    pub timestamp: i64,
}

struct Node {
    value: Option<Vec<u8>>,
    timestamp: i64,
    /// Position in the LRU order (larger = more recent).
    lru: Cell<u64>,
    /// Position in the dirty order, if dirty.
    dirty: Option<u64>,
}

impl Node {
    fn size(&self, key: &[u8]) -> usize {
        key.len() + self.value.as_ref().map_or(0, Vec::len) + ENTRY_OVERHEAD
    }
}

/// The cache of one store (Java's `NamedCache`).
pub(crate) struct NamedCache {
    budget: ThreadCache,
    entries: HashMap<Arc<[u8]>, Node>,
    /// LRU order: eldest first. In a `RefCell` so a read (`&self`) makes its entry newest.
    lru: RefCell<BTreeMap<u64, Arc<[u8]>>>,
    next: Cell<u64>,
    /// Dirty keys in the order of their last write.
    dirty: BTreeMap<u64, Arc<[u8]>>,
    /// This cache's share of the budget.
    bytes: usize,
}

impl fmt::Debug for NamedCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamedCache")
            .field("entries", &self.entries.len())
            .field("dirty", &self.dirty.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl Clone for NamedCache {
    /// A copy on the same budget, which then counts both.
    fn clone(&self) -> Self {
        let mut c = self.budget.named().unwrap_or_else(|| NamedCache {
            budget: self.budget.clone(),
            entries: HashMap::new(),
            lru: RefCell::new(BTreeMap::new()),
            next: Cell::new(0),
            dirty: BTreeMap::new(),
            bytes: 0,
        });
        let order: Vec<Arc<[u8]>> = self.lru.borrow().values().cloned().collect();
        for key in order {
            if let Some(n) = self.entries.get(&key) {
                c.put(&key, n.value.clone(), n.timestamp, n.dirty.is_some());
            }
        }
        c
    }
}

impl Drop for NamedCache {
    fn drop(&mut self) {
        self.budget.size.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

impl NamedCache {
    fn tick(&self) -> u64 {
        let n = self.next.get();
        self.next.set(n + 1);
        n
    }

    fn grow(&mut self, by: usize) {
        self.bytes += by;
        self.budget.size.fetch_add(by, Ordering::Relaxed);
    }

    fn shrink(&mut self, by: usize) {
        self.bytes = self.bytes.saturating_sub(by);
        self.budget.size.fetch_sub(by, Ordering::Relaxed);
    }

    /// The cached value of `key` (`Some(None)`: deleted in the cache) and its timestamp;
    /// the entry becomes the newest.
    pub(crate) fn get(&self, key: &[u8]) -> Option<(Option<&[u8]>, i64)> {
        let (k, node) = self.entries.get_key_value(key)?;
        let mut lru = self.lru.borrow_mut();
        lru.remove(&node.lru.get());
        let t = self.tick();
        node.lru.set(t);
        lru.insert(t, k.clone());
        Some((node.value.as_deref(), node.timestamp))
    }

    /// Writes `key` (dirty: to be flushed), the newest entry.
    pub(crate) fn put(&mut self, key: &[u8], value: Option<Vec<u8>>, timestamp: i64, dirty: bool) {
        let t = self.tick();
        let (k, old) = match self.entries.remove_entry(key) {
            Some((k, old)) => {
                self.lru.get_mut().remove(&old.lru.get());
                if let Some(d) = old.dirty {
                    self.dirty.remove(&d);
                }
                let size = old.size(&k);
                self.shrink(size);
                (k, Some(old))
            }
            None => (Arc::from(key), None),
        };
        drop(old);
        let dirty = dirty.then(|| {
            let d = self.tick();
            self.dirty.insert(d, k.clone());
            d
        });
        let node = Node {
            value,
            timestamp,
            lru: Cell::new(t),
            dirty,
        };
        self.grow(node.size(&k));
        self.lru.get_mut().insert(t, k.clone());
        self.entries.insert(k, node);
    }

    /// [`put`](Self::put) of a borrowed value, dirty: the store's write path. A key already
    /// cached is updated in place (its value buffer reused, no key looked up twice); a new
    /// key takes the general path.
    pub(crate) fn put_slice(&mut self, key: &[u8], value: Option<&[u8]>, timestamp: i64) {
        let (t, d) = (self.tick(), self.tick());
        let Some((k, node)) = self.entries.get_key_value(key) else {
            self.put(key, value.map(<[u8]>::to_vec), timestamp, true);
            return;
        };
        let k = Arc::clone(k);
        let old_lru = node.lru.get();
        let old_dirty = node.dirty;
        let old_size = node.size(&k);
        let lru = self.lru.get_mut();
        lru.remove(&old_lru);
        lru.insert(t, Arc::clone(&k));
        if let Some(od) = old_dirty {
            self.dirty.remove(&od);
        }
        self.dirty.insert(d, Arc::clone(&k));
        let Some(node) = self.entries.get_mut(key) else {
            return;
        };
        match (&mut node.value, value) {
            (Some(v), Some(new)) => {
                v.clear();
                v.extend_from_slice(new);
            }
            (slot, new) => *slot = new.map(<[u8]>::to_vec),
        }
        node.timestamp = timestamp;
        node.lru.set(t);
        node.dirty = Some(d);
        let new_size = node.size(&k);
        if new_size >= old_size {
            self.grow(new_size - old_size);
        } else {
            self.shrink(old_size - new_size);
        }
    }

    /// Whether a write took the thread's cache over its budget and this cache has an entry
    /// to evict.
    pub(crate) fn must_evict(&self) -> bool {
        self.budget.over_budget() && !self.entries.is_empty()
    }

    /// Evicts the eldest entry; if it was dirty, returns it followed by every other dirty
    /// entry (now clean; deletes leave the cache), else nothing.
    pub(crate) fn evict(&mut self) -> Vec<DirtyEntry> {
        let Some((_, key)) = self.lru.get_mut().pop_first() else {
            return Vec::new();
        };
        let Some(node) = self.entries.remove(&key) else {
            return Vec::new();
        };
        let size = node.size(&key);
        self.shrink(size);
        match node.dirty {
            Some(d) => {
                self.dirty.remove(&d);
                let first = DirtyEntry {
                    key: key.to_vec(),
                    value: node.value,
                    timestamp: node.timestamp,
                };
                let mut out = vec![first];
                self.flush_into(&mut out);
                out
            }
            None => Vec::new(),
        }
    }

    /// Every dirty entry, in the order of their last write; they stay cached, clean
    /// (deletes leave the cache).
    pub(crate) fn flush(&mut self) -> Vec<DirtyEntry> {
        let mut out = Vec::with_capacity(self.dirty.len());
        self.flush_into(&mut out);
        out
    }

    fn flush_into(&mut self, out: &mut Vec<DirtyEntry>) {
        for (_, key) in std::mem::take(&mut self.dirty) {
            let Some(node) = self.entries.get_mut(&key) else {
                continue;
            };
            node.dirty = None;
            out.push(DirtyEntry {
                key: key.to_vec(),
                value: node.value.clone(),
                timestamp: node.timestamp,
            });
            if node.value.is_none() {
                self.remove(&key);
            }
        }
    }

    /// Forgets `key` (a changelog record applied under it).
    pub(crate) fn remove(&mut self, key: &[u8]) {
        if let Some((k, node)) = self.entries.remove_entry(key) {
            self.lru.get_mut().remove(&node.lru.get());
            if let Some(d) = node.dirty {
                self.dirty.remove(&d);
            }
            self.shrink(node.size(&k));
        }
    }

    /// Forgets everything, dirty entries included.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.lru.get_mut().clear();
        self.dirty.clear();
        let bytes = self.bytes;
        self.shrink(bytes);
    }

    /// Gives the budget back when nothing is dirty (the store's task closed cleanly, as
    /// Java closes a task's cache namespace); dirty entries keep everything.
    pub(crate) fn release_clean(&mut self) {
        if self.dirty.is_empty() {
            self.clear();
        }
    }

    /// Every cached entry (`None` value = deleted), in key order.
    pub(crate) fn sorted(&self) -> Vec<(&[u8], Option<&[u8]>)> {
        let mut v: Vec<_> = self
            .entries
            .iter()
            .map(|(k, n)| (&k[..], n.value.as_deref()))
            .collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, value: Option<&str>, ts: i64) -> DirtyEntry {
        DirtyEntry {
            key: key.as_bytes().to_vec(),
            value: value.map(|v| v.as_bytes().to_vec()),
            timestamp: ts,
        }
    }

    #[test]
    fn flush_gives_dirty_entries_in_last_write_order_once() {
        let t = ThreadCache::new(1 << 20);
        let mut c = t.named().unwrap();
        c.put(b"a", Some(b"1".to_vec()), 1, true);
        c.put(b"b", Some(b"1".to_vec()), 2, true);
        c.put(b"a", Some(b"2".to_vec()), 3, true);
        c.put(b"c", None, 4, true);
        let out = c.flush();
        assert_eq!(
            out,
            vec![
                entry("b", Some("1"), 2),
                entry("a", Some("2"), 3),
                entry("c", None, 4)
            ]
        );
        assert!(c.flush().is_empty(), "clean now");
        assert_eq!(c.get(b"a"), Some((Some(&b"2"[..]), 3)), "still cached");
        assert_eq!(c.get(b"c"), None, "a flushed delete leaves the cache");
        assert_eq!(t.size_bytes(), c.bytes);
        assert_eq!(c.bytes, 2 * (1 + 1 + ENTRY_OVERHEAD));
        drop(c);
        assert_eq!(t.size_bytes(), 0, "a dropped cache gives its bytes back");
    }

    /// Java's `NamedCache.evict`: the least recently used entry goes; a dirty one flushes
    /// the whole cache, the evicted entry first.
    #[test]
    fn eviction_is_lru_and_a_dirty_victim_flushes_the_cache() {
        let t = ThreadCache::new(3 * (2 + ENTRY_OVERHEAD) as u64);
        let mut c = t.named().unwrap();
        c.put(b"a", Some(b"1".to_vec()), 1, true);
        c.put(b"b", Some(b"1".to_vec()), 2, true);
        c.put(b"c", Some(b"1".to_vec()), 3, false);
        assert!(!c.must_evict());
        assert!(c.get(b"a").is_some(), "a is now the newest");
        c.put(b"d", Some(b"1".to_vec()), 4, true);
        assert!(c.must_evict());
        let out = c.evict();
        assert_eq!(
            out,
            vec![
                entry("b", Some("1"), 2),
                entry("a", Some("1"), 1),
                entry("d", Some("1"), 4)
            ]
        );
        assert!(!c.must_evict());
        c.put(b"e", Some(b"1".to_vec()), 5, true);
        assert!(
            c.evict().is_empty(),
            "c (clean, eldest) goes without a flush"
        );
        assert_eq!(c.get(b"c"), None);
    }

    #[test]
    fn stores_share_one_thread_budget() {
        let t = ThreadCache::new(1000);
        let mut a = t.named().unwrap();
        let mut b = t.named().unwrap();
        a.put(b"k", Some(vec![0; 500]), 1, true);
        b.put(b"k", Some(vec![0; 500]), 1, true);
        assert!(b.must_evict() && a.must_evict());
        b.clear();
        assert!(!a.must_evict());
        assert!(ThreadCache::new(0).named().is_none(), "0 = off");
    }
}
