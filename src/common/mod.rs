//! The lowest vocabulary: small types and helpers that every layer may name and that name
//! nothing of this crate. Nothing here does I/O.
//!
//! * [`TopicPartition`]: one partition of a topic (commits, fetcher, producer, processing);
//! * `base64`: the strict standard base64 of SCRAM and of Kafka Streams' offset metadata;
//! * `json`: the members of one JSON object (OAUTHBEARER errors, Kafka Streams' process file);
//! * [`SerdeError`]: bytes a serde cannot read;
//! * [`ConsumerError`]: why the fetcher cannot go on reading a partition;
//! * [`sasl`]: the SASL names that configuration, errors and the transport share
//!   ([`ScramAlgorithm`], [`OAuthToken`], [`SaslError`]).

pub(crate) mod base64;
mod consumer_error;
pub(crate) mod json;
pub mod sasl;
mod serde;
mod topic_partition;

pub use consumer_error::ConsumerError;
pub use sasl::{OAuthToken, OAuthTokenCallback, SaslError, ScramAlgorithm};
pub use serde::SerdeError;
pub use topic_partition::TopicPartition;
