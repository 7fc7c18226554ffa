//! The public face of one Streams application instance: [`ProcessingRuntime`] joins the
//! group, wires the real sides (heartbeat handle, fetcher, changelog reader, producer,
//! purger) into a [`StreamThread`] and runs it. The loop is in [`thread`](super::thread),
//! the tasks in [`task_manager`](super::task_manager), their stores in
//! [`state_manager`](super::state_manager), sends and commits in
//! [`collector`](super::collector).

use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::Error;
use crate::session::StreamsGroupSessionHandle;
use crate::streams::{StreamsTaskId, StreamsTaskRole};

use super::app::StreamsApp;
use super::config::ProcessingConfig;
use super::lifecycle::{LocalTask, RuntimeState, StateListener};
use super::ports::{GroupPort, HandleGroup};
use super::query::stores::{query_channel, StoreCatalog};
use super::state_dir::StateDirectory;
use super::state_manager::key_value_stores;
use super::thread::StreamThread;
use super::workers::{build_member, member_config, AppParts, StateView, Worker};
use crate::state::KeyValueStore;

/// Progress counters of a [`ProcessingRuntime`] (summed over its stream threads).
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

impl ProcessingStats {
    fn add(&mut self, o: &ProcessingStats) {
        self.processed += o.processed;
        self.dropped_records += o.dropped_records;
        self.sent += o.sent;
        self.changelog_records += o.changelog_records;
        self.commits += o.commits;
        self.restored += o.restored;
        self.standby_applied += o.standby_applied;
        self.active_tasks += o.active_tasks;
        self.standby_tasks += o.standby_tasks;
    }
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
    /// Stream thread 1, run by the caller.
    thread: StreamThread<HandleGroup>,
    /// Interactive-query metadata over the session's snapshots ([`super::query`]).
    pub(super) metadata: super::query::StreamsMetadataHandle,
    /// Interactive queries of the local stores ([`super::query::stores`]).
    pub(super) stores: super::query::StoreQueryHandle,
    /// Stream threads 2..=N.
    workers: Vec<Worker>,
    /// The instance's state over all threads, with the application's listener.
    view: Arc<Mutex<StateView>>,
    /// Why a worker thread failed, once seen.
    worker_failure: Option<String>,
    /// `<state.dir>/<application.id>`, locked until the runtime is dropped (if `state.dir`
    /// is set).
    _state_dir: Option<StateDirectory>,
}

impl std::fmt::Debug for ProcessingRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessingRuntime")
            .field("application_id", &self.config.application_id())
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl ProcessingRuntime {
    /// Joins the application's Streams group (group id = `application.id`) with the app's
    /// topology and connects the fetcher, the changelog reader and the producer (acks=all,
    /// idempotent, `linger.ms` 100 as Kafka Streams sets it). A configuration whose durations
    /// are out of range is refused first ([`ProcessingConfig::validate`]).
    ///
    /// With `num.stream.threads` N > 1 ([`ProcessingConfig::num_stream_threads`]) it joins
    /// N members sharing one process id, as Kafka Streams' N stream threads do: the caller
    /// runs stream thread 1 ([`run_once`](Self::run_once)); threads 2..=N run on their own
    /// OS threads from now until [`close`](Self::close).
    pub fn start(config: ProcessingConfig, app: StreamsApp) -> Result<ProcessingRuntime, Error> {
        config.validate()?;
        app.validate(config.application_id())?;
        let n = config.get_num_stream_threads();
        let view = StateView::new(n, app.listener);
        let (senders, mut inboxes): (Vec<_>, Vec<_>) = (0..n).map(|_| query_channel()).unzip();
        let catalog = StoreCatalog::of(&app.stores, app.store_serdes);
        let stores = super::query::StoreQueryHandle::new(senders, view.clone(), catalog);
        inboxes.reverse(); // popped: thread 1's first
        let parts = AppParts {
            topology: app.topology,
            stores: app.stores,
            unlogged: app.unlogged,
            factory: Arc::new(Mutex::new(app.factory)),
        };
        // Java's `StateDirectory#initializeProcessId`: the process id kept across restarts.
        let (state_dir, stored_pid) = match config.get_state_dir() {
            Some(base) => {
                let (dir, pid, _) = StateDirectory::open(base, config.application_id())?;
                (Some(dir), Some(pid))
            }
            None => (None, None),
        };
        let first = member_config(&config, &parts.topology, stored_pid.as_deref(), 1);
        let process_id = first.get_process_id().to_owned();
        match (&state_dir, stored_pid) {
            (Some(dir), Some(stored)) if stored != process_id => log::info!(
                "process id {process_id} (set by the application; {stored} in {} unused)",
                dir.path().display()
            ),
            (Some(dir), _) => {
                log::info!("process id {process_id} (kept in {})", dir.path().display())
            }
            _ => log::info!("process id {process_id} (new: no state.dir)"),
        }
        let startup = first.get_join_timeout() + config.client().get_request_timeout() * 2;
        let mut thread = build_member(&config, &parts, first, 1)?;
        thread.queries = inboxes.pop();
        thread
            .lifecycle
            .set_listener(StateView::thread_listener(&view, 0));
        thread.lifecycle.to(RuntimeState::Rebalancing);
        // Interactive-query metadata comes from thread 1's session: every member of the
        // group receives the same endpoint-to-partitions information.
        let metadata = super::query::StreamsMetadataHandle::new(
            thread
                .group
                .handle
                .as_ref()
                .expect("open until close")
                .shared_state()
                .clone(),
            &parts.topology,
            &parts.stores,
        );
        let mut runtime = ProcessingRuntime {
            config,
            thread,
            metadata,
            stores,
            workers: Vec::new(),
            view,
            worker_failure: None,
            _state_dir: state_dir,
        };
        for idx in 2..=n {
            let (c, p, pid) = (runtime.config.clone(), parts.clone(), process_id.clone());
            let inbox = inboxes.pop();
            let build = move || {
                let group = member_config(&c, &p.topology, Some(&pid), idx);
                let mut thread = build_member(&c, &p, group, idx)?;
                thread.queries = inbox;
                Ok(thread)
            };
            match Worker::spawn(idx, &runtime.view, startup, build) {
                Ok(w) => runtime.workers.push(w),
                Err(e) => {
                    if let Err(c) = runtime.close() {
                        log::warn!("closing after stream thread {idx} failed to start: {c}");
                    }
                    return Err(e);
                }
            }
        }
        Ok(runtime)
    }

    /// The membership handle (member id, epoch, assignment, describe) of stream thread 1.
    pub fn handle(&self) -> &StreamsGroupSessionHandle {
        self.thread.group.handle.as_ref().expect("open until close")
    }

    /// The runtime's state (Java's `KafkaStreams#state`): `Rebalancing` after
    /// [`start`](Self::start) until the first assignment is taken and the group is ready,
    /// then `Running`; `PendingError` once processing failed. With several stream threads
    /// it is the instance's state over theirs: `Running` once all run, `Rebalancing` while
    /// one rebalances, `PendingError` once one failed.
    pub fn state(&self) -> RuntimeState {
        self.view.lock().state()
    }

    /// Sets (replaces) the listener told of every later state change, with the new state
    /// then the old one. To see the first change too, give it to
    /// [`StreamsApp::state_listener`](super::StreamsApp::state_listener) instead. With
    /// several stream threads it is told of the instance's state (see
    /// [`state`](Self::state)), on the thread whose change moved it.
    pub fn set_state_listener(
        &mut self,
        listener: impl FnMut(RuntimeState, RuntimeState) + Send + 'static,
    ) {
        let l: StateListener = Box::new(listener);
        self.view.lock().set_listener(l);
    }

    /// The tasks held now, active ones first, each with its role, input partitions and
    /// changelog partitions (Java's `KafkaStreams#metadataForLocalThreads`). A standby kept
    /// across a fencing counts as a standby. With several stream threads: those of thread
    /// 1, then those the other threads held at the end of their last iteration.
    pub fn local_tasks(&self) -> Vec<LocalTask> {
        let mut tasks = self.thread.local_tasks();
        for w in &self.workers {
            tasks.extend(w.seen.lock().tasks.iter().cloned());
        }
        tasks
    }

    /// Progress so far, summed over the stream threads (the others' as of the end of their
    /// last iteration).
    pub fn stats(&self) -> ProcessingStats {
        let mut total = self.thread.stats();
        for w in &self.workers {
            total.add(&w.seen.lock().stats);
        }
        total
    }

    /// The stores of the tasks held now, with the role each task is held in (a standby kept
    /// across a fencing counts as a standby), e.g. to compare a standby with its active; of
    /// stream thread 1 only (the others' stores live on their threads).
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
    /// an error (on any stream thread); `None` while the runtime is fine.
    pub fn failure(&self) -> Option<&str> {
        self.thread
            .failed
            .as_deref()
            .or(self.worker_failure.as_deref())
    }

    /// One iteration: reconcile, fetch (waiting at most `poll.ms`), process, maybe commit.
    ///
    /// A processor error is returned and fails the runtime, as it ends a Java
    /// `StreamThread`: the failed record and everything after it stay uncommitted, later
    /// calls return an error at once (nothing is processed) and [`close`](Self::close)
    /// leaves the group without committing, so a restarted instance processes the failed
    /// record again.
    ///
    /// With several stream threads this is one iteration of thread 1; once another thread
    /// failed (it then left the group without a commit, as a dying Java `StreamThread`
    /// does), it returns that error: close the instance.
    pub fn run_once(&mut self) -> Result<(), Error> {
        if self.worker_failure.is_none() {
            self.worker_failure = self.workers.iter().find_map(|w| {
                let why = w.seen.lock().failure.clone()?;
                Some(format!("stream thread {} failed: {why}", w.idx))
            });
        }
        if let Some(why) = &self.worker_failure {
            return Err(Error::InvalidConfiguration {
                field: "processing",
                reason: format!("{why}; close this instance and start a new one"),
            });
        }
        self.thread.run_once()
    }

    /// Flushes the producer, then commits the progress of every task that processed
    /// something since its last commit (offset = next record, metadata = partition time).
    /// (Of stream thread 1; the others commit every `commit.interval.ms` and on close.)
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
    ///
    /// With several stream threads all are asked to close at once, thread 1 closes on the
    /// caller's thread, then each other one is waited for (each of its steps has its own
    /// deadline); the first error is returned.
    pub fn close(mut self) -> Result<(), Error> {
        for w in &mut self.workers {
            w.stop();
        }
        let mut result = self.thread.close();
        for w in std::mem::take(&mut self.workers) {
            let closed = w.close();
            if let Err(e) = &closed {
                log::warn!("closing a stream thread: {e}");
            }
            result = result.and(closed);
        }
        result
    }
}
