//! State stores (Kafka Streams' `state` package and `StoreChangelogReader`): what every store
//! is to the runtime, the in-memory key-value store in Kafka Streams' changelog byte format,
//! changelog naming, and restore and standby reading of changelog partitions.
//!
//! * [`StateStore`]: the trait the runtime reaches every store through (name, changelog
//!   position, applying changelog records, the records its writes log, checkpoint, wipe).
//! * [`KeyValueStore`] with [`StoreFormat`]: the in-memory key-value store, plain or
//!   timestamped, whose changelog records ([`ChangelogRecord`]) are byte-for-byte Java's.
//! * [`ThreadCache`]: the record cache (`statestore.cache.max.bytes`): writes wait in it
//!   until a commit or an eviction, so repeated updates of a key reach the changelog once;
//!   a [`CacheFlushListener`] is told of each flushed entry (the DSL's hook to forward
//!   KTable updates downstream on flush).
//! * [`ChangelogSink`]: where change-logging sends a store's changelog records (the
//!   runtime's record collector, bound to the store's changelog partition).
//! * [`changelog_topic`] names a changelog: `<application.id>-<store>-changelog`.
//! * [`ChangelogReader`]: restore (up to the end offset) and standby catch-up.
//!
//! This layer sits above the fetcher and the producer (restore reads with a
//! [`Fetcher`](crate::consumer::Fetcher); a changelog record becomes a
//! [`ProducerRecord`](crate::producer::ProducerRecord)) and below `processing`, which owns
//! the stores of its tasks. The same items are re-exported at `processing::` for existing
//! code.

mod cache;
mod key_value;
mod logging;
mod restore;
mod store;

pub use self::cache::{ThreadCache, DEFAULT_CACHE_MAX_BYTES};
pub use self::key_value::{CacheFlushListener, KeyValueStore};
pub use self::logging::ChangelogSink;
pub use self::restore::{ChangelogReader, RestoreSummary};
pub use self::store::{changelog_topic, ChangelogRecord, StateStore, StoreFormat, NO_TIMESTAMP};
