//! Task offsets a member reports to Kafka 4.4+ brokers (KIP-1071 `TaskOffsets` /
//! `TaskEndOffsets`): per task, the sum of its changelog offsets and of their end offsets.
//! The broker uses them to place warm-up tasks and to promote a warm-up whose lag is within
//! `AcceptableRecoveryLag`.

use std::collections::BTreeMap;

use super::task::StreamsTaskId;
use crate::protocol::api::streams_group_heartbeat::TaskOffset;

/// Offset sums per task, as of one moment.
///
/// ```
/// use kafka_streams_group::{StreamsTaskId, StreamsTaskOffsets};
///
/// let offsets = StreamsTaskOffsets::new()
///     .offset(StreamsTaskId::new("0", 1), 900)
///     .end_offset(StreamsTaskId::new("0", 1), 1000);
/// assert_eq!(offsets.lag(&StreamsTaskId::new("0", 1)), Some(100));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamsTaskOffsets {
    offsets: BTreeMap<StreamsTaskId, i64>,
    end_offsets: BTreeMap<StreamsTaskId, i64>,
}

impl StreamsTaskOffsets {
    /// No offsets.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the offset sum of `task` (replacing an earlier value).
    pub fn offset(mut self, task: StreamsTaskId, offset: i64) -> Self {
        self.offsets.insert(task, offset);
        self
    }

    /// Sets the end offset sum of `task` (replacing an earlier value).
    pub fn end_offset(mut self, task: StreamsTaskId, end_offset: i64) -> Self {
        self.end_offsets.insert(task, end_offset);
        self
    }

    /// The offset sums.
    pub fn offsets(&self) -> &BTreeMap<StreamsTaskId, i64> {
        &self.offsets
    }

    /// The end offset sums.
    pub fn end_offsets(&self) -> &BTreeMap<StreamsTaskId, i64> {
        &self.end_offsets
    }

    /// End offset minus offset, if both are known.
    pub fn lag(&self, task: &StreamsTaskId) -> Option<i64> {
        Some(
            self.end_offsets
                .get(task)?
                .saturating_sub(*self.offsets.get(task)?),
        )
    }

    /// The wire list, sorted by task (deterministic, so "changed since last sent" is exact).
    pub(crate) fn to_wire(&self, end: bool) -> Vec<TaskOffset> {
        let map = if end {
            &self.end_offsets
        } else {
            &self.offsets
        };
        map.iter()
            .map(|(task, offset)| TaskOffset {
                subtopology_id: task.subtopology_id.clone(),
                partition: task.partition,
                offset: *offset,
            })
            .collect()
    }
}
