//! Java's `StreamsMetadataState` over the endpoint information of a Streams group heartbeat,
//! as pure functions of the assignment snapshot (no I/O, no clock, no lock).
//!
//! How Java 4.x fills it for a Streams group (`StreamThread.handleStreamsRebalanceData`, after
//! every poll): each `PartitionsByUserEndpoint` entry becomes one host in an active map and
//! one in a standby map (empty sets included), and the "cluster" it partitions keys over is
//! made of the **active** partitions only (`getTopicPartitionInfo(activeHostInfoMap)`). So:
//!
//! * the metadata is "not initialized" (`KeyQueryMetadata.NOT_AVAILABLE`, no clients for a
//!   store) until some endpoint lists an active partition;
//! * a key's partition is `partitioner(topic with most partitions, key, count)` where the count
//!   is the number of *distinct active partitions listed* for that topic, not the topic's
//!   partition count: a partition whose active task sits on a member without
//!   `application.server` is not counted, exactly as in Java;
//! * the active host is the (last, in host then port order) host whose active partitions
//!   include the key's partition of one of the store's source topics; standby hosts likewise
//!   from the standby partitions.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::TopicPartition;
use crate::streams::{EndpointPartitions, StreamsTopology, UserEndpoint};

use super::{KeyQueryMetadata, QueryError, StreamsClientMetadata};

/// The endpoint information of a heartbeat, as the assignment snapshot keeps it
/// ([`StreamsGroupSessionAssignment::partitions_by_user_endpoint`](crate::streams::StreamsGroupSessionAssignment::partitions_by_user_endpoint)).
pub type EndpointMap = BTreeMap<UserEndpoint, EndpointPartitions>;

/// Which source topics feed each store of an application (Java's
/// `InternalTopologyBuilder.stateStoreNameToFullSourceTopicNames`), and every source topic.
///
/// [`StoreTopics::new`] gives a store the source and repartition source topics of the
/// subtopology it belongs to. Java narrows that to the sources upstream of the processors
/// the store is connected to; the two differ only for a subtopology with several sources of
/// which some never reach the store, where [`with_store`](Self::with_store) states the
/// narrower list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreTopics {
    stores: BTreeMap<String, Vec<String>>,
    topics: BTreeSet<String>,
}

impl StoreTopics {
    /// The source topics of `topology` and the stores `(subtopology id, store name)`; a store
    /// of a subtopology the topology does not have is left out.
    pub fn new<'a>(
        topology: &StreamsTopology,
        stores: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        let topics = topology
            .subtopologies
            .iter()
            .flat_map(subtopology_sources)
            .collect();
        let mut out = StoreTopics {
            stores: BTreeMap::new(),
            topics,
        };
        for (sub, store) in stores {
            if let Some(s) = topology.subtopology_by_id(sub) {
                out.stores
                    .insert(store.to_string(), subtopology_sources(s).collect());
            }
        }
        out
    }

    /// Sets (replaces) the source topics of `store`.
    pub fn with_store(
        mut self,
        store: impl Into<String>,
        topics: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let topics: Vec<String> = topics.into_iter().map(Into::into).collect();
        self.topics.extend(topics.iter().cloned());
        self.stores.insert(store.into(), topics);
        self
    }

    /// The source topics of `store`, if it is known.
    pub fn source_topics(&self, store: &str) -> Option<&[String]> {
        self.stores.get(store).map(Vec::as_slice)
    }

    /// The store names, sorted.
    pub fn store_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.stores.keys().map(String::as_str)
    }

    /// Whether `topic` is a source (or repartition source) topic of the application.
    pub fn is_source_topic(&self, topic: &str) -> bool {
        self.topics.contains(topic)
    }

    /// The stores with a source topic among `partitions` (Java's `getStoresOnHost`).
    fn stores_on(&self, partitions: &BTreeSet<TopicPartition>) -> BTreeSet<String> {
        self.stores
            .iter()
            .filter(|(_, topics)| partitions.iter().any(|tp| topics.contains(&tp.topic)))
            .map(|(store, _)| store.clone())
            .collect()
    }
}

fn subtopology_sources(s: &crate::streams::Subtopology) -> impl Iterator<Item = String> + '_ {
    s.source_topics
        .iter()
        .cloned()
        .chain(s.repartition_source_topics.iter().map(|t| t.name.clone()))
}

/// What a key query is about: a store, or a source topic (which instance processes that
/// key's partition of the topic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyQueryTarget<'a> {
    /// A store, by name (Java's `queryMetadataForKey(storeName, …)`).
    Store(&'a str),
    /// A source or repartition source topic, by full name.
    SourceTopic(&'a str),
}

fn flatten(by_topic: &BTreeMap<String, BTreeSet<i32>>) -> BTreeSet<TopicPartition> {
    by_topic
        .iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| TopicPartition::new(t.as_str(), *p)))
        .collect()
}

/// Java's `metadataForAllStreamsClients()`: one entry per endpoint, sorted by host then port,
/// with the partitions it holds and the stores they feed. Empty while no endpoint is known.
pub fn metadata_for_all_streams_clients(
    endpoints: &EndpointMap,
    stores: &StoreTopics,
) -> Vec<StreamsClientMetadata> {
    endpoints
        .iter()
        .map(|(host, parts)| {
            let topic_partitions = flatten(&parts.active);
            let standby_topic_partitions = flatten(&parts.standby);
            StreamsClientMetadata {
                host: host.clone(),
                state_store_names: stores.stores_on(&topic_partitions),
                standby_state_store_names: stores.stores_on(&standby_topic_partitions),
                topic_partitions,
                standby_topic_partitions,
            }
        })
        .collect()
}

/// Whether Java would call the metadata initialized: some endpoint lists an active partition.
pub fn is_initialized(endpoints: &EndpointMap) -> bool {
    endpoints
        .values()
        .any(|p| p.active.values().any(|ps| !ps.is_empty()))
}

/// Java's `streamsMetadataForStore(store)`: the clients holding `store` as active or standby;
/// empty while the metadata is not initialized. An unknown store is an error (Java returns
/// an empty list).
pub fn streams_metadata_for_store(
    endpoints: &EndpointMap,
    stores: &StoreTopics,
    store: &str,
) -> Result<Vec<StreamsClientMetadata>, QueryError> {
    if stores.source_topics(store).is_none() {
        return Err(unknown_store(stores, store));
    }
    if !is_initialized(endpoints) {
        return Ok(Vec::new());
    }
    Ok(metadata_for_all_streams_clients(endpoints, stores)
        .into_iter()
        .filter(|m| {
            m.state_store_names.contains(store) || m.standby_state_store_names.contains(store)
        })
        .collect())
}

/// Java's `queryMetadataForKey`: where the key whose partition `partition(topic, count)` picks
/// lives. `partition` is called (once, without any lock) with the source topic with the most
/// active partitions listed (the first such one in the store's topic order) and that count;
/// Java's default partitioner is `partition_for_key(serialized key, count)`.
///
/// [`KeyQueryMetadata::NOT_AVAILABLE`] while the metadata is not initialized, and also when
/// none of the target's topics has an active partition listed (where Java's default
/// partitioner would divide by zero). An unknown store or topic is an error (Java returns
/// `null`), as is a partitioner that returns no partition (Java fails with a
/// `NullPointerException`).
pub fn key_query_metadata(
    endpoints: &EndpointMap,
    stores: &StoreTopics,
    target: KeyQueryTarget<'_>,
    partition: impl FnOnce(&str, i32) -> Option<i32>,
) -> Result<KeyQueryMetadata, QueryError> {
    let single;
    let topics: &[String] = match target {
        KeyQueryTarget::Store(store) => stores
            .source_topics(store)
            .ok_or_else(|| unknown_store(stores, store))?,
        KeyQueryTarget::SourceTopic(topic) => {
            if !stores.is_source_topic(topic) {
                return Err(QueryError::UnknownTopic {
                    topic: topic.to_string(),
                    known: stores.topics.iter().cloned().collect(),
                });
            }
            single = [topic.to_string()];
            &single
        }
    };
    if !is_initialized(endpoints) {
        return Ok(KeyQueryMetadata::NOT_AVAILABLE);
    }
    let Some((topic, count)) = topic_with_most_partitions(endpoints, topics) else {
        return Ok(KeyQueryMetadata::NOT_AVAILABLE);
    };
    let p = partition(topic, count).ok_or_else(|| QueryError::NoPartition {
        topic: topic.to_string(),
        partitions: count,
    })?;
    let holds = |by_topic: &BTreeMap<String, BTreeSet<i32>>| {
        topics
            .iter()
            .any(|t| by_topic.get(t).is_some_and(|ps| ps.contains(&p)))
    };
    let mut out = KeyQueryMetadata {
        active_host: None,
        standby_hosts: BTreeSet::new(),
        partition: Some(p),
    };
    for (host, parts) in endpoints {
        if holds(&parts.active) {
            out.active_host = Some(host.clone());
        }
        if holds(&parts.standby) {
            out.standby_hosts.insert(host.clone());
        }
    }
    Ok(out)
}

/// Java's `SourceTopicsInfo`: the first of `topics` with the most distinct active partitions
/// listed across all endpoints, and that count; `None` if none has any.
fn topic_with_most_partitions<'t>(
    endpoints: &EndpointMap,
    topics: &'t [String],
) -> Option<(&'t str, i32)> {
    let mut best: Option<(&str, i32)> = None;
    for topic in topics {
        let distinct: BTreeSet<i32> = endpoints
            .values()
            .filter_map(|p| p.active.get(topic))
            .flatten()
            .copied()
            .collect();
        let n = i32::try_from(distinct.len()).unwrap_or(i32::MAX);
        if n > best.map_or(0, |(_, b)| b) {
            best = Some((topic, n));
        }
    }
    best
}

fn unknown_store(stores: &StoreTopics, store: &str) -> QueryError {
    QueryError::UnknownStore {
        store: store.to_string(),
        known: stores.store_names().map(str::to_string).collect(),
    }
}
