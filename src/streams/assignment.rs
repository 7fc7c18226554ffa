//! The cumulative assignment an application sees, and the merge of one heartbeat response
//! into it.
//!
//! Heartbeat responses are deltas: a null (absent) field means "unchanged since the last
//! response". The session therefore keeps one cumulative [`StreamsGroupSessionAssignment`] and
//! merges each response into it with [`StreamsGroupSessionAssignment::apply`]. The merge is all
//! or nothing: a response whose task lists are inconsistent is rejected whole and the previous
//! snapshot stays, so readers never see half of a bad response.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::task::{
    StreamsTaskAssignment, StreamsTaskError, StreamsTaskId, StreamsTaskRole, WireTaskIds,
};
use super::topology::StreamsTopology;

/// An interactive-query endpoint (`application.server`) of a group member.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UserEndpoint {
    /// Host name or address.
    pub host: String,
    /// Port.
    pub port: u16,
}

impl UserEndpoint {
    /// Creates an endpoint.
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        Self {
            host: host.into(),
            port,
        }
    }
}

impl fmt::Display for UserEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// The source partitions (including repartition source topics) served at one endpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointPartitions {
    /// Partitions of active tasks, by topic.
    pub active: BTreeMap<String, BTreeSet<i32>>,
    /// Partitions of standby and warm-up tasks, by topic.
    pub standby: BTreeMap<String, BTreeSet<i32>>,
}

/// One `PartitionsByUserEndpoint` entry of a response, as it comes from the wire.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointPartitionsDelta {
    /// The member's endpoint.
    pub endpoint: UserEndpoint,
    /// `ActivePartitions`: `(topic, partitions)`.
    pub active: Vec<(String, Vec<i32>)>,
    /// `StandbyPartitions`: `(topic, partitions)`.
    pub standby: Vec<(String, Vec<i32>)>,
}

/// A group status code from a heartbeat response (`Status[].StatusCode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamsStatusCode {
    /// 0: the member's topology epoch is behind the group's.
    StaleTopology,
    /// 1: source topics are missing; the group is not ready.
    MissingSourceTopics,
    /// 2: topics are not co-partitioned as required; the group is not ready.
    IncorrectlyPartitionedTopics,
    /// 3: internal topics are missing (the broker tries to create them); not ready.
    MissingInternalTopics,
    /// 4: some member requested a shutdown of the whole application.
    ShutdownApplication,
    /// 5: assignment computation is delayed (4.2+); not ready.
    AssignmentDelayed,
    /// 6: client tags required for rack-aware standby assignment are missing (4.4+, v1).
    MissingClientTags,
    /// A code this library does not know; kept rather than rejected so that newer brokers
    /// do not break older clients.
    Unknown(i8),
}

impl StreamsStatusCode {
    /// Maps a wire code.
    pub fn from_code(code: i8) -> Self {
        match code {
            0 => Self::StaleTopology,
            1 => Self::MissingSourceTopics,
            2 => Self::IncorrectlyPartitionedTopics,
            3 => Self::MissingInternalTopics,
            4 => Self::ShutdownApplication,
            5 => Self::AssignmentDelayed,
            6 => Self::MissingClientTags,
            other => Self::Unknown(other),
        }
    }

    /// The wire code.
    pub fn code(self) -> i8 {
        match self {
            Self::StaleTopology => 0,
            Self::MissingSourceTopics => 1,
            Self::IncorrectlyPartitionedTopics => 2,
            Self::MissingInternalTopics => 3,
            Self::ShutdownApplication => 4,
            Self::AssignmentDelayed => 5,
            Self::MissingClientTags => 6,
            Self::Unknown(c) => c,
        }
    }

    /// Whether this status means the group is not ready to process (codes 1, 2, 3, 5, as in
    /// Java's `StreamsMembershipManager`).
    pub fn blocks_group_readiness(self) -> bool {
        matches!(
            self,
            Self::MissingSourceTopics
                | Self::IncorrectlyPartitionedTopics
                | Self::MissingInternalTopics
                | Self::AssignmentDelayed
        )
    }
}

/// One group status with the broker's human-readable detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsGroupStatus {
    /// The typed code.
    pub code: StreamsStatusCode,
    /// `StatusDetail`, e.g. `"Source topics foo are missing."`.
    pub detail: String,
}

/// The assignment-relevant part of one successful heartbeat response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssignmentDelta {
    /// `MemberEpoch`.
    pub member_epoch: i32,
    /// `HeartbeatIntervalMs`.
    pub heartbeat_interval_ms: i32,
    /// `EndpointInformationEpoch`.
    pub endpoint_information_epoch: i32,
    /// `ActiveTasks`; `None` = unchanged.
    pub active: Option<WireTaskIds>,
    /// `StandbyTasks`; `None` = unchanged.
    pub standby: Option<WireTaskIds>,
    /// `WarmupTasks`; `None` = unchanged.
    pub warmup: Option<WireTaskIds>,
    /// `Status` as `(code, detail)`. The broker recomputes the list on every heartbeat, so
    /// `None` (which 4.1 brokers send when there is no status) means "no statuses".
    pub statuses: Option<Vec<(i8, String)>>,
    /// `PartitionsByUserEndpoint`; `None` = unchanged.
    pub partitions_by_user_endpoint: Option<Vec<EndpointPartitionsDelta>>,
}

/// Why a response delta was not merged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssignmentError {
    /// Some task lists were present and others absent; the broker sends all three or none.
    #[error("response task lists must be all present or all absent (active: {active}, standby: {standby}, warm-up: {warmup})")]
    PartialTaskLists {
        /// Whether `ActiveTasks` was present.
        active: bool,
        /// Whether `StandbyTasks` was present.
        standby: bool,
        /// Whether `WarmupTasks` was present.
        warmup: bool,
    },
    /// The task lists are inconsistent (duplicate, task in two roles, unknown subtopology, …).
    #[error("invalid task assignment in response: {0}")]
    Task(#[from] StreamsTaskError),
}

/// What a successful merge changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The response carried task lists that differ from the previous target.
    pub tasks_changed: bool,
    /// `is_group_ready` flipped.
    pub group_ready_changed: bool,
    /// The status list differs from the previous one.
    pub statuses_changed: bool,
    /// The endpoint map was replaced by a different one.
    pub endpoints_changed: bool,
    /// The member epoch moved.
    pub epoch_changed: bool,
}

impl MergeOutcome {
    /// Whether anything an application observes changed.
    pub fn any(&self) -> bool {
        self.tasks_changed
            || self.group_ready_changed
            || self.statuses_changed
            || self.endpoints_changed
            || self.epoch_changed
    }
}

/// The full, cumulative assignment of one member as the application sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamsGroupSessionAssignment {
    /// Member epoch of the last successful response (0 before the first one).
    pub member_epoch: i32,
    /// Target tasks (active, standby, warm-up) from the broker.
    pub tasks: StreamsTaskAssignment,
    /// Group statuses of the last successful response.
    pub statuses: Vec<StreamsGroupStatus>,
    /// Source partitions per interactive-query endpoint, entries of one endpoint unioned.
    pub partitions_by_user_endpoint: BTreeMap<UserEndpoint, EndpointPartitions>,
    /// Heartbeat interval of the last successful response.
    pub heartbeat_interval_ms: i32,
    /// Endpoint information epoch of the last successful response (-1 before the first).
    pub endpoint_information_epoch: i32,
    /// Whether the group is ready to process: no status of code 1, 2, 3 or 5. False until the
    /// first response.
    pub is_group_ready: bool,
}

impl StreamsGroupSessionAssignment {
    /// The state before any response: epoch 0, no tasks, not ready, endpoint epoch -1.
    pub fn new() -> Self {
        Self {
            endpoint_information_epoch: -1,
            ..Self::default()
        }
    }

    /// The active tasks, sorted.
    pub fn active(&self) -> impl Iterator<Item = &StreamsTaskId> + '_ {
        self.tasks.tasks_with_role(StreamsTaskRole::Active)
    }

    /// The standby tasks, sorted.
    pub fn standby(&self) -> impl Iterator<Item = &StreamsTaskId> + '_ {
        self.tasks.tasks_with_role(StreamsTaskRole::Standby)
    }

    /// The warm-up tasks, sorted.
    pub fn warmup(&self) -> impl Iterator<Item = &StreamsTaskId> + '_ {
        self.tasks.tasks_with_role(StreamsTaskRole::Warmup)
    }

    /// Whether any status asks the whole application to shut down.
    pub fn shutdown_requested(&self) -> bool {
        self.statuses
            .iter()
            .any(|s| s.code == StreamsStatusCode::ShutdownApplication)
    }

    /// Computes the merge of `delta` into `self` without changing `self`.
    ///
    /// Rules: absent task lists keep the previous tasks; task lists must be all present or all
    /// absent; an assignment with a duplicate, a task in two roles or a subtopology not in
    /// `topology` is rejected whole; statuses are replaced (absent = none); the endpoint map
    /// is replaced when present, entries with the same `host:port` unioned; epochs and the
    /// interval are taken from the delta.
    pub fn merged(
        &self,
        delta: &AssignmentDelta,
        topology: &StreamsTopology,
    ) -> Result<(StreamsGroupSessionAssignment, MergeOutcome), AssignmentError> {
        let tasks = match (&delta.active, &delta.standby, &delta.warmup) {
            (None, None, None) => None,
            (Some(a), Some(s), Some(w)) => {
                let t = StreamsTaskAssignment::from_wire(a, s, w)?;
                for id in t.subtopology_ids() {
                    if !topology.contains_subtopology(id) {
                        let task = t
                            .iter()
                            .map(|(task, _)| task)
                            .find(|task| task.subtopology_id == id)
                            .cloned()
                            .unwrap_or_else(|| StreamsTaskId::new(id, 0));
                        return Err(StreamsTaskError::UnknownSubtopology { task }.into());
                    }
                }
                Some(t)
            }
            (a, s, w) => {
                return Err(AssignmentError::PartialTaskLists {
                    active: a.is_some(),
                    standby: s.is_some(),
                    warmup: w.is_some(),
                })
            }
        };

        let statuses: Vec<StreamsGroupStatus> = delta
            .statuses
            .iter()
            .flatten()
            .map(|(code, detail)| StreamsGroupStatus {
                code: StreamsStatusCode::from_code(*code),
                detail: detail.clone(),
            })
            .collect();
        let is_group_ready = !statuses.iter().any(|s| s.code.blocks_group_readiness());

        let endpoints = delta
            .partitions_by_user_endpoint
            .as_ref()
            .map(|entries| union_endpoints(entries));

        let mut out = self.clone();
        let mut outcome = MergeOutcome::default();
        if let Some(t) = tasks {
            outcome.tasks_changed = t != out.tasks;
            out.tasks = t;
        }
        outcome.statuses_changed = statuses != out.statuses;
        out.statuses = statuses;
        outcome.group_ready_changed = is_group_ready != out.is_group_ready;
        out.is_group_ready = is_group_ready;
        if let Some(e) = endpoints {
            outcome.endpoints_changed = e != out.partitions_by_user_endpoint;
            out.partitions_by_user_endpoint = e;
        }
        outcome.epoch_changed = delta.member_epoch != out.member_epoch;
        out.member_epoch = delta.member_epoch;
        out.heartbeat_interval_ms = delta.heartbeat_interval_ms;
        out.endpoint_information_epoch = delta.endpoint_information_epoch;
        Ok((out, outcome))
    }

    /// Merges `delta` into `self` (see [`merged`](Self::merged)). On error `self` is left
    /// exactly as it was.
    pub fn apply(
        &mut self,
        delta: &AssignmentDelta,
        topology: &StreamsTopology,
    ) -> Result<MergeOutcome, AssignmentError> {
        let (next, outcome) = self.merged(delta, topology)?;
        *self = next;
        Ok(outcome)
    }

    /// Forgets the tasks and resets the epoch to 0 (the member was fenced or left). Statuses,
    /// endpoints and the endpoint epoch stay: they describe the group, not this member, and
    /// Java keeps sending the last endpoint epoch across a rejoin.
    pub fn clear_tasks(&mut self) {
        self.tasks = StreamsTaskAssignment::new();
        self.member_epoch = 0;
    }
}

fn union_endpoints(
    entries: &[EndpointPartitionsDelta],
) -> BTreeMap<UserEndpoint, EndpointPartitions> {
    let mut map: BTreeMap<UserEndpoint, EndpointPartitions> = BTreeMap::new();
    for entry in entries {
        let slot = map.entry(entry.endpoint.clone()).or_default();
        for (dst, src) in [
            (&mut slot.active, &entry.active),
            (&mut slot.standby, &entry.standby),
        ] {
            for (topic, partitions) in src {
                dst.entry(topic.clone())
                    .or_default()
                    .extend(partitions.iter().copied());
            }
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::topology::Subtopology;

    fn w(list: &[(&str, &[i32])]) -> WireTaskIds {
        list.iter()
            .map(|(s, p)| (s.to_string(), p.to_vec()))
            .collect()
    }

    fn topo() -> StreamsTopology {
        StreamsTopology::new()
            .subtopology(Subtopology::new("0").source_topic("a"))
            .subtopology(Subtopology::new("1").source_topic("b"))
    }

    fn full(epoch: i32) -> AssignmentDelta {
        AssignmentDelta {
            member_epoch: epoch,
            heartbeat_interval_ms: 5000,
            endpoint_information_epoch: 1,
            active: Some(w(&[("0", &[0, 1])])),
            standby: Some(w(&[("1", &[0])])),
            warmup: Some(vec![]),
            statuses: Some(vec![]),
            partitions_by_user_endpoint: None,
        }
    }

    #[test]
    fn initial_state() {
        let a = StreamsGroupSessionAssignment::new();
        assert_eq!(a.member_epoch, 0);
        assert_eq!(a.endpoint_information_epoch, -1);
        assert!(!a.is_group_ready);
        assert!(a.tasks.is_empty());
    }

    #[test]
    fn null_task_lists_keep_previous_tasks() {
        let mut a = StreamsGroupSessionAssignment::new();
        let o = a.apply(&full(2), &topo()).unwrap();
        assert!(o.tasks_changed && o.epoch_changed && o.group_ready_changed);
        assert_eq!(a.active().count(), 2);
        let delta = AssignmentDelta {
            member_epoch: 2,
            heartbeat_interval_ms: 6000,
            endpoint_information_epoch: 1,
            ..AssignmentDelta::default()
        };
        let o = a.apply(&delta, &topo()).unwrap();
        assert!(!o.any());
        assert_eq!(a.active().count(), 2);
        assert_eq!(a.standby().count(), 1);
        assert_eq!(a.heartbeat_interval_ms, 6000);
    }

    #[test]
    fn partial_task_lists_are_rejected() {
        let mut a = StreamsGroupSessionAssignment::new();
        a.apply(&full(2), &topo()).unwrap();
        let before = a.clone();
        let mut d = full(3);
        d.warmup = None;
        assert_eq!(
            a.apply(&d, &topo()).unwrap_err(),
            AssignmentError::PartialTaskLists {
                active: true,
                standby: true,
                warmup: false
            }
        );
        assert_eq!(a, before);
    }

    #[test]
    fn unknown_subtopology_or_duplicate_rejects_whole_delta() {
        let mut a = StreamsGroupSessionAssignment::new();
        a.apply(&full(2), &topo()).unwrap();
        let before = a.clone();
        let mut d = full(3);
        d.active = Some(w(&[("0", &[0]), ("7", &[1])]));
        d.statuses = Some(vec![(1, "Source topics a are missing.".into())]);
        let e = a.apply(&d, &topo()).unwrap_err();
        assert_eq!(
            e,
            AssignmentError::Task(StreamsTaskError::UnknownSubtopology {
                task: StreamsTaskId::new("7", 1)
            })
        );
        assert_eq!(a, before);
        let mut d = full(3);
        d.standby = Some(w(&[("0", &[1])]));
        assert!(matches!(
            a.apply(&d, &topo()),
            Err(AssignmentError::Task(
                StreamsTaskError::ConflictingRoles { .. }
            ))
        ));
        assert_eq!(a, before);
    }

    #[test]
    fn statuses_drive_readiness_and_null_means_none() {
        let mut a = StreamsGroupSessionAssignment::new();
        let mut d = full(2);
        d.statuses = Some(vec![
            (5, "Assignment delayed".into()),
            (42, "future".into()),
        ]);
        a.apply(&d, &topo()).unwrap();
        assert!(!a.is_group_ready);
        assert_eq!(a.statuses[0].code, StreamsStatusCode::AssignmentDelayed);
        assert_eq!(a.statuses[1].code, StreamsStatusCode::Unknown(42));
        assert_eq!(a.statuses[1].code.code(), 42);
        d.statuses = None;
        let o = a.apply(&d, &topo()).unwrap();
        assert!(o.group_ready_changed && o.statuses_changed);
        assert!(a.is_group_ready);
        assert!(a.statuses.is_empty());
        d.statuses = Some(vec![
            (0, "stale".into()),
            (4, "shutdown".into()),
            (6, "tags".into()),
        ]);
        a.apply(&d, &topo()).unwrap();
        assert!(a.is_group_ready, "0, 4 and 6 do not block readiness");
        assert!(a.shutdown_requested());
        for code in 0..=6 {
            assert_eq!(StreamsStatusCode::from_code(code).code(), code);
        }
    }

    #[test]
    fn endpoints_are_replaced_and_unioned_per_host_port() {
        let mut a = StreamsGroupSessionAssignment::new();
        let ep = |h: &str, p: u16, act: &[(&str, &[i32])], sb: &[(&str, &[i32])]| {
            EndpointPartitionsDelta {
                endpoint: UserEndpoint::new(h, p),
                active: w(act),
                standby: w(sb),
            }
        };
        let mut d = full(2);
        d.partitions_by_user_endpoint = Some(vec![
            ep("h1", 80, &[("a", &[0])], &[]),
            ep("h2", 80, &[("a", &[1])], &[("a", &[0])]),
            ep("h1", 80, &[("a", &[2]), ("b", &[0])], &[("a", &[1])]),
            ep("h1", 81, &[], &[]),
        ]);
        let o = a.apply(&d, &topo()).unwrap();
        assert!(o.endpoints_changed);
        assert_eq!(a.partitions_by_user_endpoint.len(), 3);
        let h1 = &a.partitions_by_user_endpoint[&UserEndpoint::new("h1", 80)];
        assert_eq!(h1.active["a"], BTreeSet::from([0, 2]));
        assert_eq!(h1.active["b"], BTreeSet::from([0]));
        assert_eq!(h1.standby["a"], BTreeSet::from([1]));
        // Absent = unchanged.
        d.partitions_by_user_endpoint = None;
        let o = a.apply(&d, &topo()).unwrap();
        assert!(!o.endpoints_changed);
        assert_eq!(a.partitions_by_user_endpoint.len(), 3);
        // Present = replaced, not merged with the old map.
        d.partitions_by_user_endpoint = Some(vec![ep("h3", 1, &[("a", &[9])], &[])]);
        a.apply(&d, &topo()).unwrap();
        assert_eq!(
            a.partitions_by_user_endpoint
                .keys()
                .cloned()
                .collect::<Vec<_>>(),
            vec![UserEndpoint::new("h3", 1)]
        );
        assert_eq!(UserEndpoint::new("h3", 1).to_string(), "h3:1");
    }

    #[test]
    fn clear_tasks_resets_epoch_and_tasks_only() {
        let mut a = StreamsGroupSessionAssignment::new();
        a.apply(&full(4), &topo()).unwrap();
        a.clear_tasks();
        assert_eq!(a.member_epoch, 0);
        assert!(a.tasks.is_empty());
        assert_eq!(a.endpoint_information_epoch, 1);
        assert!(a.is_group_ready);
    }
}
