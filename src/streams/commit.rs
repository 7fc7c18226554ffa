//! Offset commits and fetches of a Streams member, without I/O: which partitions belong to
//! which task, the OffsetCommit / OffsetFetch requests a member sends, and what the answers
//! mean. The blocking calls live in `session::commit`.
//!
//! A task `(subtopology, p)` reads partition `p` of every source topic and repartition source
//! topic of its subtopology; those are the partitions it commits. The coordinator accepts a
//! commit only from a current member with its member epoch (`StreamsGroup#validateOffsetCommit`,
//! OffsetCommit v9+), and a fetch only with the member's exact current epoch.

use std::collections::{BTreeMap, BTreeSet};

use crate::protocol::api::offset_commit::{
    OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    OffsetCommitResponse,
};
use crate::protocol::api::offset_fetch::{
    OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchResponse,
};
use crate::protocol::BrokerErrorKind;

pub use crate::common::TopicPartition;

use super::task::{StreamsTaskAssignment, StreamsTaskId, StreamsTaskRole};
use super::topology::StreamsTopology;

/// The lowest OffsetCommit version the coordinator accepts from a Streams member.
pub const MIN_STREAMS_OFFSET_COMMIT_VERSION: i16 = 9;
/// The highest OffsetCommit / OffsetFetch version used: v10 names topics by id, which this
/// library does not track, so v9 is the newest that fits (every 4.2+ broker offers it).
pub const MAX_OFFSET_API_VERSION: i16 = 9;

/// An offset to commit: the offset of the **next** record to process, as in Kafka.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitOffset {
    /// The next offset to consume.
    pub offset: i64,
    /// Leader epoch of the record at `offset - 1` (or of the position), if known.
    pub leader_epoch: Option<i32>,
    /// Metadata stored with the offset (`None` is stored as `""`).
    pub metadata: Option<String>,
}

impl CommitOffset {
    /// `offset` without leader epoch or metadata.
    pub fn new(offset: i64) -> Self {
        Self {
            offset,
            leader_epoch: None,
            metadata: None,
        }
    }

    /// Sets the leader epoch.
    pub fn leader_epoch(mut self, epoch: i32) -> Self {
        self.leader_epoch = Some(epoch);
        self
    }

    /// Sets free-form metadata.
    pub fn metadata(mut self, metadata: impl Into<String>) -> Self {
        self.metadata = Some(metadata.into());
        self
    }

    /// Sets the metadata Kafka Streams writes and reads back when it takes the task over
    /// (`TopicPartitionMetadata` v2: magic 2, the partition time in ms, no processor
    /// metadata; base64): a Java instance resuming the partition then starts from this
    /// partition time instead of -1.
    ///
    /// ```
    /// use kafka_streams_group::streams::commit::CommitOffset;
    /// let o = CommitOffset::new(42).partition_time(1_700_000_000_000);
    /// assert_eq!(o.metadata.as_deref(), Some("AgAAAYvP5WgA"));
    /// ```
    pub fn partition_time(self, partition_time_ms: i64) -> Self {
        let mut raw = [0u8; 9];
        raw[0] = 2;
        raw[1..].copy_from_slice(&partition_time_ms.to_be_bytes());
        self.metadata(crate::common::base64::encode(&raw))
    }
}

/// An offset without leader epoch or metadata ([`CommitOffset::new`]).
impl From<i64> for CommitOffset {
    fn from(offset: i64) -> Self {
        CommitOffset::new(offset)
    }
}

/// A committed offset as the coordinator returned it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommittedOffset {
    /// The committed offset (the next record to process).
    pub offset: i64,
    /// Its leader epoch, if one was committed.
    pub leader_epoch: Option<i32>,
    /// Its metadata (`""` if none was given).
    pub metadata: String,
}

/// What a blocking commit achieved. Transport failures and timeouts are errors instead.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum OffsetCommitOutcome {
    /// Every partition was committed, with `member_epoch`; `stale_epoch_retries` commits were
    /// answered STALE_MEMBER_EPOCH first and resent once the heartbeat brought a new epoch.
    Committed {
        /// The member epoch the accepted commit carried.
        member_epoch: i32,
        /// How many attempts were answered STALE_MEMBER_EPOCH before this one.
        stale_epoch_retries: u32,
        /// How many partitions were committed.
        partitions: usize,
    },
    /// Some partitions do not belong to an active task the member owns: nothing was sent.
    NotOwned {
        /// The partitions that are not owned.
        partitions: Vec<TopicPartition>,
    },
    /// The coordinator no longer knows the member (UNKNOWN_MEMBER_ID) or fenced its epoch
    /// (FENCED_MEMBER_EPOCH): nothing was committed and the member's tasks are lost; do not
    /// commit them again, the heartbeat rejoins and the application gets new tasks.
    MemberFenced {
        /// The broker's answer.
        error: BrokerErrorKind,
        /// The epoch the refused commit carried.
        member_epoch: i32,
    },
    /// The broker refused some partitions (e.g. OFFSET_METADATA_TOO_LARGE,
    /// UNKNOWN_TOPIC_OR_PARTITION, an authorization error); the others were committed.
    PartitionErrors {
        /// Committed partitions.
        committed: Vec<TopicPartition>,
        /// Refused partitions with the broker's error.
        failed: Vec<(TopicPartition, BrokerErrorKind)>,
    },
}

impl OffsetCommitOutcome {
    /// True if every partition was committed.
    pub fn is_committed(&self) -> bool {
        matches!(self, Self::Committed { .. })
    }
}

/// What a blocking fetch of committed offsets returned.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum OffsetFetchOutcome {
    /// Per partition the committed offset, `None` where nothing is committed.
    Fetched(BTreeMap<TopicPartition, Option<CommittedOffset>>),
    /// Some partitions do not belong to an active task assigned to (or owned by) the member:
    /// nothing was sent.
    NotAssigned {
        /// The partitions that are not assigned.
        partitions: Vec<TopicPartition>,
    },
    /// UNKNOWN_MEMBER_ID or FENCED_MEMBER_EPOCH: the member's tasks are lost.
    MemberFenced {
        /// The broker's answer.
        error: BrokerErrorKind,
    },
    /// The broker answered an error for some partitions (after retrying the retriable ones,
    /// such as UNSTABLE_OFFSET_COMMIT, until the deadline).
    PartitionErrors {
        /// The partitions that were answered.
        fetched: BTreeMap<TopicPartition, Option<CommittedOffset>>,
        /// The partitions answered with an error.
        failed: Vec<(TopicPartition, BrokerErrorKind)>,
    },
}

/// The input partitions of `task`: partition `task.partition` of every source topic and
/// repartition source topic of its subtopology (empty for an unknown subtopology).
pub fn task_partitions(topology: &StreamsTopology, task: &StreamsTaskId) -> Vec<TopicPartition> {
    topology
        .subtopologies
        .iter()
        .filter(|s| s.id == task.subtopology_id)
        .flat_map(|s| {
            s.source_topics
                .iter()
                .cloned()
                .chain(s.repartition_source_topics.iter().map(|t| t.name.clone()))
        })
        .map(|topic| TopicPartition::new(topic, task.partition))
        .collect()
}

/// The partitions of `partitions` that no active task in `tasks` reads.
pub fn partitions_not_in<'a>(
    topology: &StreamsTopology,
    tasks: impl IntoIterator<Item = &'a StreamsTaskAssignment>,
    partitions: impl IntoIterator<Item = &'a TopicPartition>,
) -> Vec<TopicPartition> {
    let mut covered = BTreeSet::new();
    for assignment in tasks {
        for task in assignment.tasks_with_role(StreamsTaskRole::Active) {
            covered.extend(task_partitions(topology, task));
        }
    }
    partitions
        .into_iter()
        .filter(|tp| !covered.contains(*tp))
        .cloned()
        .collect()
}

/// The OffsetCommit a member sends (v9: topics by name).
pub fn commit_request(
    group_id: &str,
    member_id: &str,
    member_epoch: i32,
    instance_id: Option<&str>,
    offsets: &BTreeMap<TopicPartition, CommitOffset>,
) -> OffsetCommitRequest {
    let mut topics: Vec<OffsetCommitRequestTopic> = Vec::new();
    for (tp, o) in offsets {
        if topics.last().is_none_or(|t| t.name != tp.topic) {
            topics.push(OffsetCommitRequestTopic {
                name: tp.topic.clone(),
                ..Default::default()
            });
        }
        if let Some(t) = topics.last_mut() {
            t.partitions.push(OffsetCommitRequestPartition {
                partition_index: tp.partition,
                committed_offset: o.offset,
                committed_leader_epoch: o.leader_epoch.unwrap_or(-1),
                committed_metadata: Some(o.metadata.clone().unwrap_or_default()),
            });
        }
    }
    OffsetCommitRequest {
        group_id: group_id.to_string(),
        generation_id_or_member_epoch: member_epoch,
        member_id: member_id.to_string(),
        group_instance_id: instance_id.map(str::to_string),
        topics,
        ..Default::default()
    }
}

/// What one OffsetCommit answer means for the retry loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommitAnswer {
    /// Every partition committed.
    Committed,
    /// STALE_MEMBER_EPOCH on some partition (and no fencing): resend with the new epoch.
    StaleEpoch,
    /// The member is unknown or fenced.
    Fenced(BrokerErrorKind),
    /// The coordinator moved or is loading, or asked to retry: find it again and resend.
    Retriable(BrokerErrorKind),
    /// Per-partition failures that a resend cannot fix.
    Failed {
        /// Committed partitions.
        committed: Vec<TopicPartition>,
        /// Refused partitions.
        failed: Vec<(TopicPartition, BrokerErrorKind)>,
    },
}

/// True for the errors after which a coordinator must be looked up again: it moved
/// (`NOT_COORDINATOR`) or is gone (`COORDINATOR_NOT_AVAILABLE`). A coordinator that is
/// loading (`COORDINATOR_LOAD_IN_PROGRESS`) is asked again as it is.
pub fn coordinator_moved(kind: BrokerErrorKind) -> bool {
    matches!(
        kind,
        BrokerErrorKind::NotCoordinator | BrokerErrorKind::CoordinatorNotAvailable
    )
}

fn retriable(kind: BrokerErrorKind) -> bool {
    coordinator_moved(kind)
        || matches!(
            kind,
            BrokerErrorKind::CoordinatorLoadInProgress
                | BrokerErrorKind::RequestTimedOut
                | BrokerErrorKind::RebalanceInProgress
                | BrokerErrorKind::UnstableOffsetCommit
                | BrokerErrorKind::NotEnoughReplicas
                | BrokerErrorKind::NotEnoughReplicasAfterAppend
        )
}

fn fenced(kind: BrokerErrorKind) -> bool {
    matches!(
        kind,
        BrokerErrorKind::UnknownMemberId | BrokerErrorKind::FencedMemberEpoch
    )
}

/// Classifies an OffsetCommit answer. The coordinator reports group-level refusals
/// (unknown member, stale epoch, coordinator moved) as the error of every partition.
pub fn classify_commit(response: &OffsetCommitResponse) -> CommitAnswer {
    let mut committed = Vec::new();
    let mut failed = Vec::new();
    let mut stale = false;
    let mut retry = None;
    for t in &response.topics {
        for p in &t.partitions {
            let tp = TopicPartition::new(t.name.clone(), p.partition_index);
            match p.error() {
                BrokerErrorKind::None => committed.push(tp),
                k if fenced(k) => return CommitAnswer::Fenced(k),
                BrokerErrorKind::StaleMemberEpoch => stale = true,
                k if retriable(k) => retry = Some(k),
                k => failed.push((tp, k)),
            }
        }
    }
    if let Some(k) = retry {
        CommitAnswer::Retriable(k)
    } else if stale {
        CommitAnswer::StaleEpoch
    } else if failed.is_empty() {
        CommitAnswer::Committed
    } else {
        CommitAnswer::Failed { committed, failed }
    }
}

/// The OffsetFetch a member sends (v9: one group, with member id and epoch, require stable).
pub fn fetch_request(
    group_id: &str,
    member_id: &str,
    member_epoch: i32,
    partitions: &BTreeSet<TopicPartition>,
) -> OffsetFetchRequest {
    let mut topics: Vec<OffsetFetchRequestTopic> = Vec::new();
    for tp in partitions {
        if topics.last().is_none_or(|t| t.name != tp.topic) {
            topics.push(OffsetFetchRequestTopic {
                name: tp.topic.clone(),
                ..Default::default()
            });
        }
        if let Some(t) = topics.last_mut() {
            t.partition_indexes.push(tp.partition);
        }
    }
    OffsetFetchRequest {
        groups: vec![OffsetFetchRequestGroup {
            group_id: group_id.to_string(),
            member_id: Some(member_id.to_string()),
            member_epoch,
            topics: Some(topics),
        }],
        require_stable: true,
        ..Default::default()
    }
}

/// What one OffsetFetch answer means for the retry loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FetchAnswer {
    /// Every partition answered (`None` = nothing committed).
    Fetched(BTreeMap<TopicPartition, Option<CommittedOffset>>),
    /// STALE_MEMBER_EPOCH: resend with the new epoch.
    StaleEpoch,
    /// The member is unknown or fenced.
    Fenced(BrokerErrorKind),
    /// Retry (coordinator moved or loading, unstable offsets).
    Retriable(BrokerErrorKind),
    /// Errors a resend cannot fix.
    Failed {
        /// Partitions answered.
        fetched: BTreeMap<TopicPartition, Option<CommittedOffset>>,
        /// Partitions with an error (a group-level error is reported on every partition).
        failed: Vec<(TopicPartition, BrokerErrorKind)>,
    },
}

/// Classifies an OffsetFetch v8+ answer for `group_id` and the `asked` partitions.
pub fn classify_fetch(
    response: &OffsetFetchResponse,
    group_id: &str,
    asked: &BTreeSet<TopicPartition>,
) -> FetchAnswer {
    let Some(group) = response.groups.iter().find(|g| g.group_id == group_id) else {
        return FetchAnswer::Failed {
            fetched: BTreeMap::new(),
            failed: asked
                .iter()
                .map(|tp| (tp.clone(), BrokerErrorKind::UnknownServerError))
                .collect(),
        };
    };
    let group_error = group.error();
    if group_error != BrokerErrorKind::None {
        return match group_error {
            k if fenced(k) => FetchAnswer::Fenced(k),
            BrokerErrorKind::StaleMemberEpoch => FetchAnswer::StaleEpoch,
            k if retriable(k) => FetchAnswer::Retriable(k),
            k => FetchAnswer::Failed {
                fetched: BTreeMap::new(),
                failed: asked.iter().map(|tp| (tp.clone(), k)).collect(),
            },
        };
    }
    let mut fetched = BTreeMap::new();
    let mut failed = Vec::new();
    let mut retry = None;
    for t in &group.topics {
        for p in &t.partitions {
            let tp = TopicPartition::new(t.name.clone(), p.partition_index);
            if !asked.contains(&tp) {
                continue;
            }
            match p.error() {
                BrokerErrorKind::None => {
                    let committed = (p.committed_offset >= 0).then(|| CommittedOffset {
                        offset: p.committed_offset,
                        leader_epoch: (p.committed_leader_epoch >= 0)
                            .then_some(p.committed_leader_epoch),
                        metadata: p.metadata.clone().unwrap_or_default(),
                    });
                    fetched.insert(tp, committed);
                }
                k if fenced(k) => return FetchAnswer::Fenced(k),
                BrokerErrorKind::StaleMemberEpoch => return FetchAnswer::StaleEpoch,
                k if retriable(k) => retry = Some(k),
                k => failed.push((tp, k)),
            }
        }
    }
    if let Some(k) = retry {
        return FetchAnswer::Retriable(k);
    }
    for tp in asked {
        if !fetched.contains_key(tp) && !failed.iter().any(|(f, _)| f == tp) {
            // The broker left the partition out: treat it as nothing committed.
            fetched.insert(tp.clone(), None);
        }
    }
    if failed.is_empty() {
        FetchAnswer::Fetched(fetched)
    } else {
        FetchAnswer::Failed { fetched, failed }
    }
}

#[cfg(test)]
mod tests;
