//! The state of a runtime as Kafka Streams' `KafkaStreams.State` has it, its valid
//! transitions and the listener told of each change, and the tasks a runtime holds.

use crate::streams::commit::TopicPartition;
use crate::streams::{StreamsTaskId, StreamsTaskRole};

/// The state of a [`ProcessingRuntime`](super::ProcessingRuntime) (Java's
/// `KafkaStreams.State`, same names and transitions):
///
/// ```text
/// Created ──> Rebalancing <──> Running
///    │          │    │           │  │
///    │          │    └─> PendingError <┘ ──> Error
///    └──────────┴──────> PendingShutdown ──> NotRunning   (Running too)
/// ```
///
/// `Rebalancing` while a new assignment is taken (tasks revoked, stores restored) or the
/// group is not ready; `Running` once every task is restored and processing;
/// `PendingError` once processing failed (or the group asked the application to shut
/// down), `Error` when such a runtime is closed; `PendingShutdown` then `NotRunning` for a
/// clean close.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuntimeState {
    /// Built, not started.
    Created,
    /// Taking a new assignment, or waiting for the group to be ready.
    Rebalancing,
    /// Processing its tasks.
    Running,
    /// Closing cleanly.
    PendingShutdown,
    /// Closed cleanly.
    NotRunning,
    /// Failed; processes nothing more, waits to be closed.
    PendingError,
    /// Failed and closed.
    Error,
}

impl RuntimeState {
    /// Whether Java allows going from `self` to `next`.
    pub fn is_valid_transition(self, next: RuntimeState) -> bool {
        use RuntimeState::*;
        matches!(
            (self, next),
            (Created, Rebalancing | PendingShutdown)
                | (Rebalancing, Running | PendingShutdown | PendingError)
                | (
                    Running,
                    Rebalancing | Running | PendingShutdown | PendingError
                )
                | (PendingShutdown, NotRunning)
                | (PendingError, Error)
        )
    }

    /// Whether the runtime is `Running` or `Rebalancing`.
    pub fn is_running_or_rebalancing(self) -> bool {
        matches!(self, RuntimeState::Running | RuntimeState::Rebalancing)
    }
}

/// Told of every state change, with the new state then the old one (Java's
/// `StateListener.onChange(newState, oldState)`); called on the thread that runs the
/// runtime.
pub type StateListener = Box<dyn FnMut(RuntimeState, RuntimeState) + Send>;

/// The state of a runtime and its listener.
pub(crate) struct Lifecycle {
    state: RuntimeState,
    listener: Option<StateListener>,
    /// A stream thread's own state (logged at `debug`; the instance's is logged at `info`).
    thread: bool,
}

impl Lifecycle {
    pub(crate) fn new(listener: Option<StateListener>) -> Self {
        Lifecycle {
            state: RuntimeState::Created,
            listener,
            thread: false,
        }
    }

    /// The same, for one stream thread's own state.
    pub(crate) fn of_thread(mut self) -> Self {
        self.thread = true;
        self
    }

    pub(crate) fn state(&self) -> RuntimeState {
        self.state
    }

    pub(crate) fn set_listener(&mut self, listener: StateListener) {
        self.listener = Some(listener);
    }

    /// Moves to `next` if Java allows it (a repeated state or a refused move is ignored, as
    /// `KafkaStreams.setState` ignores them); true if the state changed.
    pub(crate) fn to(&mut self, next: RuntimeState) -> bool {
        let old = self.state;
        if old == next {
            return false;
        }
        if !old.is_valid_transition(next) {
            log::debug!("state transition {old:?} -> {next:?} ignored");
            return false;
        }
        match self.thread {
            true => log::debug!("stream thread state transition from {old:?} to {next:?}"),
            false => log::info!("state transition from {old:?} to {next:?}"),
        }
        self.state = next;
        if let Some(l) = self.listener.as_mut() {
            l(next, old);
        }
        true
    }
}

/// A task this runtime holds (Java's `TaskMetadata` of `metadataForLocalThreads`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalTask {
    /// The task.
    pub task: StreamsTaskId,
    /// Held as active, standby or warm-up.
    pub role: StreamsTaskRole,
    /// Its input partitions.
    pub partitions: Vec<TopicPartition>,
    /// The changelog partitions of its stores.
    pub changelogs: Vec<TopicPartition>,
}

#[cfg(test)]
mod tests {
    use super::RuntimeState::*;
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn transitions_are_javas() {
        assert!(Created.is_valid_transition(Rebalancing));
        assert!(!Created.is_valid_transition(Running));
        assert!(Rebalancing.is_valid_transition(Running));
        assert!(Running.is_valid_transition(Rebalancing));
        assert!(!PendingError.is_valid_transition(PendingShutdown));
        assert!(PendingError.is_valid_transition(Error));
        assert!(!NotRunning.is_valid_transition(Rebalancing));
        assert!(!Error.is_valid_transition(Running));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let mut l = Lifecycle::new(Some(Box::new(move |new, old| {
            s.lock().unwrap().push((old, new));
        })));
        assert!(l.to(Rebalancing));
        assert!(!l.to(Rebalancing), "no repeat");
        assert!(!l.to(NotRunning), "refused");
        assert!(l.to(Running));
        assert!(!l.to(Running), "no repeat");
        assert!(l.to(PendingError));
        assert!(!l.to(PendingShutdown));
        assert!(l.to(Error));
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![
                (Created, Rebalancing),
                (Rebalancing, Running),
                (Running, PendingError),
                (PendingError, Error)
            ]
        );
    }
}
