//! A Rust member as the live tests drive it: the session on its heartbeat thread plus the
//! application's task runtime, reconciled the way a Streams application would.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_streams_group::{
    StreamsGroupConfig, StreamsGroupSession, StreamsGroupSessionHandle, StreamsGroupState,
    StreamsTaskId, StreamsTaskRuntime,
};

/// A member on its heartbeat thread plus the application's task runtime.
pub struct Member {
    /// A label for failure messages.
    pub name: &'static str,
    /// Shared through an `Arc` so probe threads can call `heartbeat_now` alongside.
    pub handle: Arc<StreamsGroupSessionHandle>,
    /// The tasks the "application" runs.
    pub runtime: StreamsTaskRuntime,
    /// The process id the member joined with (describe output names it).
    pub process_id: String,
    /// Every state seen by [`Member::reconcile`], in order, without repeats.
    pub states: Vec<&'static str>,
}

impl Member {
    /// Joins with a 30 s join timeout and starts the heartbeat thread.
    pub fn join(name: &'static str, config: StreamsGroupConfig) -> Member {
        Member::join_within(name, config, Duration::from_secs(30))
    }

    /// Joins within `join_timeout` and starts the heartbeat thread.
    pub fn join_within(
        name: &'static str,
        config: StreamsGroupConfig,
        join_timeout: Duration,
    ) -> Member {
        let process_id = config.get_process_id().to_string();
        let handle = StreamsGroupSession::join(config.join_timeout(join_timeout))
            .unwrap_or_else(|e| panic!("member {name} joins: {e}"))
            .spawn_heartbeat_thread()
            .unwrap_or_else(|e| panic!("member {name} spawns its heartbeat thread: {e}"));
        Member {
            name,
            handle: Arc::new(handle),
            runtime: StreamsTaskRuntime::new(),
            process_id,
            states: Vec::new(),
        }
    }

    /// What a Streams application does on every assignment change: run exactly the target.
    /// Records the state first; a member that stopped (closed or failed) is left alone.
    pub fn reconcile(&mut self) {
        let state = self.handle.state();
        let name = state_name(&state);
        if self.states.last() != Some(&name) {
            self.states.push(name);
        }
        if !state.is_terminal() {
            self.handle
                .reconcile_task_runtime(&mut self.runtime)
                .unwrap_or_else(|e| panic!("member {} reconciles: {e}", self.name));
        }
    }

    /// The active tasks of the broker's current target.
    pub fn active(&self) -> BTreeSet<StreamsTaskId> {
        self.handle.assignment().active().cloned().collect()
    }

    /// The active tasks the application runs.
    pub fn running_active(&self) -> BTreeSet<StreamsTaskId> {
        self.runtime.owned_assignment().active().cloned().collect()
    }

    /// Whether the member is `Stable`.
    pub fn stable(&self) -> bool {
        matches!(self.handle.state(), StreamsGroupState::Stable)
    }

    /// Leaves the group and returns how that went; panics if a probe still shares the handle.
    pub fn leave(self) -> Result<(), kafka_streams_group::Error> {
        let name = self.name;
        Arc::try_unwrap(self.handle)
            .unwrap_or_else(|_| panic!("member {name}: handle still shared"))
            .close()
    }

    /// Leaves the group; panics if the leave fails.
    pub fn close(self) {
        let name = self.name;
        self.leave()
            .unwrap_or_else(|e| panic!("member {name} leaves: {e}"));
    }
}

/// A short name of a state, for [`Member::states`] and messages.
pub fn state_name(state: &StreamsGroupState) -> &'static str {
    match state {
        StreamsGroupState::Joining => "Joining",
        StreamsGroupState::Reconciling => "Reconciling",
        StreamsGroupState::Stable => "Stable",
        StreamsGroupState::Fenced => "Fenced",
        StreamsGroupState::Leaving => "Leaving",
        StreamsGroupState::Closed => "Closed",
        StreamsGroupState::Failed(_) => "Failed",
    }
}

/// Reconciles every member every 50 ms until `done` holds or `timeout` passes, and returns how
/// long that took. Asserts on the way that no task is *running* active on two members at once
/// and that no member's session failed for good.
pub fn wait_for(
    members: &mut [&mut Member],
    timeout: Duration,
    what: &str,
    done: impl Fn(&[&mut Member]) -> bool,
) -> Duration {
    let start = Instant::now();
    loop {
        for m in members.iter_mut() {
            m.reconcile();
            if let StreamsGroupState::Failed(e) = m.handle.state() {
                panic!("member {} failed while waiting for {what}: {e}", m.name);
            }
        }
        let mut seen = BTreeSet::new();
        for m in members.iter() {
            for t in m.running_active() {
                assert!(
                    seen.insert(t.clone()),
                    "task {t} active on two members at once"
                );
            }
        }
        if done(members) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}; assignments: {:?}, states {:?}",
            members.iter().map(|m| m.active()).collect::<Vec<_>>(),
            members
                .iter()
                .map(|m| state_name(&m.handle.state()))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
