//! SASL step machines: published and independently computed transcripts, full exchanges
//! against a test-side SCRAM server, and hostile server messages.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use kafka_streams_group::config::SaslConfig;
use kafka_streams_group::transport::sasl::{
    OAuthBearer, OAuthToken, SaslError, SaslMechanism, SaslStep, Scram, ScramAlgorithm,
};
use ring::{digest, hmac, pbkdf2};

// RFC 7677 §3: SCRAM-SHA-256, user "user", password "pencil".
const RFC7677_CLIENT_FIRST: &str = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
const RFC7677_SERVER_FIRST: &str =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
const RFC7677_CLIENT_FINAL: &str = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
const RFC7677_SERVER_FINAL: &str = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

// SCRAM-SHA-512, computed with Python's hashlib/hmac by tests/fixtures/scram_vector.py
// (user "us=er,1", password "pencil é", nonce fyko+d2lbbFgONRv9qkxdawL, salt 01..10, 4096).
const SHA512_USER: &str = "us=er,1";
const SHA512_PASSWORD: &str = "pencil \u{e9}";
const SHA512_NONCE: &str = "fyko+d2lbbFgONRv9qkxdawL";
const SHA512_CLIENT_FIRST: &str = "n,,n=us=3Der=2C1,r=fyko+d2lbbFgONRv9qkxdawL";
const SHA512_SERVER_FIRST: &str =
    "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=AQIDBAUGBwgJCgsMDQ4PEA==,i=4096";
const SHA512_CLIENT_FINAL: &str = "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=SNrdHmyb6wAmJnNLS+n7pvWHCgJk6DBAyEPf4PviQMZHHnLSwD3uOHJAk8FeQdIJL6jhoh701khQsY6IN8sdnw==";
const SHA512_SERVER_FINAL: &str =
    "v=KsJHH20Vbt/kS8JMRumAE67DiDceOMPJIvjwiQaqlF0tmdfd7kQnyQ3OAyI6ihaujtEmaRtxX0lkjemk0tAbZg==";

fn rfc7677_client() -> Scram {
    Scram::with_nonce(
        ScramAlgorithm::Sha256,
        "user",
        "pencil",
        "rOprNGfwEbeRWgbNEkqO",
    )
    .unwrap()
}

fn sha512_client() -> Scram {
    Scram::with_nonce(
        ScramAlgorithm::Sha512,
        SHA512_USER,
        SHA512_PASSWORD,
        SHA512_NONCE,
    )
    .unwrap()
}

fn transcript(mut c: Scram, first: &str, server_first: &str, final_: &str, server_final: &str) {
    assert_eq!(String::from_utf8(c.start()).unwrap(), first);
    match c.step(server_first.as_bytes()).unwrap() {
        SaslStep::Continue(msg) => assert_eq!(String::from_utf8(msg).unwrap(), final_),
        other => panic!("{other:?}"),
    }
    assert!(!c.is_complete());
    assert_eq!(
        c.step(server_final.as_bytes()).unwrap(),
        SaslStep::Done(None)
    );
    assert!(c.is_complete());
    assert!(matches!(
        c.step(b"v=anything"),
        Err(SaslError::UnexpectedServerMessage { .. })
    ));
}

#[test]
fn rfc7677_scram_sha256_transcript() {
    transcript(
        rfc7677_client(),
        RFC7677_CLIENT_FIRST,
        RFC7677_SERVER_FIRST,
        RFC7677_CLIENT_FINAL,
        RFC7677_SERVER_FINAL,
    );
}

#[test]
fn independent_scram_sha512_transcript() {
    transcript(
        sha512_client(),
        SHA512_CLIENT_FIRST,
        SHA512_SERVER_FIRST,
        SHA512_CLIENT_FINAL,
        SHA512_SERVER_FINAL,
    );
}

/// A test-side SCRAM server (RFC 5802 §3, server role) holding stored credentials.
struct TestScramServer {
    alg: ScramAlgorithm,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
    salt: Vec<u8>,
    iterations: u32,
}

impl TestScramServer {
    fn new(alg: ScramAlgorithm, password: &str) -> Self {
        let (h, p, d) = match alg {
            ScramAlgorithm::Sha256 => (
                hmac::HMAC_SHA256,
                pbkdf2::PBKDF2_HMAC_SHA256,
                &digest::SHA256,
            ),
            ScramAlgorithm::Sha512 => (
                hmac::HMAC_SHA512,
                pbkdf2::PBKDF2_HMAC_SHA512,
                &digest::SHA512,
            ),
        };
        let salt = b"kafka-salt".to_vec();
        let iterations = 4096;
        let mut salted = vec![0; d.output_len()];
        pbkdf2::derive(
            p,
            iterations.try_into().unwrap(),
            &salt,
            password.as_bytes(),
            &mut salted,
        );
        let k = hmac::Key::new(h, &salted);
        let client_key = hmac::sign(&k, b"Client Key");
        TestScramServer {
            alg,
            stored_key: digest::digest(d, client_key.as_ref()).as_ref().to_vec(),
            server_key: hmac::sign(&k, b"Server Key").as_ref().to_vec(),
            salt,
            iterations,
        }
    }

    fn hmac(&self) -> hmac::Algorithm {
        match self.alg {
            ScramAlgorithm::Sha256 => hmac::HMAC_SHA256,
            ScramAlgorithm::Sha512 => hmac::HMAC_SHA512,
        }
    }

    /// Runs a whole exchange; returns the server's verdict on the client proof and the
    /// client's final step result.
    fn run(
        &self,
        mech: &mut SaslMechanism,
        expected_user: &str,
    ) -> (bool, Result<SaslStep, SaslError>) {
        let first = String::from_utf8(mech.start()).unwrap();
        let bare = first.strip_prefix("n,,").unwrap().to_owned();
        let (user, nonce) = bare.split_once(",r=").unwrap();
        assert_eq!(user, format!("n={expected_user}"));
        let server_first = format!(
            "r={nonce}srv-nonce,s={},i={}",
            B64.encode(&self.salt),
            self.iterations
        );
        let client_final = match mech.step(server_first.as_bytes()).unwrap() {
            SaslStep::Continue(m) => String::from_utf8(m).unwrap(),
            other => panic!("{other:?}"),
        };
        let (without_proof, proof) = client_final.rsplit_once(",p=").unwrap();
        assert_eq!(without_proof, format!("c=biws,r={nonce}srv-nonce"));
        let auth = format!("{bare},{server_first},{without_proof}");
        let sig = hmac::sign(
            &hmac::Key::new(self.hmac(), &self.stored_key),
            auth.as_bytes(),
        );
        let proof = B64.decode(proof).unwrap();
        let client_key: Vec<u8> = proof.iter().zip(sig.as_ref()).map(|(a, b)| a ^ b).collect();
        let d = match self.alg {
            ScramAlgorithm::Sha256 => &digest::SHA256,
            ScramAlgorithm::Sha512 => &digest::SHA512,
        };
        let accepted = digest::digest(d, &client_key).as_ref() == self.stored_key.as_slice();
        let server_sig = hmac::sign(
            &hmac::Key::new(self.hmac(), &self.server_key),
            auth.as_bytes(),
        );
        let reply = format!("v={}", B64.encode(server_sig.as_ref()));
        (accepted, mech.step(reply.as_bytes()))
    }
}

#[test]
fn scram_exchanges_with_random_nonces_against_a_test_server() {
    for (config, alg) in [
        (
            SaslConfig::scram_sha256("alice", "wonder land"),
            ScramAlgorithm::Sha256,
        ),
        (
            SaslConfig::scram_sha512("alice", "wonder land"),
            ScramAlgorithm::Sha512,
        ),
    ] {
        let server = TestScramServer::new(alg, "wonder land");
        let mut mech = SaslMechanism::from_config(&config).unwrap();
        assert_eq!(mech.name(), alg.mechanism_name());
        let (accepted, result) = server.run(&mut mech, "alice");
        assert!(accepted, "server must accept the client proof");
        assert_eq!(result.unwrap(), SaslStep::Done(None));
        assert!(mech.is_complete());

        // Wrong password: the server refuses the proof and, not knowing the client's
        // password, its signature does not verify on the client either.
        let impostor = TestScramServer::new(alg, "guess");
        let mut mech = SaslMechanism::from_config(&config).unwrap();
        let (accepted, result) = impostor.run(&mut mech, "alice");
        assert!(!accepted);
        assert!(matches!(
            result,
            Err(SaslError::ScramServerSignatureMismatch { .. })
        ));
    }
}

/// Runs client-first and feeds `server_first`; returns the error.
fn first_error(server_first: &str) -> SaslError {
    let mut c = rfc7677_client();
    c.start();
    c.step(server_first.as_bytes())
        .expect_err("must be refused")
}

/// Runs a valid RFC 7677 first round and feeds `server_final`; returns the error.
fn final_error(server_final: &[u8]) -> SaslError {
    let mut c = rfc7677_client();
    c.start();
    c.step(RFC7677_SERVER_FIRST.as_bytes()).unwrap();
    let err = c.step(server_final).expect_err("must be refused");
    assert!(!c.is_complete());
    // The exchange is dead after an error.
    assert!(matches!(
        c.step(RFC7677_SERVER_FINAL.as_bytes()),
        Err(SaslError::UnexpectedServerMessage { .. })
    ));
    err
}

#[test]
fn server_nonce_must_extend_the_client_nonce() {
    for nonce in [
        "XXXXNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj",
        "rOprNGfwEbeRWgbNEkqO",
        "rOprNGfwEbe",
        "%hvYDpWUa2RaTCAfuxFIljrOprNGfwEbeRWgbNEkqO",
    ] {
        let err = first_error(&format!("r={nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"));
        assert_eq!(
            err,
            SaslError::ScramNonceMismatch {
                mechanism: "SCRAM-SHA-256"
            },
            "{nonce}"
        );
    }
}

#[test]
fn bad_salt_is_refused() {
    for salt in [
        "",
        "W22ZaJ0SNY7soEsUEjb6gQ",
        "W22Za!0SNY7soEsUEjb6gQ==",
        "====",
    ] {
        let err = first_error(&format!("r=rOprNGfwEbeRWgbNEkqOsrv,s={salt},i=4096"));
        assert!(
            matches!(err, SaslError::ScramInvalidSalt { .. }),
            "{salt}: {err:?}"
        );
    }
}

#[test]
fn iteration_count_outside_bounds_is_refused() {
    for (i, expected) in [
        (4095u64, 4095u64),
        (1, 1),
        (0, 0),
        (100_001, 100_001),
        (99_999_999_999, 99_999_999_999),
    ] {
        let err = first_error(&format!(
            "r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i={i}"
        ));
        match err {
            SaslError::ScramIterationCount {
                iterations,
                minimum: 4096,
                ..
            } => assert_eq!(iterations, expected),
            other => panic!("i={i}: {other:?}"),
        }
    }
    for i in ["", "-4096", "4096x", "+4096", "99999999999999999999999"] {
        let err = first_error(&format!(
            "r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i={i}"
        ));
        assert!(
            matches!(err, SaslError::MalformedServerMessage { .. }),
            "{i}: {err:?}"
        );
    }
}

#[test]
fn malformed_server_first_messages_are_typed() {
    for msg in [
        "",
        "garbage",
        "s=W22ZaJ0SNY7soEsUEjb6gQ==,r=rOprNGfwEbeRWgbNEkqOsrv,i=4096",
        "r=rOprNGfwEbeRWgbNEkqOsrv,i=4096",
        "r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==",
        "m=must-understand,r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        "r=rOprNGfwEbeRWgbNEkqO\u{7f}x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
    ] {
        let err = first_error(msg);
        assert!(
            matches!(err, SaslError::MalformedServerMessage { .. }),
            "{msg:?}: {err:?}"
        );
    }
    let mut c = rfc7677_client();
    c.start();
    assert!(matches!(
        c.step(&[0xff, 0xfe]),
        Err(SaslError::MalformedServerMessage { .. })
    ));
}

#[test]
fn server_error_attribute_is_typed() {
    assert_eq!(
        first_error("e=unknown-user"),
        SaslError::ScramServerError {
            mechanism: "SCRAM-SHA-256",
            error: "unknown-user".into()
        }
    );
    assert_eq!(
        final_error(b"e=invalid-proof"),
        SaslError::ScramServerError {
            mechanism: "SCRAM-SHA-256",
            error: "invalid-proof".into()
        }
    );
}

#[test]
fn wrong_or_missing_server_signature_is_refused() {
    // Flip one bit of the genuine signature.
    let mut sig = B64.decode(&RFC7677_SERVER_FINAL[2..]).unwrap();
    sig[0] ^= 1;
    let forged = format!("v={}", B64.encode(&sig));
    assert!(matches!(
        final_error(forged.as_bytes()),
        SaslError::ScramServerSignatureMismatch { .. }
    ));
    // Truncated signature, and the SCRAM-SHA-512 signature for a SHA-256 exchange.
    let short = format!("v={}", B64.encode(&sig[..16]));
    assert!(matches!(
        final_error(short.as_bytes()),
        SaslError::ScramServerSignatureMismatch { .. }
    ));
    assert!(matches!(
        final_error(SHA512_SERVER_FINAL.as_bytes()),
        SaslError::ScramServerSignatureMismatch { .. }
    ));
    for missing in [
        &b""[..],
        b"x=1",
        b"r=abc,v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
    ] {
        assert!(matches!(
            final_error(missing),
            SaslError::ScramMissingServerSignature { .. }
        ));
    }
    assert!(matches!(
        final_error(b"v=not base64!"),
        SaslError::MalformedServerMessage { .. }
    ));
    // Extensions after a valid signature are allowed.
    let mut c = rfc7677_client();
    c.start();
    c.step(RFC7677_SERVER_FIRST.as_bytes()).unwrap();
    let with_ext = format!("{RFC7677_SERVER_FINAL},x=ext");
    assert_eq!(c.step(with_ext.as_bytes()).unwrap(), SaslStep::Done(None));
}

#[test]
fn step_before_start_is_refused() {
    let mut c = rfc7677_client();
    assert!(matches!(
        c.step(RFC7677_SERVER_FIRST.as_bytes()),
        Err(SaslError::UnexpectedServerMessage { .. })
    ));
}

#[test]
fn plain_through_the_mechanism_enum() {
    let mut m = SaslMechanism::from_config(&SaslConfig::plain("bob", "hunter2")).unwrap();
    assert_eq!(m.name(), "PLAIN");
    assert_eq!(m.start(), b"\0bob\0hunter2");
    assert_eq!(m.step(b"").unwrap(), SaslStep::Done(None));
    assert!(m.is_complete());
    assert!(SaslMechanism::from_config(&SaslConfig::plain("", "x")).is_err());
}

#[test]
fn oauthbearer_calls_the_callback_per_authentication() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let config = SaslConfig::oauthbearer(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        Ok(OAuthToken::new(format!("token{n}")).with_extension("logicalCluster", "lkc-1"))
    });
    for n in 0..2 {
        let mut m = SaslMechanism::from_config(&config).unwrap();
        assert_eq!(m.name(), "OAUTHBEARER");
        let expected = format!("n,,\x01auth=Bearer token{n}\x01logicalCluster=lkc-1\x01\x01");
        assert_eq!(m.start(), expected.as_bytes());
        assert_eq!(m.step(b"").unwrap(), SaslStep::Done(None));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[test]
fn oauthbearer_errors_are_typed() {
    let failing = SaslConfig::oauthbearer(|| Err("identity provider down".to_owned()));
    assert_eq!(
        SaslMechanism::from_config(&failing).unwrap_err(),
        SaslError::TokenCallback {
            message: "identity provider down".into()
        }
    );
    let bad_token = SaslConfig::oauthbearer(|| Ok(OAuthToken::new("has space")));
    assert!(matches!(
        SaslMechanism::from_config(&bad_token),
        Err(SaslError::InvalidCredentials {
            mechanism: "OAUTHBEARER",
            ..
        })
    ));

    let ok = SaslConfig::oauthbearer(|| Ok(OAuthToken::new("abc.def.ghi")));
    let mut m = SaslMechanism::from_config(&ok).unwrap();
    m.start();
    let err = m
        .step(br#"{"status":"invalid_token","scope":"kafka","openid-configuration":"https://idp/.well-known/openid-configuration"}"#)
        .unwrap_err();
    assert_eq!(
        err,
        SaslError::OAuthBearerServerError {
            status: Some("invalid_token".into()),
            scope: Some("kafka".into()),
            openid_configuration: Some("https://idp/.well-known/openid-configuration".into()),
        }
    );
    assert_eq!(err.mechanism(), "OAUTHBEARER");
    assert_eq!(OAuthBearer::ABORT_RESPONSE, b"\x01");
    // Not JSON at all: still a typed server error, with nothing extracted.
    let mut m = SaslMechanism::from_config(&ok).unwrap();
    m.start();
    assert_eq!(
        m.step(b"\xff not json").unwrap_err(),
        SaslError::OAuthBearerServerError {
            status: None,
            scope: None,
            openid_configuration: None
        }
    );
}
