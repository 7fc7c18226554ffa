//! Cadence, in-flight discipline and timeouts: one heartbeat in flight at most, the interval
//! kept, a blackholed request timed out, a join that waits for a broker to appear.

use std::time::{Duration, Instant};

use kafka_streams_group::StreamsGroupSession;

use crate::mock_coordinator::{ok, steady, tasks, MockCoordinator, Reply};
use crate::{backoff_bounds, config, gap, member, mock_coordinator, ms, Opts, HBI_MS, SLACK};

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
