//! The member against a scripted mock coordinator (tests/support/mock_coordinator.rs): the
//! heartbeat error matrix (compared with Kafka's Java client, shared/docs/kip1071-client-
//! behaviour.md §5), backoff and cadence measured on the mock's request log, coordinator moves,
//! timeouts, transport faults through the fault proxy, and close/drop while unreachable.
//!
//! Timing bounds are the specification's plus a fixed scheduling slack ([`SLACK`]) for a loaded
//! 2-core machine; every figure is printed (`--nocapture`) so a run can be read as a report.

#[path = "support/mock_coordinator.rs"]
mod mock_coordinator;

#[path = "support/fault_proxy.rs"]
mod fault_proxy;

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fault_proxy::{Fault, FaultProxy};
use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    StreamsGroupHeartbeatRequest, TaskIds,
};
use kafka_streams_group::streams::MembershipError;
use kafka_streams_group::{
    ClientConfig, Error, StreamsGroupConfig, StreamsGroupSession, StreamsGroupSessionHandle,
    StreamsGroupState, StreamsTaskRuntime, StreamsTopology, Subtopology,
};
use mock_coordinator::{assign, ok, steady, tasks, MockCoordinator, Recorded, Reply};

/// Scheduling slack added to upper timing bounds (thread wake-ups on a shared machine: a CI box
/// with 2 cores running brokers and compilers saw 60 ms exceeded). Lower bounds carry no slack,
/// so a missing backoff still fails.
const SLACK: Duration = Duration::from_millis(200);
const HBI_MS: i32 = 200;
const HBI: Duration = Duration::from_millis(HBI_MS as u64);

fn topology() -> StreamsTopology {
    StreamsTopology::new()
        .subtopology(Subtopology::new("0").source_topic("input"))
        .subtopology(Subtopology::new("1").source_topic("other"))
}

struct Opts {
    base: Duration,
    max: Duration,
    request_timeout: Duration,
    close_timeout: Duration,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            base: Duration::from_millis(100),
            max: Duration::from_millis(800),
            request_timeout: Duration::from_secs(2),
            close_timeout: Duration::from_secs(2),
        }
    }
}

fn config(bootstrap: &str, o: &Opts) -> StreamsGroupConfig {
    common::init_logging();
    StreamsGroupConfig::new(bootstrap, "app", topology())
        .client_config(
            ClientConfig::new(bootstrap)
                .client_id("mock-test")
                .retry_backoff(o.base, o.max)
                .request_timeout(o.request_timeout)
                .connect_timeout(Duration::from_secs(2)),
        )
        .process_id("11111111-2222-4333-8444-555555555555")
        .rack_id("rack-a")
        .client_tags([("zone", "z1")])
        .user_endpoint("localhost", 7000)
        .join_timeout(Duration::from_secs(10))
        .close_timeout(o.close_timeout)
        .max_retries(1)
}

/// Joins through `bootstrap`, moves onto the heartbeat thread and (when `tasks` were assigned)
/// acknowledges them, then waits until a heartbeat reported them as owned.
fn member(mock: &MockCoordinator, bootstrap: &str, o: &Opts) -> StreamsGroupSessionHandle {
    let session = StreamsGroupSession::join(config(bootstrap, o)).expect("join");
    let handle = session.spawn_heartbeat_thread().expect("spawn");
    let mut runtime = StreamsTaskRuntime::for_topology(&topology());
    handle
        .reconcile_task_runtime(&mut runtime)
        .expect("reconcile");
    let want = handle.assignment().tasks;
    if !want.is_empty() {
        mock.wait_for_match(Duration::from_secs(3), |r| {
            r.request.member_epoch > 0
                && r.request
                    .active_tasks
                    .as_ref()
                    .is_some_and(|a| !a.is_empty())
        })
        .expect("owned tasks reported");
    }
    handle
}

fn wait_state(
    handle: &StreamsGroupSessionHandle,
    timeout: Duration,
    pred: impl Fn(&StreamsGroupState) -> bool,
) -> Option<StreamsGroupState> {
    let deadline = Instant::now() + timeout;
    loop {
        let s = handle.state();
        if pred(&s) {
            return Some(s);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

fn gap(a: &Recorded, b: &Recorded) -> Duration {
    b.at.saturating_duration_since(a.at)
}

fn active_of(r: &Recorded) -> Option<Vec<TaskIds>> {
    r.request.active_tasks.clone()
}

/// Backoff bounds of the `k`-th consecutive failure: base·2^k with ±20% jitter, capped.
fn backoff_bounds(o: &Opts, k: u32) -> (Duration, Duration) {
    let term = o.base.as_secs_f64() * 2f64.powi(k as i32);
    let max = o.max.as_secs_f64();
    (
        Duration::from_secs_f64((term * 0.8).min(max)),
        Duration::from_secs_f64((term * 1.2).min(max)),
    )
}

// ---------------------------------------------------------------------------------------------
// Error matrix
// ---------------------------------------------------------------------------------------------

#[test]
fn retriable_error_backs_off_exponentially_within_jitter_and_resends_owned_tasks() {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, HBI_MS, &[("0", &[0, 1])]));
    let o = Opts::default();
    let handle = member(&mock, &mock.addr(), &o);
    let owned = mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.request.member_epoch > 0 && active_of(r).is_some())
        .expect("ack heartbeat");
    // Script 5 × COORDINATOR_LOAD_IN_PROGRESS on the next heartbeats, then the responder again.
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    let first = mock.count();
    mock.push((0..5).map(|_| Reply::Error(14)));
    let log = mock
        .wait_for(first + 7, Duration::from_secs(6))
        .expect("retries");
    let retries = &log[first..first + 7];
    for k in 0..5u32 {
        let g = gap(&retries[k as usize], &retries[k as usize + 1]);
        let (lo, hi) = backoff_bounds(&o, k);
        println!(
            "retry {k}: gap {} ms, bounds [{}, {}] ms",
            ms(g),
            ms(lo),
            ms(hi)
        );
        assert!(
            g + Duration::from_millis(5) >= lo && g <= hi + SLACK,
            "retry {k} gap {g:?} outside [{lo:?}, {hi:?}]"
        );
        // After a plain error the next heartbeat carries every owned-task list again.
        let r = &retries[k as usize + 1].request;
        assert_eq!(r.member_epoch, 1);
        assert_eq!(r.active_tasks, owned.request.active_tasks, "retry {k}");
        assert_eq!(r.standby_tasks, Some(vec![]), "retry {k}");
        assert_eq!(r.warmup_tasks, Some(vec![]), "retry {k}");
    }
    // Success resets the backoff: the next heartbeat comes one interval later.
    let g = gap(&retries[5], &retries[6]);
    println!("after recovery: gap {} ms (HBI {HBI_MS})", ms(g));
    assert!(
        g + Duration::from_millis(5) >= HBI && g <= HBI + SLACK,
        "{g:?}"
    );
    assert!(matches!(handle.state(), StreamsGroupState::Stable));
    assert_eq!(handle.member_epoch(), 1);
    assert_eq!(mock.pipelined(), 0);
    handle.close().expect("close");
}

fn coordinator_error_retries_at_once(code: i16) {
    let mock = MockCoordinator::start();
    let o = Opts::default();
    let handle = member(&mock, &mock.addr(), &o);
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    let first = mock.count();
    mock.push([Reply::Error(code)]);
    let log = mock
        .wait_for(first + 2, Duration::from_secs(3))
        .expect("retry");
    let g = gap(&log[first], &log[first + 1]);
    println!(
        "error {code}: next heartbeat after {} ms; FindCoordinator calls {}",
        ms(g),
        mock.find_coordinator_calls()
    );
    assert!(g < Duration::from_millis(100), "{code}: {g:?}");
    assert!(
        mock.find_coordinator_calls() >= 2,
        "coordinator looked up again"
    );
    // Every field of a heartbeat is re-sent: the owned tasks (none here) in all three lists.
    let next = &log[first + 1].request;
    assert_eq!(next.active_tasks, Some(vec![]));
    assert_eq!(next.standby_tasks, Some(vec![]));
    assert_eq!(next.warmup_tasks, Some(vec![]));
    assert_eq!(log[first + 1].request.member_epoch, 1);
    assert_eq!(mock.pipelined(), 0);
    handle.close().expect("close");
}

#[test]
fn coordinator_not_available_15_rediscovers_without_backoff() {
    coordinator_error_retries_at_once(15);
}

#[test]
fn not_coordinator_16_rediscovers_without_backoff() {
    coordinator_error_retries_at_once(16);
}

#[test]
fn coordinator_moves_to_another_broker_without_backoff() {
    let a = MockCoordinator::start();
    let b = MockCoordinator::start_on("127.0.0.1:0", 2).expect("mock b");
    a.set_responder(steady(1, HBI_MS, &[("0", &[0])]));
    b.set_responder(steady(1, HBI_MS, &[("0", &[0])]));
    let o = Opts::default();
    let handle = member(&a, &a.addr(), &o);
    let n = a.count();
    a.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    a.set_coordinator(b.node_id(), b.socket_addr());
    let moved_at_index = a.count();
    a.push([Reply::Error(16)]);
    let first_b = b
        .wait_for(1, Duration::from_secs(3))
        .expect("heartbeat reaches b")[0]
        .clone();
    let on_a = a.requests()[moved_at_index].clone();
    let g = gap(&on_a, &first_b);
    println!(
        "coordinator move: NOT_COORDINATOR on A → first heartbeat on B after {} ms",
        ms(g)
    );
    assert!(g < Duration::from_millis(100), "{g:?}");
    assert_eq!(first_b.request.member_epoch, 1, "same epoch on B");
    assert_eq!(
        first_b.request.active_tasks,
        Some(tasks(&[("0", &[0])])),
        "owned tasks re-sent to B"
    );
    b.wait_for(3, Duration::from_secs(2))
        .expect("B keeps heartbeats");
    let after = a.count();
    std::thread::sleep(HBI * 2);
    assert_eq!(a.count(), after, "nothing more goes to A");
    assert_eq!(a.pipelined() + b.pipelined(), 0);
    handle.close().expect("close");
    assert!(b.requests().iter().any(|r| r.request.member_epoch == -1));
}

fn fenced_rejoins_with_full_join(code: i16) {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(3, HBI_MS, &[("0", &[0, 1])]));
    let o = Opts::default();
    let handle = member(&mock, &mock.addr(), &o);
    let join = mock.requests()[0].clone();
    assert_eq!(join.request.member_epoch, 0);
    let mut sub = handle.subscribe_assignment();
    let _ = sub.try_recv();
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    let first = mock.count();
    mock.push([Reply::Error(code)]);
    let log = mock
        .wait_for(first + 2, Duration::from_secs(3))
        .expect("rejoin");
    let rejoin = &log[first + 1];
    let g = gap(&log[first], rejoin);
    println!("fenced by {code}: rejoin after {} ms", ms(g));
    assert!(
        g < Duration::from_millis(100),
        "no backoff after fencing: {g:?}"
    );
    // The rejoin is the join again: same member id, epoch 0, topology, process id, endpoint,
    // rack, tags, rebalance timeout and empty task lists. Only the endpoint-information epoch
    // differs: the first join knew none (-1), the rejoin reports the last one the broker gave
    // (as Java's heartbeat state does; it is not reset by fencing).
    let mut expected = join.request.clone();
    expected.endpoint_information_epoch = rejoin.request.endpoint_information_epoch;
    assert_eq!(rejoin.request, expected, "rejoin == first join");
    assert_eq!(join.request.endpoint_information_epoch, -1);
    // Fencing released the tasks (counted when the tasks-lost event is handled; a subscriber
    // may legitimately skip the empty snapshot, since it always gets the newest one).
    while sub.try_recv().is_some() {}
    let back = wait_state(&handle, Duration::from_secs(2), |_| {
        handle.member_epoch() == 3 && !handle.assignment().tasks.is_empty()
    });
    assert!(back.is_some(), "rejoined with tasks");
    assert_eq!(
        handle.metrics().rejoins,
        1,
        "fencing released the tasks once"
    );
    assert_eq!(handle.member_id(), join.request.member_id);
    handle.close().expect("close");
}

#[test]
fn unknown_member_id_25_fences_and_rejoins_with_the_full_join() {
    fenced_rejoins_with_full_join(25);
}

#[test]
fn fenced_member_epoch_110_fences_and_rejoins_with_the_full_join() {
    fenced_rejoins_with_full_join(110);
}

fn fatal_sends_nothing_more(code: i16) {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, HBI_MS, &[("0", &[0])]));
    let o = Opts::default();
    let handle = member(&mock, &mock.addr(), &o);
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    mock.push([Reply::Error(code)]);
    let state = wait_state(&handle, Duration::from_secs(2), |s| {
        matches!(s, StreamsGroupState::Failed(_))
    })
    .expect("member failed");
    let after = mock.count();
    std::thread::sleep(HBI * 3);
    println!(
        "fatal {code}: state {state:?}; requests during 3×HBI after failure: {}",
        mock.count() - after
    );
    assert_eq!(
        mock.count(),
        after,
        "{code}: no request after a fatal error"
    );
    assert!(
        handle.assignment().tasks.is_empty(),
        "tasks lost on failure"
    );
    let err = handle.close().expect_err("close after failure reports it");
    let text = format!("{err}");
    assert!(!text.is_empty());
    assert_eq!(mock.count(), after, "no leave after a fatal error");
}

#[test]
fn fatal_group_id_not_found_69() {
    fatal_sends_nothing_more(69);
}

#[test]
fn fatal_streams_invalid_topology_130() {
    fatal_sends_nothing_more(130);
}

#[test]
fn fatal_group_authorization_failed_30() {
    fatal_sends_nothing_more(30);
}

#[test]
fn fatal_unknown_error_code_32767() {
    fatal_sends_nothing_more(32767);
}

// ---------------------------------------------------------------------------------------------
// Assignment handling
// ---------------------------------------------------------------------------------------------

#[test]
fn null_task_lists_leave_the_assignment_unchanged_explicit_empty_clears_it() {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, HBI_MS, &[("0", &[0, 1])]));
    let o = Opts::default();
    let handle = member(&mock, &mock.addr(), &o);
    let mut sub = handle.subscribe_assignment();
    let initial = sub.recv_timeout(Duration::from_secs(1)).expect("current");
    assert_eq!(initial.active().count(), 2);
    // Several heartbeats answered with null lists, one of them bumping the epoch.
    let n = mock.count();
    mock.push([Reply::Respond(ok(2, HBI_MS)), Reply::Respond(ok(2, HBI_MS))]);
    mock.set_responder(|c: &mock_coordinator::Call<'_>| {
        Reply::Respond(ok(c.request.member_epoch.max(1), HBI_MS))
    });
    mock.wait_for(n + 4, Duration::from_secs(3))
        .expect("heartbeats");
    let mut seen = 0;
    while let Some(a) = sub.try_recv() {
        seen += 1;
        assert_eq!(
            a.active().count(),
            2,
            "null lists never empty the snapshot: {a:?}"
        );
    }
    assert_eq!(handle.member_epoch(), 2);
    assert_eq!(handle.assignment().active().count(), 2);
    println!("null lists: {seen} snapshot(s) published, all with 2 active tasks");
    // An explicit empty list does clear it.
    let n = mock.count();
    mock.push([Reply::Respond(assign(3, HBI_MS, &[]))]);
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("hb");
    let emptied = wait_state(&handle, Duration::from_secs(1), |_| {
        handle.assignment().tasks.is_empty()
    });
    assert!(emptied.is_some(), "explicit empty list clears the tasks");
    handle.close().expect("close");
}

fn invalid_assignment_is_rejected_whole(bad: &'static [(&'static str, &'static [i32])]) {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, HBI_MS, &[("0", &[0])]));
    let o = Opts::default();
    let handle = member(&mock, &mock.addr(), &o);
    let mut sub = handle.subscribe_assignment();
    let before = sub.recv_timeout(Duration::from_secs(1)).expect("current");
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    mock.push([Reply::Respond(assign(2, HBI_MS, bad))]);
    let state = wait_state(&handle, Duration::from_secs(2), |s| {
        matches!(s, StreamsGroupState::Failed(_))
    })
    .expect("Java goes FATAL on an invalid assignment; so does this member");
    println!("invalid assignment {bad:?}: {state:?}");
    // The bad assignment was never published, not even partly: the snapshots after the
    // previous one are only the loss of all tasks when the member failed.
    while let Some(a) = sub.try_recv() {
        assert!(a.tasks.is_empty() || a == before, "published {a:?}");
        assert_ne!(
            a.member_epoch, 2,
            "epoch of the rejected response never published"
        );
    }
    let after = mock.count();
    std::thread::sleep(HBI * 2);
    assert_eq!(mock.count(), after, "no request after the failure");
    let _ = handle.close();
}

#[test]
fn assignment_with_unknown_subtopology_is_rejected_whole() {
    invalid_assignment_is_rejected_whole(&[("0", &[0]), ("9", &[1])]);
}

#[test]
fn assignment_with_duplicate_task_is_rejected_whole() {
    invalid_assignment_is_rejected_whole(&[("0", &[0, 0])]);
}

// ---------------------------------------------------------------------------------------------
// Leave
// ---------------------------------------------------------------------------------------------

fn leaves(mock: &MockCoordinator) -> Vec<Recorded> {
    mock.requests()
        .into_iter()
        .filter(|r| r.request.member_epoch < 0)
        .collect()
}

#[test]
fn leave_is_sent_once_on_close() {
    let mock = MockCoordinator::start();
    let handle = member(&mock, &mock.addr(), &Opts::default());
    let t = Instant::now();
    handle.close().expect("close");
    println!("close took {} ms", ms(t.elapsed()));
    std::thread::sleep(HBI * 2);
    let l = leaves(&mock);
    assert_eq!(l.len(), 1, "exactly one leave");
    assert_eq!(l[0].request.member_epoch, -1);
    assert_eq!(
        mock.requests().last().map(|r| r.request.member_epoch),
        Some(-1)
    );
}

#[test]
fn unknown_member_id_on_leave_counts_as_success() {
    let mock = MockCoordinator::start();
    let handle = member(&mock, &mock.addr(), &Opts::default());
    mock.set_responder(|c: &mock_coordinator::Call<'_>| {
        if c.request.member_epoch < 0 {
            Reply::Error(25)
        } else {
            Reply::Respond(ok(1, HBI_MS))
        }
    });
    handle
        .close()
        .expect("UNKNOWN_MEMBER_ID on leave is success");
    assert_eq!(leaves(&mock).len(), 1);
}

fn leave_retried_after(first: Reply) {
    let a = MockCoordinator::start();
    let handle = member(&a, &a.addr(), &Opts::default());
    let first_is_move = matches!(first, Reply::Error(16));
    let b = MockCoordinator::start_on("127.0.0.1:0", 2).expect("b");
    if first_is_move {
        a.set_coordinator(b.node_id(), b.socket_addr());
    }
    let answered = Arc::new(Mutex::new(false));
    let flag = answered.clone();
    let mut replies = vec![first];
    a.set_responder(move |c: &mock_coordinator::Call<'_>| {
        if c.request.member_epoch < 0 {
            if let Some(r) = replies.pop() {
                return r;
            }
            *flag.lock().unwrap() = true;
        }
        Reply::Respond(ok(c.request.member_epoch, HBI_MS))
    });
    let t = Instant::now();
    let r = handle.close();
    let took = t.elapsed();
    let total = leaves(&a).len() + leaves(&b).len();
    println!(
        "leave after {first_is_move}: {total} leave(s), close {r:?} in {} ms",
        ms(took)
    );
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(total, 2, "leave retried exactly once more");
    if first_is_move {
        assert_eq!(leaves(&b).len(), 1, "retry went to the new coordinator");
    } else {
        assert!(*answered.lock().unwrap());
    }
}

#[test]
fn leave_is_retried_after_not_coordinator() {
    leave_retried_after(Reply::Error(16));
}

#[test]
fn leave_is_retried_after_a_disconnect() {
    leave_retried_after(Reply::Drop);
}

// ---------------------------------------------------------------------------------------------
// Cadence, in-flight discipline, timeouts
// ---------------------------------------------------------------------------------------------

#[test]
fn slow_answers_never_lead_to_two_heartbeats_in_flight() {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, 1000, &[]));
    let handle = member(&mock, &mock.addr(), &Opts::default());
    // Slow answers (longer than the interval) must not make the client pipeline.
    mock.set_responder(|c: &mock_coordinator::Call<'_>| {
        Reply::Delay(
            Duration::from_millis(300),
            Box::new(Reply::Respond(ok(c.request.member_epoch.max(1), 100))),
        )
    });
    let before = mock.count();
    std::thread::sleep(Duration::from_millis(1500));
    let slow = mock.count() - before;
    println!(
        "HBI 100 ms, answers after 300 ms: {slow} heartbeats in 1.5 s, pipelined {}",
        mock.pipelined()
    );
    assert!(slow >= 2, "{slow}");
    assert_eq!(mock.pipelined(), 0, "never two heartbeats in flight");
    let log = mock.requests();
    for w in log[before..].windows(2) {
        assert!(
            gap(&w[0], &w[1]) >= Duration::from_millis(290),
            "{:?}",
            gap(&w[0], &w[1])
        );
    }
    handle.close().expect("close");
}

#[test]
fn cadence_three_to_five_heartbeats_in_two_and_a_half_intervals_of_one_second() {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, 1000, &[]));
    let handle = member(&mock, &mock.addr(), &Opts::default());
    let start = Instant::now();
    let c0 = mock.count();
    std::thread::sleep(Duration::from_millis(2500));
    let n = mock.count() - c0;
    println!(
        "cadence: {n} heartbeats (join included: {}) in {} ms at HBI 1 s",
        mock.count(),
        ms(start.elapsed())
    );
    // From the join on, 2.5 s at 1 s: join + ack/first + 2 intervals.
    assert!((3..=5).contains(&mock.count()), "{}", mock.count());
    assert_eq!(mock.pipelined(), 0);
    handle.close().expect("close");
}

#[test]
fn blackholed_request_times_out_on_time_and_heartbeats_resume_on_a_new_connection() {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, HBI_MS, &[("0", &[0])]));
    let o = Opts {
        request_timeout: Duration::from_secs(1),
        ..Opts::default()
    };
    let handle = member(&mock, &mock.addr(), &o);
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    let first = mock.count();
    mock.push([Reply::Never]);
    let log = mock
        .wait_for(first + 3, Duration::from_secs(5))
        .expect("resumed");
    let g = gap(&log[first], &log[first + 1]);
    let (lo, hi) = backoff_bounds(&o, 0);
    let min = o.request_timeout.mul_f64(0.9) + lo;
    let max = o.request_timeout.mul_f64(1.1) + hi + SLACK;
    println!(
        "blackhole: next heartbeat after {} ms (timeout 1000 ms + backoff {}-{} ms); conns {} → {}",
        ms(g),
        ms(lo),
        ms(hi),
        log[first].conn,
        log[first + 1].conn
    );
    assert!(g >= min && g <= max, "{g:?} outside [{min:?}, {max:?}]");
    assert_ne!(log[first].conn, log[first + 1].conn, "connection replaced");
    let next = &log[first + 1].request;
    assert_eq!(next.member_epoch, 1);
    // After a transport failure the owned tasks are re-sent in all three lists.
    assert_eq!(next.active_tasks, Some(tasks(&[("0", &[0])])));
    assert_eq!(next.standby_tasks, Some(vec![]));
    assert_eq!(next.warmup_tasks, Some(vec![]));
    assert_eq!(mock.pipelined(), 0);
    handle.close().expect("close");
}

#[test]
fn join_keeps_retrying_until_a_broker_appears() {
    // A port nobody listens on (bound and released), then the broker appears on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let o = Opts {
        max: Duration::from_millis(400),
        ..Opts::default()
    };
    let cfg = config(&addr, &o);
    let joiner = std::thread::spawn(move || {
        let r = StreamsGroupSession::join(cfg);
        (r, Instant::now())
    });
    std::thread::sleep(Duration::from_millis(1500));
    let mock = MockCoordinator::start_on(&addr, 1).expect("bind the fixed port");
    let appeared = Instant::now();
    let (r, joined) = joiner.join().expect("join thread");
    let mut session = r.expect("joined once the broker appeared");
    let took = joined.saturating_duration_since(appeared);
    println!(
        "no broker at start: joined {} ms after the broker appeared (max backoff {} ms); metrics {:?}",
        ms(took),
        ms(o.max),
        session.metrics()
    );
    assert!(took <= o.max * 2, "{took:?}");
    assert!(
        session.metrics().retries >= 3,
        "kept retrying while no broker was there"
    );
    session.close().expect("close");
    drop(mock);
}

// ---------------------------------------------------------------------------------------------
// Transport faults through the proxy
// ---------------------------------------------------------------------------------------------

/// A member (blocking session, so the typed error of one heartbeat is visible) that reaches
/// the mock only through a fault proxy: bootstrap and the advertised coordinator are the proxy.
fn behind_proxy() -> (MockCoordinator, FaultProxy, StreamsGroupSession) {
    let mock = MockCoordinator::start();
    let proxy = FaultProxy::start(mock.socket_addr());
    mock.set_coordinator(1, proxy.addr());
    mock.set_responder(steady(1, HBI_MS, &[("0", &[0])]));
    let o = Opts {
        request_timeout: Duration::from_secs(1),
        ..Opts::default()
    };
    let mut session =
        StreamsGroupSession::join(config(&proxy.addr().to_string(), &o)).expect("join");
    let mut runtime = StreamsTaskRuntime::for_topology(&topology());
    session
        .reconcile_task_runtime(&mut runtime)
        .expect("reconcile");
    session.heartbeat().expect("ack");
    (mock, proxy, session)
}

fn fault_then_recover(fault: Fault, check: impl Fn(&Error) -> bool) {
    let (mock, proxy, mut session) = behind_proxy();
    let conns = mock.connections();
    let epoch = session.member_epoch();
    proxy.set_fault(fault);
    std::thread::sleep(Duration::from_millis(50));
    let e = session
        .heartbeat()
        .expect_err("the fault breaks the heartbeat");
    println!("{fault:?}: {e} ({e:?})");
    assert!(check(&e), "{fault:?}: unexpected error {e:?}");
    proxy.set_fault(Fault::PassThrough);
    let t = Instant::now();
    let mut ok = false;
    for _ in 0..10 {
        if session.heartbeat().is_ok() {
            ok = true;
            break;
        }
    }
    println!("{fault:?}: recovered in {} ms", ms(t.elapsed()));
    assert!(ok, "{fault:?}: recovers");
    assert!(mock.connections() > conns, "fresh connection");
    assert_eq!(session.member_epoch(), epoch);
    assert!(matches!(
        session.state(),
        StreamsGroupState::Stable | StreamsGroupState::Reconciling
    ));
    assert_eq!(mock.pipelined(), 0);
    session.close().expect("close");
}

fn is_connection_error(e: &Error) -> bool {
    matches!(e, Error::Disconnected { .. } | Error::Io { .. })
}

#[test]
fn proxy_reset_gives_a_typed_error_and_the_member_recovers() {
    fault_then_recover(Fault::Reset, is_connection_error);
}

#[test]
fn proxy_half_close_gives_a_typed_error_and_the_member_recovers() {
    fault_then_recover(Fault::HalfClose, is_connection_error);
}

#[test]
fn proxy_truncated_frame_gives_a_typed_error_and_the_member_recovers() {
    fault_then_recover(Fault::TruncateAfter(6), |e| {
        is_connection_error(e) && format!("{e}").contains("frame")
    });
}

#[test]
fn correlation_id_mismatch_gives_a_typed_error_and_the_member_recovers() {
    let (mock, _proxy, mut session) = behind_proxy();
    let conns = mock.connections();
    mock.push([Reply::WrongCorrelation(Box::new(Reply::Respond(ok(
        1, HBI_MS,
    ))))]);
    let e = session.heartbeat().expect_err("mismatch");
    println!("correlation mismatch: {e}");
    assert!(
        matches!(&e, Error::Protocol { message, .. } if message.contains("correlation")),
        "{e:?}"
    );
    session.heartbeat().expect("recovers");
    assert!(mock.connections() > conns, "fresh connection");
    assert_eq!(session.member_epoch(), 1);
    session.close().expect("close");
}

// ---------------------------------------------------------------------------------------------
// Close and drop while the coordinator is unreachable
// ---------------------------------------------------------------------------------------------

fn blackholed_member(close_timeout: Duration) -> (MockCoordinator, StreamsGroupSessionHandle) {
    let mock = MockCoordinator::start();
    let o = Opts {
        request_timeout: Duration::from_secs(10),
        close_timeout,
        ..Opts::default()
    };
    let handle = member(&mock, &mock.addr(), &o);
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    mock.set_responder(|_: &mock_coordinator::Call<'_>| Reply::Never);
    // Wait until a heartbeat hangs.
    let first = mock.count();
    mock.wait_for(first + 1, Duration::from_secs(2))
        .expect("hanging heartbeat");
    std::thread::sleep(Duration::from_millis(50));
    (mock, handle)
}

#[test]
fn close_while_blackholed_returns_within_the_close_deadline() {
    let close = Duration::from_secs(1);
    let (_mock, handle) = blackholed_member(close);
    let t = Instant::now();
    let r = handle.close();
    let took = t.elapsed();
    println!(
        "close while blackholed: {r:?} after {} ms (deadline {} ms)",
        ms(took),
        ms(close)
    );
    assert!(took <= close + Duration::from_millis(100), "{took:?}");
}

#[test]
fn drop_while_blackholed_returns_promptly() {
    let close = Duration::from_secs(1);
    let (_mock, handle) = blackholed_member(close);
    let t = Instant::now();
    drop(handle);
    let took = t.elapsed();
    println!("drop while blackholed: {} ms", ms(took));
    assert!(took <= close + Duration::from_millis(100), "{took:?}");
}

#[test]
fn mock_without_heartbeat_api_fails_the_join_naming_the_broker() {
    let mock = MockCoordinator::start();
    mock.set_heartbeat_versions(None);
    let e =
        StreamsGroupSession::join(config(&mock.addr(), &Opts::default())).expect_err("no API 88");
    println!("no StreamsGroupHeartbeat: {e}");
    assert!(format!("{e}").contains("StreamsGroupHeartbeat"), "{e}");
    assert_eq!(mock.count(), 0);
}

#[test]
fn heartbeat_v0_only_broker_is_spoken_to_at_v0() {
    let mock = MockCoordinator::start();
    mock.set_heartbeat_versions(Some((0, 0)));
    let handle = member(&mock, &mock.addr(), &Opts::default());
    mock.wait_for(3, Duration::from_secs(2))
        .expect("heartbeats");
    assert!(mock.requests().iter().all(|r| r.version == 0));
    handle.close().expect("close");
    let _ = StreamsGroupHeartbeatRequest::default();
}

#[test]
fn leave_retries_stop_at_the_close_deadline() {
    let mock = MockCoordinator::start();
    let close = Duration::from_millis(800);
    let o = Opts {
        close_timeout: close,
        ..Opts::default()
    };
    let handle = member(&mock, &mock.addr(), &o);
    mock.set_responder(|c: &mock_coordinator::Call<'_>| {
        if c.request.member_epoch < 0 {
            Reply::Drop
        } else {
            Reply::Respond(ok(1, HBI_MS))
        }
    });
    let t = Instant::now();
    let r = handle.close();
    let took = t.elapsed();
    let n = leaves(&mock).len();
    println!(
        "leave never answered: {n} attempts, close {r:?} after {} ms (deadline {} ms)",
        ms(took),
        ms(close)
    );
    // Sent (several times), never answered: said so, with the time really waited.
    match &r {
        Err(Error::Membership(MembershipError::LeaveNotAnswered { waited, .. })) => {
            assert!(*waited >= close, "{waited:?}");
        }
        other => panic!("expected LeaveNotAnswered, got {other:?}"),
    }
    let text = r.as_ref().map_err(|e| e.to_string()).expect_err("error");
    assert!(!text.contains("0ns"), "{text}");
    assert!(n >= 3, "retried with backoff until the deadline: {n}");
    assert!(
        took >= close && took <= close + Duration::from_millis(100),
        "{took:?}"
    );
    let after = mock.count();
    std::thread::sleep(HBI * 2);
    assert_eq!(mock.count(), after, "nothing after close returned");
}

#[test]
fn not_coordinator_from_a_broker_findcoordinator_keeps_naming_is_throttled() {
    // A coordinator still loading answers NOT_COORDINATOR while FindCoordinator keeps naming
    // it. Java's FindCoordinator RequestState waits retry.backoff.ms after each answer; so
    // does the driver: about one lookup and heartbeat per 100 ms (±20%), not a network-speed
    // loop.
    let mock = MockCoordinator::start();
    let handle = member(&mock, &mock.addr(), &Opts::default());
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    mock.set_responder(|_: &mock_coordinator::Call<'_>| Reply::Error(16));
    let (c0, f0) = (mock.count(), mock.find_coordinator_calls());
    std::thread::sleep(Duration::from_secs(1));
    let (hb, fc) = (mock.count() - c0, mock.find_coordinator_calls() - f0);
    println!("NOT_COORDINATOR loop: {hb} heartbeats, {fc} FindCoordinator in 1 s");
    assert!((5..=14).contains(&hb), "{hb}");
    assert!(fc <= 14, "{fc}");
    mock.set_responder(steady(1, HBI_MS, &[]));
    let c1 = mock.count();
    mock.wait_for(c1 + 2, Duration::from_secs(2))
        .expect("recovers");
    assert_eq!(handle.member_epoch(), 1);
    assert_eq!(mock.pipelined(), 0);
    handle.close().expect("close");
}
