//! Every blocking call returns by its own deadline against a broker that accepts connections
//! and never answers (issue 13 item 3), with a request timeout (30 s) far above each call's
//! deadline: before the fix, a 3 s join waited the full request timeout of the coordinator
//! lookup and then said "timed out after 3s".
//!
//! The silent broker is the fault proxy in `Blackhole` mode in front of the mock coordinator
//! (tests/support), or the mock itself answering heartbeats with `Reply::Never`. The bound is
//! a correctness bound, not a speed test: each call must end within its deadline plus
//! [`SLACK`], the documented allowance for thread wake-ups and mio's millisecond rounding on a
//! loaded 2-core machine (interruptible waits re-check their deadline every 50 ms).

#[path = "support/mock_coordinator.rs"]
mod mock_coordinator;

#[path = "support/fault_proxy.rs"]
mod fault_proxy;

mod common;

use std::time::{Duration, Instant};

use fault_proxy::{Fault, FaultProxy};
use kafka_streams_group::client::Client;
use kafka_streams_group::{
    admin, describe_streams_group, ClientConfig, Error, StreamsGroupConfig, StreamsGroupSession,
    StreamsTaskAssignment, StreamsTopology, Subtopology,
};
use mock_coordinator::{MockCoordinator, Reply};

/// Allowance above a call's deadline (see the module docs; README "Troubleshooting").
const SLACK: Duration = Duration::from_secs(1);
/// A request timeout far above every deadline tested here.
const LONG: Duration = Duration::from_secs(30);

fn topology() -> StreamsTopology {
    StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("input"))
}

fn client_config(bootstrap: &str, request_timeout: Duration) -> ClientConfig {
    common::init_logging();
    ClientConfig::new(bootstrap)
        .client_id("deadline-test")
        .request_timeout(request_timeout)
        .connect_timeout(Duration::from_secs(10))
        .retry_backoff(Duration::from_millis(100), Duration::from_millis(500))
}

fn group_config(bootstrap: &str, request_timeout: Duration) -> StreamsGroupConfig {
    StreamsGroupConfig::new(bootstrap, "app", topology())
        .client_config(client_config(bootstrap, request_timeout))
        .process_id("11111111-2222-4333-8444-555555555555")
        .join_timeout(Duration::from_secs(3))
        .close_timeout(Duration::from_secs(2))
        .max_retries(1)
}

/// A mock broker behind a proxy that accepts connections and never answers.
fn silent_broker() -> (MockCoordinator, FaultProxy) {
    let mock = MockCoordinator::start();
    let proxy = FaultProxy::start(mock.socket_addr());
    proxy.set_fault(Fault::Blackhole);
    (mock, proxy)
}

/// Asserts that a call started at `started` ended within `limit` + [`SLACK`]; prints the
/// figure.
fn within(what: &str, started: Instant, limit: Duration) -> Duration {
    let took = started.elapsed();
    println!("{what}: returned after {took:?} (deadline {limit:?} + slack {SLACK:?})");
    assert!(
        took <= limit + SLACK,
        "{what} took {took:?}, past its deadline {limit:?} + {SLACK:?}"
    );
    took
}

/// The timeout error names the limit it kept, and the call really waited about that long.
fn assert_timeout(what: &str, err: &Error, limit: Duration, took: Duration) {
    match err {
        Error::Timeout { limit: l, .. } => {
            assert_eq!(*l, limit, "{what}: {err}");
            assert!(
                took + Duration::from_millis(200) >= limit,
                "{what}: {took:?}"
            );
        }
        other => panic!("{what}: expected a timeout, got {other:?}"),
    }
}

#[test]
fn join_keeps_its_timeout_against_a_broker_that_never_answers() {
    let (_mock, proxy) = silent_broker();
    let started = Instant::now();
    let err = StreamsGroupSession::join(group_config(&proxy.addr().to_string(), LONG))
        .expect_err("nothing answers");
    let took = within("join (silent bootstrap)", started, Duration::from_secs(3));
    assert_timeout("join", &err, Duration::from_secs(3), took);
    assert!(err.to_string().contains("timed out after 3s"), "{err}");
}

#[test]
fn join_keeps_its_timeout_when_only_the_coordinator_is_silent() {
    let mock = MockCoordinator::start();
    let proxy = FaultProxy::start(mock.socket_addr());
    proxy.set_fault(Fault::Blackhole);
    // Bootstrap and FindCoordinator answer; the coordinator they name never does.
    mock.set_coordinator(7, proxy.addr());
    let started = Instant::now();
    let err =
        StreamsGroupSession::join(group_config(&mock.addr(), LONG)).expect_err("silent coord");
    let took = within("join (silent coordinator)", started, Duration::from_secs(3));
    assert_timeout("join", &err, Duration::from_secs(3), took);
}

#[test]
fn join_keeps_its_timeout_when_heartbeats_go_unanswered() {
    let mock = MockCoordinator::start();
    mock.set_responder(|_| Reply::Never);
    let started = Instant::now();
    let err = StreamsGroupSession::join(group_config(&mock.addr(), LONG)).expect_err("no answer");
    let took = within(
        "join (heartbeat unanswered)",
        started,
        Duration::from_secs(3),
    );
    assert_timeout("join", &err, Duration::from_secs(3), took);
    assert!(mock.count() >= 1, "the join heartbeat was sent");
}

#[test]
fn blocking_close_and_heartbeat_keep_their_deadlines() {
    let mock = MockCoordinator::start();
    let mut session = StreamsGroupSession::join(group_config(&mock.addr(), LONG)).expect("join");
    mock.set_responder(|_| Reply::Never);
    // The leave is never answered: close returns by its close timeout (2 s), not after the
    // 30 s request timeout of the leave heartbeat.
    let started = Instant::now();
    let closed = session.close();
    within("blocking close", started, Duration::from_secs(2));
    println!("close: {closed:?}");

    // heartbeat(): its deadline is (request timeout + 1 s) x max_retries.
    let mock = MockCoordinator::start();
    let rt = Duration::from_secs(1);
    let mut session = StreamsGroupSession::join(group_config(&mock.addr(), rt)).expect("join");
    mock.set_responder(|_| Reply::Never);
    let started = Instant::now();
    let err = session.heartbeat().expect_err("unanswered");
    let took = within("blocking heartbeat", started, Duration::from_secs(2));
    println!("heartbeat: {err} after {took:?}");
}

#[test]
fn heartbeat_thread_calls_keep_their_deadlines() {
    let mock = MockCoordinator::start();
    // call deadline = 2 x request timeout + 1 s = 3 s.
    let rt = Duration::from_secs(1);
    let limit = rt * 2 + Duration::from_secs(1);
    let handle = StreamsGroupSession::join(group_config(&mock.addr(), rt))
        .expect("join")
        .spawn_heartbeat_thread()
        .expect("spawn");
    mock.set_responder(|_| Reply::Never);
    let started = Instant::now();
    let r = handle.heartbeat_now();
    within("heartbeat_now", started, limit);
    println!("heartbeat_now: {r:?}");
    let started = Instant::now();
    let r = handle.set_task_state(StreamsTaskAssignment::default());
    within("set_task_state", started, limit);
    println!("set_task_state: {r:?}");
    let started = Instant::now();
    let r = handle.close();
    within("handle close", started, Duration::from_secs(2));
    println!("close: {r:?}");
}

#[test]
fn client_admin_and_describe_calls_keep_their_deadlines() {
    let limit = Duration::from_secs(2);
    let (_mock, proxy) = silent_broker();
    let bootstrap = proxy.addr().to_string();
    let config = client_config(&bootstrap, LONG);

    let started = Instant::now();
    let err = Client::from_config(&config, limit).expect_err("silent");
    let took = within("Client::from_config", started, limit);
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    println!("from_config: {err} ({took:?})");

    let started = Instant::now();
    let err = describe_streams_group(&config, "app", limit).expect_err("silent");
    within("describe_streams_group", started, limit);
    println!("describe: {err}");

    let started = Instant::now();
    let err =
        admin::create_topics(&config, &[admin::NewTopic::new("t", 1)], limit).expect_err("silent");
    within("admin::create_topics", started, limit);
    println!("create_topics: {err}");

    // A connected client whose broker goes silent.
    proxy.set_fault(Fault::PassThrough);
    let mut client = Client::from_config(&config, limit).expect("connect");
    proxy.set_fault(Fault::Blackhole);
    let started = Instant::now();
    let err = client.fetch_metadata(None, limit).expect_err("silent");
    let took = within("fetch_metadata", started, limit);
    assert!(err.is_retriable(), "{err:?}");
    println!("fetch_metadata: {err} ({took:?})");
    let started = Instant::now();
    let err = client.lookup_coordinator("app", limit).expect_err("silent");
    within("lookup_coordinator", started, limit);
    println!("lookup_coordinator: {err}");
    let started = Instant::now();
    let err = client.broker_api_versions(limit).expect_err("silent");
    within("broker_api_versions", started, limit);
    println!("broker_api_versions: {err}");
}
