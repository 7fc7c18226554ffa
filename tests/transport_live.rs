//! Transport against a real broker (PLAINTEXT and mutual-TLS SSL listeners), with a raw
//! ApiVersions v0 request so that only the transport is under test.
//!
//! Run: `KSG_CLUSTER_ENV=$PWD/.kafka/run-19192/cluster.env cargo test -- --ignored`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_streams_group::transport::{ConnectOptions, Connection, TransportError};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

fn cluster() -> HashMap<String, String> {
    let path = std::env::var("KSG_CLUSTER_ENV").unwrap_or_else(|_| {
        panic!("KSG_CLUSTER_ENV is not set: point it at the cluster.env written by scripts/kafka.sh start")
    });
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read KSG_CLUSTER_ENV={path}: {e}"));
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

fn get(env: &HashMap<String, String>, key: &str) -> String {
    env.get(key)
        .cloned()
        .unwrap_or_else(|| panic!("{key} missing from cluster.env"))
}

fn tls_config(env: &HashMap<String, String>, with_client_cert: bool) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(get(env, "KSG_CA_PEM")).expect("ca pem") {
        roots.add(c.expect("ca cert")).expect("add ca");
    }
    let b = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots);
    let cfg = if with_client_cert {
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(get(env, "KSG_CLIENT_CERT_PEM"))
                .expect("client pem")
                .collect::<Result<_, _>>()
                .expect("client cert");
        let key = PrivateKeyDer::from_pem_file(get(env, "KSG_CLIENT_KEY_PEM")).expect("key");
        b.with_client_auth_cert(chain, key).expect("client auth")
    } else {
        b.with_no_client_auth()
    };
    Arc::new(cfg)
}

/// ApiVersions v0 request frame, hand-encoded: header v1 (key, version, cid, client id).
fn api_versions_v0(cid: i32) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend(18i16.to_be_bytes());
    p.extend(0i16.to_be_bytes());
    p.extend(cid.to_be_bytes());
    let id = b"transport-live";
    p.extend((id.len() as i16).to_be_bytes());
    p.extend(id);
    let mut f = (p.len() as i32).to_be_bytes().to_vec();
    f.extend(p);
    f
}

/// Checks a v0 ApiVersions response: correlation id, error 0, and some API keys listed.
fn check_api_versions_v0(frame: &[u8], cid: i32) {
    assert!(frame.len() >= 10, "short response: {frame:?}");
    assert_eq!(i32::from_be_bytes(frame[0..4].try_into().unwrap()), cid);
    assert_eq!(
        i16::from_be_bytes(frame[4..6].try_into().unwrap()),
        0,
        "error code"
    );
    let n = i32::from_be_bytes(frame[6..10].try_into().unwrap());
    assert!(n > 10, "broker lists {n} APIs");
    assert_eq!(frame.len(), 10 + 6 * n as usize);
}

fn opts(tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>) -> ConnectOptions {
    ConnectOptions {
        connect_timeout: Duration::from_secs(5),
        tls,
        ..ConnectOptions::default()
    }
}

fn host(addr: &str) -> ServerName<'static> {
    let h = addr.rsplit_once(':').expect("host:port").0.to_string();
    ServerName::try_from(h).expect("server name")
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn plaintext_frames_round_trip() {
    let env = cluster();
    let mut c =
        Connection::connect(&get(&env, "KSG_BOOTSTRAP_PLAINTEXT"), &opts(None)).expect("connect");
    let dl = Instant::now() + Duration::from_secs(10);
    for cid in [1, 2, 3] {
        c.send_frame(&api_versions_v0(cid), dl).expect("send");
        check_api_versions_v0(&c.recv_frame(dl).expect("recv"), cid);
    }
    assert!(!c.is_tls());
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn mutual_tls_frames_round_trip() {
    let env = cluster();
    let addr = get(&env, "KSG_BOOTSTRAP_SSL");
    let tls = Some((tls_config(&env, true), host(&addr)));
    let mut c = Connection::connect(&addr, &opts(tls)).expect("connect");
    assert!(c.is_tls());
    let dl = Instant::now() + Duration::from_secs(10);
    for cid in [10, 11] {
        c.send_frame(&api_versions_v0(cid), dl).expect("send");
        check_api_versions_v0(&c.recv_frame(dl).expect("recv"), cid);
    }
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn tls_without_client_cert_is_rejected() {
    let env = cluster();
    let addr = get(&env, "KSG_BOOTSTRAP_SSL");
    let tls = Some((tls_config(&env, false), host(&addr)));
    // TLS 1.3: the server checks the (missing) client certificate after the client finished
    // its side of the handshake, so the failure may surface on connect or on the first read.
    let r = Connection::connect(&addr, &opts(tls)).and_then(|mut c| {
        let dl = Instant::now() + Duration::from_secs(10);
        c.send_frame(&api_versions_v0(1), dl)?;
        c.recv_frame(dl)
    });
    let err = r.expect_err("broker requires a client certificate");
    assert!(
        matches!(
            err,
            TransportError::Tls { .. } | TransportError::Eof { .. } | TransportError::Io { .. }
        ),
        "{err:?}"
    );
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn tls_with_wrong_server_name_fails_verification() {
    let env = cluster();
    let addr = get(&env, "KSG_BOOTSTRAP_SSL");
    let name = ServerName::try_from("not-the-broker.example").expect("name");
    let err = Connection::connect(&addr, &opts(Some((tls_config(&env, true), name))))
        .expect_err("hostname verification");
    assert!(matches!(err, TransportError::Tls { .. }), "{err:?}");
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn plaintext_client_on_tls_listener_fails_clearly_without_big_allocation() {
    let env = cluster();
    let mut c =
        Connection::connect(&get(&env, "KSG_BOOTSTRAP_SSL"), &opts(None)).expect("tcp connect");
    let dl = Instant::now() + Duration::from_secs(10);
    c.send_frame(&api_versions_v0(1), dl).expect("send");
    let err = c.recv_frame(dl).expect_err("not a Kafka frame");
    // The TLS server answers garbage with an alert record (0x15 0x03 0x0X ..), which reads as
    // a ~350 MB length; or it just closes. Either way: a clear error, no allocation.
    assert!(
        matches!(
            err,
            TransportError::FrameTooLarge { .. } | TransportError::Eof { .. }
        ),
        "{err:?}"
    );
    eprintln!("plaintext on TLS listener: {err}");
    assert!(c.is_broken());
}
