//! The default trust store is the platform's. `rustls-native-certs` honours `SSL_CERT_FILE`,
//! which lets this test point "the platform store" at a test CA. Kept in its own test binary
//! (one test) because it changes the process environment.

mod security_common;

use kafka_streams_group::config::TlsConfig;
use kafka_streams_group::tls::TlsConnector;
use rustls::version::{TLS12, TLS13};
use security_common::*;

#[test]
fn default_config_trusts_the_platform_store() {
    let ca = Ca::new("Platform CA");
    let other = Ca::new("Other CA");
    let leaf = server_leaf(&ca, &["broker.kafka.test"], Validity::Current);
    let server = server_config(&leaf, None, &[&TLS13, &TLS12]);

    std::env::set_var(
        "SSL_CERT_FILE",
        temp_file("platform-ca.pem", ca.pem().as_bytes()),
    );
    let c = TlsConnector::new(&TlsConfig::new()).unwrap();
    assert!(handshake(c.connect("broker.kafka.test").unwrap(), server.clone()).is_ok());

    // Explicit CAs replace the platform store unless asked to add to it.
    let only_other = TlsConnector::new(&TlsConfig::new().ca_pem(other.pem())).unwrap();
    let out = handshake(
        only_other.connect("broker.kafka.test").unwrap(),
        server.clone(),
    );
    assert!(out.client_error().is_some(), "{out:?}");
    let both = TlsConnector::new(
        &TlsConfig::new()
            .ca_pem(other.pem())
            .trust_platform_roots(true),
    )
    .unwrap();
    assert!(handshake(both.connect("broker.kafka.test").unwrap(), server.clone()).is_ok());

    // A platform store that does not hold the broker's CA.
    std::env::set_var(
        "SSL_CERT_FILE",
        temp_file("platform-other.pem", other.pem().as_bytes()),
    );
    let c = TlsConnector::new(&TlsConfig::new()).unwrap();
    let out = handshake(c.connect("broker.kafka.test").unwrap(), server);
    assert!(out.client_error().is_some(), "{out:?}");
}
