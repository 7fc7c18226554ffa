//! Where two topologies differ: the broker refuses a member whose topology is not the one it
//! stored for the group (`INVALID_REQUEST "Topology updates are not supported yet."`) without
//! saying where; [`StreamsTopology::first_difference`] names the first differing field, in wire
//! order, so the error can say what to change.

use std::fmt;

use super::model::{StreamsTopology, Subtopology, TopicInfo};

/// The first field in which two topologies differ (see [`StreamsTopology::first_difference`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyDifference {
    /// The field, as a path in wire order: `subtopologies`, or `subtopology "0" source_topics`,
    /// `subtopology "1" state_changelog_topics "app-store-changelog" topic_configs`, …
    pub field: String,
    /// The value in `self` (e.g. this member's topology), debug-formatted.
    pub ours: String,
    /// The value in the other topology (e.g. the group's stored one), debug-formatted.
    pub theirs: String,
}

impl fmt::Display for TopologyDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: this member has {}, the group has {}",
            self.field, self.ours, self.theirs
        )
    }
}

fn differ<T: fmt::Debug + PartialEq>(
    field: String,
    ours: &T,
    theirs: &T,
) -> Option<TopologyDifference> {
    (ours != theirs).then(|| TopologyDifference {
        field,
        ours: format!("{ours:?}"),
        theirs: format!("{theirs:?}"),
    })
}

fn topic_list_difference(
    at: &str,
    list: &str,
    ours: &[TopicInfo],
    theirs: &[TopicInfo],
) -> Option<TopologyDifference> {
    let names = |v: &[TopicInfo]| v.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    if let Some(d) = differ(format!("{at} {list}"), &names(ours), &names(theirs)) {
        return Some(d);
    }
    ours.iter().zip(theirs).find_map(|(o, t)| {
        let at = format!("{at} {list} {:?}", o.name);
        differ(format!("{at} partitions"), &o.partitions, &t.partitions)
            .or_else(|| {
                differ(
                    format!("{at} replication_factor"),
                    &o.replication_factor,
                    &t.replication_factor,
                )
            })
            .or_else(|| {
                differ(
                    format!("{at} topic_configs"),
                    &o.topic_configs,
                    &t.topic_configs,
                )
            })
    })
}

fn subtopology_difference(o: &Subtopology, t: &Subtopology) -> Option<TopologyDifference> {
    let at = format!("subtopology {:?}", o.id);
    differ(
        format!("{at} source_topics"),
        &o.source_topics,
        &t.source_topics,
    )
    .or_else(|| {
        differ(
            format!("{at} repartition_sink_topics"),
            &o.repartition_sink_topics,
            &t.repartition_sink_topics,
        )
    })
    .or_else(|| {
        topic_list_difference(
            &at,
            "repartition_source_topics",
            &o.repartition_source_topics,
            &t.repartition_source_topics,
        )
    })
    .or_else(|| {
        topic_list_difference(
            &at,
            "state_changelog_topics",
            &o.state_changelog_topics,
            &t.state_changelog_topics,
        )
    })
    .or_else(|| {
        differ(
            format!("{at} copartition_groups"),
            &o.copartition_groups,
            &t.copartition_groups,
        )
    })
}

impl StreamsTopology {
    /// The first field, in wire order, in which `self` and `other` differ, or `None` if they
    /// are equal field by field (as the broker compares them). Compare canonical forms
    /// ([`StreamsTopology::canonical`]): list order counts.
    pub fn first_difference(&self, other: &StreamsTopology) -> Option<TopologyDifference> {
        let ids = |t: &StreamsTopology| {
            t.subtopologies
                .iter()
                .map(|s| s.id.clone())
                .collect::<Vec<_>>()
        };
        if let Some(d) = differ("subtopologies".to_string(), &ids(self), &ids(other)) {
            return Some(d);
        }
        self.subtopologies
            .iter()
            .zip(&other.subtopologies)
            .find_map(|(o, t)| subtopology_difference(o, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::CopartitionGroup;

    fn topo(changelog_cfg: &str, group: Vec<i16>) -> StreamsTopology {
        StreamsTopology::new().subtopology(
            Subtopology::new("0")
                .source_topic("customers")
                .source_topic("orders")
                .state_changelog_topic(
                    TopicInfo::new("app-changelog").config("cleanup.policy", changelog_cfg),
                )
                .copartition_group(CopartitionGroup::new(group, vec![])),
        )
    }

    #[test]
    fn names_the_first_differing_field() {
        assert_eq!(
            topo("compact", vec![1, 0]).first_difference(&topo("compact", vec![1, 0])),
            None
        );
        let d = topo("compact", vec![0, 1])
            .first_difference(&topo("compact", vec![1, 0]))
            .unwrap();
        assert_eq!(d.field, "subtopology \"0\" copartition_groups");
        let d = topo("delete", vec![0, 1])
            .first_difference(&topo("compact", vec![1, 0]))
            .unwrap();
        assert_eq!(
            d.field,
            "subtopology \"0\" state_changelog_topics \"app-changelog\" topic_configs"
        );
        assert!(d.to_string().contains("\"delete\""), "{d}");
        let other = StreamsTopology::new().subtopology(Subtopology::new("1").source_topic("x"));
        assert_eq!(
            topo("compact", vec![])
                .first_difference(&other)
                .unwrap()
                .field,
            "subtopologies"
        );
        let mut fewer = topo("compact", vec![]);
        fewer.subtopologies[0].source_topics.pop();
        assert_eq!(
            topo("compact", vec![])
                .first_difference(&fewer)
                .unwrap()
                .field,
            "subtopology \"0\" source_topics"
        );
    }
}
