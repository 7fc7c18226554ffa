//! The crate's error type.
