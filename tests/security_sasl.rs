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

// ---------------------------------------------------------------------------------------
// The client refusing a hostile SCRAM server, end to end through `Client::from_config`
// (issue 13 item 6): reported as the client's refusal, typed, never as "rejected by the
// broker".

mod refusals {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::Duration;

    use kafka_streams_group::client::Client;
    use kafka_streams_group::protocol::api::api_versions::{
        ApiVersion, ApiVersionsRequest, ApiVersionsResponse,
    };
    use kafka_streams_group::protocol::api::sasl_authenticate::{
        SaslAuthenticateRequest, SaslAuthenticateResponse,
    };
    use kafka_streams_group::protocol::api::sasl_handshake::{
        SaslHandshakeRequest, SaslHandshakeResponse,
    };
    use kafka_streams_group::protocol::frame::{decode_request_frame, encode_response_frame};
    use kafka_streams_group::protocol::header::RequestHeader;
    use kafka_streams_group::{ClientConfig, Error, SecurityProtocol};

    /// How the test-side SCRAM server misbehaves.
    #[derive(Clone, Copy, Debug)]
    enum Hostile {
        /// Knows another password: its final signature cannot verify.
        WrongPassword,
        /// Answers with a nonce that does not extend the client's.
        ForeignNonce,
        /// Asks for this many PBKDF2 iterations.
        Iterations(u32),
    }

    /// Server side of one SCRAM exchange over SaslAuthenticate rounds.
    struct Exchange {
        server: TestScramServer,
        hostile: Hostile,
        client_first_bare: String,
        server_first: String,
    }

    impl Exchange {
        fn answer(&mut self, client: &[u8]) -> Vec<u8> {
            let msg = String::from_utf8_lossy(client).into_owned();
            if let Some(bare) = msg.strip_prefix("n,,") {
                self.client_first_bare = bare.to_owned();
                let nonce = bare.split_once(",r=").map(|x| x.1).unwrap_or_default();
                let (nonce, iterations) = match self.hostile {
                    Hostile::ForeignNonce => (format!("X{nonce}srv"), self.server.iterations),
                    Hostile::Iterations(i) => (format!("{nonce}srv"), i),
                    Hostile::WrongPassword => (format!("{nonce}srv"), self.server.iterations),
                };
                self.server_first = format!(
                    "r={nonce},s={},i={iterations}",
                    B64.encode(&self.server.salt)
                );
                return self.server_first.clone().into_bytes();
            }
            let without_proof = msg.rsplit_once(",p=").map(|x| x.0).unwrap_or_default();
            let auth = format!(
                "{},{},{without_proof}",
                self.client_first_bare, self.server_first
            );
            let sig = hmac::sign(
                &hmac::Key::new(self.server.hmac(), &self.server.server_key),
                auth.as_bytes(),
            );
            format!("v={}", B64.encode(sig.as_ref())).into_bytes()
        }
    }

    /// A one-connection Kafka listener that speaks ApiVersions, SaslHandshake and
    /// SaslAuthenticate, with a SCRAM server that knows `password` and misbehaves as told.
    fn hostile_broker(hostile: Hostile, password: &str) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let mut exchange = Exchange {
            server: TestScramServer::new(ScramAlgorithm::Sha256, password),
            hostile,
            client_first_bare: String::new(),
            server_first: String::new(),
        };
        std::thread::spawn(move || {
            let Ok((mut s, _)) = listener.accept() else {
                return;
            };
            loop {
                let mut len = [0u8; 4];
                if s.read_exact(&mut len).is_err() {
                    return;
                }
                let mut frame = vec![0u8; i32::from_be_bytes(len).max(0) as usize];
                if s.read_exact(&mut frame).is_err() {
                    return;
                }
                let Ok((key, version)) = RequestHeader::peek_api(&frame) else {
                    return;
                };
                let mut out = Vec::new();
                match key {
                    18 => {
                        let (h, _) =
                            decode_request_frame::<ApiVersionsRequest>(&frame).expect("req");
                        let body = ApiVersionsResponse {
                            api_keys: [(18, 0, 4), (17, 0, 1), (36, 0, 2), (3, 0, 12)]
                                .iter()
                                .map(|&(api_key, min_version, max_version)| ApiVersion {
                                    api_key,
                                    min_version,
                                    max_version,
                                })
                                .collect(),
                            ..Default::default()
                        };
                        encode_response_frame::<ApiVersionsRequest>(
                            &mut out,
                            h.correlation_id,
                            &body,
                            version.min(3),
                        )
                        .expect("encode");
                    }
                    17 => {
                        let (h, _) =
                            decode_request_frame::<SaslHandshakeRequest>(&frame).expect("req");
                        let body = SaslHandshakeResponse {
                            error_code: 0,
                            mechanisms: vec!["SCRAM-SHA-256".to_string()],
                        };
                        encode_response_frame::<SaslHandshakeRequest>(
                            &mut out,
                            h.correlation_id,
                            &body,
                            version,
                        )
                        .expect("encode");
                    }
                    36 => {
                        let (h, req) =
                            decode_request_frame::<SaslAuthenticateRequest>(&frame).expect("req");
                        let body = SaslAuthenticateResponse {
                            auth_bytes: exchange.answer(&req.auth_bytes),
                            ..Default::default()
                        };
                        encode_response_frame::<SaslAuthenticateRequest>(
                            &mut out,
                            h.correlation_id,
                            &body,
                            version,
                        )
                        .expect("encode");
                    }
                    _ => return,
                }
                if s.write_all(&out).is_err() {
                    return;
                }
            }
        });
        addr
    }

    fn refused(hostile: Hostile, server_password: &str) -> Error {
        let addr = hostile_broker(hostile, server_password);
        let config = ClientConfig::new(addr)
            .security_protocol(SecurityProtocol::SaslPlaintext)
            .sasl(SaslConfig::scram_sha256("alice", "wonder land"))
            .request_timeout(Duration::from_secs(5));
        let err = Client::from_config(&config, Duration::from_secs(10)).expect_err("refused");
        let text = err.to_string();
        println!("{hostile:?}: {text}");
        assert!(text.contains("the client refused the server"), "{text}");
        assert!(!text.contains("rejected by the broker"), "{text}");
        assert!(!text.contains("wonder land"), "secret leaked: {text}");
        assert!(!err.is_retriable(), "{err:?}");
        err
    }

    #[test]
    fn a_server_signature_that_does_not_verify_is_the_clients_refusal() {
        match refused(Hostile::WrongPassword, "guess") {
            Error::Sasl {
                mechanism: "SCRAM-SHA-256",
                broker: Some(_),
                source: SaslError::ScramServerSignatureMismatch { .. },
            } => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_server_nonce_that_does_not_extend_the_clients_is_refused() {
        match refused(Hostile::ForeignNonce, "wonder land") {
            Error::Sasl {
                source: SaslError::ScramNonceMismatch { .. },
                ..
            } => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn iteration_counts_out_of_bounds_are_refused() {
        for i in [1, 4095, 100_001, u32::MAX] {
            match refused(Hostile::Iterations(i), "wonder land") {
                Error::Sasl {
                    source: SaslError::ScramIterationCount { iterations, .. },
                    ..
                } => assert_eq!(iterations, u64::from(i)),
                other => panic!("i={i}: {other:?}"),
            }
        }
    }

    /// The same test-side server, behaving, is accepted: the refusals above come from the
    /// hostile parts only.
    #[test]
    fn the_honest_test_server_is_accepted() {
        let addr = hostile_broker(Hostile::Iterations(4096), "wonder land");
        let config = ClientConfig::new(addr)
            .security_protocol(SecurityProtocol::SaslPlaintext)
            .sasl(SaslConfig::scram_sha256("alice", "wonder land"))
            .request_timeout(Duration::from_secs(5));
        Client::from_config(&config, Duration::from_secs(10)).expect("authenticated");
    }
}
