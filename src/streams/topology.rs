//! The topology a member declares when it joins a Streams group: the model lives in
//! [`crate::topology`] (its own layer, below this one); this module keeps the old paths
//! (`streams::topology::StreamsTopology`, …) and adds what needs task ids.

use super::task::StreamsTaskId;
pub use crate::topology::{
    CopartitionGroup, JavaHashSetSizing, StreamsTopology, Subtopology, TopicInfo, TopologyError,
};

/// Task-level questions about a topology (they need [`StreamsTaskId`], which lives in this
/// layer, so they cannot sit with the model).
impl StreamsTopology {
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
