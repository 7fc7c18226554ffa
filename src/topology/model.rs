//! The topology a member declares when it joins a Streams group.
//!
//! The broker stores the first topology it receives for a group and compares every later join
//! against it **field by field, list order included**; a difference at the same topology epoch
//! is rejected with `INVALID_REQUEST "Topology updates are not supported yet."`. Two members of
//! one application must therefore send byte-identical topologies, which is why
//! [`StreamsTopology::canonical`] fixes one order for everything, the order Kafka's Java client
//! uses (`StreamsGroupHeartbeatRequestManager.HeartbeatState`):
//!
//! * subtopologies sorted by id;
//! * `source_topics` and `repartition_sink_topics` sorted;
//! * `repartition_source_topics` and `state_changelog_topics` sorted by name, each topic's
//!   `topic_configs` sorted by key;
//! * copartition groups in Java's own order, which is no sort at all but the iteration order of
//!   Java's `HashSet`s (`InternalTopologyBuilder.copartitionGroups()`): groups that share a
//!   topic are merged, duplicates vanish, the groups come in the order of a
//!   `HashSet<Set<String>>` and each group's topics in the order of its `HashSet<String>`,
//!   written as indexes into the *sorted* lists. So `orders` + `customers` goes on the wire as
//!   `[1, 0]`. The order depends on the topic names' `String.hashCode` (emulated exactly), on
//!   the Java runtime for a few topologies ([`JavaHashSetSizing`]) and, for names that share a
//!   hash bucket, on the order Java added them: here the order of the group's indexes (source
//!   topics first), which is the order [`Subtopology::copartition_topics`] was given.
//!   `tests/java_topology_order.rs` checks this against Kafka Streams' own code.

use std::collections::BTreeSet;

use super::java_order::java_copartition_groups;
pub use super::java_order::JavaHashSetSizing;

/// The topology of a Streams application: what it reads, writes and keeps state in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StreamsTopology {
    /// The subtopologies (independent parts of the processing graph). Each one yields
    /// tasks `(id, 0..n)` where `n` is the largest partition count of its source topics.
    pub subtopologies: Vec<Subtopology>,
    /// Which Java runtime's `HashSet` sizing the copartition-group order follows; only
    /// matters for a few topologies (see [`JavaHashSetSizing`]).
    pub java_hash_set_sizing: JavaHashSetSizing,
}

/// One subtopology: a connected part of the processing graph.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Subtopology {
    /// Unique id, as Kafka Streams generates it (`"0"`, `"1"`, …).
    pub id: String,
    /// User topics this subtopology reads.
    pub source_topics: Vec<String>,
    /// Repartition topics this subtopology writes to (read by another subtopology).
    pub repartition_sink_topics: Vec<String>,
    /// Repartition topics this subtopology reads; the broker creates them.
    pub repartition_source_topics: Vec<TopicInfo>,
    /// Changelog topics of this subtopology's state stores; the broker creates them with as
    /// many partitions as the subtopology has tasks, so their `partitions` must be 0.
    pub state_changelog_topics: Vec<TopicInfo>,
    /// Groups of source topics that must have the same number of partitions.
    pub copartition_groups: Vec<CopartitionGroup>,
}

/// An internal topic the broker may have to create.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopicInfo {
    /// Full topic name (e.g. `<application.id>-store-changelog`).
    pub name: String,
    /// Partition count; 0 = let the broker derive it (always 0 for changelogs).
    pub partitions: i32,
    /// Replication factor; -1 (the default, as Kafka Streams sends it) or 0 = broker default.
    pub replication_factor: i16,
    /// Topic-level configs (`cleanup.policy`, `retention.ms`, …).
    pub topic_configs: Vec<(String, String)>,
}

/// Topics that must be co-partitioned, as indexes into the owning subtopology's
/// `source_topics` and `repartition_source_topics` lists.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CopartitionGroup {
    /// Indexes into [`Subtopology::source_topics`].
    pub source_topics: Vec<i16>,
    /// Indexes into [`Subtopology::repartition_source_topics`].
    pub repartition_source_topics: Vec<i16>,
}

/// Why a topology was rejected by [`StreamsTopology::validate`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// The topology has no subtopology; the broker requires a non-empty topology.
    #[error("the topology has no subtopologies")]
    NoSubtopologies,
    /// A subtopology id is empty.
    #[error("a subtopology has an empty id")]
    EmptySubtopologyId,
    /// Two subtopologies share an id.
    #[error("subtopology id {0:?} is used more than once")]
    DuplicateSubtopologyId(String),
    /// A subtopology reads no topic at all, so it would have no tasks.
    #[error("subtopology {0:?} has no source or repartition source topic")]
    NoSourceTopics(String),
    /// A topic name is empty.
    #[error("subtopology {subtopology:?} has an empty topic name in {list}")]
    EmptyTopicName {
        /// The subtopology.
        subtopology: String,
        /// Which list (`source_topics`, …).
        list: &'static str,
    },
    /// A topic appears twice in one list.
    #[error("subtopology {subtopology:?} lists topic {topic:?} twice in {list}")]
    DuplicateTopic {
        /// The subtopology.
        subtopology: String,
        /// Which list.
        list: &'static str,
        /// The topic.
        topic: String,
    },
    /// A topic config key appears twice.
    #[error("topic {topic:?} sets config {key:?} twice")]
    DuplicateTopicConfig {
        /// The topic.
        topic: String,
        /// The key.
        key: String,
    },
    /// A changelog topic declares a partition count; the broker rejects that with
    /// `STREAMS_INVALID_TOPOLOGY`.
    #[error("changelog topic {topic:?} of subtopology {subtopology:?} declares {partitions} partitions; must be 0")]
    ChangelogPartitionsNotZero {
        /// The subtopology.
        subtopology: String,
        /// The changelog topic.
        topic: String,
        /// The declared count.
        partitions: i32,
    },
    /// A repartition topic declares a negative partition count.
    #[error("topic {topic:?} of subtopology {subtopology:?} declares {partitions} partitions")]
    NegativePartitions {
        /// The subtopology.
        subtopology: String,
        /// The topic.
        topic: String,
        /// The declared count.
        partitions: i32,
    },
    /// A copartition group index does not point into its list.
    #[error("subtopology {subtopology:?}: copartition index {index} is out of range for {list} (length {len})")]
    CopartitionIndexOutOfRange {
        /// The subtopology.
        subtopology: String,
        /// `source_topics` or `repartition_source_topics`.
        list: &'static str,
        /// The bad index.
        index: i16,
        /// The list's length.
        len: usize,
    },
    /// After Java's merging of copartition groups that share a topic, a group's topics are
    /// not all read by one single subtopology (Java fails such a topology with
    /// `IllegalStateException: Not all copartition groups were converted to broker topology`).
    #[error("copartition group {topics:?} is not read by exactly one subtopology; a topic may be copartitioned only within the subtopology that reads it")]
    CopartitionGroupAcrossSubtopologies {
        /// The merged group's topics.
        topics: Vec<String>,
    },
    /// A topic named for co-partitioning is neither a source nor a repartition source topic of
    /// the subtopology.
    #[error("subtopology {subtopology:?}: copartitioned topic {topic:?} is not one of its source topics")]
    UnknownCopartitionTopic {
        /// The subtopology.
        subtopology: String,
        /// The topic.
        topic: String,
    },
}

impl TopicInfo {
    /// A topic with broker-chosen partitions (0), default replication (-1) and no configs.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            partitions: 0,
            replication_factor: -1,
            topic_configs: Vec::new(),
        }
    }

    /// Sets a fixed partition count (repartition topics only; changelogs must keep 0).
    pub fn partitions(mut self, partitions: i32) -> Self {
        self.partitions = partitions;
        self
    }

    /// Sets the replication factor.
    pub fn replication_factor(mut self, replication_factor: i16) -> Self {
        self.replication_factor = replication_factor;
        self
    }

    /// Adds a topic config.
    pub fn config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.topic_configs.push((key.into(), value.into()));
        self
    }
}

impl CopartitionGroup {
    /// A group from explicit indexes.
    pub fn new(source_topics: Vec<i16>, repartition_source_topics: Vec<i16>) -> Self {
        Self {
            source_topics,
            repartition_source_topics,
        }
    }
}

impl Subtopology {
    /// An empty subtopology with the given id.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ..Self::default()
        }
    }

    /// Adds a source topic.
    pub fn source_topic(mut self, name: impl Into<String>) -> Self {
        self.source_topics.push(name.into());
        self
    }

    /// Adds a repartition topic this subtopology writes.
    pub fn repartition_sink_topic(mut self, name: impl Into<String>) -> Self {
        self.repartition_sink_topics.push(name.into());
        self
    }

    /// Adds a repartition topic this subtopology reads.
    pub fn repartition_source_topic(mut self, topic: TopicInfo) -> Self {
        self.repartition_source_topics.push(topic);
        self
    }

    /// Adds a state changelog topic.
    pub fn state_changelog_topic(mut self, topic: TopicInfo) -> Self {
        self.state_changelog_topics.push(topic);
        self
    }

    /// Adds a copartition group given as indexes (into the lists as declared, before
    /// [`StreamsTopology::canonical`] sorts them). The order of the indexes, source topics
    /// first, is the order Java is assumed to have added the topics; see
    /// [`Subtopology::copartition_topics`].
    pub fn copartition_group(mut self, group: CopartitionGroup) -> Self {
        self.copartition_groups.push(group);
        self
    }

    /// Adds a copartition group given by topic names, resolved against the source topics and
    /// repartition source topics added so far (source topics win, as in Java). Fails if a name
    /// is neither.
    ///
    /// The order of the groups and of the names does not decide the wire order:
    /// [`StreamsTopology::canonical`] computes Java's. The one exception is two names of one
    /// group with the same Java `HashSet` bucket, which Java keeps in the order it added them
    /// (the order of its source nodes): give them in that order (source topics before
    /// repartition topics). If they are the wrong way round, the broker refuses the member and
    /// the error says the copartition groups differ.
    pub fn copartition_topics<I, S>(mut self, names: I) -> Result<Self, TopologyError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut group = CopartitionGroup::default();
        for name in names {
            let name = name.as_ref();
            if let Some(i) = self.source_topics.iter().position(|t| t == name) {
                group
                    .source_topics
                    .push(index_i16(&self.id, "source_topics", i)?);
            } else if let Some(i) = self
                .repartition_source_topics
                .iter()
                .position(|t| t.name == name)
            {
                group.repartition_source_topics.push(index_i16(
                    &self.id,
                    "repartition_source_topics",
                    i,
                )?);
            } else {
                return Err(TopologyError::UnknownCopartitionTopic {
                    subtopology: self.id.clone(),
                    topic: name.to_string(),
                });
            }
        }
        self.copartition_groups.push(group);
        Ok(self)
    }

    /// Every topic whose partition `p` belongs to task `(id, p)`: the source topics and the
    /// repartition source topics, sorted.
    pub fn input_topics(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self
            .source_topics
            .iter()
            .map(String::as_str)
            .chain(
                self.repartition_source_topics
                    .iter()
                    .map(|t| t.name.as_str()),
            )
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    fn validate(&self) -> Result<(), TopologyError> {
        if self.id.is_empty() {
            return Err(TopologyError::EmptySubtopologyId);
        }
        if self.source_topics.is_empty() && self.repartition_source_topics.is_empty() {
            return Err(TopologyError::NoSourceTopics(self.id.clone()));
        }
        let names = |list: &'static str, it: &mut dyn Iterator<Item = &str>| {
            let mut seen = BTreeSet::new();
            for name in it {
                if name.is_empty() {
                    return Err(TopologyError::EmptyTopicName {
                        subtopology: self.id.clone(),
                        list,
                    });
                }
                if !seen.insert(name) {
                    return Err(TopologyError::DuplicateTopic {
                        subtopology: self.id.clone(),
                        list,
                        topic: name.to_string(),
                    });
                }
            }
            Ok(())
        };
        names(
            "source_topics",
            &mut self.source_topics.iter().map(String::as_str),
        )?;
        names(
            "repartition_sink_topics",
            &mut self.repartition_sink_topics.iter().map(String::as_str),
        )?;
        names(
            "repartition_source_topics",
            &mut self
                .repartition_source_topics
                .iter()
                .map(|t| t.name.as_str()),
        )?;
        names(
            "state_changelog_topics",
            &mut self.state_changelog_topics.iter().map(|t| t.name.as_str()),
        )?;
        for topic in self
            .repartition_source_topics
            .iter()
            .chain(&self.state_changelog_topics)
        {
            let mut keys = BTreeSet::new();
            for (k, _) in &topic.topic_configs {
                if !keys.insert(k.as_str()) {
                    return Err(TopologyError::DuplicateTopicConfig {
                        topic: topic.name.clone(),
                        key: k.clone(),
                    });
                }
            }
        }
        for topic in &self.repartition_source_topics {
            if topic.partitions < 0 {
                return Err(TopologyError::NegativePartitions {
                    subtopology: self.id.clone(),
                    topic: topic.name.clone(),
                    partitions: topic.partitions,
                });
            }
        }
        for topic in &self.state_changelog_topics {
            if topic.partitions != 0 {
                return Err(TopologyError::ChangelogPartitionsNotZero {
                    subtopology: self.id.clone(),
                    topic: topic.name.clone(),
                    partitions: topic.partitions,
                });
            }
        }
        for group in &self.copartition_groups {
            for (list, indexes, len) in [
                (
                    "source_topics",
                    &group.source_topics,
                    self.source_topics.len(),
                ),
                (
                    "repartition_source_topics",
                    &group.repartition_source_topics,
                    self.repartition_source_topics.len(),
                ),
            ] {
                for &index in indexes {
                    if usize::try_from(index).map_or(true, |i| i >= len) {
                        return Err(TopologyError::CopartitionIndexOutOfRange {
                            subtopology: self.id.clone(),
                            list,
                            index,
                            len,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Sorts the lists of one (already validated) subtopology; see the module docs for the
    /// order. Copartition groups are left empty: they depend on the whole topology
    /// ([`StreamsTopology::canonical`] fills them in).
    fn sorted_lists(&self) -> Subtopology {
        let mut source_topics = self.source_topics.clone();
        source_topics.sort();
        let mut repartition_sink_topics = self.repartition_sink_topics.clone();
        repartition_sink_topics.sort();
        let sort_infos = |infos: &[TopicInfo]| {
            let mut v: Vec<TopicInfo> = infos
                .iter()
                .map(|t| {
                    let mut t = t.clone();
                    t.topic_configs.sort_by(|a, b| a.0.cmp(&b.0));
                    t
                })
                .collect();
            v.sort_by(|a, b| a.name.cmp(&b.name));
            v
        };
        Subtopology {
            id: self.id.clone(),
            source_topics,
            repartition_sink_topics,
            repartition_source_topics: sort_infos(&self.repartition_source_topics),
            state_changelog_topics: sort_infos(&self.state_changelog_topics),
            copartition_groups: Vec::new(),
        }
    }

    /// The declared copartition groups as topic names: each group's source topics in the
    /// order of its indexes, then its repartition source topics. Validation guarantees every
    /// index is in range.
    fn declared_copartition_names(&self) -> Vec<Vec<&str>> {
        self.copartition_groups
            .iter()
            .map(|g| {
                let sources = g.source_topics.iter().filter_map(|&i| {
                    let i = usize::try_from(i).ok()?;
                    self.source_topics.get(i).map(String::as_str)
                });
                let repartitions = g.repartition_source_topics.iter().filter_map(|&i| {
                    let i = usize::try_from(i).ok()?;
                    self.repartition_source_topics
                        .get(i)
                        .map(|t| t.name.as_str())
                });
                sources.chain(repartitions).collect()
            })
            .collect()
    }

    /// Whether every topic of `names` is a source or repartition source topic here.
    fn reads_all(&self, names: &[&str]) -> bool {
        names.iter().all(|n| {
            self.source_topics.iter().any(|t| t == n)
                || self.repartition_source_topics.iter().any(|t| t.name == *n)
        })
    }

    /// A copartition group (topic names in Java's order) as indexes into this (sorted)
    /// subtopology's lists; a name that is both a source and a repartition source topic
    /// counts as a source topic, as in Java.
    fn group_indexes(&self, names: &[&str]) -> Result<CopartitionGroup, TopologyError> {
        let mut group = CopartitionGroup::default();
        for name in names {
            if let Some(i) = self.source_topics.iter().position(|t| t == name) {
                group
                    .source_topics
                    .push(index_i16(&self.id, "source_topics", i)?);
            } else if let Some(i) = self
                .repartition_source_topics
                .iter()
                .position(|t| t.name == *name)
            {
                group.repartition_source_topics.push(index_i16(
                    &self.id,
                    "repartition_source_topics",
                    i,
                )?);
            }
        }
        Ok(group)
    }
}

fn index_i16(subtopology: &str, list: &'static str, i: usize) -> Result<i16, TopologyError> {
    i16::try_from(i).map_err(|_| TopologyError::CopartitionIndexOutOfRange {
        subtopology: subtopology.to_string(),
        list,
        index: i16::MAX,
        len: i,
    })
}

impl StreamsTopology {
    /// An empty topology (invalid until a subtopology is added).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a subtopology.
    pub fn subtopology(mut self, subtopology: Subtopology) -> Self {
        self.subtopologies.push(subtopology);
        self
    }

    /// Checks what the broker (and common sense) requires: at least one subtopology, unique
    /// non-empty ids, each subtopology reading at least one topic, non-empty and non-repeated
    /// topic names, no repeated config key, changelog partitions 0, repartition partitions not
    /// negative, copartition indexes in range.
    pub fn validate(&self) -> Result<(), TopologyError> {
        if self.subtopologies.is_empty() {
            return Err(TopologyError::NoSubtopologies);
        }
        let mut ids = BTreeSet::new();
        for s in &self.subtopologies {
            s.validate()?;
            if !ids.insert(s.id.as_str()) {
                return Err(TopologyError::DuplicateSubtopologyId(s.id.clone()));
            }
        }
        Ok(())
    }

    /// Validates and returns the normalised topology, in exactly the order a Java member of
    /// the same application puts on the wire (see the module docs). Normalising is
    /// idempotent, and two topologies that differ only in the order of their lists have equal
    /// canonical forms (except the order of topics inside one copartition group, which Java
    /// keeps for names that share a hash bucket).
    pub fn canonical(&self) -> Result<StreamsTopology, TopologyError> {
        self.validate()?;
        let declared: Vec<Vec<&str>> = self
            .subtopologies
            .iter()
            .flat_map(Subtopology::declared_copartition_names)
            .collect();
        let groups = java_copartition_groups(&declared, self.java_hash_set_sizing);
        let mut subtopologies: Vec<Subtopology> = self
            .subtopologies
            .iter()
            .map(Subtopology::sorted_lists)
            .collect();
        for names in &groups {
            // Java places a group in every subtopology that reads all its topics and insists
            // that this is exactly one (the groups are disjoint per subtopology otherwise).
            let homes: Vec<usize> = (0..subtopologies.len())
                .filter(|&i| subtopologies[i].reads_all(names))
                .collect();
            let [home] = homes[..] else {
                return Err(TopologyError::CopartitionGroupAcrossSubtopologies {
                    topics: names.iter().map(|n| n.to_string()).collect(),
                });
            };
            let group = subtopologies[home].group_indexes(names)?;
            subtopologies[home].copartition_groups.push(group);
        }
        subtopologies.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(StreamsTopology {
            subtopologies,
            java_hash_set_sizing: self.java_hash_set_sizing,
        })
    }

    /// Follows the `HashSet` sizing of this Java runtime when ordering copartition groups (the
    /// default, JDK 19 and later, fits Java 21 and 25; see [`JavaHashSetSizing`]).
    pub fn with_java_hash_set_sizing(mut self, sizing: JavaHashSetSizing) -> Self {
        self.java_hash_set_sizing = sizing;
        self
    }

    /// Whether `self` is valid and already in canonical order.
    pub fn is_canonical(&self) -> bool {
        self.canonical().is_ok_and(|c| &c == self)
    }

    /// The subtopology with this id.
    pub fn subtopology_by_id(&self, id: &str) -> Option<&Subtopology> {
        self.subtopologies.iter().find(|s| s.id == id)
    }

    /// Whether a subtopology with this id exists.
    pub fn contains_subtopology(&self, id: &str) -> bool {
        self.subtopology_by_id(id).is_some()
    }

    /// The subtopology ids, sorted.
    pub fn subtopology_ids(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.subtopologies.iter().map(|s| s.id.as_str()).collect();
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests;
