//! What the state machine tells the driver and the application: [`MembershipEvent`]s.

use std::time::Duration;

use super::error::MembershipError;
use super::state::MemberState;
use crate::protocol::BrokerErrorKind;
use crate::streams::assignment::{MergeOutcome, StreamsGroupSessionAssignment};
use crate::streams::task::StreamsTaskAssignment;

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
    /// [`MembershipCommand::CoordinatorReady`](super::MembershipCommand::CoordinatorReady).
    CoordinatorLost,
    /// `TOPIC_AUTHORIZATION_FAILED`: the member stays and retries, but the application should
    /// know (it recovers once ACLs are fixed).
    TopicAuthorizationFailed {
        /// The broker's message.
        message: Option<String>,
    },
    /// The member failed for good.
    Failed(MembershipError),
    /// The broker asked for a heartbeat interval outside
    /// [`MIN_HEARTBEAT_INTERVAL`](super::MIN_HEARTBEAT_INTERVAL) ..=
    /// [`MAX_HEARTBEAT_INTERVAL`](super::MAX_HEARTBEAT_INTERVAL); the member uses `used`
    /// instead. Reported once per member (the first adjusted value), so that a driver can warn
    /// once.
    HeartbeatIntervalAdjusted {
        /// What the broker sent (`HeartbeatIntervalMs`).
        received_ms: i32,
        /// The interval the member uses.
        used: Duration,
    },
    /// The member left the group (see
    /// [`StreamsMembership::leave_outcome`](super::StreamsMembership::leave_outcome) for how).
    Left {
        /// The error the leave heartbeat got, if any (`UNKNOWN_MEMBER_ID` and
        /// `FENCED_MEMBER_EPOCH` are not reported: the member is gone either way).
        error: Option<BrokerErrorKind>,
    },
}
