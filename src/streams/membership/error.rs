//! Errors of the membership state machine, each naming the group (and broker where known).

use std::time::Duration;

use crate::protocol::BrokerErrorKind;
use crate::streams::assignment::AssignmentError;
use crate::streams::task::StreamsTaskError;
use crate::streams::topology::TopologyError;

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
    /// Closing: the leave heartbeat was never sent
    /// ([`LeaveOutcome::NotSent`](super::LeaveOutcome::NotSent)).
    #[error("group {group}: left without telling the broker: the leave heartbeat was not sent ({reason}); the broker removes the member and hands its tasks to others only after the group's session timeout (streams.session.timeout.ms)")]
    LeaveNotSent {
        /// The group.
        group: String,
        /// Why (no coordinator known, and the last error seen).
        reason: String,
    },
    /// Closing: the leave heartbeat was sent but not answered
    /// ([`LeaveOutcome::NotAnswered`](super::LeaveOutcome::NotAnswered)).
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
    /// ([`LeaveOutcome::Refused`](super::LeaveOutcome::Refused)).
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
