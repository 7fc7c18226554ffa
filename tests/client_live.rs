//! Client against a real broker over PLAINTEXT and mutual-TLS SSL: ApiVersions, Metadata,
//! FindCoordinator, CreateTopics.
//!
//! Run: `KSG_CLUSTER_ENV=$PWD/.kafka/run-19192/cluster.env cargo test -- --ignored`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_streams_group::client::{
    AuthStep, BrokerConnectOptions, BrokerConnection, BrokerTarget, Client, ClientError,
    ClientOptions, SaslAuthenticator, SaslFactory,
};
use kafka_streams_group::protocol::api::metadata::MetadataRequest;
use kafka_streams_group::protocol::BrokerErrorKind;
use kafka_streams_group::transport::sasl::SaslError;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

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

fn mtls_config(env: &HashMap<String, String>) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(get(env, "KSG_CA_PEM")).expect("ca pem") {
        roots.add(c.expect("ca cert")).expect("add ca");
    }
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(get(env, "KSG_CLIENT_CERT_PEM"))
            .expect("client pem")
            .collect::<Result<_, _>>()
            .expect("client cert");
    let key = PrivateKeyDer::from_pem_file(get(env, "KSG_CLIENT_KEY_PEM")).expect("key");
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots)
    .with_client_auth_cert(chain, key)
    .expect("client auth");
    Arc::new(cfg)
}

fn unique(prefix: &str) -> String {
    let n = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_nanos();
    format!("{prefix}-{}-{n}", std::process::id())
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

fn plaintext() -> ClientOptions {
    let env = cluster();
    ClientOptions::new([get(&env, "KSG_BOOTSTRAP_PLAINTEXT")])
}

fn ssl() -> ClientOptions {
    let env = cluster();
    let mut o = ClientOptions::new([get(&env, "KSG_BOOTSTRAP_SSL")]);
    o.tls = Some(mtls_config(&env));
    o
}

/// The whole tour on one client: versions, metadata, coordinator, generic send.
fn tour(opts: ClientOptions) {
    let mut c = Client::connect(opts, deadline()).expect("bootstrap");

    // ApiVersions: a 4.x broker lists the APIs we need, StreamsGroupHeartbeat included.
    let v = c.any_api_versions(deadline()).expect("versions");
    for key in [3, 10, 17, 18, 19, 36, 88] {
        assert!(v.range(key).is_some(), "api {key} missing from {v:?}");
    }
    eprintln!("broker ranges: ApiVersions {:?} Metadata {:?} FindCoordinator {:?} CreateTopics {:?} SGHb {:?}", v.range(18), v.range(3), v.range(10), v.range(19), v.range(88));
    let (_, md_max) = v.range(3).expect("metadata");
    assert!(md_max >= 12, "metadata max {md_max}");

    // Metadata: brokers and cluster id; an unknown topic is reported per topic.
    let missing = unique("ksg-missing");
    let md = c
        .metadata(Some(&[missing.as_str()]), deadline())
        .expect("metadata");
    assert!(!md.brokers.is_empty());
    assert!(md.cluster_id.as_deref().is_some_and(|s| !s.is_empty()));
    assert_eq!(md.topics.len(), 1);
    assert_eq!(md.topics[0].name.as_deref(), Some(missing.as_str()));
    assert_eq!(
        BrokerErrorKind::from(md.topics[0].error_code),
        BrokerErrorKind::UnknownTopicOrPartition
    );
    let node = md.brokers[0].node_id;

    // FindCoordinator: single node, so the coordinator is that node; the bootstrap
    // connection is reused rather than a second one opened.
    let group = unique("ksg-group");
    let coord = c.find_coordinator(&group, deadline()).expect("coordinator");
    assert_eq!(coord.node_id, node);
    assert!(coord.port > 0);
    assert_eq!(c.connection_count(), 1);
    c.connection(BrokerTarget::Node(coord.node_id), deadline())
        .expect("coordinator connection");
    assert_eq!(
        c.connection_count(),
        1,
        "bootstrap connection reused for the coordinator"
    );
    assert!(c.api_versions(coord.node_id).is_some());

    // CreateTopics: created once, then "already exists"; the new topic shows in Metadata
    // with its partitions (leaders may take a moment to be elected).
    let topic = unique("ksg-created");
    assert!(
        c.create_topic(&topic, 3, 1, deadline()).expect("create"),
        "created"
    );
    assert!(
        !c.create_topic(&topic, 3, 1, deadline())
            .expect("create again"),
        "existed"
    );
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let md = c
            .metadata(Some(&[topic.as_str()]), deadline())
            .expect("metadata");
        let t = &md.topics[0];
        let ready = BrokerErrorKind::from(t.error_code) == BrokerErrorKind::None
            && t.partitions.len() == 3
            && t.partitions.iter().all(|p| p.leader_id == node);
        if ready {
            break;
        }
        assert!(Instant::now() < until, "topic {topic} not ready: {t:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // A replication factor the single broker cannot satisfy is a typed per-topic error.
    let err = c
        .create_topic(&unique("ksg-rf"), 1, 3, deadline())
        .expect_err("rf 3 on one broker");
    assert_eq!(
        err.broker_error(),
        Some(BrokerErrorKind::InvalidReplicationFactor),
        "{err}"
    );

    // Generic send to the node.
    let all = c
        .send(
            BrokerTarget::Node(node),
            &MetadataRequest {
                topics: Some(vec![]),
                ..Default::default()
            },
            deadline(),
        )
        .expect("generic send");
    assert!(all.topics.is_empty());
    assert_eq!(all.brokers.len(), md.brokers.len());
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn plaintext_api_versions_metadata_find_coordinator() {
    tour(plaintext());
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn ssl_api_versions_metadata_find_coordinator() {
    tour(ssl());
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn ssl_without_tls_config_fails_clearly() {
    let env = cluster();
    let o = ClientOptions::new([get(&env, "KSG_BOOTSTRAP_SSL")]);
    let err = Client::connect(o, deadline()).expect_err("plaintext on TLS");
    let text = err.to_string();
    // A refusal is reported as itself (the bootstrap path Client::from_config shares).
    assert!(!err.is_retriable(), "{err:?}");
    assert!(
        text.contains("TLS listener") || text.contains("closed"),
        "{text}"
    );
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn bootstrap_falls_through_to_a_live_server() {
    let env = cluster();
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").to_string()
    };
    let o = ClientOptions::new([dead, get(&env, "KSG_BOOTSTRAP_PLAINTEXT")]);
    let mut c = Client::connect(o, deadline()).expect("bootstrap");
    c.metadata(Some(&[]), deadline()).expect("metadata");
}

/// SASL/PLAIN written here (RFC 4616: authzid NUL authcid NUL passwd), so the client's SASL
/// hook is proven against a real broker independently of the library's own mechanisms.
struct TestPlain {
    user: String,
    pass: String,
}

impl SaslAuthenticator for TestPlain {
    fn mechanism_name(&self) -> &str {
        "PLAIN"
    }
    fn start(&mut self) -> Result<Vec<u8>, SaslError> {
        Ok(format!("\0{}\0{}", self.user, self.pass).into_bytes())
    }
    fn step(&mut self, server: &[u8]) -> Result<AuthStep, SaslError> {
        if server.is_empty() {
            Ok(AuthStep::Done(None))
        } else {
            Err(SaslError::UnexpectedServerMessage { mechanism: "PLAIN" })
        }
    }
}

fn plain(user: String, pass: String) -> SaslFactory {
    Arc::new(move || {
        Ok(Box::new(TestPlain {
            user: user.clone(),
            pass: pass.clone(),
        }) as Box<dyn SaslAuthenticator>)
    })
}

fn ca_only_config(env: &HashMap<String, String>) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(get(env, "KSG_CA_PEM")).expect("ca pem") {
        roots.add(c.expect("ca cert")).expect("add ca");
    }
    Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth(),
    )
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn sasl_plaintext_plain_hook_authenticates() {
    let env = cluster();
    let addr = get(&env, "KSG_BOOTSTRAP_SASL_PLAINTEXT");
    let o = BrokerConnectOptions {
        sasl: Some(plain(
            get(&env, "KSG_PLAIN_USERNAME"),
            get(&env, "KSG_PLAIN_PASSWORD"),
        )),
        ..Default::default()
    };
    let mut c = BrokerConnection::connect(&addr, &o, deadline()).expect("authenticated");
    // Default broker config: connections.max.reauth.ms=0, i.e. no lifetime.
    eprintln!("SASL session lifetime: {:?}", c.session_lifetime());
    if let Some(l) = c.session_lifetime() {
        assert!(c.reauthenticate_at().expect("reauth") > Instant::now());
        assert!(l > Duration::ZERO);
    }
    let md = c
        .send(
            &MetadataRequest {
                topics: Some(vec![]),
                ..Default::default()
            },
            deadline(),
        )
        .expect("metadata after auth");
    assert!(!md.brokers.is_empty());
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn sasl_plaintext_wrong_password_is_rejected() {
    let env = cluster();
    let mut o = ClientOptions::new([get(&env, "KSG_BOOTSTRAP_SASL_PLAINTEXT")]);
    o.sasl = Some(plain(
        get(&env, "KSG_PLAIN_USERNAME"),
        "wrong-password".to_string(),
    ));
    let err = Client::connect(o, deadline()).expect_err("bad password");
    let text = err.to_string();
    assert!(text.contains("SASL authentication"), "{text}");
    assert!(!text.contains("wrong-password"), "secret leaked: {text}");
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn sasl_without_sasl_config_fails_clearly() {
    // A SASL listener that gets a Metadata-free ApiVersions is fine, but anything else before
    // authentication makes the broker close the connection.
    let env = cluster();
    let mut c = Client::connect(
        ClientOptions::new([get(&env, "KSG_BOOTSTRAP_SASL_PLAINTEXT")]),
        deadline(),
    )
    .expect("ApiVersions is allowed before SASL");
    let err = c
        .metadata(Some(&[]), deadline())
        .expect_err("unauthenticated");
    assert!(matches!(err, ClientError::Transport(_)), "{err:?}");
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn sasl_ssl_plain_full_tour() {
    let env = cluster();
    let mut o = ClientOptions::new([get(&env, "KSG_BOOTSTRAP_SASL_SSL")]);
    o.tls = Some(ca_only_config(&env));
    o.sasl = Some(plain(
        get(&env, "KSG_PLAIN_USERNAME"),
        get(&env, "KSG_PLAIN_PASSWORD"),
    ));
    tour(o);
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn large_frames_both_ways_over_tls() {
    // ~300 KiB request (above rustls' 64 KiB buffer) and a similar response.
    let mut c = Client::connect(ssl(), deadline()).expect("bootstrap");
    let names: Vec<String> = (0..2000)
        .map(|i| format!("{}-{i:05}-{}", unique("ksg-big"), "x".repeat(100)))
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let md = c.metadata(Some(&refs), deadline()).expect("big metadata");
    assert_eq!(md.topics.len(), names.len());
    assert!(md
        .topics
        .iter()
        .all(|t| BrokerErrorKind::from(t.error_code) == BrokerErrorKind::UnknownTopicOrPartition));
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh)"]
fn sasl_session_outlives_its_lifetime_through_reauthentication() {
    let env = cluster();
    let mut o = ClientOptions::new([get(&env, "KSG_BOOTSTRAP_SASL_PLAINTEXT")]);
    o.sasl = Some(plain(
        get(&env, "KSG_PLAIN_USERNAME"),
        get(&env, "KSG_PLAIN_PASSWORD"),
    ));
    let mut c = Client::connect(o, deadline()).expect("authenticated");
    let life = c
        .connection(BrokerTarget::Any, deadline())
        .expect("conn")
        .session_lifetime();
    let md = MetadataRequest {
        topics: Some(vec![]),
        ..Default::default()
    };
    let Some(life) = life else {
        // connections.max.reauth.ms=0 (Kafka's default): nothing to renew, and renewing
        // must not be attempted (the broker would answer ILLEGAL_SASL_STATE).
        eprintln!("broker grants unlimited SASL sessions; checking the no-op path only");
        let conn = c.connection(BrokerTarget::Any, deadline()).expect("conn");
        assert!(!conn.needs_reauthentication(Instant::now() + Duration::from_secs(86_400)));
        conn.reauthenticate(deadline()).expect("no-op");
        c.send(BrokerTarget::Any, &md, deadline())
            .expect("still usable");
        return;
    };
    eprintln!("SASL session lifetime {life:?}: crossing it twice with requests in between");
    assert!(
        life < Duration::from_secs(20),
        "set connections.max.reauth.ms low for this test"
    );
    let end = Instant::now() + life * 2 + Duration::from_secs(1);
    while Instant::now() < end {
        c.send(BrokerTarget::Any, &md, deadline())
            .expect("the broker would close an expired session");
        std::thread::sleep(life / 4);
    }
    assert_eq!(c.connection_count(), 1);
}
