//! Byte transport on mio: TCP, rustls, SASL step machines. Knows frames, not messages.
//!
//! * [`stream`]: one non-blocking TCP socket (optionally under rustls) with its own
//!   `mio::Poll`; every operation is bounded by a deadline.
//! * [`connection`]: whole frames over a stream, with a size limit checked before allocation
//!   and a "broken after any error" rule.
//! * [`error`]: the transport's error type.
//! * [`resolve`](mod@resolve): host name resolution bounded by a timeout (the system resolver has none).
//! * [`sasl`]: SASL mechanisms as step machines without I/O.
//!
//! The rustls client configuration is built from the user's settings above this layer, in
//! [`crate::tls`]; this layer takes a ready `rustls::ClientConfig` and imports nothing from
//! `config` or `error`.

pub mod connection;
pub mod error;
pub mod resolve;
pub mod sasl;
pub mod stream;

pub use connection::{ConnectOptions, Connection, DEFAULT_MAX_FRAME_SIZE};
pub use error::TransportError;
pub use resolve::{resolve, resolve_within};
pub use stream::{Stream, TlsSetup};
