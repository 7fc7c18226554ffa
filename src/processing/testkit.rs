//! An in-memory cluster for the stream thread, task manager, state manager and collector:
//! the group, input, changelog, produce and purge sides over shared logs, on a manual clock.
//! Every side call is recorded in one event log, so a test can check the order Kafka
//! Streams keeps (flush, commit, then release; restore before processing; close before
//! leaving).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::producer::ProducerRecord;
use crate::streams::commit::{
    CommitOffset, CommittedOffset, OffsetCommitOutcome, OffsetFetchOutcome, TopicPartition,
};
use crate::streams::{StreamsTaskId, StreamsTaskOffsets, StreamsTaskPlan, StreamsTaskRole};

use super::collector::RecordCollector;
use super::context::{Processor, TaskContext};
use super::eos::TransactionPort;
use super::ports::{ChangelogPort, Clock, GroupNews, GroupPort, InputPort, ProducePort, PurgePort};
use super::state_manager::StateManager;
use super::task::InputRecord;
use super::task_manager::TaskManager;
use super::thread::{Cadence, StreamThread};
use crate::producer::transaction::{GroupMetadata, TxnError, TxnErrorClass};
use crate::producer::TransactionError;
use crate::protocol::BrokerErrorKind;
use crate::state::{KeyValueStore, RestoreSummary, StateStore, StoreFormat};

/// The application id of the harness.
pub(crate) const APP: &str = "app";
/// The input topic (task `0_p` reads its partition `p`).
pub(crate) const INPUT: &str = "in";
/// The output topic of [`Counter`].
pub(crate) const OUTPUT: &str = "out";
/// The store of subtopology `0`.
pub(crate) const STORE: &str = "counts";

/// One record in a log: key, value, timestamp.
pub(crate) type LogRecord = (Option<Vec<u8>>, Option<Vec<u8>>, i64);

/// The shared state of the fake cluster.
#[derive(Default)]
pub(crate) struct Cluster {
    /// Every side call, in order.
    pub events: Vec<String>,
    /// Topic partitions' records.
    pub logs: BTreeMap<TopicPartition, Vec<LogRecord>>,
    /// Committed offsets.
    pub committed: BTreeMap<TopicPartition, CommitOffset>,
    /// The manual clock.
    pub now: Option<Instant>,
    /// Exactly-once: the next transaction commit fails with this answer.
    pub fail_commit: Option<(TxnErrorClass, BrokerErrorKind)>,
    /// Exactly-once: the next transaction commit times out (EndTxn was sent, its answer
    /// never came); `true` if the coordinator committed the transaction all the same.
    pub commit_timeout: Option<bool>,
    /// Exactly-once: the next `send_ready` fails with this broker answer to a batch of the
    /// open transaction (e.g. INVALID_PRODUCER_EPOCH on a Produce).
    pub fail_batch: Option<BrokerErrorKind>,
    /// Exactly-once: the next send fails with this broker answer (the producer surfaced a
    /// failed batch of the open transaction on a send).
    pub fail_send: Option<BrokerErrorKind>,
    /// Offset fetches are refused (the member was fenced: its tasks are not assigned).
    pub refuse_fetch: bool,
    /// The group's target moves to these tasks while the next offset fetch is under way
    /// (the heartbeat thread took a new assignment meanwhile); the fetch then refuses, as
    /// the session does, partitions of tasks neither owned nor in the new target.
    pub retarget_on_fetch: Option<Vec<(i32, StreamsTaskRole)>>,
    /// Partitions whose fetched lag is unknown (no Fetch answer for them yet).
    pub lag_unknown: BTreeSet<TopicPartition>,
    /// Partitions whose records the input side does not hand out yet (not fetched: they
    /// are on the broker, so their fetched lag is above zero).
    pub withheld: BTreeSet<TopicPartition>,
    /// A second input topic: task `0_p` then reads its partition `p` too (a join's table).
    pub second_input: Option<String>,
}

/// A handle on the fake cluster.
#[derive(Clone, Default)]
pub(crate) struct Shared(Arc<Mutex<Cluster>>);

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Cluster> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn event(&self, e: impl Into<String>) {
        self.lock().events.push(e.into());
    }

    pub(crate) fn events(&self) -> Vec<String> {
        self.lock().events.clone()
    }

    /// The index of the first event starting with `prefix`.
    pub(crate) fn position(&self, prefix: &str) -> Option<usize> {
        self.events().iter().position(|e| e.starts_with(prefix))
    }

    /// Appends a record to `tp`.
    pub(crate) fn append(&self, tp: &TopicPartition, key: &str, value: Option<&[u8]>, ts: i64) {
        let r = (Some(key.as_bytes().to_vec()), value.map(<[u8]>::to_vec), ts);
        self.lock().logs.entry(tp.clone()).or_default().push(r);
    }

    pub(crate) fn log(&self, tp: &TopicPartition) -> Vec<LogRecord> {
        self.lock().logs.get(tp).cloned().unwrap_or_default()
    }

    pub(crate) fn committed(&self, tp: &TopicPartition) -> Option<i64> {
        self.lock().committed.get(tp).map(|c| c.offset)
    }
}

/// The input partition of task `0_p`.
pub(crate) fn input(p: i32) -> TopicPartition {
    TopicPartition::new(INPUT, p)
}

/// The changelog partition of task `0_p`'s store.
pub(crate) fn changelog(p: i32) -> TopicPartition {
    TopicPartition::new(format!("{APP}-{STORE}-changelog"), p)
}

/// Task `0_p`.
pub(crate) fn task(p: i32) -> StreamsTaskId {
    StreamsTaskId::new("0", p)
}

/// The group side: plans made from a target the test sets.
pub(crate) struct FakeGroup {
    shared: Shared,
    owned: BTreeMap<StreamsTaskId, StreamsTaskRole>,
    target: BTreeMap<StreamsTaskId, StreamsTaskRole>,
    lost: bool,
    news: VecDeque<GroupNews>,
    pending: Option<StreamsTaskPlan>,
}

impl FakeGroup {
    fn plan(&mut self) -> StreamsTaskPlan {
        let mut plan = StreamsTaskPlan::default();
        if std::mem::take(&mut self.lost) {
            plan.lost = std::mem::take(&mut self.owned).into_iter().collect();
        }
        for (t, r) in &self.owned {
            if self.target.get(t) != Some(r) {
                plan.revoked.push((t.clone(), *r));
            }
        }
        for (t, r) in &self.target {
            if self.owned.get(t) != Some(r) {
                plan.assigned.push((t.clone(), *r));
            }
        }
        plan
    }
}

impl GroupPort for FakeGroup {
    fn news(&mut self) -> GroupNews {
        let mut out = GroupNews::default();
        while let Some(n) = self.news.pop_front() {
            out.changed |= n.changed;
            out.group_ready = n.group_ready.or(out.group_ready);
            out.shutdown_requested |= n.shutdown_requested;
        }
        out
    }

    fn begin_reconciliation(&mut self) -> Result<StreamsTaskPlan, Error> {
        let plan = self.plan();
        self.pending = Some(plan.clone());
        Ok(plan)
    }

    fn release_revoked(&mut self) -> Result<(), Error> {
        let plan = self.pending.clone().unwrap_or_default();
        for (t, _) in &plan.revoked {
            self.owned.remove(t);
            self.shared.event(format!("release {t}"));
        }
        self.shared.event("released");
        Ok(())
    }

    fn acknowledge_assigned(&mut self) -> Result<(), Error> {
        let plan = self.pending.take().unwrap_or_default();
        for (t, r) in plan.assigned {
            self.owned.insert(t, r);
        }
        self.shared.event("acknowledged");
        Ok(())
    }

    fn skip_assigned(&mut self, task: &StreamsTaskId) {
        if let Some(plan) = self.pending.as_mut() {
            plan.assigned.retain(|(t, _)| t != task);
        }
        self.shared.event(format!("skip {task}"));
    }

    fn role_of(&self, task: &StreamsTaskId) -> Option<StreamsTaskRole> {
        self.owned.get(task).copied()
    }

    fn task_partitions(&self, task: &StreamsTaskId) -> Vec<TopicPartition> {
        let mut partitions = vec![input(task.partition)];
        if let Some(topic) = self.shared.lock().second_input.clone() {
            partitions.push(TopicPartition::new(topic, task.partition));
        }
        partitions
    }

    fn fetch_committed(
        &mut self,
        partitions: &BTreeSet<TopicPartition>,
    ) -> Result<OffsetFetchOutcome, Error> {
        let retarget = self.shared.lock().retarget_on_fetch.take();
        if let Some(tasks) = retarget {
            self.target = tasks.iter().map(|(p, r)| (task(*p), *r)).collect();
            self.news.push_back(GroupNews {
                changed: true,
                group_ready: Some(true),
                shutdown_requested: false,
            });
        }
        let held = |p: i32| self.owned.contains_key(&task(p)) || self.target.contains_key(&task(p));
        let not_assigned: Vec<TopicPartition> = partitions
            .iter()
            .filter(|tp| !held(tp.partition))
            .cloned()
            .collect();
        let c = self.shared.lock();
        if c.refuse_fetch {
            return Ok(OffsetFetchOutcome::NotAssigned {
                partitions: partitions.iter().cloned().collect(),
            });
        }
        if !not_assigned.is_empty() {
            return Ok(OffsetFetchOutcome::NotAssigned {
                partitions: not_assigned,
            });
        }
        let fetched = partitions
            .iter()
            .map(|tp| {
                let o = c.committed.get(tp).map(|o| CommittedOffset {
                    offset: o.offset,
                    leader_epoch: None,
                    metadata: o.metadata.clone().unwrap_or_default(),
                });
                (tp.clone(), o)
            })
            .collect();
        Ok(OffsetFetchOutcome::Fetched(fetched))
    }

    fn commit(
        &mut self,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
    ) -> Result<OffsetCommitOutcome, Error> {
        let mut c = self.shared.lock();
        let list: Vec<String> = offsets
            .iter()
            .map(|(tp, o)| format!("{tp}={}", o.offset))
            .collect();
        c.events.push(format!("commit {}", list.join(",")));
        c.committed
            .extend(offsets.iter().map(|(k, v)| (k.clone(), v.clone())));
        Ok(OffsetCommitOutcome::Committed {
            member_epoch: 1,
            stale_epoch_retries: 0,
            partitions: offsets.len(),
        })
    }

    fn report_task_offsets(&mut self, _offsets: StreamsTaskOffsets) -> Result<(), Error> {
        Ok(())
    }

    fn leave(&mut self) -> Result<(), Error> {
        self.shared.event("leave");
        Ok(())
    }

    fn group_metadata(&self) -> GroupMetadata {
        GroupMetadata {
            group_id: APP.into(),
            member_id: "m1".into(),
            member_epoch: MEMBER_EPOCH,
            group_instance_id: None,
        }
    }
}

/// The member epoch [`FakeGroup`] reports.
pub(crate) const MEMBER_EPOCH: i32 = 7;

/// The input side: reads the shared logs from each assigned partition's position, at most
/// the room the thread gives per partition (the rest stays in the log, as a fetched answer's
/// rest stays in the fetcher); pauses and resumes are events.
pub(crate) struct FakeInput {
    shared: Shared,
    positions: BTreeMap<TopicPartition, usize>,
    paused: BTreeSet<TopicPartition>,
}

impl InputPort for FakeInput {
    fn assign(&mut self, partitions: Vec<TopicPartition>) {
        self.positions.retain(|tp, _| partitions.contains(tp));
        self.paused.retain(|tp| partitions.contains(tp));
        for tp in partitions {
            self.positions.entry(tp).or_insert(0);
        }
    }

    fn seek(&mut self, tp: &TopicPartition, offset: Option<i64>) -> Result<(), Error> {
        let o = usize::try_from(offset.unwrap_or(0)).unwrap_or(0);
        self.positions.insert(tp.clone(), o);
        Ok(())
    }

    fn pause(&mut self, tp: &TopicPartition) {
        self.paused.insert(tp.clone());
        self.shared.event(format!("pause {tp}"));
    }

    fn resume(&mut self, tp: &TopicPartition) {
        self.paused.remove(tp);
        self.shared.event(format!("resume {tp}"));
    }

    fn fetched_lag(&self, tp: &TopicPartition) -> Option<i64> {
        let c = self.shared.lock();
        if c.lag_unknown.contains(tp) {
            return None;
        }
        let end = c.logs.get(tp).map_or(0, Vec::len);
        let pos = self.positions.get(tp).copied()?;
        Some(end.saturating_sub(pos) as i64)
    }

    fn poll(
        &mut self,
        _deadline: Instant,
        room: &dyn Fn(&TopicPartition) -> usize,
    ) -> Result<Vec<InputRecord>, Error> {
        let mut out = Vec::new();
        let withheld = self.shared.lock().withheld.clone();
        for (tp, pos) in self.positions.iter_mut() {
            if self.paused.contains(tp) || withheld.contains(tp) {
                continue;
            }
            let log = self.shared.log(tp);
            let take = room(tp);
            for (i, (key, value, ts)) in log.into_iter().enumerate().skip(*pos).take(take) {
                out.push(InputRecord::new(
                    tp.clone(),
                    i as i64,
                    ts,
                    key.as_deref(),
                    value.as_deref(),
                ));
                *pos = i + 1;
            }
        }
        Ok(out)
    }
}

/// The changelog side: restores and catch-ups read the shared logs.
pub(crate) struct FakeChangelogs {
    shared: Shared,
}

impl FakeChangelogs {
    fn read(&self, tp: &TopicPartition, store: &mut dyn StateStore) -> (u64, i64, i64) {
        let log = self.shared.log(tp);
        let start = store.changelog_offset().map_or(0, |o| o + 1);
        let mut n = 0;
        for (i, (key, value, ts)) in log.iter().enumerate().skip(start as usize) {
            if let Some(key) = key {
                store.apply_changelog(i as i64, key, value.as_deref(), *ts);
                n += 1;
            }
        }
        (n, start, log.len() as i64)
    }
}

impl ChangelogPort for FakeChangelogs {
    fn restore(
        &mut self,
        changelog: &TopicPartition,
        store: &mut dyn StateStore,
        _deadline: Instant,
    ) -> Result<RestoreSummary, Error> {
        let (records, start, end) = self.read(changelog, store);
        self.shared
            .event(format!("restore {changelog} from {start}"));
        Ok(RestoreSummary {
            records,
            start,
            end,
        })
    }

    fn catch_up(
        &mut self,
        stores: &mut [(&TopicPartition, &mut dyn StateStore)],
        _deadline: Instant,
    ) -> Result<u64, Error> {
        let mut n = 0;
        for (tp, store) in stores.iter_mut() {
            n += self.read(tp, &mut **store).0;
        }
        Ok(n)
    }

    fn end_offset(&mut self, changelog: &TopicPartition, _deadline: Instant) -> Result<i64, Error> {
        Ok(self.shared.log(changelog).len() as i64)
    }

    fn known_end_offset(&self, changelog: &TopicPartition) -> Option<i64> {
        Some(self.shared.log(changelog).len() as i64)
    }
}

/// The produce side: records wait in the producer until a flush (or `send_ready`). With
/// `eos`, a transactional producer whose logs are what `read_committed` readers see: sent
/// records and offsets reach them only when the transaction commits; an abort or a reset
/// drops them.
pub(crate) struct FakeProducer {
    shared: Shared,
    queued: Vec<ProducerRecord>,
    eos: bool,
    /// Exactly-once: a transaction is open.
    open: bool,
}

impl FakeProducer {
    fn deliver(&mut self) {
        let mut c = self.shared.lock();
        for r in self.queued.drain(..) {
            let tp = TopicPartition::new(r.topic, r.partition.unwrap_or(0));
            let rec = (r.key, r.value, r.timestamp.unwrap_or(0));
            c.logs.entry(tp).or_default().push(rec);
        }
    }
}

impl ProducePort for FakeProducer {
    fn send(&mut self, record: ProducerRecord) -> Result<i32, Error> {
        if self.eos && !std::mem::replace(&mut self.open, true) {
            self.shared.event("txn begin");
        }
        let fail_send = self.shared.lock().fail_send.take();
        if let Some(kind) = fail_send {
            self.shared.event(format!("txn send failed {kind:?}"));
            return Err(Error::broker(
                kind.code(),
                None,
                crate::error::BrokerErrorContext::api("Produce"),
            ));
        }
        let p = record.partition.unwrap_or(0);
        self.queued.push(record);
        Ok(p)
    }

    fn send_ready(&mut self, _deadline: Instant) -> Result<(), Error> {
        let fail = self.shared.lock().fail_batch.take();
        match fail {
            Some(kind) if self.open => {
                self.shared.event(format!("txn batch failed {kind:?}"));
                Err(Error::broker(
                    kind.code(),
                    None,
                    crate::error::BrokerErrorContext::api("Produce"),
                ))
            }
            _ => Ok(()),
        }
    }

    fn flush(&mut self, _deadline: Instant) -> Result<(), Error> {
        let n = self.queued.len();
        if !self.eos {
            self.deliver();
        }
        self.shared.event(format!("flush ({n} records)"));
        Ok(())
    }

    fn transactions(&mut self) -> Option<&mut dyn TransactionPort> {
        match self.eos {
            true => Some(self),
            false => None,
        }
    }
}

impl TransactionPort for FakeProducer {
    fn in_transaction(&self) -> bool {
        self.open
    }

    fn commit(
        &mut self,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
        group: &GroupMetadata,
    ) -> Result<(), TransactionError> {
        let list: Vec<String> = offsets
            .iter()
            .map(|(tp, o)| format!("{tp}={}", o.offset))
            .collect();
        self.shared.event(format!(
            "txn offsets {} epoch {}",
            list.join(","),
            group.member_epoch
        ));
        let fail = self.shared.lock().fail_commit.take();
        if let Some((class, kind)) = fail {
            self.shared.event(format!("txn commit failed {kind:?}"));
            return Err(TxnError::new(class, "EndTxn", kind).into());
        }
        let timeout = self.shared.lock().commit_timeout.take();
        if timeout == Some(false) {
            self.shared.event("txn commit timed out (not committed)");
            return Err(TransactionError::Other(txn_timeout()));
        }
        let n = self.queued.len();
        self.deliver();
        let mut c = self.shared.lock();
        for (tp, o) in offsets {
            c.committed.insert(tp.clone(), o.clone());
        }
        if timeout == Some(true) {
            // Committed at the coordinator; the producer does not know it.
            c.events
                .push(format!("txn commit timed out (committed, {n} records)"));
            return Err(TransactionError::Other(txn_timeout()));
        }
        c.events.push(format!("txn commit ({n} records)"));
        self.open = false;
        Ok(())
    }

    fn abort(&mut self) -> Result<(), TransactionError> {
        if std::mem::take(&mut self.open) {
            let n = self.queued.len();
            self.queued.clear();
            self.shared
                .event(format!("txn abort ({n} records dropped)"));
        }
        Ok(())
    }

    fn reset(&mut self) -> Result<(), Error> {
        let n = self.queued.len();
        self.queued.clear();
        self.open = false;
        self.shared
            .event(format!("txn reset ({n} records dropped)"));
        Ok(())
    }
}

fn txn_timeout() -> Error {
    Error::Timeout {
        operation: "commit_transaction".into(),
        limit: Duration::from_secs(60),
    }
}

struct FakePurger;

impl PurgePort for FakePurger {
    fn purge(&mut self, _offsets: &BTreeMap<TopicPartition, i64>) {}
}

/// The manual clock: `sleep` moves it.
pub(crate) struct ManualClock(Shared);

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.0.lock().now.unwrap_or_else(Instant::now)
    }

    fn sleep(&mut self, d: Duration) {
        let mut c = self.0.lock();
        let now = c.now.unwrap_or_else(Instant::now);
        c.now = Some(now + d);
    }
}

/// Counts the records of each key in [`STORE`] (8-byte big-endian) and sends the new
/// count to [`OUTPUT`]; a record whose value is `boom` fails. Every call is an event.
pub(crate) struct Counter {
    pub shared: Shared,
    pub task: StreamsTaskId,
}

impl Processor for Counter {
    fn init(&mut self, ctx: &mut TaskContext<'_>) -> Result<(), Error> {
        let keys = ctx.store(STORE)?.len();
        self.shared
            .event(format!("init {} ({keys} keys)", self.task));
        Ok(())
    }

    fn close(&mut self) {
        self.shared.event(format!("close {}", self.task));
    }

    fn process(&mut self, ctx: &mut TaskContext<'_>, record: &InputRecord) -> Result<(), Error> {
        let task = ctx.task().clone();
        self.shared
            .event(format!("process {task} {}", record.offset));
        if record.value.as_deref() == Some(b"boom") {
            return Err(Error::InvalidConfiguration {
                field: "test",
                reason: format!("boom at offset {}", record.offset),
            });
        }
        let key = record.key.clone().unwrap_or_default();
        let store = ctx.store(STORE)?;
        let n = store
            .get(&key)
            .and_then(|v| v.try_into().ok())
            .map_or(0, i64::from_be_bytes)
            + 1;
        store.put(&key, Some(&n.to_be_bytes()), record.timestamp);
        ctx.send(
            OUTPUT,
            Some(&key),
            Some(&n.to_be_bytes()),
            record.timestamp,
            &[],
        )?;
        Ok(())
    }
}

/// A stream thread over the fake cluster, with [`Counter`] processors.
pub(crate) struct Harness {
    pub shared: Shared,
    pub thread: StreamThread<FakeGroup>,
}

impl Harness {
    /// A harness whose thread commits every `commit_interval` of the manual clock.
    pub(crate) fn new(commit_interval: Duration) -> Self {
        let shared = Shared::default();
        shared.lock().now = Some(Instant::now());
        let s = shared.clone();
        let factory = Box::new(
            move |t: &StreamsTaskId| -> Result<Box<dyn Processor>, Error> {
                Ok(Box::new(Counter {
                    shared: s.clone(),
                    task: t.clone(),
                }))
            },
        );
        Self::with_factory(shared, factory, commit_interval)
    }

    /// A harness under exactly-once: its producer is transactional ([`FakeProducer`]).
    pub(crate) fn new_eos(shared: Shared, commit_interval: Duration) -> Self {
        shared.lock().now.get_or_insert_with(Instant::now);
        let s = shared.clone();
        let factory = Box::new(
            move |t: &StreamsTaskId| -> Result<Box<dyn Processor>, Error> {
                Ok(Box::new(Counter {
                    shared: s.clone(),
                    task: t.clone(),
                }))
            },
        );
        Self::build(shared, factory, commit_interval, true)
    }

    /// A harness with processors from `factory`.
    pub(crate) fn with_factory(
        shared: Shared,
        factory: super::app::ProcessorFactory,
        commit_interval: Duration,
    ) -> Self {
        Self::build(shared, factory, commit_interval, false)
    }

    fn build(
        shared: Shared,
        factory: super::app::ProcessorFactory,
        commit_interval: Duration,
        eos: bool,
    ) -> Self {
        let group = FakeGroup {
            shared: shared.clone(),
            owned: BTreeMap::new(),
            target: BTreeMap::new(),
            lost: false,
            news: VecDeque::new(),
            pending: None,
        };
        let declared = BTreeMap::from([(
            "0".to_string(),
            vec![(STORE.to_string(), StoreFormat::TimestampedKeyValue)],
        )]);
        let thread = StreamThread::new(
            group,
            Box::new(FakeInput {
                shared: shared.clone(),
                positions: BTreeMap::new(),
                paused: BTreeSet::new(),
            }),
            TaskManager::new(factory, BTreeSet::new()),
            StateManager::new(
                APP,
                declared,
                Box::new(FakeChangelogs {
                    shared: shared.clone(),
                }),
            ),
            RecordCollector::new(Box::new(FakeProducer {
                shared: shared.clone(),
                queued: Vec::new(),
                eos,
                open: false,
            })),
            Box::new(FakePurger),
            Box::new(ManualClock(shared.clone())),
            Cadence {
                poll_wait: Duration::from_millis(100),
                commit_interval,
                purge_interval: Duration::from_secs(3600),
                max_buffered: super::config::DEFAULT_BUFFERED_RECORDS,
            },
        );
        Harness { shared, thread }
    }

    /// The group's next target: these tasks in these roles (the group is ready).
    pub(crate) fn assign(&mut self, tasks: &[(i32, StreamsTaskRole)]) {
        let g = &mut self.thread.group;
        g.target = tasks.iter().map(|(p, r)| (task(*p), *r)).collect();
        g.news.push_back(GroupNews {
            changed: true,
            group_ready: Some(true),
            shutdown_requested: false,
        });
    }

    /// The member is fenced: every owned task is lost, and the group's target is `tasks`.
    pub(crate) fn lose_all(&mut self, tasks: &[(i32, StreamsTaskRole)]) {
        self.assign(tasks);
        self.thread.group.lost = true;
    }

    /// One iteration, which must succeed.
    pub(crate) fn step(&mut self) {
        if let Err(e) = self.thread.run_once() {
            panic!("iteration failed: {e}");
        }
    }

    /// The store of task `0_p` held as active.
    pub(crate) fn active_store(&self, p: i32) -> Option<&KeyValueStore> {
        let s = self.thread.tasks.active.get(&task(p))?.stores.get(STORE)?;
        s.store.as_any().downcast_ref()
    }
}
