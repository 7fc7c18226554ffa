//! What the heartbeat thread publishes and application threads read: the assignment snapshot,
//! the session state, the member identity. One `parking_lot` mutex, a condition variable and a
//! version counter: readers clone, subscribers wait for the version to move and always receive
//! the newest *full* assignment, never a delta they could miss.
//!
//! The snapshot is kept behind an `Arc`, so taking it under the lock is O(1) whatever the
//! number of tasks: the heartbeat thread answers `heartbeat_now` with that `Arc`, and the deep
//! copy a reader needs happens on the reader's thread, after the lock is released.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::Error;
use crate::streams::{MemberState, StreamsGroupSessionAssignment, StreamsTaskAssignment};

/// Where a session stands, as seen by the application.
#[derive(Clone, Debug)]
pub enum StreamsGroupState {
    /// Sending the joining heartbeat (epoch 0), or looking for the coordinator to do so.
    Joining,
    /// The broker gave a new target assignment; the application has not yet confirmed it
    /// (see [`crate::StreamsGroupSessionHandle::set_task_state`]).
    Reconciling,
    /// The member owns what the broker wants it to own.
    Stable,
    /// The broker fenced the member; it lost its tasks and rejoins with the same member id.
    Fenced,
    /// The leave heartbeat is being sent.
    Leaving,
    /// The member left the group (or was dropped); no more heartbeats.
    Closed,
    /// The member stopped for good; the error says why.
    Failed(Arc<Error>),
}

impl StreamsGroupState {
    /// Maps the state machine's state; `Failed` needs the error, so it is passed separately.
    pub(crate) fn from_member_state(state: MemberState) -> Self {
        match state {
            MemberState::Unjoined | MemberState::Joining => Self::Joining,
            MemberState::Reconciling | MemberState::Acknowledging => Self::Reconciling,
            MemberState::Stable => Self::Stable,
            MemberState::Leaving => Self::Leaving,
            MemberState::Left => Self::Closed,
            // The driver publishes Failed with the error; this is only a fallback.
            MemberState::Failed => Self::Closed,
        }
    }

    /// True once the session can never heartbeat again.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Closed | Self::Failed(_))
    }
}

#[derive(Debug)]
struct Published {
    version: u64,
    assignment: Arc<StreamsGroupSessionAssignment>,
    state: StreamsGroupState,
    member_id: String,
    member_epoch: i32,
    /// The tasks the application last reported as owned (what commits may cover).
    owned: Arc<StreamsTaskAssignment>,
    /// How many times the member lost its tasks (fencing, failure, leave).
    tasks_lost: u64,
}

/// The single place application threads and the heartbeat thread meet (besides commands).
#[derive(Debug)]
pub(crate) struct Shared {
    published: Mutex<Published>,
    changed: Condvar,
}

impl Shared {
    pub(crate) fn new(member_id: String) -> Arc<Self> {
        Arc::new(Self {
            published: Mutex::new(Published {
                version: 0,
                assignment: Arc::new(StreamsGroupSessionAssignment::new()),
                state: StreamsGroupState::Joining,
                member_id,
                member_epoch: 0,
                owned: Arc::new(StreamsTaskAssignment::new()),
                tasks_lost: 0,
            }),
            changed: Condvar::new(),
        })
    }

    /// Publishes a new assignment snapshot and wakes subscribers.
    pub(crate) fn publish_assignment(&self, assignment: Arc<StreamsGroupSessionAssignment>) {
        let mut p = self.published.lock();
        p.member_epoch = assignment.member_epoch;
        p.assignment = assignment;
        p.version += 1;
        self.changed.notify_all();
    }

    /// Publishes a state change (and the epoch that goes with it) and wakes subscribers, who
    /// must learn of a failure or close even when the assignment did not move.
    pub(crate) fn publish_state(&self, state: StreamsGroupState, member_epoch: i32) {
        let mut p = self.published.lock();
        p.state = state;
        p.member_epoch = member_epoch;
        p.version += 1;
        self.changed.notify_all();
    }

    /// Publishes the owned tasks if they changed. No subscriber wake-up: the assignment did
    /// not move.
    pub(crate) fn publish_owned(&self, owned: &StreamsTaskAssignment) {
        let mut p = self.published.lock();
        if *p.owned != *owned {
            p.owned = Arc::new(owned.clone());
        }
    }

    /// Records that the member lost its tasks (they are no longer owned) and wakes waiters.
    pub(crate) fn publish_tasks_lost(&self) {
        let mut p = self.published.lock();
        p.owned = Arc::new(StreamsTaskAssignment::new());
        p.tasks_lost += 1;
        p.version += 1;
        self.changed.notify_all();
    }

    /// The owned tasks (O(1)).
    pub(crate) fn owned(&self) -> Arc<StreamsTaskAssignment> {
        self.published.lock().owned.clone()
    }

    /// How many times the member lost its tasks so far.
    pub(crate) fn tasks_lost(&self) -> u64 {
        self.published.lock().tasks_lost
    }

    /// Blocks until the member epoch differs from `stale`, the session ended, or `deadline`;
    /// returns the epoch then.
    pub(crate) fn await_epoch_change(&self, stale: i32, deadline: Instant) -> i32 {
        let mut p = self.published.lock();
        while p.member_epoch == stale && !p.state.is_terminal() {
            if self.changed.wait_until(&mut p, deadline).timed_out() {
                break;
            }
        }
        p.member_epoch
    }

    /// A deep copy of the snapshot, made outside the lock.
    pub(crate) fn assignment(&self) -> StreamsGroupSessionAssignment {
        StreamsGroupSessionAssignment::clone(&self.snapshot())
    }

    /// The snapshot itself (O(1)).
    pub(crate) fn snapshot(&self) -> Arc<StreamsGroupSessionAssignment> {
        self.published.lock().assignment.clone()
    }

    pub(crate) fn state(&self) -> StreamsGroupState {
        self.published.lock().state.clone()
    }

    pub(crate) fn member_id(&self) -> String {
        self.published.lock().member_id.clone()
    }

    pub(crate) fn member_epoch(&self) -> i32 {
        self.published.lock().member_epoch
    }

    fn version(&self) -> u64 {
        self.published.lock().version
    }
}

/// A receiver of assignment changes, from
/// [`crate::StreamsGroupSessionHandle::subscribe_assignment`].
///
/// Each successful receive returns the newest **full** assignment published since the last
/// one this subscriber saw; intermediate snapshots may be skipped, never partially applied. A
/// receive returns an error once the session has failed or closed and nothing newer is left.
#[derive(Debug)]
pub struct AssignmentSubscriber {
    shared: Arc<Shared>,
    seen: u64,
}

impl AssignmentSubscriber {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        // A new subscriber first receives the current assignment.
        Self { shared, seen: 0 }
    }

    /// Blocks until the assignment (or the session state) changed, then returns the newest
    /// assignment. Fails with [`Error::Closed`] (or the session's failure) once the session
    /// has ended and this subscriber has seen its last snapshot.
    pub fn recv(&mut self) -> Result<StreamsGroupSessionAssignment, Error> {
        loop {
            if let Some(r) = self.recv_deadline(Instant::now() + Duration::from_secs(3600)) {
                return r;
            }
        }
    }

    /// Like [`AssignmentSubscriber::recv`], but gives up after `timeout` with
    /// [`Error::Timeout`].
    pub fn recv_timeout(
        &mut self,
        timeout: Duration,
    ) -> Result<StreamsGroupSessionAssignment, Error> {
        self.recv_deadline(Instant::now() + timeout)
            .unwrap_or_else(|| {
                Err(Error::Timeout {
                    operation: "waiting for an assignment change".into(),
                    limit: timeout,
                })
            })
    }

    /// Returns the newest assignment if it changed since the last receive, without blocking.
    pub fn try_recv(&mut self) -> Option<StreamsGroupSessionAssignment> {
        let snapshot = {
            let p = self.shared.published.lock();
            if p.version <= self.seen {
                return None;
            }
            self.seen = p.version;
            p.assignment.clone()
        };
        Some(Arc::unwrap_or_clone(snapshot))
    }

    /// True if something was published that this subscriber has not received yet.
    pub fn has_changed(&self) -> bool {
        self.shared.version() > self.seen
    }

    fn recv_deadline(
        &mut self,
        deadline: Instant,
    ) -> Option<Result<StreamsGroupSessionAssignment, Error>> {
        let mut p = self.shared.published.lock();
        loop {
            if p.version > self.seen {
                self.seen = p.version;
                let snapshot = p.assignment.clone();
                drop(p);
                return Some(Ok(Arc::unwrap_or_clone(snapshot)));
            }
            match &p.state {
                StreamsGroupState::Closed => return Some(Err(Error::Closed)),
                StreamsGroupState::Failed(e) => return Some(Err(Error::from_shared(e))),
                _ => {}
            }
            if self.shared.changed.wait_until(&mut p, deadline).timed_out() {
                return None;
            }
        }
    }
}
