//! Kafka wire protocol: primitives, headers, frames, one module per API, error codes.
//!
//! Pure: no I/O, no clock. Every decoder bounds every length by the bytes that remain.

pub mod api;
