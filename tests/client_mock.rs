//! Client-level faults against a loopback mock broker (std TcpListener + thread), speaking
//! real Kafka frames through the protocol module.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use kafka_streams_group::client::{
    BrokerConnectOptions, BrokerConnection, BrokerTarget, Client, ClientError, ClientOptions,
};
use kafka_streams_group::protocol::api::api_versions::{
    ApiVersion, ApiVersionsRequest, ApiVersionsResponse,
};
use kafka_streams_group::protocol::frame::encode_response_frame;
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::{ApiMessage, BrokerErrorKind, Decoder};
use kafka_streams_group::transport::TransportError;

/// What the mock does with one request.
enum Act {
    /// Send these bytes (usually a whole frame).
    Send(Vec<u8>),
    /// Say nothing; keep the socket open for this long.
    Silence(Duration),
    /// Send these bytes, then close.
    SendThenClose(Vec<u8>),
}

struct Mock {
    addr: String,
    accepted: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<(i16, i16, i32)>>>,
}

/// A broker that handles up to `conns` connections with `handler(header, request_index)`.
fn mock<F>(conns: usize, handler: F) -> Mock
where
    F: Fn(&RequestHeader, usize) -> Act + Send + Sync + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    let accepted = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (acc, sn) = (accepted.clone(), seen.clone());
    let handler = Arc::new(handler);
    thread::spawn(move || {
        for _ in 0..conns {
            let Ok((s, _)) = l.accept() else { return };
            acc.fetch_add(1, Ordering::SeqCst);
            let (h, sn) = (handler.clone(), sn.clone());
            thread::spawn(move || serve(s, &*h, &sn));
        }
    });
    Mock {
        addr,
        accepted,
        seen,
    }
}

fn serve(
    mut s: TcpStream,
    handler: &dyn Fn(&RequestHeader, usize) -> Act,
    seen: &Mutex<Vec<(i16, i16, i32)>>,
) {
    for i in 0.. {
        let mut len = [0u8; 4];
        if s.read_exact(&mut len).is_err() {
            return;
        }
        let mut payload = vec![0u8; i32::from_be_bytes(len) as usize];
        if s.read_exact(&mut payload).is_err() {
            return;
        }
        let mut dec = Decoder::new(&payload);
        // Header v1 is a prefix of v2: enough to route.
        let Ok(h) = RequestHeader::decode(&mut dec, 1) else {
            return;
        };
        seen.lock()
            .unwrap()
            .push((h.api_key, h.api_version, h.correlation_id));
        match handler(&h, i) {
            Act::Send(b) => {
                if s.write_all(&b).is_err() {
                    return;
                }
            }
            Act::Silence(d) => thread::sleep(d),
            Act::SendThenClose(b) => {
                let _ = s.write_all(&b);
                return;
            }
        }
    }
}

fn api_versions_body(error: i16, keys: &[(i16, i16, i16)]) -> ApiVersionsResponse {
    ApiVersionsResponse {
        error_code: error,
        api_keys: keys
            .iter()
            .map(|&(api_key, min_version, max_version)| ApiVersion {
                api_key,
                min_version,
                max_version,
            })
            .collect(),
        ..Default::default()
    }
}

/// A normal ApiVersions answer advertising ApiVersions 0-4 and Metadata 0-12.
fn api_versions_ok(h: &RequestHeader) -> Vec<u8> {
    let mut b = Vec::new();
    encode_response_frame::<ApiVersionsRequest>(
        &mut b,
        h.correlation_id,
        &api_versions_body(0, &[(18, 0, 4), (3, 0, 12)]),
        h.api_version,
    )
    .expect("encode");
    b
}

fn opts() -> BrokerConnectOptions {
    let mut o = BrokerConnectOptions::default();
    o.transport.connect_timeout = Duration::from_secs(2);
    o.client_id = Some("mock-test".to_string());
    o
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

#[test]
fn connect_negotiates_api_versions_and_correlation_ids_increase() {
    let m = mock(1, |h, _| Act::Send(api_versions_ok(h)));
    let mut c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    assert_eq!(c.api_versions().range(3), Some((0, 12)));
    assert_eq!(c.api_versions().range(18), Some((0, 4)));
    assert_eq!(c.api_versions().range(19), None);
    let v = c.pick_version::<ApiVersionsRequest>().expect("pick");
    assert_eq!(v, 4.min(ApiVersionsRequest::MAX_VERSION));
    for _ in 0..3 {
        c.send_request(&ApiVersionsRequest::default(), v, soon())
            .expect("send");
    }
    let seen = m.seen.lock().unwrap().clone();
    let cids: Vec<i32> = seen.iter().map(|s| s.2).collect();
    assert_eq!(cids, vec![0, 1, 2, 3]);
    assert!(seen.iter().all(|s| s.0 == 18));
    // The first ApiVersions goes out at the newest version this library knows.
    assert_eq!(seen[0].1, ApiVersionsRequest::MAX_VERSION);
}

#[test]
fn unsupported_api_versions_version_falls_back() {
    // An "old broker": knows ApiVersions 0-2 only; answers anything newer with
    // UNSUPPORTED_VERSION in a v0 body (what real brokers do).
    let m = mock(1, |h, _| {
        let mut b = Vec::new();
        if h.api_version > 2 {
            encode_response_frame::<ApiVersionsRequest>(
                &mut b,
                h.correlation_id,
                &api_versions_body(BrokerErrorKind::UnsupportedVersion.code(), &[(18, 0, 2)]),
                0,
            )
            .expect("encode");
        } else {
            encode_response_frame::<ApiVersionsRequest>(
                &mut b,
                h.correlation_id,
                &api_versions_body(0, &[(18, 0, 2), (3, 1, 9)]),
                h.api_version,
            )
            .expect("encode");
        }
        Act::Send(b)
    });
    let c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    assert_eq!(c.api_versions().range(3), Some((1, 9)));
    let versions: Vec<i16> = m.seen.lock().unwrap().iter().map(|s| s.1).collect();
    assert_eq!(versions, vec![ApiVersionsRequest::MAX_VERSION, 2]);
}

#[test]
fn unsupported_without_a_range_falls_back_to_v0() {
    let m = mock(1, |h, _| {
        let mut b = Vec::new();
        let body = if h.api_version > 0 {
            api_versions_body(BrokerErrorKind::UnsupportedVersion.code(), &[])
        } else {
            api_versions_body(0, &[(18, 0, 0)])
        };
        encode_response_frame::<ApiVersionsRequest>(&mut b, h.correlation_id, &body, 0)
            .expect("encode");
        Act::Send(b)
    });
    let c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    assert_eq!(c.api_versions().range(18), Some((0, 0)));
    let versions: Vec<i16> = m.seen.lock().unwrap().iter().map(|s| s.1).collect();
    assert_eq!(versions, vec![ApiVersionsRequest::MAX_VERSION, 0]);
}

#[test]
fn wrong_correlation_id_drops_the_connection() {
    let m = mock(1, |h, i| {
        if i == 0 {
            return Act::Send(api_versions_ok(h));
        }
        let mut wrong = h.clone();
        wrong.correlation_id += 7;
        Act::Send(api_versions_ok(&wrong))
    });
    let mut c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    let err = c
        .send_request(&ApiVersionsRequest::default(), 3, soon())
        .expect_err("mismatch");
    assert!(
        matches!(
            err,
            ClientError::CorrelationMismatch {
                expected: 1,
                got: 8,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(c.is_broken());
    let again = c.send_request(&ApiVersionsRequest::default(), 3, soon());
    assert!(
        matches!(
            again,
            Err(ClientError::Transport(TransportError::Broken { .. }))
        ),
        "{again:?}"
    );
}

#[test]
fn silent_broker_request_timeout_fires() {
    let m = mock(1, |h, i| {
        if i == 0 {
            Act::Send(api_versions_ok(h))
        } else {
            Act::Silence(Duration::from_secs(2))
        }
    });
    let mut c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    let start = Instant::now();
    let err = c
        .send_request(
            &ApiVersionsRequest::default(),
            3,
            start + Duration::from_millis(300),
        )
        .expect_err("timeout");
    assert!(err.is_timeout(), "{err:?}");
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(1),
        "{took:?}"
    );
    assert!(c.is_broken());
}

#[test]
fn silent_broker_during_connect_respects_deadline() {
    let m = mock(1, |_, _| Act::Silence(Duration::from_secs(2)));
    let start = Instant::now();
    let err = BrokerConnection::connect(&m.addr, &opts(), start + Duration::from_millis(300))
        .expect_err("timeout");
    assert!(err.is_timeout(), "{err:?}");
    assert!(start.elapsed() < Duration::from_secs(1));
}

#[test]
fn truncated_response_is_eof_mid_frame() {
    let m = mock(1, |h, i| {
        let full = api_versions_ok(h);
        if i == 0 {
            Act::Send(full)
        } else {
            Act::SendThenClose(full[..full.len() - 3].to_vec())
        }
    });
    let mut c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    let err = c
        .send_request(&ApiVersionsRequest::default(), 3, soon())
        .expect_err("eof");
    assert!(
        matches!(
            err,
            ClientError::Transport(TransportError::Eof {
                mid_frame: true,
                ..
            })
        ),
        "{err:?}"
    );
    assert!(c.is_broken());
}

#[test]
fn undecodable_response_is_a_decode_error_and_drops_the_connection() {
    let m = mock(1, |h, i| {
        if i == 0 {
            return Act::Send(api_versions_ok(h));
        }
        // Right correlation id, then a body cut short (frame itself complete).
        let mut p = h.correlation_id.to_be_bytes().to_vec();
        p.extend([0, 0, 0]);
        let mut f = (p.len() as i32).to_be_bytes().to_vec();
        f.extend(p);
        Act::Send(f)
    });
    let mut c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    let err = c
        .send_request(&ApiVersionsRequest::default(), 3, soon())
        .expect_err("decode");
    assert!(matches!(err, ClientError::Decode { .. }), "{err:?}");
    assert!(c.is_broken());
}

#[test]
fn reset_during_request_is_a_transport_error() {
    // Server side: after ApiVersions, read only the next frame's length prefix and close while
    // the rest is unread, which makes Linux answer with RST.
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        let mut len = [0u8; 4];
        s.read_exact(&mut len).expect("len");
        let mut p = vec![0u8; i32::from_be_bytes(len) as usize];
        s.read_exact(&mut p).expect("payload");
        let h = RequestHeader::decode(&mut Decoder::new(&p), 1).expect("header");
        s.write_all(&api_versions_ok(&h)).expect("reply");
        s.read_exact(&mut len).expect("len2");
        thread::sleep(Duration::from_millis(100));
    });
    let mut c = BrokerConnection::connect(&addr, &opts(), soon()).expect("connect");
    let big = ApiVersionsRequest {
        client_software_name: "x".repeat(1000),
        client_software_version: "1".to_string(),
        ..Default::default()
    };
    let err = c.send_request(&big, 3, soon()).expect_err("reset");
    match &err {
        ClientError::Transport(TransportError::Io { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionReset, "{err}")
        }
        other => panic!("expected a reset, got {other:?}"),
    }
    assert!(c.is_broken());
}

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

#[test]
fn api_missing_on_broker_is_unsupported_api() {
    let m = mock(1, |h, _| Act::Send(api_versions_ok(h)));
    let c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    let err = c
        .pick_version::<kafka_streams_group::protocol::api::sasl_handshake::SaslHandshakeRequest>()
        .expect_err("not listed");
    assert!(
        matches!(
            err,
            ClientError::UnsupportedApi {
                broker_range: None,
                ..
            }
        ),
        "{err:?}"
    );
}
