//! Secrets never appear in Debug, Display or logs: every configuration type, mechanism and
//! error is formatted and searched for the secret strings.

mod security_common;

use std::sync::Arc;

use kafka_streams_group::config::{
    ClientConfig, PrivateKeySource, SaslConfig, Secret, SecurityProtocol, TlsConfig,
};
use kafka_streams_group::error::Error;
use kafka_streams_group::tls::TlsConnector;
use kafka_streams_group::transport::sasl::{
    OAuthBearer, OAuthToken, Plain, SaslError, SaslMechanism, Scram, ScramAlgorithm,
};
use parking_lot::Mutex;
use rcgen::KeyPair;
use security_common::*;

const PASSWORD: &str = "Pa55w0rd-SECRET-7f3a";
const TOKEN: &str = "eyJTOKENSECRET.payload9c1.signature";
const EXTENSION_VALUE: &str = "extSECRETvalue";

/// Collects every log record (all levels) so the test can search them.
struct Capture(Mutex<Vec<String>>);

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, record: &log::Record) {
        self.0
            .lock()
            .push(format!("{} {}", record.target(), record.args()));
    }
    fn flush(&self) {}
}

static LOGS: Capture = Capture(Mutex::new(Vec::new()));

fn key_secrets(key_pem: &str) -> Vec<String> {
    // Every base64 line of the PEM body is key material.
    key_pem
        .lines()
        .filter(|l| !l.starts_with("-----") && l.len() > 16)
        .map(str::to_owned)
        .collect()
}

fn assert_clean(text: &str, secrets: &[String], what: &str) {
    for s in secrets {
        assert!(!text.contains(s.as_str()), "{what} leaks {s:?}: {text}");
    }
}

#[test]
fn no_secret_in_debug_display_or_logs() {
    log::set_logger(&LOGS).unwrap();
    log::set_max_level(log::LevelFilter::Trace);

    let ca = Ca::new("Test CA");
    let client = client_leaf(&ca, KeyPair::generate().unwrap());
    let key_pem = client.key.serialize_pem();
    let key_der = client.key.serialize_der();
    let mut secrets: Vec<String> = vec![
        PASSWORD.into(),
        TOKEN.into(),
        EXTENSION_VALUE.into(),
        // Also the DER bytes as Debug would print them.
        format!("{:?}", &key_der[..24])
            .trim_end_matches(']')
            .to_owned(),
    ];
    secrets.extend(key_secrets(&key_pem));

    let mut rendered: Vec<(String, String)> = Vec::new();
    let mut show = |what: &str, debug: String, display: Option<String>| {
        rendered.push((format!("{what} Debug"), debug));
        if let Some(d) = display {
            rendered.push((format!("{what} Display"), d));
        }
    };

    // Configuration types.
    let secret = Secret::new(PASSWORD);
    show(
        "Secret",
        format!("{secret:?} {secret:#?}"),
        Some(secret.to_string()),
    );
    let token = OAuthToken::new(TOKEN).with_extension("traceId", EXTENSION_VALUE);
    show("OAuthToken", format!("{token:?} {token:#?}"), None);
    let token_for_cb = token.clone();
    let sasl_configs = [
        SaslConfig::plain("alice", PASSWORD),
        SaslConfig::scram_sha256("alice", PASSWORD),
        SaslConfig::scram_sha512("alice", PASSWORD),
        SaslConfig::oauthbearer(move || Ok(token_for_cb.clone())),
    ];
    for s in &sasl_configs {
        show("SaslConfig", format!("{s:?} {s:#?}"), None);
    }
    let tls_configs = [
        TlsConfig::new()
            .ca_pem(ca.pem())
            .client_cert_pem(client.cert.pem(), key_pem.clone()),
        TlsConfig::new().client_cert_der(vec![client.cert.der().to_vec()], key_der.clone()),
    ];
    for t in &tls_configs {
        show("TlsConfig", format!("{t:?} {t:#?}"), None);
    }
    for k in [
        PrivateKeySource::Pem(key_pem.clone().into_bytes()),
        PrivateKeySource::Der(key_der.clone()),
    ] {
        show("PrivateKeySource", format!("{k:?}"), None);
    }
    for s in sasl_configs.iter().cloned() {
        let cfg = ClientConfig::new("b:9093")
            .security_protocol(SecurityProtocol::SaslSsl)
            .tls(tls_configs[0].clone())
            .sasl(s);
        show("ClientConfig", format!("{cfg:?} {cfg:#?}"), None);
        assert!(cfg.validate().is_ok());
    }
    let connector = TlsConnector::new(&tls_configs[0]).unwrap();
    // The hostname opt-out logs a warning: make sure the log path is exercised.
    TlsConnector::new(
        &tls_configs[0]
            .clone()
            .dangerous_disable_hostname_verification(true),
    )
    .unwrap();
    show("TlsConnector", format!("{connector:?}"), None);

    // Mechanisms in every state.
    let mut mechs = vec![
        SaslMechanism::Plain(Plain::new("alice", PASSWORD).unwrap()),
        SaslMechanism::Scram(
            Scram::with_nonce(ScramAlgorithm::Sha256, "alice", PASSWORD, "n0nce").unwrap(),
        ),
        SaslMechanism::Scram(Scram::new(ScramAlgorithm::Sha512, "alice", PASSWORD).unwrap()),
        SaslMechanism::OAuthBearer(OAuthBearer::new(token.clone()).unwrap()),
    ];
    for m in &mut mechs {
        show("SaslMechanism(initial)", format!("{m:?} {m:#?}"), None);
        m.start();
        show("SaslMechanism(started)", format!("{m:?} {m:#?}"), None);
    }
    // SCRAM after the first round holds derived keys.
    let mut scram = Scram::with_nonce(ScramAlgorithm::Sha256, "alice", PASSWORD, "n0nce").unwrap();
    scram.start();
    scram
        .step(b"r=n0nceSRV,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
        .unwrap();
    show("Scram(after first)", format!("{scram:?} {scram:#?}"), None);

    // Every SASL error, from real failing exchanges where possible.
    let mut errors: Vec<SaslError> = Vec::new();
    let mut scram_err = |server_first: &str, server_final: Option<&str>| {
        let mut s = Scram::with_nonce(ScramAlgorithm::Sha512, "alice", PASSWORD, "n0nce").unwrap();
        s.start();
        let r = s.step(server_first.as_bytes());
        let r = match (r, server_final) {
            (Ok(_), Some(f)) => s.step(f.as_bytes()),
            (r, _) => r,
        };
        errors.push(r.unwrap_err());
    };
    scram_err("r=other,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", None);
    scram_err("r=n0nceX,s=***,i=4096", None);
    scram_err("r=n0nceX,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=12", None);
    scram_err("e=invalid-encoding", None);
    scram_err("garbage", None);
    let first = "r=n0nceX,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    scram_err(
        first,
        Some("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
    );
    scram_err(first, Some("x=missing"));
    scram_err(first, Some("e=invalid-proof"));
    errors.push(Plain::new("a", "b\0").unwrap_err());
    errors.push(Scram::with_nonce(ScramAlgorithm::Sha256, "a", PASSWORD, "bad nonce").unwrap_err());
    errors.push(OAuthBearer::new(OAuthToken::new(format!("{TOKEN} x"))).unwrap_err());
    errors.push(
        OAuthBearer::new(
            OAuthToken::new(TOKEN).with_extension("k", format!("{EXTENSION_VALUE}\u{1}")),
        )
        .unwrap_err(),
    );
    let cb: kafka_streams_group::transport::sasl::OAuthTokenCallback =
        Arc::new(|| Err("idp down".into()));
    errors.push(OAuthBearer::from_callback(&cb).unwrap_err());
    let mut ob = OAuthBearer::new(token.clone()).unwrap();
    ob.start();
    errors.push(ob.step(br#"{"status":"invalid_token"}"#).unwrap_err());
    errors.push(ob.step(b"").unwrap_err());
    assert!(errors.len() >= 15);
    for e in errors {
        show("SaslError", format!("{e:?} {e:#?}"), Some(e.to_string()));
        let crate_err: Error = e.into();
        show(
            "Error::Sasl",
            format!("{crate_err:?}"),
            Some(crate_err.to_string()),
        );
    }

    // TLS setup errors for key material that is malformed, mismatched or in the wrong slot.
    let broken_key = key_pem.replace("\n-----END", "!!\n-----END");
    let wrong_key = KeyPair::generate().unwrap().serialize_pem();
    secrets.extend(key_secrets(&wrong_key));
    for tls in [
        TlsConfig::new()
            .ca_pem(ca.pem())
            .client_cert_pem(client.cert.pem(), broken_key),
        TlsConfig::new()
            .ca_pem(ca.pem())
            .client_cert_pem(client.cert.pem(), wrong_key.clone()),
        TlsConfig::new().ca_pem(key_pem.clone()),
        TlsConfig::new()
            .ca_pem(ca.pem())
            .client_cert_pem(key_pem.clone(), key_pem.clone()),
        TlsConfig::new()
            .ca_pem(ca.pem())
            .client_cert_der(vec![client.cert.der().to_vec()], key_der[..40].to_vec()),
    ] {
        let err = TlsConnector::new(&tls).unwrap_err();
        show(
            "Error(TLS setup)",
            format!("{err:?}"),
            Some(err.to_string()),
        );
    }

    let logs = LOGS.0.lock().join("\n");
    assert!(logs.contains("hostname verification is disabled"), "{logs}");
    rendered.push(("logs".into(), logs));
    assert!(
        rendered.len() > 60,
        "too few renderings: {}",
        rendered.len()
    );
    for (what, text) in &rendered {
        assert_clean(text, &secrets, what);
    }
    // Sanity: the search would find a leak if there were one.
    assert!(format!("{:?}", PASSWORD).contains(PASSWORD));
    assert!(!key_secrets(&key_pem).is_empty());
}
