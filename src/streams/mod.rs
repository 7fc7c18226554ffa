//! Streams group membership (pure): task ids, task runtime, membership state machine; the
//! topology model is [`crate::topology`]'s (re-exported here under its old paths).
//!
//! Nothing in here does I/O, reads the clock or spawns threads; time and randomness are passed
//! in by the caller, which keeps every rule testable on a manual clock.

pub mod assignment;
pub mod commit;
pub mod membership;
pub mod offsets;
pub mod reconcile;
/// The old name of [`reconcile`]: kept one release for existing paths.
#[deprecated(since = "0.2.0", note = "renamed to `streams::reconcile`")]
pub mod runtime {
    pub use super::reconcile::*;
}
pub mod task;
pub mod topology;

pub use crate::topology::TopologyDifference;
pub use assignment::{
    AssignmentDelta, AssignmentError, EndpointPartitions, EndpointPartitionsDelta, MergeOutcome,
    StreamsGroupSessionAssignment, StreamsGroupStatus, StreamsStatusCode, UserEndpoint,
};
pub use membership::{
    HeartbeatFailure, LeaveOperation, MemberState, MembershipCommand, MembershipConfig,
    MembershipError, MembershipEvent, RetryBackoff, StreamsMembership, TasksLostReason,
};
pub use offsets::StreamsTaskOffsets;
pub use reconcile::{StreamsTaskPlan, StreamsTaskRuntime};
pub use task::{
    StreamsTaskAssignment, StreamsTaskError, StreamsTaskId, StreamsTaskRole, StreamsTaskTransition,
    WireTaskIds,
};
pub use topology::{
    CopartitionGroup, JavaHashSetSizing, StreamsTopology, Subtopology, TopicInfo, TopologyError,
};
