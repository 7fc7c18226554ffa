//! [`ConsumerError`]: why the fetcher cannot go on reading a partition. It lives here, below
//! `error`, because [`Error::Consumer`](crate::Error) wraps it; `consumer` re-exports it.

use super::TopicPartition;

/// Why the fetcher cannot go on reading a partition. Inside [`Error::Consumer`](crate::Error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConsumerError {
    /// The partition's log was truncated below the position (KIP-320; Java's
    /// `LogTruncationException`): records the fetcher already returned are gone from the log,
    /// typically after an unclean leader election. `auto.offset.reset` is not applied, since
    /// a valid position exists: seek to `truncation_offset` (the first offset the new leader
    /// does not have from the old history) or elsewhere, then poll again.
    #[error(
        "log truncation detected for {partition}: the fetch position {fetch_offset} is past \
         the new leader's log, which diverges at {}; records already returned from there on \
         are gone (unclean leader election?). Seek (e.g. to the truncation offset) to go on",
        truncation_offset.map_or_else(|| "an unknown offset".to_owned(), |o| format!("offset {o}"))
    )]
    LogTruncation {
        /// The partition.
        partition: TopicPartition,
        /// The position when the truncation was found.
        fetch_offset: i64,
        /// Where the old and new histories diverge, if the broker said.
        truncation_offset: Option<i64>,
    },
    /// A Fetch answer for the partition held bytes but no complete record batch, as its first
    /// partition with data (so not cut by `fetch.max.bytes`): the fetcher cannot make
    /// progress. Java's consumer fails the same way ("no complete records were found").
    #[error(
        "cannot make progress reading {partition} at offset {offset}: the broker answered \
         {bytes} bytes but no complete record batch (max.partition.fetch.bytes = \
         {partition_max_bytes}, fetch.max.bytes = {max_bytes}); a batch larger than these \
         limits needs a broker that returns one whole batch (Fetch v3+) or larger limits, up to \
         the topic's max.message.bytes"
    )]
    NoCompleteBatch {
        /// The partition.
        partition: TopicPartition,
        /// The position fetched.
        offset: i64,
        /// Bytes of record data in the answer.
        bytes: usize,
        /// `max.partition.fetch.bytes`.
        partition_max_bytes: i32,
        /// `fetch.max.bytes`.
        max_bytes: i32,
    },
}

impl ConsumerError {
    /// The partition concerned.
    pub fn partition(&self) -> &TopicPartition {
        match self {
            ConsumerError::LogTruncation { partition, .. }
            | ConsumerError::NoCompleteBatch { partition, .. } => partition,
        }
    }
}
