//! The fetcher's pure core: assignment, positions, pause/resume, reset policy, the leader
//! map, the Fetch and ListOffsets requests to send and what their answers change. No I/O,
//! no clock.

use std::collections::{BTreeMap, HashMap};

use crate::common::TopicPartition;
use crate::error::{BrokerErrorContext, Error};
use crate::protocol::api::fetch::{FetchPartition, FetchRequest, FetchTopic};
use crate::protocol::api::list_offsets::{
    ListOffsetsPartition, ListOffsetsRequest, ListOffsetsResponse, ListOffsetsTopic,
    EARLIEST_TIMESTAMP, LATEST_TIMESTAMP,
};
use crate::protocol::api::metadata::MetadataResponse;
use crate::protocol::records::DecodeLimits;
use crate::protocol::{BrokerErrorKind, Uuid};

use super::config::{FetchSettings, IsolationLevel, OffsetReset};

/// The first Fetch version that names topics by id.
const FETCH_TOPIC_IDS_FROM: i16 = 13;

/// One assigned partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct PartitionState {
    /// The next offset to fetch; `None` until a reset or seek gives one.
    pub(super) position: Option<i64>,
    /// Not fetched while set.
    pub(super) paused: bool,
    /// A reset asked for by `seek_to_beginning`/`seek_to_end`, else the configured policy.
    pub(super) reset: Option<OffsetReset>,
    /// The position the broker answered OFFSET_OUT_OF_RANGE for (for the `none` error).
    pub(super) out_of_range: Option<i64>,
    /// The leader epoch of the last record consumed before `position` (KIP-320), or the
    /// one a ListOffsets reset answered; `None` after a seek, when it is unknown.
    pub(super) offset_epoch: Option<i32>,
    /// The leader epoch last seen in metadata: a higher one means a leader change, after
    /// which the position is validated before fetching again.
    pub(super) leader_epoch: Option<i32>,
    /// The position waits for an OffsetForLeaderEpoch answer and is not fetched.
    pub(super) validating: bool,
    /// The partition's end as the last Fetch answer for it said: the high watermark, or
    /// under `read_committed` the last stable offset; `None` before the first answer.
    pub(super) fetched_end: Option<i64>,
}

impl PartitionState {
    /// A new position without a known epoch (seek, reset): nothing to validate.
    pub(super) fn set_position(&mut self, position: Option<i64>) {
        self.position = position;
        self.out_of_range = None;
        self.offset_epoch = None;
        self.validating = false;
    }

    /// Whether a Fetch may be sent for this partition.
    pub(super) fn fetchable(&self) -> bool {
        self.position.is_some() && !self.paused && !self.validating
    }
}

/// A partition's leader from Metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Leader {
    pub(super) node: i32,
    pub(super) epoch: i32,
}

#[derive(Debug, Clone, Default)]
pub(super) struct TopicInfo {
    pub(super) id: Uuid,
    pub(super) leaders: HashMap<i32, Leader>,
}

/// The state of a fetcher. See the module docs.
#[derive(Debug, Clone)]
pub struct FetcherCore {
    pub(super) settings: FetchSettings,
    pub(super) limits: DecodeLimits,
    pub(super) assigned: BTreeMap<TopicPartition, PartitionState>,
    /// The assigned partitions in the order Fetch requests list them: a partition whose
    /// records were just returned moves to the end (as Java's consumer does), so that under
    /// `fetch.max.bytes` the partitions listed first cannot starve the others.
    pub(super) order: Vec<TopicPartition>,
    pub(super) topics: HashMap<String, TopicInfo>,
    pub(super) metadata_stale: bool,
    /// A non-retriable error from an answer, returned by the next poll.
    pub(super) error: Option<Error>,
}

/// Whether an error code means "the leader moved or is not known yet": refresh metadata and
/// fetch again.
pub(super) fn leader_error(kind: BrokerErrorKind) -> bool {
    matches!(
        kind,
        BrokerErrorKind::NotLeaderOrFollower
            | BrokerErrorKind::FencedLeaderEpoch
            | BrokerErrorKind::UnknownLeaderEpoch
            | BrokerErrorKind::LeaderNotAvailable
            | BrokerErrorKind::UnknownTopicOrPartition
            | BrokerErrorKind::UnknownTopicId
            | BrokerErrorKind::InconsistentTopicId
            | BrokerErrorKind::KafkaStorageError
            | BrokerErrorKind::ReplicaNotAvailable
            | BrokerErrorKind::OffsetNotAvailable
            | BrokerErrorKind::NotCoordinator
    ) || kind.is_retriable()
}

pub(super) fn broker_error(
    api: &'static str,
    kind: BrokerErrorKind,
    code: i16,
    what: String,
) -> Error {
    Error::Broker {
        kind,
        code,
        message: Some(what),
        context: BrokerErrorContext::api(api),
    }
}

impl FetcherCore {
    /// A core with no assignment.
    pub fn new(settings: FetchSettings) -> FetcherCore {
        FetcherCore {
            settings,
            limits: DecodeLimits::default(),
            assigned: BTreeMap::new(),
            order: Vec::new(),
            topics: HashMap::new(),
            metadata_stale: true,
            error: None,
        }
    }

    /// The fetch settings.
    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }

    /// Replaces the assignment. Partitions kept keep their position and paused flag.
    pub fn assign(&mut self, partitions: impl IntoIterator<Item = TopicPartition>) {
        let mut next = BTreeMap::new();
        for tp in partitions {
            let state = self.assigned.remove(&tp).unwrap_or_default();
            if !self.topics.contains_key(&tp.topic) {
                self.metadata_stale = true;
            }
            next.insert(tp, state);
        }
        self.order.retain(|tp| next.contains_key(tp));
        for tp in next.keys() {
            if !self.order.contains(tp) {
                self.order.push(tp.clone());
            }
        }
        self.assigned = next;
    }

    /// Moves `tp` to the end of the fetch order (its records were just returned).
    pub(super) fn move_to_end(&mut self, tp: &TopicPartition) {
        if let Some(i) = self.order.iter().position(|t| t == tp) {
            let t = self.order.remove(i);
            self.order.push(t);
        }
    }

    /// The assigned partitions, in order.
    pub fn assignment(&self) -> impl Iterator<Item = &TopicPartition> {
        self.assigned.keys()
    }

    /// The assigned topics (for the Metadata request).
    pub fn topics(&self) -> Vec<String> {
        let mut t: Vec<String> = self.assigned.keys().map(|tp| tp.topic.clone()).collect();
        t.dedup();
        t
    }

    /// The next offset to fetch, `None` before the first reset or seek.
    pub fn position(&self, tp: &TopicPartition) -> Option<i64> {
        self.assigned.get(tp).and_then(|s| s.position)
    }

    /// How many records of `tp` the broker holds past the position, as the last Fetch
    /// answer for it said (its high watermark, or last stable offset under
    /// `read_committed`, minus the position): Java's `Consumer#currentLag`. `None` before
    /// an answer for `tp` or without a position.
    pub fn fetched_lag(&self, tp: &TopicPartition) -> Option<i64> {
        let s = self.assigned.get(tp)?;
        Some((s.fetched_end? - s.position?).max(0))
    }

    fn state(&mut self, tp: &TopicPartition) -> Result<&mut PartitionState, Error> {
        self.assigned
            .get_mut(tp)
            .ok_or_else(|| Error::InvalidConfiguration {
                field: "partition",
                reason: format!("{tp} is not assigned; assign it first"),
            })
    }

    /// Sets the next offset to fetch.
    pub fn seek(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), Error> {
        if offset < 0 {
            return Err(Error::InvalidConfiguration {
                field: "offset",
                reason: format!("seek {tp} to {offset}: offsets are >= 0"),
            });
        }
        let s = self.state(tp)?;
        s.set_position(Some(offset));
        s.reset = None;
        Ok(())
    }

    /// Forgets the position and resets it by `reset` (earliest or latest) at the next poll.
    pub fn seek_to(&mut self, tp: &TopicPartition, reset: OffsetReset) -> Result<(), Error> {
        let s = self.state(tp)?;
        s.set_position(None);
        s.reset = Some(reset);
        Ok(())
    }

    /// Stops (`true`) or restarts (`false`) fetching `tp`; the position is kept.
    pub fn set_paused(&mut self, tp: &TopicPartition, paused: bool) -> Result<(), Error> {
        self.state(tp)?.paused = paused;
        Ok(())
    }

    /// The paused partitions.
    pub fn paused(&self) -> impl Iterator<Item = &TopicPartition> {
        self.assigned
            .iter()
            .filter(|(_, s)| s.paused)
            .map(|(tp, _)| tp)
    }

    /// Whether the leader map must be (re)loaded before fetching.
    pub fn needs_metadata(&self) -> bool {
        self.metadata_stale
    }

    /// Marks the leader map stale (a connection to a leader failed).
    pub fn invalidate_metadata(&mut self) {
        self.metadata_stale = true;
    }

    /// The error an answer left for the caller, if any.
    pub fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    /// Keeps `e` for the next poll (an earlier error, not yet taken, wins).
    pub fn defer_error(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        } else {
            log::debug!("fetcher: {e} (after an earlier error not yet returned)");
        }
    }

    /// Loads topic ids and leaders. Stays stale while an assigned partition has no leader.
    pub fn update_metadata(&mut self, md: &MetadataResponse) {
        for t in &md.topics {
            let Some(name) = &t.name else { continue };
            if t.error() != BrokerErrorKind::None {
                self.topics.remove(name);
                continue;
            }
            let info = TopicInfo {
                id: t.topic_id,
                leaders: t
                    .partitions
                    .iter()
                    .filter(|p| BrokerErrorKind::from(p.error_code) == BrokerErrorKind::None)
                    .filter(|p| p.leader_id >= 0)
                    .map(|p| {
                        (
                            p.partition_index,
                            Leader {
                                node: p.leader_id,
                                epoch: p.leader_epoch,
                            },
                        )
                    })
                    .collect(),
            };
            self.topics.insert(name.clone(), info);
        }
        self.metadata_stale = self.assigned.keys().any(|tp| self.leader(tp).is_none());
        self.note_leader_epochs();
    }

    /// Records each assigned partition's leader epoch; a higher one than seen before is a
    /// leader change, after which a position with a known epoch is validated (KIP-320).
    fn note_leader_epochs(&mut self) {
        let epochs: Vec<(TopicPartition, i32)> = self
            .assigned
            .keys()
            .filter_map(|tp| Some((tp.clone(), self.leader(tp)?.epoch)))
            .filter(|(_, epoch)| *epoch >= 0)
            .collect();
        for (tp, epoch) in epochs {
            let Some(s) = self.assigned.get_mut(&tp) else {
                continue;
            };
            if s.leader_epoch.is_some_and(|seen| epoch <= seen) {
                continue;
            }
            if s.leader_epoch.is_some() && s.offset_epoch.is_some() && s.position.is_some() {
                log::debug!("{tp}: leader epoch {epoch}, validating the position");
                s.validating = true;
            }
            s.leader_epoch = Some(epoch);
        }
    }

    pub(super) fn leader(&self, tp: &TopicPartition) -> Option<Leader> {
        self.topics
            .get(&tp.topic)?
            .leaders
            .get(&tp.partition)
            .copied()
    }

    /// ListOffsets requests, one per leader, for every partition without a position; an
    /// error for a partition whose policy is `none`.
    pub fn reset_requests(&mut self) -> Result<Vec<(i32, ListOffsetsRequest)>, Error> {
        let mut wanted = Vec::new();
        for (tp, s) in &self.assigned {
            if s.position.is_some() {
                continue;
            }
            let timestamp = match s.reset.unwrap_or(self.settings.reset) {
                OffsetReset::Earliest => EARLIEST_TIMESTAMP,
                OffsetReset::Latest => LATEST_TIMESTAMP,
                OffsetReset::None => {
                    let reason = match s.out_of_range {
                        Some(o) => format!(
                            "offset {o} of {tp} is out of range and auto.offset.reset=none; \
                             seek to a valid offset or set auto.offset.reset to earliest/latest"
                        ),
                        None => format!(
                            "{tp} has no position and auto.offset.reset=none; seek first or set \
                             auto.offset.reset to earliest/latest"
                        ),
                    };
                    return Err(Error::InvalidConfiguration {
                        field: "auto.offset.reset",
                        reason,
                    });
                }
            };
            wanted.push((tp, timestamp));
        }
        Ok(self.list_offsets_by_leader(wanted, self.settings.isolation))
    }

    /// Applies a ListOffsets answer: positions for the partitions answered, with the leader
    /// epoch the answer gives (KIP-320), a metadata refresh for leader errors.
    pub fn handle_list_offsets(&mut self, resp: &ListOffsetsResponse) {
        for t in &resp.topics {
            for p in &t.partitions {
                let tp = TopicPartition::new(t.name.clone(), p.partition_index);
                let Some(s) = self.assigned.get_mut(&tp) else {
                    continue;
                };
                if s.position.is_some() {
                    continue;
                }
                match p.error() {
                    BrokerErrorKind::None if p.offset >= 0 => {
                        log::debug!(
                            "{tp}: reset to offset {} (leader epoch {})",
                            p.offset,
                            p.leader_epoch
                        );
                        s.set_position(Some(p.offset));
                        // The epoch of the offset found, as Java's consumer keeps it (v4+;
                        // -1 before): sent with the first Fetch and validated after a
                        // leader change, like the epoch of a consumed record.
                        s.offset_epoch = (p.leader_epoch >= 0).then_some(p.leader_epoch);
                        s.reset = None;
                    }
                    kind if leader_error(kind) => {
                        log::debug!("{tp}: ListOffsets {kind}, refreshing metadata");
                        self.metadata_stale = true;
                    }
                    kind => {
                        self.error = Some(broker_error(
                            "ListOffsets",
                            kind,
                            p.error_code,
                            format!("resetting the offset of {tp}"),
                        ))
                    }
                }
            }
        }
    }

    /// Whether the leader of every partition of `partitions` is known.
    pub fn leaders_known<'a>(
        &self,
        partitions: impl IntoIterator<Item = &'a TopicPartition>,
    ) -> bool {
        partitions.into_iter().all(|tp| self.leader(tp).is_some())
    }

    /// ListOffsets requests, one per leader, asking `timestamp` (e.g. [`LATEST_TIMESTAMP`])
    /// for each partition of `partitions` whose leader is known, assigned or not (for end
    /// offsets). Partitions without a known leader are left out.
    pub fn offsets_requests(
        &self,
        partitions: &[TopicPartition],
        timestamp: i64,
        isolation: IsolationLevel,
    ) -> Vec<(i32, ListOffsetsRequest)> {
        self.list_offsets_by_leader(partitions.iter().map(|tp| (tp, timestamp)), isolation)
    }

    /// One ListOffsets request per leader for the `(partition, timestamp)` pairs whose
    /// leader is known (the others are left out), topics grouped within each.
    fn list_offsets_by_leader<'a>(
        &self,
        wanted: impl IntoIterator<Item = (&'a TopicPartition, i64)>,
        isolation: IsolationLevel,
    ) -> Vec<(i32, ListOffsetsRequest)> {
        let mut by_node: BTreeMap<i32, BTreeMap<String, Vec<ListOffsetsPartition>>> =
            BTreeMap::new();
        for (tp, timestamp) in wanted {
            let Some(leader) = self.leader(tp) else {
                continue;
            };
            by_node
                .entry(leader.node)
                .or_default()
                .entry(tp.topic.clone())
                .or_default()
                .push(ListOffsetsPartition {
                    partition_index: tp.partition,
                    current_leader_epoch: leader.epoch,
                    timestamp,
                });
        }
        by_node
            .into_iter()
            .map(|(node, topics)| {
                (
                    node,
                    ListOffsetsRequest {
                        isolation_level: isolation.wire(),
                        topics: topics
                            .into_iter()
                            .map(|(name, partitions)| ListOffsetsTopic { name, partitions })
                            .collect(),
                        ..Default::default()
                    },
                )
            })
            .collect()
    }

    /// Reads an answer to [`offsets_requests`](Self::offsets_requests) into `found`. A
    /// leader error marks the metadata stale and leaves the partition out (ask again); any
    /// other error is returned.
    pub fn handle_offsets(
        &mut self,
        resp: &ListOffsetsResponse,
        found: &mut BTreeMap<TopicPartition, i64>,
    ) -> Result<(), Error> {
        for t in &resp.topics {
            for p in &t.partitions {
                let tp = TopicPartition::new(t.name.clone(), p.partition_index);
                match p.error() {
                    BrokerErrorKind::None if p.offset >= 0 => {
                        found.insert(tp, p.offset);
                    }
                    BrokerErrorKind::None => {
                        // No offset for this timestamp: ask again.
                        self.metadata_stale = true;
                    }
                    kind if leader_error(kind) => {
                        log::debug!("{tp}: ListOffsets {kind}, refreshing metadata");
                        self.metadata_stale = true;
                    }
                    kind => {
                        return Err(broker_error(
                            "ListOffsets",
                            kind,
                            p.error_code,
                            format!("listing the offsets of {tp}"),
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// The leaders to fetch from: those leading an assigned, unpaused partition with a
    /// position.
    pub fn fetch_nodes(&self) -> Vec<i32> {
        let mut nodes: Vec<i32> = self
            .assigned
            .iter()
            .filter(|(_, s)| s.fetchable())
            .filter_map(|(tp, _)| self.leader(tp).map(|l| l.node))
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }

    /// The Fetch for `node` at Fetch `version` (topic ids from v13), sessionless, waiting at
    /// most `max_wait_ms`. Partitions are listed in the fetch order: the ones whose records
    /// were returned last come last (a topic may then appear more than once, as in Java's
    /// requests).
    pub fn fetch_request(&self, node: i32, version: i16, max_wait_ms: i32) -> FetchRequest {
        let by_id = version >= FETCH_TOPIC_IDS_FROM;
        let mut topics: Vec<FetchTopic> = Vec::new();
        for tp in &self.order {
            let Some(s) = self.assigned.get(tp) else {
                continue;
            };
            let (Some(position), true) = (s.position, s.fetchable()) else {
                continue;
            };
            let Some(leader) = self.leader(tp).filter(|l| l.node == node) else {
                continue;
            };
            let partition = FetchPartition {
                partition: tp.partition,
                current_leader_epoch: leader.epoch,
                fetch_offset: position,
                // The broker answers a diverging epoch when its log does not hold this
                // epoch up to the position (Fetch v12+; older versions leave it out).
                last_fetched_epoch: s.offset_epoch.unwrap_or(-1),
                partition_max_bytes: self.settings.partition_max_bytes,
                ..Default::default()
            };
            match topics.last_mut() {
                Some(t) if t.topic == tp.topic => t.partitions.push(partition),
                _ => topics.push(FetchTopic {
                    topic: tp.topic.clone(),
                    topic_id: self.topics.get(&tp.topic).map_or(Uuid::ZERO, |t| t.id),
                    partitions: vec![partition],
                }),
            }
        }
        if by_id {
            for t in &mut topics {
                t.topic.clear();
            }
        }
        FetchRequest {
            max_wait_ms,
            min_bytes: self.settings.min_bytes,
            max_bytes: self.settings.max_bytes,
            isolation_level: self.settings.isolation.wire(),
            topics,
            ..Default::default()
        }
    }

    pub(super) fn topic_name(&self, name: &str, id: Uuid) -> Option<String> {
        if !name.is_empty() {
            return Some(name.to_owned());
        }
        self.topics
            .iter()
            .find(|(_, t)| t.id == id && id != Uuid::ZERO)
            .map(|(n, _)| n.clone())
    }
}
