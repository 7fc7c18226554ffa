//! The graceful leave of `close()` and what its outcome means for the caller.
//!
//! `Ok` only for a leave heartbeat the broker answered; otherwise a typed
//! [`MembershipError`] says whether it was sent at all (issue 13, item 4).

use std::time::Instant;

use crate::error::Error;
use crate::streams::membership::LeaveOutcome;
use crate::streams::{
    HeartbeatFailure, LeaveOperation, MemberState, MembershipCommand, MembershipError,
};

use super::super::shared::StreamsGroupState;
use super::Driver;

impl Driver {
    /// The graceful leave of [`crate::StreamsGroupSession::close`] and of the heartbeat
    /// thread's close: sends the leave heartbeat (epoch -1, or -2 for a static member), resends
    /// it after a coordinator move or a broken connection, and waits for the answer until
    /// `deadline`. `Ok` only when the broker answered it (or the member never joined); otherwise
    /// the typed error of [`Driver::leave_result`]. `started` is when the close began (for the
    /// time reported). Idempotent: a second call reports the first one's outcome.
    pub(crate) fn leave(&mut self, started: Instant, deadline: Instant) -> Result<(), Error> {
        match self.membership.state() {
            MemberState::Left => return self.leave_result(started),
            MemberState::Unjoined => {
                self.shared
                    .publish_state(StreamsGroupState::Closed, self.membership.member_epoch());
                return Ok(());
            }
            _ => {}
        }
        if let Some(f) = self.failure() {
            return Err(Error::from_shared(f));
        }
        // No I/O of the close (a lookup, the leave, its resends) may outlast the close.
        self.interrupt.interrupt_at(deadline);
        self.command(
            Instant::now(),
            MembershipCommand::Leave(LeaveOperation::Default),
        )?;
        loop {
            self.poll(Instant::now());
            match self.membership.state() {
                MemberState::Left => return self.leave_result(started),
                MemberState::Failed => {
                    return Err(self
                        .failure()
                        .map(Error::from_shared)
                        .unwrap_or(Error::Closed))
                }
                _ => {}
            }
            let now = Instant::now();
            if now >= deadline {
                // Could not deliver the leave in time: the broker expires the member after the
                // session timeout. The session is closed either way.
                self.abandon_leave();
                if self.membership.state() != MemberState::Left {
                    // The leave is still queued in the state machine (sent, no answer yet).
                    self.membership
                        .handle_error(now, HeartbeatFailure::TimedOut);
                    self.drain_events();
                }
                self.shared
                    .publish_state(StreamsGroupState::Closed, self.membership.member_epoch());
                return self.leave_result(started);
            }
            let due = self.next_wakeup().unwrap_or(deadline).min(deadline);
            if due > now {
                std::thread::sleep(due - now);
            }
        }
    }

    /// What the last leave's outcome means for the caller of `close`: `Ok` when the broker
    /// confirmed it (or none was wanted), a typed [`MembershipError`] otherwise.
    fn leave_result(&self, started: Instant) -> Result<(), Error> {
        let group = self.group_id.clone();
        let last = self.last_error.as_ref().map(|e| format!("last error: {e}"));
        let outcome = self
            .membership
            .leave_outcome()
            .unwrap_or(LeaveOutcome::NotSent);
        let error = match outcome {
            LeaveOutcome::Left | LeaveOutcome::Skipped => return Ok(()),
            LeaveOutcome::NotSent => MembershipError::LeaveNotSent {
                group,
                reason: match last {
                    Some(l) => format!("no coordinator connection to send it on; {l}"),
                    None => "no coordinator connection to send it on".into(),
                },
            },
            LeaveOutcome::NotAnswered => MembershipError::LeaveNotAnswered {
                group,
                waited: started.elapsed(),
                reason: match &self.leave_error {
                    Some(e) => format!(
                        "sent {} time(s); the last delivery failed: {e}",
                        self.leave_failures
                    ),
                    None => "no answer by the close deadline".into(),
                },
            },
            LeaveOutcome::Refused(error) => MembershipError::LeaveRefused {
                group,
                error,
                message: self.membership.leave_message().map(str::to_string),
            },
        };
        Err(Error::Membership(error))
    }
}
