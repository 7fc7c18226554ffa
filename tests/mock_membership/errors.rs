//! The heartbeat error matrix, compared with Kafka's Java client (shared/docs/kip1071-client-
//! behaviour.md §5): retriable errors back off, coordinator errors rediscover at once (and a
//! coordinator that keeps being named is not hammered), fencing rejoins, fatal errors stop.

use std::time::Duration;

use kafka_streams_group::protocol::api::streams_group_heartbeat::TaskIds;
use kafka_streams_group::StreamsGroupState;

use crate::mock_coordinator::{steady, tasks, MockCoordinator, Recorded, Reply};
use crate::{
    backoff_bounds, gap, member, mock_coordinator, ms, wait_state, Opts, HBI, HBI_MS, SLACK,
};

fn active_of(r: &Recorded) -> Option<Vec<TaskIds>> {
    r.request.active_tasks.clone()
}

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
