//! A Kafka Streams application instance in Rust: per-task processors over the Streams group
//! membership, the [`Fetcher`](crate::consumer::Fetcher), the
//! [`Producer`](crate::producer::Producer) and offset commits, with key-value stores restored
//! from (and written to) their changelogs in Kafka Streams' byte format.
//!
//! * [`ProcessingRuntime`]: the processing loop of one member (at-least-once).
//! * [`StreamsApp`]: topology + stores + a processor factory per task.
//! * [`Processor`] / [`TaskContext`]: application code per task; send to sinks, reach stores.
//! * [`StreamsApp::from_dsl`]: a DSL program ([`crate::dsl`]) as an application;
//!   [`DslTestDriver`] runs one without a broker (Java's `TopologyTestDriver`).
//! * [`serde`]: Kafka's built-in serdes, byte-exact.
//! * Stores, their changelog format and restore are in [`crate::state`] (re-exported here:
//!   [`KeyValueStore`], [`StoreFormat`], [`ChangelogReader`], ...).
//! * [`purge`]: DeleteRecords of consumed repartition records.
//! * [`query`]: interactive queries: which instance hosts a key, and the local stores read
//!   from any thread ([`ProcessingRuntime::store`]).
//!
//! A complete application, Kafka's WordCountDemo record for record, is in the repository's
//! `examples/word_count/` (`app.rs` the topology and processors, `main.rs` the command line).

mod app;
/// The old path of [`ChangelogReader`]: now [`crate::state`].
#[deprecated(since = "0.2.0", note = "moved to `kafka_streams_group::state`")]
pub mod changelog;
mod collector;
mod config;
mod config_keys;
mod context;
mod deserialization;
mod dsl_runner;
mod eos;
#[cfg(test)]
mod eos_tests;
mod input;
mod instance;
mod lifecycle;
mod ports;
pub mod purge;
pub mod query;
pub mod serde;
mod state_dir;
mod state_manager;
/// The old path of the stores: now [`crate::state`].
#[deprecated(since = "0.2.0", note = "moved to `kafka_streams_group::state`")]
pub mod store;
mod task;
mod task_manager;
mod task_offsets;
#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;
mod thread;
mod workers;

pub use self::app::{ProcessorFactory, StreamsApp};
pub use self::config::{
    GroupConfigHook, ProcessingConfig, ProcessingGuarantee, DEFAULT_BUFFERED_RECORDS,
    DEFAULT_COMMIT_INTERVAL, DEFAULT_PURGE_INTERVAL, EOS_DEFAULT_COMMIT_INTERVAL,
    EOS_TRANSACTION_TIMEOUT, INTERVAL_RANGE, POLL_WAIT_RANGE,
};
pub use self::context::{Headers, Processor, SendHeaders, TaskContext};
pub use self::deserialization::{
    DeserializationHandler, LOG_AND_CONTINUE_CLASS, LOG_AND_FAIL_CLASS,
};
pub use self::dsl_runner::{DslProgram, DslTestDriver, TestRecord};
pub use self::instance::{ProcessingRuntime, ProcessingStats};
pub use self::lifecycle::{LocalTask, RuntimeState, StateListener};
pub use self::purge::RecordPurger;
pub use self::query::{
    KeyQueryMetadata, QueryError, ReadOnlyKeyValueStore, StoreQueryError, StoreQueryHandle,
    StoreQueryParameters, StreamPartitioner, StreamsClientMetadata, StreamsMetadataHandle,
};
pub use self::serde::{ByteArraySerde, IntegerSerde, LongSerde, Serde, SerdeError, StringSerde};
pub use self::task::{decode_partition_time, InputRecord, PartitionGroup, UNKNOWN_TIME};
pub use crate::consumer::{RecordHeaders, SharedBytes};
pub use crate::state::{
    changelog_topic, ChangelogReader, ChangelogRecord, KeyValueStore, RestoreSummary, StateStore,
    StoreFormat, NO_TIMESTAMP,
};
