//! Offset commits, committed-offset fetches and the two-phase task handover, on the session
//! and on the handle.
//!
//! The safe order, as Kafka Streams does it (`streams-data-path.md` §1.5):
//!
//! ```no_run
//! # use std::collections::BTreeMap;
//! # use std::time::Duration;
//! # use kafka_streams_group::{StreamsGroupConfig, StreamsGroupSession, StreamsTaskRuntime,
//! #     StreamsTopology, Subtopology};
//! # use kafka_streams_group::streams::commit::{CommitOffset, OffsetFetchOutcome};
//! # let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("in"));
//! # let config = StreamsGroupConfig::new("127.0.0.1:9092", "app", topology);
//! let handle = StreamsGroupSession::join(config)?.spawn_heartbeat_thread()?;
//! let mut runtime = StreamsTaskRuntime::new();
//! let mut changes = handle.subscribe_assignment();
//! while changes.recv_timeout(Duration::from_secs(30)).is_ok() {
//!     let step = handle.begin_reconciliation(&mut runtime)?;
//!     // 1. Lost tasks (fencing, session expiry): drop them, do NOT commit.
//!     // 2. Revoked tasks: stop processing, then commit what was processed.
//!     for (task, _role) in &step.plan().revoked {
//!         let offsets: BTreeMap<_, _> = handle
//!             .task_partitions(task)
//!             .into_iter()
//!             .map(|tp| (tp, CommitOffset::new(0 /* next offset to process */)))
//!             .collect();
//!         let _ = handle.commit_offsets(&offsets, Duration::from_secs(10))?;
//!     }
//!     // 3. Only now report them released: the broker may give them to another member.
//!     handle.release_revoked(&mut runtime, &step)?;
//!     // 4. Take the new tasks: resume from their committed offsets.
//!     for (task, _role) in &step.plan().assigned {
//!         let partitions = handle.task_partitions(task).into_iter().collect();
//!         if let OffsetFetchOutcome::Fetched(committed) =
//!             handle.fetch_committed_offsets(&partitions, Duration::from_secs(10))?
//!         {
//!             println!("{task}: resume at {committed:?}");
//!         }
//!     }
//!     // 5. Acknowledge them.
//!     handle.acknowledge_assigned(&mut runtime, &step)?;
//! }
//! # Ok::<(), kafka_streams_group::Error>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::streams::commit::{
    task_partitions, CommitOffset, OffsetCommitOutcome, OffsetFetchOutcome, TopicPartition,
};
use crate::streams::{
    MembershipCommand, StreamsTaskAssignment, StreamsTaskId, StreamsTaskPlan, StreamsTaskRuntime,
};

use super::commit::MemberView;
use super::direct::StreamsGroupSession;
use super::driver::Driver;
use super::handle::StreamsGroupSessionHandle;

/// One reconciliation in progress: the plan, and when it began (for the rebalance timeout).
///
/// Made by `begin_reconciliation`, finished by `release_revoked` and `acknowledge_assigned`
/// (on [`StreamsGroupSessionHandle`] or [`StreamsGroupSession`]).
#[derive(Clone, Debug)]
pub struct StreamsReconciliation {
    plan: StreamsTaskPlan,
    started: Instant,
    rebalance_timeout: Duration,
}

impl StreamsReconciliation {
    /// What to drop, stop and start.
    pub fn plan(&self) -> &StreamsTaskPlan {
        &self.plan
    }

    /// When the broker stops waiting for the revoked tasks: past this instant it removes the
    /// member from the group (its tasks go to other members and it must rejoin). The broker
    /// started counting when it sent the new assignment, a little before this plan was made.
    pub fn rebalance_deadline(&self) -> Instant {
        self.started + self.rebalance_timeout
    }

    /// Leaves `task` out of the tasks this step starts: it is not acknowledged, so the member
    /// never reports owning it. For a task the group moved away while the application was
    /// starting it: [`fetch_committed_offsets`](StreamsGroupSessionHandle::fetch_committed_offsets)
    /// answers [`NotAssigned`](crate::streams::commit::OffsetFetchOutcome::NotAssigned) for
    /// its partitions (the newest target no longer holds it, and the broker may already have
    /// handed it to another member). The next reconciliation plans from the owned tasks
    /// without it. Returns whether the plan assigned `task`.
    pub fn skip_assigned(&mut self, task: &crate::streams::StreamsTaskId) -> bool {
        let before = self.plan.assigned.len();
        self.plan.assigned.retain(|(t, _)| t != task);
        self.plan.assigned.len() != before
    }
}

/// Where the member's state lives: the heartbeat thread's shared snapshot, or the session.
trait Member {
    fn tasks_lost(&self) -> u64;
    fn target(&self) -> StreamsTaskAssignment;
    fn report(&mut self, owned: StreamsTaskAssignment) -> Result<(), Error>;
    fn rebalance_timeout(&self) -> Duration;
}

fn begin(m: &dyn Member, runtime: &mut StreamsTaskRuntime) -> Result<StreamsReconciliation, Error> {
    let started = Instant::now();
    let lost_count = m.tasks_lost();
    let mut lost = Vec::new();
    if lost_count != runtime.lost_seen {
        runtime.lost_seen = lost_count;
        lost = runtime
            .clear()
            .into_iter()
            .filter_map(|t| match t {
                crate::streams::StreamsTaskTransition::Removed { task, role } => Some((task, role)),
                _ => None,
            })
            .collect();
        if !lost.is_empty() {
            log::warn!(
                "{} task(s) were lost (fenced or session expired): drop them without committing",
                lost.len()
            );
        }
    }
    let mut plan = runtime
        .plan(&m.target())
        .map_err(crate::streams::MembershipError::InvalidOwnedTasks)?;
    plan.lost = lost;
    Ok(StreamsReconciliation {
        plan,
        started,
        rebalance_timeout: m.rebalance_timeout(),
    })
}

fn release(
    m: &mut dyn Member,
    runtime: &mut StreamsTaskRuntime,
    step: &StreamsReconciliation,
) -> Result<(), Error> {
    if step.plan.revoked.is_empty() {
        return Ok(());
    }
    runtime.release_revoked(&step.plan);
    m.report(runtime.owned_assignment())?;
    let took = step.started.elapsed();
    if took > step.rebalance_timeout {
        log::warn!(
            "releasing {} revoked task(s) took {took:?}, longer than the rebalance timeout \
             {:?}: the broker has removed this member from the group and given its tasks to \
             others; expect them lost and a rejoin",
            step.plan.revoked.len(),
            step.rebalance_timeout
        );
        return Err(Error::Timeout {
            operation: format!(
                "releasing revoked tasks (took {took:?}; the broker removes a member that does \
                 not release them within the rebalance timeout, so its tasks are lost; stop \
                 tasks faster or raise rebalance_timeout_ms)"
            ),
            limit: step.rebalance_timeout,
        });
    }
    Ok(())
}

fn acknowledge(
    m: &mut dyn Member,
    runtime: &mut StreamsTaskRuntime,
    step: &StreamsReconciliation,
) -> Result<(), Error> {
    runtime.take_assigned(&step.plan);
    m.report(runtime.owned_assignment())
}

// ---- the handle ----

struct HandleMember<'a>(&'a StreamsGroupSessionHandle);

impl Member for HandleMember<'_> {
    fn tasks_lost(&self) -> u64 {
        self.0.shared_state().tasks_lost()
    }
    fn target(&self) -> StreamsTaskAssignment {
        self.0.shared_state().snapshot().tasks.clone()
    }
    fn report(&mut self, owned: StreamsTaskAssignment) -> Result<(), Error> {
        self.0.set_task_state(owned)
    }
    fn rebalance_timeout(&self) -> Duration {
        self.0.rebalance_timeout
    }
}

impl MemberView for HandleMember<'_> {
    fn identity(&self) -> (String, i32) {
        let s = self.0.shared_state();
        (s.member_id(), s.member_epoch())
    }
    fn owned(&self) -> StreamsTaskAssignment {
        StreamsTaskAssignment::clone(&self.0.shared_state().owned())
    }
    fn target(&self) -> StreamsTaskAssignment {
        Member::target(self)
    }
    fn await_new_epoch(&mut self, stale: i32, deadline: Instant) -> Result<(), Error> {
        let shared = self.0.shared_state();
        if shared.member_epoch() != stale {
            return Ok(());
        }
        // Ask for a heartbeat now: its answer carries the broker's current epoch.
        if let Err(e) = self.0.heartbeat_now() {
            log::debug!("heartbeat for a new member epoch failed: {e}");
        }
        shared.await_epoch_change(stale, deadline.min(Instant::now() + Duration::from_secs(1)));
        Ok(())
    }
}

impl StreamsGroupSessionHandle {
    /// The input partitions of `task` (partition `task.partition` of every source and
    /// repartition source topic of its subtopology): the partitions to commit for it.
    pub fn task_partitions(&self, task: &StreamsTaskId) -> Vec<TopicPartition> {
        task_partitions(self.offsets.lock().topology(), task)
    }

    /// Commits `offsets` (the next offset to process, per partition) with the member's id and
    /// current epoch, blocking until the coordinator answered or `timeout` passed.
    ///
    /// Every partition must belong to an active task the member owns (last reported with
    /// [`set_task_state`](Self::set_task_state), including revoked tasks not yet released);
    /// otherwise nothing is sent and [`OffsetCommitOutcome::NotOwned`] is returned. A commit
    /// answered STALE_MEMBER_EPOCH is resent once the heartbeat brought the new epoch.
    /// Transport failures and coordinator moves are retried until `timeout`.
    pub fn commit_offsets(
        &self,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
        timeout: Duration,
    ) -> Result<OffsetCommitOutcome, Error> {
        self.offsets
            .lock()
            .commit(&mut HandleMember(self), offsets, timeout)
    }

    /// [`commit_offsets`](Self::commit_offsets) whose first attempt carries `member_epoch`
    /// instead of the current epoch: reproduces a commit that raced an epoch bump (tests).
    #[doc(hidden)]
    pub fn commit_offsets_with_epoch(
        &self,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
        member_epoch: i32,
        timeout: Duration,
    ) -> Result<OffsetCommitOutcome, Error> {
        self.offsets.lock().commit_with_epoch(
            &mut HandleMember(self),
            offsets,
            timeout,
            Some(member_epoch),
        )
    }

    /// Fetches the committed offsets of `partitions`, which must belong to active tasks the
    /// member is assigned or owns (else [`OffsetFetchOutcome::NotAssigned`], nothing sent).
    /// Sent with the member id and epoch and `RequireStable`, like Kafka Streams.
    pub fn fetch_committed_offsets(
        &self,
        partitions: &BTreeSet<TopicPartition>,
        timeout: Duration,
    ) -> Result<OffsetFetchOutcome, Error> {
        self.offsets
            .lock()
            .fetch(&mut HandleMember(self), partitions, timeout)
    }

    /// Starts a reconciliation towards the current target: lost tasks (already dropped from
    /// `runtime`), tasks to stop and tasks to start. Nothing is reported to the broker yet.
    /// See the [module docs](crate::session::offsets) for the order.
    pub fn begin_reconciliation(
        &self,
        runtime: &mut StreamsTaskRuntime,
    ) -> Result<StreamsReconciliation, Error> {
        begin(&HandleMember(self), runtime)
    }

    /// Reports the plan's revoked tasks released (the application stopped them and committed
    /// their offsets); the broker may hand them to other members from now on. Fails with
    /// [`Error::Timeout`] (after reporting) if this came later than the rebalance timeout.
    pub fn release_revoked(
        &self,
        runtime: &mut StreamsTaskRuntime,
        step: &StreamsReconciliation,
    ) -> Result<(), Error> {
        release(&mut HandleMember(self), runtime, step)
    }

    /// Reports the plan's assigned tasks taken (acknowledges the assignment).
    pub fn acknowledge_assigned(
        &self,
        runtime: &mut StreamsTaskRuntime,
        step: &StreamsReconciliation,
    ) -> Result<(), Error> {
        acknowledge(&mut HandleMember(self), runtime, step)
    }
}

// ---- the session ----

struct SessionMember<'a> {
    driver: &'a mut Driver,
    rebalance_timeout: Duration,
}

impl Member for SessionMember<'_> {
    fn tasks_lost(&self) -> u64 {
        self.driver.shared().tasks_lost()
    }
    fn target(&self) -> StreamsTaskAssignment {
        self.driver.membership.assignment().tasks.clone()
    }
    fn report(&mut self, owned: StreamsTaskAssignment) -> Result<(), Error> {
        self.driver
            .command(Instant::now(), MembershipCommand::TasksReconciled(owned))
    }
    fn rebalance_timeout(&self) -> Duration {
        self.rebalance_timeout
    }
}

impl MemberView for SessionMember<'_> {
    fn identity(&self) -> (String, i32) {
        (
            self.driver.membership.member_id().to_string(),
            self.driver.membership.member_epoch(),
        )
    }
    fn owned(&self) -> StreamsTaskAssignment {
        self.driver.membership.owned_tasks().clone()
    }
    fn target(&self) -> StreamsTaskAssignment {
        Member::target(self)
    }
    fn await_new_epoch(&mut self, stale: i32, deadline: Instant) -> Result<(), Error> {
        if self.driver.membership.member_epoch() != stale {
            return Ok(());
        }
        // The session heartbeats only when called: send one now and wait for its answer.
        self.driver
            .command(Instant::now(), MembershipCommand::HeartbeatNow)?;
        loop {
            let now = Instant::now();
            if self.driver.poll(now).is_some() || now >= deadline {
                return Ok(());
            }
            if let Some(f) = self.driver.failure() {
                return Err(Error::from_shared(f));
            }
            let due = self.driver.next_wakeup().unwrap_or(deadline).min(deadline);
            std::thread::sleep(due.saturating_duration_since(now));
        }
    }
}

impl StreamsGroupSession {
    fn member(&mut self) -> SessionMember<'_> {
        SessionMember {
            driver: &mut self.driver,
            rebalance_timeout: self.config.get_rebalance_timeout(),
        }
    }

    /// The input partitions of `task`; see [`StreamsGroupSessionHandle::task_partitions`].
    pub fn task_partitions(&self, task: &StreamsTaskId) -> Vec<TopicPartition> {
        task_partitions(self.config.topology(), task)
    }

    /// Commits offsets; see [`StreamsGroupSessionHandle::commit_offsets`]. A STALE_MEMBER_EPOCH
    /// answer makes this session send a heartbeat (which brings the new epoch) and resend.
    pub fn commit_offsets(
        &mut self,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
        timeout: Duration,
    ) -> Result<OffsetCommitOutcome, Error> {
        let rebalance_timeout = self.config.get_rebalance_timeout();
        let mut member = SessionMember {
            driver: &mut self.driver,
            rebalance_timeout,
        };
        self.offsets.commit(&mut member, offsets, timeout)
    }

    /// Fetches committed offsets; see [`StreamsGroupSessionHandle::fetch_committed_offsets`].
    pub fn fetch_committed_offsets(
        &mut self,
        partitions: &BTreeSet<TopicPartition>,
        timeout: Duration,
    ) -> Result<OffsetFetchOutcome, Error> {
        let rebalance_timeout = self.config.get_rebalance_timeout();
        let mut member = SessionMember {
            driver: &mut self.driver,
            rebalance_timeout,
        };
        self.offsets.fetch(&mut member, partitions, timeout)
    }

    /// See [`StreamsGroupSessionHandle::begin_reconciliation`].
    pub fn begin_reconciliation(
        &mut self,
        runtime: &mut StreamsTaskRuntime,
    ) -> Result<StreamsReconciliation, Error> {
        begin(&self.member(), runtime)
    }

    /// See [`StreamsGroupSessionHandle::release_revoked`].
    pub fn release_revoked(
        &mut self,
        runtime: &mut StreamsTaskRuntime,
        step: &StreamsReconciliation,
    ) -> Result<(), Error> {
        release(&mut self.member(), runtime, step)
    }

    /// See [`StreamsGroupSessionHandle::acknowledge_assigned`].
    pub fn acknowledge_assigned(
        &mut self,
        runtime: &mut StreamsTaskRuntime,
        step: &StreamsReconciliation,
    ) -> Result<(), Error> {
        acknowledge(&mut self.member(), runtime, step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::StreamsTaskRole;

    /// A member whose reports are recorded, with a settable target and lost count.
    struct Fake {
        target: StreamsTaskAssignment,
        lost: u64,
        reports: Vec<StreamsTaskAssignment>,
        timeout: Duration,
    }

    impl Member for Fake {
        fn tasks_lost(&self) -> u64 {
            self.lost
        }
        fn target(&self) -> StreamsTaskAssignment {
            self.target.clone()
        }
        fn report(&mut self, owned: StreamsTaskAssignment) -> Result<(), Error> {
            self.reports.push(owned);
            Ok(())
        }
        fn rebalance_timeout(&self) -> Duration {
            self.timeout
        }
    }

    fn active(ps: &[i32]) -> StreamsTaskAssignment {
        StreamsTaskAssignment::from_tasks(
            ps.iter()
                .map(|&p| (StreamsTaskId::new("0", p), StreamsTaskRole::Active)),
        )
        .unwrap()
    }

    #[test]
    fn revoked_are_reported_only_at_release_and_assigned_only_at_acknowledge() {
        let mut m = Fake {
            target: active(&[0, 1]),
            lost: 0,
            reports: Vec::new(),
            timeout: Duration::from_secs(60),
        };
        let mut rt = StreamsTaskRuntime::new();
        let step = begin(&m, &mut rt).unwrap();
        release(&mut m, &mut rt, &step).unwrap();
        assert!(
            m.reports.is_empty(),
            "nothing revoked: nothing to report yet"
        );
        acknowledge(&mut m, &mut rt, &step).unwrap();
        assert_eq!(m.reports.last(), Some(&active(&[0, 1])));

        m.target = active(&[1, 2]);
        let step = begin(&m, &mut rt).unwrap();
        assert_eq!(m.reports.len(), 1, "planning reports nothing");
        assert_eq!(rt.tasks(), &active(&[0, 1]), "revoked task still owned");
        release(&mut m, &mut rt, &step).unwrap();
        assert_eq!(
            m.reports.last(),
            Some(&active(&[1])),
            "released, 2 not yet taken"
        );
        acknowledge(&mut m, &mut rt, &step).unwrap();
        assert_eq!(m.reports.last(), Some(&active(&[1, 2])));
    }

    #[test]
    fn a_skipped_task_is_not_acknowledged_and_the_next_plan_ignores_it() {
        let mut m = Fake {
            target: active(&[0, 1]),
            lost: 0,
            reports: Vec::new(),
            timeout: Duration::from_secs(60),
        };
        let mut rt = StreamsTaskRuntime::new();
        let mut step = begin(&m, &mut rt).unwrap();
        // The target moves task 0 away while the application starts the plan's tasks.
        m.target = active(&[1]);
        assert!(step.skip_assigned(&StreamsTaskId::new("0", 0)));
        assert!(
            !step.skip_assigned(&StreamsTaskId::new("0", 7)),
            "not planned"
        );
        acknowledge(&mut m, &mut rt, &step).unwrap();
        assert_eq!(m.reports.last(), Some(&active(&[1])));
        assert!(begin(&m, &mut rt).unwrap().plan().is_empty());
    }

    #[test]
    fn lost_tasks_are_lost_not_revoked() {
        let mut m = Fake {
            target: active(&[0, 1]),
            lost: 0,
            reports: Vec::new(),
            timeout: Duration::from_secs(60),
        };
        let mut rt = StreamsTaskRuntime::new();
        let step = begin(&m, &mut rt).unwrap();
        acknowledge(&mut m, &mut rt, &step).unwrap();
        // Fenced: the session counted a loss and the target is empty until the rejoin.
        m.lost = 1;
        m.target = StreamsTaskAssignment::new();
        let step = begin(&m, &mut rt).unwrap();
        assert_eq!(step.plan().lost.len(), 2);
        assert!(
            step.plan().revoked.is_empty(),
            "lost tasks must not be revoked"
        );
        assert!(rt.is_empty());
        // Seen once only.
        assert!(begin(&m, &mut rt).unwrap().plan().lost.is_empty());
    }

    #[test]
    fn a_release_after_the_rebalance_timeout_is_reported_and_still_sent() {
        let mut m = Fake {
            target: active(&[0]),
            lost: 0,
            reports: Vec::new(),
            timeout: Duration::from_millis(20),
        };
        let mut rt = StreamsTaskRuntime::new();
        let step = begin(&m, &mut rt).unwrap();
        acknowledge(&mut m, &mut rt, &step).unwrap();
        m.target = StreamsTaskAssignment::new();
        let step = begin(&m, &mut rt).unwrap();
        std::thread::sleep(Duration::from_millis(40));
        let e = release(&mut m, &mut rt, &step).unwrap_err();
        assert!(matches!(e, Error::Timeout { .. }), "{e}");
        assert!(e.to_string().contains("rebalance timeout"), "{e}");
        assert_eq!(m.reports.last(), Some(&StreamsTaskAssignment::new()));
    }
}
