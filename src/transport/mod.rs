//! Byte transport on mio: TCP, rustls, SASL step machines. Knows frames, not messages.

pub mod sasl;
pub mod tls;
