//! The SASL hook: how a mechanism (PLAIN, SCRAM, ...) plugs into connection setup.
//!
//! The mechanisms themselves are pure step machines (no I/O) living in the transport layer;
//! the client only moves their bytes in SaslAuthenticate requests, so it needs nothing more
//! than this trait.

use std::sync::Arc;

/// One SASL authentication exchange, driven by the client connection:
///
/// ```text
/// SaslHandshake(mechanism) ──► initial_response() ──► SaslAuthenticate ──► server bytes
///        ┌──────────────────────────────────────────────────────────────────┘
///        └► on_server_message(bytes) ── Some(next) ──► SaslAuthenticate ──► ...
///                                    └─ None ──► authenticated
/// ```
pub trait SaslMechanism: Send {
    /// The mechanism name sent in SaslHandshake, e.g. `"PLAIN"` or `"SCRAM-SHA-512"`.
    fn name(&self) -> &str;
    /// The first client message.
    fn initial_response(&mut self) -> Result<Vec<u8>, String>;
    /// Handles the server's answer to the last client message: `Some(next)` to send another
    /// message, `None` when the exchange is complete (e.g. SCRAM's server signature verified).
    /// Errors must not contain secrets.
    fn on_server_message(&mut self, server: &[u8]) -> Result<Option<Vec<u8>>, String>;
}

/// Makes a fresh mechanism for every new connection (mechanisms are stateful).
pub type SaslFactory = Arc<dyn Fn() -> Box<dyn SaslMechanism> + Send + Sync>;
