//! A Kafka Streams application instance in Rust: per-task processors over the Streams group
//! membership, the [`Fetcher`](crate::consumer::Fetcher), the
//! [`Producer`](crate::producer::Producer) and offset commits, with key-value stores restored
//! from (and written to) their changelogs in Kafka Streams' byte format.
//!
//! * [`ProcessingRuntime`]: the processing loop of one member (at-least-once).
//! * [`StreamsApp`]: topology + stores + a processor factory per task.
//! * [`Processor`] / [`TaskContext`]: application code per task; send to sinks, reach stores.
//! * [`word_count`]: Kafka's WordCountDemo, record for record.

mod app;
pub mod changelog;
mod config;
mod context;
pub mod purge;
mod runtime;
pub mod serde;
pub mod store;
mod task;
pub mod word_count;

pub use app::{ProcessorFactory, StreamsApp};
pub use config::{ProcessingConfig, DEFAULT_COMMIT_INTERVAL, DEFAULT_PURGE_INTERVAL};
pub use context::{Headers, Processor, TaskContext};
pub use runtime::{ProcessingRuntime, ProcessingStats};
pub use task::{decode_partition_time, InputRecord, PartitionGroup, UNKNOWN_TIME};
