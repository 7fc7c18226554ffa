//! Which tasks this member runs and in what state (Kafka Streams' `TaskManager`): a new
//! assignment is handled as Java does, lost tasks first (`handleLostAll`: dropped without a
//! commit), then revoked ones (`handleRevocation`: committed, then released), then assigned
//! ones (`handleAssignment`: stores restored before the first record). What to do with each
//! task is a pure decision over the plan ([`decide`]); the doing goes through the ports.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use crate::error::Error;
use crate::streams::commit::{
    CommitOffset, OffsetCommitOutcome, OffsetFetchOutcome, TopicPartition,
};
use crate::streams::{StreamsTaskId, StreamsTaskPlan, StreamsTaskRole};

use super::app::ProcessorFactory;
use super::collector::{Commit, RecordCollector};
use super::context::{Processor, TaskContext};
use super::deserialization::DeserializationHandler;
use super::ports::{GroupPort, InputPort};
use super::state_manager::{StateManager, Stores};
use super::task::{decode_partition_time, InputRecord, PartitionGroup};

/// One active task: its input queues, its processor and its stores.
pub(crate) struct ActiveTask {
    pub(crate) group: PartitionGroup,
    pub(crate) processor: Box<dyn Processor>,
    pub(crate) stores: Stores,
    /// `Processor::init` was called (and `close` is owed).
    initialized: bool,
}

impl ActiveTask {
    /// Closes the processor if it was initialized.
    fn close_processor(&mut self, task: &StreamsTaskId) {
        if std::mem::take(&mut self.initialized) {
            log::debug!("task {task}: closing its processor");
            self.processor.close();
        }
    }
}

/// What a reconciliation does with each task of its plan.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Decisions {
    /// Lost active tasks: dropped without a commit.
    pub drop_dirty: Vec<StreamsTaskId>,
    /// Lost standby tasks: kept up to date while the member rejoins.
    pub keep_lost_standby: Vec<StreamsTaskId>,
    /// Tasks whose offsets are committed before anything is released: the revoked active
    /// tasks and every other task that processed something since its last commit (empty if
    /// no active task is revoked).
    pub commit: Vec<StreamsTaskId>,
    /// Revoked tasks, with the role they were held in.
    pub revoke: Vec<(StreamsTaskId, StreamsTaskRole)>,
    /// Revoked tasks assigned again in another role: their stores move over.
    pub carry: BTreeSet<StreamsTaskId>,
    /// Tasks to start, with their role.
    pub start: Vec<(StreamsTaskId, StreamsTaskRole)>,
}

/// Decides what a reconciliation does, from its plan and the tasks with uncommitted progress.
pub(crate) fn decide(plan: &StreamsTaskPlan, dirty: &BTreeSet<StreamsTaskId>) -> Decisions {
    let mut d = Decisions::default();
    for (task, role) in &plan.lost {
        match role {
            StreamsTaskRole::Active => d.drop_dirty.push(task.clone()),
            _ => d.keep_lost_standby.push(task.clone()),
        }
    }
    let revoked_active: BTreeSet<StreamsTaskId> = plan
        .revoked
        .iter()
        .filter(|(_, r)| *r == StreamsTaskRole::Active)
        .map(|(t, _)| t.clone())
        .collect();
    if !revoked_active.is_empty() {
        let lost: BTreeSet<&StreamsTaskId> = d.drop_dirty.iter().collect();
        let mut commit = revoked_active;
        commit.extend(dirty.iter().filter(|t| !lost.contains(t)).cloned());
        d.commit = commit.into_iter().collect();
    }
    let assigned: BTreeSet<&StreamsTaskId> = plan.assigned.iter().map(|(t, _)| t).collect();
    d.revoke = plan.revoked.clone();
    d.carry = plan
        .revoked
        .iter()
        .filter(|(t, _)| assigned.contains(t))
        .map(|(t, _)| t.clone())
        .collect();
    d.start = plan.assigned.clone();
    d
}

/// The sides a reconciliation, a commit or processing works through.
pub(crate) struct Sides<'a> {
    pub group: &'a mut dyn GroupPort,
    pub input: &'a mut dyn InputPort,
    pub state: &'a mut StateManager,
    pub collector: &'a mut RecordCollector,
}

/// The active tasks of one member.
pub(crate) struct TaskManager {
    factory: ProcessorFactory,
    pub(crate) active: BTreeMap<StreamsTaskId, ActiveTask>,
    owner: HashMap<TopicPartition, StreamsTaskId>,
    repartition_topics: BTreeSet<String>,
    /// Committed offsets of repartition partitions not purged yet.
    pub(crate) to_purge: BTreeMap<TopicPartition, i64>,
    /// Input records processed.
    pub(crate) processed: u64,
    /// Records skipped by `default.deserialization.exception.handler=LogAndContinue`.
    pub(crate) dropped_records: u64,
    /// Offset commits that succeeded.
    pub(crate) commits: u64,
    /// What a processor's deserialization error of its own record does.
    deserialization: DeserializationHandler,
    /// Exactly-once: why the last transaction was aborted (the tasks migrated); the active
    /// tasks must be closed dirty and revived before anything else.
    pub(crate) migrated: Option<String>,
    /// `max.task.idle.ms=0`: a task waits for its partitions with records on the broker
    /// (false for -1).
    pub(crate) wait_for_lagging: bool,
}

impl TaskManager {
    pub(crate) fn new(factory: ProcessorFactory, repartition_topics: BTreeSet<String>) -> Self {
        TaskManager {
            factory,
            active: BTreeMap::new(),
            owner: HashMap::new(),
            repartition_topics,
            to_purge: BTreeMap::new(),
            processed: 0,
            dropped_records: 0,
            commits: 0,
            deserialization: DeserializationHandler::default(),
            migrated: None,
            wait_for_lagging: true,
        }
    }

    /// Sets `default.deserialization.exception.handler` (LogAndFail unless set).
    pub(crate) fn with_deserialization_handler(mut self, handler: DeserializationHandler) -> Self {
        self.deserialization = handler;
        self
    }

    /// Sets `max.task.idle.ms` (0, the default: wait for lagging partitions; -1: never).
    pub(crate) fn with_max_task_idle_ms(mut self, ms: i64) -> Self {
        self.wait_for_lagging = ms >= 0;
        self
    }

    /// The tasks that processed something since their last commit.
    pub(crate) fn dirty(&self) -> BTreeSet<StreamsTaskId> {
        self.active
            .iter()
            .filter(|(_, t)| t.group.commit_needed())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Applies a new assignment: lost, revoked, assigned, in Java's order.
    /// `rebalancing` is called first when the plan changes anything.
    pub(crate) fn reconcile(
        &mut self,
        s: &mut Sides<'_>,
        now: Instant,
        rebalancing: &mut dyn FnMut(),
    ) -> Result<(), Error> {
        let plan = s.group.begin_reconciliation()?;
        if plan.is_empty() {
            return Ok(());
        }
        rebalancing();
        let mut d = decide(&plan, &self.dirty());
        self.handle_lost(&d, s.state);
        if !d.drop_dirty.is_empty() && s.collector.is_eos() {
            // The open transaction holds the lost tasks' output: it must never commit, and
            // the other tasks' uncommitted work goes with it.
            s.collector.abort(false)?;
            self.migrated = Some("active tasks lost".into());
        }
        let (carried, revived) = self.handle_revocation(&d, s, now)?;
        let revoked: BTreeSet<&StreamsTaskId> = d.revoke.iter().map(|(t, _)| t).collect();
        let revive: Vec<StreamsTaskId> = revived
            .into_iter()
            .filter(|t| !revoked.contains(t))
            .collect();
        d.start
            .extend(revive.into_iter().map(|t| (t, StreamsTaskRole::Active)));
        self.handle_assignment(&d.start, carried, s, now, true)?;
        log::info!(
            "owning {} active and {} standby task(s)",
            self.active.len(),
            s.state.standby.len()
        );
        Ok(())
    }

    /// Lost active tasks go without a commit (their stores may hold unflushed writes);
    /// lost standbys are kept up to date while rejoining.
    fn handle_lost(&mut self, d: &Decisions, state: &mut StateManager) {
        for task in &d.drop_dirty {
            log::warn!("task {task} (Active) lost: dropped without a commit");
            if let Some(mut t) = self.active.remove(task) {
                t.close_processor(task);
            }
        }
        for task in &d.keep_lost_standby {
            state.standby_lost(task);
        }
    }

    /// Commits the revoked active tasks (and every other dirty one), checkpoints and drops
    /// the revoked tasks, and only then reports them released. Returns the stores of
    /// revoked tasks assigned again in another role, and (exactly-once, the transaction
    /// aborted) the active tasks closed dirty.
    #[allow(clippy::type_complexity)]
    fn handle_revocation(
        &mut self,
        d: &Decisions,
        s: &mut Sides<'_>,
        now: Instant,
    ) -> Result<(BTreeMap<StreamsTaskId, Stores>, Vec<StreamsTaskId>), Error> {
        // Java suspends a revoked task (its processors closed) before committing it.
        for (task, _) in &d.revoke {
            if let Some(t) = self.active.get_mut(task) {
                t.close_processor(task);
            }
        }
        if !d.commit.is_empty() {
            self.commit(&d.commit, s.group, s.collector)?;
        }
        // Exactly-once: an aborted commit leaves every store dirty; none is kept.
        let dirty: Vec<StreamsTaskId> =
            self.close_all_dirty().into_iter().map(|(t, _)| t).collect();
        let mut carried = BTreeMap::new();
        for (task, role) in &d.revoke {
            let stores = match role {
                StreamsTaskRole::Active => match self.active.remove(task) {
                    Some(mut t) => {
                        s.state.checkpoint(task, &mut t.stores)?;
                        Some(t.stores)
                    }
                    None => None,
                },
                _ => s.state.take_standby(task),
            };
            match stores {
                Some(stores) if d.carry.contains(task) => {
                    carried.insert(task.clone(), stores);
                }
                Some(stores) => s.state.retain(task, stores, now),
                None => {}
            }
            log::info!("task {task} ({role:?}) revoked");
        }
        s.group.release_revoked()?;
        Ok((carried, dirty))
    }

    /// Exactly-once, after an aborted transaction ([`migrated`](Self::migrated) set): closes
    /// every active task dirty (processor closed) and returns their ids with their stores,
    /// which hold writes of the aborted transaction: the caller must drop them (Java wipes
    /// the state of a task closed dirty under EOS); nothing otherwise.
    fn close_all_dirty(&mut self) -> Vec<(StreamsTaskId, Stores)> {
        if self.migrated.is_none() {
            return Vec::new();
        }
        self.owner.clear();
        std::mem::take(&mut self.active)
            .into_iter()
            .map(|(task, mut t)| {
                log::warn!("task {task}: closed dirty, its stores wiped (transaction aborted)");
                t.close_processor(&task);
                (task, t.stores)
            })
            .collect()
    }

    /// Exactly-once, after an aborted transaction outside a reconciliation: closes every
    /// active task dirty and starts the tasks again from committed state (new stores
    /// restored from the committed changelog, input from the committed offsets), as Java's
    /// `closeDirtyAndRevive` does; the group still assigns them.
    pub(crate) fn revive_after_abort(
        &mut self,
        s: &mut Sides<'_>,
        now: Instant,
    ) -> Result<(), Error> {
        let Some(why) = self.migrated.clone() else {
            return Ok(());
        };
        let mut start = Vec::new();
        for (task, dirty_stores) in self.close_all_dirty() {
            drop(dirty_stores);
            if s.group.role_of(&task) == Some(StreamsTaskRole::Active) {
                start.push((task, StreamsTaskRole::Active));
            }
        }
        log::warn!(
            "transaction aborted ({why}): reviving {} task(s)",
            start.len()
        );
        let revived = self.handle_assignment(&start, BTreeMap::new(), s, now, false);
        if let Err(e) = revived {
            // The member was fenced meanwhile (its committed offsets are refused as not
            // assigned): the coming reconciliation takes the tasks as lost, assigns anew.
            log::warn!("reviving failed ({e}): the tasks wait for the next assignment");
            for (task, mut t) in std::mem::take(&mut self.active) {
                t.close_processor(&task);
            }
            self.owner.clear();
        }
        Ok(())
    }

    /// Creates the tasks of `start`, acknowledges them (if `acknowledge`: a reconciliation),
    /// restores their stores (active tasks process nothing before), then fetches the active
    /// tasks' partitions.
    fn handle_assignment(
        &mut self,
        start: &[(StreamsTaskId, StreamsTaskRole)],
        mut carried: BTreeMap<StreamsTaskId, Stores>,
        s: &mut Sides<'_>,
        now: Instant,
        acknowledge: bool,
    ) -> Result<(), Error> {
        self.migrated = None;
        let mut starting = Vec::new();
        let mut skipped = BTreeSet::new();
        for (task, role) in start {
            if *role != StreamsTaskRole::Active {
                let stores = s.state.stores_for(task, carried.remove(task), now);
                s.state.add_standby(task, stores);
                log::info!("task {task} ({role:?}) assigned");
                continue;
            }
            let partitions = s.group.task_partitions(task);
            let (times, positions) = match committed_positions(s.group, task, &partitions)? {
                Committed::Positions(times, positions) => (times, positions),
                Committed::NotHeld(why) if acknowledge => {
                    // The heartbeat thread took a newer target while this one was being
                    // reconciled, and it no longer holds the task (or the member was
                    // fenced): the broker may already have handed the task to another
                    // member. Starting it would process it twice; it is left out of the
                    // acknowledgement instead, and the next reconciliation plans from the
                    // owned tasks without it.
                    log::warn!(
                        "task {task} (Active) not started: {why}; the group moved it while it \
                         was being assigned, the next reconciliation follows the new target"
                    );
                    s.group.skip_assigned(task);
                    if let Some(stores) = carried.remove(task) {
                        s.state.retain(task, stores, now);
                    }
                    skipped.insert(task.clone());
                    continue;
                }
                Committed::NotHeld(why) => {
                    return Err(Error::Protocol {
                        broker: None,
                        message: format!("cannot read the committed offsets of task {task}: {why}"),
                    })
                }
            };
            let stores = s.state.stores_for(task, carried.remove(task), now);
            log::info!("task {task} (Active) assigned, resuming at {positions:?}");
            let processor = (self.factory)(task)?;
            let group = PartitionGroup::new(partitions.iter().cloned(), &times);
            starting.push((task.clone(), partitions, positions));
            let t = ActiveTask {
                group,
                processor,
                stores,
                initialized: false,
            };
            self.active.insert(task.clone(), t);
        }
        if acknowledge {
            s.group.acknowledge_assigned()?;
            s.state.after_assignment(start.len() > skipped.len(), now);
        }
        for (task, _, _) in &starting {
            if let Some(t) = self.active.get_mut(task) {
                s.state.restore_active(task, &mut t.stores)?;
            }
        }
        for (task, role) in start {
            if *role != StreamsTaskRole::Active {
                s.state.restore_standby(task)?;
            }
        }
        self.owner = self
            .active
            .iter()
            .flat_map(|(id, t)| t.group.partitions().map(move |tp| (tp.clone(), id.clone())))
            .collect();
        s.input.assign(self.owner.keys().cloned().collect());
        for (_, partitions, positions) in starting {
            for tp in partitions {
                s.input.seek(&tp, positions.get(&tp).copied())?;
            }
        }
        Ok(())
    }

    /// Queues fetched records to their tasks (records of partitions no task owns now are
    /// dropped).
    pub(crate) fn add_records(&mut self, records: Vec<InputRecord>) {
        for r in records {
            let Some(task) = self.owner.get(&*r.partition) else {
                continue;
            };
            if let Some(t) = self.active.get_mut(task) {
                t.group.add(r);
            }
        }
    }

    /// Records buffered for input partition `tp` (0 if no active task owns it).
    pub(crate) fn buffered(&self, tp: &TopicPartition) -> usize {
        self.owner
            .get(tp)
            .and_then(|task| self.active.get(task))
            .map_or(0, |t| t.group.buffered_in(tp))
    }

    /// Whether an active task reads `tp`.
    pub(crate) fn owns_input(&self, tp: &TopicPartition) -> bool {
        self.owner.contains_key(tp)
    }

    /// The input partitions of the active tasks.
    pub(crate) fn input_partitions(&self) -> impl Iterator<Item = &TopicPartition> {
        self.owner.keys()
    }

    /// Initializes the processors of new tasks, then processes every buffered record, task
    /// by task, in timestamp order within a task, while the task is ready (under
    /// `max.task.idle.ms=0` no partition of it has an empty queue and records on the broker:
    /// `fetched_lag`, see [`PartitionGroup::ready`]); the stores' changes go to their
    /// changelogs after each record. A processor error is returned at once: the failed
    /// record is not marked processed, so no commit passes it.
    pub(crate) fn process(
        &mut self,
        collector: &mut RecordCollector,
        fetched_lag: &dyn Fn(&TopicPartition) -> Option<i64>,
    ) -> Result<(), Error> {
        let wait = self.wait_for_lagging;
        for (task, t) in self.active.iter_mut() {
            if !t.initialized {
                let mut ctx = TaskContext {
                    task,
                    collector: &mut *collector,
                    stores: &mut t.stores,
                };
                t.processor.init(&mut ctx).map_err(|e| {
                    log::error!("initializing the processor of task {task} failed: {e}");
                    e
                })?;
                t.initialized = true;
                for store in t.stores.values_mut() {
                    collector.send_changelog(store)?;
                }
            }
            loop {
                if wait && !t.group.ready(fetched_lag) {
                    break;
                }
                let Some(record) = t.group.next_record() else {
                    break;
                };
                let mut ctx = TaskContext {
                    task,
                    collector: &mut *collector,
                    stores: &mut t.stores,
                };
                // Logs a failure; Ok(true) = skipped under LogAndContinue (its deserialization
                // error), and the skip is committed past like a processed record.
                let result = t.processor.process(&mut ctx, &record);
                let skipped = self.deserialization.decide(result, task, &record)?;
                for store in t.stores.values_mut() {
                    collector.send_changelog(store)?;
                }
                // Committable only now: a failed record is processed again after a restart.
                t.group.processed(&record);
                match skipped {
                    true => self.dropped_records += 1,
                    false => self.processed += 1,
                }
            }
        }
        Ok(())
    }

    /// Commits the progress of `tasks` through the collector's commit path.
    pub(crate) fn commit(
        &mut self,
        tasks: &[StreamsTaskId],
        group: &mut dyn GroupPort,
        collector: &mut RecordCollector,
    ) -> Result<(), Error> {
        let mut offsets: BTreeMap<TopicPartition, CommitOffset> = BTreeMap::new();
        for id in tasks {
            if let Some(t) = self.active.get_mut(id) {
                // Java's `prepareCommit`: the record caches are flushed to the stores and
                // their changelogs before the producer is flushed and the offsets committed.
                for store in t.stores.values_mut() {
                    store.store.flush_cache();
                    collector.send_changelog(store)?;
                }
                offsets.extend(t.group.committable());
            }
        }
        match collector.commit(group, &offsets)? {
            Commit::Nothing => {}
            Commit::Migrated(why) => self.migrated = Some(why),
            Commit::Done(OffsetCommitOutcome::Committed { .. }) => {
                self.commits += 1;
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
            }
            Commit::Done(OffsetCommitOutcome::MemberFenced { error, .. }) => {
                // The tasks are lost: the next reconciliation drops them without a commit.
                log::warn!(
                    "commit refused ({error:?}): this member was fenced; its tasks are lost"
                );
            }
            Commit::Done(other) => {
                log::warn!(
                    "commit of {} partition(s) not done: {other:?}",
                    offsets.len()
                );
            }
        }
        Ok(())
    }

    /// Commits every task with uncommitted progress.
    pub(crate) fn commit_all(
        &mut self,
        group: &mut dyn GroupPort,
        collector: &mut RecordCollector,
    ) -> Result<(), Error> {
        let dirty: Vec<StreamsTaskId> = self.dirty().into_iter().collect();
        self.commit(&dirty, group, collector)
    }
}

impl TaskManager {
    /// Closes every active task before the member leaves (Java's `TaskManager#shutdown`):
    /// processors closed, then, if `clean`, the output flushed and the offsets committed;
    /// the tasks are dropped either way.
    pub(crate) fn close_all(
        &mut self,
        clean: bool,
        group: &mut dyn GroupPort,
        collector: &mut RecordCollector,
    ) -> Result<(), Error> {
        for (task, t) in self.active.iter_mut() {
            t.close_processor(task);
        }
        let committed = match clean {
            true => self.commit_all(group, collector),
            // Exactly-once: nothing of the open transaction may become visible.
            false => collector.abort(false),
        };
        self.active.clear();
        self.owner.clear();
        committed
    }

    /// The active tasks with their input partitions.
    pub(crate) fn active_partitions(
        &self,
    ) -> impl Iterator<Item = (&StreamsTaskId, Vec<TopicPartition>)> {
        self.active
            .iter()
            .map(|(id, t)| (id, t.group.partitions().cloned().collect()))
    }
}

/// What the committed offsets of a task starting here say.
enum Committed {
    /// Partition times and positions (partitions with nothing committed are absent).
    Positions(BTreeMap<TopicPartition, i64>, BTreeMap<TopicPartition, i64>),
    /// The member does not hold the task now (no longer in its target, or fenced); why.
    NotHeld(String),
}

/// Partition times and positions of `task` from its committed offsets.
fn committed_positions(
    group: &mut dyn GroupPort,
    task: &StreamsTaskId,
    partitions: &[TopicPartition],
) -> Result<Committed, Error> {
    let set: BTreeSet<TopicPartition> = partitions.iter().cloned().collect();
    let committed = match group.fetch_committed(&set)? {
        OffsetFetchOutcome::Fetched(c) => c,
        OffsetFetchOutcome::NotAssigned { partitions } => {
            return Ok(Committed::NotHeld(format!(
                "its partitions {partitions:?} are not assigned to this member any more"
            )))
        }
        OffsetFetchOutcome::MemberFenced { error } => {
            return Ok(Committed::NotHeld(format!(
                "the member was fenced ({error})"
            )))
        }
        OffsetFetchOutcome::PartitionErrors { fetched, failed } => {
            return Err(Error::Protocol {
                broker: None,
                message: format!(
                    "cannot read the committed offsets of task {task}: {failed:?} \
                     (fetched {fetched:?})"
                ),
            })
        }
    };
    let mut times = BTreeMap::new();
    let mut positions = BTreeMap::new();
    for (tp, c) in committed.iter() {
        if let Some(c) = c {
            times.insert(tp.clone(), decode_partition_time(&c.metadata));
            positions.insert(tp.clone(), c.offset);
        }
    }
    Ok(Committed::Positions(times, positions))
}
