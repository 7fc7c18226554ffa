//! # kafka-streams-group
//!
//! A blocking, pure-Rust library that lets plain threaded programs join an Apache Kafka
//! **Streams group** (KIP-1071, `StreamsGroupHeartbeat`, API key 88) as first-class members,
//! side by side with Java Kafka Streams instances.
//!
//! The library does the membership and task lifecycle; the application processes records.
//!
//! ```text
//!             application threads                  one heartbeat thread per session
//!   StreamsGroupSessionHandle  ── crossbeam cmd + Waker ──►  runtime (mio::Poll, clock)
//!        ▲ assignment snapshot (parking_lot) ◄─────────────────────┘
//!   streams/   pure membership state machine, task ids, assignment merge
//!   client/    connections, correlation ids, ApiVersions, bootstrap, coordinator lookup
//!   transport/ mio TCP, rustls, SASL step machines (frames, not messages)
//!   protocol/  pure primitives, headers, frames, one file per API message, error codes
//! ```
//!
//! No async runtime is used anywhere: every call blocks the calling thread, with a deadline.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod admin;
pub mod client;
pub mod config;
mod connect;
pub mod consumer;
pub mod describe;
pub mod error;
pub mod processing;
pub mod producer;
pub mod properties;
pub mod protocol;
pub mod runtime;
pub mod streams;
pub mod tls;
pub mod transport;

pub use config::{
    ClientConfig, ClientMetrics, ClientMetricsSnapshot, OAuthToken, SaslConfig, SecurityProtocol,
    TlsConfig,
};
pub use describe::{
    describe_streams_group, describe_streams_groups, DescribedGroupState, DescribedTasks,
    StreamsGroupDescription, StreamsGroupMemberDescription,
};
pub use error::{Error, Result};
pub use protocol::BrokerErrorKind;
pub use runtime::{
    AssignmentSubscriber, StreamsGroupConfig, StreamsGroupMetrics, StreamsGroupSession,
    StreamsGroupSessionHandle, StreamsGroupState, StreamsReconciliation,
};
pub use streams::commit::{
    CommitOffset, CommittedOffset, OffsetCommitOutcome, OffsetFetchOutcome, TopicPartition,
};
pub use streams::{
    CopartitionGroup, JavaHashSetSizing, StreamsGroupSessionAssignment, StreamsGroupStatus,
    StreamsStatusCode, StreamsTaskAssignment, StreamsTaskId, StreamsTaskOffsets, StreamsTaskPlan,
    StreamsTaskRole, StreamsTaskRuntime, StreamsTaskTransition, StreamsTopology, Subtopology,
    TopicInfo, TopologyDifference, UserEndpoint,
};

/// Compiles the README's Rust examples as doc tests, so the README cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
