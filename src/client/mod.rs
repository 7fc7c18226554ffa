//! Connections to brokers: correlation ids, ApiVersions negotiation, bootstrap, coordinator lookup.

pub mod auth;
pub mod error;

pub use auth::{SaslFactory, SaslMechanism};
pub use error::ClientError;
