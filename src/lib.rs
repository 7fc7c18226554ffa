//! # kafka-streams-group
//!
//! A blocking, pure-Rust library that lets plain threaded programs join an Apache Kafka
//! **Streams group** (KIP-1071, `StreamsGroupHeartbeat`, API key 88) as first-class members,
//! side by side with Java Kafka Streams instances.
//!
//! The library does the membership and task lifecycle; the application processes records.
//!
//! # Layers
//!
//! Each top-level module sits on one layer; a module imports only modules of its own layer or
//! of layers below it, and the modules of one layer never import each other in a circle.
//! `tests/layering.rs` reads this table and checks every `crate::`/`super::` path under
//! `src/` against it, naming the file and line of any import that points up.
//!
//! | layer | name | modules | what it holds |
//! | --- | --- | --- | --- |
//! | 1 | vocabulary | `common` | one `TopicPartition`, base64, `SerdeError`, the SASL names (`ScramAlgorithm`, `OAuthToken`, `SaslError`) |
//! | 2 | wire | `protocol` | pure primitives, headers, frames, one module per API message, error codes |
//! | 3 | topology | `topology` | the topology model, Java's ordering rules, the Processor-API builder and `describe()` |
//! | 4 | DSL | `dsl` | `StreamsBuilder`, `KStream`, `KGroupedStream`, `KTable`, lowered into the topology builder with Java's naming |
//! | 5 | membership core | `streams` | pure Streams membership state machine, task ids, assignment, commit requests |
//! | 6 | errors | `error` | the crate's [`Error`], wrapping the errors of the layers below |
//! | 7 | configuration | `config`, `properties` | [`ClientConfig`] and its parts; `key=value` properties parsing |
//! | 8 | transport | `transport` | mio TCP, rustls streams, SASL step machines (frames, not messages) |
//! | 9 | client | `client`, `tls`, `connect` | connections, ApiVersions, bootstrap, coordinator lookup; a client from a [`ClientConfig`] |
//! | 10 | cluster requests | `describe`, `admin` | one-shot requests over a client: describe a Streams group, create topics |
//! | 11 | membership drivers | `session` | the blocking session and the heartbeat thread driving the core; offset commits |
//! | 12 | data path | `consumer`, `producer` | fetcher of assigned partitions; idempotent and transactional producer |
//! | 13 | state | `state` | the `StateStore` trait, the in-memory key-value store in Java's changelog format, change-logging through a sink, the record cache, changelog naming, restore |
//! | 14 | processing | `processing` | the Streams application runtime: thread loop, tasks, state manager, record collector, interactive-query metadata; DSL programs lowered into processors, and their test driver |
//!
//! The pure cores (`protocol`, `topology`, `streams`) sit low because they need no I/O: the I/O layers
//! above drive them. The heartbeat thread in `session` meets the core and the client:
//!
//! ```text
//!             application threads                  one heartbeat thread per session
//!   StreamsGroupSessionHandle  ── crossbeam cmd + Waker ──►  session (mio::Poll, clock)
//!        ▲ assignment snapshot (parking_lot) ◄─────────────────────┘
//!   client/    connections, correlation ids, ApiVersions, bootstrap, coordinator lookup
//!   transport/ mio TCP, rustls, SASL step machines (frames, not messages)
//!   streams/   pure membership state machine, task ids, assignment merge
//!   protocol/  pure primitives, headers, frames, one file per API message, error codes
//! ```
//!
//! No async runtime is used anywhere: every call blocks the calling thread, with a deadline.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod admin;
pub mod client;
pub mod common;
pub mod config;
mod connect;
pub mod consumer;
pub mod describe;
pub mod dsl;
pub mod error;
pub mod processing;
pub mod producer;
pub mod properties;
pub mod protocol;
/// The old name of [`session`]: kept one release for existing paths.
#[deprecated(since = "0.2.0", note = "renamed to `kafka_streams_group::session`")]
pub mod runtime {
    pub use crate::session::*;
}
pub mod session;
pub mod state;
pub mod streams;
pub mod tls;
pub mod topology;
pub mod transport;

pub use common::TopicPartition;
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
pub use session::{
    AssignmentSubscriber, StreamsGroupConfig, StreamsGroupMetrics, StreamsGroupSession,
    StreamsGroupSessionHandle, StreamsGroupState, StreamsReconciliation,
};
pub use streams::commit::{CommitOffset, CommittedOffset, OffsetCommitOutcome, OffsetFetchOutcome};
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
