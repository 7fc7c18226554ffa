//! Every key of `ClientConfig::from_properties` / `StreamsGroupConfig::from_properties`, the
//! suggestions for unknown keys, and that secrets never reach an error message.

use std::time::Duration;

use kafka_streams_group::config::{
    CertificateSource, PrivateKeySource, DEFAULT_MAX_FRAME_SIZE, DEFAULT_REQUEST_TIMEOUT,
};
use kafka_streams_group::{
    ClientConfig, Error, SaslConfig, SecurityProtocol, StreamsGroupConfig, StreamsTopology,
    Subtopology, UserEndpoint,
};

const BOOT: (&str, &str) = ("bootstrap.servers", "broker-1:9092,[::1]:9093");

fn client(extra: &[(&str, &str)]) -> Result<ClientConfig, Error> {
    ClientConfig::from_properties(std::iter::once(BOOT).chain(extra.iter().copied()))
}

fn ok(extra: &[(&str, &str)]) -> ClientConfig {
    client(extra).unwrap_or_else(|e| panic!("{extra:?}: {e}"))
}

fn reason(r: Result<impl std::fmt::Debug, Error>) -> String {
    match r {
        Err(Error::InvalidConfiguration { field, reason }) => {
            assert_eq!(field, "properties", "{reason}");
            reason
        }
        other => panic!("expected InvalidConfiguration, got {other:?}"),
    }
}

fn err(extra: &[(&str, &str)]) -> String {
    reason(client(extra))
}

fn topology() -> StreamsTopology {
    StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("input"))
}

fn streams(extra: &[(&str, &str)]) -> Result<StreamsGroupConfig, Error> {
    let base = [BOOT, ("application.id", "app")];
    StreamsGroupConfig::from_properties(base.iter().chain(extra).copied(), topology())
}

fn sasl_ssl_scram() -> Vec<(&'static str, &'static str)> {
    vec![
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "SCRAM-SHA-512"),
        ("sasl.username", "alice"),
        ("sasl.password", "hunter2-secret"),
    ]
}

#[test]
fn bootstrap_servers_is_required_and_checked() {
    let c = ok(&[]);
    assert_eq!(c.bootstrap(), "broker-1:9092,[::1]:9093");
    assert_eq!(c.bootstrap_servers().unwrap().len(), 2);
    let r = reason(ClientConfig::from_properties([("client.id", "x")]));
    assert!(r.contains("bootstrap.servers is missing"), "{r}");
    let r = reason(ClientConfig::from_properties([("bootstrap.servers", " ")]));
    assert!(r.contains("bootstrap.servers is empty"), "{r}");
    let r = reason(ClientConfig::from_properties([(
        "bootstrap.servers",
        "host-without-port",
    )]));
    assert!(
        r.contains("bootstrap.servers") && r.contains("host-without-port"),
        "{r}"
    );
}

#[test]
fn defaults_when_only_bootstrap_is_given() {
    let c = ok(&[]);
    assert_eq!(c.get_security_protocol(), SecurityProtocol::Plaintext);
    assert!(c.get_tls().is_none() && c.get_sasl().is_none());
    assert_eq!(c.get_request_timeout(), DEFAULT_REQUEST_TIMEOUT);
    assert_eq!(c.get_max_frame_size(), DEFAULT_MAX_FRAME_SIZE);
}

#[test]
fn client_id() {
    assert_eq!(ok(&[("client.id", "orders-1")]).get_client_id(), "orders-1");
}

#[test]
fn security_protocol_any_case() {
    for (v, p) in [
        ("PLAINTEXT", SecurityProtocol::Plaintext),
        ("ssl", SecurityProtocol::Ssl),
        ("Sasl_Plaintext", SecurityProtocol::SaslPlaintext),
        ("SASL_SSL", SecurityProtocol::SaslSsl),
    ] {
        let mut extra = vec![("security.protocol", v)];
        if p.uses_sasl() {
            extra.extend([
                ("sasl.mechanism", "PLAIN"),
                ("sasl.username", "u"),
                ("sasl.password", "p"),
            ]);
        }
        assert_eq!(ok(&extra).get_security_protocol(), p, "{v}");
        assert_eq!(
            ok(&extra).get_tls().is_some(),
            p.uses_tls(),
            "{v}: TLS defaults for TLS protocols"
        );
    }
    let r = err(&[("security.protocol", "TLS")]);
    assert!(
        r.contains("security.protocol") && r.contains("\"TLS\""),
        "{r}"
    );
}

#[test]
fn sasl_mechanisms() {
    for (mechanism, name) in [
        ("PLAIN", "PLAIN"),
        ("scram-sha-256", "SCRAM-SHA-256"),
        ("SCRAM-SHA-512", "SCRAM-SHA-512"),
    ] {
        let c = ok(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", mechanism),
            ("sasl.username", "alice"),
            ("sasl.password", "pw"),
        ]);
        let sasl = c.get_sasl().unwrap();
        assert_eq!(sasl.mechanism_name(), name);
        match sasl {
            SaslConfig::Plain { username, password }
            | SaslConfig::Scram {
                username, password, ..
            } => {
                assert_eq!(username, "alice");
                assert_eq!(password.expose(), "pw");
            }
            other => panic!("{other:?}"),
        }
    }
    // librdkafka's plural spelling is the same setting.
    let c = ok(&[
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanisms", "SCRAM-SHA-256"),
        ("sasl.username", "u"),
        ("sasl.password", "p"),
    ]);
    assert_eq!(c.get_sasl().unwrap().mechanism_name(), "SCRAM-SHA-256");
}

#[test]
fn sasl_errors() {
    let r = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "GSSAPI"),
        ("sasl.username", "u"),
        ("sasl.password", "p"),
    ]);
    assert!(r.contains("GSSAPI") && r.contains("not supported"), "{r}");
    let r = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.username", "u"),
        ("sasl.password", "p"),
    ]);
    assert!(r.contains("sasl.mechanism is missing"), "{r}");
    let r = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.password", "p"),
    ]);
    assert!(r.contains("sasl.username is missing"), "{r}");
    let r = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.username", "u"),
        ("sasl.password", ""),
    ]);
    assert!(r.contains("sasl.password is empty"), "{r}");
    let r = err(&[
        ("sasl.mechanism", "PLAIN"),
        ("sasl.username", "u"),
        ("sasl.password", "p"),
    ]);
    assert!(
        r.contains("sasl.mechanism is set") && r.contains("PLAINTEXT"),
        "{r}"
    );
}

#[test]
fn oauthbearer_is_refused_with_the_code_path() {
    let r = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "OAUTHBEARER"),
    ]);
    assert!(
        r.contains("OAUTHBEARER") && r.contains("SaslConfig::oauthbearer"),
        "{r}"
    );
    // With no sasl.* key the configuration is returned without SASL, to be completed in code.
    let c = ok(&[("security.protocol", "SASL_SSL")]);
    assert!(c.get_sasl().is_none());
    assert!(
        c.validate().is_err(),
        "incomplete until the callback is added"
    );
    let c = c.sasl(SaslConfig::oauthbearer(|| {
        Err("no token in this test".to_owned())
    }));
    c.validate().unwrap();
}

#[test]
fn ssl_locations() {
    let c = ok(&[
        ("security.protocol", "SSL"),
        ("ssl.ca.location", "/etc/kafka/ca.pem"),
        ("ssl.certificate.location", "/etc/kafka/client.pem"),
        ("ssl.key.location", "/etc/kafka/client.key"),
    ]);
    let tls = c.get_tls().unwrap();
    assert_eq!(
        tls.ca_sources(),
        &[CertificateSource::PemFile("/etc/kafka/ca.pem".into())]
    );
    assert!(!tls.uses_platform_roots());
    let (cert, key) = tls.client_auth_sources().unwrap();
    assert_eq!(
        cert,
        &CertificateSource::PemFile("/etc/kafka/client.pem".into())
    );
    assert_eq!(
        key,
        &PrivateKeySource::PemFile("/etc/kafka/client.key".into())
    );
    assert!(!tls.hostname_verification_disabled());

    let c = ok(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.username", "u"),
        ("sasl.password", "p"),
    ]);
    assert!(
        c.get_tls().unwrap().uses_platform_roots(),
        "no CA given: platform roots"
    );

    let r = err(&[
        ("security.protocol", "SSL"),
        ("ssl.certificate.location", "/c.pem"),
    ]);
    assert!(
        r.contains("ssl.certificate.location and ssl.key.location"),
        "{r}"
    );
    let r = err(&[("security.protocol", "SSL"), ("ssl.key.location", "/k.pem")]);
    assert!(
        r.contains("ssl.certificate.location and ssl.key.location"),
        "{r}"
    );
    let r = err(&[("security.protocol", "SSL"), ("ssl.ca.location", "")]);
    assert!(r.contains("ssl.ca.location is empty"), "{r}");
    let r = err(&[("ssl.ca.location", "/ca.pem")]);
    assert!(
        r.contains("ssl.ca.location is set") && r.contains("does not use TLS"),
        "{r}"
    );
    let r = err(&[
        ("security.protocol", "SASL_PLAINTEXT"),
        ("ssl.ca.location", "/ca.pem"),
    ]);
    assert!(r.contains("does not use TLS"), "{r}");
}

#[test]
fn endpoint_identification() {
    let tls = |v: &str| {
        ok(&[
            ("security.protocol", "SSL"),
            ("ssl.endpoint.identification.algorithm", v),
        ])
    };
    assert!(!tls("https")
        .get_tls()
        .unwrap()
        .hostname_verification_disabled());
    assert!(!tls("HTTPS")
        .get_tls()
        .unwrap()
        .hostname_verification_disabled());
    assert!(tls("none")
        .get_tls()
        .unwrap()
        .hostname_verification_disabled());
    assert!(tls("").get_tls().unwrap().hostname_verification_disabled());
    let r = err(&[
        ("security.protocol", "SSL"),
        ("ssl.endpoint.identification.algorithm", "http"),
    ]);
    assert!(
        r.contains("ssl.endpoint.identification.algorithm") && r.contains("\"http\""),
        "{r}"
    );
}

#[test]
fn timeouts_and_backoff() {
    let c = ok(&[
        ("request.timeout.ms", "20000"),
        ("socket.connection.setup.timeout.ms", "5000"),
        ("retry.backoff.ms", "50"),
        ("retry.backoff.max.ms", "800"),
    ]);
    assert_eq!(c.get_request_timeout(), Duration::from_secs(20));
    assert_eq!(c.get_connect_timeout(), Duration::from_secs(5));
    assert_eq!(
        c.get_retry_backoff(),
        (Duration::from_millis(50), Duration::from_millis(800))
    );
    // As in Java: a base above the maximum is a constant backoff of the maximum.
    let c = ok(&[("retry.backoff.ms", "5000")]);
    assert_eq!(
        c.get_retry_backoff(),
        (Duration::from_secs(1), Duration::from_secs(1))
    );
    for key in [
        "request.timeout.ms",
        "socket.connection.setup.timeout.ms",
        "retry.backoff.ms",
        "retry.backoff.max.ms",
    ] {
        let r = err(&[(key, "10s")]);
        assert!(r.contains(key) && r.contains("\"10s\""), "{r}");
        let r = err(&[(key, "-1")]);
        assert!(r.contains(key) && r.contains("\"-1\""), "{r}");
        let r = err(&[(key, "0")]);
        assert!(r.contains(key) && r.contains("greater than zero"), "{r}");
    }
}

#[test]
fn frame_limit() {
    assert_eq!(
        ok(&[("message.max.bytes", "2000000")]).get_max_frame_size(),
        2_000_000
    );
    assert_eq!(
        ok(&[("receive.message.max.bytes", "3000000")]).get_max_frame_size(),
        3_000_000
    );
    let c = ok(&[
        ("receive.message.max.bytes", "3000000"),
        ("message.max.bytes", "2000000"),
    ]);
    assert_eq!(
        c.get_max_frame_size(),
        3_000_000,
        "receive.message.max.bytes wins"
    );
    for key in ["message.max.bytes", "receive.message.max.bytes"] {
        let r = err(&[(key, "10")]);
        assert!(r.contains(key) && r.contains("outside"), "{r}");
        let r = err(&[(key, "4294967296")]);
        assert!(r.contains(key) && r.contains("outside"), "{r}");
        let r = err(&[(key, "1MB")]);
        assert!(r.contains(key) && r.contains("\"1MB\""), "{r}");
    }
}

#[test]
fn last_duplicate_wins_and_input_is_trimmed() {
    let c = ok(&[("client.id", "first"), ("  client.id  ", "  second  ")]);
    assert_eq!(c.get_client_id(), "second");
}

#[test]
fn java_client_names_get_directions() {
    let r = err(&[("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"topsecret\";")]);
    assert!(
        r.contains("sasl.username") && r.contains("sasl.password"),
        "{r}"
    );
    assert!(!r.contains("topsecret"), "{r}");
    for key in [
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.truststore.type",
    ] {
        let r = err(&[(key, "/x.jks")]);
        assert!(r.contains("PEM") && r.contains("ssl.ca.location"), "{r}");
    }
    let r = err(&[("ssl.keystore.location", "/x.jks")]);
    assert!(
        r.contains("ssl.certificate.location") && r.contains("ssl.key.location"),
        "{r}"
    );
    let r = err(&[("ssl.key.password", "pw-123")]);
    assert!(r.contains("encrypted") && !r.contains("pw-123"), "{r}");
}

#[test]
fn unknown_keys_are_errors_with_suggestions() {
    for (typo, expected) in [
        ("bootstrap.server", "bootstrap.servers"),
        ("BOOTSTRAP_SERVERS", "bootstrap.servers"),
        ("client_id", "client.id"),
        ("sasl.usernme", "sasl.username"),
        ("security.protocl", "security.protocol"),
        ("request.timeout", "request.timeout.ms"),
        ("ssl.ca.locaton", "ssl.ca.location"),
    ] {
        let r = err(&[(typo, "x")]);
        assert!(r.contains(&format!("unknown key {typo:?}")), "{r}");
        assert!(
            r.contains(&format!("did you mean {expected:?}")),
            "{typo}: {r}"
        );
    }
    let r = err(&[("num.stream.threads", "4")]);
    assert!(
        r.contains("unknown key \"num.stream.threads\"") && !r.contains("did you mean"),
        "{r}"
    );
    let r = err(&[("", "x")]);
    assert!(r.contains("unknown key \"\""), "{r}");
}

#[test]
fn streams_keys_in_a_client_config_point_to_streams() {
    for key in [
        "application.id",
        "application.server",
        "client.rack",
        "client.tag.zone",
        "group.instance.id",
        "max.poll.interval.ms",
    ] {
        let r = err(&[(key, "x")]);
        assert!(
            r.contains(key) && r.contains("StreamsGroupConfig::from_properties"),
            "{r}"
        );
    }
}

#[test]
fn secrets_are_never_echoed() {
    let secret = "s3cr3t-Value-XYZ";
    let cases: Vec<Vec<(&str, &str)>> = vec![
        // Unknown key carrying a secret, and a misspelt password key.
        vec![("sasl.passwrd", secret)],
        vec![("sasl.password.x", secret)],
        // A password that is not needed.
        vec![("sasl.password", secret)],
        // A password with a missing username.
        vec![
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "PLAIN"),
            ("sasl.password", secret),
        ],
        // A password next to a bad value elsewhere.
        vec![
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "PLAIN"),
            ("sasl.username", "u"),
            ("sasl.password", secret),
            ("request.timeout.ms", "x"),
        ],
        // A password with a NUL (refused by the SASL check).
        vec![
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "PLAIN"),
            ("sasl.username", "u"),
            ("sasl.password", "s3cr3t-Value-XYZ\0"),
        ],
        vec![("ssl.truststore.password", secret)],
        vec![("ssl.keystore.password", secret)],
        vec![("sasl.jaas.config", secret)],
        vec![("sasl.oauthbearer.client.secret", secret)],
    ];
    for extra in cases {
        let e = client(&extra).unwrap_err();
        let shown = format!("{e} / {e:?}");
        assert!(!shown.contains("s3cr3t"), "{extra:?} leaked: {shown}");
    }
    // And a successful config does not show it in Debug.
    let c = ok(&[
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.username", "u"),
        ("sasl.password", secret),
    ]);
    assert!(!format!("{c:?}").contains("s3cr3t"));
}

#[test]
fn file_and_pairs_give_the_same_config() {
    let dir = std::env::temp_dir().join(format!("ksg-props-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("client.properties");
    std::fs::write(
        &path,
        "# librdkafka-style\nbootstrap.servers = a:1, \\\n    b:2\nsecurity.protocol: SASL_SSL\n\
         sasl.mechanism=SCRAM-SHA-512\nsasl.username=alice\nsasl.password=p\\u00e4ss\\ \n\
         ssl.ca.location=/tmp/ca.pem\n",
    )
    .unwrap();
    let c = ClientConfig::from_properties_file(&path).unwrap();
    assert_eq!(c.bootstrap(), "a:1, b:2");
    match c.get_sasl().unwrap() {
        SaslConfig::Scram { password, .. } => assert_eq!(password.expose(), "päss "),
        other => panic!("{other:?}"),
    }

    let sp = dir.join("streams.properties");
    std::fs::write(
        &sp,
        "bootstrap.servers=a:1\napplication.id=orders\nclient.tag.zone=eu-1\n",
    )
    .unwrap();
    let s = StreamsGroupConfig::from_properties_file(&sp, topology()).unwrap();
    assert_eq!(s.group_id(), "orders");
    assert_eq!(
        s.build_config().unwrap().client_tags,
        vec![("zone".to_owned(), "eu-1".to_owned())]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ----- Streams keys -----

#[test]
fn streams_every_key() {
    let s = streams(&[
        ("application.server", "query-host:7070"),
        ("client.rack", "rack-a"),
        ("client.tag.zone", "eu-1"),
        ("client.tag.cluster", "k1"),
        ("group.instance.id", "instance-7"),
        ("max.poll.interval.ms", "45000"),
        ("client.id", "app-1"),
        ("request.timeout.ms", "12000"),
    ])
    .unwrap();
    assert_eq!(s.group_id(), "app");
    assert_eq!(s.get_client_config().get_client_id(), "app-1");
    assert_eq!(
        s.get_client_config().get_request_timeout(),
        Duration::from_secs(12)
    );
    assert_eq!(s.get_client_config().bootstrap(), BOOT.1);
    let m = s.build_config().unwrap();
    assert_eq!(m.user_endpoint, Some(UserEndpoint::new("query-host", 7070)));
    assert_eq!(m.rack_id.as_deref(), Some("rack-a"));
    assert_eq!(m.instance_id.as_deref(), Some("instance-7"));
    assert_eq!(m.rebalance_timeout_ms, 45_000);
    let mut tags = m.client_tags.clone();
    tags.sort();
    assert_eq!(
        tags,
        vec![
            ("cluster".to_owned(), "k1".to_owned()),
            ("zone".to_owned(), "eu-1".to_owned())
        ]
    );
}

#[test]
fn streams_defaults_and_security() {
    let s = streams(&[]).unwrap();
    let m = s.build_config().unwrap();
    assert_eq!(m.rebalance_timeout_ms, 300_000);
    assert!(m.user_endpoint.is_none() && m.rack_id.is_none() && m.instance_id.is_none());
    assert!(m.client_tags.is_empty());
    let s = streams(&sasl_ssl_scram()).unwrap();
    assert_eq!(
        s.get_client_config().get_sasl().unwrap().mechanism_name(),
        "SCRAM-SHA-512"
    );
    s.validate().unwrap();
}

#[test]
fn streams_application_id_is_required() {
    let r = reason(StreamsGroupConfig::from_properties([BOOT], topology()));
    assert!(r.contains("application.id is missing"), "{r}");
    let r = reason(StreamsGroupConfig::from_properties(
        [BOOT, ("application.id", "")],
        topology(),
    ));
    assert!(r.contains("application.id is empty"), "{r}");
}

#[test]
fn streams_value_errors() {
    for (key, value, needle) in [
        ("application.server", "no-port", "application.server"),
        ("application.server", "host:http", "application.server"),
        ("application.server", ":80", "empty host"),
        ("application.server", "host:0", "1..=65535"),
        ("client.rack", "", "client.rack is empty"),
        ("group.instance.id", "", "group.instance.id is empty"),
        ("max.poll.interval.ms", "0", "max.poll.interval.ms"),
        ("max.poll.interval.ms", "3000000000", "max.poll.interval.ms"),
        ("max.poll.interval.ms", "5m", "\"5m\""),
        ("client.tag.", "x", "client.tag.<key>"),
    ] {
        let r = reason(streams(&[(key, value)]));
        assert!(r.contains(needle), "{key}={value}: {r}");
    }
    let s = streams(&[("application.server", "[::1]:8080")]).unwrap();
    assert_eq!(
        s.build_config().unwrap().user_endpoint,
        Some(UserEndpoint::new("::1", 8080))
    );
}

#[test]
fn streams_unknown_keys_suggest_streams_names() {
    for (typo, expected) in [
        ("application.ids", "application.id"),
        ("aplication.server", "application.server"),
        ("client.rak", "client.rack"),
        ("group.instance", "group.instance.id"),
        ("max.poll.interval", "max.poll.interval.ms"),
    ] {
        let r = reason(streams(&[(typo, "x")]));
        assert!(
            r.contains(&format!("did you mean {expected:?}")),
            "{typo}: {r}"
        );
    }
    let r = reason(streams(&[("client.tags.zone", "x")]));
    assert!(r.contains("unknown key"), "{r}");
    let r = reason(streams(&[("processing.guarantee", "exactly_once_v2")]));
    assert!(r.contains("unknown key \"processing.guarantee\""), "{r}");
}

/// Issue 21 item 8: the `.properties` file of a Java Kafka Streams instance (as Kafka's
/// quickstart and WordCountDemo set it, plus membership keys) configures the Rust instance
/// of the same application: every key is accepted, and the membership keys reach the group
/// configuration it joins with. (Before, `application.server`, `replication.factor` and
/// `num.stream.threads` were refused as unknown keys.)
#[test]
fn a_java_streams_properties_file_configures_a_processing_member() {
    use kafka_streams_group::processing::{DeserializationHandler, ProcessingConfig};
    let dir = std::env::temp_dir().join(format!("ksg-props-proc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("streams.properties");
    std::fs::write(
        &path,
        "# shared by the Java and the Rust instances\n\
         application.id=streams-wordcount\n\
         bootstrap.servers=broker-1:9092\n\
         application.server=host-7:8080\n\
         group.instance.id=wordcount-7\n\
         client.rack=rack-2\n\
         client.tag.zone=eu-1\n\
         replication.factor=3\n\
         num.stream.threads=1\n\
         num.standby.replicas=1\n\
         processing.guarantee=at_least_once\n\
         commit.interval.ms=1000\n\
         statestore.cache.max.bytes=0\n\
         state.dir=/var/lib/kafka-streams\n\
         default.key.serde=org.apache.kafka.common.serialization.Serdes$StringSerde\n\
         default.value.serde=org.apache.kafka.common.serialization.Serdes$StringSerde\n\
         default.deserialization.exception.handler=\\\n    \
             org.apache.kafka.streams.errors.LogAndContinueExceptionHandler\n\
         consumer.auto.offset.reset=earliest\n\
         metrics.recording.level=INFO\n",
    )
    .unwrap();
    let pairs = kafka_streams_group::properties::read_file(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let c = ProcessingConfig::from_properties(pairs).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.application_id(), "streams-wordcount");
    assert_eq!(c.get_commit_interval(), Duration::from_secs(1));
    assert_eq!(c.get_replication_factor(), Some(3));
    assert_eq!(
        c.get_deserialization_handler(),
        DeserializationHandler::LogAndContinue
    );
    // state.dir: where the process id is kept (Java's kafka-streams-process-metadata).
    assert_eq!(
        c.get_state_dir(),
        Some(std::path::Path::new("/var/lib/kafka-streams"))
    );
    let m = c.group_config(&topology()).build_config().unwrap();
    assert_eq!(m.group_id, "streams-wordcount");
    assert_eq!(m.user_endpoint, Some(UserEndpoint::new("host-7", 8080)));
    assert_eq!(m.instance_id.as_deref(), Some("wordcount-7"));
    assert_eq!(m.rack_id.as_deref(), Some("rack-2"));
    assert_eq!(m.client_tags, vec![("zone".to_owned(), "eu-1".to_owned())]);

    // What it cannot honour it refuses, saying so.
    let refused = |key: &str, value: &str| {
        let e = ProcessingConfig::from_properties([
            ("application.id", "a"),
            ("bootstrap.servers", "h:1"),
            (key, value),
        ])
        .unwrap_err();
        e.to_string()
    };
    let e = refused("processing.guarantee", "exactly_once_beta");
    assert!(e.contains("use exactly_once_v2"), "{e}");
    let e = refused("num.stream.threads", "0");
    assert!(e.contains("at least 1"), "{e}");
}
