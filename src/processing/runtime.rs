//! The processing loop: one thread runs the tasks of one Streams group member (plus the
//! crate's heartbeat thread), as a Kafka Streams `StreamThread` does.
//!
//! Per iteration: reconcile a new assignment (two-phase: revoked tasks are flushed,
//! committed and dropped before they are reported released; new active tasks resume at their
//! committed offsets once their stores are restored), fetch, process every buffered record in
//! timestamp order, send each store update to its changelog, commit every
//! `commit.interval.ms` (producer flushed first), purge consumed repartition records. Output
//! batches go out once their `linger.ms` passed ([`Producer::send_ready`] every iteration),
//! not only with the commit's flush.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use crate::consumer::{Fetcher, FetcherConfig, OffsetReset};
use crate::error::Error;
use crate::producer::{Producer, ProducerConfig, ProducerRecord};
use crate::runtime::{AssignmentSubscriber, StreamsGroupSession, StreamsGroupSessionHandle};
use crate::streams::commit::{
    CommitOffset, OffsetCommitOutcome, OffsetFetchOutcome, TopicPartition,
};
use crate::streams::{StreamsTaskId, StreamsTaskOffsets, StreamsTaskRole, StreamsTaskRuntime};

use super::app::StreamsApp;
use super::changelog::ChangelogReader;
use super::config::ProcessingConfig;
use super::context::{Processor, TaskContext};
use super::purge::RecordPurger;
use super::store::{changelog_topic, KeyValueStore};
use super::task::{decode_partition_time, InputRecord, PartitionGroup};
use super::task_offsets::task_offset_sums;

/// How long a commit, a flush or a restore may take before the runtime gives up.
const OP_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest one iteration waits for the Produce answers of batches whose `linger.ms`
/// passed (sent every iteration, so output does not wait for the next commit's flush).
const SEND_READY_WAIT: Duration = Duration::from_secs(1);
/// How long the stores of a task revoked from this member are kept for a later assignment
/// (Java's `state.cleanup.delay.ms` default: a task directory not owned for that long goes).
const STATE_CLEANUP_DELAY: Duration = Duration::from_secs(600);

type Stores = BTreeMap<String, KeyValueStore>;

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

struct ActiveTask {
    group: PartitionGroup,
    processor: Box<dyn Processor>,
    stores: Stores,
}

/// A running instance of a Kafka Streams application: a member of its Streams group that
/// processes the records of the tasks it is assigned.
///
/// ```no_run
/// use std::sync::atomic::AtomicBool;
/// use kafka_streams_group::processing::{word_count, ProcessingConfig, ProcessingRuntime};
/// let config = ProcessingConfig::new("127.0.0.1:9092", "streams-wordcount");
/// let app = word_count::app(config.application_id(), "streams-plaintext-input",
///     "streams-wordcount-output", None);
/// let mut runtime = ProcessingRuntime::start(config, app)?;
/// runtime.run_until(&AtomicBool::new(false))?; // until the flag is set
/// runtime.close()?;
/// # Ok::<(), kafka_streams_group::Error>(())
/// ```
pub struct ProcessingRuntime {
    config: ProcessingConfig,
    app: StreamsApp,
    handle: Option<StreamsGroupSessionHandle>,
    changes: AssignmentSubscriber,
    tasks: StreamsTaskRuntime,
    fetcher: Fetcher,
    reader: ChangelogReader,
    producer: Producer,
    purger: RecordPurger,
    /// Repartition topics (their consumed records are purged).
    repartition_topics: BTreeSet<String>,
    /// Committed offsets of repartition partitions not purged yet.
    to_purge: BTreeMap<TopicPartition, i64>,
    active: BTreeMap<StreamsTaskId, ActiveTask>,
    /// Standby and warm-up tasks' stores, and those of standbys lost with a fencing (kept
    /// up to date while the member rejoins, as Java keeps its standby tasks).
    standby: BTreeMap<StreamsTaskId, Stores>,
    /// Standby tasks lost with a fencing and not assigned again yet.
    orphaned: BTreeSet<StreamsTaskId>,
    /// Stores of tasks revoked from this member, kept (since the instant) for a later
    /// assignment, as Java keeps a closed task's state directory: a standby revoked now and
    /// assigned active in a later rebalance restores only the tail.
    retained: BTreeMap<StreamsTaskId, (Instant, Stores)>,
    /// The task offsets last handed to the heartbeat thread.
    reported_offsets: Option<StreamsTaskOffsets>,
    owner: HashMap<TopicPartition, StreamsTaskId>,
    group_ready: bool,
    last_commit: Instant,
    last_purge: Instant,
    stats: ProcessingStats,
    /// Why processing failed (a processor or its changelog send returned an error): the
    /// runtime then processes nothing more and closes without a commit.
    failed: Option<String>,
}

impl std::fmt::Debug for ProcessingRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessingRuntime")
            .field("application_id", &self.config.application_id())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
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
        let timeout = client.get_request_timeout();
        let fetcher = Fetcher::connect(
            FetcherConfig::new(client.clone())
                .auto_offset_reset(OffsetReset::Earliest)
                .fetch_max_wait(config.get_poll_wait()),
            timeout,
        )?;
        let reader = ChangelogReader::connect(client.clone(), timeout)?;
        let producer =
            Producer::new(ProducerConfig::new(client.clone()).linger(Duration::from_millis(100)))?;
        let group = config.group_config(&app.topology);
        let handle = StreamsGroupSession::join(group)?.spawn_heartbeat_thread()?;
        let changes = handle.subscribe_assignment();
        log::info!(
            "joined {} as member {} (epoch {})",
            config.application_id(),
            handle.member_id(),
            handle.member_epoch()
        );
        let tasks = StreamsTaskRuntime::for_topology(&app.topology);
        let repartition_topics = app
            .topology
            .subtopologies
            .iter()
            .flat_map(|s| s.repartition_source_topics.iter().map(|t| t.name.clone()))
            .collect();
        Ok(ProcessingRuntime {
            config,
            app,
            handle: Some(handle),
            changes,
            tasks,
            fetcher,
            reader,
            producer,
            purger: RecordPurger::new(client),
            repartition_topics,
            to_purge: BTreeMap::new(),
            active: BTreeMap::new(),
            standby: BTreeMap::new(),
            orphaned: BTreeSet::new(),
            retained: BTreeMap::new(),
            reported_offsets: None,
            owner: HashMap::new(),
            group_ready: false,
            last_commit: Instant::now(),
            last_purge: Instant::now(),
            stats: ProcessingStats::default(),
            failed: None,
        })
    }

    /// The membership handle (member id, epoch, assignment, describe).
    pub fn handle(&self) -> &StreamsGroupSessionHandle {
        self.handle.as_ref().expect("open until close")
    }

    /// Progress so far.
    pub fn stats(&self) -> ProcessingStats {
        let mut s = self.stats;
        s.active_tasks = self.active.len();
        s.standby_tasks = self.standby.len().saturating_sub(self.orphaned.len());
        s
    }

    /// The stores of the tasks held now, with the role each task is held in (a standby kept
    /// across a fencing counts as a standby), e.g. to compare a standby with its active.
    pub fn task_stores(
        &self,
    ) -> impl Iterator<Item = (&StreamsTaskId, StreamsTaskRole, &KeyValueStore)> {
        let active = self.active.iter().flat_map(|(id, t)| {
            t.stores
                .values()
                .map(move |s| (id, StreamsTaskRole::Active, s))
        });
        let standby = self.standby.iter().flat_map(|(id, stores)| {
            let role = match self.tasks.role_of(id) {
                Some(StreamsTaskRole::Warmup) => StreamsTaskRole::Warmup,
                _ => StreamsTaskRole::Standby,
            };
            stores.values().map(move |s| (id, role, s))
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
        self.failed.as_deref()
    }

    /// One iteration: reconcile, fetch (waiting at most `poll.ms`), process, maybe commit.
    ///
    /// A processor error is returned and fails the runtime, as it ends a Java
    /// `StreamThread`: the failed record and everything after it stay uncommitted, later
    /// calls return an error at once (nothing is processed) and [`close`](Self::close)
    /// leaves the group without committing, so a restarted instance processes the failed
    /// record again.
    pub fn run_once(&mut self) -> Result<(), Error> {
        if let Some(why) = &self.failed {
            return Err(Error::InvalidConfiguration {
                field: "processing",
                reason: format!(
                    "this runtime failed ({why}) and processes nothing more: close it (nothing \
                     past the last processed record is committed) and start a new instance"
                ),
            });
        }
        let mut changed = false;
        while let Some(a) = self.changes.try_recv() {
            self.group_ready = a.is_group_ready;
            changed = true;
            if a.shutdown_requested() {
                return Err(Error::InvalidConfiguration {
                    field: "application",
                    reason: "a member of the group requested an application shutdown; close \
                             this instance"
                        .into(),
                });
            }
        }
        if changed {
            self.reconcile()?;
        }
        let wait = self.config.get_poll_wait();
        if self.active.is_empty() || !self.group_ready {
            std::thread::sleep(wait);
        } else {
            let parts = self.fetcher.poll(Instant::now() + wait)?;
            for part in parts {
                let tp = part.topic_partition().clone();
                let Some(task) = self.owner.get(&tp) else {
                    continue;
                };
                let Some(t) = self.active.get_mut(task) else {
                    continue;
                };
                let mut bad = None;
                part.for_each_record(|r| {
                    t.group.add(InputRecord {
                        partition: tp.clone(),
                        offset: r.offset,
                        timestamp: r.timestamp,
                        key: r.key.map(<[u8]>::to_vec),
                        value: r.value.map(<[u8]>::to_vec),
                        headers: r
                            .headers()
                            .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                            .collect(),
                    });
                })
                .map_err(|e| bad = Some(e))
                .ok();
                if let Some(e) = bad {
                    return Err(Error::Protocol {
                        broker: None,
                        message: format!("a fetched batch of {tp} does not decode: {e}"),
                    });
                }
            }
            if let Err(e) = self.process() {
                self.failed = Some(e.to_string());
                return Err(e);
            }
        }
        // Java's producer sends a batch once linger.ms passed; without an I/O thread, the
        // loop does it, input or not.
        self.producer.send_ready(Instant::now() + SEND_READY_WAIT)?;
        if !self.standby.is_empty() {
            self.catch_up_standbys()?;
        }
        self.report_task_offsets()?;
        if self.last_commit.elapsed() >= self.config.get_commit_interval() {
            self.commit_all()?;
        }
        if self.last_purge.elapsed() >= self.config.get_purge_interval() {
            self.last_purge = Instant::now();
            self.purge();
        }
        Ok(())
    }

    fn process(&mut self) -> Result<(), Error> {
        let app_id = self.config.application_id().to_string();
        let handler = self.config.get_deserialization_handler();
        for (task, t) in self.active.iter_mut() {
            while let Some(record) = t.group.next_record() {
                let mut ctx = TaskContext {
                    task,
                    producer: &mut self.producer,
                    stores: &mut t.stores,
                    sent: &mut self.stats.sent,
                };
                // default.deserialization.exception.handler: true = skipped (LogAndContinue).
                let result = t.processor.process(&mut ctx, &record);
                let skipped = handler.decide(result, task, &record)?;
                for store in t.stores.values_mut() {
                    for c in store.take_changelog() {
                        let topic = changelog_topic(&app_id, store.name());
                        let r = ProducerRecord::new(topic, Some(&c.key), c.value.as_deref())
                            .partition(task.partition)
                            .timestamp(c.timestamp);
                        self.producer.send(r)?;
                        self.stats.changelog_records += 1;
                    }
                }
                // Committable only now: a failed record is processed again after a restart.
                t.group.processed(&record);
                match skipped {
                    true => self.stats.dropped_records += 1,
                    false => self.stats.processed += 1,
                }
            }
        }
        Ok(())
    }

    /// Flushes the producer, then commits the progress of every task that processed
    /// something since its last commit (offset = next record, metadata = partition time).
    pub fn commit_all(&mut self) -> Result<(), Error> {
        let dirty: Vec<StreamsTaskId> = self
            .active
            .iter()
            .filter(|(_, t)| t.group.commit_needed())
            .map(|(id, _)| id.clone())
            .collect();
        self.commit_tasks(&dirty)
    }

    fn commit_tasks(&mut self, tasks: &[StreamsTaskId]) -> Result<(), Error> {
        let handle = self.handle.take().expect("open until close");
        let r = self.commit_tasks_on(&handle, tasks);
        self.handle = Some(handle);
        r
    }

    fn commit_tasks_on(
        &mut self,
        handle: &StreamsGroupSessionHandle,
        tasks: &[StreamsTaskId],
    ) -> Result<(), Error> {
        self.last_commit = Instant::now();
        self.producer.flush(Instant::now() + OP_TIMEOUT)?;
        let mut offsets: BTreeMap<TopicPartition, CommitOffset> = BTreeMap::new();
        for id in tasks {
            if let Some(t) = self.active.get(id) {
                offsets.extend(t.group.committable());
            }
        }
        if offsets.is_empty() {
            return Ok(());
        }
        let outcome = handle.commit_offsets(&offsets, OP_TIMEOUT)?;
        match outcome {
            OffsetCommitOutcome::Committed { .. } => {
                self.stats.commits += 1;
                for (tp, o) in &offsets {
                    if self.repartition_topics.contains(&tp.topic) {
                        self.to_purge.insert(tp.clone(), o.offset);
                    }
                }
                for id in tasks {
                    if let Some(t) = self.active.get_mut(id) {
                        t.group.committed();
                    }
                }
                log::debug!("committed {} partition(s)", offsets.len());
                Ok(())
            }
            OffsetCommitOutcome::MemberFenced { error, .. } => {
                // The tasks are lost: the next reconciliation drops them without a commit.
                log::warn!(
                    "commit refused ({error:?}): this member was fenced; its tasks are lost"
                );
                Ok(())
            }
            other => {
                log::warn!(
                    "commit of {} partition(s) not done: {other:?}",
                    offsets.len()
                );
                Ok(())
            }
        }
    }

    fn reconcile(&mut self) -> Result<(), Error> {
        let handle = self.handle.take().expect("open until close");
        let r = self.reconcile_with(&handle);
        self.handle = Some(handle);
        r
    }

    fn reconcile_with(&mut self, handle: &StreamsGroupSessionHandle) -> Result<(), Error> {
        let step = handle.begin_reconciliation(&mut self.tasks)?;
        if step.plan().is_empty() {
            return Ok(());
        }
        // 1. Lost: drop active tasks without committing (their stores may hold unflushed
        // writes); keep standbys up to date while rejoining, as Java does (`handleLostAll`).
        for (task, role) in &step.plan().lost {
            if *role == StreamsTaskRole::Active {
                log::warn!("task {task} ({role:?}) lost: dropped without a commit");
                self.active.remove(task);
            } else if self.standby.contains_key(task) {
                log::warn!("task {task} ({role:?}) lost: its stores are kept while rejoining");
                self.orphaned.insert(task.clone());
            }
        }
        // 2. Revoked active tasks: flush, commit them and every other dirty task, drop.
        let revoked_active: Vec<StreamsTaskId> = step
            .plan()
            .revoked
            .iter()
            .filter(|(_, r)| *r == StreamsTaskRole::Active)
            .map(|(t, _)| t.clone())
            .collect();
        let assigned: BTreeMap<&StreamsTaskId, StreamsTaskRole> =
            step.plan().assigned.iter().map(|(t, r)| (t, *r)).collect();
        let mut carried: BTreeMap<StreamsTaskId, Stores> = BTreeMap::new();
        if !revoked_active.is_empty() {
            let mut to_commit: BTreeSet<StreamsTaskId> = revoked_active.iter().cloned().collect();
            to_commit.extend(
                self.active
                    .iter()
                    .filter(|(_, t)| t.group.commit_needed())
                    .map(|(id, _)| id.clone()),
            );
            let to_commit: Vec<_> = to_commit.into_iter().collect();
            self.commit_tasks_on(handle, &to_commit)?;
        }
        for (task, role) in &step.plan().revoked {
            let stores = match role {
                StreamsTaskRole::Active => match self.active.remove(task) {
                    Some(mut t) => {
                        self.checkpoint(task, &mut t.stores)?;
                        Some(t.stores)
                    }
                    None => None,
                },
                _ => self.standby.remove(task),
            };
            match (stores, assigned.get(task)) {
                (Some(stores), Some(_)) => {
                    carried.insert(task.clone(), stores);
                }
                (Some(stores), None) if !stores.is_empty() => {
                    self.retained.insert(task.clone(), (Instant::now(), stores));
                }
                _ => {}
            }
            log::info!("task {task} ({role:?}) revoked");
        }
        handle.release_revoked(&mut self.tasks, &step)?;
        // 3. Assigned: committed offsets + partition times of new active tasks.
        let mut starting = Vec::new();
        for (task, role) in &step.plan().assigned {
            let kept = match self.orphaned.remove(task) {
                true => {
                    log::info!("task {task}: reusing the standby stores kept across the fencing");
                    self.standby.remove(task)
                }
                false => None,
            };
            let retained = self.retained.remove(task).map(|(since, stores)| {
                log::info!(
                    "task {task}: reusing the stores kept since its revocation {:?} ago",
                    since.elapsed()
                );
                stores
            });
            let stores = carried
                .remove(task)
                .or(kept)
                .or(retained)
                .unwrap_or_else(|| self.new_stores(task));
            if *role != StreamsTaskRole::Active {
                self.standby.insert(task.clone(), stores);
                log::info!("task {task} ({role:?}) assigned");
                continue;
            }
            let partitions: BTreeSet<TopicPartition> =
                handle.task_partitions(task).into_iter().collect();
            let committed = match handle.fetch_committed_offsets(&partitions, OP_TIMEOUT)? {
                OffsetFetchOutcome::Fetched(c) => c,
                OffsetFetchOutcome::PartitionErrors { fetched, failed } => {
                    return Err(Error::Protocol {
                        broker: None,
                        message: format!(
                            "cannot read the committed offsets of task {task}: {failed:?} \
                             (fetched {fetched:?})"
                        ),
                    })
                }
                other => {
                    return Err(Error::Protocol {
                        broker: None,
                        message: format!(
                            "cannot read the committed offsets of task {task}: {other:?}"
                        ),
                    })
                }
            };
            let mut times = BTreeMap::new();
            let mut positions = BTreeMap::new();
            for (tp, c) in &committed {
                if let Some(c) = c {
                    times.insert(tp.clone(), decode_partition_time(&c.metadata));
                    positions.insert(tp.clone(), c.offset);
                }
            }
            log::info!("task {task} (Active) assigned, resuming at {positions:?}");
            let processor = (self.app.factory)(task)?;
            starting.push((task.clone(), partitions, positions));
            self.active.insert(
                task.clone(),
                ActiveTask {
                    group: PartitionGroup::new(handle.task_partitions(task), &times),
                    processor,
                    stores,
                },
            );
        }
        handle.acknowledge_assigned(&mut self.tasks, &step)?;
        self.retained
            .retain(|_, (since, _)| since.elapsed() < STATE_CLEANUP_DELAY);
        // Standbys kept across a fencing go once a new assignment left them out.
        if !step.plan().assigned.is_empty() {
            for task in std::mem::take(&mut self.orphaned) {
                log::info!("task {task}: kept standby not assigned again, dropped");
                self.standby.remove(&task);
            }
        }
        // 4. Restore the new tasks' stores (their input is not fetched until then).
        for (task, _, _) in &starting {
            self.restore_task(task)?;
        }
        for (task, role) in &step.plan().assigned {
            if *role != StreamsTaskRole::Active {
                self.restore_standby(task)?;
            }
        }
        // 5. Fetch the active tasks' partitions, new ones from their committed offsets.
        self.owner = self
            .active
            .iter()
            .flat_map(|(id, t)| t.group.partitions().map(move |tp| (tp.clone(), id.clone())))
            .collect();
        self.fetcher
            .assign(self.owner.keys().cloned().collect::<Vec<_>>());
        for (_, partitions, positions) in starting {
            for tp in partitions {
                match positions.get(&tp) {
                    Some(o) => self.fetcher.seek(&tp, *o)?,
                    None => self.fetcher.seek_to_beginning(&tp)?,
                }
            }
        }
        log::info!(
            "owning {} active and {} standby task(s); group ready: {}",
            self.active.len(),
            self.standby.len(),
            self.group_ready
        );
        Ok(())
    }

    /// Marks the stores of an active task stopped cleanly (its writes flushed) as reflecting
    /// their changelogs up to the current end, as Java checkpoints on a clean close: kept
    /// for a later assignment or turned standby, they then read only what others wrote.
    fn checkpoint(&mut self, task: &StreamsTaskId, stores: &mut Stores) -> Result<(), Error> {
        let app_id = self.config.application_id();
        for store in stores.values_mut() {
            let tp = TopicPartition::new(changelog_topic(app_id, store.name()), task.partition);
            let end = self.reader.end_offset(&tp, Instant::now() + OP_TIMEOUT)?;
            if end > 0 {
                store.checkpoint(end - 1);
            }
        }
        Ok(())
    }

    fn new_stores(&self, task: &StreamsTaskId) -> Stores {
        self.app
            .stores
            .get(&task.subtopology_id)
            .map(|v| {
                v.iter()
                    .map(|(name, format)| (name.clone(), KeyValueStore::new(name.clone(), *format)))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn restore_task(&mut self, task: &StreamsTaskId) -> Result<(), Error> {
        let app_id = self.config.application_id().to_string();
        let Some(t) = self.active.get_mut(task) else {
            return Ok(());
        };
        for store in t.stores.values_mut() {
            let tp = TopicPartition::new(changelog_topic(&app_id, store.name()), task.partition);
            let s = self
                .reader
                .restore(&tp, store, Instant::now() + OP_TIMEOUT)?;
            self.stats.restored += s.records;
            log::info!(
                "task {task}: store {} restored from {tp} ({} records, offsets {}..{})",
                store.name(),
                s.records,
                s.start,
                s.end
            );
        }
        Ok(())
    }

    fn restore_standby(&mut self, task: &StreamsTaskId) -> Result<(), Error> {
        let app_id = self.config.application_id().to_string();
        let Some(stores) = self.standby.get_mut(task) else {
            return Ok(());
        };
        for store in stores.values_mut() {
            let tp = TopicPartition::new(changelog_topic(&app_id, store.name()), task.partition);
            let s = self
                .reader
                .restore(&tp, store, Instant::now() + OP_TIMEOUT)?;
            self.stats.standby_applied += s.records;
        }
        Ok(())
    }

    fn catch_up_standbys(&mut self) -> Result<(), Error> {
        let app_id = self.config.application_id().to_string();
        let tps: Vec<TopicPartition> = self
            .standby
            .iter()
            .flat_map(|(task, stores)| {
                stores
                    .values()
                    .map(|s| {
                        TopicPartition::new(changelog_topic(&app_id, s.name()), task.partition)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut pairs: Vec<(&TopicPartition, &mut KeyValueStore)> = tps
            .iter()
            .zip(self.standby.values_mut().flat_map(|s| s.values_mut()))
            .collect();
        let n = self
            .reader
            .catch_up(&mut pairs, Instant::now() + self.config.get_poll_wait())?;
        self.stats.standby_applied += n;
        Ok(())
    }

    /// Hands the heartbeat thread the current task offset sums when they changed; it sends
    /// them at Java's cadence (Kafka 4.4+ brokers only).
    fn report_task_offsets(&mut self) -> Result<(), Error> {
        let app_id = self.config.application_id();
        let reader = &self.reader;
        // Offsets: every task with local state but no running active one (standbys, and
        // stores kept after a revocation); end offsets: the tasks still reading changelogs.
        let kept = self
            .retained
            .iter()
            .map(|(task, (_, stores))| (task, stores));
        let offsets = self.standby.iter().chain(kept).map(|(task, stores)| {
            (
                task,
                stores.values().map(|s| s.changelog_offset()).collect(),
            )
        });
        let ends = self.standby.iter().map(|(task, stores)| {
            let ends = stores.values().map(|s| {
                let tp = TopicPartition::new(changelog_topic(app_id, s.name()), task.partition);
                reader.known_end_offset(&tp)
            });
            (task, ends.collect())
        });
        let offsets = task_offset_sums(offsets, ends);
        if self.reported_offsets.as_ref() == Some(&offsets) {
            return Ok(());
        }
        log::debug!("task offsets now {offsets:?}");
        self.handle().report_task_offsets(offsets.clone())?;
        self.reported_offsets = Some(offsets);
        Ok(())
    }

    /// Deletes the consumed records of repartition partitions up to their committed offsets
    /// (Java's `maybePurgeCommittedRecords`); failures are logged, never fatal.
    fn purge(&mut self) {
        log::trace!("purge: {} partition(s) pending", self.to_purge.len());
        if self.to_purge.is_empty() {
            return;
        }
        let offsets = std::mem::take(&mut self.to_purge);
        log::debug!(
            "purging {} repartition partition(s): {offsets:?}",
            offsets.len()
        );
        match self
            .purger
            .delete_records_before(&offsets, Instant::now() + OP_TIMEOUT)
        {
            Ok(results) => {
                for (tp, r) in results {
                    match r {
                        Ok(low) => log::debug!("purged {tp} up to {low}"),
                        Err(kind) => log::warn!("purging {tp} failed: {kind:?}"),
                    }
                }
            }
            Err(e) => log::warn!("purging repartition records failed: {e}"),
        }
    }

    /// Commits (producer flushed first) and leaves the group.
    ///
    /// After a processing failure (see [`run_once`](Self::run_once)) nothing is committed
    /// or flushed, for any task: as Java closes every task dirty when a `StreamThread`
    /// dies, the instance only leaves the group and the next owner of each task resumes at
    /// its last commit (records processed since are processed again: at-least-once).
    pub fn close(mut self) -> Result<(), Error> {
        let committed = match &self.failed {
            Some(why) => {
                log::warn!("closing after a processing failure ({why}): no commit");
                Ok(())
            }
            None => self.commit_all(),
        };
        if let Err(e) = &committed {
            log::warn!("final commit failed: {e}");
        }
        let left = self.handle.take().expect("open until close").close();
        committed.and(left)
    }
}
