//! From the node graph to the topology a member sends in its heartbeat, as Java's client
//! derives it (`InternalTopologyBuilder.subtopologyToTopicsInfo`, then
//! `StreamThread.initBrokerTopology`):
//!
//! * one subtopology per node group that reads at least one topic, with id = group number;
//! * source topics: the topics its sources read that are not internal;
//! * repartition source topics: the internal topics its sources read, named
//!   `<application.id>-<topic>`, with Java's repartition configs;
//! * repartition sink topics: the internal topics its sinks write that some subtopology reads;
//! * changelog topics: `<application.id>-<store>-changelog` of every change-logged store one
//!   of its processors uses, with Java's changelog configs;
//! * copartition groups: each `copartition_sources` group, as topic names, in the
//!   subtopology that reads all of them (the model computes Java's wire order).

use super::{NodeKind, SinkTarget, TopologyBuilder};
use crate::topology::{JavaHashSetSizing, StreamsTopology, Subtopology, TopicInfo, TopologyError};

/// What the heartbeat topology depends on besides the graph: the application's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeartbeatTopologyOptions {
    /// `application.id`: the prefix of every internal topic.
    pub application_id: String,
    /// `replication.factor` (Java's default -1: the broker's default).
    pub replication_factor: i16,
    /// `topic.*` settings, without the prefix; they apply to every internal topic and
    /// override the built-in defaults (a store's own changelog configs override them).
    pub topic_defaults: Vec<(String, String)>,
    /// Which Java runtime's `HashSet` sizing orders the copartition groups.
    pub java_hash_set_sizing: JavaHashSetSizing,
}

impl HeartbeatTopologyOptions {
    /// Java's defaults for application `application_id`.
    pub fn new(application_id: impl Into<String>) -> Self {
        Self {
            application_id: application_id.into(),
            replication_factor: -1,
            topic_defaults: Vec::new(),
            java_hash_set_sizing: JavaHashSetSizing::default(),
        }
    }
}

/// Java's `InternalTopicConfig.INTERNAL_TOPIC_DEFAULT_OVERRIDES` plus the repartition ones.
const REPARTITION_DEFAULTS: [(&str, &str); 4] = [
    ("cleanup.policy", "delete"),
    ("message.timestamp.type", "CreateTime"),
    ("retention.ms", "-1"),
    ("segment.bytes", "52428800"),
];

/// The same for an un-windowed, un-versioned store's changelog.
const CHANGELOG_DEFAULTS: [(&str, &str); 2] = [
    ("cleanup.policy", "compact"),
    ("message.timestamp.type", "CreateTime"),
];

/// Library defaults < `topic.*` settings < the topic's own configs, as Java merges them.
fn merged_configs(
    library: &[(&str, &str)],
    defaults: &[(String, String)],
    own: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = library
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in defaults.iter().chain(own) {
        match out.iter_mut().find(|(key, _)| key == k) {
            Some(entry) => entry.1 = v.clone(),
            None => out.push((k.clone(), v.clone())),
        }
    }
    out
}

impl TopologyBuilder {
    /// The topology a Java member of this application sends in its heartbeat, in the
    /// canonical (wire) order. Fails if the result is not a valid topology (no subtopology
    /// reads a topic, a copartition group spans subtopologies, …).
    pub fn streams_topology(
        &self,
        options: &HeartbeatTopologyOptions,
    ) -> Result<StreamsTopology, TopologyError> {
        let decorate = |t: &str| format!("{}-{t}", options.application_id);
        let read_internal: Vec<&str> = self
            .source_topics()
            .map(String::as_str)
            .filter(|t| self.is_internal(t))
            .collect();
        let mut topology =
            StreamsTopology::new().with_java_hash_set_sizing(options.java_hash_set_sizing);
        for (id, group) in self.node_groups().into_iter().enumerate() {
            let mut sub = Subtopology::new(id.to_string());
            for &n in &group {
                let node = &self.nodes[n];
                match &node.kind {
                    NodeKind::Source { topics, .. } => {
                        for t in topics {
                            if let Some((_, partitions)) =
                                self.internal_topics.iter().find(|(x, _)| x == t)
                            {
                                let configs = merged_configs(
                                    &REPARTITION_DEFAULTS,
                                    &options.topic_defaults,
                                    &[],
                                );
                                sub = sub.repartition_source_topic(TopicInfo {
                                    name: decorate(t),
                                    partitions: partitions.unwrap_or(0),
                                    replication_factor: options.replication_factor,
                                    topic_configs: configs,
                                });
                            } else {
                                sub = sub.source_topic(t.clone());
                            }
                        }
                    }
                    NodeKind::Sink {
                        target: SinkTarget::Topic(t),
                    } if read_internal.contains(&t.as_str())
                        && !sub.repartition_sink_topics.contains(&decorate(t)) =>
                    {
                        sub = sub.repartition_sink_topic(decorate(t));
                    }
                    _ => {}
                }
            }
            for store in &self.stores {
                let used_here = store
                    .users
                    .iter()
                    .any(|u| group.iter().any(|&n| &self.nodes[n].name == u));
                let source_topic = self.source_changelog(&store.spec.name);
                if !used_here || (!store.spec.logging_enabled && source_topic.is_none()) {
                    continue;
                }
                // A table store restored from its source topic (`connectSourceStoreAndTopic`)
                // names that topic, undecorated, as its changelog.
                let name = match source_topic {
                    Some(topic) => topic.to_string(),
                    None => format!("{}-{}-changelog", options.application_id, store.spec.name),
                };
                let configs = merged_configs(
                    &CHANGELOG_DEFAULTS,
                    &options.topic_defaults,
                    &store.spec.changelog_configs,
                );
                sub = sub.state_changelog_topic(TopicInfo {
                    name,
                    partitions: 0,
                    replication_factor: options.replication_factor,
                    topic_configs: configs,
                });
            }
            if sub.source_topics.is_empty() && sub.repartition_source_topics.is_empty() {
                continue;
            }
            topology = topology.subtopology(sub);
        }
        self.add_copartition_groups(topology, &decorate)?
            .canonical()
    }

    /// Puts each copartition group into the subtopology that reads all of its topics.
    fn add_copartition_groups(
        &self,
        mut topology: StreamsTopology,
        decorate: &dyn Fn(&str) -> String,
    ) -> Result<StreamsTopology, TopologyError> {
        for group in &self.copartition_groups {
            let topics: Vec<String> = group
                .iter()
                .filter_map(|n| self.node(n))
                .flat_map(|n| match &n.kind {
                    NodeKind::Source { topics, .. } => topics.clone(),
                    _ => Vec::new(),
                })
                .map(|t| {
                    if self.is_internal(&t) {
                        decorate(&t)
                    } else {
                        t
                    }
                })
                .collect();
            let home = topology.subtopologies.iter().position(|s| {
                let inputs = s.input_topics();
                topics.iter().all(|t| inputs.contains(&t.as_str()))
            });
            let Some(home) = home else {
                return Err(TopologyError::CopartitionGroupAcrossSubtopologies { topics });
            };
            let sub = std::mem::take(&mut topology.subtopologies[home]);
            topology.subtopologies[home] = sub.copartition_topics(&topics)?;
        }
        Ok(topology)
    }
}
