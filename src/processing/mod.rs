//! A Kafka Streams application instance in Rust: serdes, state stores and their changelogs,
//! and the processing runtime over the membership handle, the fetcher and the producer.
//!
//! * [`serde`]: Kafka's built-in serdes, byte-exact.
//! * [`store`]: in-memory key-value stores in Kafka Streams' changelog format.
//! * [`changelog`]: restore and standby reading of changelog partitions.
//! * [`purge`]: DeleteRecords of consumed repartition records.

pub mod changelog;
pub mod purge;
pub mod serde;
pub mod store;

pub use self::changelog::{ChangelogReader, RestoreSummary};
pub use self::purge::RecordPurger;
pub use self::serde::{ByteArraySerde, IntegerSerde, LongSerde, Serde, SerdeError, StringSerde};
pub use self::store::{changelog_topic, ChangelogRecord, KeyValueStore, StoreFormat, NO_TIMESTAMP};
