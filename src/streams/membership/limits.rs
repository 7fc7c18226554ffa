//! What the member accepts from a broker that answers badly, and how a leave ended.
//!
//! ## Heartbeat interval
//!
//! Every successful heartbeat answer carries `HeartbeatIntervalMs`. A broker configures it
//! within `group.streams.min.heartbeat.interval.ms` ..= `group.streams.max.heartbeat.interval.ms`
//! (defaults 5000 ..= 15000), but nothing on the wire stops 0, a negative value or
//! `i32::MAX`. Taken as is, 0 or less turned every answer into the next request at once (tens of
//! thousands of heartbeats per second) and `i32::MAX` stopped heartbeats for 24 days. The member
//! therefore uses the broker's value clamped into
//! [`MIN_HEARTBEAT_INTERVAL`] ..= [`MAX_HEARTBEAT_INTERVAL`] and reports the first value it had
//! to adjust once ([`MembershipEvent::HeartbeatIntervalAdjusted`](super::MembershipEvent)).
//!
//! * The floor, 100 ms, is where Kafka's Java client ends up too: it never sends a heartbeat
//!   sooner than `retry.backoff.ms` (default 100 ms) after the previous answer
//!   (`RequestState.canSendRequest`), and it throws on a negative interval (`Timer.reset`).
//! * The ceiling, 15 s, is the broker's default `group.streams.max.heartbeat.interval.ms` and a
//!   third of the default session timeout (45 s): a member that heartbeats more often than
//!   asked costs the broker a little, one that heartbeats less often than the session timeout
//!   is expired. A broker configured above 15 s on purpose therefore gets heartbeats every 15 s.
//!
//! `TaskOffsetIntervalMs` (v1) is not a timer of its own: it is only looked at when a heartbeat
//! is built, so no value of it can make the member send more; 0 or less means "not used".
//!
//! ## `UNKNOWN_SERVER_ERROR`
//!
//! Kafka's Java client (`StreamsGroupHeartbeatRequestManager.onErrorResponse`, `default`
//! branch) treats `UNKNOWN_SERVER_ERROR` as fatal, and Kafka Streams' default uncaught-exception
//! handler then shuts the client down. Kafka 4.2.2 and 4.4.0 answer that way to the first join
//! heartbeat(s) of a member with a user endpoint in a fresh group whose internal topics they
//! are still creating (broker log: `NoSuchElementException` in `EndpointToPartitionsManager`;
//! 1–2 answers on 8 of 8 fresh groups on both, `tests/live_join_after_create.rs`), and accept
//! the next one: the fault is the broker's and transient, and a heartbeat is safe to repeat (the failed
//! operation wrote nothing). The member therefore retries it with the usual backoff, up to
//! [`MAX_UNKNOWN_SERVER_ERROR_RETRIES`] answers in a row; the next one fails it as Java would.

use std::time::Duration;

use crate::protocol::BrokerErrorKind;

/// Shortest heartbeat interval the member uses, whatever the broker asks (see the module docs).
pub const MIN_HEARTBEAT_INTERVAL: Duration = Duration::from_millis(100);

/// Longest heartbeat interval the member uses, whatever the broker asks (see the module docs).
pub const MAX_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(15);

/// How many `UNKNOWN_SERVER_ERROR` answers in a row are retried (with backoff) before the
/// member fails; a successful answer resets the count. See the module docs.
pub const MAX_UNKNOWN_SERVER_ERROR_RETRIES: u32 = 5;

/// The interval the member uses for a broker's `HeartbeatIntervalMs`, and whether it differs
/// from what the broker asked.
pub fn clamp_heartbeat_interval(heartbeat_interval_ms: i32) -> (Duration, bool) {
    let asked = u64::try_from(heartbeat_interval_ms).map(Duration::from_millis);
    match asked {
        Ok(d) if (MIN_HEARTBEAT_INTERVAL..=MAX_HEARTBEAT_INTERVAL).contains(&d) => (d, false),
        Ok(d) if d > MAX_HEARTBEAT_INTERVAL => (MAX_HEARTBEAT_INTERVAL, true),
        _ => (MIN_HEARTBEAT_INTERVAL, true),
    }
}

/// How the last leave of the group ended ([`StreamsMembership::leave_outcome`](super::StreamsMembership::leave_outcome)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaveOutcome {
    /// The broker answered the leave heartbeat and the member is out of the group (also when
    /// it answered `UNKNOWN_MEMBER_ID` or `FENCED_MEMBER_EPOCH`: the member was gone already).
    Left,
    /// No leave heartbeat was wanted ([`LeaveOperation::RemainInGroup`](super::LeaveOperation)
    /// for a dynamic member): the broker expires the member after its session timeout.
    Skipped,
    /// The leave heartbeat was never sent: no coordinator was known or connected when the
    /// member left. The broker expires the member after its session timeout.
    NotSent,
    /// The leave heartbeat was sent, but no answer came (the connection failed or timed out,
    /// or the coordinator was lost). The broker may or may not have seen it; if not, it expires
    /// the member after its session timeout.
    NotAnswered,
    /// The broker answered the leave heartbeat with this error; the member stopped
    /// heartbeating either way.
    Refused(BrokerErrorKind),
}

impl LeaveOutcome {
    /// True when the broker confirmed the leave (or none was wanted).
    pub fn is_confirmed(self) -> bool {
        matches!(self, LeaveOutcome::Left | LeaveOutcome::Skipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_inside_the_range_are_kept() {
        assert_eq!(
            clamp_heartbeat_interval(5000),
            (Duration::from_secs(5), false)
        );
        assert_eq!(
            clamp_heartbeat_interval(100),
            (MIN_HEARTBEAT_INTERVAL, false)
        );
        assert_eq!(
            clamp_heartbeat_interval(15_000),
            (MAX_HEARTBEAT_INTERVAL, false)
        );
    }

    #[test]
    fn zero_negative_and_huge_intervals_are_clamped() {
        assert_eq!(clamp_heartbeat_interval(0), (MIN_HEARTBEAT_INTERVAL, true));
        assert_eq!(clamp_heartbeat_interval(1), (MIN_HEARTBEAT_INTERVAL, true));
        assert_eq!(clamp_heartbeat_interval(-1), (MIN_HEARTBEAT_INTERVAL, true));
        assert_eq!(
            clamp_heartbeat_interval(i32::MIN),
            (MIN_HEARTBEAT_INTERVAL, true)
        );
        assert_eq!(
            clamp_heartbeat_interval(15_001),
            (MAX_HEARTBEAT_INTERVAL, true)
        );
        assert_eq!(
            clamp_heartbeat_interval(i32::MAX),
            (MAX_HEARTBEAT_INTERVAL, true)
        );
    }
}

/// The rules above on a manual clock, through the state machine's public inputs.
#[cfg(test)]
mod machine_tests {
    use std::time::{Duration, Instant};

    use super::super::{
        HeartbeatFailure, LeaveOperation, MemberState, MembershipCommand, MembershipConfig,
        MembershipError, MembershipEvent, StreamsMembership,
    };
    use super::*;
    use crate::protocol::api::streams_group_heartbeat::{
        StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
    };
    use crate::streams::{StreamsTopology, Subtopology};

    const MS: Duration = Duration::from_millis(1);

    struct Sim {
        m: StreamsMembership,
        now: Instant,
    }

    fn answer(epoch: i32, interval_ms: i32) -> StreamsGroupHeartbeatResponse {
        StreamsGroupHeartbeatResponse {
            member_epoch: epoch,
            heartbeat_interval_ms: interval_ms,
            active_tasks: Some(Vec::new()),
            standby_tasks: Some(Vec::new()),
            warmup_tasks: Some(Vec::new()),
            ..StreamsGroupHeartbeatResponse::default()
        }
    }

    fn error(code: i16) -> StreamsGroupHeartbeatResponse {
        StreamsGroupHeartbeatResponse {
            error_code: code,
            ..StreamsGroupHeartbeatResponse::default()
        }
    }

    impl Sim {
        /// Joining, coordinator known, nothing sent yet.
        fn new() -> Sim {
            let topology =
                StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("in"));
            let config = MembershipConfig::new("app", topology, "p");
            let now = Instant::now();
            let mut m = StreamsMembership::new(config, 7).expect("member");
            m.handle_command(now, MembershipCommand::Join)
                .expect("join");
            m.handle_command(
                now,
                MembershipCommand::CoordinatorReady {
                    broker: "b:9092 (node 1)".into(),
                    api_version: 1,
                },
            )
            .expect("coordinator");
            Sim { m, now }
        }

        fn send(&mut self) -> Option<StreamsGroupHeartbeatRequest> {
            self.m.poll_request(self.now)
        }

        fn respond(&mut self, r: &StreamsGroupHeartbeatResponse) {
            self.m.handle_response(self.now, r);
        }

        fn events(&mut self) -> Vec<MembershipEvent> {
            std::iter::from_fn(|| self.m.poll_event()).collect()
        }

        /// Joins with `interval_ms` in every answer and acknowledges the (empty) target.
        fn stable(interval_ms: i32) -> Sim {
            let mut s = Sim::new();
            s.send().expect("join");
            s.respond(&answer(1, interval_ms));
            s.m.handle_command(s.now, MembershipCommand::AcknowledgeTarget)
                .expect("ack");
            s.send().expect("ack heartbeat");
            s.respond(&answer(1, interval_ms));
            assert_eq!(s.m.state(), MemberState::Stable);
            s
        }

        /// Heartbeats sent during `span` (end included), every one answered at once with `interval_ms`,
        /// the clock stepping 1 ms at a time.
        fn heartbeats_during(&mut self, span: Duration, interval_ms: i32) -> usize {
            let end = self.now + span;
            let mut sent = 0;
            while self.now <= end {
                while self.send().is_some() {
                    sent += 1;
                    self.respond(&answer(1, interval_ms));
                    assert!(sent < 100_000, "busy loop");
                }
                self.now += MS;
            }
            sent
        }
    }

    #[test]
    fn a_zero_or_negative_interval_heartbeats_every_100_ms_not_in_a_loop() {
        for interval_ms in [0, 1, -1, -5000, i32::MIN] {
            let mut s = Sim::stable(interval_ms);
            assert_eq!(s.m.heartbeat_interval(), MIN_HEARTBEAT_INTERVAL);
            let n = s.heartbeats_during(Duration::from_secs(1), interval_ms);
            // One per 100 ms: 10 in a second (the first is due 100 ms after the ack).
            assert_eq!(n, 10, "interval {interval_ms}: {n} heartbeats in 1 s");
        }
    }

    #[test]
    fn a_huge_interval_still_heartbeats_every_15_s() {
        for interval_ms in [15_001, 600_000, i32::MAX] {
            let mut s = Sim::stable(interval_ms);
            assert_eq!(s.m.heartbeat_interval(), MAX_HEARTBEAT_INTERVAL);
            let due = s.m.poll_timeout().expect("next heartbeat planned");
            assert_eq!(
                due,
                s.now + MAX_HEARTBEAT_INTERVAL,
                "interval {interval_ms}"
            );
            let n = s.heartbeats_during(Duration::from_secs(60), interval_ms);
            assert_eq!(n, 4, "interval {interval_ms}: {n} heartbeats in 60 s");
        }
    }

    #[test]
    fn an_interval_in_range_is_used_as_is_and_adjustment_is_reported_once() {
        let mut s = Sim::stable(500);
        assert_eq!(s.m.heartbeat_interval(), Duration::from_millis(500));
        assert_eq!(s.heartbeats_during(Duration::from_secs(5), 500), 10);
        assert!(!s
            .events()
            .iter()
            .any(|e| matches!(e, MembershipEvent::HeartbeatIntervalAdjusted { .. })));

        let mut s = Sim::stable(0);
        s.heartbeats_during(Duration::from_secs(1), -3);
        s.heartbeats_during(Duration::from_secs(20), i32::MAX);
        let adjusted: Vec<_> = s
            .events()
            .into_iter()
            .filter(|e| matches!(e, MembershipEvent::HeartbeatIntervalAdjusted { .. }))
            .collect();
        assert_eq!(
            adjusted,
            vec![MembershipEvent::HeartbeatIntervalAdjusted {
                received_ms: 0,
                used: MIN_HEARTBEAT_INTERVAL
            }]
        );
    }

    #[test]
    fn unknown_server_error_on_the_join_is_retried_with_backoff() {
        let mut s = Sim::new();
        let join = s.send().expect("join");
        assert_eq!(join.member_epoch, 0);
        s.respond(&error(-1));
        assert_eq!(s.m.state(), MemberState::Joining);
        assert!(s.m.failure().is_none());
        // Backoff (100 ms ± 20 %), then the same full join again.
        let due = s.m.poll_timeout().expect("retry planned");
        assert!(due >= s.now + 80 * MS && due <= s.now + 120 * MS, "{due:?}");
        assert!(s.send().is_none(), "not before the backoff");
        s.now = due;
        let again = s.send().expect("join retried");
        assert_eq!(again.member_epoch, 0);
        assert!(again.topology.is_some() && again.process_id.is_some());
        s.respond(&answer(3, 5000));
        assert_eq!(s.m.member_epoch(), 3);
        assert_eq!(s.m.state(), MemberState::Reconciling);
    }

    #[test]
    fn unknown_server_error_fails_the_member_after_the_retries_in_a_row() {
        let mut s = Sim::new();
        for k in 0..MAX_UNKNOWN_SERVER_ERROR_RETRIES {
            s.now = s.m.poll_timeout().expect("planned");
            s.send().expect("heartbeat");
            s.respond(&error(-1));
            assert_eq!(s.m.state(), MemberState::Joining, "answer {k}");
        }
        // A success resets the count ...
        s.now = s.m.poll_timeout().expect("planned");
        s.send().expect("heartbeat");
        s.respond(&answer(1, 5000));
        assert_eq!(s.m.member_epoch(), 1);
        s.m.handle_command(s.now, MembershipCommand::AcknowledgeTarget)
            .expect("ack");
        for k in 0..MAX_UNKNOWN_SERVER_ERROR_RETRIES {
            s.now = s.m.poll_timeout().expect("planned");
            s.send().expect("heartbeat");
            s.respond(&error(-1));
            assert!(s.m.failure().is_none(), "answer {k} after the reset");
        }
        // ... and one more in a row is fatal, naming the code and the count.
        s.now = s.m.poll_timeout().expect("planned");
        s.send().expect("heartbeat");
        s.respond(&error(-1));
        assert_eq!(s.m.state(), MemberState::Failed);
        match s.m.failure() {
            Some(MembershipError::Broker { error, message, .. }) => {
                assert_eq!(*error, BrokerErrorKind::UnknownServerError);
                let m = message.as_deref().unwrap_or_default();
                assert!(m.contains("6 times in a row"), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn leave_outcomes_say_what_happened_to_the_leave() {
        // Answered.
        let mut s = Sim::stable(5000);
        s.m.handle_command(s.now, MembershipCommand::Leave(LeaveOperation::Default))
            .expect("leave");
        assert_eq!(s.send().expect("leave").member_epoch, -1);
        s.respond(&answer(-1, 5000));
        assert_eq!(s.m.leave_outcome(), Some(LeaveOutcome::Left));

        // Answered with UNKNOWN_MEMBER_ID: gone either way.
        let mut s = Sim::stable(5000);
        s.m.handle_command(s.now, MembershipCommand::Leave(LeaveOperation::Default))
            .expect("leave");
        s.send().expect("leave");
        s.respond(&error(25));
        assert_eq!(s.m.leave_outcome(), Some(LeaveOutcome::Left));

        // Refused.
        let mut s = Sim::stable(5000);
        s.m.handle_command(s.now, MembershipCommand::Leave(LeaveOperation::Default))
            .expect("leave");
        s.send().expect("leave");
        s.respond(&StreamsGroupHeartbeatResponse {
            error_message: Some("denied".into()),
            ..error(30)
        });
        assert_eq!(
            s.m.leave_outcome(),
            Some(LeaveOutcome::Refused(
                BrokerErrorKind::GroupAuthorizationFailed
            ))
        );
        assert_eq!(s.m.leave_message(), Some("denied"));

        // Sent, then the connection failed.
        let mut s = Sim::stable(5000);
        s.m.handle_command(s.now, MembershipCommand::Leave(LeaveOperation::Default))
            .expect("leave");
        s.send().expect("leave");
        s.m.handle_error(s.now, HeartbeatFailure::TimedOut);
        assert_eq!(s.m.leave_outcome(), Some(LeaveOutcome::NotAnswered));

        // Not sent: the coordinator was lost (a heartbeat timed out) before the leave.
        let mut s = Sim::stable(5000);
        s.now += Duration::from_secs(5);
        s.send().expect("heartbeat");
        s.m.handle_error(s.now, HeartbeatFailure::TimedOut);
        s.m.handle_command(s.now, MembershipCommand::Leave(LeaveOperation::Default))
            .expect("leave");
        assert_eq!(s.m.state(), MemberState::Left);
        assert_eq!(s.m.leave_outcome(), Some(LeaveOutcome::NotSent));

        // Not sent: the coordinator was lost while the leave waited to go out.
        let mut s = Sim::stable(5000);
        s.m.handle_command(s.now, MembershipCommand::Leave(LeaveOperation::Default))
            .expect("leave");
        s.m.handle_command(s.now, MembershipCommand::CoordinatorLost)
            .expect("lost");
        assert_eq!(s.m.leave_outcome(), Some(LeaveOutcome::NotSent));

        // Not wanted.
        let mut s = Sim::stable(5000);
        s.m.handle_command(
            s.now,
            MembershipCommand::Leave(LeaveOperation::RemainInGroup),
        )
        .expect("leave");
        assert_eq!(s.m.leave_outcome(), Some(LeaveOutcome::Skipped));
        assert!(s.send().is_none());

        // A rejoin forgets the outcome.
        s.m.handle_command(s.now, MembershipCommand::Join)
            .expect("join");
        assert_eq!(s.m.leave_outcome(), None);
    }
}
