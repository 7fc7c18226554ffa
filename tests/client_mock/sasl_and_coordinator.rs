//! SASL authentication (handshake, multi-round exchanges, re-authentication, rejection) and
//! FindCoordinator (batched and single-key forms), against a mock that speaks both.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use kafka_streams_group::client::{
    AuthStep, BrokerConnection, BrokerTarget, Client, ClientError, ClientOptions,
    SaslAuthenticator, SaslFactory,
};
use kafka_streams_group::protocol::api::api_versions::ApiVersionsRequest;
use kafka_streams_group::protocol::api::find_coordinator::{
    Coordinator, FindCoordinatorRequest, FindCoordinatorResponse,
};
use kafka_streams_group::protocol::api::sasl_authenticate::{
    SaslAuthenticateRequest, SaslAuthenticateResponse,
};
use kafka_streams_group::protocol::api::sasl_handshake::{
    SaslHandshakeRequest, SaslHandshakeResponse,
};
use kafka_streams_group::protocol::frame::{decode_request_frame, encode_response_frame};
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::{BrokerErrorKind, Request};
use kafka_streams_group::transport::sasl::SaslError;

use crate::{api_versions_body, api_versions_ok, mock, opts, soon, Act, Mock};

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
fn sasl_broker(reject: bool, fc_max: i16, coord: Arc<Mutex<(i32, String, i32)>>) -> (Mock, Log) {
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
        at >= before + Duration::from_secs(60) && at <= Instant::now() + Duration::from_secs(60)
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

/// A broker whose FindCoordinator (v3, single key) names node `1 + answers so far` at its own
/// address, so every fresh lookup is visible in the node id.
fn counting_coordinator_broker() -> Mock {
    let port = Arc::new(Mutex::new(0));
    let p2 = port.clone();
    let lookups = Arc::new(Mutex::new(0));
    let m = mock(4, move |h, _| match h.api_key {
        18 => {
            let mut b = Vec::new();
            let body = api_versions_body(0, &[(18, 0, 4), (10, 0, 3), (3, 0, 12)]);
            encode_response_frame::<ApiVersionsRequest>(
                &mut b,
                h.correlation_id,
                &body,
                h.api_version,
            )
            .expect("encode");
            Act::Send(b)
        }
        10 => {
            let mut n = lookups.lock().unwrap();
            *n += 1;
            let resp = FindCoordinatorResponse {
                node_id: *n,
                host: "127.0.0.1".to_string(),
                port: *p2.lock().unwrap(),
                ..Default::default()
            };
            Act::Send(frame_for::<FindCoordinatorRequest>(h, &resp))
        }
        _ => Act::Silence(Duration::from_millis(10)),
    });
    *port.lock().unwrap() = m.addr.rsplit(':').next().unwrap().parse().unwrap();
    m
}

#[test]
fn coordinators_are_cached_per_key_type_and_key_until_they_move() {
    use kafka_streams_group::client::CoordinatorKey;
    let m = counting_coordinator_broker();
    let mut client =
        Client::connect(ClientOptions::new([m.addr.clone()]), soon()).expect("connect");
    let group = CoordinatorKey::group("g1");
    let txn = CoordinatorKey::transaction("g1");
    let node = |client: &mut Client, key: &CoordinatorKey| {
        client
            .coordinator(key, soon())
            .expect("coordinator")
            .node_id
    };
    assert_eq!(node(&mut client, &group), 1);
    assert_eq!(node(&mut client, &group), 1, "cached: no second lookup");
    assert_eq!(
        node(&mut client, &txn),
        2,
        "another key type is another key"
    );
    let lookups = |m: &Mock| m.seen.lock().unwrap().iter().filter(|s| s.0 == 10).count();
    assert_eq!(lookups(&m), 2);
    let fc = m.payloads.lock().unwrap().last().cloned().expect("payload");
    let (_, req) = decode_request_frame::<FindCoordinatorRequest>(&fc).expect("fc");
    assert_eq!((req.key_type, req.key.as_str()), (1, "g1"));

    // Loading: the same coordinator is asked again; moved: looked up again.
    assert!(!client.coordinator_failed(&group, BrokerErrorKind::CoordinatorLoadInProgress));
    assert_eq!(node(&mut client, &group), 1);
    assert!(client.coordinator_failed(&group, BrokerErrorKind::NotCoordinator));
    assert_eq!(node(&mut client, &group), 3);
    assert!(client.coordinator_failed(&group, BrokerErrorKind::CoordinatorNotAvailable));
    assert_eq!(node(&mut client, &group), 4);
    assert_eq!(
        node(&mut client, &txn),
        2,
        "the transaction coordinator stays"
    );
    client.forget_coordinator(&txn);
    assert_eq!(node(&mut client, &txn), 5);
    assert_eq!(lookups(&m), 5);
}
