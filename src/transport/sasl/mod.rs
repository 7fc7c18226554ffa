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

pub mod oauthbearer;
pub mod plain;
pub mod scram;

pub(crate) use crate::common::base64;
pub use crate::common::sasl::SaslError;
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
