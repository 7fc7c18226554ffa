//! `StreamsGroupSessionHandle`: the session on its own heartbeat thread.
//!
//! The thread owns the session (connection, state machine, clock). Application threads send
//! commands on a bounded crossbeam channel; blocking calls carry a one-shot reply channel and
//! a deadline. The assignment snapshot is shared through `shared::Shared`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};

use crate::error::Error;
use crate::streams::{
    MembershipCommand, StreamsGroupSessionAssignment, StreamsTaskAssignment, StreamsTaskOffsets,
    StreamsTaskRuntime, StreamsTaskTransition,
};

use crate::transport::stream::Interrupt;

use super::driver::Driver;
use super::metrics::{MemberMetrics, StreamsGroupMetrics};
use super::session::{leave, StreamsGroupSession};
use super::shared::{AssignmentSubscriber, Shared, StreamsGroupState};

/// Longest the thread sleeps without looking at the stop flag (it is also woken by commands).
const MAX_IDLE: Duration = Duration::from_secs(1);

enum Command {
    SetTaskState(
        StreamsTaskAssignment,
        Option<StreamsTaskOffsets>,
        Sender<Result<(), Error>>,
    ),
    HeartbeatNow(Sender<Result<StreamsGroupSessionAssignment, Error>>),
    RequestShutdown(Sender<Result<(), Error>>),
    /// Leave and stop; the instant is the close deadline.
    Close(Sender<Result<(), Error>>, Instant),
}

/// A Streams group member kept alive by a dedicated heartbeat thread.
///
/// Cheap calls ([`assignment`](Self::assignment), [`state`](Self::state)) read a shared
/// snapshot; blocking calls send a command to the thread and wait for its answer, each with a
/// deadline (the request timeout plus a margin). [`close`](Self::close) leaves the group and
/// joins the thread.
///
/// **Dropping the handle** stops the thread promptly **without** leaving the group: the broker
/// removes the member after its session timeout and gives its tasks to others then. Call
/// [`close`](Self::close) to hand the tasks over at once.
///
/// ```no_run
/// use kafka_streams_group::{StreamsGroupConfig, StreamsGroupSession, StreamsTaskRuntime,
///     StreamsTopology, Subtopology};
///
/// let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("input"));
/// let config = StreamsGroupConfig::new("127.0.0.1:9092", "my-app", topology);
/// let handle = StreamsGroupSession::join(config)?.spawn_heartbeat_thread()?;
/// let mut runtime = StreamsTaskRuntime::new();
/// let mut changes = handle.subscribe_assignment();
/// while let Ok(_assignment) = changes.recv_timeout(std::time::Duration::from_secs(30)) {
///     for transition in handle.reconcile_task_runtime(&mut runtime)? {
///         println!("{transition:?}"); // start or stop processing the task here
///     }
/// }
/// handle.close()?;
/// # Ok::<(), kafka_streams_group::Error>(())
/// ```
pub struct StreamsGroupSessionHandle {
    commands: Option<Sender<Command>>,
    shared: Arc<Shared>,
    metrics: Arc<MemberMetrics>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    call_timeout: Duration,
    close_timeout: Duration,
    /// Shared with every connection of the heartbeat thread: closing pulls its I/O deadlines
    /// in to the close deadline, dropping to "now", so neither waits for a request timeout.
    interrupt: Interrupt,
    /// Where and what [`describe_group`](Self::describe_group) asks (its own connection).
    describe_target: (crate::config::ClientConfig, String),
}

impl std::fmt::Debug for StreamsGroupSessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamsGroupSessionHandle")
            .field("member_id", &self.shared.member_id())
            .field("state", &self.shared.state())
            .finish()
    }
}

impl StreamsGroupSessionHandle {
    pub(crate) fn spawn(session: StreamsGroupSession) -> Result<Self, Error> {
        let StreamsGroupSession { driver, config } = session;
        let shared = driver.shared().clone();
        let metrics = driver.member_metrics.clone();
        let (tx, rx) = bounded(64);
        let stop = Arc::new(AtomicBool::new(false));
        let call_timeout = driver.request_timeout() * 2 + Duration::from_secs(1);
        let close_timeout = config.get_close_timeout();
        let interrupt = driver.interrupt().clone();
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("ksg-heartbeat-{}", config.group_id()))
            .spawn(move || run(driver, rx, thread_stop))
            .map_err(|e| Error::Io {
                operation: "spawning the heartbeat thread",
                broker: None,
                source: e,
            })?;
        Ok(Self {
            commands: Some(tx),
            shared,
            metrics,
            stop,
            thread: Some(thread),
            call_timeout,
            close_timeout,
            interrupt,
            describe_target: (
                config.get_client_config().clone(),
                config.group_id().to_string(),
            ),
        })
    }

    /// The member id.
    pub fn member_id(&self) -> String {
        self.shared.member_id()
    }

    /// The current member epoch.
    pub fn member_epoch(&self) -> i32 {
        self.shared.member_epoch()
    }

    /// A clone of the newest assignment snapshot.
    pub fn assignment(&self) -> StreamsGroupSessionAssignment {
        self.shared.assignment()
    }

    /// A receiver that blocks until the assignment changes and then yields the newest full
    /// assignment. Its first receive returns the current one.
    pub fn subscribe_assignment(&self) -> AssignmentSubscriber {
        AssignmentSubscriber::new(self.shared.clone())
    }

    /// Where the session stands; `Failed` carries the error that stopped it.
    pub fn state(&self) -> StreamsGroupState {
        self.shared.state()
    }

    /// Member-level metrics.
    pub fn metrics(&self) -> StreamsGroupMetrics {
        self.metrics.snapshot()
    }

    fn call<T>(
        &self,
        what: &str,
        make: impl FnOnce(Sender<Result<T, Error>>) -> Command,
    ) -> Result<T, Error> {
        let stopped = || match self.shared.state() {
            StreamsGroupState::Failed(e) => Error::from_shared(&e),
            _ => Error::Closed,
        };
        let commands = self.commands.as_ref().ok_or(Error::Closed)?;
        let (reply_tx, reply_rx) = bounded(1);
        let deadline = Instant::now() + self.call_timeout;
        commands
            .send_deadline(make(reply_tx), deadline)
            .map_err(|_| stopped())?;
        match reply_rx.recv_deadline(deadline) {
            Ok(r) => r,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => Err(Error::Timeout {
                operation: format!("{what} (heartbeat thread did not answer)"),
                limit: self.call_timeout,
            }),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Err(stopped()),
        }
    }

    /// Reports the tasks the application owns now; blocks until the heartbeat thread applied
    /// it (the heartbeat carrying it is sent promptly, not after a full interval).
    pub fn set_task_state(&self, owned: StreamsTaskAssignment) -> Result<(), Error> {
        self.call("set_task_state", |tx| {
            Command::SetTaskState(owned, None, tx)
        })
    }

    /// Like [`set_task_state`](Self::set_task_state), and also reports the tasks' offset sums,
    /// which Kafka 4.4+ brokers use for warm-up tasks (older brokers never receive them).
    pub fn set_task_state_with_optional_offsets(
        &self,
        owned: StreamsTaskAssignment,
        offsets: Option<StreamsTaskOffsets>,
    ) -> Result<(), Error> {
        self.call("set_task_state", |tx| {
            Command::SetTaskState(owned, offsets, tx)
        })
    }

    /// Sends a heartbeat as soon as allowed and blocks until the broker answered it; returns
    /// the assignment after that answer.
    pub fn heartbeat_now(&self) -> Result<StreamsGroupSessionAssignment, Error> {
        self.call("heartbeat_now", Command::HeartbeatNow)
    }

    /// Asks every member of the application to shut down (KIP-1071 `ShutdownApplication`).
    pub fn request_application_shutdown(&self) -> Result<(), Error> {
        self.call("request_application_shutdown", Command::RequestShutdown)
    }

    /// Brings `runtime` to the current target assignment and reports the result as the owned
    /// tasks of the next heartbeat. Returns the transitions to carry out. Conflicting input is
    /// rejected without changing `runtime`.
    pub fn reconcile_task_runtime(
        &self,
        runtime: &mut StreamsTaskRuntime,
    ) -> Result<Vec<StreamsTaskTransition>, Error> {
        let target = self.shared.assignment().tasks;
        let transitions = runtime
            .reconcile(&target)
            .map_err(crate::streams::MembershipError::InvalidOwnedTasks)?;
        self.set_task_state(runtime.owned_assignment())?;
        Ok(transitions)
    }

    /// Leaves the group (epoch -1, or -2 for a static member), waits for the broker's answer
    /// up to the close timeout, then stops and joins the thread.
    pub fn close(mut self) -> Result<(), Error> {
        let result = match self.commands.take() {
            Some(commands) => {
                let (tx, rx) = bounded(1);
                let close_deadline = Instant::now() + self.close_timeout;
                // A heartbeat stuck on an unresponsive coordinator must not hold the close
                // past its deadline (nor the leave that follows it).
                self.interrupt.interrupt_at(close_deadline);
                let deadline = close_deadline + Duration::from_millis(500);
                if commands
                    .send_deadline(Command::Close(tx, close_deadline), deadline)
                    .is_err()
                {
                    Err(Error::Closed)
                } else {
                    match rx.recv_deadline(deadline) {
                        Ok(r) => r,
                        Err(_) => Err(match self.shared.state() {
                            StreamsGroupState::Failed(e) => Error::from_shared(&e),
                            _ => Error::Closed,
                        }),
                    }
                }
            }
            None => Ok(()),
        };
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        result
    }
}

impl Drop for StreamsGroupSessionHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // End any blocking I/O of the thread within `INTERRUPT_CHECK`.
        self.interrupt.interrupt_at(Instant::now());
        // Disconnecting the channel wakes the thread at once if it is idle.
        self.commands.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The heartbeat thread.
fn run(mut driver: Driver, commands: Receiver<Command>, stop: Arc<AtomicBool>) {
    let mut waiting: Vec<Sender<Result<StreamsGroupSessionAssignment, Error>>> = Vec::new();
    loop {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let now = Instant::now();
        let due = driver.next_wakeup();
        let wait = due
            .map(|d| d.saturating_duration_since(now))
            .unwrap_or(MAX_IDLE)
            .min(MAX_IDLE);
        let first = if wait.is_zero() {
            commands.try_recv().map_err(|e| match e {
                crossbeam_channel::TryRecvError::Empty => RecvTimeoutError::Timeout,
                crossbeam_channel::TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
            })
        } else {
            commands.recv_timeout(wait)
        };
        let mut next = match first {
            Ok(c) => Some(c),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        // Apply every queued command before the next I/O, so a burst of task-state changes
        // costs one heartbeat, not one each.
        while let Some(command) = next.take() {
            match command {
                Command::SetTaskState(tasks, offsets, reply) => {
                    let mut r =
                        driver.command(Instant::now(), MembershipCommand::TasksReconciled(tasks));
                    if let (Ok(()), Some(o)) = (&r, offsets) {
                        r = driver.command(Instant::now(), MembershipCommand::ReportTaskOffsets(o));
                    }
                    let _ = reply.send(r);
                }
                Command::HeartbeatNow(reply) => {
                    match driver.command(Instant::now(), MembershipCommand::HeartbeatNow) {
                        Ok(()) => waiting.push(reply),
                        Err(e) => {
                            let _ = reply.send(Err(e));
                        }
                    }
                }
                Command::RequestShutdown(reply) => {
                    let r = driver.command(
                        Instant::now(),
                        MembershipCommand::RequestShutdownApplication,
                    );
                    let _ = reply.send(r);
                }
                Command::Close(reply, deadline) => {
                    let r = leave(&mut driver, deadline);
                    for w in waiting.drain(..) {
                        let _ = w.send(Err(Error::Closed));
                    }
                    let _ = reply.send(r);
                    return;
                }
            }
            next = commands.try_recv().ok();
        }
        if let Some(outcome) = driver.poll(Instant::now()) {
            let reply = outcome.map(|()| driver.shared().assignment());
            for w in waiting.drain(..) {
                let _ = w.send(match &reply {
                    Ok(a) => Ok(a.clone()),
                    Err(e) => Err(e.clone()),
                });
            }
        }
        if let Some(f) = driver.failure() {
            for w in waiting.drain(..) {
                let _ = w.send(Err(Error::from_shared(f)));
            }
        }
    }
    // Stopped without leaving (handle dropped): say so to anyone still looking, unless the
    // session already failed (that error stays visible).
    if driver.failure().is_none() {
        driver
            .shared()
            .publish_state(StreamsGroupState::Closed, driver.membership.member_epoch());
    }
}

impl StreamsGroupSessionHandle {
    /// Describes this member's group (`StreamsGroupDescribe`) on a connection of its own, so
    /// the heartbeat thread is not held up. See [`crate::describe::describe_streams_group`].
    pub fn describe_group(
        &self,
        timeout: Duration,
    ) -> Result<crate::describe::StreamsGroupDescription, Error> {
        let (client, group) = &self.describe_target;
        crate::describe::describe_streams_group(client, group, timeout)
    }
}
