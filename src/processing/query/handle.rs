//! The metadata calls on a handle other threads can hold while the runtime runs, and their
//! shortcuts on [`ProcessingRuntime`].
//!
//! A call takes the newest assignment snapshot (an `Arc`, under the session's lock for a
//! pointer copy only), then works on it with no lock held: serializers and partitioners are
//! user code and run outside every lock.

use std::sync::Arc;

use crate::protocol::records::partition_for_key;
use crate::session::shared::Shared;
use crate::session::StreamsGroupState;
use crate::streams::{StreamsGroupSessionAssignment, StreamsTopology};

use super::super::instance::ProcessingRuntime;
use super::super::serde::Serde;
use super::metadata::{self, KeyQueryTarget, StoreTopics};
use super::{KeyQueryMetadata, QueryError, StreamPartitioner, StreamsClientMetadata};

/// Asks where keys, stores and partitions of the application live, from any thread, while
/// the runtime runs (from [`ProcessingRuntime::metadata_handle`]). Cheap to clone.
///
/// The answers come from the endpoint information of the newest heartbeat response, so
/// they follow the group's assignment (and lag a rebalance by up to a heartbeat interval).
/// Every call fails with [`QueryError::NotRunning`] once the instance's group membership has
/// ended (the runtime closed or failed), as Java's throw outside `RUNNING`/`REBALANCING`.
#[derive(Clone)]
pub struct StreamsMetadataHandle {
    shared: Arc<Shared>,
    stores: Arc<StoreTopics>,
}

impl std::fmt::Debug for StreamsMetadataHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamsMetadataHandle")
            .field("stores", &self.stores)
            .finish_non_exhaustive()
    }
}

impl StreamsMetadataHandle {
    /// A handle over a session's published state, for an application of `topology` whose
    /// stores are `(subtopology id, [(store name, _)])`.
    pub(crate) fn new<T>(
        shared: Arc<Shared>,
        topology: &StreamsTopology,
        stores: &std::collections::BTreeMap<String, Vec<(String, T)>>,
    ) -> Self {
        let pairs = stores.iter().flat_map(|(sub, list)| {
            list.iter()
                .map(move |(name, _)| (sub.as_str(), name.as_str()))
        });
        StreamsMetadataHandle {
            shared,
            stores: Arc::new(StoreTopics::new(topology, pairs)),
        }
    }

    /// Which source topics feed which store.
    pub fn store_topics(&self) -> &StoreTopics {
        &self.stores
    }

    /// The newest snapshot, or why there is none to trust.
    fn snapshot(&self) -> Result<Arc<StreamsGroupSessionAssignment>, QueryError> {
        match self.shared.state() {
            s @ (StreamsGroupState::Closed | StreamsGroupState::Failed(_)) => {
                Err(QueryError::NotRunning {
                    state: format!("{s:?}"),
                })
            }
            _ => Ok(self.shared.snapshot()),
        }
    }

    /// Where `key` of `store` lives, with Java's default partitioner over the key as `serde`
    /// serializes it (Java's `queryMetadataForKey(store, key, serializer)`).
    /// [`KeyQueryMetadata::NOT_AVAILABLE`] while the endpoint information is missing.
    pub fn query_metadata_for_key<K, S>(
        &self,
        store: &str,
        key: &K,
        serde: &S,
    ) -> Result<KeyQueryMetadata, QueryError>
    where
        K: ?Sized + ToOwned,
        S: Serde<K> + ?Sized,
    {
        self.by_bytes(KeyQueryTarget::Store(store), &serde.serialize(key))
    }

    /// Where `key` of `store` lives, with `partitioner` picking its partition (Java's
    /// `queryMetadataForKey(store, key, partitioner)`: use it when the store's input was
    /// written with that partitioner).
    pub fn query_metadata_for_key_with_partitioner<K: ?Sized>(
        &self,
        store: &str,
        key: &K,
        partitioner: &dyn StreamPartitioner<K>,
    ) -> Result<KeyQueryMetadata, QueryError> {
        let snapshot = self.snapshot()?;
        metadata::key_query_metadata(
            &snapshot.partitions_by_user_endpoint,
            &self.stores,
            KeyQueryTarget::Store(store),
            |topic, n| partitioner.partition(topic, key, n),
        )
    }

    /// Which instance processes `key` of source (or repartition source) topic `topic`: the
    /// host of the active task of its partition, by Java's default partitioner over the key
    /// as `serde` serializes it.
    pub fn query_metadata_for_topic_key<K, S>(
        &self,
        topic: &str,
        key: &K,
        serde: &S,
    ) -> Result<KeyQueryMetadata, QueryError>
    where
        K: ?Sized + ToOwned,
        S: Serde<K> + ?Sized,
    {
        self.by_bytes(KeyQueryTarget::SourceTopic(topic), &serde.serialize(key))
    }

    /// Where the already serialized `key` of `target` lives, by Java's default partitioner.
    pub fn query_metadata_for_serialized_key(
        &self,
        target: KeyQueryTarget<'_>,
        key: &[u8],
    ) -> Result<KeyQueryMetadata, QueryError> {
        self.by_bytes(target, key)
    }

    fn by_bytes(
        &self,
        target: KeyQueryTarget<'_>,
        key: &[u8],
    ) -> Result<KeyQueryMetadata, QueryError> {
        let snapshot = self.snapshot()?;
        metadata::key_query_metadata(
            &snapshot.partitions_by_user_endpoint,
            &self.stores,
            target,
            |_, n| partition_for_key(key, n),
        )
    }

    /// Every instance of the application with its partitions and stores, sorted by host then
    /// port (Java's `metadataForAllStreamsClients()`); empty before the first endpoint
    /// information.
    pub fn metadata_for_all_streams_clients(
        &self,
    ) -> Result<Vec<StreamsClientMetadata>, QueryError> {
        let snapshot = self.snapshot()?;
        Ok(metadata::metadata_for_all_streams_clients(
            &snapshot.partitions_by_user_endpoint,
            &self.stores,
        ))
    }

    /// The instances holding `store` as active or standby (Java's
    /// `streamsMetadataForStore(store)`); empty while the endpoint information is missing.
    pub fn streams_metadata_for_store(
        &self,
        store: &str,
    ) -> Result<Vec<StreamsClientMetadata>, QueryError> {
        let snapshot = self.snapshot()?;
        metadata::streams_metadata_for_store(
            &snapshot.partitions_by_user_endpoint,
            &self.stores,
            store,
        )
    }
}

impl ProcessingRuntime {
    /// A handle that answers where keys, stores and partitions of the application live,
    /// for use from other threads while this runtime runs (interactive queries).
    pub fn metadata_handle(&self) -> StreamsMetadataHandle {
        self.metadata.clone()
    }

    /// Where `key` of `store` lives (Java's `KafkaStreams#queryMetadataForKey`); see
    /// [`StreamsMetadataHandle::query_metadata_for_key`].
    pub fn query_metadata_for_key<K, S>(
        &self,
        store: &str,
        key: &K,
        serde: &S,
    ) -> Result<KeyQueryMetadata, QueryError>
    where
        K: ?Sized + ToOwned,
        S: Serde<K> + ?Sized,
    {
        self.metadata.query_metadata_for_key(store, key, serde)
    }

    /// Every instance of the application (Java's `KafkaStreams#metadataForAllStreamsClients`);
    /// see [`StreamsMetadataHandle::metadata_for_all_streams_clients`].
    pub fn metadata_for_all_streams_clients(
        &self,
    ) -> Result<Vec<StreamsClientMetadata>, QueryError> {
        self.metadata.metadata_for_all_streams_clients()
    }

    /// The instances holding `store` (Java's `KafkaStreams#streamsMetadataForStore`); see
    /// [`StreamsMetadataHandle::streams_metadata_for_store`].
    pub fn streams_metadata_for_store(
        &self,
        store: &str,
    ) -> Result<Vec<StreamsClientMetadata>, QueryError> {
        self.metadata.streams_metadata_for_store(store)
    }
}
