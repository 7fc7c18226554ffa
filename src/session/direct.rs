//! [`StreamsGroupSession`]: the membership driver run on the caller's thread (no heartbeat thread).

use std::time::{Duration, Instant};

use crate::error::Error;
use crate::streams::{
    MemberState, MembershipCommand, StreamsGroupSessionAssignment, StreamsMembership,
    StreamsTaskAssignment, StreamsTaskOffsets, StreamsTaskRuntime, StreamsTaskTransition,
};

use super::config::StreamsGroupConfig;
use super::driver::Driver;
use super::handle::StreamsGroupSessionHandle;
use super::metrics::StreamsGroupMetrics;
use super::shared::{Shared, StreamsGroupState};

/// A Streams group member whose I/O runs on the calling thread.
///
/// Every call blocks until it is done or its deadline passes. Between calls nothing happens:
/// the caller must call [`StreamsGroupSession::heartbeat`] at least every
/// [`StreamsGroupSession::heartbeat_interval`], or hand the session to a dedicated thread
/// with [`StreamsGroupSession::spawn_heartbeat_thread`], which is what most applications want.
///
/// ```no_run
/// use kafka_streams_group::{StreamsGroupConfig, StreamsGroupSession, StreamsTopology, Subtopology};
///
/// let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("input"));
/// let config = StreamsGroupConfig::new("127.0.0.1:9092", "my-app", topology);
/// let mut session = StreamsGroupSession::join(config)?;
/// println!("member {} at epoch {}", session.member_id(), session.member_epoch());
/// let assignment = session.heartbeat()?;
/// println!("active tasks: {:?}", assignment.active().collect::<Vec<_>>());
/// session.close()?;
/// # Ok::<(), kafka_streams_group::Error>(())
/// ```
pub struct StreamsGroupSession {
    pub(crate) driver: Driver,
    pub(crate) config: StreamsGroupConfig,
    /// Offset commits and fetches, on a coordinator connection of their own.
    pub(crate) offsets: super::commit::OffsetClient,
}

impl std::fmt::Debug for StreamsGroupSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamsGroupSession")
            .field("group_id", &self.config.group_id())
            .field("member_id", &self.driver.membership.member_id())
            .field("member_epoch", &self.driver.membership.member_epoch())
            .field("state", &self.driver.membership.state())
            .finish()
    }
}

impl StreamsGroupSession {
    /// Validates `config`, finds the group coordinator and sends the joining heartbeat; blocks
    /// until the broker has accepted the member (member epoch above 0) or the join timeout
    /// passes. Retriable failures (no broker reachable yet, coordinator loading or moving) are
    /// retried with capped exponential backoff until then; fatal ones are returned at once.
    pub fn join(config: StreamsGroupConfig) -> Result<Self, Error> {
        let mut session = Self::new(config)?;
        let now = Instant::now();
        session.driver.command(now, MembershipCommand::Join)?;
        let deadline = now + session.config.get_join_timeout();
        // No lookup or heartbeat of the join outlives the join timeout.
        session.driver.set_call_deadline(Some(deadline));
        let joined = session.join_until(deadline);
        session.driver.set_call_deadline(None);
        joined.map(|()| session)
    }

    fn join_until(&mut self, deadline: Instant) -> Result<(), Error> {
        let session = self;
        loop {
            session.driver.poll(Instant::now());
            if let Err(e) = session.check_failed() {
                // A refused topology: say which field differs from the group's.
                let left = deadline.saturating_duration_since(Instant::now());
                return Err(crate::describe::explain_topology_refusal(
                    e,
                    session.config.get_client_config(),
                    session.config.group_id(),
                    session.driver.membership.topology(),
                    left.min(session.driver.request_timeout()),
                ));
            }
            if session.driver.membership.member_epoch() > 0 {
                return Ok(());
            }
            if !session.wait_until_due(deadline) {
                let last = session
                    .driver
                    .take_last_error()
                    .map(|e| format!(" (last error: {e})"))
                    .unwrap_or_default();
                return Err(Error::Timeout {
                    operation: format!("joining group {}{last}", session.config.group_id()),
                    limit: session.config.get_join_timeout(),
                });
            }
        }
    }

    /// Builds the session without any I/O.
    pub(crate) fn new(config: StreamsGroupConfig) -> Result<Self, Error> {
        let membership_config = config.build_config()?;
        let membership = StreamsMembership::new(membership_config, rand::random())?;
        let shared = Shared::new(membership.member_id().to_string());
        let driver = Driver::new(
            config.get_client_config().clone(),
            config.group_id().to_string(),
            membership,
            shared,
        );
        let offsets = super::commit::OffsetClient::new(&config);
        Ok(Self {
            driver,
            config,
            offsets,
        })
    }

    /// Sleeps until the driver has something due, or `deadline`. False if the deadline passed.
    fn wait_until_due(&self, deadline: Instant) -> bool {
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        let due = self.driver.next_wakeup().unwrap_or(deadline).min(deadline);
        if due > now {
            std::thread::sleep(due - now);
        }
        true
    }

    fn check_failed(&self) -> Result<(), Error> {
        match self.driver.failure() {
            Some(f) => Err(Error::from_shared(f)),
            None => Ok(()),
        }
    }

    /// The member id (generated once, kept across fencing and rejoin).
    pub fn member_id(&self) -> &str {
        self.driver.membership.member_id()
    }

    /// The current member epoch (0 while joining).
    pub fn member_epoch(&self) -> i32 {
        self.driver.membership.member_epoch()
    }

    /// The heartbeat interval the broker asked for.
    pub fn heartbeat_interval(&self) -> Duration {
        self.driver.membership.heartbeat_interval()
    }

    /// The cumulative assignment: the broker's target tasks, statuses and endpoints.
    pub fn assignment(&self) -> StreamsGroupSessionAssignment {
        self.driver.membership.assignment().clone()
    }

    /// The session's state.
    pub fn state(&self) -> StreamsGroupState {
        self.driver.shared().state()
    }

    /// Member-level metrics.
    pub fn metrics(&self) -> StreamsGroupMetrics {
        self.driver.member_metrics.snapshot()
    }

    /// Reports the tasks the application owns now; the next heartbeat carries them (it is
    /// sent promptly). No I/O happens here.
    pub fn set_task_state(&mut self, owned: StreamsTaskAssignment) -> Result<(), Error> {
        self.check_failed()?;
        self.driver
            .command(Instant::now(), MembershipCommand::TasksReconciled(owned))
    }

    /// Like [`StreamsGroupSession::set_task_state`], and also reports the tasks' offset sums
    /// (`offsets`), which Kafka 4.4+ brokers use to place and promote warm-up tasks. Brokers
    /// that do not accept offsets (4.2, 4.3) never receive them; the call still succeeds.
    pub fn set_task_state_with_optional_offsets(
        &mut self,
        owned: StreamsTaskAssignment,
        offsets: Option<StreamsTaskOffsets>,
    ) -> Result<(), Error> {
        self.set_task_state(owned)?;
        match offsets {
            Some(o) => self
                .driver
                .command(Instant::now(), MembershipCommand::ReportTaskOffsets(o)),
            None => Ok(()),
        }
    }

    /// Brings `runtime` to the current target assignment and reports the result as the owned
    /// tasks of the next heartbeat, in one call. Returns the transitions the application must
    /// carry out (stop removed tasks, start added ones). Revoked tasks are reported released
    /// before the application stopped them: for members that process records, use the
    /// two-phase [`begin_reconciliation`](Self::begin_reconciliation) instead.
    pub fn reconcile_task_runtime(
        &mut self,
        runtime: &mut StreamsTaskRuntime,
    ) -> Result<Vec<StreamsTaskTransition>, Error> {
        let target = self.driver.membership.assignment().tasks.clone();
        let transitions = runtime
            .reconcile(&target)
            .map_err(crate::streams::MembershipError::InvalidOwnedTasks)?;
        self.set_task_state(runtime.owned_assignment())?;
        Ok(transitions)
    }

    /// Asks every member of the application to shut down (KIP-1071 `ShutdownApplication`);
    /// sent with the next heartbeat and on every one after it.
    pub fn request_application_shutdown(&mut self) -> Result<(), Error> {
        self.driver.command(
            Instant::now(),
            MembershipCommand::RequestShutdownApplication,
        )
    }

    /// Sends a heartbeat now (or as soon as the backoff allows) and blocks until the broker
    /// answered it. Retriable failures are retried up to
    /// [`StreamsGroupConfig::max_retries`] times, rejoining after fencing; the assignment
    /// after the last successful answer is returned.
    pub fn heartbeat(&mut self) -> Result<StreamsGroupSessionAssignment, Error> {
        self.check_failed()?;
        let attempts = self.config.get_max_retries().max(1);
        let limit = (self.driver.request_timeout() + Duration::from_secs(1)) * attempts;
        let deadline = Instant::now() + limit;
        self.driver
            .command(Instant::now(), MembershipCommand::HeartbeatNow)?;
        self.driver.set_call_deadline(Some(deadline));
        let answered = self.heartbeat_until(deadline, attempts, limit);
        self.driver.set_call_deadline(None);
        answered
    }

    fn heartbeat_until(
        &mut self,
        deadline: Instant,
        attempts: u32,
        limit: Duration,
    ) -> Result<StreamsGroupSessionAssignment, Error> {
        let mut last_error = None;
        let mut tries = 0;
        while tries < attempts {
            match self.driver.poll(Instant::now()) {
                Some(Ok(())) => return Ok(self.assignment()),
                Some(Err(e)) => {
                    self.check_failed()?;
                    tries += 1;
                    last_error = Some(e);
                    // Ask again: after an error the state machine wants a full heartbeat
                    // after the backoff (or at once after fencing / a coordinator move).
                    let _ = self
                        .driver
                        .command(Instant::now(), MembershipCommand::HeartbeatNow);
                }
                None => self.check_failed()?,
            }
            if !self.wait_until_due(deadline) {
                break;
            }
        }
        Err(last_error.unwrap_or_else(|| Error::Timeout {
            operation: format!("heartbeat in group {}", self.config.group_id()),
            limit,
        }))
    }

    /// Leaves the group (member epoch -1, or -2 for a static member) and waits for the answer
    /// until the close timeout. Idempotent (a second call reports the first one's outcome).
    ///
    /// `Ok` means the broker answered the leave heartbeat: the member is out of the group and
    /// its tasks go to others at once. Otherwise the session is closed all the same, and the
    /// error says what happened to the leave — [`MembershipError::LeaveNotSent`] (no
    /// coordinator connection), [`MembershipError::LeaveNotAnswered`] (sent, no answer by the
    /// close timeout) or [`MembershipError::LeaveRefused`] (answered with an error) — in which
    /// case the broker removes the member only after the group's session timeout.
    ///
    /// [`MembershipError::LeaveNotSent`]: crate::streams::MembershipError::LeaveNotSent
    /// [`MembershipError::LeaveNotAnswered`]: crate::streams::MembershipError::LeaveNotAnswered
    /// [`MembershipError::LeaveRefused`]: crate::streams::MembershipError::LeaveRefused
    pub fn close(&mut self) -> Result<(), Error> {
        let started = Instant::now();
        let deadline = started + self.config.get_close_timeout();
        self.driver.set_call_deadline(Some(deadline));
        let left = self.driver.leave(started, deadline);
        self.driver.set_call_deadline(None);
        left
    }

    /// True once the member left the group or stopped.
    pub fn is_closed(&self) -> bool {
        self.driver.failure().is_some()
            || matches!(
                self.driver.membership.state(),
                MemberState::Left | MemberState::Failed
            )
    }

    /// Moves the session onto a dedicated heartbeat thread, which keeps the membership alive
    /// from now on. See [`StreamsGroupSessionHandle`].
    pub fn spawn_heartbeat_thread(self) -> Result<StreamsGroupSessionHandle, Error> {
        StreamsGroupSessionHandle::spawn(self.driver, self.config, self.offsets)
    }
}

impl StreamsGroupSession {
    /// Describes this member's group (`StreamsGroupDescribe`) on a connection of its own.
    /// See [`crate::describe::describe_streams_group`].
    pub fn describe_group(
        &self,
        timeout: Duration,
    ) -> Result<crate::describe::StreamsGroupDescription, Error> {
        crate::describe::describe_streams_group(
            self.config.get_client_config(),
            self.config.group_id(),
            timeout,
        )
    }
}
