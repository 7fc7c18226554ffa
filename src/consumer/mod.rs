//! A blocking consumer of explicitly assigned partitions, without a consumer group: what a
//! Streams member uses to read its tasks' source partitions.
//!
//! * [`FetcherCore`] (pure, no I/O): assignment, positions, `seek`, pause/resume,
//!   `auto.offset.reset` through ListOffsets, one sessionless Fetch per leader from a
//!   metadata snapshot (topic ids from Fetch v13), and what each answer changes: records
//!   indexed (control batches and, under `read_committed`, aborted data dropped), positions
//!   advanced, OFFSET_OUT_OF_RANGE reset, leader errors turned into a metadata refresh;
//!   KIP-320: each position keeps the leader epoch of the last record consumed, sent with
//!   every Fetch (`last_fetched_epoch`) and validated with OffsetForLeaderEpoch after a
//!   leader change, so that a log truncated under it (unclean leader election) is found
//!   ([`ConsumerError::LogTruncation`], or a move back to the divergence point).
//! * [`Fetcher`]: the blocking shell on a [`Client`](crate::client::Client); `poll(deadline)`
//!   sends the Fetches to all leaders at once and applies the answers as they come.
//! * [`PartitionRecords`]: one partition's fetched bytes, owned (moved out of the response,
//!   not copied); [`PartitionRecords::batches`] decodes a batch at a time and its records
//!   borrow from the buffer; [`PartitionRecords::records`] gives [`FetchedRecord`]s, which
//!   hold a share of their batch's bytes (no copy, no allocation per record) and can be kept
//!   past the next poll; [`FetchedRecord::into_shared`] splits one into its key and value
//!   ([`SharedBytes`]) and headers ([`RecordHeaders`]), still shares of the same bytes.
//! * [`FetcherConfig`]: a [`ClientConfig`](crate::ClientConfig) plus the fetch settings, as
//!   a builder or from Java consumer properties (`fetch.min.bytes`, `fetch.max.wait.ms`,
//!   `max.partition.fetch.bytes`, `fetch.max.bytes`, `isolation.level`, `auto.offset.reset`).
//!
//! Metrics: requests, bytes, errors and reconnects go to the configuration's
//! [`ClientMetrics`](crate::ClientMetrics) as for every client of the crate.

mod answer;
mod config;
mod core;
mod fetched;
mod fetcher;
mod records;
mod shared;
mod validate;

pub use self::config::{FetchSettings, FetcherConfig, IsolationLevel, OffsetReset, FETCHER_KEYS};
pub use self::core::FetcherCore;
pub use self::fetched::FetchedRecord;
pub(crate) use self::fetched::Spans;
pub use self::fetcher::Fetcher;
pub use self::records::{FetchedBatch, PartitionRecords};
pub use self::shared::{HeadersIter, RecordHeaders, SharedBytes};
pub use crate::common::ConsumerError;

#[cfg(test)]
mod tests;
