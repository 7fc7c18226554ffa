//! `StreamsGroupSessionHandle`: the session on its own heartbeat thread.
//!
//! The thread owns the session (connection, state machine, clock) and sleeps in a
//! `mio::Poll` until the next heartbeat is due or a `mio::Waker` says a command arrived.
//! Application threads send commands on a bounded crossbeam channel and wake the poll;
//! blocking calls carry a reply slot (reused from call to call, see `ReplySlot`) and a
//! deadline. The assignment snapshot is shared through `shared::Shared`.
//!
//! Why a poll and not `recv_timeout` on the channel: crossbeam's blocking receive spins and
//! `sched_yield`s before it parks, on every heartbeat of an idle member; an `epoll_wait` with
//! the heartbeat's deadline is one system call and one wake-up.

use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, Sender, TryRecvError};
use mio::{Events, Poll, Token, Waker};
use parking_lot::{Condvar, Mutex};

use crate::error::Error;
use crate::streams::{
    MembershipCommand, StreamsGroupSessionAssignment, StreamsTaskAssignment, StreamsTaskOffsets,
    StreamsTaskRuntime, StreamsTaskTransition,
};

use crate::transport::stream::Interrupt;

use super::config::StreamsGroupConfig;
use super::driver::Driver;
use super::metrics::{MemberMetrics, StreamsGroupMetrics};
use super::shared::{AssignmentSubscriber, Shared, StreamsGroupState};

/// Longest the thread sleeps when nothing is due (a failed or closed session): a safety net
/// only, since dropping or closing the handle wakes the thread through the waker.
const MAX_IDLE: Duration = Duration::from_secs(1);

/// The waker's token in the heartbeat thread's poll (the only thing registered there).
const WAKE: Token = Token(0);

/// What `heartbeat_now` gets back: the snapshot itself, so the heartbeat thread never copies
/// the assignment; the caller makes its copy on its own thread.
type AssignmentReply = Result<Arc<StreamsGroupSessionAssignment>, Error>;
type UnitReply = Result<(), Error>;

/// Where one blocking call's answer lands.
///
/// A slot is reused by later calls of the same handle (see [`SlotPool`]) instead of a new
/// crossbeam channel per call (an aligned heap allocation each). The heartbeat thread fills
/// it through a [`Replier`]; if the thread drops the replier unanswered (it stopped), the slot
/// says so, as a disconnected channel would.
struct ReplySlot<T> {
    state: Mutex<SlotState<T>>,
    filled: Condvar,
}

enum SlotState<T> {
    Empty,
    Ready(T),
    /// The heartbeat thread dropped the request without answering (it stopped).
    Dropped,
}

impl<T> ReplySlot<T> {
    fn new() -> Arc<Self> {
        Arc::new(ReplySlot {
            state: Mutex::new(SlotState::Empty),
            filled: Condvar::new(),
        })
    }

    fn fill(&self, value: SlotState<T>) {
        let mut s = self.state.lock();
        *s = value;
        self.filled.notify_one();
    }

    /// Waits for the answer until `deadline`: `Some(Ok(v))`, `Some(Err(()))` if the thread
    /// dropped the request, `None` on timeout. Leaves the slot empty when it returns `Some`.
    fn wait(&self, deadline: Instant) -> Option<Result<T, ()>> {
        briefly_wait_for(|| !matches!(*self.state.lock(), SlotState::Empty));
        let mut s = self.state.lock();
        loop {
            match std::mem::replace(&mut *s, SlotState::Empty) {
                SlotState::Ready(v) => return Some(Ok(v)),
                SlotState::Dropped => return Some(Err(())),
                SlotState::Empty => {}
            }
            if self.filled.wait_until(&mut s, deadline).timed_out() {
                return match std::mem::replace(&mut *s, SlotState::Empty) {
                    SlotState::Ready(v) => Some(Ok(v)),
                    SlotState::Dropped => Some(Err(())),
                    SlotState::Empty => None,
                };
            }
        }
    }
}

/// The heartbeat thread's end of a [`ReplySlot`]: answers once; dropped unanswered, it marks
/// the slot so the caller learns that the thread stopped instead of waiting for its deadline.
struct Replier<T>(Option<Arc<ReplySlot<T>>>);

impl<T> Replier<T> {
    fn send(mut self, value: T) {
        if let Some(slot) = self.0.take() {
            slot.fill(SlotState::Ready(value));
        }
    }
}

impl<T> Drop for Replier<T> {
    fn drop(&mut self) {
        if let Some(slot) = self.0.take() {
            slot.fill(SlotState::Dropped);
        }
    }
}

/// Idle reply slots of one handle. A slot goes back only once its answer was taken, never
/// after a timeout (the thread may still answer into it later), so an answer can never reach
/// the wrong call. Concurrent callers each take their own slot.
struct SlotPool<T>(Mutex<Vec<Arc<ReplySlot<T>>>>);

impl<T> SlotPool<T> {
    fn new() -> Self {
        SlotPool(Mutex::new(Vec::new()))
    }

    fn take(&self) -> Arc<ReplySlot<T>> {
        self.0.lock().pop().unwrap_or_else(ReplySlot::new)
    }

    fn put(&self, slot: Arc<ReplySlot<T>>) {
        self.0.lock().push(slot);
    }
}

/// Checks `ready` a few times, spinning and then yielding between checks (as crossbeam's
/// blocking receive does), before the caller goes to sleep; true once it held. Used only
/// where the awaited event often follows within microseconds — a caller waiting for its
/// answer, and the heartbeat thread right after it answered a caller, who may call again at
/// once — so that such a hop costs no sleep and wake-up. An idle heartbeat thread (no
/// command served) never spins.
fn briefly_wait_for(mut ready: impl FnMut() -> bool) -> bool {
    const SPIN_STEPS: u32 = 6;
    const YIELD_STEPS: u32 = 4;
    for step in 0..SPIN_STEPS + YIELD_STEPS {
        if ready() {
            return true;
        }
        if step < SPIN_STEPS {
            for _ in 0..1u32 << step {
                std::hint::spin_loop();
            }
        } else {
            std::thread::yield_now();
        }
    }
    ready()
}

enum Command {
    SetTaskState(
        StreamsTaskAssignment,
        Option<StreamsTaskOffsets>,
        Replier<UnitReply>,
    ),
    ReportTaskOffsets(StreamsTaskOffsets, Replier<UnitReply>),
    HeartbeatNow(Replier<AssignmentReply>),
    RequestShutdown(Replier<UnitReply>),
    /// Leave and stop; the instants are when the close began and its deadline.
    Close(Replier<UnitReply>, Instant, Instant),
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
    /// Wakes the heartbeat thread's poll after a command was queued (or to stop it).
    waker: Arc<Waker>,
    /// True while the heartbeat thread sleeps (or is about to) in its poll; a caller wakes
    /// the poll only then, so a thread that is busy or spinning costs no `eventfd` write
    /// (and no spurious wake-up later from a stale one).
    sleeping: Arc<AtomicBool>,
    unit_replies: SlotPool<UnitReply>,
    assignment_replies: SlotPool<AssignmentReply>,
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
    /// Offset commits and fetches, on a coordinator connection of their own or on the
    /// processing thread's shared client.
    pub(crate) offsets: Mutex<super::commit::OffsetClient>,
    pub(crate) rebalance_timeout: Duration,
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
    /// Moves a joined session's driver (and its offset-commit client) onto a new heartbeat
    /// thread (see [`crate::StreamsGroupSession::spawn_heartbeat_thread`]).
    pub(crate) fn spawn(
        driver: Driver,
        config: StreamsGroupConfig,
        offsets: super::commit::OffsetClient,
    ) -> Result<Self, Error> {
        let shared = driver.shared().clone();
        let metrics = driver.member_metrics.clone();
        let (tx, rx) = bounded(64);
        let poll_error = |e| Error::Io {
            operation: "creating the heartbeat thread's poll",
            broker: None,
            source: e,
        };
        let poll = Poll::new().map_err(poll_error)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKE).map_err(poll_error)?);
        let stop = Arc::new(AtomicBool::new(false));
        let sleeping = Arc::new(AtomicBool::new(false));
        let thread_sleeping = sleeping.clone();
        let call_timeout = driver.request_timeout() * 2 + Duration::from_secs(1);
        let close_timeout = config.get_close_timeout();
        let interrupt = driver.interrupt().clone();
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("ksg-heartbeat-{}", config.group_id()))
            .spawn(move || run(driver, rx, poll, thread_stop, thread_sleeping))
            .map_err(|e| Error::Io {
                operation: "spawning the heartbeat thread",
                broker: None,
                source: e,
            })?;
        Ok(Self {
            commands: Some(tx),
            waker,
            sleeping,
            unit_replies: SlotPool::new(),
            assignment_replies: SlotPool::new(),
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
            offsets: Mutex::new(offsets),
            rebalance_timeout: config.get_rebalance_timeout(),
        })
    }

    /// Sends this member's offset commits and fetches through `client` (the processing
    /// thread's shared client) instead of a coordinator connection of their own; commits
    /// and fetches must then come from the thread that drives `client`'s other users. The
    /// heartbeat keeps its own connection: its deadlines must not wait behind a Fetch.
    pub(crate) fn share_offsets_client(&self, client: crate::client::SharedClient) {
        self.offsets.lock().use_shared(client);
    }

    /// The state shared with the heartbeat thread.
    pub(crate) fn shared_state(&self) -> &Arc<Shared> {
        &self.shared
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

    /// The error for a call that found the thread gone: its failure, or `Closed`.
    fn stopped(&self) -> Error {
        match self.shared.state() {
            StreamsGroupState::Failed(e) => Error::from_shared(&e),
            _ => Error::Closed,
        }
    }

    /// Queues `command` and wakes the heartbeat thread; false if the thread is gone or the
    /// queue stayed full until `deadline`.
    fn submit(&self, commands: &Sender<Command>, command: Command, deadline: Instant) -> bool {
        if commands.send_deadline(command, deadline).is_err() {
            return false;
        }
        // Pairs with the fence in `run` before it sleeps: either the thread sees the command
        // then, or this sees `sleeping` and wakes it (no lost wake-up).
        fence(Ordering::SeqCst);
        if self.sleeping.swap(false, Ordering::SeqCst) {
            // An eventfd write; if it ever failed the thread would still see the command
            // at its next heartbeat, so the call is late rather than lost.
            if let Err(e) = self.waker.wake() {
                log::warn!("waking the heartbeat thread failed: {e}");
            }
        }
        true
    }

    fn call<T>(
        &self,
        what: &str,
        pool: &SlotPool<Result<T, Error>>,
        make: impl FnOnce(Replier<Result<T, Error>>) -> Command,
    ) -> Result<T, Error> {
        let commands = self.commands.as_ref().ok_or(Error::Closed)?;
        let slot = pool.take();
        let deadline = Instant::now() + self.call_timeout;
        if !self.submit(commands, make(Replier(Some(slot.clone()))), deadline) {
            // The command came back and its replier was dropped, marking the slot
            // `Dropped`; the slot is not pooled again, so no later call reads that mark.
            return Err(self.stopped());
        }
        match slot.wait(deadline) {
            Some(Ok(r)) => {
                pool.put(slot);
                r
            }
            Some(Err(())) => {
                pool.put(slot);
                Err(self.stopped())
            }
            None => Err(Error::Timeout {
                operation: format!("{what} (heartbeat thread did not answer)"),
                limit: self.call_timeout,
            }),
        }
    }

    /// Reports the tasks the application owns now; blocks until the heartbeat thread applied
    /// it (the heartbeat carrying it is sent promptly, not after a full interval).
    pub fn set_task_state(&self, owned: StreamsTaskAssignment) -> Result<(), Error> {
        self.call("set_task_state", &self.unit_replies, |tx| {
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
        self.call("set_task_state", &self.unit_replies, |tx| {
            Command::SetTaskState(owned, offsets, tx)
        })
    }

    /// Replaces the task offset sums the heartbeats report (Kafka 4.4+ brokers; the owned
    /// tasks stay as reported). When they are sent follows Java's cadence (see
    /// [`StreamsGroupSession::set_task_state_with_optional_offsets`](crate::StreamsGroupSession::set_task_state_with_optional_offsets)).
    pub(crate) fn report_task_offsets(&self, offsets: StreamsTaskOffsets) -> Result<(), Error> {
        self.call("report_task_offsets", &self.unit_replies, |tx| {
            Command::ReportTaskOffsets(offsets, tx)
        })
    }

    /// Sends a heartbeat as soon as allowed and blocks until the broker answered it; returns
    /// the assignment after that answer.
    pub fn heartbeat_now(&self) -> Result<StreamsGroupSessionAssignment, Error> {
        self.call(
            "heartbeat_now",
            &self.assignment_replies,
            Command::HeartbeatNow,
        )
        .map(Arc::unwrap_or_clone)
    }

    /// Asks every member of the application to shut down (KIP-1071 `ShutdownApplication`).
    pub fn request_application_shutdown(&self) -> Result<(), Error> {
        self.call(
            "request_application_shutdown",
            &self.unit_replies,
            Command::RequestShutdown,
        )
    }

    /// Brings `runtime` to the current target assignment and reports the result as the owned
    /// tasks of the next heartbeat. Returns the transitions to carry out. Conflicting input is
    /// rejected without changing `runtime`.
    ///
    /// The revoked tasks are reported released **before** the application stopped them, so the
    /// broker may give them to another member while they still run here: fine for members that
    /// process nothing; an application that processes records uses
    /// [`begin_reconciliation`](Self::begin_reconciliation) /
    /// [`release_revoked`](Self::release_revoked) /
    /// [`acknowledge_assigned`](Self::acknowledge_assigned) instead.
    pub fn reconcile_task_runtime(
        &self,
        runtime: &mut StreamsTaskRuntime,
    ) -> Result<Vec<StreamsTaskTransition>, Error> {
        let snapshot = self.shared.snapshot();
        let transitions = runtime
            .reconcile(&snapshot.tasks)
            .map_err(crate::streams::MembershipError::InvalidOwnedTasks)?;
        self.set_task_state(runtime.owned_assignment())?;
        Ok(transitions)
    }

    /// Leaves the group (epoch -1, or -2 for a static member), waits for the broker's answer
    /// up to the close timeout, then stops and joins the thread.
    ///
    /// `Ok` means the broker answered the leave heartbeat; otherwise the error says what
    /// happened to it, as for [`crate::StreamsGroupSession::close`]. A heartbeat still
    /// unanswered when `close` is called is waited for until the close deadline (a connection
    /// carries one request at a time), so against a coordinator that stopped answering the
    /// leave is not sent: [`MembershipError::LeaveNotSent`](crate::streams::MembershipError::LeaveNotSent).
    pub fn close(mut self) -> Result<(), Error> {
        let result = match self.commands.take() {
            Some(commands) => {
                let slot = ReplySlot::new();
                let started = Instant::now();
                let close_deadline = started + self.close_timeout;
                // A heartbeat stuck on an unresponsive coordinator must not hold the close
                // past its deadline (nor the leave that follows it).
                self.interrupt.interrupt_at(close_deadline);
                let deadline = close_deadline + Duration::from_millis(500);
                let close = Command::Close(Replier(Some(slot.clone())), started, close_deadline);
                if !self.submit(&commands, close, deadline) {
                    Err(Error::Closed)
                } else {
                    match slot.wait(deadline) {
                        Some(Ok(r)) => r,
                        _ => Err(self.stopped()),
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
        // Disconnecting the channel and waking the poll ends an idle wait at once.
        self.commands.take();
        let _ = self.waker.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The heartbeat thread: apply queued commands, do what is due (at most one heartbeat round
/// trip), then sleep in `poll` until the next thing is due or the waker fires.
fn run(
    mut driver: Driver,
    commands: Receiver<Command>,
    mut poll: Poll,
    stop: Arc<AtomicBool>,
    sleeping: Arc<AtomicBool>,
) {
    let mut events = Events::with_capacity(1);
    let mut waiting: Vec<Replier<AssignmentReply>> = Vec::new();
    'run: loop {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let mut served = false;
        // Apply every queued command before the next I/O, so a burst of task-state changes
        // costs one heartbeat, not one each.
        loop {
            let command = match commands.try_recv() {
                Ok(c) => c,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => break 'run,
            };
            served = true;
            match command {
                Command::SetTaskState(tasks, offsets, reply) => {
                    let mut r =
                        driver.command(Instant::now(), MembershipCommand::TasksReconciled(tasks));
                    if let (Ok(()), Some(o)) = (&r, offsets) {
                        r = driver.command(Instant::now(), MembershipCommand::ReportTaskOffsets(o));
                    }
                    reply.send(r);
                }
                Command::ReportTaskOffsets(offsets, reply) => {
                    reply.send(driver.command(
                        Instant::now(),
                        MembershipCommand::ReportTaskOffsets(offsets),
                    ));
                }
                Command::HeartbeatNow(reply) => {
                    match driver.command(Instant::now(), MembershipCommand::HeartbeatNow) {
                        Ok(()) => waiting.push(reply),
                        Err(e) => reply.send(Err(e)),
                    }
                }
                Command::RequestShutdown(reply) => {
                    let r = driver.command(
                        Instant::now(),
                        MembershipCommand::RequestShutdownApplication,
                    );
                    reply.send(r);
                }
                Command::Close(reply, started, deadline) => {
                    let r = driver.leave(started, deadline);
                    for w in waiting.drain(..) {
                        w.send(Err(Error::Closed));
                    }
                    reply.send(r);
                    return;
                }
            }
        }
        if let Some(outcome) = driver.poll(Instant::now()) {
            // The published snapshot is an `Arc`: answering costs O(1) here.
            let reply = outcome.map(|()| driver.shared().snapshot());
            for w in waiting.drain(..) {
                w.send(reply.clone());
            }
        }
        if let Some(f) = driver.failure() {
            for w in waiting.drain(..) {
                w.send(Err(Error::from_shared(f)));
            }
        }
        let wait = driver.next_wakeup().map_or(MAX_IDLE, |due| {
            due.saturating_duration_since(Instant::now())
        });
        if wait.is_zero() || (served && briefly_wait_for(|| !commands.is_empty())) {
            continue;
        }
        sleeping.store(true, Ordering::SeqCst);
        // Pairs with the fence in `submit` (see there).
        fence(Ordering::SeqCst);
        if commands.is_empty() && !stop.load(Ordering::SeqCst) {
            // mio rounds the timeout up to whole milliseconds, so a timed wake-up finds its
            // heartbeat due rather than a few microseconds early (which would cost a second
            // wait). Errors (EINTR) just mean another turn of the loop.
            let _ = poll.poll(&mut events, Some(wait));
        }
        sleeping.store(false, Ordering::SeqCst);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_slot_delivers_once_and_is_reusable() {
        let pool: SlotPool<u32> = SlotPool::new();
        let slot = pool.take();
        let replier = Replier(Some(slot.clone()));
        let t = std::thread::spawn(move || replier.send(7));
        let got = slot.wait(Instant::now() + Duration::from_secs(5));
        t.join().expect("replier thread");
        assert!(matches!(got, Some(Ok(7))));
        pool.put(slot);
        // The same slot serves the next call, empty again.
        let slot = pool.take();
        assert!(slot
            .wait(Instant::now() + Duration::from_millis(10))
            .is_none());
        Replier(Some(slot.clone())).send(8);
        assert!(matches!(slot.wait(Instant::now()), Some(Ok(8))));
    }

    #[test]
    fn a_dropped_replier_ends_the_wait_at_once() {
        let slot = ReplySlot::<u32>::new();
        let replier = Replier(Some(slot.clone()));
        let started = Instant::now();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            drop(replier);
        });
        let got = slot.wait(started + Duration::from_secs(10));
        t.join().expect("dropper thread");
        assert!(matches!(got, Some(Err(()))));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_reply_slot_wait_times_out_without_an_answer() {
        let slot = ReplySlot::<u32>::new();
        let _replier = Replier(Some(slot.clone()));
        let started = Instant::now();
        assert!(slot.wait(started + Duration::from_millis(30)).is_none());
        assert!(started.elapsed() >= Duration::from_millis(30));
    }
}
