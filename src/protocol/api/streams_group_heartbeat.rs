//! `StreamsGroupHeartbeat` (API key 88, versions 0–1; KIP-1071, KIP-1331).
//!
//! Every version is flexible (compact strings and arrays, tagged-field sections on every
//! struct). The request is identical in v0 and v1; v1 only exists so that the broker may send the
//! v1 *response*, whose layout differs:
//!
//! ```text
//! v0: … HeartbeatIntervalMs, AcceptableRecoveryLagLegacy:int32, TaskOffsetIntervalMs, Status, …,
//!       WarmupTasks, EndpointInformationEpoch, …
//! v1: … HeartbeatIntervalMs, TaskOffsetIntervalMs, AcceptableRecoveryLag:int64, Status, …,
//!       WarmupTasks, TopologyDescriptionRequired:bool, EndpointInformationEpoch, …
//! ```
//!
//! Field names mirror the schema (`StreamsGroupHeartbeatRequest.json` /
//! `StreamsGroupHeartbeatResponse.json`) in snake_case; nullable fields are `Option`s. The
//! request's and response's common structs of the same name have the same shape, so each is one
//! Rust type here.
//!
//! Encoding follows Kafka's generated serialisers: a field that is absent from the version being
//! written is dropped silently if it is *ignorable* or holds its default, and otherwise makes
//! encoding fail with [`EncodeError::FieldNotInVersion`] (Kafka throws
//! `UnsupportedVersionException` there), so that a caller never loses information unknowingly.
//! Unknown tagged fields are skipped when decoding.

// Named by the module docs.
#[cfg(doc)]
use crate::protocol::codec::EncodeError;

mod common;
mod request;
mod response;
mod wire;

pub use common::{Endpoint, KeyValue, TaskIds, TaskOffset, TopicInfo};
pub use request::{CopartitionGroup, StreamsGroupHeartbeatRequest, Subtopology, Topology};
#[allow(deprecated)]
pub use response::TopicPartition;
pub use response::{
    EndpointToPartitions, Status, StatusCode, StreamsGroupHeartbeatResponse, TopicPartitions,
};
pub(super) use wire::{
    get_nullable_struct, get_nullable_structs, get_strings, get_structs, not_in_version,
    put_nullable_struct, put_nullable_structs, put_strings, put_structs,
};

#[cfg(test)]
mod tests;
