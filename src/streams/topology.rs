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
//! * copartition groups rewritten so their indexes point into the *sorted* lists.
//!
//! Java builds copartition groups from hash sets, so it has no defined order for them; here the
//! indexes inside a group are sorted and de-duplicated and the groups are sorted, so at least
//! all members of this library agree.

use std::collections::{BTreeMap, BTreeSet};

use super::task::StreamsTaskId;

/// The topology of a Streams application: what it reads, writes and keeps state in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StreamsTopology {
    /// The subtopologies (independent parts of the processing graph). Each one yields
    /// tasks `(id, 0..n)` where `n` is the largest partition count of its source topics.
    pub subtopologies: Vec<Subtopology>,
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

    /// Adds a copartition group given as indexes.
    pub fn copartition_group(mut self, group: CopartitionGroup) -> Self {
        self.copartition_groups.push(group);
        self
    }

    /// Adds a copartition group given by topic names, resolved against the source topics and
    /// repartition source topics added so far (source topics win, as in Java). Fails if a name
    /// is neither.
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

    /// Normalises one (already validated) subtopology; see the module docs for the order.
    fn normalise(&self) -> Result<Subtopology, TopologyError> {
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
        let repartition_source_topics = sort_infos(&self.repartition_source_topics);
        let state_changelog_topics = sort_infos(&self.state_changelog_topics);

        // Indexes referred to the caller's order; map them through the names to the sorted
        // order. Validation guarantees every index is in range.
        let src_pos: BTreeMap<&str, usize> = source_topics
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let rep_pos: BTreeMap<&str, usize> = repartition_source_topics
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();
        let old_src: Vec<&str> = self.source_topics.iter().map(String::as_str).collect();
        let old_rep: Vec<&str> = self
            .repartition_source_topics
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        let mut copartition_groups = Vec::with_capacity(self.copartition_groups.len());
        for g in &self.copartition_groups {
            copartition_groups.push(CopartitionGroup {
                source_topics: remap(
                    &self.id,
                    &g.source_topics,
                    &old_src,
                    &src_pos,
                    "source_topics",
                )?,
                repartition_source_topics: remap(
                    &self.id,
                    &g.repartition_source_topics,
                    &old_rep,
                    &rep_pos,
                    "repartition_source_topics",
                )?,
            });
        }
        copartition_groups.sort();
        copartition_groups.dedup();

        Ok(Subtopology {
            id: self.id.clone(),
            source_topics,
            repartition_sink_topics,
            repartition_source_topics,
            state_changelog_topics,
            copartition_groups,
        })
    }
}

/// Maps copartition indexes from the caller's list order (`old_names`) to the sorted order
/// (`pos`), then sorts and de-duplicates them.
fn remap(
    subtopology: &str,
    indexes: &[i16],
    old_names: &[&str],
    pos: &BTreeMap<&str, usize>,
    list: &'static str,
) -> Result<Vec<i16>, TopologyError> {
    let mut out = Vec::with_capacity(indexes.len());
    for &index in indexes {
        let new = usize::try_from(index)
            .ok()
            .and_then(|i| old_names.get(i))
            .and_then(|name| pos.get(name).copied())
            .ok_or_else(|| TopologyError::CopartitionIndexOutOfRange {
                subtopology: subtopology.to_string(),
                list,
                index,
                len: old_names.len(),
            })?;
        out.push(index_i16(subtopology, list, new)?);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
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

    /// Validates and returns the normalised topology, in exactly the order it goes on the wire
    /// (see the module docs). Normalising is idempotent, and two topologies that differ only in
    /// list order have equal canonical forms.
    pub fn canonical(&self) -> Result<StreamsTopology, TopologyError> {
        self.validate()?;
        let mut subtopologies = Vec::with_capacity(self.subtopologies.len());
        for s in &self.subtopologies {
            subtopologies.push(s.normalise()?);
        }
        subtopologies.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(StreamsTopology { subtopologies })
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

    /// The topic partitions task `task` processes: partition `task.partition` of every source
    /// and repartition source topic of its subtopology, sorted by topic. Empty if the
    /// subtopology is unknown or the partition negative.
    pub fn partitions_of_task(&self, task: &StreamsTaskId) -> Vec<(String, i32)> {
        if task.partition < 0 {
            return Vec::new();
        }
        match self.subtopology_by_id(&task.subtopology_id) {
            Some(s) => s
                .input_topics()
                .into_iter()
                .map(|t| (t.to_string(), task.partition))
                .collect(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StreamsTopology {
        StreamsTopology::new()
            .subtopology(
                Subtopology::new("1")
                    .repartition_source_topic(
                        TopicInfo::new("app-rep-b")
                            .config("retention.ms", "-1")
                            .config("cleanup.policy", "delete"),
                    )
                    .repartition_source_topic(TopicInfo::new("app-rep-a").partitions(4))
                    .state_changelog_topic(
                        TopicInfo::new("app-store-changelog")
                            .config("b", "2")
                            .config("a", "1"),
                    )
                    .copartition_topics(["app-rep-b", "app-rep-a"])
                    .unwrap(),
            )
            .subtopology(
                Subtopology::new("0")
                    .source_topic("orders")
                    .source_topic("customers")
                    .repartition_sink_topic("app-rep-b")
                    .repartition_sink_topic("app-rep-a")
                    .copartition_topics(["orders", "customers"])
                    .unwrap(),
            )
    }

    #[test]
    fn canonical_sorts_everything_and_remaps_copartition_indexes() {
        let c = sample().canonical().unwrap();
        assert_eq!(c.subtopology_ids(), vec!["0", "1"]);
        let s0 = &c.subtopologies[0];
        assert_eq!(s0.id, "0");
        assert_eq!(s0.source_topics, vec!["customers", "orders"]);
        assert_eq!(s0.repartition_sink_topics, vec!["app-rep-a", "app-rep-b"]);
        // Declared as orders(0), customers(1); after sorting orders is 1, customers 0.
        assert_eq!(
            s0.copartition_groups,
            vec![CopartitionGroup::new(vec![0, 1], vec![])]
        );
        let s1 = &c.subtopologies[1];
        let names: Vec<&str> = s1
            .repartition_source_topics
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(names, vec!["app-rep-a", "app-rep-b"]);
        assert_eq!(s1.repartition_source_topics[0].partitions, 4);
        assert_eq!(
            s1.repartition_source_topics[1].topic_configs,
            vec![
                ("cleanup.policy".to_string(), "delete".to_string()),
                ("retention.ms".to_string(), "-1".to_string())
            ]
        );
        assert_eq!(
            s1.state_changelog_topics[0].topic_configs,
            vec![
                ("a".to_string(), "1".to_string()),
                ("b".to_string(), "2".to_string())
            ]
        );
        assert_eq!(
            s1.copartition_groups,
            vec![CopartitionGroup::new(vec![], vec![0, 1])]
        );
        assert!(c.is_canonical());
        assert!(!sample().is_canonical());
        assert_eq!(c.canonical().unwrap(), c);
    }

    #[test]
    fn copartition_remap_follows_names_not_positions() {
        let t = StreamsTopology::new().subtopology(
            Subtopology::new("0")
                .source_topic("c")
                .source_topic("a")
                .source_topic("b")
                .copartition_group(CopartitionGroup::new(vec![0, 2], vec![])),
        );
        let c = t.canonical().unwrap();
        // c -> 2, b -> 1
        assert_eq!(
            c.subtopologies[0].copartition_groups[0].source_topics,
            vec![1, 2]
        );
    }

    #[test]
    fn defaults_of_topic_info() {
        let t = TopicInfo::new("x");
        assert_eq!((t.partitions, t.replication_factor), (0, -1));
        assert_eq!(
            TopicInfo::new("x").replication_factor(3).replication_factor,
            3
        );
    }

    #[test]
    fn validation_errors() {
        assert_eq!(
            StreamsTopology::new().validate(),
            Err(TopologyError::NoSubtopologies)
        );
        let one = |s: Subtopology| StreamsTopology::new().subtopology(s);
        assert_eq!(
            one(Subtopology::new("").source_topic("a")).validate(),
            Err(TopologyError::EmptySubtopologyId)
        );
        assert_eq!(
            one(Subtopology::new("0")).validate(),
            Err(TopologyError::NoSourceTopics("0".into()))
        );
        assert!(matches!(
            one(Subtopology::new("0").source_topic("")).validate(),
            Err(TopologyError::EmptyTopicName {
                list: "source_topics",
                ..
            })
        ));
        assert!(matches!(
            one(Subtopology::new("0")
                .source_topic("a")
                .repartition_sink_topic(""))
            .validate(),
            Err(TopologyError::EmptyTopicName {
                list: "repartition_sink_topics",
                ..
            })
        ));
        assert!(matches!(
            one(Subtopology::new("0").source_topic("a").source_topic("a")).validate(),
            Err(TopologyError::DuplicateTopic { .. })
        ));
        assert!(matches!(
            one(Subtopology::new("0")
                .source_topic("a")
                .state_changelog_topic(TopicInfo::new("c").config("k", "1").config("k", "2")))
            .validate(),
            Err(TopologyError::DuplicateTopicConfig { .. })
        ));
        assert_eq!(
            one(Subtopology::new("0")
                .source_topic("a")
                .state_changelog_topic(TopicInfo::new("c").partitions(3)))
            .validate(),
            Err(TopologyError::ChangelogPartitionsNotZero {
                subtopology: "0".into(),
                topic: "c".into(),
                partitions: 3
            })
        );
        assert!(matches!(
            one(Subtopology::new("0").repartition_source_topic(TopicInfo::new("r").partitions(-2)))
                .validate(),
            Err(TopologyError::NegativePartitions { .. })
        ));
        for bad in [
            CopartitionGroup::new(vec![1], vec![]),
            CopartitionGroup::new(vec![-1], vec![]),
            CopartitionGroup::new(vec![], vec![0]),
        ] {
            let r = one(Subtopology::new("0")
                .source_topic("a")
                .copartition_group(bad))
            .validate();
            assert!(
                matches!(r, Err(TopologyError::CopartitionIndexOutOfRange { .. })),
                "{r:?}"
            );
            let r = one(Subtopology::new("0")
                .source_topic("a")
                .copartition_group(CopartitionGroup::new(vec![5], vec![])))
            .canonical();
            assert!(r.is_err());
        }
        let dup = StreamsTopology::new()
            .subtopology(Subtopology::new("0").source_topic("a"))
            .subtopology(Subtopology::new("0").source_topic("b"));
        assert_eq!(
            dup.validate(),
            Err(TopologyError::DuplicateSubtopologyId("0".into()))
        );
        assert!(matches!(
            Subtopology::new("0")
                .source_topic("a")
                .copartition_topics(["zzz"]),
            Err(TopologyError::UnknownCopartitionTopic { .. })
        ));
        assert!(sample().validate().is_ok());
    }

    #[test]
    fn partitions_of_task_covers_source_and_repartition_source_topics() {
        let t = StreamsTopology::new().subtopology(
            Subtopology::new("0")
                .source_topic("b")
                .repartition_source_topic(TopicInfo::new("a-rep"))
                .repartition_sink_topic("not-input")
                .state_changelog_topic(TopicInfo::new("not-input-either")),
        );
        assert_eq!(
            t.partitions_of_task(&StreamsTaskId::new("0", 3)),
            vec![("a-rep".to_string(), 3), ("b".to_string(), 3)]
        );
        assert!(t.partitions_of_task(&StreamsTaskId::new("9", 3)).is_empty());
        assert!(t
            .partitions_of_task(&StreamsTaskId::new("0", -1))
            .is_empty());
        assert!(t.contains_subtopology("0"));
        assert!(!t.contains_subtopology("1"));
    }
}
