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
    /// Every request frame payload, in arrival order.
    payloads: Arc<Mutex<Vec<Vec<u8>>>>,
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
    let payloads = Arc::new(Mutex::new(Vec::new()));
    let (acc, sn, pl) = (accepted.clone(), seen.clone(), payloads.clone());
    let handler = Arc::new(handler);
    thread::spawn(move || {
        for _ in 0..conns {
            let Ok((s, _)) = l.accept() else { return };
            acc.fetch_add(1, Ordering::SeqCst);
            let (h, sn, pl) = (handler.clone(), sn.clone(), pl.clone());
            thread::spawn(move || serve(s, &*h, &sn, &pl));
        }
    });
    Mock {
        addr,
        accepted,
        seen,
        payloads,
    }
}

fn serve(
    mut s: TcpStream,
    handler: &dyn Fn(&RequestHeader, usize) -> Act,
    seen: &Mutex<Vec<(i16, i16, i32)>>,
    payloads: &Mutex<Vec<Vec<u8>>>,
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
        payloads.lock().unwrap().push(payload.clone());
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

mod sasl_and_coordinator {
    use super::*;
    use kafka_streams_group::client::{AuthStep, SaslAuthenticator, SaslFactory};
    use kafka_streams_group::protocol::api::find_coordinator::{
        Coordinator, FindCoordinatorRequest, FindCoordinatorResponse,
    };
    use kafka_streams_group::protocol::api::sasl_authenticate::{
        SaslAuthenticateRequest, SaslAuthenticateResponse,
    };
    use kafka_streams_group::protocol::api::sasl_handshake::{
        SaslHandshakeRequest, SaslHandshakeResponse,
    };
    use kafka_streams_group::protocol::frame::decode_request_frame;
    use kafka_streams_group::protocol::Request;
    use kafka_streams_group::transport::sasl::SaslError;

    /// A two-round mechanism: sends "one", expects "a"; sends "two", expects "b"; done.
    struct TwoStep {
        round: usize,
    }

    impl SaslAuthenticator for TwoStep {
        fn mechanism_name(&self) -> &str {
            "TEST-TWO-STEP"
        }
        fn start(&mut self) -> Result<Vec<u8>, SaslError> {
            Ok(b"one".to_vec())
        }
        fn step(&mut self, server: &[u8]) -> Result<AuthStep, SaslError> {
            self.round += 1;
            match (self.round, server) {
                (1, b"a") => Ok(AuthStep::Continue(b"two".to_vec())),
                (2, b"b") => Ok(AuthStep::Done(None)),
                _ => Err(SaslError::MalformedServerMessage {
                    mechanism: "TEST-TWO-STEP",
                    reason: "unexpected server message",
                }),
            }
        }
    }

    fn two_step() -> SaslFactory {
        Arc::new(|| Ok(Box::new(TwoStep { round: 0 }) as Box<dyn SaslAuthenticator>))
    }

    fn frame_for<R: Request>(h: &RequestHeader, body: &R::Response) -> Vec<u8> {
        let mut b = Vec::new();
        encode_response_frame::<R>(&mut b, h.correlation_id, body, h.api_version).expect("encode");
        b
    }

    /// Every request the SASL mock saw, with its payload, for assertions.
    type Log = Arc<Mutex<Vec<(i16, Vec<u8>)>>>;

    /// A broker that lists the SASL APIs and FindCoordinator `fc_max`, runs the two-step
    /// exchange (failing it if `reject` is set) and answers FindCoordinator with `coord`.
    fn sasl_broker(
        reject: bool,
        fc_max: i16,
        coord: Arc<Mutex<(i32, String, i32)>>,
    ) -> (Mock, Log) {
        let log: Log = Arc::new(Mutex::new(Vec::new()));
        let l2 = log.clone();
        let m = mock(4, move |h, _| match h.api_key {
            18 => {
                let mut b = Vec::new();
                encode_response_frame::<ApiVersionsRequest>(
                    &mut b,
                    h.correlation_id,
                    &api_versions_body(
                        0,
                        &[
                            (18, 0, 4),
                            (17, 0, 1),
                            (36, 0, 2),
                            (10, 0, fc_max),
                            (3, 0, 12),
                        ],
                    ),
                    h.api_version,
                )
                .expect("encode");
                Act::Send(b)
            }
            17 => {
                l2.lock().unwrap().push((17, Vec::new()));
                Act::Send(frame_for::<SaslHandshakeRequest>(
                    h,
                    &SaslHandshakeResponse {
                        error_code: 0,
                        mechanisms: vec!["TEST-TWO-STEP".to_string()],
                    },
                ))
            }
            36 => {
                let round = l2.lock().unwrap().iter().filter(|e| e.0 == 36).count();
                l2.lock().unwrap().push((36, Vec::new()));
                let resp = if reject {
                    SaslAuthenticateResponse {
                        error_code: BrokerErrorKind::SaslAuthenticationFailed.code(),
                        error_message: Some("bad credentials".to_string()),
                        ..Default::default()
                    }
                } else {
                    SaslAuthenticateResponse {
                        error_code: 0,
                        error_message: None,
                        auth_bytes: if round % 2 == 0 {
                            b"a".to_vec()
                        } else {
                            b"b".to_vec()
                        },
                        session_lifetime_ms: if round % 2 == 0 { 0 } else { 60_000 },
                    }
                };
                Act::Send(frame_for::<SaslAuthenticateRequest>(h, &resp))
            }
            10 => {
                l2.lock().unwrap().push((10, vec![h.api_version as u8]));
                let (node_id, host, port) = coord.lock().unwrap().clone();
                let resp = if h.api_version >= 4 {
                    FindCoordinatorResponse {
                        coordinators: vec![Coordinator {
                            key: "g1".to_string(),
                            node_id,
                            host,
                            port,
                            error_code: 0,
                            error_message: None,
                        }],
                        ..Default::default()
                    }
                } else {
                    FindCoordinatorResponse {
                        node_id,
                        host,
                        port,
                        ..Default::default()
                    }
                };
                Act::Send(frame_for::<FindCoordinatorRequest>(h, &resp))
            }
            _ => Act::Silence(Duration::from_millis(10)),
        });
        (m, log)
    }

    #[test]
    fn sasl_exchange_runs_after_api_versions_and_records_session_lifetime() {
        let coord = Arc::new(Mutex::new((1, "127.0.0.1".to_string(), 1)));
        let (m, log) = sasl_broker(false, 6, coord);
        let mut o = opts();
        o.sasl = Some(two_step());
        let before = Instant::now();
        let c = BrokerConnection::connect(&m.addr, &o, soon()).expect("authenticated");
        let keys: Vec<i16> = m.seen.lock().unwrap().iter().map(|s| s.0).collect();
        assert_eq!(keys, vec![18, 17, 36, 36]);
        assert_eq!(log.lock().unwrap().len(), 3);
        assert_eq!(c.session_lifetime(), Some(Duration::from_secs(60)));
        let at = c.reauthenticate_at().expect("reauth time");
        assert!(
            at >= before + Duration::from_secs(60)
                && at <= Instant::now() + Duration::from_secs(60)
        );
        // SaslHandshake goes out at v1 (v0 would mean raw, unframed SASL tokens).
        let hs = m
            .seen
            .lock()
            .unwrap()
            .iter()
            .find(|s| s.0 == 17)
            .map(|s| s.1);
        assert_eq!(hs, Some(1));
        let payloads = m.payloads.lock().unwrap().clone();
        let (_, hs) = decode_request_frame::<SaslHandshakeRequest>(&payloads[1]).expect("hs");
        assert_eq!(hs.mechanism, "TEST-TWO-STEP");
        let sent: Vec<Vec<u8>> = payloads[2..]
            .iter()
            .map(|p| {
                decode_request_frame::<SaslAuthenticateRequest>(p)
                    .expect("auth")
                    .1
                    .auth_bytes
            })
            .collect();
        assert_eq!(sent, vec![b"one".to_vec(), b"two".to_vec()]);
    }

    /// Sends "one", and on "a" finishes with final bytes that are sent but not stepped.
    struct FinalBytes;

    impl SaslAuthenticator for FinalBytes {
        fn mechanism_name(&self) -> &str {
            "TEST-FINAL"
        }
        fn start(&mut self) -> Result<Vec<u8>, SaslError> {
            Ok(b"one".to_vec())
        }
        fn step(&mut self, server: &[u8]) -> Result<AuthStep, SaslError> {
            match server {
                b"a" => Ok(AuthStep::Done(Some(b"fin".to_vec()))),
                _ => Err(SaslError::UnexpectedServerMessage {
                    mechanism: "TEST-FINAL",
                }),
            }
        }
    }

    #[test]
    fn done_with_final_bytes_sends_them_without_stepping_again() {
        let coord = Arc::new(Mutex::new((1, "127.0.0.1".to_string(), 1)));
        let (m, _) = sasl_broker(false, 6, coord);
        let mut o = opts();
        o.sasl = Some(Arc::new(|| {
            Ok(Box::new(FinalBytes) as Box<dyn SaslAuthenticator>)
        }));
        let c = BrokerConnection::connect(&m.addr, &o, soon()).expect("authenticated");
        let payloads = m.payloads.lock().unwrap().clone();
        let sent: Vec<Vec<u8>> = payloads[2..]
            .iter()
            .map(|p| {
                decode_request_frame::<SaslAuthenticateRequest>(p)
                    .expect("auth")
                    .1
                    .auth_bytes
            })
            .collect();
        assert_eq!(sent, vec![b"one".to_vec(), b"fin".to_vec()]);
        assert_eq!(c.session_lifetime(), Some(Duration::from_secs(60)));
    }

    #[test]
    fn failing_factory_is_a_sasl_error() {
        let coord = Arc::new(Mutex::new((1, "127.0.0.1".to_string(), 1)));
        let (m, _) = sasl_broker(false, 6, coord);
        let mut o = opts();
        o.sasl = Some(Arc::new(|| {
            Err(SaslError::TokenCallback {
                message: "token callback failed".to_string(),
            })
        }));
        let err = BrokerConnection::connect(&m.addr, &o, soon()).expect_err("factory");
        assert!(
            matches!(&err, ClientError::SaslRefused { source: SaslError::TokenCallback { message }, .. }
                if message == "token callback failed"),
            "{err:?}"
        );
        assert!(!err.is_retriable(), "{err:?}");
    }

    #[test]
    fn reauthentication_repeats_the_exchange_on_the_same_connection() {
        let coord = Arc::new(Mutex::new((1, "127.0.0.1".to_string(), 1)));
        let (m, _) = sasl_broker(false, 6, coord);
        let mut o = opts();
        o.sasl = Some(two_step());
        let mut c = BrokerConnection::connect(&m.addr, &o, soon()).expect("authenticated");
        assert!(!c.needs_reauthentication(Instant::now()));
        assert!(c.needs_reauthentication(Instant::now() + Duration::from_secs(55)));
        let first = c.reauthenticate_at().expect("at");
        thread::sleep(Duration::from_millis(20));
        c.reauthenticate(soon()).expect("re-authenticated");
        assert!(
            c.reauthenticate_at().expect("at") > first,
            "lifetime renewed"
        );
        let keys: Vec<i16> = m.seen.lock().unwrap().iter().map(|s| s.0).collect();
        assert_eq!(keys, vec![18, 17, 36, 36, 17, 36, 36]);
        assert_eq!(m.accepted.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn sasl_rejection_is_a_sasl_error_with_the_broker_message() {
        let coord = Arc::new(Mutex::new((1, "127.0.0.1".to_string(), 1)));
        let (m, _) = sasl_broker(true, 6, coord);
        let mut o = opts();
        o.sasl = Some(two_step());
        let err = BrokerConnection::connect(&m.addr, &o, soon()).expect_err("rejected");
        match &err {
            ClientError::Sasl { reason, .. } => {
                assert!(reason.contains("bad credentials"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn find_coordinator_uses_batched_form_and_reuses_the_bootstrap_connection() {
        let coord = Arc::new(Mutex::new((7, "127.0.0.1".to_string(), 0)));
        let (m, log) = sasl_broker(false, 6, coord.clone());
        let port: i32 = m.addr.rsplit(':').next().unwrap().parse().unwrap();
        coord.lock().unwrap().2 = port;
        let mut client =
            Client::connect(ClientOptions::new([m.addr.clone()]), soon()).expect("connect");
        let c = client.find_coordinator("g1", soon()).expect("coordinator");
        assert_eq!((c.node_id, c.port), (7, port));
        assert_eq!(
            log.lock()
                .unwrap()
                .iter()
                .find(|e| e.0 == 10)
                .map(|e| e.1[0]),
            Some(6)
        );
        let fc = m.payloads.lock().unwrap()[1].clone();
        let (_, req) = decode_request_frame::<FindCoordinatorRequest>(&fc).expect("fc");
        assert_eq!(req.coordinator_keys, vec!["g1".to_string()]);
        assert_eq!(req.key_type, 0);
        client
            .connection(BrokerTarget::Node(7), soon())
            .expect("node 7");
        assert_eq!(client.connection_count(), 1);
        assert_eq!(m.accepted.load(Ordering::SeqCst), 1, "no second connection");
    }

    #[test]
    fn find_coordinator_uses_the_single_key_form_on_old_brokers_and_connects_elsewhere() {
        // Coordinator on another "broker" (a second mock).
        let other = mock(1, |h, _| Act::Send(api_versions_ok(h)));
        let other_port: i32 = other.addr.rsplit(':').next().unwrap().parse().unwrap();
        let coord = Arc::new(Mutex::new((3, "127.0.0.1".to_string(), other_port)));
        let (m, log) = sasl_broker(false, 3, coord);
        let mut client =
            Client::connect(ClientOptions::new([m.addr.clone()]), soon()).expect("connect");
        let c = client.find_coordinator("g1", soon()).expect("coordinator");
        assert_eq!((c.node_id, c.port), (3, other_port));
        assert_eq!(
            log.lock()
                .unwrap()
                .iter()
                .find(|e| e.0 == 10)
                .map(|e| e.1[0]),
            Some(3)
        );
        let fc = m.payloads.lock().unwrap()[1].clone();
        let (_, req) = decode_request_frame::<FindCoordinatorRequest>(&fc).expect("fc");
        assert_eq!(req.key, "g1");
        assert!(req.coordinator_keys.is_empty());
        client
            .connection(BrokerTarget::Node(3), soon())
            .expect("node 3");
        assert_eq!(client.connection_count(), 2);
        assert_eq!(other.accepted.load(Ordering::SeqCst), 1);
        assert!(client.api_versions(3).is_some());
    }
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

#[test]
fn v0_fallback_body_without_unsupported_version_is_rejected() {
    // A broker that answers a flexible ApiVersions request with a v0 body saying "no error":
    // not something Kafka does; the client must not trust it.
    let m = mock(1, |h, _| {
        let mut b = Vec::new();
        encode_response_frame::<ApiVersionsRequest>(
            &mut b,
            h.correlation_id,
            &api_versions_body(0, &[(18, 0, 4)]),
            0,
        )
        .expect("encode");
        Act::Send(b)
    });
    let err = BrokerConnection::connect(&m.addr, &opts(), soon()).expect_err("inconsistent");
    assert!(matches!(err, ClientError::Protocol { .. }), "{err:?}");
}
