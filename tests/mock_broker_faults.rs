//! Issue 13, items 2, 4 and 7, against the scripted mock coordinator
//! (tests/support/mock_coordinator.rs): a broker that asks for a heartbeat interval of 0, a
//! negative one or `i32::MAX`; `close()` while a heartbeat answer is withheld or the leave is
//! never answered; `UNKNOWN_SERVER_ERROR` on the first join.
//!
//! Figures are printed (`--nocapture`); upper bounds carry a fixed scheduling slack for a
//! loaded 2-core machine.

#[path = "support/mock_coordinator.rs"]
mod mock_coordinator;

mod common;

use std::time::{Duration, Instant};

use kafka_streams_group::streams::membership::{MAX_HEARTBEAT_INTERVAL, MIN_HEARTBEAT_INTERVAL};
use kafka_streams_group::streams::MembershipError;
use kafka_streams_group::{
    BrokerErrorKind, ClientConfig, Error, StreamsGroupConfig, StreamsGroupSession,
    StreamsGroupSessionHandle, StreamsGroupState, StreamsTopology, Subtopology,
};
use mock_coordinator::{ok, steady, Call, MockCoordinator, Recorded, Reply};

const HBI_MS: i32 = 200;

fn topology() -> StreamsTopology {
    StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("input"))
}

fn config(
    mock: &MockCoordinator,
    request_timeout: Duration,
    close: Duration,
) -> StreamsGroupConfig {
    common::init_logging();
    let bootstrap = mock.addr();
    StreamsGroupConfig::new(bootstrap.clone(), "app", topology())
        .client_config(
            ClientConfig::new(bootstrap)
                .client_id("mock-faults")
                .retry_backoff(Duration::from_millis(100), Duration::from_millis(800))
                .request_timeout(request_timeout)
                .connect_timeout(Duration::from_secs(2)),
        )
        .process_id("11111111-2222-4333-8444-555555555555")
        .user_endpoint("localhost", 7000)
        .join_timeout(Duration::from_secs(10))
        .close_timeout(close)
}

fn leaves(mock: &MockCoordinator) -> Vec<Recorded> {
    mock.requests()
        .into_iter()
        .filter(|r| r.request.member_epoch < 0)
        .collect()
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

// ---------------------------------------------------------------------------------------------
// Item 2: heartbeat intervals out of range
// ---------------------------------------------------------------------------------------------

/// Heartbeats per second while the mock answers every heartbeat with `interval_ms`.
fn heartbeats_per_second(interval_ms: i32) -> usize {
    let mock = MockCoordinator::start();
    mock.set_responder(move |c: &Call<'_>| {
        Reply::Respond(ok(c.request.member_epoch.max(1), interval_ms))
    });
    let config = config(&mock, Duration::from_secs(2), Duration::from_secs(2));
    let handle = StreamsGroupSession::join(config)
        .expect("join")
        .spawn_heartbeat_thread()
        .expect("spawn");
    // Let the join and the acknowledgement settle, then count one second.
    std::thread::sleep(Duration::from_millis(300));
    let from = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    let n = mock.count_between(from, from + Duration::from_secs(1));
    println!("interval {interval_ms} ms from the broker: {n} heartbeats in 1 s");
    assert_eq!(mock.pipelined(), 0);
    assert!(matches!(
        handle.state(),
        StreamsGroupState::Stable | StreamsGroupState::Reconciling
    ));
    handle.close().expect("close");
    n
}

#[test]
fn zero_heartbeat_interval_from_the_broker_is_not_a_busy_loop() {
    // 100 ms floor: about 10 a second (the old code sent thousands).
    let n = heartbeats_per_second(0);
    assert!((8..=12).contains(&n), "{n} heartbeats in 1 s");
}

#[test]
fn negative_heartbeat_interval_from_the_broker_is_not_a_busy_loop() {
    for interval in [-1, i32::MIN] {
        let n = heartbeats_per_second(interval);
        assert!((8..=12).contains(&n), "{interval}: {n} heartbeats in 1 s");
    }
}

#[test]
fn huge_heartbeat_interval_from_the_broker_is_capped() {
    // `i32::MAX` ms is 24 days: the member would be expired long before its next heartbeat.
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, i32::MAX, &[]));
    let mut session = StreamsGroupSession::join(config(
        &mock,
        Duration::from_secs(2),
        Duration::from_secs(2),
    ))
    .expect("join");
    println!(
        "interval {} ms from the broker: the member uses {:?}",
        i32::MAX,
        session.heartbeat_interval()
    );
    assert_eq!(session.heartbeat_interval(), MAX_HEARTBEAT_INTERVAL);
    assert_eq!(
        session.assignment().heartbeat_interval_ms,
        i32::MAX,
        "the snapshot keeps what the broker said"
    );
    session.close().expect("close");

    // In range: used as is.
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, 250, &[]));
    let mut session = StreamsGroupSession::join(config(
        &mock,
        Duration::from_secs(2),
        Duration::from_secs(2),
    ))
    .expect("join");
    assert_eq!(session.heartbeat_interval(), Duration::from_millis(250));
    assert!(MIN_HEARTBEAT_INTERVAL <= session.heartbeat_interval());
    session.close().expect("close");
}

// ---------------------------------------------------------------------------------------------
// Item 4: close() only reports Ok for a leave the broker answered
// ---------------------------------------------------------------------------------------------

/// A member on its heartbeat thread whose latest heartbeat the mock never answers.
fn member_with_a_withheld_answer(close: Duration) -> (MockCoordinator, StreamsGroupSessionHandle) {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, HBI_MS, &[]));
    let handle = StreamsGroupSession::join(config(&mock, Duration::from_secs(10), close))
        .expect("join")
        .spawn_heartbeat_thread()
        .expect("spawn");
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    mock.set_responder(|c: &Call<'_>| {
        if c.request.member_epoch < 0 {
            Reply::Respond(ok(c.request.member_epoch, HBI_MS))
        } else {
            Reply::Never
        }
    });
    let first = mock.count();
    mock.wait_for(first + 1, Duration::from_secs(2))
        .expect("a heartbeat left unanswered");
    std::thread::sleep(Duration::from_millis(50));
    (mock, handle)
}

#[test]
fn close_with_a_heartbeat_answer_withheld_reports_the_leave_as_not_sent() {
    let close = Duration::from_secs(1);
    let (mock, handle) = member_with_a_withheld_answer(close);
    let t = Instant::now();
    let r = handle.close();
    let took = t.elapsed();
    println!(
        "close, heartbeat answer withheld: {r:?} after {} ms",
        ms(took)
    );
    // The old code returned Ok(()) although no leave heartbeat reached the broker.
    assert_eq!(leaves(&mock).len(), 0, "no leave reached the mock");
    match &r {
        Err(Error::Membership(MembershipError::LeaveNotSent { group, reason })) => {
            assert_eq!(group, "app");
            assert!(!reason.is_empty());
        }
        other => panic!("expected LeaveNotSent, got {other:?}"),
    }
    let text = r.expect_err("error").to_string();
    assert!(
        text.contains("not sent") && text.contains("session timeout"),
        "{text}"
    );
    assert!(took <= close + Duration::from_millis(150), "{took:?}");
}

#[test]
fn close_with_a_slow_heartbeat_answer_sends_the_leave_after_it() {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, HBI_MS, &[]));
    let handle = StreamsGroupSession::join(config(
        &mock,
        Duration::from_secs(10),
        Duration::from_secs(3),
    ))
    .expect("join")
    .spawn_heartbeat_thread()
    .expect("spawn");
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    mock.set_responder(|c: &Call<'_>| {
        let answer = Reply::Respond(ok(c.request.member_epoch, HBI_MS));
        if c.request.member_epoch < 0 {
            answer
        } else {
            Reply::Delay(Duration::from_millis(400), Box::new(answer))
        }
    });
    let first = mock.count();
    mock.wait_for(first + 1, Duration::from_secs(2))
        .expect("a slow heartbeat");
    let t = Instant::now();
    let r = handle.close();
    println!(
        "close, heartbeat answered after 400 ms: {r:?} after {} ms",
        ms(t.elapsed())
    );
    r.expect("the leave went out after the answer and was answered");
    assert_eq!(leaves(&mock).len(), 1);
    assert_eq!(mock.pipelined(), 0);
}

#[test]
fn close_when_the_leave_is_never_answered_says_sent_not_answered_and_keeps_its_deadline() {
    // The blocking session: the old code waited the full request timeout (3 s) for the leave
    // and then reported "timed out after 0ns".
    let mock = MockCoordinator::start();
    mock.set_responder(|c: &Call<'_>| {
        if c.request.member_epoch < 0 {
            Reply::Never
        } else {
            Reply::Respond(ok(c.request.member_epoch.max(1), HBI_MS))
        }
    });
    let close = Duration::from_millis(800);
    let mut session =
        StreamsGroupSession::join(config(&mock, Duration::from_secs(3), close)).expect("join");
    let t = Instant::now();
    let r = session.close();
    let took = t.elapsed();
    println!("close, leave never answered: {r:?} after {} ms", ms(took));
    assert_eq!(leaves(&mock).len(), 1, "the leave reached the mock");
    match &r {
        Err(Error::Membership(MembershipError::LeaveNotAnswered { waited, .. })) => {
            assert!(*waited >= close && *waited <= took, "{waited:?}");
        }
        other => panic!("expected LeaveNotAnswered, got {other:?}"),
    }
    let text = r.as_ref().map_err(|e| e.to_string()).expect_err("error");
    assert!(!text.contains("0ns"), "{text}");
    assert!(text.contains("sent but not answered within 8"), "{text}");
    assert!(
        took >= close && took <= close + Duration::from_millis(150),
        "{took:?}"
    );
    // Idempotent: a second close reports the same outcome, without another leave.
    assert!(matches!(
        session.close(),
        Err(Error::Membership(MembershipError::LeaveNotAnswered { .. }))
    ));
    assert_eq!(leaves(&mock).len(), 1);
}

#[test]
fn close_when_the_broker_refuses_the_leave_says_so() {
    let mock = MockCoordinator::start();
    mock.set_responder(|c: &Call<'_>| {
        if c.request.member_epoch < 0 {
            Reply::Error(30)
        } else {
            Reply::Respond(ok(c.request.member_epoch.max(1), HBI_MS))
        }
    });
    let mut session = StreamsGroupSession::join(config(
        &mock,
        Duration::from_secs(2),
        Duration::from_secs(2),
    ))
    .expect("join");
    let r = session.close();
    println!("close, leave refused: {r:?}");
    assert!(
        matches!(
            r,
            Err(Error::Membership(MembershipError::LeaveRefused {
                error: BrokerErrorKind::GroupAuthorizationFailed,
                ..
            }))
        ),
        "{r:?}"
    );
    assert!(session.is_closed());
}

// ---------------------------------------------------------------------------------------------
// Item 7: UNKNOWN_SERVER_ERROR on the first join
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_server_error_on_the_first_join_is_retried() {
    // As a 4.4.0 broker answered one join of a member with a user endpoint right after topic
    // creation (NoSuchElementException in EndpointToPartitionsManager).
    let mock = MockCoordinator::start();
    mock.push([Reply::Error(-1)]);
    let t = Instant::now();
    let mut session = StreamsGroupSession::join(config(
        &mock,
        Duration::from_secs(2),
        Duration::from_secs(2),
    ))
    .expect("the join survives one UNKNOWN_SERVER_ERROR");
    let log = mock.requests();
    let joins: Vec<_> = log.iter().filter(|r| r.request.member_epoch == 0).collect();
    let g = joins[1].at.saturating_duration_since(joins[0].at);
    println!(
        "UNKNOWN_SERVER_ERROR on the join: joined in {} ms, retry after {} ms, {} join(s)",
        ms(t.elapsed()),
        ms(g),
        joins.len()
    );
    assert_eq!(joins.len(), 2);
    assert!(joins[1].request.topology.is_some() && joins[1].request.user_endpoint.is_some());
    assert!(
        g >= Duration::from_millis(75),
        "backoff before the retry: {g:?}"
    );
    assert_eq!(session.member_epoch(), 1);
    assert!(session.metrics().retries >= 1);
    session.close().expect("close");
}

#[test]
fn unknown_server_error_every_time_still_fails_the_join_with_the_code() {
    let mock = MockCoordinator::start();
    mock.set_responder(|_: &Call<'_>| Reply::Error(-1));
    let e = StreamsGroupSession::join(config(
        &mock,
        Duration::from_secs(2),
        Duration::from_secs(2),
    ))
    .expect_err("a broker that always fails");
    println!(
        "UNKNOWN_SERVER_ERROR every time: {e}; {} joins",
        mock.count()
    );
    assert_eq!(
        e.broker_error_kind(),
        Some(BrokerErrorKind::UnknownServerError)
    );
    assert_eq!(mock.count(), 6, "one join and five retries");
}
