//! Reconnect backoff (a broker that refuses connections is not hammered) and connections
//! that land on themselves (TCP simultaneous open on a port nobody listens on).

use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use kafka_streams_group::client::{
    BrokerConnection, BrokerTarget, Client, ClientError, ClientOptions, ReconnectBackoff,
};
use kafka_streams_group::protocol::api::api_versions::ApiVersionsRequest;
use kafka_streams_group::protocol::api::metadata::{
    MetadataRequest, MetadataResponse, MetadataResponseBroker,
};
use kafka_streams_group::protocol::frame::encode_response_frame;
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::ApiMessage;
use kafka_streams_group::transport::TransportError;

use crate::{api_versions_ok, mock, opts, soon, Act};

/// A loopback port nobody listens on (bound, then released).
fn dead_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Metadata naming node 1 at `127.0.0.1:port`.
fn metadata_with_node_1(h: &RequestHeader, port: u16) -> Vec<u8> {
    let body = MetadataResponse {
        brokers: vec![MetadataResponseBroker {
            node_id: 1,
            host: "127.0.0.1".into(),
            port: i32::from(port),
            rack: None,
        }],
        ..MetadataResponse::default()
    };
    let mut b = Vec::new();
    encode_response_frame::<MetadataRequest>(&mut b, h.correlation_id, &body, h.api_version)
        .expect("encode");
    b
}

/// A client bootstrapped from a mock broker whose Metadata puts node 1 on a dead port.
fn client_knowing_a_dead_node_1(backoff: ReconnectBackoff) -> Client {
    let dead = dead_port();
    let m = mock(1, move |h, _| {
        if h.api_key == MetadataRequest::API_KEY {
            Act::Send(metadata_with_node_1(h, dead))
        } else {
            Act::Send(api_versions_ok(h))
        }
    });
    let mut o = ClientOptions::new([m.addr.clone()]);
    o.reconnect_backoff = backoff;
    let mut client = Client::connect(o, soon()).expect("connect");
    client.metadata(None, soon()).expect("metadata");
    client
}

#[test]
fn a_dead_node_is_retried_with_exponential_backoff_not_in_a_tight_loop() {
    // The fetcher asked for the dead leader again at once after every refusal:
    // ~6,400 refused connects in 4 s. With the default backoff (50 ms doubling to 1 s,
    // ±20 %) a caller that retries at once makes at most 9 attempts in 4 s.
    let mut client = client_knowing_a_dead_node_1(ReconnectBackoff::default());
    let start = Instant::now();
    let end = start + Duration::from_secs(4);
    let mut calls = 0;
    let mut backoff_errors = 0;
    while Instant::now() < end {
        let err = client
            .send(BrokerTarget::Node(1), &ApiVersionsRequest::default(), end)
            .expect_err("nothing listens on node 1");
        calls += 1;
        assert!(err.is_retriable(), "{err}");
        if err.to_string().contains("reconnect backoff") {
            backoff_errors += 1;
        }
    }
    let took = start.elapsed();
    eprintln!("dead node: {calls} connection requests in {took:?}");
    assert!(
        (5..=15).contains(&calls),
        "{calls} connection requests to a dead node in {took:?}"
    );
    assert!(
        took < Duration::from_millis(4300),
        "bounded by the deadline: {took:?}"
    );
    // Only the last call can run into its deadline while waiting.
    assert!(backoff_errors <= 1, "{backoff_errors}");
}

#[test]
fn a_call_whose_deadline_ends_inside_the_backoff_fails_retriably_at_its_deadline() {
    let second = Duration::from_secs(1);
    let mut client = client_knowing_a_dead_node_1(ReconnectBackoff::new(second, second));
    let req = ApiVersionsRequest::default();
    let first = client
        .send(BrokerTarget::Node(1), &req, soon())
        .expect_err("refused");
    assert!(first.is_retriable(), "{first}");
    let start = Instant::now();
    let err = client
        .send(
            BrokerTarget::Node(1),
            &req,
            start + Duration::from_millis(100),
        )
        .expect_err("still in backoff at the deadline");
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(90) && took < Duration::from_millis(600),
        "{took:?}"
    );
    assert!(err.is_retriable(), "{err}");
    assert!(
        matches!(err, ClientError::Transport(TransportError::Connect { .. })),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("node 1")
            && text.contains("reconnect.backoff.ms")
            && text.contains("1 connection attempt"),
        "{text}"
    );
    // Once the backoff is over, the next call tries again (and is refused again).
    std::thread::sleep(Duration::from_millis(950));
    let start = Instant::now();
    let again = client
        .send(BrokerTarget::Node(1), &req, start + Duration::from_secs(3))
        .expect_err("refused again");
    assert!(!again.to_string().contains("reconnect backoff"), "{again}");
    assert!(start.elapsed() < Duration::from_millis(500));
}

#[test]
fn a_bootstrap_server_that_went_away_is_retried_with_backoff() {
    // One connection: ApiVersions at connect, then the broker hangs up and its listener is
    // gone, so every later bootstrap attempt is refused.
    let m = mock(1, |h, i| {
        if i == 0 {
            Act::Send(api_versions_ok(h))
        } else {
            Act::SendThenClose(Vec::new())
        }
    });
    let mut client = Client::connect(ClientOptions::new([m.addr.clone()]), soon()).expect("up");
    // Let the mock's accept loop end and drop its listener.
    std::thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    let end = start + Duration::from_secs(2);
    let mut calls = 0;
    while Instant::now() < end {
        let err = client
            .send(BrokerTarget::Any, &ApiVersionsRequest::default(), end)
            .expect_err("the broker is gone");
        assert!(err.is_retriable(), "{err}");
        calls += 1;
    }
    eprintln!(
        "gone bootstrap server: {calls} calls in {:?}",
        start.elapsed()
    );
    // 50 ms doubling: attempts at about 0, 50, 150, 350, 750, 1550 ms (±20 %), plus the
    // call that lost the connection.
    assert!(
        (3..=10).contains(&calls),
        "{calls} calls in {:?}",
        start.elapsed()
    );
}

/// An even port in Linux's ephemeral range that nothing is bound to. Linux gives connect()
/// even source ports (bind() odd ones), walking them in order for one destination.
#[cfg(target_os = "linux")]
fn free_even_ephemeral_port() -> u16 {
    for _ in 0..100 {
        let port = dead_port() & !1;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free even ephemeral port on 127.0.0.1");
}

#[cfg(target_os = "linux")]
#[test]
fn a_connection_that_lands_on_itself_is_a_retriable_refusal_not_a_correlation_mismatch() {
    // Connecting again and again to a free ephemeral port eventually gets that very port as
    // the source port: the socket connects to itself and reads its own ApiVersions request
    // back (correlation id 0x00120005 where 0 was expected), which the issue saw fail a
    // poll non-retriably. It must be a refused connection like any other.
    let port = free_even_ephemeral_port();
    let sa: SocketAddr = ([127, 0, 0, 1], port).into();
    let addr = sa.to_string();
    let start = Instant::now();
    let mut attempts = 0u32;
    while attempts < 200_000 && start.elapsed() < Duration::from_secs(60) {
        attempts += 1;
        let deadline = Instant::now() + Duration::from_secs(2);
        match BrokerConnection::connect_addrs(&addr, &[sa], &opts(), deadline) {
            Ok(c) => panic!(
                "attempt {attempts}: connected to {} where nothing listens (a connection to \
                 itself) and negotiated with it",
                c.peer_addr()
            ),
            Err(e) => {
                assert!(e.is_retriable(), "attempt {attempts}: {e}");
                if e.to_string().contains("connected to itself") {
                    eprintln!(
                        "self-connection after {attempts} attempts in {:?}: {e}",
                        start.elapsed()
                    );
                    assert!(
                        matches!(e, ClientError::Transport(TransportError::Connect { .. })),
                        "{e:?}"
                    );
                    return;
                }
            }
        }
    }
    panic!(
        "no connection to {addr} landed on itself in {attempts} attempts ({:?}); this \
         kernel does not hand out source ports the way the test expects",
        start.elapsed()
    );
}
