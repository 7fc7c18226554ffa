//! TLS setup proven with in-memory rustls handshakes against test-time certificates.

mod security_common;

use kafka_streams_group::config::TlsConfig;
use kafka_streams_group::error::{Error, TlsProblem};
use kafka_streams_group::tls::{TlsConnector, PROTOCOL_VERSIONS};
use rcgen::KeyPair;
use rustls::version::{TLS12, TLS13};
use rustls::{CertificateError, ProtocolVersion};
use security_common::*;

const BROKER: &str = "broker.kafka.test";
const BOTH: &[&rustls::SupportedProtocolVersion] = &[&TLS13, &TLS12];

fn connector(tls: TlsConfig) -> TlsConnector {
    TlsConnector::new(&tls).expect("TLS config builds")
}

fn trusting(ca: &Ca) -> TlsConfig {
    TlsConfig::new().ca_pem(ca.pem())
}

fn cert_error(outcome: &Outcome) -> CertificateError {
    match outcome.client_error() {
        Some(rustls::Error::InvalidCertificate(e)) => e.clone(),
        other => panic!("expected a client-side certificate error, got {outcome:?} / {other:?}"),
    }
}

fn setup_problem(result: Result<TlsConnector, Error>) -> TlsProblem {
    match result {
        Err(Error::TlsSetup(p)) => p,
        Err(e) => panic!("expected TlsSetup, got {e:?}"),
        Ok(_) => panic!("expected TlsSetup error, got a connector"),
    }
}

#[test]
fn trusted_ca_handshake_succeeds_on_tls13_and_tls12() {
    let ca = Ca::new("Test CA");
    let leaf = server_leaf(&ca, &[BROKER], Validity::Current);
    let c = connector(trusting(&ca));
    match handshake(c.connect(BROKER).unwrap(), server_config(&leaf, None, BOTH)) {
        Outcome::Ok { version, .. } => assert_eq!(version, ProtocolVersion::TLSv1_3),
        other => panic!("{other:?}"),
    }
    match handshake(
        c.connect(BROKER).unwrap(),
        server_config(&leaf, None, &[&TLS12]),
    ) {
        Outcome::Ok { version, .. } => assert_eq!(version, ProtocolVersion::TLSv1_2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn ca_from_der_and_from_file_are_trusted() {
    let ca = Ca::new("Test CA");
    let leaf = server_leaf(&ca, &[BROKER], Validity::Current);
    let der = connector(TlsConfig::new().ca_der(ca.der().to_vec()));
    assert!(handshake(
        der.connect(BROKER).unwrap(),
        server_config(&leaf, None, BOTH)
    )
    .is_ok());
    let path = temp_file("ca-file.pem", ca.pem().as_bytes());
    let file = connector(TlsConfig::new().ca_pem_file(&path));
    assert!(handshake(
        file.connect(BROKER).unwrap(),
        server_config(&leaf, None, BOTH)
    )
    .is_ok());
}

#[test]
fn untrusted_ca_is_refused() {
    let ca = Ca::new("Real CA");
    let rogue = Ca::new("Rogue CA");
    let leaf = server_leaf(&rogue, &[BROKER], Validity::Current);
    let out = handshake(
        connector(trusting(&ca)).connect(BROKER).unwrap(),
        server_config(&leaf, None, BOTH),
    );
    assert_eq!(cert_error(&out), CertificateError::UnknownIssuer);
}

fn is_name_error(e: &CertificateError) -> bool {
    matches!(
        e,
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }
    )
}

#[test]
fn wrong_host_is_refused_unless_dangerously_disabled() {
    let ca = Ca::new("Test CA");
    let leaf = server_leaf(&ca, &["other.kafka.test"], Validity::Current);
    let out = handshake(
        connector(trusting(&ca)).connect(BROKER).unwrap(),
        server_config(&leaf, None, BOTH),
    );
    assert!(is_name_error(&cert_error(&out)), "{out:?}");

    let lax = connector(trusting(&ca).dangerous_disable_hostname_verification(true));
    assert!(handshake(
        lax.connect(BROKER).unwrap(),
        server_config(&leaf, None, BOTH)
    )
    .is_ok());
    // An IP address that is nowhere in the certificate, too.
    assert!(handshake(
        lax.connect("192.0.2.7").unwrap(),
        server_config(&leaf, None, BOTH)
    )
    .is_ok());
}

#[test]
fn a_certificate_without_subject_alt_names_is_refused() {
    // Its common name is the broker's name, but TLS clients match names against the
    // subjectAltName extension only (RFC 6125); a SAN-less certificate names no host.
    let ca = Ca::new("Test CA");
    let leaf = server_leaf_without_san(&ca, BROKER);
    let out = handshake(
        connector(trusting(&ca)).connect(BROKER).unwrap(),
        server_config(&leaf, None, BOTH),
    );
    assert!(is_name_error(&cert_error(&out)), "{out:?}");
}

#[test]
fn dangerous_option_still_verifies_the_chain_and_validity() {
    let ca = Ca::new("Real CA");
    let rogue = Ca::new("Rogue CA");
    let lax = connector(trusting(&ca).dangerous_disable_hostname_verification(true));

    let untrusted = server_leaf(&rogue, &[BROKER], Validity::Current);
    let out = handshake(
        lax.connect(BROKER).unwrap(),
        server_config(&untrusted, None, BOTH),
    );
    assert_eq!(cert_error(&out), CertificateError::UnknownIssuer);

    // Wrong name *and* untrusted: still the chain error.
    let both_wrong = server_leaf(&rogue, &["elsewhere.test"], Validity::Current);
    let out = handshake(
        lax.connect(BROKER).unwrap(),
        server_config(&both_wrong, None, BOTH),
    );
    assert_eq!(cert_error(&out), CertificateError::UnknownIssuer);

    let expired = server_leaf(&ca, &["elsewhere.test"], Validity::Expired);
    let out = handshake(
        lax.connect(BROKER).unwrap(),
        server_config(&expired, None, BOTH),
    );
    assert!(matches!(
        cert_error(&out),
        CertificateError::Expired | CertificateError::ExpiredContext { .. }
    ));
}

#[test]
fn expired_and_not_yet_valid_certificates_are_refused() {
    let ca = Ca::new("Test CA");
    let c = connector(trusting(&ca));
    let expired = server_leaf(&ca, &[BROKER], Validity::Expired);
    let out = handshake(
        c.connect(BROKER).unwrap(),
        server_config(&expired, None, BOTH),
    );
    assert!(matches!(
        cert_error(&out),
        CertificateError::Expired | CertificateError::ExpiredContext { .. }
    ));
    let future = server_leaf(&ca, &[BROKER], Validity::NotYetValid);
    let out = handshake(
        c.connect(BROKER).unwrap(),
        server_config(&future, None, BOTH),
    );
    assert!(matches!(
        cert_error(&out),
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. }
    ));
}

#[test]
fn server_name_override_and_ip_addresses() {
    let ca = Ca::new("Test CA");
    let leaf = server_leaf(&ca, &[BROKER, "127.0.0.1", "::1"], Validity::Current);
    let over = connector(trusting(&ca).server_name(BROKER));
    assert!(handshake(
        over.connect("10.1.2.3").unwrap(),
        server_config(&leaf, None, BOTH)
    )
    .is_ok());
    let plain = connector(trusting(&ca));
    assert!(handshake(
        plain.connect("127.0.0.1").unwrap(),
        server_config(&leaf, None, BOTH)
    )
    .is_ok());
    assert!(handshake(
        plain.connect("::1").unwrap(),
        server_config(&leaf, None, BOTH)
    )
    .is_ok());
    assert!(handshake(
        plain.connect("[::1]").unwrap(),
        server_config(&leaf, None, BOTH)
    )
    .is_ok());
    let out = handshake(
        plain.connect("127.0.0.2").unwrap(),
        server_config(&leaf, None, BOTH),
    );
    assert!(is_name_error(&cert_error(&out)));
}

fn mtls_roundtrip(client_tls: TlsConfig, server_ca: &Ca, client_ca: &Ca) -> Outcome {
    let leaf = server_leaf(server_ca, &[BROKER], Validity::Current);
    handshake(
        connector(client_tls).connect(BROKER).unwrap(),
        server_config(&leaf, Some(client_ca), BOTH),
    )
}

fn assert_client_cert_seen(out: Outcome) {
    match out {
        Outcome::Ok {
            server_saw_client_cert,
            ..
        } => assert!(server_saw_client_cert),
        other => panic!("{other:?}"),
    }
}

#[test]
fn mutual_tls_with_pem_files_bytes_and_der() {
    let ca = Ca::new("Test CA");
    let client = client_leaf(&ca, KeyPair::generate().unwrap());
    let cert_path = temp_file("client.pem", client.cert.pem().as_bytes());
    let key_path = temp_file("client-key.pem", client.key.serialize_pem().as_bytes());

    let files = trusting(&ca).client_cert_pem_file(&cert_path, &key_path);
    assert_client_cert_seen(mtls_roundtrip(files, &ca, &ca));
    let bytes = trusting(&ca).client_cert_pem(client.cert.pem(), client.key.serialize_pem());
    assert_client_cert_seen(mtls_roundtrip(bytes, &ca, &ca));
    let der =
        trusting(&ca).client_cert_der(vec![client.cert.der().to_vec()], client.key.serialize_der());
    assert_client_cert_seen(mtls_roundtrip(der, &ca, &ca));
}

#[test]
fn mutual_tls_with_rsa_pkcs1_and_ec_sec1_keys() {
    let ca = Ca::new("Test CA");
    for (pkcs8, other_form) in [
        ("rsa-pkcs8.pem", "rsa-pkcs1.pem"),
        ("ec-pkcs8.pem", "ec-sec1.pem"),
    ] {
        let pkcs8_pem = std::fs::read_to_string(fixture(pkcs8)).unwrap();
        let client = client_leaf(&ca, KeyPair::from_pem(&pkcs8_pem).unwrap());
        let tls = trusting(&ca).client_cert_pem_file(
            temp_file(&format!("{other_form}.crt"), client.cert.pem().as_bytes()),
            fixture(other_form),
        );
        assert_client_cert_seen(mtls_roundtrip(tls, &ca, &ca));
        // Same key as DER in its PKCS#1 / SEC1 form: the format is detected from the bytes.
        let pem = std::fs::read(fixture(other_form)).unwrap();
        let der = {
            use rustls::pki_types::pem::PemObject;
            rustls::pki_types::PrivateKeyDer::from_pem_slice(&pem)
                .unwrap()
                .secret_der()
                .to_vec()
        };
        let tls = trusting(&ca).client_cert_der(vec![client.cert.der().to_vec()], der);
        assert_client_cert_seen(mtls_roundtrip(tls, &ca, &ca));
    }
}

#[test]
fn mutual_tls_failures_are_server_side_refusals() {
    let ca = Ca::new("Test CA");
    let other = Ca::new("Other CA");
    // No client certificate while the broker requires one.
    let out = mtls_roundtrip(trusting(&ca), &ca, &ca);
    assert!(matches!(out, Outcome::ServerError(_)), "{out:?}");
    // A client certificate from a CA the broker does not trust.
    let stranger = client_leaf(&other, KeyPair::generate().unwrap());
    let tls = trusting(&ca).client_cert_pem(stranger.cert.pem(), stranger.key.serialize_pem());
    let out = mtls_roundtrip(tls, &ca, &ca);
    assert!(
        matches!(
            out,
            Outcome::ServerError(rustls::Error::InvalidCertificate(
                CertificateError::UnknownIssuer
            ))
        ),
        "{out:?}"
    );
}

/// rustls implements no TLS version below 1.2, so no test server can offer TLS 1.1. Proof in
/// three parts: the configured version list; the ClientHello's supported_versions extension
/// offering exactly TLS 1.3 and 1.2; and a hand-written TLS 1.1 ServerHello that the client
/// refuses.
#[test]
fn tls11_only_server_is_refused() {
    assert_eq!(PROTOCOL_VERSIONS.len(), 2);
    assert_eq!(PROTOCOL_VERSIONS[0].version, ProtocolVersion::TLSv1_3);
    assert_eq!(PROTOCOL_VERSIONS[1].version, ProtocolVersion::TLSv1_2);

    let ca = Ca::new("Test CA");
    let mut client = connector(trusting(&ca)).connect(BROKER).unwrap();
    let mut hello = Vec::new();
    while client.wants_write() {
        client.write_tls(&mut hello).unwrap();
    }
    // extension type 0x002b, length 5, list length 4, TLS 1.3 (0x0304), TLS 1.2 (0x0303).
    let supported_versions = [0x00, 0x2b, 0x00, 0x05, 0x04, 0x03, 0x04, 0x03, 0x03];
    assert!(
        hello.windows(9).any(|w| w == supported_versions),
        "ClientHello offers other versions"
    );

    // A TLS 1.1 ServerHello: version 0x0302, zero random, empty session id,
    // TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA (0xc013), null compression, no extensions.
    let mut body = vec![0x03, 0x02];
    body.extend_from_slice(&[0u8; 32]);
    body.extend_from_slice(&[0x00, 0xc0, 0x13, 0x00]);
    let mut handshake_msg = vec![0x02, 0x00, 0x00, body.len() as u8];
    handshake_msg.extend_from_slice(&body);
    let mut record = vec![0x16, 0x03, 0x02, 0x00, handshake_msg.len() as u8];
    record.extend_from_slice(&handshake_msg);
    client.read_tls(&mut &record[..]).unwrap();
    let err = client
        .process_new_packets()
        .expect_err("TLS 1.1 must be refused");
    assert!(
        matches!(err, rustls::Error::PeerIncompatible(_)),
        "unexpected error kind: {err:?}"
    );
}

#[test]
fn setup_errors_name_the_problem() {
    let ca = Ca::new("Test CA");
    let missing = std::env::temp_dir().join("ksg-definitely-missing/ca.pem");
    let p = setup_problem(TlsConnector::new(&TlsConfig::new().ca_pem_file(&missing)));
    assert!(matches!(p, TlsProblem::FileNotFound { .. }), "{p:?}");
    assert!(
        p.to_string().contains("ca.pem") && p.to_string().contains("not found"),
        "{p}"
    );

    let p = setup_problem(TlsConnector::new(
        &TlsConfig::new().ca_pem(b"hello, no PEM here".to_vec()),
    ));
    assert!(matches!(p, TlsProblem::NoCertificate { .. }), "{p:?}");

    let p = setup_problem(TlsConnector::new(&TlsConfig::new().ca_pem(
        b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n".to_vec(),
    )));
    assert!(matches!(p, TlsProblem::InvalidPem { .. }), "{p:?}");

    let p = setup_problem(TlsConnector::new(
        &TlsConfig::new().ca_der(b"\x30\x03\x02\x01\x01".to_vec()),
    ));
    assert!(matches!(p, TlsProblem::InvalidCertificate { .. }), "{p:?}");

    let p = setup_problem(TlsConnector::new(
        &TlsConfig::new().trust_platform_roots(false),
    ));
    assert!(matches!(p, TlsProblem::NoTrustAnchors { .. }), "{p:?}");

    let client = client_leaf(&ca, KeyPair::generate().unwrap());
    // A "key" file that holds only a certificate.
    let p = setup_problem(TlsConnector::new(
        &trusting(&ca).client_cert_pem(client.cert.pem(), client.cert.pem()),
    ));
    assert!(matches!(p, TlsProblem::NoPrivateKey { .. }), "{p:?}");

    let p = setup_problem(TlsConnector::new(&trusting(&ca).client_cert_pem_file(
        temp_file("enc.crt", client.cert.pem().as_bytes()),
        fixture("ec-encrypted.pem"),
    )));
    assert!(matches!(p, TlsProblem::EncryptedPrivateKey { .. }), "{p:?}");
    assert!(p.to_string().contains("ec-encrypted.pem"), "{p}");

    let p = setup_problem(TlsConnector::new(
        &trusting(&ca).client_cert_der(vec![client.cert.der().to_vec()], b"not a key".to_vec()),
    ));
    assert!(
        matches!(p, TlsProblem::UnreadablePrivateKey { .. }),
        "{p:?}"
    );

    // A well-formed key that does not belong to the certificate.
    let p = setup_problem(TlsConnector::new(&trusting(&ca).client_cert_pem(
        client.cert.pem(),
        KeyPair::generate().unwrap().serialize_pem(),
    )));
    assert!(matches!(p, TlsProblem::ClientCertificate { .. }), "{p:?}");

    let p = setup_problem(TlsConnector::new(
        &trusting(&ca).client_cert_pem(b"no cert".to_vec(), client.key.serialize_pem()),
    ));
    assert!(matches!(p, TlsProblem::NoCertificate { .. }), "{p:?}");

    let p = setup_problem(TlsConnector::new(&trusting(&ca).server_name("bad name!")));
    assert!(matches!(p, TlsProblem::InvalidServerName { .. }), "{p:?}");

    let c = connector(trusting(&ca));
    assert!(matches!(
        c.connect("not a host"),
        Err(Error::TlsSetup(TlsProblem::InvalidServerName { .. }))
    ));
}

#[test]
fn hostname_verification_is_on_by_default() {
    assert!(!TlsConfig::new().hostname_verification_disabled());
    assert!(TlsConfig::new().uses_platform_roots());
    assert!(!TlsConfig::new().ca_pem(b"x".to_vec()).uses_platform_roots());
    assert!(TlsConfig::new()
        .ca_pem(b"x".to_vec())
        .trust_platform_roots(true)
        .uses_platform_roots());
}

// ---------------------------------------------------------------------------------------
// A TLS client reaching a listener that is not TLS (issue 13 item 5).

mod not_tls {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use kafka_streams_group::client::Client;
    use kafka_streams_group::{
        ClientConfig, SecurityProtocol, StreamsGroupConfig, StreamsGroupSession, StreamsTopology,
        Subtopology,
    };

    /// A plaintext "Kafka" listener: it reads the 4-byte size of the first request, finds it
    /// absurd (a ClientHello reads as ~370 MB) and hangs up, as a Kafka PLAINTEXT listener
    /// does. Closing with the rest of the ClientHello unread makes the kernel send a reset;
    /// with `drain` it reads everything first, so the client sees a clean end of stream.
    fn plaintext_listener(drain: bool) -> (String, Arc<AtomicUsize>) {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr").to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { return };
                count.fetch_add(1, Ordering::SeqCst);
                let mut size = [0u8; 4];
                let _ = s.read_exact(&mut size);
                if drain {
                    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
                    let mut rest = [0u8; 4096];
                    while matches!(s.read(&mut rest), Ok(n) if n > 0) {}
                }
            }
        });
        (addr, accepted)
    }

    fn tls_config(bootstrap: &str) -> ClientConfig {
        ClientConfig::new(bootstrap)
            .security_protocol(SecurityProtocol::Ssl)
            .tls(trusting(&Ca::new("not-tls-test")))
            .connect_timeout(Duration::from_secs(5))
            .request_timeout(Duration::from_secs(5))
            .retry_backoff(Duration::from_millis(100), Duration::from_millis(500))
    }

    fn assert_not_tls(err: &Error) {
        let text = err.to_string();
        assert!(text.contains("probably not TLS"), "{text}");
        assert!(text.contains("security.protocol"), "{text}");
        assert!(!err.is_retriable(), "{err:?}");
    }

    #[test]
    fn tls_client_on_a_plaintext_listener_is_told_so() {
        for drain in [false, true] {
            let (addr, accepted) = plaintext_listener(drain);
            let err = Client::from_config(&tls_config(&addr), Duration::from_secs(10))
                .expect_err("not TLS");
            println!("drain={drain}: {err}");
            assert_not_tls(&err);
            assert_eq!(accepted.load(Ordering::SeqCst), 1);
        }
    }

    #[test]
    fn join_stops_at_once_instead_of_retrying_a_listener_that_is_not_tls() {
        let (addr, accepted) = plaintext_listener(false);
        let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("in"));
        let config = StreamsGroupConfig::new(&addr, "app", topology)
            .client_config(tls_config(&addr))
            .join_timeout(Duration::from_secs(8));
        let started = Instant::now();
        let err = StreamsGroupSession::join(config).expect_err("not TLS");
        let took = started.elapsed();
        println!("join: {err} after {took:?}, {accepted:?} connections");
        assert_not_tls(&err);
        // One connection, no retries until the join timeout.
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
        assert!(took < Duration::from_secs(4), "{took:?}");
    }
}
