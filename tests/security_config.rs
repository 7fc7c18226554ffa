//! ClientConfig builder defaults, validation, bootstrap parsing, SecurityProtocol names and
//! ClientMetrics.

use std::time::Duration;

use kafka_streams_group::config::{
    parse_bootstrap, BrokerAddress, ClientConfig, ClientMetrics, SaslConfig, SecurityProtocol,
    TlsConfig,
};
use kafka_streams_group::error::Error;

fn invalid_field(result: Result<(), Error>) -> &'static str {
    match result {
        Err(Error::InvalidConfiguration { field, .. }) => field,
        other => panic!("expected InvalidConfiguration, got {other:?}"),
    }
}

#[test]
fn defaults_are_kafkas() {
    let c = ClientConfig::new("localhost:9092");
    assert_eq!(c.get_client_id(), "kafka-streams-group");
    assert_eq!(c.get_request_timeout(), Duration::from_secs(30));
    assert_eq!(c.get_connect_timeout(), Duration::from_secs(10));
    assert_eq!(
        c.get_retry_backoff(),
        (Duration::from_millis(100), Duration::from_millis(1000))
    );
    assert_eq!(c.get_security_protocol(), SecurityProtocol::Plaintext);
    assert_eq!(c.get_max_frame_size(), 100 * 1024 * 1024);
    assert!(c.get_tls().is_none() && c.get_sasl().is_none());
    c.validate().unwrap();
}

#[test]
fn builder_sets_every_field() {
    let metrics = ClientMetrics::new();
    let c = ClientConfig::new("a:1")
        .client_id("app")
        .connect_timeout(Duration::from_secs(3))
        .request_timeout(Duration::from_secs(4))
        .retry_backoff(Duration::from_millis(5), Duration::from_millis(50))
        .security_protocol(SecurityProtocol::SaslSsl)
        .tls(TlsConfig::new().server_name("kafka.internal"))
        .sasl(SaslConfig::plain("u", "p"))
        .max_frame_size(4096)
        .metrics(metrics.clone());
    assert_eq!(c.bootstrap(), "a:1");
    assert_eq!(c.get_client_id(), "app");
    assert_eq!(c.get_connect_timeout(), Duration::from_secs(3));
    assert_eq!(c.get_request_timeout(), Duration::from_secs(4));
    assert_eq!(
        c.get_retry_backoff(),
        (Duration::from_millis(5), Duration::from_millis(50))
    );
    assert_eq!(c.get_security_protocol(), SecurityProtocol::SaslSsl);
    assert_eq!(
        c.get_tls().unwrap().server_name_override(),
        Some("kafka.internal")
    );
    assert_eq!(c.get_sasl().unwrap().mechanism_name(), "PLAIN");
    assert_eq!(c.get_max_frame_size(), 4096);
    c.validate().unwrap();
    // The config's metrics handle is the one passed in.
    c.get_metrics().record_retry();
    assert_eq!(metrics.snapshot().retries, 1);
}

#[test]
fn bootstrap_parsing() {
    let parsed = parse_bootstrap(" broker-1:9092, 10.0.0.7:9093,[::1]:9094,[fe80::1]:1 ").unwrap();
    let expect = |h: &str, p| BrokerAddress {
        host: h.into(),
        port: p,
    };
    assert_eq!(
        parsed,
        vec![
            expect("broker-1", 9092),
            expect("10.0.0.7", 9093),
            expect("::1", 9094),
            expect("fe80::1", 1)
        ]
    );
    assert_eq!(parsed[2].to_string(), "[::1]:9094");
    assert_eq!(parsed[0].to_string(), "broker-1:9092");
    for bad in [
        "",
        "  ",
        "a:9092,,b:9092",
        "a:9092,",
        "host",
        "host:",
        ":9092",
        "host:0",
        "host:65536",
        "host:99999999999",
        "host:port",
        "::1:9092",
        "[::1]",
        "[::1]9092",
        "[not-v6]:9092",
        "[::1:9092",
        "bad host:9092",
        "a/b:9092",
    ] {
        match parse_bootstrap(bad) {
            Err(Error::InvalidConfiguration {
                field: "bootstrap",
                reason,
            }) => {
                assert!(!reason.is_empty())
            }
            other => panic!("{bad:?} → {other:?}"),
        }
        assert_eq!(
            invalid_field(ClientConfig::new(bad).validate()),
            "bootstrap"
        );
    }
    assert!(parse_bootstrap("h:65535").is_ok());
    let reason = match "::1:9092".parse::<BrokerAddress>() {
        Err(Error::InvalidConfiguration { reason, .. }) => reason,
        other => panic!("{other:?}"),
    };
    assert!(reason.contains("brackets"), "{reason}");
}

#[test]
fn security_protocol_names() {
    for (name, p) in [
        ("PLAINTEXT", SecurityProtocol::Plaintext),
        ("SSL", SecurityProtocol::Ssl),
        ("SASL_PLAINTEXT", SecurityProtocol::SaslPlaintext),
        ("SASL_SSL", SecurityProtocol::SaslSsl),
    ] {
        assert_eq!(name.parse::<SecurityProtocol>().unwrap(), p);
        assert_eq!(name.to_lowercase().parse::<SecurityProtocol>().unwrap(), p);
        assert_eq!(p.to_string(), name);
    }
    assert!(matches!(
        "TLS".parse::<SecurityProtocol>(),
        Err(Error::InvalidConfiguration {
            field: "security_protocol",
            ..
        })
    ));
    assert!(SecurityProtocol::SaslSsl.uses_tls() && SecurityProtocol::SaslSsl.uses_sasl());
    assert!(!SecurityProtocol::Ssl.uses_sasl() && !SecurityProtocol::SaslPlaintext.uses_tls());
}

#[test]
fn protocol_needs_matching_tls_and_sasl() {
    let base = || ClientConfig::new("b:9092");
    let sasl = || SaslConfig::scram_sha256("u", "p");
    assert_eq!(
        invalid_field(base().security_protocol(SecurityProtocol::Ssl).validate()),
        "tls"
    );
    assert_eq!(
        invalid_field(
            base()
                .security_protocol(SecurityProtocol::SaslSsl)
                .sasl(sasl())
                .validate()
        ),
        "tls"
    );
    assert_eq!(
        invalid_field(
            base()
                .security_protocol(SecurityProtocol::SaslPlaintext)
                .validate()
        ),
        "sasl"
    );
    assert_eq!(
        invalid_field(
            base()
                .security_protocol(SecurityProtocol::SaslSsl)
                .tls(TlsConfig::new())
                .validate()
        ),
        "sasl"
    );
    // Configured but unused security is a mistake worth reporting.
    assert_eq!(
        invalid_field(base().tls(TlsConfig::new()).validate()),
        "tls"
    );
    assert_eq!(invalid_field(base().sasl(sasl()).validate()), "sasl");
    assert_eq!(
        invalid_field(
            base()
                .security_protocol(SecurityProtocol::Ssl)
                .tls(TlsConfig::new())
                .sasl(sasl())
                .validate()
        ),
        "sasl"
    );
    base()
        .security_protocol(SecurityProtocol::Ssl)
        .tls(TlsConfig::new())
        .validate()
        .unwrap();
    base()
        .security_protocol(SecurityProtocol::SaslPlaintext)
        .sasl(sasl())
        .validate()
        .unwrap();
    base()
        .security_protocol(SecurityProtocol::SaslSsl)
        .tls(TlsConfig::new())
        .sasl(SaslConfig::oauthbearer(|| Err("unused".into())))
        .validate()
        .unwrap();
    assert_eq!(
        invalid_field(
            base()
                .security_protocol(SecurityProtocol::Ssl)
                .tls(TlsConfig::new().server_name("not a name"))
                .validate()
        ),
        "tls.server_name"
    );
    for bad in [
        SaslConfig::plain("", "p"),
        SaslConfig::scram_sha512("u", ""),
        SaslConfig::plain("u", "a\0b"),
    ] {
        assert_eq!(
            invalid_field(
                base()
                    .security_protocol(SecurityProtocol::SaslPlaintext)
                    .sasl(bad)
                    .validate()
            ),
            "sasl"
        );
    }
}

#[test]
fn ranges_are_checked() {
    let base = || ClientConfig::new("b:9092");
    assert_eq!(
        invalid_field(base().connect_timeout(Duration::ZERO).validate()),
        "connect_timeout"
    );
    assert_eq!(
        invalid_field(base().request_timeout(Duration::ZERO).validate()),
        "request_timeout"
    );
    assert_eq!(
        invalid_field(
            base()
                .retry_backoff(Duration::ZERO, Duration::from_secs(1))
                .validate()
        ),
        "retry_backoff"
    );
    assert_eq!(
        invalid_field(
            base()
                .retry_backoff(Duration::from_secs(2), Duration::from_secs(1))
                .validate()
        ),
        "retry_backoff"
    );
    assert_eq!(
        invalid_field(base().max_frame_size(10).validate()),
        "max_frame_size"
    );
    assert_eq!(
        invalid_field(base().max_frame_size(i32::MAX as usize + 1).validate()),
        "max_frame_size"
    );
    assert_eq!(
        invalid_field(base().client_id("x".repeat(40_000)).validate()),
        "client_id"
    );
    base().max_frame_size(i32::MAX as usize).validate().unwrap();
}

#[test]
fn metrics_are_shared_and_aggregated() {
    let m = ClientMetrics::new();
    let writer = m.clone();
    assert_eq!(m.snapshot().request_latency_mean, Duration::ZERO);
    writer.record_request(88, Duration::from_millis(10));
    writer.record_request(88, Duration::from_millis(30));
    writer.record_request(18, Duration::from_millis(2));
    writer.record_error(88);
    writer.record_error(10);
    writer.record_retry();
    writer.record_reconnect();
    writer.record_reconnect();
    writer.record_bytes_in(100);
    writer.record_bytes_out(40);
    writer.record_connection_opened();
    writer.record_connection_opened();
    writer.record_connection_closed();
    let s = m.snapshot();
    assert_eq!(s.requests_by_api.get(&88), Some(&2));
    assert_eq!(s.requests_by_api.get(&18), Some(&1));
    assert_eq!(s.errors_by_api.get(&88), Some(&1));
    assert_eq!(s.errors_by_api.get(&10), Some(&1));
    assert_eq!(s.errors_by_api.get(&18), None);
    assert_eq!(s.retries, 1);
    assert_eq!(s.reconnects, 2);
    assert_eq!((s.bytes_in, s.bytes_out), (100, 40));
    assert_eq!(s.open_connections, 1);
    assert_eq!(s.request_latency_max, Duration::from_millis(30));
    assert_eq!(s.request_latency_mean, Duration::from_millis(14));

    // Concurrent writers lose nothing.
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let w = m.clone();
            std::thread::spawn(move || {
                for _ in 0..1000 {
                    w.record_request(3, Duration::from_micros(1));
                    w.record_bytes_in(1);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = m.snapshot();
    assert_eq!(s.requests_by_api.get(&3), Some(&4000));
    assert_eq!(s.bytes_in, 4100);
}
