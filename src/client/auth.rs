//! The SASL hook: how a mechanism (PLAIN, SCRAM, OAUTHBEARER, ...) plugs into connection setup.
//!
//! The mechanisms themselves are pure step machines (no I/O) living in `transport::sasl`; the
//! client only moves their bytes in SaslAuthenticate requests, so it needs nothing more than
//! this trait. The shape mirrors those step machines (`start` / `step` → continue or done), so
//! an adapter is a few lines.
//!
//! ```text
//! SaslHandshake v1 (mechanism_name) ──► start() ──► SaslAuthenticate ──► server bytes
//!        ┌───────────────────────────────────────────────────────────────────┘
//!        └► step(bytes) ── Continue(next) ──► SaslAuthenticate ──► ... (loop)
//!                       ├─ Done(None) ──────► authenticated
//!                       └─ Done(Some(last)) ► SaslAuthenticate(last) ──► authenticated
//! ```

use std::sync::Arc;

use crate::transport::sasl::{SaslError, SaslMechanism, SaslStep};

/// What a mechanism wants after a server message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthStep {
    /// Send these bytes in another SaslAuthenticate round and feed the answer to `step`.
    Continue(Vec<u8>),
    /// The client side is complete; `Some` = final bytes still to send (answer not stepped).
    Done(Option<Vec<u8>>),
}

/// One SASL authentication exchange, driven by the client connection. Single-use: the
/// [`SaslFactory`] makes a fresh one per (re-)authentication.
pub trait SaslAuthenticator: Send {
    /// The mechanism name sent in SaslHandshake, e.g. `"PLAIN"` or `"SCRAM-SHA-512"`.
    fn mechanism_name(&self) -> &str;
    /// The first client message.
    fn start(&mut self) -> Result<Vec<u8>, SaslError>;
    /// Handles the server's answer to the last client message. An error is the *client*
    /// refusing the server (a SCRAM signature that does not verify, a nonce that does not
    /// extend ours, ...); it is reported as such, typed, and never holds a secret.
    fn step(&mut self, server: &[u8]) -> Result<AuthStep, SaslError>;
}

/// Makes a fresh authenticator for every new connection and every re-authentication
/// (mechanisms are stateful and single-use). Fallible because building one may fail (an
/// OAUTHBEARER token callback, say); the error must not contain secrets.
pub type SaslFactory = Arc<dyn Fn() -> Result<Box<dyn SaslAuthenticator>, SaslError> + Send + Sync>;

/// The crate's own mechanisms (PLAIN, SCRAM, OAUTHBEARER) drive the exchange directly.
impl SaslAuthenticator for SaslMechanism {
    fn mechanism_name(&self) -> &str {
        self.name()
    }

    fn start(&mut self) -> Result<Vec<u8>, SaslError> {
        Ok(SaslMechanism::start(self))
    }

    fn step(&mut self, server: &[u8]) -> Result<AuthStep, SaslError> {
        Ok(match SaslMechanism::step(self, server)? {
            SaslStep::Continue(next) => AuthStep::Continue(next),
            SaslStep::Done(last) => AuthStep::Done(last),
        })
    }
}
