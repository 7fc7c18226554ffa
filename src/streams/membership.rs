//! The membership state machine of one Streams group member (sans-IO).
//!
//! [`StreamsMembership`] decides *what* to send and *when*; it never sends, never reads the
//! clock and never sleeps. The driver (the runtime thread or a blocking session) feeds it:
//!
//! ```text
//!   handle_command(now, cmd)        coordinator found/lost, join, tasks reconciled, leave, …
//!   handle_response(now, &resp)     a StreamsGroupHeartbeat response (error code included)
//!   handle_error(now, failure)      the connection failed / timed out / version unsupported
//! and drains:
//!   poll_request(now) -> Option<StreamsGroupHeartbeatRequest>   send it at api_version()
//!   poll_event()      -> Option<MembershipEvent>                 publish to the application
//!   poll_timeout()    -> Option<Instant>                         wake up then and poll again
//! ```
//!
//! After every `handle_*` call the driver calls `poll_request` until it returns `None`, drains
//! the events, then sleeps until `poll_timeout()` (or until I/O or a command arrives).
//!
//! ## States
//!
//! ```text
//!  Unjoined ──Join──► Joining ──response──► Reconciling ──tasks reconciled──► Acknowledging
//!                        ▲                     ▲    │                            │ ack sent
//!                        │ fenced (110/25)     │    └──── same target ───────► Stable
//!                        └─────────────── any in-group state ◄──new target──────┘
//!  any in-group state ──Leave──► Leaving ──leave answered / failed──► Left ──Join──► Joining
//!  any state ──fatal error──► Failed (terminal: no more requests)
//! ```
//!
//! ## Rules (Kafka's Java client, see `docs/kip1071-client-behaviour.md` §1–§9)
//!
//! * The member id is drawn once (22-char URL-safe base64 of 16 random bytes, never containing
//!   `-`) and kept across fencing, leaving and rejoining; only the epoch resets.
//! * The join heartbeat (epoch 0) carries the normalised topology, process id, endpoint, rack,
//!   client tags, rebalance timeout and three **empty** task lists. Later heartbeats carry only
//!   what changed: the three owned-task lists are sent together, and only when the owned tasks
//!   differ from the last ones sent. After any error the "last sent" memory is dropped, so the
//!   next heartbeat re-sends the owned tasks.
//! * Heartbeats are scheduled from the **send** time of the previous one; at most one is in
//!   flight (a leave heartbeat is the exception: it goes out at once). Joining, acknowledging a
//!   reconciliation, a change of owned tasks, a shutdown request and `HeartbeatNow` all send
//!   promptly instead of waiting for the interval; retry backoff still applies to them (Java
//!   lets joining/acknowledging bypass the backoff, which can spin on a loading coordinator).
//! * Errors: 15/16 → coordinator lost, retry as soon as a new one is known (no backoff);
//!   14 and other retriable codes → capped exponential backoff with jitter; 110/25 → fenced:
//!   all tasks lost, epoch 0, same member id, full rejoin, backoff reset; 29 → surfaced, state
//!   kept, retried with backoff; -1 (`UNKNOWN_SERVER_ERROR`) → retried with backoff up to
//!   [`MAX_UNKNOWN_SERVER_ERROR_RETRIES`] answers in a row (Java: fatal at once; see
//!   [`limits`]); anything else → [`MemberState::Failed`].
//! * The broker's heartbeat interval is used clamped into [`MIN_HEARTBEAT_INTERVAL`] ..=
//!   [`MAX_HEARTBEAT_INTERVAL`] (0, negative or huge values would spin or stop heartbeats); the
//!   first adjusted value is reported once ([`MembershipEvent::HeartbeatIntervalAdjusted`]).
//! * Leave: epoch -1 for a dynamic member, -2 for a static one ([`LeaveOperation`]); answered by
//!   anything (even `UNKNOWN_MEMBER_ID` or a transport failure) it counts as left; it is not
//!   retried. How it ended (answered, refused, sent but not answered, never sent) is kept in
//!   [`StreamsMembership::leave_outcome`], so a driver can report a leave that did not happen. `ShutdownApplication` is only set after an explicit request and then stays set on
//!   every later heartbeat, leave included.
//! * Versions: on v0 (brokers 4.1–4.3) the request never carries an instance id, task offsets
//!   or non-empty warm-up tasks; asking for static membership against such a broker fails with
//!   [`MembershipError::StaticMembershipUnsupported`] naming the broker.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::SeedableRng;

use super::assignment::{MergeOutcome, StreamsGroupSessionAssignment};
use super::offsets::StreamsTaskOffsets;
use super::task::{StreamsTaskAssignment, StreamsTaskError};
use super::topology::StreamsTopology;
use crate::protocol::api::streams_group_heartbeat as wire;

// Layout: this file holds the machine itself (its fields, construction, accessors and the
// commands that move it between states). The plain types it takes and gives are leaf modules
// that depend on nothing here (config, commands, events, error, state, ids, limits); the other
// modules are further `impl StreamsMembership` blocks, one per concern: request (what is sent
// and when), response (how an answer is applied), failure (error codes, transport failures,
// backoff, fencing) and leave.
mod commands;
mod config;
mod error;
mod events;
mod failure;
mod ids;
mod leave;
pub mod limits;
mod request;
mod response;
mod state;

pub use commands::{HeartbeatFailure, LeaveOperation, MembershipCommand};
pub use config::{MembershipConfig, RetryBackoff};
pub use error::MembershipError;
pub use events::{MembershipEvent, TasksLostReason};
pub use ids::{generate_member_id, random_process_id};
pub use state::MemberState;

pub use limits::{
    clamp_heartbeat_interval, LeaveOutcome, MAX_HEARTBEAT_INTERVAL,
    MAX_UNKNOWN_SERVER_ERROR_RETRIES, MIN_HEARTBEAT_INTERVAL,
};

/// `MemberEpoch` of a join heartbeat.
pub const JOIN_GROUP_MEMBER_EPOCH: i32 = 0;
/// `MemberEpoch` of a leave heartbeat of a dynamic member (or any member leaving for good).
pub const LEAVE_GROUP_MEMBER_EPOCH: i32 = -1;
/// `MemberEpoch` of a leave heartbeat of a static member that will come back.
pub const LEAVE_GROUP_STATIC_MEMBER_EPOCH: i32 = -2;
/// Highest `StreamsGroupHeartbeat` version this state machine knows how to fill.
pub const MAX_HEARTBEAT_VERSION: i16 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InFlight {
    Heartbeat,
    Leave,
    /// A heartbeat sent before the member left; its answer must not be taken for the answer
    /// to a later join.
    Stale,
}

#[derive(Clone, Debug)]
struct Coordinator {
    broker: String,
    api_version: i16,
}

#[derive(Clone, Copy, Debug)]
struct PendingLeave {
    epoch: i32,
    sent: bool,
}

/// The membership state machine of one Streams group member. See the module docs.
#[derive(Debug)]
pub struct StreamsMembership {
    config: MembershipConfig,
    member_id: String,
    rng: StdRng,
    state: MemberState,
    coordinator: Option<Coordinator>,
    /// The target from the broker (cumulative).
    assignment: StreamsGroupSessionAssignment,
    /// What the application says it owns.
    owned: StreamsTaskAssignment,
    /// The target (tasks, readiness) the application last reconciled to; `None` = nothing yet
    /// since joining, so even an empty first target must be acknowledged.
    acked: Option<(StreamsTaskAssignment, bool)>,
    /// Owned tasks as last sent; `None` forces sending them.
    last_sent_owned: Option<StreamsTaskAssignment>,
    /// The application's latest task offset sums (v1 brokers only).
    task_offsets: Option<StreamsTaskOffsets>,
    /// Offsets and end offsets as last sent; `None` forces sending them when next evaluated.
    last_sent_offsets: Option<Vec<wire::TaskOffset>>,
    last_sent_end_offsets: Option<Vec<wire::TaskOffset>>,
    /// When task offsets were last evaluated for sending (Java's `TaskOffsetIntervalMs` timer).
    offsets_sent_at: Option<Instant>,
    shutdown_requested: bool,
    leave: Option<PendingLeave>,
    in_flight: VecDeque<InFlight>,
    interval: Duration,
    last_send_at: Option<Instant>,
    send_asap: bool,
    backoff_attempts: u32,
    backoff_until: Option<Instant>,
    now: Option<Instant>,
    events: VecDeque<MembershipEvent>,
    failure: Option<MembershipError>,
    task_offset_interval_ms: i32,
    acceptable_recovery_lag: Option<i64>,
    topology_description_required: bool,
    /// How the last leave ended; `None` until the member leaves (cleared on join).
    leave_outcome: Option<LeaveOutcome>,
    /// The broker's message on a refused leave.
    leave_message: Option<String>,
    /// Whether an adjusted heartbeat interval was reported already (once per member).
    interval_adjustment_reported: bool,
    /// `UNKNOWN_SERVER_ERROR` answers in a row.
    unknown_server_errors: u32,
}
impl StreamsMembership {
    /// Creates a member in state [`MemberState::Unjoined`]. `seed` drives the member id and
    /// the backoff jitter; pass a random one in production (e.g. `rand::random()`), a fixed
    /// one in tests.
    pub fn new(mut config: MembershipConfig, seed: u64) -> Result<Self, MembershipError> {
        let invalid = |m: &str| Err(MembershipError::InvalidConfig(m.to_string()));
        if config.group_id.is_empty() {
            return invalid("group id must not be empty");
        }
        if config.process_id.is_empty() {
            return invalid("process id must not be empty");
        }
        if config.instance_id.as_deref() == Some("") {
            return invalid("instance id must not be empty (use None for a dynamic member)");
        }
        if config.rack_id.as_deref() == Some("") {
            return invalid("rack id must not be empty (use None for no rack)");
        }
        if config.rebalance_timeout_ms <= 0 {
            return invalid("rebalance timeout must be positive");
        }
        let b = &config.retry_backoff;
        if !(0.0..=1.0).contains(&b.jitter) || b.base > b.max {
            return invalid("retry backoff needs 0 <= jitter <= 1 and base <= max");
        }
        config.topology = config.topology.canonical()?;
        // Java sends client tags from a map; sorting keeps our join heartbeat deterministic.
        config.client_tags.sort();
        let mut rng = StdRng::seed_from_u64(seed);
        let member_id = generate_member_id(&mut rng);
        Ok(Self {
            config,
            member_id,
            rng,
            state: MemberState::Unjoined,
            coordinator: None,
            assignment: StreamsGroupSessionAssignment::new(),
            owned: StreamsTaskAssignment::new(),
            acked: None,
            last_sent_owned: None,
            task_offsets: None,
            last_sent_offsets: None,
            last_sent_end_offsets: None,
            offsets_sent_at: None,
            shutdown_requested: false,
            leave: None,
            in_flight: VecDeque::new(),
            interval: Duration::ZERO,
            last_send_at: None,
            send_asap: false,
            backoff_attempts: 0,
            backoff_until: None,
            now: None,
            events: VecDeque::new(),
            failure: None,
            task_offset_interval_ms: 0,
            acceptable_recovery_lag: None,
            topology_description_required: false,
            leave_outcome: None,
            leave_message: None,
            interval_adjustment_reported: false,
            unknown_server_errors: 0,
        })
    }

    /// The member id (fixed for the lifetime of this value).
    pub fn member_id(&self) -> &str {
        &self.member_id
    }

    /// The current state.
    pub fn state(&self) -> MemberState {
        self.state
    }

    /// The current member epoch (0 while joining or out of the group).
    pub fn member_epoch(&self) -> i32 {
        self.assignment.member_epoch
    }

    /// The cumulative target assignment.
    pub fn assignment(&self) -> &StreamsGroupSessionAssignment {
        &self.assignment
    }

    /// The tasks the application last reported as owned.
    pub fn owned_tasks(&self) -> &StreamsTaskAssignment {
        &self.owned
    }

    /// The normalised topology this member declares.
    pub fn topology(&self) -> &StreamsTopology {
        &self.config.topology
    }

    /// The `StreamsGroupHeartbeat` version to encode requests with, once a coordinator is known.
    pub fn api_version(&self) -> Option<i16> {
        self.coordinator.as_ref().map(|c| c.api_version)
    }

    /// Whether a coordinator is known.
    pub fn has_coordinator(&self) -> bool {
        self.coordinator.is_some()
    }

    /// Whether a request is awaiting its response.
    pub fn is_request_in_flight(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// The fatal error, once [`MemberState::Failed`].
    pub fn failure(&self) -> Option<&MembershipError> {
        self.failure.as_ref()
    }

    /// The heartbeat interval the broker asked for (0 before the first response).
    pub fn heartbeat_interval(&self) -> Duration {
        self.interval
    }

    /// `TaskOffsetIntervalMs` of the last response (0 if the broker does not use it).
    pub fn task_offset_interval_ms(&self) -> i32 {
        self.task_offset_interval_ms
    }

    /// The acceptable recovery lag of the last response; `None` if the broker does not
    /// support warm-ups (v1 value -1) or nothing was received yet.
    pub fn acceptable_recovery_lag(&self) -> Option<i64> {
        self.acceptable_recovery_lag
    }

    /// Whether the broker asked for a topology description (KIP-1331; may be ignored).
    pub fn topology_description_required(&self) -> bool {
        self.topology_description_required
    }

    /// How the last leave ended (`None` before the member left, and again once it rejoins).
    pub fn leave_outcome(&self) -> Option<LeaveOutcome> {
        self.leave_outcome
    }

    /// The broker's message when it refused the last leave ([`LeaveOutcome::Refused`]).
    pub fn leave_message(&self) -> Option<&str> {
        self.leave_message.as_deref()
    }

    /// Whether a shutdown of the whole application was requested by this member.
    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<MembershipEvent> {
        self.events.pop_front()
    }

    fn tick(&mut self, now: Instant) {
        // Instants only move forward here even if the caller's do not.
        self.now = Some(match self.now {
            Some(prev) if prev > now => prev,
            _ => now,
        });
    }

    fn set_state(&mut self, to: MemberState) {
        let from = self.state;
        if from != to {
            self.state = to;
            self.events
                .push_back(MembershipEvent::StateChanged { from, to });
        }
    }

    fn group(&self) -> String {
        self.config.group_id.clone()
    }

    /// Applies a command.
    pub fn handle_command(
        &mut self,
        now: Instant,
        command: MembershipCommand,
    ) -> Result<(), MembershipError> {
        self.tick(now);
        if let Some(f) = &self.failure {
            // Leaving or losing the coordinator after a failure is a harmless no-op, so that
            // a driver's shutdown path does not have to special-case it.
            return match command {
                MembershipCommand::Leave(_) | MembershipCommand::CoordinatorLost => Ok(()),
                _ => Err(MembershipError::AlreadyFailed(Box::new(f.clone()))),
            };
        }
        match command {
            MembershipCommand::CoordinatorReady {
                broker,
                api_version,
            } => {
                if api_version < 0 {
                    let e = MembershipError::UnsupportedVersion {
                        group: self.group(),
                        broker,
                        version: api_version,
                    };
                    self.fail(e.clone());
                    return Err(e);
                }
                let api_version = api_version.min(MAX_HEARTBEAT_VERSION);
                if api_version == 0 {
                    if let Some(instance_id) = self.config.instance_id.clone() {
                        let e = MembershipError::StaticMembershipUnsupported {
                            group: self.group(),
                            instance_id,
                            broker,
                        };
                        self.fail(e.clone());
                        return Err(e);
                    }
                }
                self.coordinator = Some(Coordinator {
                    broker,
                    api_version,
                });
                // The previous coordinator may never have seen our last heartbeat.
                self.send_asap = true;
            }
            MembershipCommand::CoordinatorLost => self.lose_coordinator(false),
            MembershipCommand::Join => {
                if matches!(self.state, MemberState::Unjoined | MemberState::Left) {
                    self.start_joining();
                }
            }
            MembershipCommand::TasksReconciled(owned) => self.tasks_reconciled(owned)?,
            MembershipCommand::AcknowledgeTarget => {
                let target = self.assignment.tasks.clone();
                self.tasks_reconciled(target)?;
            }
            MembershipCommand::ReportTaskOffsets(offsets) => {
                // A hot warm-up task is reason to tell the broker promptly (it may promote it).
                self.task_offsets = Some(offsets);
                if self.api_version().unwrap_or(0) >= 1 && self.has_hot_warmup_task() {
                    self.send_asap = true;
                }
            }
            MembershipCommand::HeartbeatNow => self.send_asap = true,
            MembershipCommand::RequestShutdownApplication => {
                self.shutdown_requested = true;
                self.send_asap = true;
            }
            MembershipCommand::Leave(op) => self.leave(op),
        }
        Ok(())
    }

    fn start_joining(&mut self) {
        self.assignment.clear_tasks();
        self.acked = None;
        self.forget_last_sent();
        self.leave = None;
        self.leave_outcome = None;
        self.leave_message = None;
        self.unknown_server_errors = 0;
        self.reset_backoff();
        self.send_asap = true;
        self.set_state(MemberState::Joining);
    }

    fn tasks_reconciled(&mut self, owned: StreamsTaskAssignment) -> Result<(), MembershipError> {
        for (task, _) in owned.iter() {
            if !self
                .config
                .topology
                .contains_subtopology(&task.subtopology_id)
            {
                return Err(MembershipError::InvalidOwnedTasks(
                    StreamsTaskError::UnknownSubtopology { task: task.clone() },
                ));
            }
        }
        if !self.state.is_in_group() {
            // Nothing to report to; keep the owned view consistent with "no tasks".
            return Ok(());
        }
        if owned != self.owned {
            self.owned = owned;
            self.send_asap = true;
        }
        let target = (
            self.assignment.tasks.clone(),
            self.assignment.is_group_ready,
        );
        if self.state == MemberState::Joining {
            return Ok(());
        }
        if self.owned == target.0 {
            let new_ack = self.acked.as_ref() != Some(&target);
            self.acked = Some(target);
            if self.state == MemberState::Reconciling || new_ack {
                self.send_asap = true;
                self.set_state(MemberState::Acknowledging);
            }
        } else if matches!(self.state, MemberState::Stable | MemberState::Acknowledging) {
            self.acked = None;
            self.set_state(MemberState::Reconciling);
        }
        Ok(())
    }

    fn release_tasks(&mut self, reason: TasksLostReason) {
        let tasks = std::mem::take(&mut self.owned);
        self.assignment.clear_tasks();
        self.acked = None;
        self.forget_last_sent();
        self.events
            .push_back(MembershipEvent::TasksLost { reason, tasks });
        self.events.push_back(MembershipEvent::AssignmentUpdated {
            assignment: self.assignment.clone(),
            outcome: MergeOutcome {
                tasks_changed: true,
                epoch_changed: true,
                ..MergeOutcome::default()
            },
        });
    }
}

#[cfg(test)]
mod tests;
