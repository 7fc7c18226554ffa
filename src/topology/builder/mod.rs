//! The Processor-API topology builder: what Kafka Streams' `InternalTopologyBuilder` does
//! when an application (or the DSL) adds sources, processors, sinks and state stores.
//!
//! A [`TopologyBuilder`] records the node graph exactly as Java does: nodes in the order they
//! were added, sub-topologies made by uniting every node with its parents and every processor
//! with the other users of its stores, numbered in the order their first node was added
//! (`makeNodeGroups`). From it come
//!
//! * [`TopologyBuilder::describe`]: the text of Java's `Topology#describe()`, node order and
//!   all (see [`TopologyDescription`]);
//! * [`TopologyBuilder::streams_topology`]: the [`StreamsTopology`](crate::topology::StreamsTopology) a Java member of the same
//!   application sends in its `StreamsGroupHeartbeat` (internal topics prefixed with the
//!   `application.id`, changelogs `<application.id>-<store>-changelog`, Java's topic configs).
//!
//! Serdes are only labels here; executing the nodes belongs to the processing layer.
//! `tests/topology_parity.rs` compares both outputs with Kafka Streams' own for a corpus of
//! topologies.

mod describe;
mod heartbeat;
mod tree_set;

use std::collections::HashMap;

pub use describe::{NodeDescription, SubtopologyDescription, TopologyDescription};
pub use heartbeat::HeartbeatTopologyOptions;

/// Why the builder refused a node, store or topic (Java throws a `TopologyException` with the
/// same meaning; the messages follow Java's).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyBuildError {
    /// A node name is used twice.
    #[error("Processor {0} is already added.")]
    DuplicateNode(String),
    /// A source was given no topic.
    #[error("source {0}: topics cannot be empty")]
    NoTopics(String),
    /// A topic is read by two sources.
    #[error("Topic {0} has already been registered by another source.")]
    TopicAlreadyRegistered(String),
    /// A processor or sink was given no parent.
    #[error("{0}: predecessorNames cannot be empty")]
    NoParents(String),
    /// A parent is not (yet) a node of the topology.
    #[error("Parent node {parent} of {node} is unknown; add the parent first")]
    UnknownParent {
        /// The node being added.
        node: String,
        /// The unknown parent.
        parent: String,
    },
    /// A sink was named as a parent.
    #[error("Sink {0} cannot be used a parent.")]
    SinkAsParent(String),
    /// Another store with this name but different settings was added before.
    #[error("A different StateStore has already been added with the name {0}")]
    DifferentStore(String),
    /// A store is connected before it was added.
    #[error("StateStore {0} is not added yet.")]
    UnknownStore(String),
    /// A store is connected to a node that does not exist.
    #[error("Processor {0} is not added yet.")]
    UnknownProcessor(String),
    /// A store is connected to a source or a sink.
    #[error("cannot connect a state store {store} to a source node or a sink node ({node}).")]
    StoreOnSourceOrSink {
        /// The store.
        store: String,
        /// The source or sink.
        node: String,
    },
    /// A store was connected to a source topic twice.
    #[error("Source store {0} is already added.")]
    SourceStoreAlreadyAdded(String),
    /// A copartition group names a node that is not a source.
    #[error("copartitioned node {0} is not a source node")]
    CopartitionNotSource(String),
}

/// Where a sink writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SinkTarget {
    /// One fixed topic (Java's `StaticTopicNameExtractor`).
    Topic(String),
    /// A topic chosen per record; the string is what Java prints for the extractor in
    /// `describe()` (its `toString()`).
    Extractor(String),
}

/// What a node is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// Reads topics.
    Source {
        /// The topics, in the order given.
        topics: Vec<String>,
        /// Key deserializer, a label only (e.g. `"String"`).
        key_serde: Option<String>,
        /// Value deserializer, a label only.
        value_serde: Option<String>,
    },
    /// Processes records; may use state stores.
    Processor {
        /// Connected stores, in the order they were connected.
        stores: Vec<String>,
    },
    /// Writes records.
    Sink {
        /// The topic or topic extractor.
        target: SinkTarget,
    },
}

/// One node of the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Unique name (`KSTREAM-SOURCE-0000000000`, `my-processor`, …).
    pub name: String,
    /// Parents, in the order given (empty for sources).
    pub predecessors: Vec<String>,
    /// Source, processor or sink.
    pub kind: NodeKind,
}

/// A state store as the topology sees it: a name, whether it is change-logged, and the
/// changelog's topic configs (Java's `StoreBuilder#logConfig`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreSpec {
    /// Store name; the changelog is `<application.id>-<name>-changelog`.
    pub name: String,
    /// Whether the store has a changelog topic (Java's default: yes).
    pub logging_enabled: bool,
    /// Extra changelog topic configs (`withLoggingEnabled(Map)`), on top of Java's defaults.
    pub changelog_configs: Vec<(String, String)>,
}

impl StoreSpec {
    /// A change-logged key-value store with Java's default changelog configs.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            logging_enabled: true,
            changelog_configs: Vec::new(),
        }
    }

    /// Turns the changelog off (`withLoggingDisabled()`).
    pub fn logging_disabled(mut self) -> Self {
        self.logging_enabled = false;
        self
    }

    /// Adds a changelog topic config (`withLoggingEnabled(Map)`).
    pub fn changelog_config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.changelog_configs.push((key.into(), value.into()));
        self
    }
}

/// A store added to the builder, with the processors using it.
#[derive(Clone, Debug)]
struct Store {
    spec: StoreSpec,
    users: Vec<String>,
}

/// The Processor-API topology builder (Java's `InternalTopologyBuilder`); see the module docs.
#[derive(Clone, Debug, Default)]
pub struct TopologyBuilder {
    nodes: Vec<Node>,
    index: HashMap<String, usize>,
    /// Quick-union parent of every node (by index).
    union_parent: Vec<usize>,
    stores: Vec<Store>,
    /// Internal (repartition) topics, undecorated, with a fixed partition count if any.
    internal_topics: Vec<(String, Option<i32>)>,
    /// Copartitioned source nodes, one entry per `copartition_sources` call.
    copartition_groups: Vec<Vec<String>>,
    /// Stores whose changelog is a source topic (`connectSourceStoreAndTopic`): store, topic.
    source_changelogs: Vec<(String, String)>,
}

impl TopologyBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// The nodes, in the order they were added.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// A node by name.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.index.get(name).map(|&i| &self.nodes[i])
    }

    /// `addSource(name, topics…)`: a source reading `topics` (in that order).
    pub fn add_source<I, S>(&mut self, name: &str, topics: I) -> Result<(), TopologyBuildError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.add_source_with_serdes(name, topics, None, None)
    }

    /// [`add_source`](Self::add_source) with key and value deserializer labels.
    pub fn add_source_with_serdes<I, S>(
        &mut self,
        name: &str,
        topics: I,
        key_serde: Option<&str>,
        value_serde: Option<&str>,
    ) -> Result<(), TopologyBuildError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.verify_name(name)?;
        let topics: Vec<String> = topics.into_iter().map(Into::into).collect();
        if topics.is_empty() {
            return Err(TopologyBuildError::NoTopics(name.to_string()));
        }
        for topic in &topics {
            if self.source_topics().any(|t| t == topic) {
                return Err(TopologyBuildError::TopicAlreadyRegistered(topic.clone()));
            }
        }
        let kind = NodeKind::Source {
            topics,
            key_serde: key_serde.map(str::to_string),
            value_serde: value_serde.map(str::to_string),
        };
        self.push(name, Vec::new(), kind);
        Ok(())
    }

    /// `addProcessor(name, supplier, parents…)`.
    pub fn add_processor(
        &mut self,
        name: &str,
        parents: &[&str],
    ) -> Result<(), TopologyBuildError> {
        self.verify_name(name)?;
        self.verify_parents(name, parents)?;
        let parents = parents.iter().map(|p| p.to_string()).collect();
        self.push(name, parents, NodeKind::Processor { stores: Vec::new() });
        Ok(())
    }

    /// `addSink(name, topic or extractor, parents…)`.
    pub fn add_sink(
        &mut self,
        name: &str,
        target: SinkTarget,
        parents: &[&str],
    ) -> Result<(), TopologyBuildError> {
        self.verify_name(name)?;
        self.verify_parents(name, parents)?;
        let parents = parents.iter().map(|p| p.to_string()).collect();
        self.push(name, parents, NodeKind::Sink { target });
        Ok(())
    }

    /// `addStateStore(store, processors…)`: adds the store (again, if its spec is equal) and
    /// connects it to `processors`.
    pub fn add_state_store(
        &mut self,
        spec: StoreSpec,
        processors: &[&str],
    ) -> Result<(), TopologyBuildError> {
        match self.stores.iter().position(|s| s.spec.name == spec.name) {
            Some(i) if self.stores[i].spec != spec => {
                return Err(TopologyBuildError::DifferentStore(spec.name));
            }
            Some(_) => {}
            None => self.stores.push(Store {
                spec: spec.clone(),
                users: Vec::new(),
            }),
        }
        for processor in processors {
            self.connect_store(processor, &spec.name)?;
        }
        Ok(())
    }

    /// `connectProcessorAndStateStores(processor, stores…)`.
    pub fn connect_processor_and_state_stores(
        &mut self,
        processor: &str,
        stores: &[&str],
    ) -> Result<(), TopologyBuildError> {
        for store in stores {
            self.connect_store(processor, store)?;
        }
        Ok(())
    }

    /// `addInternalTopic(name, properties)`: `name` (undecorated) is a repartition topic the
    /// group creates, as `<application.id>-<name>`, with `partitions` if fixed.
    pub fn add_internal_topic(&mut self, name: &str, partitions: Option<i32>) {
        match self.internal_topics.iter_mut().find(|(t, _)| t == name) {
            Some(entry) => entry.1 = partitions,
            None => self.internal_topics.push((name.to_string(), partitions)),
        }
    }

    /// `copartitionSources(sourceNodes)`: the topics of these source nodes must have equal
    /// partition counts (joins declare this).
    pub fn copartition_sources(&mut self, sources: &[&str]) -> Result<(), TopologyBuildError> {
        for name in sources {
            if !matches!(
                self.node(name).map(|n| &n.kind),
                Some(NodeKind::Source { .. })
            ) {
                return Err(TopologyBuildError::CopartitionNotSource(name.to_string()));
            }
        }
        self.copartition_groups
            .push(sources.iter().map(|s| s.to_string()).collect());
        Ok(())
    }

    /// `connectSourceStoreAndTopic(store, topic)`: `store` is restored from the source topic
    /// `topic`, which is its changelog (what `topology.optimization=all` does for a table's
    /// store). The store itself should have logging disabled.
    pub fn connect_source_store_and_topic(
        &mut self,
        store: &str,
        topic: &str,
    ) -> Result<(), TopologyBuildError> {
        if self.source_changelog(store).is_some() {
            return Err(TopologyBuildError::SourceStoreAlreadyAdded(
                store.to_string(),
            ));
        }
        self.source_changelogs
            .push((store.to_string(), topic.to_string()));
        Ok(())
    }

    /// The source topic `store` is restored from, if [`connect_source_store_and_topic`]
    /// named one.
    ///
    /// [`connect_source_store_and_topic`]: Self::connect_source_store_and_topic
    pub fn source_changelog(&self, store: &str) -> Option<&str> {
        self.source_changelogs
            .iter()
            .find(|(s, _)| s == store)
            .map(|(_, t)| t.as_str())
    }

    /// The stores, in the order they were added, each with the processors using it.
    pub fn stores(&self) -> impl Iterator<Item = (&StoreSpec, &[String])> {
        self.stores.iter().map(|s| (&s.spec, s.users.as_slice()))
    }

    /// The internal (repartition) topics, undecorated, with their fixed partition counts.
    pub fn internal_topics(&self) -> &[(String, Option<i32>)] {
        &self.internal_topics
    }

    /// The copartitioned source-node groups, one per `copartition_sources` call.
    pub fn copartition_groups(&self) -> &[Vec<String>] {
        &self.copartition_groups
    }

    /// The stores restored from a source topic: store, topic.
    pub fn source_changelogs(&self) -> &[(String, String)] {
        &self.source_changelogs
    }

    fn source_topics(&self) -> impl Iterator<Item = &String> {
        self.nodes.iter().flat_map(|n| match &n.kind {
            NodeKind::Source { topics, .. } => topics.as_slice(),
            _ => &[],
        })
    }

    fn is_internal(&self, topic: &str) -> bool {
        self.internal_topics.iter().any(|(t, _)| t == topic)
    }

    /// Whether `topic` is an internal (repartition) topic of this topology, named without
    /// the application id (`<application.id>-` is put before it on the broker).
    pub fn is_internal_topic(&self, topic: &str) -> bool {
        self.is_internal(topic)
    }

    /// The spec of the store named `name`.
    pub fn store_spec(&self, name: &str) -> Option<&StoreSpec> {
        self.stores
            .iter()
            .find(|s| s.spec.name == name)
            .map(|s| &s.spec)
    }

    fn verify_name(&self, name: &str) -> Result<(), TopologyBuildError> {
        if self.index.contains_key(name) {
            return Err(TopologyBuildError::DuplicateNode(name.to_string()));
        }
        Ok(())
    }

    fn verify_parents(&self, name: &str, parents: &[&str]) -> Result<(), TopologyBuildError> {
        if parents.is_empty() {
            return Err(TopologyBuildError::NoParents(name.to_string()));
        }
        for parent in parents {
            match self.node(parent) {
                None => {
                    return Err(TopologyBuildError::UnknownParent {
                        node: name.to_string(),
                        parent: parent.to_string(),
                    })
                }
                Some(Node {
                    kind: NodeKind::Sink { .. },
                    ..
                }) => return Err(TopologyBuildError::SinkAsParent(parent.to_string())),
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn push(&mut self, name: &str, parents: Vec<String>, kind: NodeKind) {
        let i = self.nodes.len();
        self.index.insert(name.to_string(), i);
        self.union_parent.push(i);
        for parent in &parents {
            let p = self.index[parent.as_str()];
            self.unite(i, p);
        }
        self.nodes.push(Node {
            name: name.to_string(),
            predecessors: parents,
            kind,
        });
    }

    fn connect_store(&mut self, processor: &str, store: &str) -> Result<(), TopologyBuildError> {
        let Some(s) = self.stores.iter().position(|s| s.spec.name == store) else {
            return Err(TopologyBuildError::UnknownStore(store.to_string()));
        };
        let Some(&p) = self.index.get(processor) else {
            return Err(TopologyBuildError::UnknownProcessor(processor.to_string()));
        };
        let NodeKind::Processor { stores } = &mut self.nodes[p].kind else {
            return Err(TopologyBuildError::StoreOnSourceOrSink {
                store: store.to_string(),
                node: processor.to_string(),
            });
        };
        if !stores.iter().any(|x| x == store) {
            stores.push(store.to_string());
        }
        if let Some(first) = self.stores[s].users.first() {
            let u = self.index[first.as_str()];
            self.unite(u, p);
        }
        if !self.stores[s].users.iter().any(|x| x == processor) {
            self.stores[s].users.push(processor.to_string());
        }
        Ok(())
    }

    fn root(&self, mut i: usize) -> usize {
        while self.union_parent[i] != i {
            i = self.union_parent[i];
        }
        i
    }

    fn unite(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.union_parent[rb] = ra;
        }
    }

    /// Java's `makeNodeGroups`: the sub-topologies, numbered in the order their first node was
    /// added, each with its node indexes in the order of Java's `HashSet<String>` of names.
    pub(crate) fn node_groups(&self) -> Vec<Vec<usize>> {
        let mut roots: Vec<usize> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        for i in 0..self.nodes.len() {
            let root = self.root(i);
            let g = match roots.iter().position(|&r| r == root) {
                Some(g) => g,
                None => {
                    roots.push(root);
                    members.push(Vec::new());
                    roots.len() - 1
                }
            };
            members[g].push(i);
        }
        members
            .into_iter()
            .map(|group| {
                let set = super::java_order::string_set(
                    group.iter().map(|&i| self.nodes[i].name.as_str()),
                );
                set.iter().map(|name| self.index[*name]).collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
