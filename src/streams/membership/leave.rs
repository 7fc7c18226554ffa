//! Leaving the group: which epoch the leave heartbeat carries (dynamic -1, static -2, or no
//! leave heartbeat at all), and how a leave ends.

use super::{
    InFlight, LeaveOperation, LeaveOutcome, MemberState, MembershipEvent, PendingLeave,
    StreamsMembership, TasksLostReason, LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH,
};

impl StreamsMembership {
    pub(super) fn leave(&mut self, op: LeaveOperation) {
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

    pub(super) fn finish_leave(&mut self, outcome: LeaveOutcome) {
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
}
