//! `SCRAM-SHA-256` / `SCRAM-SHA-512` (RFC 5802, RFC 7677), client side, without channel binding.
//!
//! ```text
//!   Initial ──start()──► client-first  "n,,n=<user>,r=<cnonce>"
//!   SentClientFirst ──step(server-first "r=<cnonce+snonce>,s=<salt>,i=<n>")──►
//!                         client-final "c=biws,r=<nonce>,p=<proof>"
//!   SentClientFinal ──step(server-final "v=<signature>")──► Done
//! ```
//!
//! Every server message is checked: the combined nonce must extend ours, the salt must be
//! valid base64, the iteration count must be in [`MIN_ITERATIONS`]`..=`[`MAX_ITERATIONS`], and
//! the server signature must verify (in constant time) — a server that cannot produce it does
//! not know the password, and the exchange fails even if the broker later says "OK".
//!
//! SASLprep (RFC 4013) is applied only as far as Kafka's own Java client does: the username
//! is escaped (`=` → `=3D`, `,` → `=2C`) and the password is used as its UTF-8 bytes.
//! Credentials created by Kafka's tools are stored the same way, so ASCII and already
//! normalised Unicode credentials interoperate.

use std::fmt;
use std::num::NonZeroU32;

use rand::RngCore;
use ring::{digest, hmac, pbkdf2};

use super::{base64, SaslError, SaslStep};

/// Fewest PBKDF2 iterations accepted from a server (Kafka's own minimum, RFC 7677's
/// recommendation).
pub const MIN_ITERATIONS: u32 = 4096;

/// Most PBKDF2 iterations accepted from a server. Kafka caps stored credentials at 16384; the
/// ceiling here is higher for Kafka-compatible servers yet keeps a hostile server from making
/// the client spend minutes in PBKDF2.
pub const MAX_ITERATIONS: u32 = 100_000;

/// The GS2 header for "no channel binding, no authorization identity"; `biws` is its base64.
const GS2_HEADER: &str = "n,,";

pub use crate::common::sasl::ScramAlgorithm;

/// The ring primitives behind each algorithm.
impl ScramAlgorithm {
    fn hmac(self) -> hmac::Algorithm {
        match self {
            ScramAlgorithm::Sha256 => hmac::HMAC_SHA256,
            ScramAlgorithm::Sha512 => hmac::HMAC_SHA512,
        }
    }

    fn digest(self) -> &'static digest::Algorithm {
        match self {
            ScramAlgorithm::Sha256 => &digest::SHA256,
            ScramAlgorithm::Sha512 => &digest::SHA512,
        }
    }

    fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            ScramAlgorithm::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            ScramAlgorithm::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }

    fn output_len(self) -> usize {
        self.digest().output_len()
    }
}

/// What the client keeps between client-final and server-final.
struct Pending {
    /// `HMAC(SaltedPassword, "Server Key")`, kept to verify `v=` in constant time.
    server_key: hmac::Key,
    auth_message: Vec<u8>,
}

enum State {
    Initial,
    SentClientFirst,
    /// Boxed: ring's HMAC key state is large and only lives for one round trip.
    SentClientFinal(Box<Pending>),
    Done,
    Failed,
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::Initial => "Initial",
            State::SentClientFirst => "SentClientFirst",
            State::SentClientFinal(_) => "SentClientFinal",
            State::Done => "Done",
            State::Failed => "Failed",
        }
    }
}

/// A SCRAM client exchange. `Debug` never shows the password or derived keys.
pub struct Scram {
    algorithm: ScramAlgorithm,
    /// Escaped username (`saslname`).
    username: String,
    password: String,
    client_nonce: String,
    client_first_bare: String,
    state: State,
}

impl fmt::Debug for Scram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scram")
            .field("algorithm", &self.algorithm)
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("client_nonce", &self.client_nonce)
            .field("state", &self.state.name())
            .finish()
    }
}

/// RFC 5802 `saslname`: `=` and `,` are escaped as `=3D` and `=2C`.
pub fn escape_username(username: &str) -> String {
    let mut out = String::with_capacity(username.len());
    for c in username.chars() {
        match c {
            '=' => out.push_str("=3D"),
            ',' => out.push_str("=2C"),
            c => out.push(c),
        }
    }
    out
}

/// RFC 5802 `printable`: `%x21-2B / %x2D-7E` (visible ASCII except `,`).
fn is_valid_nonce(nonce: &[u8]) -> bool {
    !nonce.is_empty()
        && nonce
            .iter()
            .all(|&b| (0x21..=0x7e).contains(&b) && b != b',')
}

impl Scram {
    /// A SCRAM client with a fresh 24-byte random nonce from `rand`'s thread RNG.
    pub fn new(
        algorithm: ScramAlgorithm,
        username: &str,
        password: &str,
    ) -> Result<Self, SaslError> {
        let mut raw = [0u8; 24];
        rand::rng().fill_bytes(&mut raw);
        Self::with_nonce(algorithm, username, password, &base64::encode(&raw))
    }

    /// A SCRAM client with an injected nonce (for tests and deterministic callers). The nonce
    /// must be non-empty visible ASCII without `,` and must be unpredictable in production.
    pub fn with_nonce(
        algorithm: ScramAlgorithm,
        username: &str,
        password: &str,
        nonce: &str,
    ) -> Result<Self, SaslError> {
        let mechanism = algorithm.mechanism_name();
        let bad = |reason: &str| SaslError::InvalidCredentials {
            mechanism,
            reason: reason.to_owned(),
        };
        if username.is_empty() {
            return Err(bad("username is empty"));
        }
        if username.contains('\0') {
            return Err(bad("username contains NUL"));
        }
        if password.is_empty() {
            return Err(bad("password is empty"));
        }
        if !is_valid_nonce(nonce.as_bytes()) {
            return Err(bad("client nonce must be visible ASCII without ','"));
        }
        let username = escape_username(username);
        let client_first_bare = format!("n={username},r={nonce}");
        Ok(Scram {
            algorithm,
            username,
            password: password.to_owned(),
            client_nonce: nonce.to_owned(),
            client_first_bare,
            state: State::Initial,
        })
    }

    /// The hash this exchange uses.
    pub fn algorithm(&self) -> ScramAlgorithm {
        self.algorithm
    }

    /// The client-first message `n,,n=<user>,r=<nonce>`.
    pub fn start(&mut self) -> Vec<u8> {
        self.state = State::SentClientFirst;
        format!("{GS2_HEADER}{}", self.client_first_bare).into_bytes()
    }

    /// Consumes server-first (returns client-final) or server-final (returns `Done`).
    /// Any error leaves the exchange failed: further calls report an unexpected message.
    pub fn step(&mut self, server_msg: &[u8]) -> Result<SaslStep, SaslError> {
        let state = std::mem::replace(&mut self.state, State::Failed);
        match state {
            State::SentClientFirst => {
                let (client_final, next) = self.handle_server_first(server_msg)?;
                self.state = next;
                Ok(SaslStep::Continue(client_final))
            }
            State::SentClientFinal(pending) => {
                self.handle_server_final(server_msg, &pending.server_key, &pending.auth_message)?;
                self.state = State::Done;
                Ok(SaslStep::Done(None))
            }
            State::Initial | State::Done | State::Failed => {
                Err(SaslError::UnexpectedServerMessage {
                    mechanism: self.mechanism(),
                })
            }
        }
    }

    /// Whether the server has proven knowledge of the password.
    pub fn is_complete(&self) -> bool {
        matches!(self.state, State::Done)
    }

    fn mechanism(&self) -> &'static str {
        self.algorithm.mechanism_name()
    }

    fn malformed(&self, reason: &'static str) -> SaslError {
        SaslError::MalformedServerMessage {
            mechanism: self.mechanism(),
            reason,
        }
    }

    fn handle_server_first(&self, msg: &[u8]) -> Result<(Vec<u8>, State), SaslError> {
        let mechanism = self.mechanism();
        let text =
            std::str::from_utf8(msg).map_err(|_| self.malformed("server-first is not UTF-8"))?;
        if let Some(error) = text.strip_prefix("e=") {
            return Err(SaslError::ScramServerError {
                mechanism,
                error: error.to_owned(),
            });
        }
        if text.starts_with("m=") {
            return Err(self.malformed("server requires an unsupported mandatory extension (m=)"));
        }
        let mut attrs = text.split(',');
        let nonce = attrs
            .next()
            .and_then(|a| a.strip_prefix("r="))
            .ok_or_else(|| self.malformed("server-first lacks the nonce (r=)"))?;
        let salt_b64 = attrs
            .next()
            .and_then(|a| a.strip_prefix("s="))
            .ok_or_else(|| self.malformed("server-first lacks the salt (s=)"))?;
        let iterations_text = attrs
            .next()
            .and_then(|a| a.strip_prefix("i="))
            .ok_or_else(|| self.malformed("server-first lacks the iteration count (i=)"))?;
        // Anything after i= is an optional extension, which RFC 5802 says to ignore.

        if !is_valid_nonce(nonce.as_bytes()) {
            return Err(self.malformed("server nonce has characters outside RFC 5802 printable"));
        }
        if nonce.len() <= self.client_nonce.len() || !nonce.starts_with(&self.client_nonce) {
            return Err(SaslError::ScramNonceMismatch { mechanism });
        }
        let salt = match base64::decode(salt_b64.as_bytes()) {
            Some(salt) if !salt.is_empty() => salt,
            _ => return Err(SaslError::ScramInvalidSalt { mechanism }),
        };
        if iterations_text.is_empty()
            || iterations_text.len() > 19
            || !iterations_text.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(self.malformed("iteration count is not a decimal number"));
        }
        let iterations: u64 = iterations_text
            .parse()
            .map_err(|_| self.malformed("iteration count is not a decimal number"))?;
        let accepted = u64::from(MIN_ITERATIONS)..=u64::from(MAX_ITERATIONS);
        let iterations = match NonZeroU32::new(iterations as u32) {
            Some(n) if accepted.contains(&iterations) => n,
            _ => {
                return Err(SaslError::ScramIterationCount {
                    mechanism,
                    iterations,
                    minimum: MIN_ITERATIONS,
                    maximum: MAX_ITERATIONS,
                })
            }
        };

        let alg = self.algorithm;
        let mut salted_password = vec![0u8; alg.output_len()];
        pbkdf2::derive(
            alg.pbkdf2(),
            iterations,
            &salt,
            self.password.as_bytes(),
            &mut salted_password,
        );
        let salted_key = hmac::Key::new(alg.hmac(), &salted_password);
        let client_key = hmac::sign(&salted_key, b"Client Key");
        let stored_key = digest::digest(alg.digest(), client_key.as_ref());
        let server_key_tag = hmac::sign(&salted_key, b"Server Key");
        let server_key = hmac::Key::new(alg.hmac(), server_key_tag.as_ref());

        // "biws" is base64("n,,"): no channel binding.
        let client_final_without_proof =
            format!("c={},r={nonce}", base64::encode(GS2_HEADER.as_bytes()));
        let auth_message = format!(
            "{},{text},{client_final_without_proof}",
            self.client_first_bare
        )
        .into_bytes();
        let client_signature = hmac::sign(
            &hmac::Key::new(alg.hmac(), stored_key.as_ref()),
            &auth_message,
        );
        let proof: Vec<u8> = client_key
            .as_ref()
            .iter()
            .zip(client_signature.as_ref())
            .map(|(k, s)| k ^ s)
            .collect();
        let client_final = format!("{client_final_without_proof},p={}", base64::encode(&proof));
        Ok((
            client_final.into_bytes(),
            State::SentClientFinal(Box::new(Pending {
                server_key,
                auth_message,
            })),
        ))
    }

    fn handle_server_final(
        &self,
        msg: &[u8],
        server_key: &hmac::Key,
        auth_message: &[u8],
    ) -> Result<(), SaslError> {
        let mechanism = self.mechanism();
        let text =
            std::str::from_utf8(msg).map_err(|_| self.malformed("server-final is not UTF-8"))?;
        let first = text.split(',').next().unwrap_or("");
        if let Some(error) = first.strip_prefix("e=") {
            return Err(SaslError::ScramServerError {
                mechanism,
                error: error.to_owned(),
            });
        }
        let signature_b64 = first
            .strip_prefix("v=")
            .ok_or(SaslError::ScramMissingServerSignature { mechanism })?;
        let signature = base64::decode(signature_b64.as_bytes())
            .ok_or_else(|| self.malformed("server signature is not valid base64"))?;
        hmac::verify(server_key, auth_message, &signature)
            .map_err(|_| SaslError::ScramServerSignatureMismatch { mechanism })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn username_escaping() {
        assert_eq!(escape_username("user"), "user");
        assert_eq!(escape_username("a=b,c"), "a=3Db=2Cc");
        assert_eq!(escape_username("=,"), "=3D=2C");
        let mut s = Scram::with_nonce(ScramAlgorithm::Sha256, "a=b,c", "pw", "abc").unwrap();
        assert_eq!(s.start(), b"n,,n=a=3Db=2Cc,r=abc");
    }

    #[test]
    fn rejects_bad_nonce_and_credentials() {
        for nonce in ["", "a,b", "a b", "é"] {
            assert!(Scram::with_nonce(ScramAlgorithm::Sha256, "u", "p", nonce).is_err());
        }
        assert!(Scram::with_nonce(ScramAlgorithm::Sha256, "", "p", "n").is_err());
        assert!(Scram::with_nonce(ScramAlgorithm::Sha256, "u", "", "n").is_err());
    }

    #[test]
    fn random_nonces_differ_and_are_valid() {
        let a = Scram::new(ScramAlgorithm::Sha512, "u", "p").unwrap();
        let b = Scram::new(ScramAlgorithm::Sha512, "u", "p").unwrap();
        assert_ne!(a.client_nonce, b.client_nonce);
        assert!(is_valid_nonce(a.client_nonce.as_bytes()));
        assert_eq!(a.client_nonce.len(), 32);
    }
}
