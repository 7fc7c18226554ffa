//! Close and drop while the coordinator is unreachable: both return within the close
//! deadline.

use std::time::{Duration, Instant};

use kafka_streams_group::StreamsGroupSessionHandle;

use crate::mock_coordinator::{MockCoordinator, Reply};
use crate::{member, mock_coordinator, ms, Opts};

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
