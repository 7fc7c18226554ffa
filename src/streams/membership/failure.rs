//! What goes wrong and what it does to the member: error codes in answers, transport
//! failures, coordinator loss, fencing, fatal failure, and the retry backoff between attempts.

use std::time::Instant;

use rand::Rng;

use super::{
    HeartbeatFailure, InFlight, LeaveOutcome, MemberState, MembershipError, MembershipEvent,
    PendingLeave, StreamsMembership, TasksLostReason, MAX_UNKNOWN_SERVER_ERROR_RETRIES,
};
use crate::protocol::BrokerErrorKind;

impl StreamsMembership {
    pub(super) fn handle_error_response(
        &mut self,
        error: BrokerErrorKind,
        message: Option<String>,
    ) {
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

    pub(super) fn lose_coordinator(&mut self, with_backoff: bool) {
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

    pub(super) fn reset_backoff(&mut self) {
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

    pub(super) fn fail(&mut self, error: MembershipError) {
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
}
