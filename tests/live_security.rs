//! Live security tests against the harness broker, through the public API only: every
//! listener (PLAINTEXT, SSL with mutual TLS, SASL_PLAINTEXT and SASL_SSL with PLAIN,
//! SCRAM-SHA-256/512 and OAUTHBEARER), typed failures (wrong password, untrusted CA, hostname
//! mismatch, missing client certificate, plaintext on TLS, refused, silent broker), KIP-368
//! re-authentication, and secrets never reaching logs, `Debug` or error text.
//!
//! `scripts/test.sh` runs them; by hand: `scripts/kafka.sh start` then
//! `KSG_CLUSTER_ENV=.kafka/run-19092/cluster.env cargo test --test live_security -- --ignored`.

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use common::{unique_name, Cluster};
use kafka_streams_group::admin::{self, NewTopic};
use kafka_streams_group::client::Client;
use kafka_streams_group::{
    ClientConfig, ClientMetrics, Error, OAuthToken, SaslConfig, SecurityProtocol,
    StreamsGroupConfig, StreamsGroupSession, StreamsTopology, Subtopology, TlsConfig,
};

const API_VERSIONS: i16 = 18;
const SASL_HANDSHAKE: i16 = 17;
const SASL_AUTHENTICATE: i16 = 36;

// ---------------------------------------------------------------------------------------
// Log capture: installed by every test (first one wins), so the secrets test sees what every
// test in this binary logged, at every level.

struct Capture(Mutex<String>);

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        let line = format!("{} {} {}\n", record.level(), record.target(), record.args());
        if let Ok(mut s) = self.0.lock() {
            s.push_str(&line);
        }
    }
    fn flush(&self) {}
}

fn logs() -> &'static Capture {
    static LOGS: OnceLock<&'static Capture> = OnceLock::new();
    LOGS.get_or_init(|| {
        let capture: &'static Capture = Box::leak(Box::new(Capture(Mutex::new(String::new()))));
        log::set_logger(capture).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Trace);
        capture
    })
}

fn cluster() -> Cluster {
    logs();
    Cluster::get()
}

/// ApiVersions requests one connection makes: one where the broker speaks our newest version
/// (v5, Kafka 4.4+); two on older brokers, which answer v5 with UNSUPPORTED_VERSION and their
/// own range, after which the client asks again at the version they offer (as Kafka's Java
/// client does).
fn api_versions_per_connection() -> u64 {
    if Cluster::get().kafka_version() >= (4, 4, 0) {
        1
    } else {
        2
    }
}

// ---------------------------------------------------------------------------------------
// Configurations.

fn ca(c: &Cluster) -> TlsConfig {
    TlsConfig::new().ca_pem_file(c.value("KSG_CA_PEM"))
}

fn mutual_tls(c: &Cluster) -> TlsConfig {
    ca(c).client_cert_pem_file(
        c.value("KSG_CLIENT_CERT_PEM"),
        c.value("KSG_CLIENT_KEY_PEM"),
    )
}

fn base(bootstrap: &str) -> ClientConfig {
    ClientConfig::new(bootstrap)
        .client_id("live-security")
        .connect_timeout(Duration::from_secs(5))
        .request_timeout(Duration::from_secs(10))
}

fn plaintext(c: &Cluster) -> ClientConfig {
    base(c.value("KSG_BOOTSTRAP_PLAINTEXT"))
}

fn ssl(c: &Cluster) -> ClientConfig {
    base(c.value("KSG_BOOTSTRAP_SSL"))
        .security_protocol(SecurityProtocol::Ssl)
        .tls(mutual_tls(c))
}

fn sasl_plaintext(c: &Cluster, sasl: SaslConfig) -> ClientConfig {
    base(c.value("KSG_BOOTSTRAP_SASL_PLAINTEXT"))
        .security_protocol(SecurityProtocol::SaslPlaintext)
        .sasl(sasl)
}

fn sasl_ssl(c: &Cluster, sasl: SaslConfig) -> ClientConfig {
    base(c.value("KSG_BOOTSTRAP_SASL_SSL"))
        .security_protocol(SecurityProtocol::SaslSsl)
        .tls(ca(c))
        .sasl(sasl)
}

fn plain(c: &Cluster) -> SaslConfig {
    SaslConfig::plain(c.value("KSG_PLAIN_USERNAME"), c.value("KSG_PLAIN_PASSWORD"))
}

fn scram256(c: &Cluster) -> SaslConfig {
    SaslConfig::scram_sha256(c.value("KSG_SCRAM_USERNAME"), c.value("KSG_SCRAM_PASSWORD"))
}

fn scram512(c: &Cluster) -> SaslConfig {
    SaslConfig::scram_sha512(c.value("KSG_SCRAM_USERNAME"), c.value("KSG_SCRAM_PASSWORD"))
}

/// An unsecured JWS as Kafka's `OAuthBearerUnsecuredJws` accepts it: header `{"alg":"none"}`,
/// claims with `sub`, `iat` and a future `exp` (seconds), and an empty signature.
fn unsecured_jwt(sub: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    let b64 = |v: serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
    };
    let header = b64(serde_json::json!({ "alg": "none" }));
    let claims = b64(serde_json::json!({
        "sub": sub,
        "iat": now,
        "exp": now + 3600,
        "scope": "live-security",
    }));
    format!("{header}.{claims}.")
}

fn oauth(token: String) -> SaslConfig {
    SaslConfig::oauthbearer(move || Ok(OAuthToken::new(token.clone())))
}

// ---------------------------------------------------------------------------------------
// The tour: every call a member needs, over one listener.

fn tour(config: ClientConfig) {
    let metrics = ClientMetrics::new();
    let config = config.metrics(metrics.clone());
    let mut client = Client::from_config(&config, Duration::from_secs(30))
        .unwrap_or_else(|e| panic!("connect {config:?}: {e}"));

    let versions = client
        .broker_api_versions(Duration::from_secs(10))
        .expect("ApiVersions");
    for key in [3, 10, 19] {
        assert!(versions.range(key).is_some(), "api {key}: {versions:?}");
    }

    let md = client
        .fetch_metadata(None, Duration::from_secs(10))
        .expect("Metadata");
    assert!(!md.brokers.is_empty(), "{md:?}");

    let group = unique_name("sec-group");
    let coordinator = client
        .lookup_coordinator(&group, Duration::from_secs(20))
        .expect("FindCoordinator");
    assert!(coordinator.port > 0, "{coordinator:?}");
    assert!(
        md.brokers.iter().any(|b| b.node_id == coordinator.node_id),
        "coordinator {coordinator:?} not among {:?}",
        md.brokers
    );

    let topic = unique_name("sec-topic");
    admin::create_topics(
        &config,
        &[NewTopic::new(topic.clone(), 2)],
        Duration::from_secs(30),
    )
    .expect("CreateTopics");
    // Metadata reaches the broker's cache shortly after the controller created the topic.
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let md = client
            .fetch_metadata(Some(&[topic.as_str()]), Duration::from_secs(10))
            .expect("Metadata of the new topic");
        let t = md
            .topics
            .iter()
            .find(|t| t.name.as_deref() == Some(topic.as_str()))
            .unwrap_or_else(|| panic!("{topic} missing: {md:?}"));
        if t.error_code == 0 {
            assert_eq!(t.partitions.len(), 2, "{t:?}");
            break;
        }
        // 3 = UNKNOWN_TOPIC_OR_PARTITION: not propagated yet; anything else is wrong.
        assert_eq!(t.error_code, 3, "{t:?}");
        assert!(Instant::now() < until, "{topic} never appeared: {t:?}");
        std::thread::sleep(Duration::from_millis(100));
    }

    let snap = metrics.snapshot();
    assert!(snap.errors_by_api.is_empty(), "{snap:?}");
    assert_eq!(snap.reconnects, 0, "{snap:?}");
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn plaintext_tour() {
    let c = cluster();
    tour(plaintext(&c));
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn ssl_mutual_tls_tour() {
    let c = cluster();
    tour(ssl(&c));
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn sasl_plaintext_tours() {
    let c = cluster();
    tour(sasl_plaintext(&c, plain(&c)));
    tour(sasl_plaintext(&c, scram256(&c)));
    tour(sasl_plaintext(&c, scram512(&c)));
    tour(sasl_plaintext(&c, oauth(unsecured_jwt("ksg-oauth"))));
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn sasl_ssl_tours() {
    let c = cluster();
    tour(sasl_ssl(&c, plain(&c)));
    tour(sasl_ssl(&c, scram256(&c)));
    tour(sasl_ssl(&c, scram512(&c)));
    tour(sasl_ssl(&c, oauth(unsecured_jwt("ksg-oauth"))));
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn streams_group_join_and_leave_over_sasl_ssl_scram_sha512() {
    let c = cluster();
    let config = sasl_ssl(&c, scram512(&c));
    let input = unique_name("sec-input");
    admin::create_topics(
        &config,
        &[NewTopic::new(input.clone(), 2)],
        Duration::from_secs(30),
    )
    .expect("create input topic");
    let group = unique_name("sec-app");
    let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic(&input));
    let member_config = StreamsGroupConfig::new(config.bootstrap(), &group, topology)
        .client_config(config)
        .join_timeout(Duration::from_secs(20))
        .close_timeout(Duration::from_secs(10));
    let mut session = StreamsGroupSession::join(member_config).expect("join over SASL_SSL");
    assert!(!session.member_id().is_empty());
    session.close().expect("leave");
    assert!(
        matches!(
            session.state(),
            kafka_streams_group::StreamsGroupState::Closed
        ),
        "{:?}",
        session.state()
    );
}

// ---------------------------------------------------------------------------------------
// Typed failures.

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn wrong_password_is_one_attempt_and_names_the_mechanism() {
    let c = cluster();
    let user = c.value("KSG_SCRAM_USERNAME").to_owned();
    let plain_user = c.value("KSG_PLAIN_USERNAME").to_owned();
    for (sasl, mechanism) in [
        (SaslConfig::plain(&plain_user, "not-the-password"), "PLAIN"),
        (
            SaslConfig::scram_sha256(&user, "not-the-password"),
            "SCRAM-SHA-256",
        ),
        (
            SaslConfig::scram_sha512(&user, "not-the-password"),
            "SCRAM-SHA-512",
        ),
    ] {
        let metrics = ClientMetrics::new();
        let config = sasl_plaintext(&c, sasl).metrics(metrics.clone());
        let start = Instant::now();
        let err = Client::from_config(&config, Duration::from_secs(20))
            .expect_err("a wrong password must be rejected");
        let elapsed = start.elapsed();
        eprintln!("{elapsed:?} error: {err:?}");
        match &err {
            Error::SaslAuthentication { mechanism: m, .. } => assert_eq!(m, mechanism, "{err}"),
            other => panic!("{mechanism}: expected SaslAuthentication, got {other:?}"),
        }
        assert!(err.to_string().contains(mechanism), "{err}");
        assert!(!err.is_retriable(), "{err:?}");
        let snap = metrics.snapshot();
        // One connection: one ApiVersions and one SaslHandshake, nothing repeated.
        assert_eq!(
            snap.requests_by_api.get(&API_VERSIONS),
            Some(&api_versions_per_connection()),
            "{snap:?}"
        );
        assert_eq!(
            snap.requests_by_api.get(&SASL_HANDSHAKE),
            Some(&1),
            "{snap:?}"
        );
        // PLAIN fails on its only SaslAuthenticate, SCRAM on the client-final message.
        let expected_rounds = if mechanism == "PLAIN" { 1 } else { 2 };
        assert_eq!(
            snap.requests_by_api.get(&SASL_AUTHENTICATE),
            Some(&expected_rounds),
            "{mechanism}: {snap:?}"
        );
        assert_eq!(snap.open_connections, 0, "{snap:?}");
        assert_eq!(snap.reconnects + snap.retries, 0, "{snap:?}");
        // No tight retry loop: a single exchange answers in well under the timeout.
        assert!(elapsed < Duration::from_secs(3), "{mechanism}: {elapsed:?}");
    }
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn wrong_password_ends_the_bootstrap_at_the_first_server() {
    let c = cluster();
    // Two names for the same listener. A refused login is the same at every broker (Kafka's
    // clients treat it as fatal), so the second is never tried.
    let port = c
        .value("KSG_BOOTSTRAP_SASL_PLAINTEXT")
        .rsplit_once(':')
        .expect("host:port")
        .1
        .to_owned();
    let metrics = ClientMetrics::new();
    let config = ClientConfig::new(format!("127.0.0.1:{port},localhost:{port}"))
        .security_protocol(SecurityProtocol::SaslPlaintext)
        .sasl(SaslConfig::scram_sha256(
            c.value("KSG_SCRAM_USERNAME"),
            "not-the-password",
        ))
        .metrics(metrics.clone());
    let err = Client::from_config(&config, Duration::from_secs(20)).expect_err("refused");
    eprintln!("error: {err:?}");
    assert!(
        matches!(&err, Error::SaslAuthentication { mechanism, .. } if mechanism == "SCRAM-SHA-256"),
        "{err:?}"
    );
    let snap = metrics.snapshot();
    assert_eq!(
        snap.requests_by_api.get(&API_VERSIONS),
        Some(&api_versions_per_connection()),
        "{snap:?}"
    );
}

/// A CA the broker never saw, as PEM.
fn foreign_ca_pem() -> String {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "live-security foreign CA");
    let key = rcgen::KeyPair::generate().expect("key");
    params.self_signed(&key).expect("self-signed CA").pem()
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn untrusted_ca_is_a_typed_tls_error() {
    let c = cluster();
    let tls = TlsConfig::new()
        .ca_pem(foreign_ca_pem())
        .client_cert_pem_file(
            c.value("KSG_CLIENT_CERT_PEM"),
            c.value("KSG_CLIENT_KEY_PEM"),
        );
    let config = base(c.value("KSG_BOOTSTRAP_SSL"))
        .security_protocol(SecurityProtocol::Ssl)
        .tls(tls);
    let err = Client::from_config(&config, Duration::from_secs(20)).expect_err("untrusted");
    eprintln!("error: {err:?}");
    match &err {
        Error::Tls {
            source: rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
            ..
        } => {}
        other => panic!("expected Tls(UnknownIssuer), got {other:?}"),
    }
    assert!(!err.is_retriable());
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn hostname_mismatch_is_a_typed_tls_error() {
    let c = cluster();
    // The broker's SANs are localhost, 127.0.0.1 and ::1; verify against another name.
    let config = base(c.value("KSG_BOOTSTRAP_SASL_SSL"))
        .security_protocol(SecurityProtocol::SaslSsl)
        .tls(ca(&c).server_name("kafka.example.com"))
        .sasl(scram512(&c));
    let err = Client::from_config(&config, Duration::from_secs(20)).expect_err("wrong name");
    eprintln!("error: {err:?}");
    match &err {
        Error::Tls {
            source: rustls::Error::InvalidCertificate(cert),
            ..
        } => assert!(
            matches!(
                cert,
                rustls::CertificateError::NotValidForName
                    | rustls::CertificateError::NotValidForNameContext { .. }
            ),
            "{cert:?}"
        ),
        other => panic!("expected Tls(NotValidForName), got {other:?}"),
    }
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn missing_client_certificate_fails_fast_and_typed() {
    let c = cluster();
    let config = base(c.value("KSG_BOOTSTRAP_SSL"))
        .security_protocol(SecurityProtocol::Ssl)
        .tls(ca(&c))
        .request_timeout(Duration::from_secs(8));
    let start = Instant::now();
    let err = Client::from_config(&config, Duration::from_secs(20)).expect_err("no client cert");
    let elapsed = start.elapsed();
    eprintln!("{elapsed:?} error: {err:?}");
    // TLS 1.3 finishes the client's side of the handshake before the broker checks the
    // certificate, so the refusal arrives as an alert (or a close) on the first read.
    assert!(
        matches!(
            err,
            Error::Tls { .. } | Error::Disconnected { .. } | Error::Io { .. }
        ),
        "{err:?}"
    );
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}: {err}");
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn plaintext_client_on_the_tls_listener_is_refused_by_the_frame_check() {
    let c = cluster();
    // The broker answers the non-TLS bytes with a TLS alert record, whose header read as a
    // Kafka length is 0x15030300 (352 MB): the configured limit must refuse it before any
    // buffer of that size is allocated.
    let config = base(c.value("KSG_BOOTSTRAP_SSL")).max_frame_size(64 * 1024);
    let start = Instant::now();
    let err = Client::from_config(&config, Duration::from_secs(20)).expect_err("TLS listener");
    let elapsed = start.elapsed();
    eprintln!("{elapsed:?} error: {err:?}");
    match &err {
        Error::Protocol { message, .. } => {
            assert!(message.contains("above the limit of 65536"), "{message}");
            assert!(message.contains("TLS listener"), "{message}");
        }
        other => panic!("expected the frame-size Protocol error, got {other:?}"),
    }
    assert!(!err.is_retriable());
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn connection_refused_within_the_connect_timeout() {
    logs();
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    let connect_timeout = Duration::from_secs(2);
    let config = ClientConfig::new(closed.to_string()).connect_timeout(connect_timeout);
    let start = Instant::now();
    let err = Client::from_config(&config, Duration::from_secs(20)).expect_err("closed port");
    let elapsed = start.elapsed();
    eprintln!("{elapsed:?} error: {err:?}");
    match &err {
        Error::Disconnected { reason, .. } => {
            assert!(reason.contains(&closed.to_string()), "{reason}")
        }
        other => panic!("expected Disconnected, got {other:?}"),
    }
    assert!(err.is_retriable());
    assert!(
        elapsed < connect_timeout + Duration::from_millis(500),
        "{elapsed:?}"
    );
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn silent_broker_hits_the_request_timeout() {
    logs();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    // Accept, read whatever comes, never answer; ends when the client hangs up.
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = listener.accept() {
            let mut buf = [0u8; 1024];
            while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
        }
    });
    let request_timeout = Duration::from_secs(2);
    let config = ClientConfig::new(addr.to_string())
        .connect_timeout(Duration::from_secs(5))
        .request_timeout(request_timeout);
    let start = Instant::now();
    let err = Client::from_config(&config, Duration::from_secs(20)).expect_err("silent");
    let elapsed = start.elapsed();
    eprintln!("{elapsed:?} error: {err:?}");
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(
        elapsed >= request_timeout.mul_f64(0.8) && elapsed <= request_timeout.mul_f64(1.2),
        "{elapsed:?} vs {request_timeout:?}: {err}"
    );
}

// ---------------------------------------------------------------------------------------
// KIP-368 re-authentication.

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn plain_session_is_reauthenticated_without_reconnecting() {
    let c = cluster();
    let lifetime = Duration::from_millis(
        c.value("KSG_SASL_PLAINTEXT_PLAIN_REAUTH_MS")
            .parse()
            .expect("reauth ms"),
    );
    let metrics = ClientMetrics::new();
    let config = sasl_plaintext(&c, plain(&c)).metrics(metrics.clone());
    let mut client = Client::from_config(&config, Duration::from_secs(20)).expect("connect");
    let start = Instant::now();
    let total = lifetime * 5 / 2; // 10 s for the harness's 4 s sessions
    let mut calls = 0;
    while start.elapsed() < total {
        std::thread::sleep(Duration::from_secs(1));
        client
            .fetch_metadata(None, Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("call {calls} at {:?}: {e}", start.elapsed()));
        calls += 1;
        assert_eq!(client.connection_count(), 1);
    }
    let snap = metrics.snapshot();
    assert_eq!(snap.reconnects, 0, "{snap:?}");
    assert_eq!(snap.open_connections, 1, "{snap:?}");
    assert!(snap.errors_by_api.is_empty(), "{snap:?}");
    // One connection (one ApiVersions), and the session renewed at least twice on it.
    assert_eq!(
        snap.requests_by_api.get(&API_VERSIONS),
        Some(&api_versions_per_connection()),
        "{snap:?}"
    );
    let handshakes = snap.requests_by_api.get(&SASL_HANDSHAKE).copied();
    assert!(handshakes.unwrap_or(0) >= 3, "{snap:?}");
    assert!(calls >= 8, "{calls}");
}

// ---------------------------------------------------------------------------------------
// Secrets.

/// The base64 body lines of a PEM file (what would leak if key material were printed).
fn pem_body_lines(pem: &str) -> Vec<String> {
    pem.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("-----"))
        .map(str::to_owned)
        .collect()
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn secrets_never_reach_logs_debug_or_errors() {
    let c = cluster();
    let password = c.value("KSG_SCRAM_PASSWORD").to_owned();
    let plain_password = c.value("KSG_PLAIN_PASSWORD").to_owned();
    let wrong_password = "wrong-but-still-secret-7f3a";
    let token = unsecured_jwt("ksg-secret-owner");
    let key_pem = std::fs::read_to_string(c.value("KSG_CLIENT_KEY_PEM")).expect("key file");
    let key_lines = pem_body_lines(&key_pem);
    assert!(!key_lines.is_empty());

    let mut text = String::new();
    let tls_with_key = || {
        ca(&c).client_cert_pem(
            std::fs::read(c.value("KSG_CLIENT_CERT_PEM")).expect("cert"),
            key_pem.clone().into_bytes(),
        )
    };

    // A full SCRAM exchange over SASL_SSL, with the client key loaded from PEM text.
    let good = base(c.value("KSG_BOOTSTRAP_SASL_SSL"))
        .security_protocol(SecurityProtocol::SaslSsl)
        .tls(tls_with_key())
        .sasl(scram512(&c));
    text.push_str(&format!("{good:?}\n"));
    let mut client = Client::from_config(&good, Duration::from_secs(20)).expect("SCRAM");
    client
        .fetch_metadata(None, Duration::from_secs(10))
        .expect("metadata");
    text.push_str(&format!("{client:?}\n"));

    // OAUTHBEARER with the token, and PLAIN, over the same listener.
    let oauth_config = sasl_ssl(&c, oauth(token.clone()));
    text.push_str(&format!("{oauth_config:?}\n"));
    Client::from_config(&oauth_config, Duration::from_secs(20)).expect("OAUTHBEARER");
    let plain_config = sasl_ssl(&c, plain(&c));
    text.push_str(&format!("{plain_config:?}\n"));
    Client::from_config(&plain_config, Duration::from_secs(20)).expect("PLAIN");

    // Failures: a wrong password for each password mechanism, a refused token.
    let user = c.value("KSG_SCRAM_USERNAME");
    let mut errors = Vec::new();
    for sasl in [
        SaslConfig::scram_sha512(user, wrong_password),
        SaslConfig::plain(c.value("KSG_PLAIN_USERNAME"), wrong_password),
        SaslConfig::oauthbearer(|| Ok(OAuthToken::new("not.a-valid.token"))),
    ] {
        let config = base(c.value("KSG_BOOTSTRAP_SASL_SSL"))
            .security_protocol(SecurityProtocol::SaslSsl)
            .tls(tls_with_key())
            .sasl(sasl);
        text.push_str(&format!("{config:?}\n"));
        errors.push(Client::from_config(&config, Duration::from_secs(20)).expect_err("refused"));
        errors.push(
            admin::create_topics(
                &config,
                &[NewTopic::new(unique_name("never"), 1)],
                Duration::from_secs(10),
            )
            .expect_err("refused"),
        );
    }
    assert!(
        matches!(errors[0], Error::SaslAuthentication { .. }),
        "{:?}",
        errors[0]
    );
    for e in &errors {
        eprintln!("error: {e:?}");
        text.push_str(&format!("{e}\n{e:?}\n"));
    }

    let logged = logs().0.lock().expect("log lock").clone();
    assert!(
        logged.contains("SaslAuthenticate") || logged.contains("SASL"),
        "the capture must see the library's SASL logs (debug/trace):\n{logged}"
    );
    for (haystack, what) in [(&text, "Debug/Display"), (&logged, "logs")] {
        for (secret, name) in [
            (password.as_str(), "SCRAM password"),
            (plain_password.as_str(), "PLAIN password"),
            (wrong_password, "wrong password"),
            (token.as_str(), "OAuth token"),
        ] {
            assert!(!haystack.contains(secret), "{name} appears in {what}");
        }
        // The token's claims part alone is as good as the token for an attacker.
        let claims = token.split('.').nth(1).expect("claims");
        assert!(
            !haystack.contains(claims),
            "OAuth token claims appear in {what}"
        );
        for line in &key_lines {
            assert!(
                !haystack.contains(line.as_str()),
                "private key appears in {what}"
            );
        }
    }
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn wrong_password_fails_admin_and_join_at_once() {
    let c = cluster();
    let user = c.value("KSG_SCRAM_USERNAME").to_owned();
    let config = || {
        let metrics = ClientMetrics::new();
        let config = sasl_ssl(&c, SaslConfig::scram_sha512(&user, "not-the-password"))
            .metrics(metrics.clone());
        (config, metrics)
    };

    // Describing a group refuses the same way: typed, naming the mechanism, one attempt.
    let (describe_config, metrics) = config();
    let err = kafka_streams_group::describe::describe_streams_group(
        &describe_config,
        "any-group",
        Duration::from_secs(20),
    )
    .expect_err("wrong password");
    eprintln!("describe error: {err:?}");
    assert!(
        matches!(&err, Error::SaslAuthentication { mechanism, .. } if mechanism == "SCRAM-SHA-512"),
        "{err:?}"
    );
    assert_eq!(
        metrics.snapshot().requests_by_api.get(&API_VERSIONS),
        Some(&api_versions_per_connection())
    );

    let (admin_config, metrics) = config();
    let err = admin::create_topics(
        &admin_config,
        &[NewTopic::new(unique_name("never"), 1)],
        Duration::from_secs(20),
    )
    .expect_err("wrong password");
    eprintln!("admin error: {err:?}");
    assert!(
        matches!(&err, Error::SaslAuthentication { mechanism, .. } if mechanism == "SCRAM-SHA-512"),
        "{err:?}"
    );
    assert_eq!(
        metrics.snapshot().requests_by_api.get(&API_VERSIONS),
        Some(&api_versions_per_connection())
    );

    // The join must not keep reconnecting with a password the broker refused.
    let (join_config, metrics) = config();
    let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("x"));
    let member_config =
        StreamsGroupConfig::new(join_config.bootstrap(), unique_name("sec-app"), topology)
            .client_config(join_config)
            .join_timeout(Duration::from_secs(10));
    let start = Instant::now();
    let err = StreamsGroupSession::join(member_config).expect_err("wrong password");
    let elapsed = start.elapsed();
    eprintln!("{elapsed:?} join error: {err:?}");
    // The session's own typed error, not a wrapper.
    assert!(
        matches!(&err, Error::SaslAuthentication { mechanism, .. } if mechanism == "SCRAM-SHA-512"),
        "{err:?}"
    );
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    let snap = metrics.snapshot();
    assert_eq!(
        snap.requests_by_api.get(&API_VERSIONS),
        Some(&api_versions_per_connection()),
        "{snap:?}"
    );
    assert_eq!(snap.retries, 0, "{snap:?}");
}

// ---------------------------------------------------------------------------------------
// Issue 13 item 5: a TLS client reaching the broker's PLAINTEXT listener.

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn tls_client_on_the_plaintext_listener_is_told_the_listener_is_not_tls() {
    let c = cluster();
    let config = || {
        let metrics = ClientMetrics::new();
        let config = base(c.value("KSG_BOOTSTRAP_PLAINTEXT"))
            .security_protocol(SecurityProtocol::Ssl)
            .tls(ca(&c))
            .metrics(metrics.clone());
        (config, metrics)
    };
    let not_tls = |err: &Error| {
        match err {
            Error::Protocol { message, .. } => {
                assert!(message.contains("probably not TLS"), "{message}");
                assert!(message.contains("security.protocol"), "{message}");
            }
            other => panic!("expected the not-TLS Protocol error, got {other:?}"),
        }
        assert!(!err.is_retriable(), "{err:?}");
    };

    let (client_config, _) = config();
    let start = Instant::now();
    let err = Client::from_config(&client_config, Duration::from_secs(20)).expect_err("not TLS");
    let elapsed = start.elapsed();
    eprintln!("{elapsed:?} error: {err}");
    not_tls(&err);
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");

    // The join stops at once: the cause cannot heal, so no reconnect loop until the timeout.
    let (join_config, metrics) = config();
    let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("x"));
    let member_config =
        StreamsGroupConfig::new(join_config.bootstrap(), unique_name("not-tls"), topology)
            .client_config(join_config)
            .join_timeout(Duration::from_secs(8));
    let start = Instant::now();
    let err = StreamsGroupSession::join(member_config).expect_err("not TLS");
    let elapsed = start.elapsed();
    eprintln!("{elapsed:?} join error: {err}");
    not_tls(&err);
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    let snap = metrics.snapshot();
    assert_eq!(snap.retries, 0, "{snap:?}");
    assert_eq!(snap.reconnects, 0, "{snap:?}");
}
