//! Queryable stores (Java's `KafkaStreams#store(StoreQueryParameters)`): read the key-value
//! stores of the local tasks from any thread while the stream threads run.
//!
//! # Design
//!
//! A store belongs to the stream thread that runs its task and is never shared: the thread's
//! loop takes no lock per record. A reader sends its query over a bounded crossbeam channel
//! to **every** stream thread of the instance; each thread answers between two batches (once
//! per iteration of its loop, after processing the records of its last fetch: at most about
//! `poll.ms` plus one batch later) from the stores of its tasks, and the reader merges the
//! answers. So:
//!
//! * each task's part of a `range` or `all` is one snapshot of that task's store (the thread
//!   copies it in one go, between records); tasks of different threads are read at slightly
//!   different moments;
//! * `range` and `all` are merged in the order of the **serialized** keys (unsigned bytes,
//!   the order of Java's stores), across tasks; a key found in two tasks (a custom
//!   partitioner) is given once per task, the task with the lower id first (Java's composite
//!   store iterates store by store instead);
//! * `get` gives the value of the active task holding the key (of a standby, with
//!   [`StoreQueryParameters::enable_stale_stores`], if no active task holds it);
//! * a reader waits at most [`StoreQueryParameters::timeout`] (default
//!   [`DEFAULT_QUERY_TIMEOUT`]) for every thread; stream thread 1 answers inside
//!   [`ProcessingRuntime::run_once`]: query from another thread than the one calling it.
//!
//! Results are copied out of the store (`all` copies the whole store): the store is never
//! borrowed across threads.
//!
//! ```no_run
//! # use kafka_streams_group::processing::ProcessingRuntime;
//! # fn f(runtime: &mut ProcessingRuntime) -> Result<(), Box<dyn std::error::Error>> {
//! // Typed by the store's serdes (a DSL store's own; built-in ones otherwise).
//! let totals = runtime.store::<String, i64>("region-totals")?; // Clone + Send + Sync
//! let reader = std::thread::spawn(move || totals.get(&"north".to_string()));
//! runtime.run_once()?; // the stream threads answer while they run
//! match reader.join().expect("reader") {
//!     Ok(total) => println!("north: {total:?}"),
//!     Err(e) if e.is_retriable() => println!("not now ({e}): retry"),
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok(()) }
//! ```

use std::any::Any;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, SendTimeoutError, Sender};
use parking_lot::Mutex;

use crate::dsl::serdes::{default_serde, AnySerde, SerdeError, Serdes, TypedSerde};
use crate::streams::StreamsTaskId;

use super::super::instance::ProcessingRuntime;
use super::super::lifecycle::RuntimeState;
use super::super::ports::GroupPort;
use super::super::state_manager::{key_value_stores, Stores};
use super::super::thread::StreamThread;
use super::super::workers::StateView;
use super::store_error::timeout_hint;
pub use super::store_error::StoreQueryError;

/// How long a query waits for the stream threads by default.
pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_secs(10);

/// The most queries waiting for one stream thread; a reader finding the queue full waits
/// (within its timeout) for room.
const QUEUE: usize = 64;

/// Which store to read and how (Java's `StoreQueryParameters`).
///
/// ```
/// use std::time::Duration;
/// use kafka_streams_group::processing::query::StoreQueryParameters;
/// let p = StoreQueryParameters::from_name("counts")
///     .enable_stale_stores() // standbys too
///     .with_partition(2) // task x_2 only
///     .timeout(Duration::from_secs(2));
/// assert_eq!(p.store_name(), "counts");
/// let q: StoreQueryParameters = "counts".into(); // active tasks, every partition
/// assert_eq!(q.partition(), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreQueryParameters {
    store: String,
    stale: bool,
    partition: Option<i32>,
    timeout: Duration,
}

impl StoreQueryParameters {
    /// The active tasks' copies of `store`, every partition.
    pub fn from_name(store: impl Into<String>) -> Self {
        StoreQueryParameters {
            store: store.into(),
            stale: false,
            partition: None,
            timeout: DEFAULT_QUERY_TIMEOUT,
        }
    }

    /// Reads standby (and warm-up) tasks' copies too, which may lag their active, and
    /// answers while a thread rebalances (Java's `enableStaleStores`).
    pub fn enable_stale_stores(mut self) -> Self {
        self.stale = true;
        self
    }

    /// Reads only the task of partition `partition` (Java's `withPartition`).
    pub fn with_partition(mut self, partition: i32) -> Self {
        self.partition = Some(partition);
        self
    }

    /// The longest a query waits for every stream thread's answer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The store's name.
    pub fn store_name(&self) -> &str {
        &self.store
    }

    /// Whether standbys are read too.
    pub fn stale_stores_enabled(&self) -> bool {
        self.stale
    }

    /// The one partition read, if set.
    pub fn partition(&self) -> Option<i32> {
        self.partition
    }
}

impl From<&str> for StoreQueryParameters {
    fn from(store: &str) -> Self {
        StoreQueryParameters::from_name(store)
    }
}

impl From<String> for StoreQueryParameters {
    fn from(store: String) -> Self {
        StoreQueryParameters::from_name(store)
    }
}

/// What a query asks of one store copy.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    /// The value of a serialized key.
    Get(Vec<u8>),
    /// Entries with keys in `[from, to]` (`None`: unbounded), serialized.
    Range(Option<Vec<u8>>, Option<Vec<u8>>),
    /// The number of keys.
    Count,
}

/// A query sent to a stream thread.
pub(crate) struct StoreQuery {
    store: Arc<str>,
    op: Op,
    stale: bool,
    partition: Option<i32>,
    reply: Sender<(usize, ThreadAnswer)>,
    /// The thread's index, echoed in the answer.
    thread: usize,
}

/// Serialized keys and values.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// One task's answer.
#[derive(Debug)]
pub(crate) enum TaskResult {
    Value(Option<Vec<u8>>),
    Entries(Entries),
    Count(u64),
}

/// One stream thread's answer: its state and the copies of the store it holds.
#[derive(Debug)]
pub(crate) struct ThreadAnswer {
    state: RuntimeState,
    /// (task, active?, result), active tasks first, each in task order.
    tasks: Vec<(StreamsTaskId, bool, TaskResult)>,
}

/// The receiving side a stream thread polls.
pub(crate) type QueryInbox = Receiver<StoreQuery>;

/// A new channel of queries to one stream thread.
pub(crate) fn query_channel() -> (Sender<StoreQuery>, QueryInbox) {
    crossbeam_channel::bounded(QUEUE)
}

fn answer_op(stores: &Stores, name: &str, op: &Op) -> Option<TaskResult> {
    let store = key_value_stores(stores).find(|s| s.name() == name)?;
    Some(match op {
        Op::Get(key) => TaskResult::Value(store.get(key).map(<[u8]>::to_vec)),
        Op::Range(from, to) => TaskResult::Entries(
            store
                .iter()
                .skip_while(|(k, _)| from.as_deref().is_some_and(|f| *k < f))
                .take_while(|(k, _)| to.as_deref().is_none_or(|t| *k <= t))
                .map(|(k, v)| (k.to_vec(), v.to_vec()))
                .collect(),
        ),
        Op::Count => TaskResult::Count(store.len() as u64),
    })
}

impl<G: GroupPort> StreamThread<G> {
    /// Answers the queries waiting for this thread (between two batches; a non-blocking
    /// look at the channel when none waits).
    pub(crate) fn answer_queries(&mut self) {
        let Some(inbox) = &self.queries else {
            return;
        };
        while let Ok(q) = inbox.try_recv() {
            let state = self.lifecycle.state();
            let wanted = |t: &StreamsTaskId| q.partition.is_none_or(|p| t.partition == p);
            let mut tasks = Vec::new();
            let readable = q.stale || state == RuntimeState::Running;
            if readable {
                for (id, t) in self.tasks.active.iter().filter(|(id, _)| wanted(id)) {
                    if let Some(r) = answer_op(&t.stores, &q.store, &q.op) {
                        tasks.push((id.clone(), true, r));
                    }
                }
                if q.stale {
                    for (id, stores) in self.state.standby.iter().filter(|(id, _)| wanted(id)) {
                        if let Some(r) = answer_op(stores, &q.store, &q.op) {
                            tasks.push((id.clone(), false, r));
                        }
                    }
                }
            }
            // The reader may have given up (timeout): nothing to do then.
            let _ = q.reply.try_send((q.thread, ThreadAnswer { state, tasks }));
        }
    }
}

/// What the handle knows of the application's stores.
#[derive(Debug, Default)]
pub(crate) struct StoreCatalog {
    /// Store name → (key serde, value serde) if the application declared them (DSL).
    pub(crate) serdes: BTreeMap<String, Option<(AnySerde, AnySerde)>>,
}

/// Reads the stores of an instance's local tasks from any thread (from
/// [`ProcessingRuntime::store_query_handle`]); cheap to clone, `Send + Sync`. See the
/// [module docs](self) for how queries reach the stream threads.
///
/// ```no_run
/// # use kafka_streams_group::processing::ProcessingRuntime;
/// # use kafka_streams_group::processing::query::StoreQueryParameters;
/// # fn f(runtime: &ProcessingRuntime) -> Result<(), Box<dyn std::error::Error>> {
/// let stores = runtime.store_query_handle();
/// println!("stores: {:?}", stores.store_names());
/// let counts = stores.key_value_store::<String, i64>(StoreQueryParameters::from_name("counts"))?;
/// let raw = stores.raw_key_value_store("counts")?; // bytes as stored (no timestamp)
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct StoreQueryHandle {
    /// Stream thread `i + 1`'s query channel.
    threads: Arc<Vec<Sender<StoreQuery>>>,
    view: Arc<Mutex<StateView>>,
    catalog: Arc<StoreCatalog>,
}

impl std::fmt::Debug for StoreQueryHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreQueryHandle")
            .field("threads", &self.threads.len())
            .field("stores", &self.store_names())
            .finish()
    }
}

fn check_serde<T: 'static>(
    store: &str,
    what: &'static str,
    given: Option<&AnySerde>,
) -> Result<AnySerde, StoreQueryError> {
    let asked = std::any::type_name::<T>();
    match given {
        Some(s) if s.serves::<T>() => Ok(s.clone()),
        Some(s) => Err(StoreQueryError::WrongType {
            store: store.to_string(),
            what,
            serde: s.name(),
            serves: s.type_name(),
            asked,
        }),
        None => default_serde::<T>().ok_or_else(|| StoreQueryError::NoSerde {
            store: store.to_string(),
            what,
            asked,
        }),
    }
}

impl StoreCatalog {
    /// Every store of `stores` (subtopology → stores), with the serdes of those in `serdes`.
    pub(crate) fn of<T>(
        stores: &BTreeMap<String, Vec<(String, T)>>,
        mut serdes: BTreeMap<String, (AnySerde, AnySerde)>,
    ) -> Self {
        let serdes = stores
            .values()
            .flatten()
            .map(|(name, _)| (name.clone(), serdes.remove(name)))
            .collect();
        StoreCatalog { serdes }
    }
}

impl StoreQueryHandle {
    pub(crate) fn new(
        threads: Vec<Sender<StoreQuery>>,
        view: Arc<Mutex<StateView>>,
        catalog: StoreCatalog,
    ) -> Self {
        StoreQueryHandle {
            threads: Arc::new(threads),
            view,
            catalog: Arc::new(catalog),
        }
    }

    /// The application's stores, by name.
    pub fn store_names(&self) -> Vec<String> {
        self.catalog.serdes.keys().cloned().collect()
    }

    fn known(&self, store: &str) -> Result<Option<&(AnySerde, AnySerde)>, StoreQueryError> {
        match self.catalog.serdes.get(store) {
            Some(s) => Ok(s.as_ref()),
            None => Err(StoreQueryError::UnknownStore {
                store: store.to_string(),
                known: self.store_names(),
            }),
        }
    }

    /// A view of key-value store `params.store_name()` with keys `K` and values `V`, read
    /// with the store's serdes (a DSL store's, e.g. `Materialized`'s) or, for a store
    /// declared without serdes, the built-in serdes of `K` and `V` (Java's
    /// `store(StoreQueryParameters.fromNameAndType(name, keyValueStore()))`). A timestamped
    /// store's values are read without their timestamp.
    pub fn key_value_store<K: 'static, V: 'static>(
        &self,
        params: impl Into<StoreQueryParameters>,
    ) -> Result<ReadOnlyKeyValueStore<K, V>, StoreQueryError> {
        let params = params.into();
        let serdes = self.known(&params.store)?;
        let key = check_serde::<K>(&params.store, "key", serdes.map(|s| &s.0))?;
        let value = check_serde::<V>(&params.store, "value", serdes.map(|s| &s.1))?;
        Ok(self.view_of(params, key, value))
    }

    /// The same with the serdes given (a processor-API store of a type without a built-in
    /// serde).
    pub fn key_value_store_with<K: 'static, V: 'static>(
        &self,
        params: impl Into<StoreQueryParameters>,
        key: &TypedSerde<K>,
        value: &TypedSerde<V>,
    ) -> Result<ReadOnlyKeyValueStore<K, V>, StoreQueryError> {
        let params = params.into();
        self.known(&params.store)?;
        Ok(self.view_of(params, key.erase(), value.erase()))
    }

    /// The store as bytes: keys and values as stored (a timestamped store's values without
    /// their timestamp).
    pub fn raw_key_value_store(
        &self,
        params: impl Into<StoreQueryParameters>,
    ) -> Result<ReadOnlyKeyValueStore<Vec<u8>, Vec<u8>>, StoreQueryError> {
        let serde = Serdes::byte_array();
        self.key_value_store_with(params, &serde, &serde)
    }

    fn view_of<K, V>(
        &self,
        params: StoreQueryParameters,
        key: AnySerde,
        value: AnySerde,
    ) -> ReadOnlyKeyValueStore<K, V> {
        ReadOnlyKeyValueStore {
            handle: self.clone(),
            name: Arc::from(params.store.as_str()),
            params,
            key,
            value,
            types: PhantomData,
        }
    }

    /// Sends `op` to every stream thread and gathers their answers: the store copies of the
    /// local tasks, (task, active?, result) in task order, actives first.
    fn ask(
        &self,
        name: &Arc<str>,
        params: &StoreQueryParameters,
        op: Op,
    ) -> Result<Vec<(StreamsTaskId, bool, TaskResult)>, StoreQueryError> {
        let store = || name.to_string();
        let state = self.view.lock().state();
        if !state.is_running_or_rebalancing() {
            return Err(StoreQueryError::NotRunning {
                store: store(),
                state,
            });
        }
        let started = Instant::now();
        let deadline = started + params.timeout;
        let (reply, answers) = crossbeam_channel::bounded(self.threads.len());
        for (i, tx) in self.threads.iter().enumerate() {
            let q = StoreQuery {
                store: name.clone(),
                op: op.clone(),
                stale: params.stale,
                partition: params.partition,
                reply: reply.clone(),
                thread: i + 1,
            };
            let left = deadline.saturating_duration_since(Instant::now());
            match tx.send_timeout(q, left) {
                Ok(()) => {}
                Err(SendTimeoutError::Timeout(_)) => {
                    return Err(StoreQueryError::Timeout {
                        store: store(),
                        thread: i + 1,
                        waited: started.elapsed(),
                        hint: timeout_hint(i + 1),
                    })
                }
                Err(SendTimeoutError::Disconnected(_)) => {
                    return Err(StoreQueryError::NotRunning {
                        store: store(),
                        state: self.view.lock().state(),
                    })
                }
            }
        }
        drop(reply);
        let mut got: BTreeMap<usize, ThreadAnswer> = BTreeMap::new();
        while got.len() < self.threads.len() {
            match answers.recv_deadline(deadline) {
                Ok((thread, a)) => {
                    got.insert(thread, a);
                }
                Err(_) => {
                    let thread = (1..=self.threads.len())
                        .find(|t| !got.contains_key(t))
                        .unwrap_or(1);
                    // A thread that closed meanwhile dropped the query unanswered.
                    let now = self.view.lock().state();
                    if !now.is_running_or_rebalancing() {
                        return Err(StoreQueryError::NotRunning {
                            store: store(),
                            state: now,
                        });
                    }
                    return Err(StoreQueryError::Timeout {
                        store: store(),
                        thread,
                        waited: started.elapsed(),
                        hint: timeout_hint(thread),
                    });
                }
            }
        }
        let mut tasks = Vec::new();
        for (thread, a) in got {
            if !params.stale && a.state != RuntimeState::Running {
                return Err(StoreQueryError::Rebalancing {
                    store: store(),
                    thread,
                    state: a.state,
                });
            }
            tasks.extend(a.tasks);
        }
        if tasks.is_empty() {
            return Err(StoreQueryError::NotLocal {
                store: store(),
                part: params
                    .partition
                    .map(|p| format!(" partition {p}"))
                    .unwrap_or_default(),
                roles: match params.stale {
                    true => "active or standby",
                    false => "active",
                },
            });
        }
        // Actives first (a get prefers them), each in task order.
        tasks.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(tasks)
    }
}

/// A read-only view of one key-value store over every local task holding it (Java's
/// `ReadOnlyKeyValueStore` from `KafkaStreams#store`): `Clone + Send + Sync`, usable from any
/// thread while the runtime runs. Every call asks the stream threads anew (see the
/// [module docs](self)); results are copies.
///
/// ```no_run
/// # use kafka_streams_group::processing::ProcessingRuntime;
/// # fn f(runtime: &ProcessingRuntime) -> Result<(), Box<dyn std::error::Error>> {
/// let counts = runtime.store::<String, i64>("counts")?;
/// let one = counts.get(&"kafka".to_string())?; // Option<i64>
/// let some = counts.range(&"a".to_string(), &"m".to_string())?; // in key (byte) order
/// let every = counts.all()?;
/// let n = counts.approximate_num_entries()?;
/// # Ok(()) }
/// ```
pub struct ReadOnlyKeyValueStore<K, V> {
    handle: StoreQueryHandle,
    name: Arc<str>,
    params: StoreQueryParameters,
    key: AnySerde,
    value: AnySerde,
    types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Clone for ReadOnlyKeyValueStore<K, V> {
    fn clone(&self) -> Self {
        ReadOnlyKeyValueStore {
            handle: self.handle.clone(),
            name: self.name.clone(),
            params: self.params.clone(),
            key: self.key.clone(),
            value: self.value.clone(),
            types: PhantomData,
        }
    }
}

impl<K, V> std::fmt::Debug for ReadOnlyKeyValueStore<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOnlyKeyValueStore")
            .field("params", &self.params)
            .field("key", &self.key)
            .field("value", &self.value)
            .finish()
    }
}

impl<K: 'static, V: 'static> ReadOnlyKeyValueStore<K, V> {
    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameters it reads with.
    pub fn parameters(&self) -> &StoreQueryParameters {
        &self.params
    }

    fn serialize_key(&self, key: &K) -> Result<Vec<u8>, StoreQueryError> {
        let bytes = self
            .key
            .serialize(key as &dyn Any)
            .map_err(|reason| self.serde_error("serializing the key", reason))?;
        bytes.ok_or_else(|| self.serde_error("serializing the key", "it is null".into()))
    }

    fn serde_error(&self, what: &str, reason: String) -> StoreQueryError {
        StoreQueryError::Serde {
            store: self.name.to_string(),
            what: what.to_string(),
            reason,
        }
    }

    fn read<T: 'static>(
        &self,
        serde: &AnySerde,
        bytes: &[u8],
        what: &str,
    ) -> Result<T, StoreQueryError> {
        let e = |e: SerdeError| self.serde_error(what, e.to_string());
        let value = serde.deserialize(Some(bytes)).map_err(e)?;
        value
            .and_then(|v| v.downcast::<T>().ok())
            .map(|v| *v)
            .ok_or_else(|| {
                self.serde_error(
                    what,
                    format!("{} read no {}", serde.name(), serde.type_name()),
                )
            })
    }

    /// The value of `key` (Java's `get`): the active task's, else (stale stores) a
    /// standby's; `None` if no local copy holds it.
    pub fn get(&self, key: &K) -> Result<Option<V>, StoreQueryError> {
        let bytes = self.serialize_key(key)?;
        let tasks = self.handle.ask(&self.name, &self.params, Op::Get(bytes))?;
        for (_, _, r) in tasks {
            if let TaskResult::Value(Some(v)) = r {
                return self.read(&self.value, &v, "reading the value").map(Some);
            }
        }
        Ok(None)
    }

    /// The entries with keys from `from` to `to`, both included, compared as serialized
    /// bytes (Java's `range`), in that order across the local tasks; empty if `from` is
    /// after `to`.
    pub fn range(&self, from: &K, to: &K) -> Result<Vec<(K, V)>, StoreQueryError> {
        let (f, t) = (self.serialize_key(from)?, self.serialize_key(to)?);
        if f > t {
            return Ok(Vec::new());
        }
        self.entries(Op::Range(Some(f), Some(t)))
    }

    /// Every entry, in serialized-key order across the local tasks (Java's `all`).
    pub fn all(&self) -> Result<Vec<(K, V)>, StoreQueryError> {
        self.entries(Op::Range(None, None))
    }

    /// The number of keys over the local copies read (Java's `approximateNumEntries`; with
    /// stale stores a key held by an active and a standby counts twice).
    pub fn approximate_num_entries(&self) -> Result<u64, StoreQueryError> {
        let tasks = self.handle.ask(&self.name, &self.params, Op::Count)?;
        Ok(tasks
            .iter()
            .map(|(_, _, r)| match r {
                TaskResult::Count(n) => *n,
                _ => 0,
            })
            .sum())
    }

    fn entries(&self, op: Op) -> Result<Vec<(K, V)>, StoreQueryError> {
        let tasks = self.handle.ask(&self.name, &self.params, op)?;
        let mut all: Entries = Vec::new();
        let mut order: Vec<(StreamsTaskId, Entries)> = tasks
            .into_iter()
            .filter_map(|(id, _, r)| match r {
                TaskResult::Entries(e) => Some((id, e)),
                _ => None,
            })
            .collect();
        // Task order, then a stable sort by key: one key in two tasks comes by task order.
        order.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, e) in order {
            all.extend(e);
        }
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all.into_iter()
            .map(|(k, v)| {
                Ok((
                    self.read(&self.key, &k, "reading a key")?,
                    self.read(&self.value, &v, "reading a value")?,
                ))
            })
            .collect()
    }
}

impl ProcessingRuntime {
    /// A handle that reads the stores of this instance's local tasks from any thread while
    /// it runs (interactive queries); see [`StoreQueryHandle`].
    pub fn store_query_handle(&self) -> StoreQueryHandle {
        self.stores.clone()
    }

    /// A view of key-value store `params` (a name, or [`StoreQueryParameters`]) with keys
    /// `K` and values `V` (Java's `KafkaStreams#store`); see
    /// [`StoreQueryHandle::key_value_store`].
    pub fn store<K: 'static, V: 'static>(
        &self,
        params: impl Into<StoreQueryParameters>,
    ) -> Result<ReadOnlyKeyValueStore<K, V>, StoreQueryError> {
        self.stores.key_value_store(params)
    }
}
