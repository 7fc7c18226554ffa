//! Transport errors: what can go wrong moving frames over TCP/TLS.
//!
//! Deliberately small. The crate-level `error::Error` (another layer) maps these; keeping the
//! transport's own enum lets the transport be tested without the rest of the crate.

use std::io;
use std::time::Duration;

/// What [`TransportError::NotTls`] says after the peer's address.
pub const NOT_TLS: &str = "closed the connection during the TLS handshake before sending \
    anything: the listener is probably not TLS (PLAINTEXT or SASL_PLAINTEXT); check \
    security.protocol (SSL / SASL_SSL need a TLS listener) and the port";

/// What went wrong in the transport. Every variant except [`TransportError::Resolve`] and
/// [`TransportError::Connect`] leaves the connection broken: the caller must discard it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The broker address could not be parsed or resolved to any socket address.
    #[error("cannot resolve broker address {addr}: {reason}")]
    Resolve {
        /// The address as given (`host:port`).
        addr: String,
        /// Why resolution failed.
        reason: String,
    },
    /// No resolved address accepted a TCP connection within the connect timeout.
    #[error("cannot connect to {addr}: {reason}")]
    Connect {
        /// The address as given (`host:port`).
        addr: String,
        /// The failure of the last address tried (refused, timed out, ...).
        reason: String,
    },
    /// A deadline passed before the operation finished.
    #[error("{op} to {peer} timed out after {elapsed:?}")]
    Timeout {
        /// What was being done: "connect", "TLS handshake", "send", "receive".
        op: &'static str,
        /// The peer address.
        peer: String,
        /// How long the operation ran before giving up.
        elapsed: Duration,
    },
    /// The peer closed the connection. `mid_frame` tells whether part of a frame had arrived.
    #[error("{peer} closed the connection{}", if *mid_frame { " in the middle of a frame" } else { "" })]
    Eof {
        /// The peer address.
        peer: String,
        /// True when some bytes of an incomplete frame had been received.
        mid_frame: bool,
    },
    /// A frame announced a size above the configured maximum (or a negative size). A plaintext
    /// client talking to a TLS listener lands here: the TLS record header reads as a huge length.
    #[error(
        "frame from {peer} announces {size} bytes, above the limit of {max} \
         (is this a TLS listener reached without TLS?)"
    )]
    FrameTooLarge {
        /// The peer address.
        peer: String,
        /// The announced size, as a signed 32-bit Kafka length.
        size: i64,
        /// The configured maximum frame size.
        max: usize,
    },
    /// TLS failed (handshake, certificate verification, alert from the peer, ...).
    #[error("TLS with {peer} failed: {source}")]
    Tls {
        /// The peer address.
        peer: String,
        /// The rustls error.
        #[source]
        source: rustls::Error,
    },
    /// The peer closed (or reset) the connection during the TLS handshake before sending a
    /// single byte: a TLS client reached a listener that is not TLS (a Kafka `PLAINTEXT` or
    /// `SASL_PLAINTEXT` listener reads the ClientHello as an oversized request and hangs up).
    /// The same answer comes on every retry.
    #[error("{peer} {}", NOT_TLS)]
    NotTls {
        /// The peer address.
        peer: String,
    },
    /// Any other socket error.
    #[error("I/O error with {peer}: {source}")]
    Io {
        /// The peer address.
        peer: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The connection broke earlier (an error or a timeout) and must not be used again.
    #[error("connection to {peer} is broken by an earlier error; open a new one")]
    Broken {
        /// The peer address.
        peer: String,
    },
}

impl TransportError {
    /// True when the operation ran out of time (connect, handshake, send or receive).
    pub fn is_timeout(&self) -> bool {
        matches!(self, TransportError::Timeout { .. })
    }

    /// Whether a new connection may succeed where this one failed: false for TLS failures,
    /// a peer that is not TLS and a frame too large (typically a TLS listener reached without
    /// TLS), which give the same answer every time.
    pub fn is_retriable(&self) -> bool {
        !matches!(
            self,
            TransportError::Tls { .. }
                | TransportError::NotTls { .. }
                | TransportError::FrameTooLarge { .. }
        )
    }
}
