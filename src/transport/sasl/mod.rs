//! SASL mechanisms as pure step machines: no I/O, no clock, randomness passed in.
//!
//! The client layer drives a mechanism over Kafka's `SaslHandshake` (API 17) and
//! `SaslAuthenticate` (API 36) requests:
//!
//! ```text
//!   let mut mech = SaslMechanism::from_config(&sasl_config)?;   // name() goes in SaslHandshake
//!   // (from_config is defined with the configuration, above this layer: transport imports
//!   //  nothing from config or error)
//!   let mut out = mech.start();                                  // first SaslAuthenticate
//!   loop {
//!       let server = send_sasl_authenticate(out)?;               // broker's auth_bytes
//!       match mech.step(&server)? {
//!           SaslStep::Continue(next) => out = next,              // send another round
//!           SaslStep::Done(_) => break,                          // authenticated
//!       }
//!   }
//! ```
//!
//! A broker-side failure arrives as a `SaslAuthenticate` error code, not through [`step`];
//! [`step`] reports what the *client* finds wrong with the server's messages (a SCRAM server
//! that cannot prove it knows the password, an OAUTHBEARER error document, …).
//!
//! Secrets (passwords, salted passwords, keys, tokens) never appear in `Debug` output or in a
//! [`SaslError`].
//!
//! [`step`]: SaslMechanism::step

mod base64;
pub mod oauthbearer;
pub mod plain;
pub mod scram;

pub use oauthbearer::{OAuthBearer, OAuthToken, OAuthTokenCallback};
pub use plain::Plain;
pub use scram::{Scram, ScramAlgorithm};

/// What a mechanism wants after consuming a server message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaslStep {
    /// Send these bytes in another `SaslAuthenticate` round and feed the reply to `step` again.
    Continue(Vec<u8>),
    /// Authentication is complete on the client side. `Some` carries final bytes the client
    /// must still send (none of the mechanisms here need it; kept for mechanisms that do).
    Done(Option<Vec<u8>>),
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
    /// RFC 7628 wants the client to answer with [`OAuthBearer::ABORT_RESPONSE`] before the
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
                oauthbearer::MECHANISM
            }
        }
    }
}

/// One configured SASL mechanism, ready to run one authentication exchange.
///
/// A value is single-use: build a fresh one (fresh nonce, fresh token) per connection.
#[derive(Debug)]
#[non_exhaustive]
pub enum SaslMechanism {
    /// `PLAIN` (RFC 4616).
    Plain(Plain),
    /// `SCRAM-SHA-256` or `SCRAM-SHA-512` (RFC 5802, RFC 7677).
    Scram(Scram),
    /// `OAUTHBEARER` (RFC 7628).
    OAuthBearer(OAuthBearer),
}

impl SaslMechanism {
    /// The IANA mechanism name, as sent in `SaslHandshake`.
    pub fn name(&self) -> &'static str {
        match self {
            SaslMechanism::Plain(_) => plain::MECHANISM,
            SaslMechanism::Scram(s) => s.algorithm().mechanism_name(),
            SaslMechanism::OAuthBearer(_) => oauthbearer::MECHANISM,
        }
    }

    /// The client's initial response (the first `SaslAuthenticate` payload).
    pub fn start(&mut self) -> Vec<u8> {
        match self {
            SaslMechanism::Plain(m) => m.start(),
            SaslMechanism::Scram(m) => m.start(),
            SaslMechanism::OAuthBearer(m) => m.start(),
        }
    }

    /// Consumes one server message (the `auth_bytes` of a `SaslAuthenticate` response).
    pub fn step(&mut self, server_msg: &[u8]) -> Result<SaslStep, SaslError> {
        match self {
            SaslMechanism::Plain(m) => m.step(server_msg),
            SaslMechanism::Scram(m) => m.step(server_msg),
            SaslMechanism::OAuthBearer(m) => m.step(server_msg),
        }
    }

    /// Whether the client side of the exchange has completed successfully.
    pub fn is_complete(&self) -> bool {
        match self {
            SaslMechanism::Plain(m) => m.is_complete(),
            SaslMechanism::Scram(m) => m.is_complete(),
            SaslMechanism::OAuthBearer(m) => m.is_complete(),
        }
    }
}
