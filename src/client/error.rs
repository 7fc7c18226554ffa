//! Client errors: transport failures plus what can go wrong at the Kafka message level.
//!
//! Kept small on purpose; the crate-level `error::Error` maps these when it lands.

use crate::protocol::{BrokerErrorKind, DecodeError, EncodeError};
use crate::transport::sasl::SaslError;
use crate::transport::TransportError;

/// What went wrong talking to a broker.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The connection failed (connect, TLS, I/O, timeout, EOF, oversized frame). The connection
    /// is broken and has been (or must be) discarded.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// A request could not be encoded (e.g. a field this version cannot carry).
    #[error("cannot encode {api} v{version} for {broker}: {source}")]
    Encode {
        /// The API name.
        api: &'static str,
        /// The request version.
        version: i16,
        /// The broker address.
        broker: String,
        /// The encoder's error.
        #[source]
        source: EncodeError,
    },
    /// A response could not be decoded. The connection is dropped: the stream may be out of
    /// step with what the client thinks it sent.
    #[error("cannot decode {api} v{version} response from {broker}: {source}")]
    Decode {
        /// The API name.
        api: &'static str,
        /// The request version.
        version: i16,
        /// The broker address.
        broker: String,
        /// The decoder's error.
        #[source]
        source: DecodeError,
    },
    /// A response carried another correlation id than the request it should answer. The
    /// connection is dropped.
    #[error("{api} response from {broker} has correlation id {got}, expected {expected}; connection dropped")]
    CorrelationMismatch {
        /// The API name.
        api: &'static str,
        /// The broker address.
        broker: String,
        /// The correlation id sent.
        expected: i32,
        /// The correlation id received.
        got: i32,
    },
    /// The broker answered with an error code.
    #[error("{api} to {broker} failed: {kind}{}", message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default())]
    Broker {
        /// The API name.
        api: &'static str,
        /// The broker address.
        broker: String,
        /// The error code.
        kind: BrokerErrorKind,
        /// The broker's error message, if any.
        message: Option<String>,
    },
    /// No version of this API is supported by both the broker and this library.
    #[error("{broker} supports no version of {api} this library speaks (broker {broker_range:?}, ours {ours:?})")]
    UnsupportedApi {
        /// The API name.
        api: &'static str,
        /// The broker address.
        broker: String,
        /// The broker's range, `None` when the broker does not list the API at all.
        broker_range: Option<(i16, i16)>,
        /// This library's range.
        ours: (i16, i16),
    },
    /// The broker refused SASL authentication (a `SaslHandshake` / `SaslAuthenticate` error
    /// code), or does not offer what the mechanism needs.
    #[error("SASL authentication with {broker} failed: {reason}")]
    Sasl {
        /// The broker address.
        broker: String,
        /// The broker's answer. Never holds secrets.
        reason: String,
    },
    /// This client refused the SASL exchange: the server's messages failed the mechanism's
    /// checks (a SCRAM server signature that does not verify, a server nonce that does not
    /// extend the client's, an iteration count out of bounds, ...), or the client could not
    /// produce its credentials (an OAUTHBEARER token callback failed).
    #[error("SASL with {broker}: {source}")]
    SaslRefused {
        /// The broker address.
        broker: String,
        /// What the client found wrong; typed, never holds secrets.
        #[source]
        source: SaslError,
    },
    /// None of the bootstrap servers (or brokers) could be reached.
    #[error("no broker reachable: {}", attempts.join("; "))]
    NoBrokerAvailable {
        /// One line per failed attempt.
        attempts: Vec<String>,
    },
    /// A deadline passed between steps (e.g. before a retry could be made).
    #[error("{op} timed out")]
    Timeout {
        /// What was being done.
        op: String,
    },
    /// The broker's answer does not make sense (e.g. a coordinator the metadata does not know).
    #[error("unexpected response from {broker}: {reason}")]
    Protocol {
        /// The broker address.
        broker: String,
        /// What was wrong.
        reason: String,
    },
}

impl ClientError {
    /// True when the error came from a deadline passing.
    pub fn is_timeout(&self) -> bool {
        match self {
            ClientError::Transport(t) => t.is_timeout(),
            ClientError::Timeout { .. } => true,
            _ => false,
        }
    }

    /// Whether trying again (on a new connection, or at another broker) may succeed. A
    /// refusal is not retriable: rejected or refused credentials, certificates, a peer that
    /// does not speak Kafka (or TLS) the way it is configured, an API no version of which both
    /// sides speak, and broker codes Kafka marks non-retriable give the same answer again.
    pub fn is_retriable(&self) -> bool {
        match self {
            ClientError::Transport(t) => t.is_retriable(),
            ClientError::Broker { kind, .. } => kind.is_retriable(),
            ClientError::NoBrokerAvailable { .. } | ClientError::Timeout { .. } => true,
            ClientError::Encode { .. }
            | ClientError::Decode { .. }
            | ClientError::CorrelationMismatch { .. }
            | ClientError::UnsupportedApi { .. }
            | ClientError::Sasl { .. }
            | ClientError::SaslRefused { .. }
            | ClientError::Protocol { .. } => false,
        }
    }

    /// The broker error code, if the broker answered with one.
    pub fn broker_error(&self) -> Option<BrokerErrorKind> {
        match self {
            ClientError::Broker { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}
