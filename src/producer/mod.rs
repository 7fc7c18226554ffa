//! A blocking, idempotent producer (issue 15): what a member's tasks write to repartition,
//! changelog and output topics.
//!
//! * [`accumulator`] is the pure core: per-partition batches (`linger.ms`, `batch.size`,
//!   `compression.type`) and what a Produce answer does to a batch ([`classify`]);
//! * [`idempotence`] is the idempotent producer's own state machine: producer id, epoch,
//!   per-partition sequences and Java's epoch-bump rules;
//! * [`transaction`] is the transactional producer's state machine (Java's
//!   `TransactionManager`): which request goes next and what each answer does;
//! * [`Producer`] is the thin blocking shell: metadata, InitProducerId and Produce requests
//!   (`acks=all`), up to `max.in.flight.requests.per.connection` per leader in flight
//!   (`sender`), with the crate's [`Client`](crate::client::Client), deadlines, TLS/SASL and
//!   [`ClientMetrics`](crate::ClientMetrics).
//!
//! Keyed records go where Java's default partitioner puts them
//! ([`partition_for_key`](crate::protocol::records::partition_for_key)); null keys stick to
//! a random partition until its batch is full; an explicit partition is kept.
//!
//! ```no_run
//! use std::time::{Duration, Instant};
//! use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
//!
//! let config = ProducerConfig::from_properties([
//!     ("bootstrap.servers", "127.0.0.1:9092"),
//!     ("compression.type", "lz4"),
//!     ("linger.ms", "10"),
//! ])?;
//! let mut producer = Producer::new(config)?;
//! let partition = producer.send(ProducerRecord::new("orders", Some(b"k1"), Some(b"v1")))?;
//! producer.flush(Instant::now() + Duration::from_secs(30))?;
//! # let _ = partition;
//! # Ok::<(), kafka_streams_group::Error>(())
//! ```
//!
//! With `transactional.id` the producer is transactional (Java's `initTransactions`,
//! `beginTransaction`, `sendOffsetsToTransaction`, `commitTransaction`, `abortTransaction`):
//! records and input offsets of one transaction become visible to `read_committed` readers
//! together, or not at all. An abortable error asks for `abort_transaction`; a fenced one
//! (another producer took the id over) for dropping the producer.
//!
//! ```no_run
//! use std::collections::BTreeMap;
//! use kafka_streams_group::producer::transaction::GroupMetadata;
//! use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
//! use kafka_streams_group::TopicPartition;
//!
//! let config = ProducerConfig::from_properties([
//!     ("bootstrap.servers", "127.0.0.1:9092"),
//!     ("transactional.id", "orders-enricher-1"),
//! ])?;
//! let mut producer = Producer::new(config)?;
//! producer.init_transactions()?;
//! producer.begin_transaction()?;
//! producer.send(ProducerRecord::new("enriched", Some(b"k1"), Some(b"v1")))?;
//! let consumed = BTreeMap::from([(TopicPartition::new("orders", 0), 42)]);
//! let done = producer
//!     .send_offsets_to_transaction(&consumed, &GroupMetadata::new("enricher"))
//!     .and_then(|()| producer.commit_transaction());
//! match done {
//!     Ok(()) => {}
//!     Err(e) if e.is_abortable() => producer.abort_transaction()?,
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok::<(), kafka_streams_group::Error>(())
//! ```

pub mod accumulator;
mod config;
pub mod idempotence;
mod queues;
mod sender;
mod shell;
pub mod transaction;
mod transactional;

pub use accumulator::{classify, BatchOutcome, Expired, ProducerIdentity, ProducerRecord, Room};
pub use config::{ProducerConfig, PRODUCER_KEYS};
pub use shell::Producer;
pub(crate) use shell::RecordRef;
pub use transactional::TransactionError;

#[cfg(test)]
mod tests;
