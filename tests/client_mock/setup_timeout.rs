//! `socket.connection.setup.timeout.ms`: a bootstrap server that accepts TCP but never
//! answers (a SIGSTOPped broker: the kernel still completes the handshake) is left for the
//! next address after the setup timeout, not after the request timeout.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use kafka_streams_group::client::Client;
use kafka_streams_group::ClientConfig;

use crate::{api_versions_ok, mock, Act};

#[test]
fn a_silent_bootstrap_server_is_left_after_the_setup_timeout() {
    // Bound, never accepted: connects succeed (backlog), nothing is ever answered.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent_addr = silent.local_addr().expect("addr").to_string();
    let good = mock(1, |h, _| Act::Send(api_versions_ok(h)));
    let config = ClientConfig::new(format!("{silent_addr},{}", good.addr))
        .connect_timeout(Duration::from_millis(500))
        .request_timeout(Duration::from_secs(20));
    let start = Instant::now();
    let client = Client::from_config(&config, Duration::from_secs(30)).expect("bootstraps");
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(5),
        "the silent server was left after {took:?}, expected the 500 ms setup timeout"
    );
    drop(client);
    drop(silent);
}
