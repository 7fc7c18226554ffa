//! `OAUTHBEARER` (RFC 7628) client initial response, as Kafka's Java client sends it:
//!
//! ```text
//!   n,,\x01auth=Bearer <token>\x01[<key>=<value>\x01]*\x01
//! ```
//!
//! The token comes from an application callback (fetching and refreshing tokens is the
//! application's business: it knows its identity provider). A broker that accepts the token
//! answers with empty bytes; one that rejects it sends an RFC 7628 §3.2.2 JSON error document,
//! which [`OAuthBearer::step`] turns into [`SaslError::OAuthBearerServerError`].

use std::fmt;

use super::{SaslError, SaslStep};
pub use crate::common::sasl::{OAuthToken, OAuthTokenCallback};

/// The mechanism name.
pub const MECHANISM: &str = crate::common::sasl::OAUTHBEARER;

/// RFC 7628 key/value separator.
const KVSEP: u8 = 0x01;

/// RFC 6750 `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Initial,
    Sent,
    Done,
    Failed,
}

/// OAUTHBEARER client state. `Debug` never shows the token.
pub struct OAuthBearer {
    token: OAuthToken,
    state: State,
}

impl fmt::Debug for OAuthBearer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthBearer")
            .field("token", &self.token)
            .field("state", &self.state)
            .finish()
    }
}

impl OAuthBearer {
    /// The single byte a client sends after a server error document (RFC 7628 §3.2.3), so
    /// the server can complete the failed exchange.
    pub const ABORT_RESPONSE: &'static [u8] = &[KVSEP];

    /// Calls the application's callback and validates the token it returns.
    pub fn from_callback(callback: &OAuthTokenCallback) -> Result<Self, SaslError> {
        let token = callback().map_err(|message| SaslError::TokenCallback { message })?;
        Self::new(token)
    }

    /// Validates `token` (RFC 6750 `b64token`) and its extensions (letters-only keys, not
    /// `auth`; values of visible ASCII, space, tab, CR, LF).
    pub fn new(token: OAuthToken) -> Result<Self, SaslError> {
        let bad = |reason: String| SaslError::InvalidCredentials {
            mechanism: MECHANISM,
            reason,
        };
        if !is_b64token(&token.value) {
            return Err(bad("token is not an RFC 6750 b64token".to_owned()));
        }
        for (key, value) in &token.extensions {
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphabetic()) {
                return Err(bad(format!("extension key {key:?} must be letters only")));
            }
            if key == "auth" {
                return Err(bad("extension key \"auth\" is reserved".to_owned()));
            }
            let value_ok = value
                .bytes()
                .all(|b| (0x21..=0x7e).contains(&b) || b" \t\r\n".contains(&b));
            if !value_ok {
                return Err(bad(format!("extension {key:?} has a disallowed character")));
            }
        }
        Ok(OAuthBearer {
            token,
            state: State::Initial,
        })
    }

    /// The client initial response.
    pub fn start(&mut self) -> Vec<u8> {
        self.state = State::Sent;
        let mut out = Vec::with_capacity(32 + self.token.value.len());
        out.extend_from_slice(b"n,,");
        out.push(KVSEP);
        out.extend_from_slice(b"auth=Bearer ");
        out.extend_from_slice(self.token.value.as_bytes());
        out.push(KVSEP);
        for (key, value) in &self.token.extensions {
            out.extend_from_slice(key.as_bytes());
            out.push(b'=');
            out.extend_from_slice(value.as_bytes());
            out.push(KVSEP);
        }
        out.push(KVSEP);
        out
    }

    /// Empty server bytes mean success; anything else is the server's error document.
    pub fn step(&mut self, server_msg: &[u8]) -> Result<SaslStep, SaslError> {
        if self.state != State::Sent {
            return Err(SaslError::UnexpectedServerMessage {
                mechanism: MECHANISM,
            });
        }
        if server_msg.is_empty() {
            self.state = State::Done;
            return Ok(SaslStep::Done(None));
        }
        self.state = State::Failed;
        let fields = crate::common::json::string_members(
            server_msg,
            &["status", "scope", "openid-configuration"],
        );
        let [status, scope, openid_configuration] = fields;
        Err(SaslError::OAuthBearerServerError {
            status,
            scope,
            openid_configuration,
        })
    }

    /// Whether the server accepted the token.
    pub fn is_complete(&self) -> bool {
        self.state == State::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn initial_response_layout() {
        let mut m = OAuthBearer::new(OAuthToken::new("eyJ.abc-_.sig")).unwrap();
        assert_eq!(m.start(), b"n,,\x01auth=Bearer eyJ.abc-_.sig\x01\x01");
        let tok = OAuthToken::new("t0k")
            .with_extension("traceId", "123")
            .with_extension("b", "x y");
        let mut m = OAuthBearer::new(tok).unwrap();
        assert_eq!(
            m.start(),
            b"n,,\x01auth=Bearer t0k\x01b=x y\x01traceId=123\x01\x01"
        );
        assert_eq!(m.step(b"").unwrap(), SaslStep::Done(None));
        assert!(m.is_complete());
    }

    #[test]
    fn rejects_invalid_tokens_and_extensions() {
        for t in ["", "a b", "a\x01b", "==", "tok\n"] {
            assert!(OAuthBearer::new(OAuthToken::new(t)).is_err(), "{t:?}");
        }
        assert!(OAuthBearer::new(OAuthToken::new("abc==")).is_ok());
        for (k, v) in [("auth", "x"), ("a1", "x"), ("", "x"), ("k", "a\x01b")] {
            assert!(OAuthBearer::new(OAuthToken::new("t").with_extension(k, v)).is_err());
        }
    }

    #[test]
    fn callback_errors_are_typed() {
        let cb: OAuthTokenCallback = Arc::new(|| Err("idp unreachable".to_owned()));
        match OAuthBearer::from_callback(&cb) {
            Err(SaslError::TokenCallback { message }) => assert_eq!(message, "idp unreachable"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn server_error_document_is_typed() {
        let mut m = OAuthBearer::new(OAuthToken::new("t")).unwrap();
        m.start();
        let err = m
            .step(br#"{"status":"invalid_token","scope":"kafka"}"#)
            .unwrap_err();
        assert_eq!(
            err,
            SaslError::OAuthBearerServerError {
                status: Some("invalid_token".into()),
                scope: Some("kafka".into()),
                openid_configuration: None
            }
        );
        assert!(!m.is_complete());
        assert!(matches!(
            m.step(b""),
            Err(SaslError::UnexpectedServerMessage { .. })
        ));
    }
}
