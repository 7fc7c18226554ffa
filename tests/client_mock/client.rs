//! The multi-broker client: bootstrap failover, reopening dropped connections, unknown nodes,
//! and what its connection observer sees.

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_streams_group::client::{BrokerTarget, Client, ClientError, ClientOptions};
use kafka_streams_group::protocol::api::api_versions::ApiVersionsRequest;
use kafka_streams_group::protocol::api::find_coordinator::FindCoordinatorRequest;
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::{ApiMessage, BrokerErrorKind};

use crate::mock_fetch_cluster::MockFetchCluster;
use crate::{api_versions_ok, mock, soon, Act};

#[test]
fn bootstrap_skips_refused_servers_and_reports_all_failures() {
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").to_string()
    };
    let m = mock(1, |h, _| Act::Send(api_versions_ok(h)));
    let mut o = ClientOptions::new([dead.clone(), m.addr.clone()]);
    o.connect_timeout = Duration::from_secs(2);
    let start = Instant::now();
    let mut client = Client::connect(o, soon()).expect("second server works");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(m.accepted.load(Ordering::SeqCst), 1);
    let v = client.any_api_versions(soon()).expect("versions");
    assert_eq!(v.range(3), Some((0, 12)));

    let mut o = ClientOptions::new([dead.clone(), "not-a-host-port".to_string()]);
    o.connect_timeout = Duration::from_secs(2);
    let err = Client::connect(o, soon()).expect_err("nothing reachable");
    match &err {
        ClientError::NoBrokerAvailable { attempts } => {
            assert_eq!(attempts.len(), 2, "{attempts:?}");
            assert!(attempts[0].contains(&dead), "{attempts:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn client_reopens_a_dropped_bootstrap_connection() {
    // First connection: ApiVersions, then a wrong correlation id. Second: well-behaved.
    let broke = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let m = mock(2, move |h, i| {
        if i == 1 && !broke.swap(true, Ordering::SeqCst) {
            let mut wrong = h.clone();
            wrong.correlation_id = 99;
            return Act::Send(api_versions_ok(&wrong));
        }
        Act::Send(api_versions_ok(h))
    });
    let mut client =
        Client::connect(ClientOptions::new([m.addr.clone()]), soon()).expect("connect");
    let err = client
        .send(BrokerTarget::Any, &ApiVersionsRequest::default(), soon())
        .expect_err("mismatch");
    assert!(
        matches!(err, ClientError::CorrelationMismatch { .. }),
        "{err:?}"
    );
    // The broken connection is gone; the next call bootstraps again.
    client
        .send(BrokerTarget::Any, &ApiVersionsRequest::default(), soon())
        .expect("second connection");
    assert_eq!(m.accepted.load(Ordering::SeqCst), 2);
}

#[test]
fn unknown_node_is_a_clear_error() {
    let m = mock(1, |h, _| Act::Send(api_versions_ok(h)));
    let mut client =
        Client::connect(ClientOptions::new([m.addr.clone()]), soon()).expect("connect");
    let err = client
        .send(
            BrokerTarget::Node(42),
            &ApiVersionsRequest::default(),
            soon(),
        )
        .expect_err("unknown node");
    assert!(err.to_string().contains("node 42"), "{err}");
}

#[derive(Default)]
struct Counts {
    opened: AtomicUsize,
    closed: AtomicUsize,
    completed: AtomicUsize,
    failed: AtomicUsize,
    reconnected: AtomicUsize,
    bytes_out: AtomicUsize,
    bytes_in: AtomicUsize,
}

impl kafka_streams_group::client::ConnectionObserver for Counts {
    fn connection_opened(&self) {
        self.opened.fetch_add(1, Ordering::SeqCst);
    }
    fn connection_closed(&self) {
        self.closed.fetch_add(1, Ordering::SeqCst);
    }
    fn request_completed(&self, api_key: i16, _: Duration, out: usize, inn: usize) {
        assert_eq!(api_key, 18);
        self.completed.fetch_add(1, Ordering::SeqCst);
        self.bytes_out.fetch_add(out, Ordering::SeqCst);
        self.bytes_in.fetch_add(inn, Ordering::SeqCst);
    }
    fn request_failed(&self, _: i16) {
        self.failed.fetch_add(1, Ordering::SeqCst);
    }
    fn reconnected(&self) {
        self.reconnected.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn observer_sees_opens_closes_requests_failures_and_reconnects() {
    let broke = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let m = mock(2, move |h, i| {
        if i == 1 && !broke.swap(true, Ordering::SeqCst) {
            let mut wrong = h.clone();
            wrong.correlation_id = 99;
            return Act::Send(api_versions_ok(&wrong));
        }
        Act::Send(api_versions_ok(h))
    });
    let counts = Arc::new(Counts::default());
    let mut o = ClientOptions::new([m.addr.clone()]);
    o.observer = Some(counts.clone());
    let mut client = Client::connect(o, soon()).expect("connect");
    assert_eq!(counts.opened.load(Ordering::SeqCst), 1);
    assert_eq!(
        counts.completed.load(Ordering::SeqCst),
        1,
        "ApiVersions at connect"
    );
    client
        .send(BrokerTarget::Any, &ApiVersionsRequest::default(), soon())
        .expect_err("mismatch");
    assert_eq!(counts.failed.load(Ordering::SeqCst), 1);
    client
        .send(BrokerTarget::Any, &ApiVersionsRequest::default(), soon())
        .expect("reconnected");
    assert_eq!(counts.opened.load(Ordering::SeqCst), 2);
    assert_eq!(counts.closed.load(Ordering::SeqCst), 1);
    assert_eq!(counts.reconnected.load(Ordering::SeqCst), 1);
    assert_eq!(counts.completed.load(Ordering::SeqCst), 3);
    // Bytes are whole frames: two connect-time ApiVersions at our newest version (one per
    // connection) and one send at the broker's newest (4); the mismatched one is not counted.
    let at = |v: i16| {
        api_versions_ok(&RequestHeader {
            api_version: v,
            ..Default::default()
        })
        .len()
    };
    let expected = 2 * at(ApiVersionsRequest::MAX_VERSION) + at(4);
    assert_eq!(counts.bytes_in.load(Ordering::SeqCst), expected);
    assert!(counts.bytes_out.load(Ordering::SeqCst) > 3 * 10);
    drop(client);
    assert_eq!(counts.closed.load(Ordering::SeqCst), 2);
}

/// FindCoordinator: node 1 (the bootstrap) answers COORDINATOR_NOT_AVAILABLE forever (a
/// broker whose metadata lags), nodes 2 and 3 name node 3. With the brokers known from a
/// Metadata, the lookup's retries go to the other nodes and it finds node 3 within about a
/// second, node 1 asked at most twice (once as the bootstrap connection, whose node id the
/// rotation does not know, once by id). (Before, every retry went to the bootstrap
/// connection until the deadline.)
#[test]
fn find_coordinator_retries_on_other_known_nodes() {
    let mock = MockFetchCluster::start(3, &[(1, 0)]);
    let unavailable = BrokerErrorKind::CoordinatorNotAvailable.code();
    mock.on_find_coordinator(move |node| if node == 1 { (unavailable, -1) } else { (0, 3) });
    let first = mock
        .bootstrap()
        .split(',')
        .next()
        .expect("node 1")
        .to_string();
    let mut client = Client::connect(ClientOptions::new([first]), soon()).expect("connect");
    client.metadata(Some(&[]), soon()).expect("metadata");
    let started = Instant::now();
    let c = client
        .find_coordinator("g", Instant::now() + Duration::from_secs(5))
        .expect("found by another node");
    let took = started.elapsed();
    let asked = mock.nodes_of(FindCoordinatorRequest::API_KEY);
    eprintln!("FindCoordinator asked nodes {asked:?}, took {took:?}");
    assert_eq!(c.node_id, 3);
    assert!(asked.iter().filter(|n| **n == 1).count() <= 2, "{asked:?}");
    assert!(took < Duration::from_millis(1_500), "{took:?}");
}
