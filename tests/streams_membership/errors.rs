//! Error answers, invalid assignments, transport failures and stray responses: backoff,
//! rediscovery, fencing and failing.

use std::time::Duration;

use kafka_streams_group::protocol::BrokerErrorKind;
use kafka_streams_group::streams::{
    HeartbeatFailure, LeaveOperation, MemberState, MembershipCommand, MembershipError,
    MembershipEvent, RetryBackoff, StreamsMembership, StreamsTaskRole, TasksLostReason,
};

use crate::{config, err, ok, owned, tids, Sim, MS};

#[test]
fn retriable_errors_back_off_exponentially_and_resend_owned_tasks() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0, 1]);
    let mut expected = [
        (80, 120),
        (160, 240),
        (320, 480),
        (640, 960),
        (800, 1000),
        (800, 1000),
    ]
    .into_iter();
    s.now = s.m.poll_timeout().unwrap();
    let hb = s.send();
    assert!(hb.active_tasks.is_none());
    for code in [14i16, 14, 7, 13, 14, 14] {
        s.respond(err(code));
        assert_eq!(s.m.state(), MemberState::Stable);
        let (lo, hi) = expected.next().unwrap();
        let due = s.m.poll_timeout().unwrap();
        let wait = due - s.now;
        assert!(
            wait >= lo * MS && wait <= hi * MS,
            "code {code}: {wait:?} not in {lo}..={hi} ms"
        );
        s.now = due - MS;
        assert!(s.poll().is_none(), "backoff not respected");
        s.now = due;
        let retry = s.send();
        // After any error the owned tasks are sent again.
        assert_eq!(retry.active_tasks, Some(tids(&[("0", &[0, 1])])));
    }
    // Success resets the backoff.
    s.respond(ok(2, None));
    s.now = s.m.poll_timeout().unwrap();
    s.send();
    s.respond(err(14));
    let wait = s.m.poll_timeout().unwrap() - s.now;
    assert!(wait >= 80 * MS && wait <= 120 * MS, "{wait:?}");
}

#[test]
fn custom_backoff_is_honoured() {
    let cfg = config().retry_backoff(RetryBackoff {
        base: Duration::from_millis(10),
        max: Duration::from_millis(25),
        jitter: 0.0,
    });
    let mut s = Sim::new(cfg, 1);
    s.send();
    s.respond(err(14));
    assert_eq!(s.m.poll_timeout(), Some(s.now + 10 * MS));
    s.now += 10 * MS;
    s.send();
    s.respond(err(14));
    assert_eq!(s.m.poll_timeout(), Some(s.now + 20 * MS));
    s.now += 20 * MS;
    s.send();
    s.respond(err(14));
    assert_eq!(s.m.poll_timeout(), Some(s.now + 25 * MS));
    assert!(matches!(
        StreamsMembership::new(
            config().retry_backoff(RetryBackoff {
                base: Duration::from_secs(2),
                max: Duration::from_secs(1),
                jitter: 0.2
            }),
            1
        ),
        Err(MembershipError::InvalidConfig(_))
    ));
}

#[test]
fn coordinator_errors_rediscover_without_backoff() {
    for code in [15i16, 16] {
        let mut s = Sim::dynamic();
        s.stable_with(2, &[0]);
        s.now = s.m.poll_timeout().unwrap();
        s.send();
        // A retriable error first, so that a backoff would be visible if it were kept.
        s.respond(err(14));
        s.now = s.m.poll_timeout().unwrap();
        s.send();
        s.respond(err(code));
        assert_eq!(s.events(), vec![MembershipEvent::CoordinatorLost]);
        assert!(!s.m.has_coordinator());
        assert!(s.poll().is_none());
        assert!(s.m.poll_timeout().is_none());
        assert_eq!(s.m.state(), MemberState::Stable, "tasks are kept");
        s.cmd(MembershipCommand::CoordinatorReady {
            broker: "other:9092".into(),
            api_version: 1,
        });
        let hb = s.send();
        assert_eq!(hb.member_epoch, 2);
        assert_eq!(hb.active_tasks, Some(tids(&[("0", &[0])])));
    }
}

#[test]
fn fenced_member_loses_tasks_and_rejoins_with_same_member_id() {
    for code in [110i16, 25] {
        let mut s = Sim::dynamic();
        let id = s.m.member_id().to_string();
        s.stable_with(4, &[0, 1]);
        s.now = s.m.poll_timeout().unwrap();
        s.send();
        s.respond(err(14));
        s.now = s.m.poll_timeout().unwrap();
        s.send();
        s.respond(err(code));
        let ev = s.events();
        assert!(ev.contains(&MembershipEvent::TasksLost {
            reason: TasksLostReason::Fenced,
            tasks: owned(&[
                ("0", 0, StreamsTaskRole::Active),
                ("0", 1, StreamsTaskRole::Active)
            ]),
        }));
        assert_eq!(s.m.state(), MemberState::Joining);
        assert_eq!(s.m.member_epoch(), 0);
        assert!(s.m.owned_tasks().is_empty());
        assert!(s.m.assignment().tasks.is_empty());
        // Backoff reset: the join goes out at once.
        assert_eq!(s.m.poll_timeout(), Some(s.now));
        let join = s.send();
        assert_eq!(join.member_id, id);
        assert_eq!(join.member_epoch, 0);
        assert!(join.topology.is_some());
        assert_eq!(join.active_tasks, Some(vec![]));
        assert_eq!(
            join.endpoint_information_epoch, 1,
            "endpoint epoch survives fencing"
        );
        s.respond(ok(6, Some((&[("0", &[0])], &[], &[]))));
        assert_eq!(s.m.state(), MemberState::Reconciling);
        assert_eq!(s.m.member_epoch(), 6);
    }
}

#[test]
fn fatal_errors_stop_the_member() {
    // -1 (UNKNOWN_SERVER_ERROR) is retried a few times first: see
    // `streams::membership::limits` and its tests.
    for code in [30i16, 42, 69, 81, 130, 131, 132, 35, 111, 82, 31, 999] {
        let mut s = Sim::dynamic();
        s.stable_with(2, &[0]);
        s.now = s.m.poll_timeout().unwrap();
        s.send();
        s.respond(err(code));
        assert_eq!(s.m.state(), MemberState::Failed, "code {code}");
        let ev = s.events();
        assert!(ev.iter().any(|e| matches!(
            e,
            MembershipEvent::TasksLost {
                reason: TasksLostReason::Failed,
                ..
            }
        )));
        let failed = ev.iter().find_map(|e| match e {
            MembershipEvent::Failed(MembershipError::Broker { error, .. }) => Some(*error),
            _ => None,
        });
        assert_eq!(failed, Some(BrokerErrorKind::from_code(code)));
        assert!(s.m.failure().is_some());
        for _ in 0..3 {
            s.advance(Duration::from_secs(60));
            assert!(s.poll().is_none());
            assert!(s.m.poll_timeout().is_none());
        }
        assert!(matches!(
            s.m.handle_command(s.now, MembershipCommand::HeartbeatNow),
            Err(MembershipError::AlreadyFailed(_))
        ));
        // Leaving after a failure is a no-op, not an error.
        s.cmd(MembershipCommand::Leave(LeaveOperation::Default));
        assert!(s.poll().is_none());
    }
}

#[test]
fn topic_authorization_failure_is_surfaced_but_member_stays() {
    let mut s = Sim::dynamic();
    s.send();
    s.events();
    s.respond(err(29));
    assert_eq!(s.m.state(), MemberState::Joining);
    let ev = s.events();
    assert_eq!(
        ev,
        vec![MembershipEvent::TopicAuthorizationFailed {
            message: Some("error 29".into())
        }]
    );
    s.now = s.m.poll_timeout().unwrap();
    let again = s.send();
    assert_eq!(again.member_epoch, 0);
    assert!(again.topology.is_some());
}

#[test]
fn unknown_subtopology_in_response_fails_without_merging() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.now = s.m.poll_timeout().unwrap();
    s.send();
    s.respond(ok(3, Some((&[("0", &[0]), ("42", &[1])], &[], &[]))));
    assert_eq!(s.m.state(), MemberState::Failed);
    assert!(matches!(
        s.m.failure(),
        Some(MembershipError::InvalidAssignment { .. })
    ));
    // The bad assignment was never merged or published; failing released the old tasks.
    let ev = s.events();
    for e in &ev {
        if let MembershipEvent::AssignmentUpdated { assignment, .. } = e {
            assert!(assignment.tasks.is_empty());
            assert_ne!(assignment.member_epoch, 3);
        }
    }
    assert!(ev.contains(&MembershipEvent::TasksLost {
        reason: TasksLostReason::Failed,
        tasks: owned(&[("0", 0, StreamsTaskRole::Active)]),
    }));
    assert_eq!(s.m.assignment().member_epoch, 0);
    assert!(s.m.assignment().tasks.is_empty());
}

#[test]
fn partial_or_duplicate_task_lists_fail_the_member() {
    let mut s = Sim::dynamic();
    s.send();
    let mut r = ok(2, Some((&[("0", &[0])], &[], &[])));
    r.warmup_tasks = None;
    s.respond(r);
    assert_eq!(s.m.state(), MemberState::Failed);

    let mut s = Sim::dynamic();
    s.send();
    s.respond(ok(2, Some((&[("0", &[0])], &[("0", &[0])], &[]))));
    assert_eq!(s.m.state(), MemberState::Failed);
}

#[test]
fn transport_failures() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.now = s.m.poll_timeout().unwrap();
    s.send();
    s.m.handle_error(s.now, HeartbeatFailure::TimedOut);
    assert_eq!(s.events(), vec![MembershipEvent::CoordinatorLost]);
    assert!(!s.m.is_request_in_flight());
    s.cmd(MembershipCommand::CoordinatorReady {
        broker: "b".into(),
        api_version: 1,
    });
    // Backoff applies after a transport failure.
    let due = s.m.poll_timeout().unwrap();
    assert!(due >= s.now + 80 * MS && due <= s.now + 120 * MS);
    s.now = due;
    assert_eq!(s.send().active_tasks, Some(tids(&[("0", &[0])])));

    s.m.handle_error(s.now, HeartbeatFailure::UnsupportedVersion);
    assert_eq!(s.m.state(), MemberState::Failed);
    assert!(matches!(
        s.m.failure(),
        Some(MembershipError::UnsupportedVersion { broker, .. }) if broker == "b"
    ));
}

#[test]
fn stray_responses_are_ignored() {
    let mut s = Sim::dynamic();
    s.respond(ok(9, Some((&[("0", &[0])], &[], &[]))));
    assert_eq!(s.m.state(), MemberState::Joining);
    assert!(s.m.assignment().tasks.is_empty());
    // A lost coordinator drops what was in flight; its late answer changes nothing.
    s.send();
    s.cmd(MembershipCommand::CoordinatorLost);
    s.respond(ok(9, Some((&[("0", &[0])], &[], &[]))));
    assert_eq!(s.m.state(), MemberState::Joining);
}
