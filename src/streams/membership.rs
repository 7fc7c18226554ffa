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
use rand::{Rng, RngCore, SeedableRng};

use super::assignment::{
    AssignmentDelta, AssignmentError, EndpointPartitionsDelta, MergeOutcome,
    StreamsGroupSessionAssignment, UserEndpoint,
};
use super::offsets::StreamsTaskOffsets;
use super::task::{StreamsTaskAssignment, StreamsTaskError, StreamsTaskRole, WireTaskIds};
use super::topology::{StreamsTopology, TopologyError};
use crate::protocol::api::streams_group_heartbeat::{
    self as wire, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
};
use crate::protocol::BrokerErrorKind;

pub mod limits;

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

/// Capped exponential retry backoff with jitter (Java `retry.backoff.ms`,
/// `retry.backoff.max.ms`, `RequestState.RETRY_BACKOFF_JITTER`).
#[derive(Clone, Debug, PartialEq)]
pub struct RetryBackoff {
    /// Delay after the first failure (default 100 ms).
    pub base: Duration,
    /// Upper bound of any delay (default 1000 ms).
    pub max: Duration,
    /// Relative jitter: each delay is multiplied by a factor in `[1 - jitter, 1 + jitter)`
    /// (default 0.2). Must be within `0.0..=1.0`.
    pub jitter: f64,
}

impl Default for RetryBackoff {
    fn default() -> Self {
        Self {
            base: Duration::from_millis(100),
            max: Duration::from_millis(1000),
            jitter: 0.2,
        }
    }
}

impl RetryBackoff {
    /// The delay after `attempts` earlier consecutive failures (0 for the first failure), with
    /// `unit` a uniform random number in `[0, 1)` choosing the jitter. Pure, so that the curve
    /// can be tested exactly.
    pub fn delay(&self, attempts: u32, unit: f64) -> Duration {
        let base = self.base.as_secs_f64();
        let max = self.max.as_secs_f64();
        // 2^attempts overflows nothing here: the exponent is capped long before f64 trouble.
        let term = base * 2f64.powi(attempts.min(62) as i32);
        let unit = if unit.is_finite() {
            unit.clamp(0.0, 1.0)
        } else {
            0.5
        };
        let factor = 1.0 - self.jitter + 2.0 * self.jitter * unit;
        let secs = (term * factor).min(max).max(0.0);
        Duration::from_secs_f64(secs)
    }
}

/// What the member declares about itself. Built with [`MembershipConfig::new`] and the
/// setters; checked by [`StreamsMembership::new`].
#[derive(Clone, Debug)]
pub struct MembershipConfig {
    /// The group id (Kafka Streams' `application.id`).
    pub group_id: String,
    /// The topology; normalised by [`StreamsMembership::new`].
    pub topology: StreamsTopology,
    /// Id of the process hosting this member (a UUID string in Java; shared by all members of
    /// one process). See [`random_process_id`].
    pub process_id: String,
    /// Interactive-query endpoint (`application.server`).
    pub user_endpoint: Option<UserEndpoint>,
    /// Rack id (`client.rack`).
    pub rack_id: Option<String>,
    /// Client tags for rack-aware standby placement (`client.tag.*`).
    pub client_tags: Vec<(String, String)>,
    /// Static membership instance id (`group.instance.id`); needs a v1 (Kafka 4.4+) broker.
    pub instance_id: Option<String>,
    /// `RebalanceTimeoutMs` sent on join (Java: `max.poll.interval.ms`, default 300000).
    pub rebalance_timeout_ms: i32,
    /// Retry backoff for failed heartbeats.
    pub retry_backoff: RetryBackoff,
}

impl MembershipConfig {
    /// A dynamic member with no endpoint, rack or tags, a 300 s rebalance timeout and the
    /// default backoff.
    pub fn new(
        group_id: impl Into<String>,
        topology: StreamsTopology,
        process_id: impl Into<String>,
    ) -> Self {
        Self {
            group_id: group_id.into(),
            topology,
            process_id: process_id.into(),
            user_endpoint: None,
            rack_id: None,
            client_tags: Vec::new(),
            instance_id: None,
            rebalance_timeout_ms: 300_000,
            retry_backoff: RetryBackoff::default(),
        }
    }

    /// Sets the interactive-query endpoint.
    pub fn user_endpoint(mut self, endpoint: UserEndpoint) -> Self {
        self.user_endpoint = Some(endpoint);
        self
    }

    /// Sets the rack id.
    pub fn rack_id(mut self, rack: impl Into<String>) -> Self {
        self.rack_id = Some(rack.into());
        self
    }

    /// Adds a client tag.
    pub fn client_tag(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.client_tags.push((key.into(), value.into()));
        self
    }

    /// Makes the member static.
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        self.instance_id = Some(id.into());
        self
    }

    /// Sets the rebalance timeout.
    pub fn rebalance_timeout_ms(mut self, ms: i32) -> Self {
        self.rebalance_timeout_ms = ms;
        self
    }

    /// Sets the retry backoff.
    pub fn retry_backoff(mut self, backoff: RetryBackoff) -> Self {
        self.retry_backoff = backoff;
        self
    }
}

/// The member's state. See the module docs for the diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemberState {
    /// Not in the group and not trying to join (initial state).
    Unjoined,
    /// Sending join heartbeats (epoch 0) until the broker answers.
    Joining,
    /// The broker's target differs from what the application acknowledged; waiting for the
    /// application to reconcile its tasks.
    Reconciling,
    /// The application reconciled; the acknowledging heartbeat is due.
    Acknowledging,
    /// Owned tasks match the target; heartbeating at the broker's interval.
    Stable,
    /// A leave heartbeat is pending or in flight.
    Leaving,
    /// Left the group (can join again with the same member id).
    Left,
    /// A fatal error happened; no further requests. See [`StreamsMembership::failure`].
    Failed,
}

impl MemberState {
    /// Whether the member counts as part of the group (heartbeats flow).
    pub fn is_in_group(self) -> bool {
        matches!(
            self,
            MemberState::Joining
                | MemberState::Reconciling
                | MemberState::Acknowledging
                | MemberState::Stable
        )
    }
}

/// How to leave (Java `CloseOptions.GroupMembershipOperation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaveOperation {
    /// Dynamic member: leave (-1). Static member: leave temporarily (-2), keeping its place
    /// until the session times out.
    Default,
    /// Leave for good (-1), also for a static member.
    LeaveGroup,
    /// Dynamic member: send nothing (the broker expires it after the session timeout).
    /// Static member: as `Default` (-2).
    RemainInGroup,
}

/// A transport-level failure of a heartbeat (no response was decoded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeartbeatFailure {
    /// The connection to the coordinator broke before the response arrived.
    Disconnected(String),
    /// No response within the request timeout.
    TimedOut,
    /// The broker does not support `StreamsGroupHeartbeat` at any version we speak.
    UnsupportedVersion,
    /// Anything else that should stop the member (e.g. authentication failed).
    Fatal(String),
}

/// Why tasks were lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TasksLostReason {
    /// The broker fenced the member (`FENCED_MEMBER_EPOCH` / `UNKNOWN_MEMBER_ID`); it rejoins.
    Fenced,
    /// The member is leaving.
    Leaving,
    /// The member failed fatally.
    Failed,
}

/// Something the application (or the driver) must learn about.
#[derive(Clone, Debug, PartialEq)]
pub enum MembershipEvent {
    /// The state changed.
    StateChanged {
        /// Old state.
        from: MemberState,
        /// New state.
        to: MemberState,
    },
    /// The cumulative assignment (the target) changed; publish this snapshot.
    AssignmentUpdated {
        /// The full new snapshot.
        assignment: StreamsGroupSessionAssignment,
        /// What changed.
        outcome: MergeOutcome,
    },
    /// The application must drop these tasks at once, without committing (or, for
    /// [`TasksLostReason::Leaving`], after a final commit if it still can).
    TasksLost {
        /// Why.
        reason: TasksLostReason,
        /// The tasks the application owned.
        tasks: StreamsTaskAssignment,
    },
    /// The coordinator is unknown now; the driver must find it again and then send
    /// [`MembershipCommand::CoordinatorReady`].
    CoordinatorLost,
    /// `TOPIC_AUTHORIZATION_FAILED`: the member stays and retries, but the application should
    /// know (it recovers once ACLs are fixed).
    TopicAuthorizationFailed {
        /// The broker's message.
        message: Option<String>,
    },
    /// The member failed for good.
    Failed(MembershipError),
    /// The broker asked for a heartbeat interval outside [`MIN_HEARTBEAT_INTERVAL`] ..=
    /// [`MAX_HEARTBEAT_INTERVAL`]; the member uses `used` instead. Reported once per member
    /// (the first adjusted value), so that a driver can warn once.
    HeartbeatIntervalAdjusted {
        /// What the broker sent (`HeartbeatIntervalMs`).
        received_ms: i32,
        /// The interval the member uses.
        used: Duration,
    },
    /// The member left the group (see [`StreamsMembership::leave_outcome`] for how).
    Left {
        /// The error the leave heartbeat got, if any (`UNKNOWN_MEMBER_ID` and
        /// `FENCED_MEMBER_EPOCH` are not reported: the member is gone either way).
        error: Option<BrokerErrorKind>,
    },
}

/// Inputs other than responses.
#[derive(Clone, Debug, PartialEq)]
pub enum MembershipCommand {
    /// A coordinator is known and connected; `api_version` is the negotiated
    /// `StreamsGroupHeartbeat` version, `broker` names it in errors (e.g. `"host:9092 (id 1)"`).
    CoordinatorReady {
        /// Broker description for errors.
        broker: String,
        /// Negotiated version (clamped to [`MAX_HEARTBEAT_VERSION`]).
        api_version: i16,
    },
    /// The coordinator connection is gone; nothing in flight will be answered.
    CoordinatorLost,
    /// Start (or restart after leaving) joining the group.
    Join,
    /// The application now owns exactly these tasks (a task-state change). Sent in the next
    /// heartbeat, promptly.
    TasksReconciled(StreamsTaskAssignment),
    /// The application's current task offset sums (changelog offsets per task) and end
    /// offsets; sent to brokers that accept them (StreamsGroupHeartbeat v1, Kafka 4.4+) on the
    /// join, when the owned tasks change, every `TaskOffsetIntervalMs`, or while a warm-up
    /// task is within the acceptable recovery lag. Older brokers never receive them.
    ReportTaskOffsets(StreamsTaskOffsets),
    /// Shorthand for `TasksReconciled(current target tasks)`.
    AcknowledgeTarget,
    /// Send a heartbeat as soon as allowed (not before the backoff, not while one is in flight).
    HeartbeatNow,
    /// Ask every member of the application to shut down (sticky).
    RequestShutdownApplication,
    /// Leave the group.
    Leave(LeaveOperation),
}

/// Errors of the membership state machine.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MembershipError {
    /// The configuration is unusable.
    #[error("invalid membership configuration: {0}")]
    InvalidConfig(String),
    /// The topology is invalid.
    #[error("invalid topology: {0}")]
    InvalidTopology(#[from] TopologyError),
    /// The broker answered with an error that stops the member.
    #[error("group {group}: StreamsGroupHeartbeat failed with {error}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker {
        /// The group.
        group: String,
        /// The error.
        error: BrokerErrorKind,
        /// The broker's message.
        message: Option<String>,
    },
    /// The broker sent an inconsistent assignment (rejected whole).
    #[error("group {group}: invalid assignment from the broker: {source}")]
    InvalidAssignment {
        /// The group.
        group: String,
        /// What was wrong.
        source: AssignmentError,
    },
    /// Static membership was configured but the coordinator only speaks v0 (Kafka < 4.4).
    #[error("group {group}: static membership (instance id {instance_id:?}) needs StreamsGroupHeartbeat v1 (Kafka 4.4+), but broker {broker} only supports v0")]
    StaticMembershipUnsupported {
        /// The group.
        group: String,
        /// The configured instance id.
        instance_id: String,
        /// The broker.
        broker: String,
    },
    /// The broker does not support the Streams group protocol at a usable version.
    #[error(
        "group {group}: broker {broker} does not support StreamsGroupHeartbeat (version {version})"
    )]
    UnsupportedVersion {
        /// The group.
        group: String,
        /// The broker (empty if unknown).
        broker: String,
        /// The version offered or tried.
        version: i16,
    },
    /// A fatal transport failure.
    #[error("group {group}: heartbeat transport failed: {message}")]
    Transport {
        /// The group.
        group: String,
        /// What failed.
        message: String,
    },
    /// The application reported owned tasks that cannot be right.
    #[error("invalid owned tasks: {0}")]
    InvalidOwnedTasks(StreamsTaskError),
    /// The member has failed; commands are refused.
    #[error("the member has failed: {0}")]
    AlreadyFailed(Box<MembershipError>),
    /// Closing: the leave heartbeat was never sent ([`LeaveOutcome::NotSent`]).
    #[error("group {group}: left without telling the broker: the leave heartbeat was not sent ({reason}); the broker removes the member and hands its tasks to others only after the group's session timeout (streams.session.timeout.ms)")]
    LeaveNotSent {
        /// The group.
        group: String,
        /// Why (no coordinator known, and the last error seen).
        reason: String,
    },
    /// Closing: the leave heartbeat was sent but not answered ([`LeaveOutcome::NotAnswered`]).
    #[error("group {group}: the leave heartbeat was sent but not answered within {} ms ({reason}); if the broker did not get it, it removes the member only after the group's session timeout (streams.session.timeout.ms); a longer close timeout gives a slow coordinator more time", waited.as_millis())]
    LeaveNotAnswered {
        /// The group.
        group: String,
        /// How long the close waited, from its start.
        waited: Duration,
        /// What happened to the leave (connection failure, timeout).
        reason: String,
    },
    /// Closing: the broker answered the leave heartbeat with an error
    /// ([`LeaveOutcome::Refused`]).
    #[error("group {group}: the broker answered the leave heartbeat with {error}{}; the member stopped heartbeating, so the broker removes it after the group's session timeout", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    LeaveRefused {
        /// The group.
        group: String,
        /// The error.
        error: BrokerErrorKind,
        /// The broker's message.
        message: Option<String>,
    },
}

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

const BASE64_URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64_url_no_pad(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            let idx = (n >> (18 - 6 * i)) & 63;
            out.push(char::from(BASE64_URL[idx as usize]));
        }
    }
    out
}

/// Draws a member id the way Java's `Uuid.randomUuid().toString()` looks: URL-safe base64
/// without padding of 16 random bytes (22 characters), redrawn while it contains a `-` (Java
/// redraws ids starting with `-`, which trip up command-line tools; avoiding `-` everywhere
/// is a superset of that).
pub fn generate_member_id<R: RngCore + ?Sized>(rng: &mut R) -> String {
    loop {
        let mut bytes = [0u8; 16];
        rng.fill_bytes(&mut bytes);
        let id = base64_url_no_pad(&bytes);
        if !id.contains('-') {
            return id;
        }
    }
}

/// A random version-4 UUID in the standard 36-character form, as Java's `UUID.randomUUID()`
/// gives for Kafka Streams' process id.
pub fn random_process_id<R: RngCore + ?Sized>(rng: &mut R) -> String {
    let mut b = [0u8; 16];
    rng.fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn to_wire_tasks(list: WireTaskIds) -> Vec<wire::TaskIds> {
    list.into_iter()
        .map(|(subtopology_id, partitions)| wire::TaskIds {
            subtopology_id,
            partitions,
        })
        .collect()
}

fn from_wire_tasks(list: &Option<Vec<wire::TaskIds>>) -> Option<WireTaskIds> {
    list.as_ref().map(|v| {
        v.iter()
            .map(|t| (t.subtopology_id.clone(), t.partitions.clone()))
            .collect()
    })
}

fn to_wire_topology(t: &StreamsTopology) -> wire::Topology {
    let info = |i: &super::topology::TopicInfo| wire::TopicInfo {
        name: i.name.clone(),
        partitions: i.partitions,
        replication_factor: i.replication_factor,
        topic_configs: i
            .topic_configs
            .iter()
            .map(|(k, v)| wire::KeyValue {
                key: k.clone(),
                value: v.clone(),
            })
            .collect(),
    };
    wire::Topology {
        // Java's StreamsRebalanceData.topologyEpoch() is always 0 (topology updates are not
        // supported by brokers yet).
        epoch: 0,
        subtopologies: t
            .subtopologies
            .iter()
            .map(|s| wire::Subtopology {
                subtopology_id: s.id.clone(),
                source_topics: s.source_topics.clone(),
                source_topic_regex: Vec::new(),
                state_changelog_topics: s.state_changelog_topics.iter().map(info).collect(),
                repartition_sink_topics: s.repartition_sink_topics.clone(),
                repartition_source_topics: s.repartition_source_topics.iter().map(info).collect(),
                copartition_groups: s
                    .copartition_groups
                    .iter()
                    .map(|g| wire::CopartitionGroup {
                        source_topics: g.source_topics.clone(),
                        source_topic_regex: Vec::new(),
                        repartition_source_topics: g.repartition_source_topics.clone(),
                    })
                    .collect(),
            })
            .collect(),
    }
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

    fn leave(&mut self, op: LeaveOperation) {
        if !self.state.is_in_group() {
            return;
        }
        let is_static = self.config.instance_id.is_some();
        let epoch = match (op, is_static) {
            (LeaveOperation::LeaveGroup, _) | (LeaveOperation::Default, false) => {
                Some(LEAVE_GROUP_MEMBER_EPOCH)
            }
            (LeaveOperation::Default, true) | (LeaveOperation::RemainInGroup, true) => {
                Some(LEAVE_GROUP_STATIC_MEMBER_EPOCH)
            }
            (LeaveOperation::RemainInGroup, false) => None,
        };
        self.release_tasks(TasksLostReason::Leaving);
        self.mark_in_flight_stale();
        match epoch {
            Some(epoch) if self.coordinator.is_some() => {
                self.leave = Some(PendingLeave { epoch, sent: false });
                self.set_state(MemberState::Leaving);
            }
            // Nobody to send it to (Java: leave skipped, `onHeartbeatRequestSkipped`).
            Some(_) => self.finish_leave(LeaveOutcome::NotSent),
            // No leave heartbeat wanted.
            None => self.finish_leave(LeaveOutcome::Skipped),
        }
    }

    fn mark_in_flight_stale(&mut self) {
        for f in self.in_flight.iter_mut() {
            if *f == InFlight::Heartbeat {
                *f = InFlight::Stale;
            }
        }
    }

    fn finish_leave(&mut self, outcome: LeaveOutcome) {
        let error = match outcome {
            LeaveOutcome::Refused(e) => Some(e),
            _ => None,
        };
        self.leave_outcome = Some(outcome);
        self.mark_in_flight_stale();
        self.leave = None;
        self.assignment.member_epoch = 0;
        self.forget_last_sent();
        self.set_state(MemberState::Left);
        self.events.push_back(MembershipEvent::Left { error });
    }

    fn lose_coordinator(&mut self, with_backoff: bool) {
        self.in_flight.clear();
        self.forget_last_sent();
        if self.coordinator.take().is_some() {
            self.events.push_back(MembershipEvent::CoordinatorLost);
        }
        if self.state == MemberState::Leaving {
            // Either the leave was in flight (fire and forget) or can no longer be sent.
            let outcome = match self.leave {
                Some(PendingLeave { sent: true, .. }) => LeaveOutcome::NotAnswered,
                _ => LeaveOutcome::NotSent,
            };
            self.finish_leave(outcome);
            return;
        }
        self.send_asap = true;
        if with_backoff {
            self.backoff();
        } else {
            self.reset_backoff();
        }
    }

    fn reset_backoff(&mut self) {
        self.backoff_attempts = 0;
        self.backoff_until = None;
    }

    fn backoff(&mut self) {
        let unit: f64 = self.rng.random();
        let delay = self.config.retry_backoff.delay(self.backoff_attempts, unit);
        self.backoff_attempts = self.backoff_attempts.saturating_add(1);
        self.backoff_until = self.now.map(|n| n + delay);
        // A failure zeroes the heartbeat timer: the retry is gated by the backoff only.
        self.send_asap = true;
    }

    fn fail(&mut self, error: MembershipError) {
        if self.failure.is_some() {
            return;
        }
        if !self.owned.is_empty() || !self.assignment.tasks.is_empty() {
            self.release_tasks(TasksLostReason::Failed);
        }
        self.in_flight.clear();
        self.leave = None;
        self.failure = Some(error.clone());
        self.set_state(MemberState::Failed);
        self.events.push_back(MembershipEvent::Failed(error));
    }

    fn fence(&mut self) {
        self.release_tasks(TasksLostReason::Fenced);
        self.reset_backoff();
        self.send_asap = true;
        self.set_state(MemberState::Joining);
    }

    /// The instant at which `poll_request` will next produce a request, if one is planned.
    fn next_send_at(&self) -> Option<Instant> {
        let now = self.now?;
        self.coordinator.as_ref()?;
        if self.state == MemberState::Leaving {
            return match self.leave {
                Some(PendingLeave { sent: false, .. }) => Some(now),
                _ => None,
            };
        }
        if !self.state.is_in_group() || !self.in_flight.is_empty() {
            return None;
        }
        let prompt = self.send_asap
            || matches!(
                self.state,
                MemberState::Joining | MemberState::Acknowledging
            )
            || self.last_send_at.is_none();
        let due = match (prompt, self.last_send_at) {
            (false, Some(sent)) => sent + self.interval,
            _ => now,
        };
        Some(match self.backoff_until {
            Some(b) if b > due => b,
            _ => due,
        })
    }

    /// When the driver should call [`poll_request`](Self::poll_request) next (it may be in the
    /// past, meaning "now"). `None`: nothing is scheduled until an input arrives.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.next_send_at()
    }

    /// The next heartbeat to send, if one is due at `now`. Encode it with
    /// [`api_version`](Self::api_version).
    pub fn poll_request(&mut self, now: Instant) -> Option<StreamsGroupHeartbeatRequest> {
        self.tick(now);
        let at = self.next_send_at()?;
        if at > now {
            return None;
        }
        let version = self.api_version()?;
        if self.state == MemberState::Leaving {
            let leave = self.leave.as_mut()?;
            leave.sent = true;
            let epoch = leave.epoch;
            self.in_flight.push_back(InFlight::Leave);
            self.last_send_at = Some(now);
            return Some(self.base_request(version, epoch));
        }
        // Until the broker hands out a positive epoch, every heartbeat is a join: a request
        // at epoch 0 must carry the topology and empty task lists (the broker rejects a
        // delta at epoch 0), even if an answer at epoch 0 moved the state on. A successful
        // answer with a negative epoch (a broker bug) is recovered from the same way.
        let req = if self.state == MemberState::Joining || self.assignment.member_epoch <= 0 {
            self.join_request(version)
        } else {
            self.delta_request(version, now)
        };
        self.in_flight.push_back(InFlight::Heartbeat);
        self.last_send_at = Some(now);
        self.send_asap = false;
        if self.state == MemberState::Acknowledging {
            self.set_state(MemberState::Stable);
        }
        Some(req)
    }

    fn base_request(&self, version: i16, epoch: i32) -> StreamsGroupHeartbeatRequest {
        StreamsGroupHeartbeatRequest {
            group_id: self.config.group_id.clone(),
            member_id: self.member_id.clone(),
            member_epoch: epoch,
            endpoint_information_epoch: self.assignment.endpoint_information_epoch,
            // v0 brokers reject any instance id; static + v0 never gets this far.
            instance_id: if version >= 1 {
                self.config.instance_id.clone()
            } else {
                None
            },
            shutdown_application: self.shutdown_requested,
            ..StreamsGroupHeartbeatRequest::default()
        }
    }

    fn join_request(&mut self, version: i16) -> StreamsGroupHeartbeatRequest {
        let mut req = self.base_request(version, JOIN_GROUP_MEMBER_EPOCH);
        req.topology = Some(to_wire_topology(&self.config.topology));
        req.rebalance_timeout_ms = self.config.rebalance_timeout_ms;
        req.process_id = Some(self.config.process_id.clone());
        req.user_endpoint = self.config.user_endpoint.as_ref().map(|e| wire::Endpoint {
            host: e.host.clone(),
            port: e.port,
        });
        req.rack_id = self.config.rack_id.clone();
        req.client_tags = Some(
            self.config
                .client_tags
                .iter()
                .map(|(k, v)| wire::KeyValue {
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect(),
        );
        req.active_tasks = Some(Vec::new());
        req.standby_tasks = Some(Vec::new());
        req.warmup_tasks = Some(Vec::new());
        // As in Java, the join's empty lists are not "last sent": the first heartbeat after the
        // join reports the owned tasks.
        self.forget_last_sent();
        if version >= 1 {
            // The join carries the full current sums, which become "last sent".
            if let Some(offsets) = &self.task_offsets {
                req.task_offsets = Some(offsets.to_wire(false));
                req.task_end_offsets = Some(offsets.to_wire(true));
                self.last_sent_offsets = req.task_offsets.clone();
                self.last_sent_end_offsets = req.task_end_offsets.clone();
                self.offsets_sent_at = self.now;
            }
        }
        req
    }

    /// Java's rule (`StreamsGroupHeartbeatRequestManager`): offsets are evaluated when the
    /// owned tasks change, when `TaskOffsetIntervalMs` has passed since the last evaluation,
    /// or while a warm-up task is hot; each list is then sent only if it differs from the
    /// last one sent.
    fn add_task_offsets(
        &mut self,
        req: &mut StreamsGroupHeartbeatRequest,
        owned_changed: bool,
        now: Instant,
    ) {
        let Some(offsets) = &self.task_offsets else {
            return;
        };
        let interval =
            Duration::from_millis(u64::try_from(self.task_offset_interval_ms).unwrap_or(0));
        let interval_due = !interval.is_zero()
            && self
                .offsets_sent_at
                .is_none_or(|at| now.saturating_duration_since(at) >= interval);
        if !(owned_changed || interval_due || self.has_hot_warmup_task()) {
            return;
        }
        let sums = offsets.to_wire(false);
        let ends = offsets.to_wire(true);
        if self.last_sent_offsets.as_ref() != Some(&sums) {
            req.task_offsets = Some(sums.clone());
            self.last_sent_offsets = Some(sums);
        }
        if self.last_sent_end_offsets.as_ref() != Some(&ends) {
            req.task_end_offsets = Some(ends.clone());
            self.last_sent_end_offsets = Some(ends);
        }
        self.offsets_sent_at = Some(now);
    }

    /// A warm-up task whose lag (end offset minus offset) is within the broker's
    /// `AcceptableRecoveryLag`.
    fn has_hot_warmup_task(&self) -> bool {
        let (Some(lag), Some(offsets)) = (self.acceptable_recovery_lag, &self.task_offsets) else {
            return false;
        };
        self.owned
            .tasks_with_role(StreamsTaskRole::Warmup)
            .any(|task| offsets.lag(task).is_some_and(|l| l <= lag))
    }

    /// After any error (and on rejoin or leave) the next heartbeat re-sends everything.
    fn forget_last_sent(&mut self) {
        self.last_sent_owned = None;
        self.last_sent_offsets = None;
        self.last_sent_end_offsets = None;
    }

    fn delta_request(&mut self, version: i16, now: Instant) -> StreamsGroupHeartbeatRequest {
        let mut req = self.base_request(version, self.assignment.member_epoch);
        let owned_changed = self.last_sent_owned.as_ref() != Some(&self.owned);
        if version >= 1 {
            self.add_task_offsets(&mut req, owned_changed, now);
        }
        if owned_changed {
            req.active_tasks = Some(to_wire_tasks(self.owned.to_wire(StreamsTaskRole::Active)));
            req.standby_tasks = Some(to_wire_tasks(self.owned.to_wire(StreamsTaskRole::Standby)));
            req.warmup_tasks = Some(if version >= 1 {
                to_wire_tasks(self.owned.to_wire(StreamsTaskRole::Warmup))
            } else {
                // v0 brokers reject non-empty warm-up lists (and never assign warm-ups).
                Vec::new()
            });
            self.last_sent_owned = Some(self.owned.clone());
        }
        req
    }

    /// Handles a decoded response to the oldest request in flight.
    pub fn handle_response(&mut self, now: Instant, response: &StreamsGroupHeartbeatResponse) {
        self.tick(now);
        let Some(kind) = self.in_flight.pop_front() else {
            // Nothing was asked (e.g. the driver delivered a response from a connection we
            // already declared lost): ignore.
            return;
        };
        let error = response.error();
        if kind == InFlight::Stale {
            return;
        }
        if kind == InFlight::Leave {
            let outcome = match error {
                BrokerErrorKind::None
                | BrokerErrorKind::UnknownMemberId
                | BrokerErrorKind::FencedMemberEpoch => LeaveOutcome::Left,
                other => LeaveOutcome::Refused(other),
            };
            if self.state == MemberState::Leaving {
                self.finish_leave(outcome);
                if !outcome.is_confirmed() {
                    self.leave_message = response.error_message.clone();
                }
            }
            return;
        }
        if !self.state.is_in_group() {
            // Answers to heartbeats sent before a leave, a failure or a fence-and-rejoin are
            // stale.
            return;
        }
        if !error.is_none() {
            self.handle_error_response(error, response.error_message.clone());
            return;
        }
        self.handle_success(response);
    }

    fn handle_error_response(&mut self, error: BrokerErrorKind, message: Option<String>) {
        self.forget_last_sent();
        match error {
            BrokerErrorKind::NotCoordinator | BrokerErrorKind::CoordinatorNotAvailable => {
                self.lose_coordinator(false);
            }
            BrokerErrorKind::FencedMemberEpoch | BrokerErrorKind::UnknownMemberId => self.fence(),
            BrokerErrorKind::TopicAuthorizationFailed => {
                self.events
                    .push_back(MembershipEvent::TopicAuthorizationFailed { message });
                self.backoff();
            }
            e if e.is_retriable() => self.backoff(),
            BrokerErrorKind::UnknownServerError
                if self.unknown_server_errors < MAX_UNKNOWN_SERVER_ERROR_RETRIES =>
            {
                // A transient broker fault (see `limits`): retry, but not forever.
                self.unknown_server_errors += 1;
                self.backoff();
            }
            BrokerErrorKind::UnknownServerError => self.fail(MembershipError::Broker {
                group: self.group(),
                error,
                message: Some(format!(
                    "{} (answered {} times in a row, retried with backoff; see the broker's \
                     log for the exception behind it)",
                    message.as_deref().unwrap_or("no message"),
                    self.unknown_server_errors + 1
                )),
            }),
            e => self.fail(MembershipError::Broker {
                group: self.group(),
                error: e,
                message,
            }),
        }
    }

    fn handle_success(&mut self, response: &StreamsGroupHeartbeatResponse) {
        let version = self.api_version().unwrap_or(0);
        let delta = AssignmentDelta {
            member_epoch: response.member_epoch,
            heartbeat_interval_ms: response.heartbeat_interval_ms,
            endpoint_information_epoch: response.endpoint_information_epoch,
            active: from_wire_tasks(&response.active_tasks),
            standby: from_wire_tasks(&response.standby_tasks),
            warmup: from_wire_tasks(&response.warmup_tasks),
            statuses: response.status.as_ref().map(|v| {
                v.iter()
                    .map(|s| (s.status_code, s.status_detail.clone()))
                    .collect()
            }),
            partitions_by_user_endpoint: response.partitions_by_user_endpoint.as_ref().map(|v| {
                v.iter()
                    .map(|e| EndpointPartitionsDelta {
                        endpoint: UserEndpoint::new(
                            e.user_endpoint.host.clone(),
                            e.user_endpoint.port,
                        ),
                        active: e
                            .active_partitions
                            .iter()
                            .map(|tp| (tp.topic.clone(), tp.partitions.clone()))
                            .collect(),
                        standby: e
                            .standby_partitions
                            .iter()
                            .map(|tp| (tp.topic.clone(), tp.partitions.clone()))
                            .collect(),
                    })
                    .collect()
            }),
        };
        let outcome = match self.assignment.apply(&delta, &self.config.topology) {
            Ok(o) => o,
            Err(source) => {
                // Java fails the member on an unknown subtopology or inconsistent lists; the
                // previous snapshot stays untouched (apply is all or nothing).
                self.fail(MembershipError::InvalidAssignment {
                    group: self.group(),
                    source,
                });
                return;
            }
        };
        self.reset_backoff();
        self.unknown_server_errors = 0;
        let (interval, adjusted) = clamp_heartbeat_interval(response.heartbeat_interval_ms);
        self.interval = interval;
        if adjusted && !self.interval_adjustment_reported {
            self.interval_adjustment_reported = true;
            self.events
                .push_back(MembershipEvent::HeartbeatIntervalAdjusted {
                    received_ms: response.heartbeat_interval_ms,
                    used: interval,
                });
        }
        self.task_offset_interval_ms = response.task_offset_interval_ms;
        self.acceptable_recovery_lag = response.recovery_lag(version);
        self.topology_description_required = response.topology_description_required;

        let was_joining = self.state == MemberState::Joining;
        let target = (
            self.assignment.tasks.clone(),
            self.assignment.is_group_ready,
        );
        if self.acked.as_ref() != Some(&target) {
            self.set_state(MemberState::Reconciling);
        } else if matches!(self.state, MemberState::Joining | MemberState::Reconciling) {
            self.set_state(MemberState::Stable);
        }
        if outcome.any() || was_joining {
            self.events.push_back(MembershipEvent::AssignmentUpdated {
                assignment: self.assignment.clone(),
                outcome,
            });
        }
    }

    /// Handles a transport failure of the connection to the coordinator. Every request in
    /// flight on it is considered failed (call once per failure, not once per request).
    pub fn handle_error(&mut self, now: Instant, failure: HeartbeatFailure) {
        self.tick(now);
        if self.failure.is_some() {
            return;
        }
        let had_leave = self.in_flight.contains(&InFlight::Leave);
        if self.state == MemberState::Leaving && had_leave {
            // Fire and forget: a failed leave is not retried.
            self.in_flight.clear();
            self.finish_leave(LeaveOutcome::NotAnswered);
            return;
        }
        self.in_flight.clear();
        self.forget_last_sent();
        match failure {
            HeartbeatFailure::Disconnected(_) | HeartbeatFailure::TimedOut => {
                self.lose_coordinator(true);
            }
            HeartbeatFailure::UnsupportedVersion => {
                let (broker, version) = self
                    .coordinator
                    .as_ref()
                    .map(|c| (c.broker.clone(), c.api_version))
                    .unwrap_or_default();
                self.fail(MembershipError::UnsupportedVersion {
                    group: self.group(),
                    broker,
                    version,
                });
            }
            HeartbeatFailure::Fatal(message) => self.fail(MembershipError::Transport {
                group: self.group(),
                message,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_known_vectors() {
        assert_eq!(base64_url_no_pad(b""), "");
        assert_eq!(base64_url_no_pad(b"f"), "Zg");
        assert_eq!(base64_url_no_pad(b"fo"), "Zm8");
        assert_eq!(base64_url_no_pad(b"foo"), "Zm9v");
        assert_eq!(base64_url_no_pad(&[0xfb, 0xff]), "-_8");
        assert_eq!(base64_url_no_pad(&[0u8; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
    }

    #[test]
    fn backoff_curve() {
        let b = RetryBackoff::default();
        assert_eq!(b.delay(0, 0.5), Duration::from_millis(100));
        assert_eq!(b.delay(1, 0.5), Duration::from_millis(200));
        assert_eq!(b.delay(3, 0.5), Duration::from_millis(800));
        assert_eq!(b.delay(4, 0.5), Duration::from_millis(1000));
        assert_eq!(b.delay(400, 0.99), Duration::from_millis(1000));
        assert_eq!(b.delay(0, 0.0), Duration::from_millis(80));
        let hi = b.delay(0, 0.999_999);
        assert!(hi > Duration::from_millis(119) && hi < Duration::from_millis(120));
        assert_eq!(b.delay(0, f64::NAN), Duration::from_millis(100));
    }

    #[test]
    fn process_id_is_a_v4_uuid() {
        let mut rng = StdRng::seed_from_u64(7);
        let id = random_process_id(&mut rng);
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
        assert_eq!(id.matches('-').count(), 4);
    }
}
