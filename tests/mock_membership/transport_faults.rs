//! Transport faults through the fault proxy: each gives a typed error, and the member recovers
//! on a fresh connection.

use std::time::{Duration, Instant};

use kafka_streams_group::{Error, StreamsGroupSession, StreamsGroupState, StreamsTaskRuntime};

use crate::fault_proxy::{Fault, FaultProxy};
use crate::mock_coordinator::{ok, steady, MockCoordinator, Reply};
use crate::{config, ms, topology, Opts, HBI_MS};

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
