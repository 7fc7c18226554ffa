//! Interactive-query metadata: which instance (its `application.server`) hosts a key of a
//! store, and which stores and partitions each instance holds, from the endpoint information
//! the Streams group heartbeat returns (Java's `KafkaStreams#queryMetadataForKey`,
//! `#metadataForAllStreamsClients` and `#streamsMetadataForStore`).
//!
//! * [`StreamsMetadataHandle`]: the calls, on a cloneable handle any thread may use while the
//!   runtime runs ([`ProcessingRuntime::metadata_handle`](super::ProcessingRuntime::metadata_handle)).
//! * [`key_query_metadata`], [`metadata_for_all_streams_clients`],
//!   [`streams_metadata_for_store`]: the same as pure functions of an assignment snapshot's
//!   endpoint map, e.g. for a member driven through the session handle directly.
//!
//! Every instance of the application must set `application.server`
//! ([`ProcessingConfig::user_endpoint`](super::ProcessingConfig::user_endpoint)): the broker
//! lists only members that have one, and (as in Java) a partition held by a member without
//! one is neither found nor counted.
//!
//! ```no_run
//! # use kafka_streams_group::processing::{ProcessingRuntime, StringSerde};
//! # fn f(runtime: &ProcessingRuntime) -> Result<(), Box<dyn std::error::Error>> {
//! let metadata = runtime.metadata_handle(); // Clone + Send + Sync
//! std::thread::spawn(move || {
//!     match metadata.query_metadata_for_key("counts", "kafka", &StringSerde) {
//!         Ok(m) => match m.active_host {
//!             Some(host) => println!("\"kafka\" is on {host}, partition {:?}", m.partition),
//!             None => println!("not known yet (rebalancing)"),
//!         },
//!         Err(e) => eprintln!("{e}"),
//!     }
//! });
//! # Ok(()) }
//! ```

mod handle;
mod metadata;
mod store_error;
#[cfg(test)]
mod store_tests;
pub mod stores;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use crate::common::TopicPartition;
use crate::streams::UserEndpoint;

pub use self::handle::StreamsMetadataHandle;
pub use self::metadata::{
    is_initialized, key_query_metadata, metadata_for_all_streams_clients,
    streams_metadata_for_store, EndpointMap, KeyQueryTarget, StoreTopics,
};
pub use self::stores::{
    ReadOnlyKeyValueStore, StoreQueryError, StoreQueryHandle, StoreQueryParameters,
    DEFAULT_QUERY_TIMEOUT,
};

/// Where a key lives (Java's `KeyQueryMetadata`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyQueryMetadata {
    /// The instance whose active task holds the key's partition; `None` where Java says
    /// `HostInfo.unavailable()` (not known: rebalancing, or held by a member without
    /// `application.server`).
    pub active_host: Option<UserEndpoint>,
    /// The instances with a standby of that partition.
    pub standby_hosts: BTreeSet<UserEndpoint>,
    /// The key's partition; `None` where Java says `-1` ([`NOT_AVAILABLE`](Self::NOT_AVAILABLE)).
    pub partition: Option<i32>,
}

impl KeyQueryMetadata {
    /// Java's `KeyQueryMetadata.NOT_AVAILABLE`: the group's endpoint information is missing
    /// (before the first assignment, or while no endpoint lists an active partition).
    pub const NOT_AVAILABLE: KeyQueryMetadata = KeyQueryMetadata {
        active_host: None,
        standby_hosts: BTreeSet::new(),
        partition: None,
    };

    /// Whether this is more than [`NOT_AVAILABLE`](Self::NOT_AVAILABLE).
    pub fn is_available(&self) -> bool {
        self.partition.is_some()
    }
}

/// One instance of the application as the endpoint information shows it (Java's
/// `StreamsMetadata`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsClientMetadata {
    /// Its `application.server`.
    pub host: UserEndpoint,
    /// The stores of its active tasks.
    pub state_store_names: BTreeSet<String>,
    /// The source (and repartition source) partitions of its active tasks.
    pub topic_partitions: BTreeSet<TopicPartition>,
    /// The stores of its standby tasks.
    pub standby_state_store_names: BTreeSet<String>,
    /// The source partitions of its standby tasks.
    pub standby_topic_partitions: BTreeSet<TopicPartition>,
}

/// Picks the partition of a key, for a key query (Java's `StreamPartitioner`, called with a
/// null value). Any `Fn(&str, &K, i32) -> Option<i32>` is one.
pub trait StreamPartitioner<K: ?Sized>: Send + Sync {
    /// The partition of `key` in `topic`, which has `num_partitions` partitions; `None` for
    /// none (a key query then fails).
    fn partition(&self, topic: &str, key: &K, num_partitions: i32) -> Option<i32>;
}

impl<K: ?Sized, F> StreamPartitioner<K> for F
where
    F: Fn(&str, &K, i32) -> Option<i32> + Send + Sync,
{
    fn partition(&self, topic: &str, key: &K, num_partitions: i32) -> Option<i32> {
        self(topic, key, num_partitions)
    }
}

/// Why a metadata query could not be answered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The application has no store of that name.
    #[error(
        "the application has no store {store:?} (its stores: {known:?}): use a store declared \
         with StreamsApp::store"
    )]
    UnknownStore {
        /// The name asked for.
        store: String,
        /// The stores the application has.
        known: Vec<String>,
    },
    /// The topic is not a source or repartition source topic of the application.
    #[error(
        "{topic:?} is not a source topic of the application (its source topics: {known:?}): \
         ask for a topic its topology reads"
    )]
    UnknownTopic {
        /// The topic asked for.
        topic: String,
        /// The source topics of the application.
        known: Vec<String>,
    },
    /// A user partitioner returned no partition for the key.
    #[error(
        "the partitioner returned no partition for the key (topic {topic:?}, {partitions} \
         partitions): a key query needs exactly one"
    )]
    NoPartition {
        /// The topic it was asked about.
        topic: String,
        /// The partition count it was given.
        partitions: i32,
    },
    /// The instance's group membership has ended (closed, or failed).
    #[error(
        "the instance is no longer a group member ({state}): metadata is only known while the \
         runtime runs"
    )]
    NotRunning {
        /// The session's state, e.g. `Closed`.
        state: String,
    },
}
