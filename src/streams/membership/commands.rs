//! What the driver tells the state machine besides responses: commands and transport failures.

use crate::streams::offsets::StreamsTaskOffsets;
use crate::streams::task::StreamsTaskAssignment;

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

/// Inputs other than responses.
#[derive(Clone, Debug, PartialEq)]
pub enum MembershipCommand {
    /// A coordinator is known and connected; `api_version` is the negotiated
    /// `StreamsGroupHeartbeat` version, `broker` names it in errors (e.g. `"host:9092 (id 1)"`).
    CoordinatorReady {
        /// Broker description for errors.
        broker: String,
        /// Negotiated version (clamped to [`MAX_HEARTBEAT_VERSION`](super::MAX_HEARTBEAT_VERSION)).
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
