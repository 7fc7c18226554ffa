//! Receiving: how a successful heartbeat answer is applied (assignment merge, interval,
//! state change); error codes are passed on to `failure`, leave answers end the leave.

use std::time::Instant;

use super::{
    clamp_heartbeat_interval, InFlight, LeaveOutcome, MemberState, MembershipError,
    MembershipEvent, StreamsMembership,
};
use crate::protocol::api::streams_group_heartbeat::{self as wire, StreamsGroupHeartbeatResponse};
use crate::protocol::BrokerErrorKind;
use crate::streams::assignment::{AssignmentDelta, EndpointPartitionsDelta, UserEndpoint};
use crate::streams::task::WireTaskIds;

fn from_wire_tasks(list: &Option<Vec<wire::TaskIds>>) -> Option<WireTaskIds> {
    list.as_ref().map(|v| {
        v.iter()
            .map(|t| (t.subtopology_id.clone(), t.partitions.clone()))
            .collect()
    })
}

impl StreamsMembership {
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
}
