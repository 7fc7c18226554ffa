//! The SASL vocabulary that configuration, errors and the transport share: which SCRAM hash
//! ([`ScramAlgorithm`]), an OAUTHBEARER token and its callback ([`OAuthToken`],
//! [`OAuthTokenCallback`]), and what can go wrong in an exchange ([`SaslError`]).
//!
//! The step machines that use them live in `transport::sasl`; these types sit below both the
//! configuration that names them and the transport that runs them.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The `OAUTHBEARER` mechanism name.
pub(crate) const OAUTHBEARER: &str = "OAUTHBEARER";

/// The hash function a SCRAM mechanism is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScramAlgorithm {
    /// `SCRAM-SHA-256`.
    Sha256,
    /// `SCRAM-SHA-512`.
    Sha512,
}

impl ScramAlgorithm {
    /// The IANA mechanism name.
    pub fn mechanism_name(self) -> &'static str {
        match self {
            ScramAlgorithm::Sha256 => "SCRAM-SHA-256",
            ScramAlgorithm::Sha512 => "SCRAM-SHA-512",
        }
    }
}

/// An application callback producing a bearer token (called once per authentication).
/// An `Err` message is reported as [`SaslError::TokenCallback`]; it must not contain secrets.
pub type OAuthTokenCallback = Arc<dyn Fn() -> Result<OAuthToken, String> + Send + Sync>;

/// A bearer token plus optional SASL extensions (RFC 7628 §3.1, e.g. Kafka's
/// `logicalCluster`). `Debug` shows neither the token nor extension values.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthToken {
    pub(crate) value: String,
    pub(crate) extensions: BTreeMap<String, String>,
}

impl fmt::Debug for OAuthToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthToken")
            .field("value", &"<redacted>")
            .field(
                "extension_keys",
                &self.extensions.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl OAuthToken {
    /// A token (the compact JWT or other RFC 6750 `b64token`).
    pub fn new(value: impl Into<String>) -> Self {
        OAuthToken {
            value: value.into(),
            extensions: BTreeMap::new(),
        }
    }

    /// Adds a SASL extension. Keys are letters only; `auth` is reserved. Checked when the
    /// mechanism is built.
    pub fn with_extension(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.extensions.insert(key.into(), value.into());
        self
    }

    /// The token itself. Treat as a secret.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The extensions, sorted by key.
    pub fn extensions(&self) -> &BTreeMap<String, String> {
        &self.extensions
    }
}

/// A problem the client found in the SASL exchange.
///
/// No variant carries a password, token or key; server-supplied text is carried as-is
/// because it names the failure (e.g. SCRAM `e=invalid-proof`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SaslError {
    /// The configured credentials cannot be encoded for this mechanism.
    #[error("{mechanism}: invalid credentials: {reason}")]
    InvalidCredentials {
        /// Mechanism name.
        mechanism: &'static str,
        /// What is wrong (never the secret itself).
        reason: String,
    },
    /// The server's message does not follow the mechanism's grammar.
    #[error("{mechanism}: the client refused the server: malformed server message: {reason}")]
    MalformedServerMessage {
        /// Mechanism name.
        mechanism: &'static str,
        /// What is malformed.
        reason: &'static str,
    },
    /// `step` was called when the mechanism expected no further server message.
    #[error(
        "{mechanism}: the client refused the server: unexpected server message after the \
         exchange finished"
    )]
    UnexpectedServerMessage {
        /// Mechanism name.
        mechanism: &'static str,
    },
    /// SCRAM: the server nonce does not start with (and extend) the client nonce, so the
    /// server-first message does not belong to this exchange (replay or man in the middle).
    #[error(
        "{mechanism}: the client refused the server: its nonce does not extend the client's \
         (a replayed or forged server-first message)"
    )]
    ScramNonceMismatch {
        /// Mechanism name.
        mechanism: &'static str,
    },
    /// SCRAM: the salt is not valid base64 (or is empty).
    #[error("{mechanism}: the client refused the server: invalid salt")]
    ScramInvalidSalt {
        /// Mechanism name.
        mechanism: &'static str,
    },
    /// SCRAM: the iteration count is outside the accepted range. Too few iterations would
    /// let a man in the middle brute-force the password cheaply from the proof; too many
    /// would let a hostile server burn the client's CPU.
    #[error(
        "{mechanism}: the client refused the server: iteration count {iterations} outside the \
         accepted {minimum}..={maximum}"
    )]
    ScramIterationCount {
        /// Mechanism name.
        mechanism: &'static str,
        /// The count the server sent.
        iterations: u64,
        /// Smallest accepted count.
        minimum: u32,
        /// Largest accepted count.
        maximum: u32,
    },
    /// SCRAM: the server answered with `e=<error>`.
    #[error("{mechanism}: server reported error: {error}")]
    ScramServerError {
        /// Mechanism name.
        mechanism: &'static str,
        /// The server's error value (e.g. `invalid-proof`, `unknown-user`).
        error: String,
    },
    /// SCRAM: the server-final message has no `v=` signature.
    #[error(
        "{mechanism}: the client refused the server: its final message lacks the server \
         signature (v=)"
    )]
    ScramMissingServerSignature {
        /// Mechanism name.
        mechanism: &'static str,
    },
    /// SCRAM: the server signature is wrong: the server does not know the password.
    #[error(
        "{mechanism}: the client refused the server: its signature does not verify, so it \
         does not know the password (not the broker configured, or a man in the middle)"
    )]
    ScramServerSignatureMismatch {
        /// Mechanism name.
        mechanism: &'static str,
    },
    /// OAUTHBEARER: the application's token callback failed.
    #[error("OAUTHBEARER: token callback failed: {message}")]
    TokenCallback {
        /// The callback's message.
        message: String,
    },
    /// OAUTHBEARER: the server rejected the token with an RFC 7628 §3.2.2 error document.
    ///
    /// RFC 7628 wants the client to answer with the mechanism's abort response (`OAuthBearer::ABORT_RESPONSE` in
    /// `transport::sasl`) before the
    /// server fails the exchange; a client may instead close the connection.
    #[error(
        "OAUTHBEARER: server rejected the token: status={}, scope={}, openid-configuration={}",
        .status.as_deref().unwrap_or("-"),
        .scope.as_deref().unwrap_or("-"),
        .openid_configuration.as_deref().unwrap_or("-")
    )]
    OAuthBearerServerError {
        /// `status` member (e.g. `invalid_token`), if present.
        status: Option<String>,
        /// `scope` member, if present.
        scope: Option<String>,
        /// `openid-configuration` member, if present.
        openid_configuration: Option<String>,
    },
}

impl SaslError {
    /// True when the client refused the server's messages (they failed the mechanism's
    /// checks), as opposed to failing to produce its own credentials or the server reporting
    /// an error in-band.
    pub fn is_server_refusal(&self) -> bool {
        matches!(
            self,
            SaslError::MalformedServerMessage { .. }
                | SaslError::UnexpectedServerMessage { .. }
                | SaslError::ScramNonceMismatch { .. }
                | SaslError::ScramInvalidSalt { .. }
                | SaslError::ScramIterationCount { .. }
                | SaslError::ScramMissingServerSignature { .. }
                | SaslError::ScramServerSignatureMismatch { .. }
        )
    }

    /// The SASL mechanism name this error arose in.
    pub fn mechanism(&self) -> &'static str {
        match self {
            SaslError::InvalidCredentials { mechanism, .. }
            | SaslError::MalformedServerMessage { mechanism, .. }
            | SaslError::UnexpectedServerMessage { mechanism }
            | SaslError::ScramNonceMismatch { mechanism }
            | SaslError::ScramInvalidSalt { mechanism }
            | SaslError::ScramIterationCount { mechanism, .. }
            | SaslError::ScramServerError { mechanism, .. }
            | SaslError::ScramMissingServerSignature { mechanism }
            | SaslError::ScramServerSignatureMismatch { mechanism } => mechanism,
            SaslError::TokenCallback { .. } | SaslError::OAuthBearerServerError { .. } => {
                OAUTHBEARER
            }
        }
    }
}
