//! The public face of one Streams application instance: [`ProcessingRuntime`] joins the
//! group, wires the real sides (heartbeat handle, fetcher, changelog reader, producer,
//! purger) into a [`StreamThread`] and runs it. The loop is in [`thread`](super::thread),
//! the tasks in [`task_manager`](super::task_manager), their stores in
//! [`state_manager`](super::state_manager), sends and commits in
//! [`collector`](super::collector).

use std::collections::BTreeSet;
use std::time::Duration;

use crate::client::SharedClient;
use crate::consumer::{Fetcher, FetcherConfig, OffsetReset};
use crate::error::Error;
use crate::producer::{Producer, ProducerConfig};
use crate::session::{StreamsGroupConfig, StreamsGroupSession, StreamsGroupSessionHandle};
use crate::streams::{StreamsTaskId, StreamsTaskRole, StreamsTaskRuntime};

use super::app::StreamsApp;
use super::collector::RecordCollector;
use super::config::ProcessingConfig;
use super::lifecycle::{LocalTask, RuntimeState, StateListener};
use super::ports::{GroupPort, HandleGroup, SystemClock};
use super::purge::RecordPurger;
use super::state_manager::{key_value_stores, StateManager};
use super::task_manager::TaskManager;
use super::thread::{Cadence, StreamThread};
use crate::state::{ChangelogReader, KeyValueStore, ThreadCache};

/// Progress counters of a [`ProcessingRuntime`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessingStats {
    /// Input records processed.
    pub processed: u64,
    /// Input records skipped because their key or value could not be deserialized, under
    /// `default.deserialization.exception.handler=LogAndContinue` (Java's `dropped-records`
    /// sensor); their offsets are committed like processed ones.
    pub dropped_records: u64,
    /// Records sent by processors (sinks and repartition topics).
    pub sent: u64,
    /// Changelog records sent.
    pub changelog_records: u64,
    /// Offset commits that succeeded.
    pub commits: u64,
    /// Changelog records applied while restoring the stores of active tasks (before they
    /// process; for a promoted standby only the tail its standby had not read yet).
    pub restored: u64,
    /// Changelog records applied by standby and warm-up tasks (catching up).
    pub standby_applied: u64,
    /// Active tasks owned now.
    pub active_tasks: usize,
    /// Standby and warm-up tasks owned now.
    pub standby_tasks: usize,
}

/// A running instance of a Kafka Streams application: a member of its Streams group that
/// processes the records of the tasks it is assigned. (`examples/word_count/` in the
/// repository is a complete application: Kafka's WordCountDemo.)
///
/// ```no_run
/// use std::sync::atomic::AtomicBool;
/// use kafka_streams_group::processing::{
///     InputRecord, ProcessingConfig, ProcessingRuntime, Processor, StreamsApp, TaskContext,
/// };
/// use kafka_streams_group::{Error, StreamsTaskId, StreamsTopology, Subtopology};
///
/// struct Forward; // every record of `lines` to `copied`
/// impl Processor for Forward {
///     fn process(&mut self, ctx: &mut TaskContext<'_>, r: &InputRecord) -> Result<(), Error> {
///         ctx.send("copied", r.key.as_deref(), r.value.as_deref(), r.timestamp, &r.headers)?;
///         Ok(())
///     }
/// }
///
/// let config = ProcessingConfig::new("127.0.0.1:9092", "copy-lines");
/// let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("lines"));
/// let app = StreamsApp::new(topology, |_: &StreamsTaskId| -> Result<Box<dyn Processor>, Error> {
///     Ok(Box::new(Forward))
/// });
/// let mut runtime = ProcessingRuntime::start(config, app)?;
/// runtime.run_until(&AtomicBool::new(false))?; // until the flag is set
/// runtime.close()?;
/// # Ok::<(), kafka_streams_group::Error>(())
/// ```
pub struct ProcessingRuntime {
    config: ProcessingConfig,
    thread: StreamThread<HandleGroup>,
}

impl std::fmt::Debug for ProcessingRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessingRuntime")
            .field("application_id", &self.config.application_id())
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// The Streams group configuration of `app` under `config` (group id = `application.id`).
fn group_config(config: &ProcessingConfig, app: &StreamsApp) -> StreamsGroupConfig {
    config.group_config(&app.topology)
}

impl ProcessingRuntime {
    /// Joins the application's Streams group (group id = `application.id`) with the app's
    /// topology and connects the fetcher, the changelog reader and the producer (acks=all,
    /// idempotent, `linger.ms` 100 as Kafka Streams sets it). A configuration whose durations
    /// are out of range is refused first ([`ProcessingConfig::validate`]).
    pub fn start(config: ProcessingConfig, app: StreamsApp) -> Result<ProcessingRuntime, Error> {
        config.validate()?;
        app.validate(config.application_id())?;
        let client = config.client().clone();
        // One set of broker connections for everything the processing thread drives, one
        // request at a time; the heartbeat thread keeps its own (BENCHMARKS.md, issue 22).
        let shared = SharedClient::connect(&client, client.get_request_timeout())?;
        let fetcher = Fetcher::with_client(
            shared.clone(),
            FetcherConfig::new(client.clone())
                .auto_offset_reset(OffsetReset::Earliest)
                .fetch_max_wait(config.get_poll_wait()),
        );
        let reader = ChangelogReader::with_client(shared.clone(), client.clone());
        let producer = Producer::with_client(
            shared.clone(),
            ProducerConfig::new(client.clone()).linger(Duration::from_millis(100)),
        )?;
        let purger = RecordPurger::with_client(shared, client);
        let handle =
            StreamsGroupSession::join(group_config(&config, &app))?.spawn_heartbeat_thread()?;
        log::info!(
            "joined {} as member {} (epoch {})",
            config.application_id(),
            handle.member_id(),
            handle.member_epoch()
        );
        let app_id = config.application_id();
        let repartition_topics: BTreeSet<String> = app
            .topology
            .subtopologies
            .iter()
            .flat_map(|s| s.repartition_source_topics.iter().map(|t| t.name.clone()))
            .collect();
        let group = HandleGroup::new(handle, StreamsTaskRuntime::for_topology(&app.topology));
        let listener = app.listener;
        let tasks = TaskManager::new(app.factory, repartition_topics)
            .with_deserialization_handler(config.get_deserialization_handler());
        let state = StateManager::new(app_id, app.stores, Box::new(reader))
            .with_cache(ThreadCache::new(config.get_cache_max_bytes()));
        let collector = RecordCollector::new(Box::new(producer));
        let cadence = Cadence {
            poll_wait: config.get_poll_wait(),
            commit_interval: config.get_commit_interval(),
            purge_interval: config.get_purge_interval(),
        };
        let mut thread = StreamThread::new(
            group,
            Box::new(fetcher),
            tasks,
            state,
            collector,
            Box::new(purger),
            Box::new(SystemClock),
            cadence,
        );
        if let Some(l) = listener {
            thread.lifecycle.set_listener(l);
        }
        thread.lifecycle.to(RuntimeState::Rebalancing);
        Ok(ProcessingRuntime { config, thread })
    }

    /// The membership handle (member id, epoch, assignment, describe).
    pub fn handle(&self) -> &StreamsGroupSessionHandle {
        self.thread.group.handle.as_ref().expect("open until close")
    }

    /// The runtime's state (Java's `KafkaStreams#state`): `Rebalancing` after
    /// [`start`](Self::start) until the first assignment is taken and the group is ready,
    /// then `Running`; `PendingError` once processing failed.
    pub fn state(&self) -> RuntimeState {
        self.thread.lifecycle.state()
    }

    /// Sets (replaces) the listener told of every later state change, with the new state
    /// then the old one. To see the first change too, give it to
    /// [`StreamsApp::state_listener`](super::StreamsApp::state_listener) instead.
    pub fn set_state_listener(
        &mut self,
        listener: impl FnMut(RuntimeState, RuntimeState) + Send + 'static,
    ) {
        let l: StateListener = Box::new(listener);
        self.thread.lifecycle.set_listener(l);
    }

    /// The tasks held now, active ones first, each with its role, input partitions and
    /// changelog partitions (Java's `KafkaStreams#metadataForLocalThreads`). A standby kept
    /// across a fencing counts as a standby.
    pub fn local_tasks(&self) -> Vec<LocalTask> {
        self.thread.local_tasks()
    }

    /// Progress so far.
    pub fn stats(&self) -> ProcessingStats {
        let t = &self.thread;
        ProcessingStats {
            processed: t.tasks.processed,
            dropped_records: t.tasks.dropped_records,
            sent: t.collector.sent,
            changelog_records: t.collector.changelog_records,
            commits: t.tasks.commits,
            restored: t.state.restored,
            standby_applied: t.state.standby_applied,
            active_tasks: t.tasks.active.len(),
            standby_tasks: t.state.standby_count(),
        }
    }

    /// The stores of the tasks held now, with the role each task is held in (a standby kept
    /// across a fencing counts as a standby), e.g. to compare a standby with its active.
    pub fn task_stores(
        &self,
    ) -> impl Iterator<Item = (&StreamsTaskId, StreamsTaskRole, &KeyValueStore)> {
        let t = &self.thread;
        let active = t.tasks.active.iter().flat_map(|(id, t)| {
            key_value_stores(&t.stores).map(move |s| (id, StreamsTaskRole::Active, s))
        });
        let standby = t.state.standby.iter().flat_map(|(id, stores)| {
            let role = match t.group.role_of(id) {
                Some(StreamsTaskRole::Warmup) => StreamsTaskRole::Warmup,
                _ => StreamsTaskRole::Standby,
            };
            key_value_stores(stores).map(move |s| (id, role, s))
        });
        active.chain(standby)
    }

    /// Runs iterations until `stop` is set (or an error).
    pub fn run_until(&mut self, stop: &std::sync::atomic::AtomicBool) -> Result<(), Error> {
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            self.run_once()?;
        }
        Ok(())
    }

    /// Why processing failed, once a processor (or the send of its store changes) returned
    /// an error; `None` while the runtime is fine.
    pub fn failure(&self) -> Option<&str> {
        self.thread.failed.as_deref()
    }

    /// One iteration: reconcile, fetch (waiting at most `poll.ms`), process, maybe commit.
    ///
    /// A processor error is returned and fails the runtime, as it ends a Java
    /// `StreamThread`: the failed record and everything after it stay uncommitted, later
    /// calls return an error at once (nothing is processed) and [`close`](Self::close)
    /// leaves the group without committing, so a restarted instance processes the failed
    /// record again.
    pub fn run_once(&mut self) -> Result<(), Error> {
        self.thread.run_once()
    }

    /// Flushes the producer, then commits the progress of every task that processed
    /// something since its last commit (offset = next record, metadata = partition time).
    pub fn commit_all(&mut self) -> Result<(), Error> {
        self.thread.commit_all()
    }

    /// Closes the tasks, then leaves the group: every processor is closed
    /// ([`Processor::close`](super::Processor::close)), the producer flushed and the offsets
    /// committed, and only then the member leaves, so no processor runs once another member
    /// may own its task. The state goes `PendingShutdown`, then `NotRunning`.
    ///
    /// After a processing failure (see [`run_once`](Self::run_once)) nothing is committed
    /// or flushed, for any task: as Java closes every task dirty when a `StreamThread`
    /// dies, the instance only leaves the group and the next owner of each task resumes at
    /// its last commit (records processed since are processed again: at-least-once); the state
    /// goes `Error`.
    pub fn close(mut self) -> Result<(), Error> {
        self.thread.close()
    }
}
