//! A Kafka Streams application instance in Rust: per-task processors over the Streams group
//! membership, the [`Fetcher`](crate::consumer::Fetcher), the
//! [`Producer`](crate::producer::Producer) and offset commits, with key-value stores restored
//! from (and written to) their changelogs in Kafka Streams' byte format.
//!
//! * [`ProcessingRuntime`]: the processing loop of one member (at-least-once).
//! * [`StreamsApp`]: topology + stores + a processor factory per task.
//! * [`Processor`] / [`TaskContext`]: application code per task; send to sinks, reach stores.
//! * [`serde`]: Kafka's built-in serdes, byte-exact.
//! * [`store`]: in-memory key-value stores in Kafka Streams' changelog format.
//! * [`changelog`]: restore and standby reading of changelog partitions.
//! * [`purge`]: DeleteRecords of consumed repartition records.
//! * [`query`]: which instance hosts a key (interactive-query metadata).
//!
//! A complete application, Kafka's WordCountDemo record for record, is in the repository's
//! `examples/word_count/` (`app.rs` the topology and processors, `main.rs` the command line).

mod app;
pub mod changelog;
mod collector;
mod config;
mod config_keys;
mod context;
mod deserialization;
mod input;
mod instance;
mod lifecycle;
mod ports;
pub mod purge;
pub mod query;
pub mod serde;
mod state_manager;
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
pub use self::changelog::{ChangelogReader, RestoreSummary};
pub use self::config::{
    GroupConfigHook, ProcessingConfig, DEFAULT_BUFFERED_RECORDS, DEFAULT_COMMIT_INTERVAL,
    DEFAULT_PURGE_INTERVAL, INTERVAL_RANGE, POLL_WAIT_RANGE,
};
pub use self::context::{Headers, Processor, TaskContext};
pub use self::deserialization::{
    DeserializationHandler, LOG_AND_CONTINUE_CLASS, LOG_AND_FAIL_CLASS,
};
pub use self::instance::{ProcessingRuntime, ProcessingStats};
pub use self::lifecycle::{LocalTask, RuntimeState, StateListener};
pub use self::purge::RecordPurger;
pub use self::query::{
    KeyQueryMetadata, QueryError, StreamPartitioner, StreamsClientMetadata, StreamsMetadataHandle,
};
pub use self::serde::{ByteArraySerde, IntegerSerde, LongSerde, Serde, SerdeError, StringSerde};
pub use self::store::{
    changelog_topic, ChangelogRecord, KeyValueStore, StateStore, StoreFormat, NO_TIMESTAMP,
};
pub use self::task::{decode_partition_time, InputRecord, PartitionGroup, UNKNOWN_TIME};
