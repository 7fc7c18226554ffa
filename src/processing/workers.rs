//! `num.stream.threads`: one member per stream thread, as Kafka Streams runs them. Every
//! thread joins the group as its own member (own member id, heartbeat, fetcher, producer,
//! task manager) with the instance's one process id, so the broker never gives one process
//! an active and a standby copy of the same task; `group.instance.id`, when set, gets the
//! thread's index as suffix (`<id>-<n>`, also `<id>-1` for a single thread: Java's
//! `StreamsConfig::getMainConsumerConfigs`, for the streams protocol too). Stream thread 1
//! is run by the caller of [`ProcessingRuntime`](super::ProcessingRuntime); threads 2..=N
//! each run their loop on an OS thread of their own ([`Worker`]). Their states are folded
//! into one instance state ([`combine`]) told to the one listener.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;

use crate::client::SharedClient;
use crate::consumer::{Fetcher, FetcherConfig, IsolationLevel, OffsetReset};
use crate::error::Error;
use crate::producer::{Producer, ProducerConfig};
use crate::session::{StreamsGroupConfig, StreamsGroupSession};
use crate::state::{ChangelogReader, StoreFormat, ThreadCache};
use crate::streams::{StreamsTaskId, StreamsTaskRuntime, StreamsTopology};

use super::app::ProcessorFactory;
use super::collector::RecordCollector;
use super::config::{ProcessingConfig, ProcessingGuarantee, EOS_TRANSACTION_TIMEOUT};
use super::context::Processor;
use super::eos::{transactional_id, EosProducer};
use super::input::FetchInput;
use super::instance::ProcessingStats;
use super::lifecycle::{Lifecycle, LocalTask, RuntimeState, StateListener};
use super::ports::ProducePort;
use super::ports::{HandleGroup, SystemClock};
use super::purge::RecordPurger;
use super::state_manager::StateManager;
use super::task_manager::TaskManager;
use super::thread::{Cadence, StreamThread};

/// What every stream thread of an application builds its member from.
#[derive(Clone)]
pub(crate) struct AppParts {
    pub topology: StreamsTopology,
    pub stores: BTreeMap<String, Vec<(String, StoreFormat)>>,
    /// The stores without a changelog ([`StreamsApp::store_without_changelog`]).
    ///
    /// [`StreamsApp::store_without_changelog`]: super::StreamsApp::store_without_changelog
    pub unlogged: BTreeSet<String>,
    /// The application's one factory, called by whichever thread starts a task.
    pub factory: Arc<Mutex<ProcessorFactory>>,
}

/// The membership configuration of stream thread `idx` (1-based): the instance's process
/// id for all; a static instance id always suffixed with `-<idx>`, one thread or several,
/// as Java's `getMainConsumerConfigs` does (`<id>-1` for a single thread).
///
/// `process_id`: for thread 1 the one kept in the state directory, if any (a process id the
/// application's [`with_group_config`](ProcessingConfig::with_group_config) sets wins over
/// it); for threads 2..=N thread 1's, which they take whatever the hooks say.
pub(crate) fn member_config(
    config: &ProcessingConfig,
    topology: &StreamsTopology,
    process_id: Option<&str>,
    idx: usize,
) -> StreamsGroupConfig {
    let mut g = config.group_config_for(topology, process_id);
    if let (Some(pid), true) = (process_id, idx > 1) {
        g = g.process_id(pid);
    }
    if let Some(id) = g.get_instance_id().map(str::to_owned) {
        g = g.instance_id(format!("{id}-{idx}"));
    }
    g
}

/// Joins the group as one member and builds its loop: the fetcher, changelog reader,
/// producer and purger on one shared set of connections, the heartbeat on its own.
///
/// Under `exactly_once_v2` the input and the changelogs are read `read_committed` and the
/// producer is transactional, `transactional.id` `<application.id>-<process id>-<idx>`
/// (`idx` the 1-based stream thread index), `transaction.timeout.ms` 10 s, as Java's.
pub(crate) fn build_member(
    config: &ProcessingConfig,
    parts: &AppParts,
    group: StreamsGroupConfig,
    idx: usize,
) -> Result<StreamThread<HandleGroup>, Error> {
    let eos = config.get_processing_guarantee() == ProcessingGuarantee::ExactlyOnceV2;
    let isolation = match eos {
        true => IsolationLevel::ReadCommitted,
        false => IsolationLevel::ReadUncommitted,
    };
    let client = config.client().clone();
    // One set of broker connections for everything the processing thread drives (fetches,
    // restores, produces, purges, offset commits and fetches), one request at a time; the
    // heartbeat thread keeps its own (BENCHMARKS.md, issue 22).
    let shared = SharedClient::connect(&client, client.get_request_timeout())?;
    let fetcher = Fetcher::with_client(
        shared.clone(),
        FetcherConfig::new(client.clone())
            .auto_offset_reset(OffsetReset::Earliest)
            .isolation_level(isolation)
            .fetch_max_wait(config.get_poll_wait()),
    );
    let reader = ChangelogReader::with_client_isolation(shared.clone(), client.clone(), isolation);
    let producer_config = ProducerConfig::new(client.clone()).linger(Duration::from_millis(100));
    let producer: Box<dyn ProducePort + Send> = match eos {
        false => Box::new(Producer::with_client(shared.clone(), producer_config)?),
        true => {
            let id = transactional_id(config.application_id(), group.get_process_id(), idx);
            log::info!("exactly_once_v2: transactional.id {id}");
            let producer_config = producer_config
                .transactional_id(id)
                .transaction_timeout(EOS_TRANSACTION_TIMEOUT);
            let shared = shared.clone();
            Box::new(EosProducer::start(Box::new(move || {
                Producer::with_client(shared.clone(), producer_config.clone())
            }))?)
        }
    };
    let purger = RecordPurger::with_client(shared.clone(), client);
    let instance_id = group.get_instance_id().map(str::to_owned);
    let handle = StreamsGroupSession::join(group)?.spawn_heartbeat_thread()?;
    // Commits and offset fetches are made by this member's loop: on its shared client too.
    handle.share_offsets_client(shared);
    log::info!(
        "joined {} as member {} (epoch {})",
        config.application_id(),
        handle.member_id(),
        handle.member_epoch()
    );
    let app_id = config.application_id();
    let repartition_topics: BTreeSet<String> = parts
        .topology
        .subtopologies
        .iter()
        .flat_map(|s| s.repartition_source_topics.iter().map(|t| t.name.clone()))
        .collect();
    let group = HandleGroup::new(handle, StreamsTaskRuntime::for_topology(&parts.topology))
        .with_identity(app_id, instance_id.as_deref());
    let shared_factory = parts.factory.clone();
    let factory: ProcessorFactory = Box::new(
        move |task: &StreamsTaskId| -> Result<Box<dyn Processor>, Error> {
            (shared_factory.lock())(task)
        },
    );
    let tasks = TaskManager::new(factory, repartition_topics)
        .with_deserialization_handler(config.get_deserialization_handler())
        .with_max_task_idle_ms(config.get_max_task_idle_ms());
    let state = StateManager::new(app_id, parts.stores.clone(), Box::new(reader))
        .without_changelog(parts.unlogged.clone())
        // Java divides statestore.cache.max.bytes evenly among the stream threads.
        .with_cache(ThreadCache::new(
            config.get_cache_max_bytes() / config.get_num_stream_threads() as u64,
        ));
    let collector = RecordCollector::new(producer);
    let cadence = Cadence {
        poll_wait: config.get_poll_wait(),
        commit_interval: config.get_commit_interval(),
        purge_interval: config.get_purge_interval(),
        max_buffered: config.get_buffered_records_per_partition(),
    };
    Ok(StreamThread::new(
        group,
        Box::new(FetchInput::new(fetcher)),
        tasks,
        state,
        collector,
        Box::new(purger),
        Box::new(SystemClock),
        cadence,
    ))
}

/// The instance's state over its threads' states, and the application's listener.
pub(crate) struct StateView {
    states: Vec<RuntimeState>,
    lifecycle: Lifecycle,
}

/// The instance's state from its threads' (Java's `KafkaStreams` over its `StreamThread`s):
/// `Running` once every thread runs, `Rebalancing` while one rebalances, `PendingError`
/// once one failed, `PendingShutdown` while they close, `NotRunning` (or `Error`, if one
/// failed) once all are closed.
pub(crate) fn combine(states: &[RuntimeState]) -> RuntimeState {
    use RuntimeState::*;
    let any = |f: &dyn Fn(RuntimeState) -> bool| states.iter().any(|s| f(*s));
    if states.iter().all(|s| matches!(s, NotRunning | Error)) {
        return match any(&|s| s == Error) {
            true => Error,
            false => NotRunning,
        };
    }
    if any(&|s| matches!(s, PendingError | Error)) {
        return PendingError;
    }
    if any(&|s| matches!(s, PendingShutdown | NotRunning)) {
        return PendingShutdown;
    }
    if states.iter().all(|s| *s == Created) {
        return Created;
    }
    if any(&|s| matches!(s, Rebalancing | Created)) {
        return Rebalancing;
    }
    Running
}

impl StateView {
    pub(crate) fn new(threads: usize, listener: Option<StateListener>) -> Arc<Mutex<StateView>> {
        Arc::new(Mutex::new(StateView {
            states: vec![RuntimeState::Created; threads],
            lifecycle: Lifecycle::new(listener),
        }))
    }

    pub(crate) fn state(&self) -> RuntimeState {
        self.lifecycle.state()
    }

    pub(crate) fn set_listener(&mut self, listener: StateListener) {
        self.lifecycle.set_listener(listener);
    }

    /// The listener of thread `idx` (0-based): records its state and moves the instance's.
    pub(crate) fn thread_listener(view: &Arc<Mutex<StateView>>, idx: usize) -> StateListener {
        let view = view.clone();
        Box::new(move |new, _old| {
            let mut v = view.lock();
            if let Some(s) = v.states.get_mut(idx) {
                *s = new;
            }
            let next = combine(&v.states);
            v.lifecycle.to(next);
        })
    }
}

/// What a worker thread shows the instance after each iteration.
#[derive(Default)]
pub(crate) struct Seen {
    pub stats: ProcessingStats,
    pub tasks: Vec<LocalTask>,
    pub failure: Option<String>,
}

/// Stream thread 2..=N: its loop on its own OS thread until stopped (or failed), then
/// closed (commit unless failed, then leave).
pub(crate) struct Worker {
    pub idx: usize,
    stop: Arc<AtomicBool>,
    pub seen: Arc<Mutex<Seen>>,
    join: Option<JoinHandle<Result<(), Error>>>,
}

impl Worker {
    /// Starts stream thread `idx` (1-based): `build` joins the group on the new thread;
    /// waits at most `startup` for the join.
    pub(crate) fn spawn(
        idx: usize,
        view: &Arc<Mutex<StateView>>,
        startup: Duration,
        build: impl FnOnce() -> Result<StreamThread<HandleGroup>, Error> + Send + 'static,
    ) -> Result<Worker, Error> {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (tx, rx) = mpsc::channel::<Result<(), Error>>();
        let listener = StateView::thread_listener(view, idx - 1);
        let (s, w) = (stop.clone(), seen.clone());
        let join = std::thread::Builder::new()
            .name(format!("stream-thread-{idx}"))
            .spawn(move || {
                let mut thread = match build() {
                    Ok(t) => t,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return Ok(());
                    }
                };
                thread.lifecycle.set_listener(listener);
                thread.lifecycle.to(RuntimeState::Rebalancing);
                let _ = tx.send(Ok(()));
                run(&mut thread, &s, &w);
                thread.close()
            })
            .map_err(|e| Error::InvalidConfiguration {
                field: "num.stream.threads",
                reason: format!("cannot start stream thread {idx}: {e}"),
            })?;
        let mut worker = Worker {
            idx,
            stop,
            seen,
            join: Some(join),
        };
        let started = match rx.recv_timeout(startup) {
            Ok(r) => r,
            Err(_) => Err(Error::InvalidConfiguration {
                field: "num.stream.threads",
                reason: format!(
                    "stream thread {idx} did not join the group within {startup:?}; check \
                     the brokers and the join timeout"
                ),
            }),
        };
        if let Err(e) = started {
            worker.stop();
            return Err(e);
        }
        Ok(worker)
    }

    /// Asks the thread to close after its current iteration (not waiting).
    pub(crate) fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Stops the thread and waits for its close (each of its steps has its own deadline).
    pub(crate) fn close(mut self) -> Result<(), Error> {
        self.stop();
        match self.join.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::InvalidConfiguration {
                field: "num.stream.threads",
                reason: format!("stream thread {} panicked", self.idx),
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs iterations until `stop` is set or one fails; after each, shows stats and tasks.
fn run(thread: &mut StreamThread<HandleGroup>, stop: &AtomicBool, seen: &Mutex<Seen>) {
    while !stop.load(Ordering::SeqCst) {
        let result = thread.run_once();
        let mut s = seen.lock();
        s.stats = thread.stats();
        s.tasks = thread.local_tasks();
        if let Err(e) = result {
            log::error!("stream thread failed: {e}");
            s.failure = Some(e.to_string());
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RuntimeState::*;
    use super::*;

    #[test]
    fn a_static_instance_id_gets_the_thread_index_even_for_one_thread() {
        let topology = StreamsTopology::new();
        let config = ProcessingConfig::new("127.0.0.1:9092", "app").instance_id("orders");
        let one = member_config(&config, &topology, None, 1);
        assert_eq!(one.get_instance_id(), Some("orders-1"), "Java: <id>-1");
        let two = member_config(&config, &topology, Some("pid"), 2);
        assert_eq!(two.get_instance_id(), Some("orders-2"));
        assert_eq!(two.get_process_id(), "pid");
        let dynamic = ProcessingConfig::new("127.0.0.1:9092", "app");
        assert_eq!(
            member_config(&dynamic, &topology, None, 1).get_instance_id(),
            None
        );
    }

    /// Thread 1 takes the state directory's process id unless the application sets one;
    /// the other threads take thread 1's.
    #[test]
    fn the_stored_process_id_yields_to_the_applications_own() {
        let topology = StreamsTopology::new();
        let plain = ProcessingConfig::new("127.0.0.1:9092", "app");
        let one = member_config(&plain, &topology, Some("stored"), 1);
        assert_eq!(one.get_process_id(), "stored");
        let fresh = member_config(&plain, &topology, None, 1);
        assert_ne!(fresh.get_process_id(), "stored");
        let user = plain.with_group_config(|g| g.process_id("mine"));
        let one = member_config(&user, &topology, Some("stored"), 1);
        assert_eq!(one.get_process_id(), "mine", "the application's id wins");
        let two = member_config(&user, &topology, Some(one.get_process_id()), 2);
        assert_eq!(two.get_process_id(), "mine");
    }

    #[test]
    fn the_instance_state_folds_the_threads_states_as_java() {
        assert_eq!(combine(&[Created, Created]), Created);
        assert_eq!(combine(&[Rebalancing, Created]), Rebalancing);
        assert_eq!(combine(&[Running, Rebalancing]), Rebalancing);
        assert_eq!(combine(&[Running, Running]), Running);
        assert_eq!(combine(&[Running, PendingError]), PendingError);
        assert_eq!(combine(&[NotRunning, Running]), PendingShutdown);
        assert_eq!(combine(&[NotRunning, NotRunning]), NotRunning);
        assert_eq!(combine(&[Error, NotRunning]), Error);
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let s = seen.clone();
        let view = StateView::new(
            2,
            Some(Box::new(move |new, old| s.lock().unwrap().push((old, new)))),
        );
        let mut one = StateView::thread_listener(&view, 0);
        let mut two = StateView::thread_listener(&view, 1);
        one(Rebalancing, Created);
        two(Rebalancing, Created);
        one(Running, Rebalancing);
        assert_eq!(
            view.lock().state(),
            Rebalancing,
            "thread 2 still rebalances"
        );
        two(Running, Rebalancing);
        one(PendingShutdown, Running);
        one(NotRunning, PendingShutdown);
        two(PendingShutdown, Running);
        two(NotRunning, PendingShutdown);
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                (Created, Rebalancing),
                (Rebalancing, Running),
                (Running, PendingShutdown),
                (PendingShutdown, NotRunning)
            ]
        );
    }
}
