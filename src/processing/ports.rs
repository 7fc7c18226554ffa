//! The edges of the processing runtime, as traits: the group side (assignment, handover,
//! commits, task offsets, leaving), the input side (fetch), the changelog side (restore and
//! standby reads), the produce side and the purge side. The stream thread, task manager,
//! state manager and record collector see only these, so they run without a broker on the
//! in-memory sides of [`testkit`](super::testkit); the real sides wrap the session handle,
//! the [`Fetcher`](crate::consumer::Fetcher) (in [`input`](super::input)), the [`ChangelogReader`], the [`Producer`] and the [`RecordPurger`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::producer::transaction::GroupMetadata;
use crate::producer::{Producer, ProducerRecord, RecordRef};
use crate::session::{AssignmentSubscriber, StreamsGroupSessionHandle, StreamsReconciliation};
use crate::streams::commit::{
    CommitOffset, OffsetCommitOutcome, OffsetFetchOutcome, TopicPartition,
};
use crate::streams::{
    StreamsTaskId, StreamsTaskOffsets, StreamsTaskPlan, StreamsTaskRole, StreamsTaskRuntime,
};

use super::eos::TransactionPort;
use super::purge::RecordPurger;
use super::task::InputRecord;
use crate::state::{ChangelogReader, RestoreSummary, StateStore};

/// How long a commit, a flush, an offset fetch or a restore may take before the runtime
/// gives up.
pub(crate) const OP_TIMEOUT: Duration = Duration::from_secs(60);

/// What the group said since the last look.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupNews {
    /// A new assignment (or readiness) arrived: reconcile.
    pub changed: bool,
    /// The group's readiness in the newest assignment, if one arrived.
    pub group_ready: Option<bool>,
    /// A member asked the whole application to shut down.
    pub shutdown_requested: bool,
}

/// The group side: membership, the two-phase handover, offsets, leaving.
pub(crate) trait GroupPort {
    /// Drains the assignment notifications.
    fn news(&mut self) -> GroupNews;
    /// Starts a reconciliation towards the newest target; the plan says what to drop, stop
    /// and start. [`release_revoked`](Self::release_revoked) and
    /// [`acknowledge_assigned`](Self::acknowledge_assigned) finish it.
    fn begin_reconciliation(&mut self) -> Result<StreamsTaskPlan, Error>;
    /// Reports the revoked tasks released: from now on another member may own them.
    fn release_revoked(&mut self) -> Result<(), Error>;
    /// Reports the assigned tasks owned.
    fn acknowledge_assigned(&mut self) -> Result<(), Error>;
    /// Leaves `task` out of the reconciliation in progress: it is not acknowledged (the
    /// group moved it away while it was starting).
    fn skip_assigned(&mut self, task: &StreamsTaskId);
    /// The role `task` is owned in now.
    fn role_of(&self, task: &StreamsTaskId) -> Option<StreamsTaskRole>;
    /// The input partitions of `task`.
    fn task_partitions(&self, task: &StreamsTaskId) -> Vec<TopicPartition>;
    /// The committed offsets of `partitions`.
    fn fetch_committed(
        &mut self,
        partitions: &BTreeSet<TopicPartition>,
    ) -> Result<OffsetFetchOutcome, Error>;
    /// Commits `offsets` (the producer was flushed before).
    fn commit(
        &mut self,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
    ) -> Result<OffsetCommitOutcome, Error>;
    /// Hands the heartbeat the task offset sums.
    fn report_task_offsets(&mut self, offsets: StreamsTaskOffsets) -> Result<(), Error>;
    /// Leaves the group (the leave heartbeat). Called once, last.
    fn leave(&mut self) -> Result<(), Error>;
    /// The group id, member id, member epoch and instance id now (what a transaction's
    /// TxnOffsetCommit carries under exactly-once, KIP-447).
    fn group_metadata(&self) -> GroupMetadata;
}

/// The input side: the active tasks' partitions.
pub(crate) trait InputPort {
    /// Fetches exactly `partitions` from now on.
    fn assign(&mut self, partitions: Vec<TopicPartition>);
    /// Positions `tp` at `offset`, or at its beginning for `None`.
    fn seek(&mut self, tp: &TopicPartition, offset: Option<i64>) -> Result<(), Error>;
    /// Stops fetching `tp` (its queue is full) until [`resume`](Self::resume).
    fn pause(&mut self, tp: &TopicPartition);
    /// Fetches `tp` again.
    fn resume(&mut self, tp: &TopicPartition);
    /// How many records of `tp` are on the broker and not handed out yet (the last Fetch
    /// answer's end minus what was handed out); `None` before a Fetch answer for `tp`.
    fn fetched_lag(&self, tp: &TopicPartition) -> Option<i64>;
    /// The records fetched, at most `room(tp)` of each partition, waiting at most until
    /// `deadline`. Records fetched beyond the room stay with the input side (not copied)
    /// for the next polls; their partition is not fetched again before.
    fn poll(
        &mut self,
        deadline: Instant,
        room: &dyn Fn(&TopicPartition) -> usize,
    ) -> Result<Vec<InputRecord>, Error>;
}

/// The changelog side: restore of active tasks' stores, standby catch-up, end offsets.
pub(crate) trait ChangelogPort {
    /// Restores `store` from `changelog` up to its current end.
    fn restore(
        &mut self,
        changelog: &TopicPartition,
        store: &mut dyn StateStore,
        deadline: Instant,
    ) -> Result<RestoreSummary, Error>;
    /// Applies what is available now to the standby stores; returns the records applied.
    fn catch_up(
        &mut self,
        stores: &mut [(&TopicPartition, &mut dyn StateStore)],
        deadline: Instant,
    ) -> Result<u64, Error>;
    /// The current end offset of `changelog`.
    fn end_offset(&mut self, changelog: &TopicPartition, deadline: Instant) -> Result<i64, Error>;
    /// The end offset of `changelog` last seen, if any.
    fn known_end_offset(&self, changelog: &TopicPartition) -> Option<i64>;
}

/// The produce side: sinks, repartition topics and changelogs.
pub(crate) trait ProducePort {
    /// Queues `record`; returns its partition.
    fn send(&mut self, record: ProducerRecord) -> Result<i32, Error>;
    /// Queues a borrowed record (the per-record path: the producer copies nothing of it but
    /// its encoding into the batch); returns its partition. By default an owned copy is sent.
    fn send_ref(&mut self, record: RecordRef<'_>) -> Result<i32, Error> {
        self.send(record.to_owned_record())
    }
    /// Sends the batches whose linger passed, waiting at most until `deadline`.
    fn send_ready(&mut self, deadline: Instant) -> Result<(), Error>;
    /// Sends everything queued and waits for every answer.
    fn flush(&mut self, deadline: Instant) -> Result<(), Error>;
    /// The transactional side under exactly-once (`None`: at-least-once).
    fn transactions(&mut self) -> Option<&mut dyn TransactionPort> {
        None
    }
}

/// The purge side: DeleteRecords of consumed repartition records (failures only logged).
pub(crate) trait PurgePort {
    /// Deletes the records before each offset.
    fn purge(&mut self, offsets: &BTreeMap<TopicPartition, i64>);
}

/// The group side over the heartbeat thread's handle.
pub(crate) struct HandleGroup {
    pub(crate) handle: Option<StreamsGroupSessionHandle>,
    changes: AssignmentSubscriber,
    tasks: StreamsTaskRuntime,
    step: Option<StreamsReconciliation>,
    /// The group id and static instance id, for [`GroupPort::group_metadata`].
    identity: (String, Option<String>),
}

impl HandleGroup {
    pub(crate) fn new(handle: StreamsGroupSessionHandle, tasks: StreamsTaskRuntime) -> Self {
        HandleGroup {
            changes: handle.subscribe_assignment(),
            handle: Some(handle),
            tasks,
            step: None,
            identity: (String::new(), None),
        }
    }

    /// Names the group and the static instance id the member joined with.
    pub(crate) fn with_identity(mut self, group_id: &str, instance_id: Option<&str>) -> Self {
        self.identity = (group_id.to_owned(), instance_id.map(str::to_owned));
        self
    }

    fn handle(&self) -> Result<&StreamsGroupSessionHandle, Error> {
        self.handle.as_ref().ok_or_else(left)
    }

    /// The handle, the task runtime and the reconciliation in progress.
    fn parts(
        &mut self,
    ) -> Result<
        (
            &StreamsGroupSessionHandle,
            &mut StreamsTaskRuntime,
            &StreamsReconciliation,
        ),
        Error,
    > {
        let handle = self.handle.as_ref().ok_or_else(left)?;
        let step = self
            .step
            .as_ref()
            .ok_or_else(|| Error::InvalidConfiguration {
                field: "processing",
                reason: "no reconciliation in progress".into(),
            })?;
        Ok((handle, &mut self.tasks, step))
    }
}

fn left() -> Error {
    Error::InvalidConfiguration {
        field: "processing",
        reason: "this runtime already left its group".into(),
    }
}

impl GroupPort for HandleGroup {
    fn news(&mut self) -> GroupNews {
        let mut news = GroupNews::default();
        while let Some(a) = self.changes.try_recv() {
            news.changed = true;
            news.group_ready = Some(a.is_group_ready);
            news.shutdown_requested |= a.shutdown_requested();
        }
        news
    }

    fn begin_reconciliation(&mut self) -> Result<StreamsTaskPlan, Error> {
        let handle = self.handle.as_ref().ok_or_else(left)?;
        let step = handle.begin_reconciliation(&mut self.tasks)?;
        let plan = step.plan().clone();
        self.step = Some(step);
        Ok(plan)
    }

    fn release_revoked(&mut self) -> Result<(), Error> {
        let (handle, tasks, step) = self.parts()?;
        handle.release_revoked(tasks, step)
    }

    fn acknowledge_assigned(&mut self) -> Result<(), Error> {
        let (handle, tasks, step) = self.parts()?;
        handle.acknowledge_assigned(tasks, step)?;
        self.step = None;
        Ok(())
    }

    fn skip_assigned(&mut self, task: &StreamsTaskId) {
        if let Some(step) = self.step.as_mut() {
            step.skip_assigned(task);
        }
    }

    fn role_of(&self, task: &StreamsTaskId) -> Option<StreamsTaskRole> {
        self.tasks.role_of(task)
    }

    fn task_partitions(&self, task: &StreamsTaskId) -> Vec<TopicPartition> {
        self.handle
            .as_ref()
            .map(|h| h.task_partitions(task))
            .unwrap_or_default()
    }

    fn fetch_committed(
        &mut self,
        partitions: &BTreeSet<TopicPartition>,
    ) -> Result<OffsetFetchOutcome, Error> {
        self.handle()?
            .fetch_committed_offsets(partitions, OP_TIMEOUT)
    }

    fn commit(
        &mut self,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
    ) -> Result<OffsetCommitOutcome, Error> {
        self.handle()?.commit_offsets(offsets, OP_TIMEOUT)
    }

    fn report_task_offsets(&mut self, offsets: StreamsTaskOffsets) -> Result<(), Error> {
        self.handle()?.report_task_offsets(offsets)
    }

    fn leave(&mut self) -> Result<(), Error> {
        match self.handle.take() {
            Some(h) => h.close(),
            None => Ok(()),
        }
    }

    fn group_metadata(&self) -> GroupMetadata {
        let (member_id, member_epoch) = match &self.handle {
            Some(h) => (h.member_id(), h.member_epoch()),
            None => (String::new(), -1),
        };
        GroupMetadata {
            group_id: self.identity.0.clone(),
            member_id,
            member_epoch,
            group_instance_id: self.identity.1.clone(),
        }
    }
}

impl ChangelogPort for ChangelogReader {
    fn restore(
        &mut self,
        changelog: &TopicPartition,
        store: &mut dyn StateStore,
        deadline: Instant,
    ) -> Result<RestoreSummary, Error> {
        ChangelogReader::restore(self, changelog, store, deadline)
    }

    fn catch_up(
        &mut self,
        stores: &mut [(&TopicPartition, &mut dyn StateStore)],
        deadline: Instant,
    ) -> Result<u64, Error> {
        ChangelogReader::catch_up(self, stores, deadline)
    }

    fn end_offset(&mut self, changelog: &TopicPartition, deadline: Instant) -> Result<i64, Error> {
        ChangelogReader::end_offset(self, changelog, deadline)
    }

    fn known_end_offset(&self, changelog: &TopicPartition) -> Option<i64> {
        ChangelogReader::known_end_offset(self, changelog)
    }
}

impl ProducePort for Producer {
    fn send(&mut self, record: ProducerRecord) -> Result<i32, Error> {
        Producer::send(self, record)
    }

    fn send_ref(&mut self, record: RecordRef<'_>) -> Result<i32, Error> {
        Producer::send_ref(self, record)
    }

    fn send_ready(&mut self, deadline: Instant) -> Result<(), Error> {
        Producer::send_ready(self, deadline).map(|_| ())
    }

    fn flush(&mut self, deadline: Instant) -> Result<(), Error> {
        Producer::flush(self, deadline)
    }
}

impl PurgePort for RecordPurger {
    fn purge(&mut self, offsets: &BTreeMap<TopicPartition, i64>) {
        log::debug!(
            "purging {} repartition partition(s): {offsets:?}",
            offsets.len()
        );
        match self.delete_records_before(offsets, Instant::now() + OP_TIMEOUT) {
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
}

/// Time as the stream thread sees it: the real clock, or a manual one in tests.
pub(crate) trait Clock {
    /// Now.
    fn now(&self) -> Instant;
    /// Waits `d` (nothing to fetch: no active task, or the group not ready).
    fn sleep(&mut self, d: Duration);
}

/// The system clock.
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&mut self, d: Duration) {
        std::thread::sleep(d);
    }
}
