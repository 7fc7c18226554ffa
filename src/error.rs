//! The crate's error type, [`Error`], and [`Result`].
//!
//! Every variant carries the context needed to act on it (which broker, which operation,
//! which configuration field) and none carries a secret: passwords, tokens and private keys
//! never reach an error message.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::common::{ConsumerError, SaslError, SerdeError};
use crate::protocol::{BrokerErrorKind, DecodeError, EncodeError};

/// `std::result::Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Renders an optional broker address as `" (broker host:port)"` or nothing.
fn at(broker: &Option<String>) -> String {
    match broker {
        Some(b) => format!(" (broker {b})"),
        None => String::new(),
    }
}

/// Where a broker error code was seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BrokerErrorContext {
    /// The API whose response carried the code, e.g. `"StreamsGroupHeartbeat"`.
    pub api: Option<&'static str>,
    /// The group concerned, if any.
    pub group: Option<String>,
    /// The broker that answered, if known.
    pub broker: Option<String>,
}

impl BrokerErrorContext {
    /// Context naming the API.
    pub fn api(api: &'static str) -> Self {
        BrokerErrorContext {
            api: Some(api),
            ..Self::default()
        }
    }

    /// Adds the group id.
    pub fn with_group(mut self, group: impl Into<String>) -> Self {
        self.group = Some(group.into());
        self
    }

    /// Adds the broker address.
    pub fn with_broker(mut self, broker: impl Into<String>) -> Self {
        self.broker = Some(broker.into());
        self
    }
}

impl fmt::Display for BrokerErrorContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = " (";
        for (label, value) in [
            ("api", self.api),
            ("group", self.group.as_deref()),
            ("broker", self.broker.as_deref()),
        ] {
            if let Some(v) = value {
                write!(f, "{sep}{label} {v}")?;
                sep = ", ";
            }
        }
        if sep == ", " {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// A TLS setup problem found while building the client's TLS configuration (before any
/// connection). Each variant names what was being loaded (`origin`, e.g.
/// `CA certificate file /etc/kafka/ca.pem`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TlsProblem {
    /// A configured file does not exist.
    #[error("{origin}: file {} not found", .path.display())]
    FileNotFound {
        /// What the file was for.
        origin: String,
        /// The path.
        path: PathBuf,
    },
    /// A configured file exists but cannot be read.
    #[error("{origin}: cannot read {}: {reason}", .path.display())]
    FileUnreadable {
        /// What the file was for.
        origin: String,
        /// The path.
        path: PathBuf,
        /// The I/O error text.
        reason: String,
    },
    /// PEM input that is not well-formed.
    #[error("{origin}: malformed PEM: {reason}")]
    InvalidPem {
        /// What was being loaded.
        origin: String,
        /// What is wrong.
        reason: String,
    },
    /// PEM input without any `CERTIFICATE` section (or an empty DER list).
    #[error("{origin}: no certificate found")]
    NoCertificate {
        /// What was being loaded.
        origin: String,
    },
    /// A certificate that cannot be used (e.g. not a valid X.509 trust anchor).
    #[error("{origin}: invalid certificate: {reason}")]
    InvalidCertificate {
        /// What was being loaded.
        origin: String,
        /// What is wrong.
        reason: String,
    },
    /// PEM input without a private key section.
    #[error(
        "{origin}: no private key found (expected PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)"
    )]
    NoPrivateKey {
        /// What was being loaded.
        origin: String,
    },
    /// A passphrase-protected key; unsupported.
    #[error(
        "{origin}: private key is encrypted; provide an unencrypted PKCS#8, PKCS#1 or SEC1 key"
    )]
    EncryptedPrivateKey {
        /// What was being loaded.
        origin: String,
    },
    /// Key bytes that are not a usable PKCS#8, PKCS#1 or SEC1 key.
    #[error("{origin}: private key unreadable: {reason}")]
    UnreadablePrivateKey {
        /// What was being loaded.
        origin: String,
        /// What is wrong (never key material).
        reason: String,
    },
    /// The client certificate and key were refused together (e.g. they do not match).
    #[error("client certificate/key rejected: {reason}")]
    ClientCertificate {
        /// What is wrong.
        reason: String,
    },
    /// No root certificates to trust.
    #[error("no trusted root certificates: {reason}")]
    NoTrustAnchors {
        /// Why none were found.
        reason: String,
    },
    /// A server name that is neither a DNS name nor an IP address.
    #[error("invalid TLS server name {name:?}")]
    InvalidServerName {
        /// The name.
        name: String,
    },
}

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A socket operation failed.
    #[error("I/O error during {operation}{}: {source}", at(.broker))]
    Io {
        /// What was being done, e.g. `"connect"`, `"read"`.
        operation: &'static str,
        /// The broker address, if known.
        broker: Option<String>,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The TLS configuration could not be built (bad files, keys, names, roots).
    #[error("TLS setup failed: {0}")]
    TlsSetup(#[from] TlsProblem),
    /// The TLS handshake or session failed (untrusted, expired or mismatched certificate, …).
    #[error("TLS error{}: {source}", at(.broker))]
    Tls {
        /// The broker address, if known.
        broker: Option<String>,
        /// rustls's error, which names the certificate problem.
        #[source]
        source: rustls::Error,
    },
    /// The client refused the SASL exchange (e.g. a SCRAM server that cannot prove it knows
    /// the password, see [`SaslError::is_server_refusal`]) or could not produce its
    /// credentials. Not the broker rejecting us: that is [`Error::SaslAuthentication`].
    #[error("SASL authentication failed on the client side{}: {source}", at(.broker))]
    Sasl {
        /// Mechanism name.
        mechanism: &'static str,
        /// The broker address, if known.
        broker: Option<String>,
        /// What the client found wrong.
        #[source]
        source: SaslError,
    },
    /// The broker rejected authentication (`SaslHandshake`/`SaslAuthenticate` error).
    #[error("SASL authentication with {mechanism} rejected by the broker: {message}")]
    SaslAuthentication {
        /// Mechanism name.
        mechanism: String,
        /// The broker's error message.
        message: String,
    },
    /// A response carried a Kafka error code.
    #[error("broker error {kind}{context}{}", .message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker {
        /// The typed code.
        kind: BrokerErrorKind,
        /// The raw code.
        code: i16,
        /// The broker's error message, if any.
        message: Option<String>,
        /// Where it was seen.
        context: BrokerErrorContext,
    },
    /// An operation did not finish within its limit.
    #[error("{operation} timed out after {limit:?}")]
    Timeout {
        /// What timed out, e.g. `"connect to broker-1:9092"`.
        operation: String,
        /// The limit that expired.
        limit: Duration,
    },
    /// A broker's bytes could not be decoded.
    #[error("decode error: {0}")]
    Decode(#[from] DecodeError),
    /// A request could not be encoded.
    #[error("encode error: {0}")]
    Encode(#[from] EncodeError),
    /// The broker broke the protocol in a way the decoder cannot see (e.g. a correlation id
    /// that matches no request).
    #[error("protocol violation{}: {message}", at(.broker))]
    Protocol {
        /// The broker address, if known.
        broker: Option<String>,
        /// What happened.
        message: String,
    },
    /// A configuration value is invalid.
    #[error("invalid configuration for {field}: {reason}")]
    InvalidConfiguration {
        /// The configuration field.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// Something the broker or this library does not support (e.g. an API version range with
    /// no overlap, a SASL mechanism the broker does not enable).
    #[error("unsupported: {what}")]
    Unsupported {
        /// What is unsupported.
        what: String,
    },
    /// The connection to a broker was lost.
    #[error("disconnected{}: {reason}", at(.broker))]
    Disconnected {
        /// The broker address, if known.
        broker: Option<String>,
        /// Why, e.g. `"connection reset by peer"`.
        reason: String,
    },
    /// The client or session was closed by the application; no further calls are possible.
    #[error("closed")]
    Closed,
    /// The Streams group member stopped (a fatal broker error such as `GROUP_ID_NOT_FOUND` or
    /// `STREAMS_INVALID_TOPOLOGY`, an invalid assignment, static membership on a broker that
    /// cannot do it), or refused a command.
    #[error(transparent)]
    Membership(#[from] crate::streams::MembershipError),
    /// Record bytes a serde could not read (e.g. a `Long` value that is not 8 bytes): the
    /// serde and, when known, the topic are named.
    #[error("cannot deserialize: {0}")]
    Serde(#[from] SerdeError),
    /// An input record's key or value could not be deserialized: where it is and what the
    /// serde said. The processing runtime's `default.deserialization.exception.handler`
    /// decides: `LogAndFail` (the default) stops processing before the record is committed,
    /// `LogAndContinue` logs it, counts it as dropped and goes on past it.
    #[error(
        "cannot deserialize the {part} of the record at {topic}-{partition} offset {offset}: \
         {message}; check that the serde matches what the writer used, or set \
         default.deserialization.exception.handler=LogAndContinue to skip such records"
    )]
    Deserialization {
        /// The record's topic.
        topic: String,
        /// The record's partition.
        partition: i32,
        /// The record's offset.
        offset: i64,
        /// `"key"` or `"value"`.
        part: &'static str,
        /// What the serde found wrong with the bytes.
        message: String,
    },
    /// The fetcher cannot go on reading a partition: its log was truncated under the
    /// position (an unclean leader election) or its data holds no complete batch.
    #[error(transparent)]
    Consumer(#[from] ConsumerError),
}

/// Errors are cloned so that a stopped session can report its error to every caller, the
/// subscriber and `state()` alike. An `io::Error` is not `Clone`; its copy keeps the kind and
/// the message.
impl Clone for Error {
    fn clone(&self) -> Self {
        match self {
            Error::Io {
                operation,
                broker,
                source,
            } => Error::Io {
                operation,
                broker: broker.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
            Error::TlsSetup(p) => Error::TlsSetup(p.clone()),
            Error::Tls { broker, source } => Error::Tls {
                broker: broker.clone(),
                source: source.clone(),
            },
            Error::Sasl {
                mechanism,
                broker,
                source,
            } => Error::Sasl {
                mechanism,
                broker: broker.clone(),
                source: source.clone(),
            },
            Error::SaslAuthentication { mechanism, message } => Error::SaslAuthentication {
                mechanism: mechanism.clone(),
                message: message.clone(),
            },
            Error::Broker {
                kind,
                code,
                message,
                context,
            } => Error::Broker {
                kind: *kind,
                code: *code,
                message: message.clone(),
                context: context.clone(),
            },
            Error::Timeout { operation, limit } => Error::Timeout {
                operation: operation.clone(),
                limit: *limit,
            },
            Error::Decode(e) => Error::Decode(e.clone()),
            Error::Encode(e) => Error::Encode(e.clone()),
            Error::Protocol { broker, message } => Error::Protocol {
                broker: broker.clone(),
                message: message.clone(),
            },
            Error::InvalidConfiguration { field, reason } => Error::InvalidConfiguration {
                field,
                reason: reason.clone(),
            },
            Error::Unsupported { what } => Error::Unsupported { what: what.clone() },
            Error::Disconnected { broker, reason } => Error::Disconnected {
                broker: broker.clone(),
                reason: reason.clone(),
            },
            Error::Closed => Error::Closed,
            Error::Membership(e) => Error::Membership(e.clone()),
            Error::Serde(e) => Error::Serde(e.clone()),
            Error::Deserialization {
                topic,
                partition,
                offset,
                part,
                message,
            } => Error::Deserialization {
                topic: topic.clone(),
                partition: *partition,
                offset: *offset,
                part,
                message: message.clone(),
            },
            Error::Consumer(e) => Error::Consumer(e.clone()),
        }
    }
}

impl Error {
    /// The error a stopped session keeps reporting, shared between every caller.
    pub(crate) fn from_shared(e: &std::sync::Arc<Error>) -> Error {
        (**e).clone()
    }

    /// The Kafka error code kind, for [`Error::Broker`].
    pub fn broker_error_kind(&self) -> Option<BrokerErrorKind> {
        match self {
            Error::Broker { kind, .. } => Some(*kind),
            Error::Membership(crate::streams::MembershipError::Broker { error, .. }) => {
                Some(*error)
            }
            _ => None,
        }
    }

    /// Whether retrying the operation (possibly on a new connection) may succeed: broker
    /// codes Kafka marks retriable, I/O failures, disconnects and timeouts. Configuration,
    /// TLS, authentication and decode errors are not: repeating them gives the same answer.
    pub fn is_retriable(&self) -> bool {
        match self {
            Error::Broker { kind, .. } => kind.is_retriable(),
            Error::Io { .. } | Error::Disconnected { .. } | Error::Timeout { .. } => true,
            Error::TlsSetup(_)
            | Error::Tls { .. }
            | Error::Sasl { .. }
            | Error::SaslAuthentication { .. }
            | Error::Decode(_)
            | Error::Encode(_)
            | Error::Protocol { .. }
            | Error::InvalidConfiguration { .. }
            | Error::Unsupported { .. }
            | Error::Membership(_)
            | Error::Serde(_)
            | Error::Deserialization { .. }
            | Error::Consumer(_)
            | Error::Closed => false,
        }
    }

    /// A broker error from a response's code, message and context.
    pub fn broker(code: i16, message: Option<String>, context: BrokerErrorContext) -> Self {
        Error::Broker {
            kind: BrokerErrorKind::from_code(code),
            code,
            message,
            context,
        }
    }

    /// An I/O error during `operation`.
    pub fn io(operation: &'static str, broker: Option<String>, source: std::io::Error) -> Self {
        Error::Io {
            operation,
            broker,
            source,
        }
    }
}

impl From<SaslError> for Error {
    fn from(source: SaslError) -> Self {
        Error::Sasl {
            mechanism: source.mechanism(),
            broker: None,
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_errors_are_typed_and_classified() {
        let e = Error::broker(
            16,
            Some("not ready".into()),
            BrokerErrorContext::api("FindCoordinator").with_group("g1"),
        );
        assert_eq!(e.broker_error_kind(), Some(BrokerErrorKind::NotCoordinator));
        assert!(e.is_retriable());
        let text = e.to_string();
        assert!(text.contains("api FindCoordinator, group g1"), "{text}");
        assert!(text.ends_with(": not ready"), "{text}");

        let fenced = Error::broker(30, None, BrokerErrorContext::default());
        assert_eq!(
            fenced.broker_error_kind(),
            Some(BrokerErrorKind::GroupAuthorizationFailed)
        );
        assert!(!fenced.is_retriable());
        let unknown = Error::broker(9999, None, BrokerErrorContext::default());
        assert_eq!(
            unknown.broker_error_kind(),
            Some(BrokerErrorKind::Unknown(9999))
        );
    }

    #[test]
    fn transport_errors_retriable_config_errors_not() {
        let io = Error::io(
            "connect",
            Some("b:9092".into()),
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused"),
        );
        assert!(io.is_retriable());
        assert_eq!(
            io.to_string(),
            "I/O error during connect (broker b:9092): refused"
        );
        assert!(Error::Timeout {
            operation: "x".into(),
            limit: Duration::from_secs(1)
        }
        .is_retriable());
        assert!(!Error::InvalidConfiguration {
            field: "f",
            reason: "r".into()
        }
        .is_retriable());
        assert!(!Error::Closed.is_retriable());
        assert_eq!(io.broker_error_kind(), None);
        let sasl: Error = SaslError::ScramNonceMismatch {
            mechanism: "SCRAM-SHA-256",
        }
        .into();
        assert!(matches!(
            sasl,
            Error::Sasl {
                mechanism: "SCRAM-SHA-256",
                ..
            }
        ));
        assert!(!sasl.is_retriable());
    }
}
