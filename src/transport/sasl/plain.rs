//! `PLAIN` (RFC 4616): one message, `[authzid] NUL authcid NUL passwd`.
//!
//! PLAIN sends the password in the clear inside the Kafka frame; use it only over TLS
//! (`SASL_SSL`) outside of tests.

use std::fmt;

use super::{SaslError, SaslStep};

/// The mechanism name.
pub const MECHANISM: &str = "PLAIN";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Initial,
    Sent,
    Done,
}

/// PLAIN client state. `Debug` never shows the password.
pub struct Plain {
    username: String,
    password: String,
    state: State,
}

impl fmt::Debug for Plain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plain")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("state", &self.state)
            .finish()
    }
}

impl Plain {
    /// A PLAIN client for `username` / `password` (authorization identity left empty, as Kafka
    /// does). Both must be non-empty and free of NUL, which is the field separator.
    pub fn new(username: &str, password: &str) -> Result<Self, SaslError> {
        let bad = |reason: &str| SaslError::InvalidCredentials {
            mechanism: MECHANISM,
            reason: reason.to_owned(),
        };
        if username.is_empty() {
            return Err(bad("username is empty"));
        }
        if password.is_empty() {
            return Err(bad("password is empty"));
        }
        if username.contains('\0') {
            return Err(bad("username contains NUL"));
        }
        if password.contains('\0') {
            return Err(bad("password contains NUL"));
        }
        Ok(Plain {
            username: username.to_owned(),
            password: password.to_owned(),
            state: State::Initial,
        })
    }

    /// The single client message: `NUL username NUL password`.
    pub fn start(&mut self) -> Vec<u8> {
        self.state = State::Sent;
        let mut out = Vec::with_capacity(2 + self.username.len() + self.password.len());
        out.push(0);
        out.extend_from_slice(self.username.as_bytes());
        out.push(0);
        out.extend_from_slice(self.password.as_bytes());
        out
    }

    /// PLAIN has no server data: an empty reply completes the exchange.
    pub fn step(&mut self, server_msg: &[u8]) -> Result<SaslStep, SaslError> {
        if self.state != State::Sent {
            return Err(SaslError::UnexpectedServerMessage {
                mechanism: MECHANISM,
            });
        }
        if !server_msg.is_empty() {
            return Err(SaslError::MalformedServerMessage {
                mechanism: MECHANISM,
                reason: "PLAIN server sent data; RFC 4616 defines none",
            });
        }
        self.state = State::Done;
        Ok(SaslStep::Done(None))
    }

    /// Whether the exchange has completed.
    pub fn is_complete(&self) -> bool {
        self.state == State::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_layout() {
        let mut p = Plain::new("alice", "s3cr3t").unwrap();
        assert_eq!(p.start(), b"\0alice\0s3cr3t");
        assert!(!p.is_complete());
        assert_eq!(p.step(b"").unwrap(), SaslStep::Done(None));
        assert!(p.is_complete());
        assert!(matches!(
            p.step(b""),
            Err(SaslError::UnexpectedServerMessage { .. })
        ));
    }

    #[test]
    fn rejects_bad_credentials_and_server_data() {
        assert!(Plain::new("", "x").is_err());
        assert!(Plain::new("x", "").is_err());
        assert!(Plain::new("a\0b", "x").is_err());
        assert!(Plain::new("a", "x\0y").is_err());
        let mut p = Plain::new("a", "b").unwrap();
        assert!(matches!(
            p.step(b""),
            Err(SaslError::UnexpectedServerMessage { .. })
        ));
        p.start();
        assert!(matches!(
            p.step(b"surprise"),
            Err(SaslError::MalformedServerMessage { .. })
        ));
    }
}
