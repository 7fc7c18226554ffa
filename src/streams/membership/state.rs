//! The states of a member; the transitions between them are the state machine's (see the
//! diagram in the module docs of `membership`).

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
    /// A fatal error happened; no further requests. See
    /// [`StreamsMembership::failure`](super::StreamsMembership::failure).
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
