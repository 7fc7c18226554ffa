//! Connections to brokers: correlation ids, ApiVersions negotiation, bootstrap, coordinator lookup.
