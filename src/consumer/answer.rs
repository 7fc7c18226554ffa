//! What Fetch and OffsetForLeaderEpoch answers change in a [`FetcherCore`]: records indexed
//! (control batches and, under `read_committed`, aborted data dropped), positions and their
//! leader epochs advanced, OFFSET_OUT_OF_RANGE reset, leader errors turned into a metadata
//! refresh, and KIP-320 validation (a Fetch answer's `diverging_epoch`, OffsetForLeaderEpoch
//! after a leader change). No I/O, no clock.

use std::collections::BTreeMap;

use crate::common::TopicPartition;
use crate::error::Error;
use crate::protocol::api::fetch::{
    AbortedTransaction as WireAborted, FetchResponse, PartitionData,
};
use crate::protocol::api::offset_for_leader_epoch::{
    OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse, OffsetForLeaderPartition,
    OffsetForLeaderTopic, CONSUMER_REPLICA_ID,
};
use crate::protocol::records::{
    admit_uncommitted, AbortedTransaction, Admit, BatchHeader, BatchReader, ReadCommitted,
};
use crate::protocol::BrokerErrorKind;

use super::config::IsolationLevel;
use super::core::{broker_error, leader_error, FetcherCore};
use super::records::PartitionRecords;
use super::validate::{diverged, validate, EpochEnd, Validation};
use crate::common::ConsumerError;

/// What one partition's record bytes hold from the position on.
struct Scan {
    /// The batches to deliver, with their byte ranges.
    batches: Vec<(BatchHeader, std::ops::Range<usize>)>,
    /// The position after the last batch read.
    next: i64,
    /// The leader epoch of the last batch read past the position.
    epoch: Option<i32>,
    /// Complete batches in the bytes (below the position or not).
    complete: usize,
    /// A corrupt batch stopped the reading.
    failure: Option<crate::protocol::records::RecordsError>,
}

impl FetcherCore {
    /// Applies a Fetch answer: the records of every partition whose position it matches
    /// (the record bytes move out of `resp`), positions advanced past them.
    pub fn handle_fetch(&mut self, resp: FetchResponse) -> Vec<PartitionRecords> {
        let mut out = Vec::new();
        let top = resp.error();
        if top != BrokerErrorKind::None {
            if leader_error(top) {
                self.metadata_stale = true;
            } else {
                self.error = Some(broker_error(
                    "Fetch",
                    top,
                    resp.error_code,
                    "fetching records".to_owned(),
                ));
            }
            return out;
        }
        // Whether an earlier partition of this answer carried bytes: the broker then read this
        // one without its one-whole-batch guarantee, so a cut batch here is no error.
        let mut data_before = false;
        for t in resp.responses {
            let Some(name) = self.topic_name(&t.topic, t.topic_id) else {
                log::debug!("Fetch answer for unknown topic id {:?}", t.topic_id);
                self.metadata_stale = true;
                continue;
            };
            for p in t.partitions {
                let tp = TopicPartition::new(name.clone(), p.partition_index);
                let cut_allowed = data_before;
                data_before |= p.records.as_ref().is_some_and(|r| !r.is_empty());
                out.extend(self.take_partition(tp, p, cut_allowed));
            }
        }
        out
    }

    /// One partition of a Fetch answer: its records, if its position still matches.
    fn take_partition(
        &mut self,
        tp: TopicPartition,
        p: PartitionData,
        cut_allowed: bool,
    ) -> Option<PartitionRecords> {
        let s = self.assigned.get(&tp)?;
        let from = s.position.filter(|_| s.fetchable())?;
        if !self.partition_ok(&tp, from, &p) {
            return None;
        }
        let end = match self.settings.isolation {
            IsolationLevel::ReadCommitted if p.last_stable_offset >= 0 => p.last_stable_offset,
            _ => p.high_watermark,
        };
        if let Some(s) = self.assigned.get_mut(&tp) {
            s.fetched_end = (end >= 0).then_some(end);
        }
        if p.diverging_epoch.epoch >= 0 {
            let end = EpochEnd {
                epoch: p.diverging_epoch.epoch,
                end_offset: p.diverging_epoch.end_offset,
            };
            log::info!("{tp}: Fetch at {from} answered diverging epoch {end:?}");
            self.apply_validation(&tp, from, diverged(from, end, self.settings.reset));
            return None;
        }
        let buf = p.records.unwrap_or_default();
        let scan = self.scan(from, &buf, p.aborted_transactions.as_deref());
        if let Some(e) = &scan.failure {
            self.error = Some(Error::Protocol {
                broker: None,
                message: format!(
                    "corrupt record batch in {tp} after offset {}: {e}",
                    scan.next
                ),
            });
        } else if scan.complete == 0 && !buf.is_empty() {
            if cut_allowed {
                log::debug!(
                    "{tp}: {} bytes cut by fetch.max.bytes at offset {from}; fetching again",
                    buf.len()
                );
            } else {
                self.error = Some(Error::Consumer(ConsumerError::NoCompleteBatch {
                    partition: tp.clone(),
                    offset: from,
                    bytes: buf.len(),
                    partition_max_bytes: self.settings.partition_max_bytes,
                    max_bytes: self.settings.max_bytes,
                }));
            }
        }
        let s = self.assigned.get_mut(&tp)?;
        s.position = Some(scan.next);
        if scan.epoch.is_some() {
            s.offset_epoch = scan.epoch;
        }
        if scan.batches.is_empty() {
            return None;
        }
        self.move_to_end(&tp);
        Some(PartitionRecords {
            tp,
            buf: std::sync::Arc::new(buf),
            batches: scan.batches,
            from,
            next_offset: scan.next,
            high_watermark: p.high_watermark,
            limits: self.limits,
        })
    }

    /// Handles a partition's error code; `true` when it has none and its records count.
    fn partition_ok(&mut self, tp: &TopicPartition, from: i64, p: &PartitionData) -> bool {
        let kind = p.error();
        let Some(s) = self.assigned.get_mut(tp) else {
            return false;
        };
        match kind {
            BrokerErrorKind::None => return true,
            BrokerErrorKind::OffsetOutOfRange => {
                log::info!("{tp}: offset {from} out of range, resetting");
                s.set_position(None);
                s.out_of_range = Some(from);
            }
            BrokerErrorKind::FencedLeaderEpoch | BrokerErrorKind::UnknownLeaderEpoch => {
                log::debug!("{tp}: Fetch {kind}, refreshing metadata and validating");
                s.validating = s.offset_epoch.is_some();
                self.metadata_stale = true;
            }
            kind if leader_error(kind) => {
                log::debug!("{tp}: Fetch {kind}, refreshing metadata");
                self.metadata_stale = true;
            }
            kind => {
                self.error = Some(broker_error(
                    "Fetch",
                    kind,
                    p.error_code,
                    format!("fetching {tp} at offset {from}"),
                ));
            }
        }
        false
    }

    /// Reads the complete batches of `buf` from position `from`.
    fn scan(&self, from: i64, buf: &[u8], aborted: Option<&[WireAborted]>) -> Scan {
        let rc = self.settings.isolation == IsolationLevel::ReadCommitted;
        let mut filter = rc.then(|| {
            ReadCommitted::new(
                aborted
                    .unwrap_or_default()
                    .iter()
                    .map(|a| AbortedTransaction {
                        producer_id: a.producer_id,
                        first_offset: a.first_offset,
                    }),
            )
        });
        let mut scan = Scan {
            batches: Vec::new(),
            next: from,
            epoch: None,
            complete: 0,
            failure: None,
        };
        let mut at = 0usize;
        for raw in BatchReader::new(buf) {
            let raw = match raw {
                Ok(raw) => raw,
                Err(e) => {
                    scan.failure = Some(e);
                    break;
                }
            };
            scan.complete += 1;
            let start = at;
            at += raw.bytes.len();
            let h = raw.header;
            if h.next_offset() <= from {
                continue;
            }
            let admit = match &mut filter {
                Some(f) => match f.admit(&raw) {
                    Ok(a) => a,
                    Err(e) => {
                        scan.failure = Some(e);
                        break;
                    }
                },
                None => admit_uncommitted(&raw),
            };
            scan.next = h.next_offset();
            if h.partition_leader_epoch >= 0 {
                scan.epoch = Some(h.partition_leader_epoch);
            }
            if admit == Admit::Deliver {
                scan.batches.push((h, start..at));
            }
        }
        scan
    }

    /// OffsetForLeaderEpoch requests, one per leader, for the positions to validate after a
    /// leader change: where does the epoch of each position end on the leader's log?
    pub fn validation_requests(&self) -> Vec<(i32, OffsetForLeaderEpochRequest)> {
        let mut by_node: BTreeMap<i32, BTreeMap<String, Vec<OffsetForLeaderPartition>>> =
            BTreeMap::new();
        for (tp, s) in &self.assigned {
            if !s.validating || s.paused || s.position.is_none() {
                continue;
            }
            let (Some(epoch), Some(leader)) = (s.offset_epoch, self.leader(tp)) else {
                continue;
            };
            by_node
                .entry(leader.node)
                .or_default()
                .entry(tp.topic.clone())
                .or_default()
                .push(OffsetForLeaderPartition {
                    partition: tp.partition,
                    current_leader_epoch: leader.epoch,
                    leader_epoch: epoch,
                });
        }
        by_node
            .into_iter()
            .map(|(node, topics)| {
                let topics = topics
                    .into_iter()
                    .map(|(topic, partitions)| OffsetForLeaderTopic { topic, partitions })
                    .collect();
                let req = OffsetForLeaderEpochRequest {
                    replica_id: CONSUMER_REPLICA_ID,
                    topics,
                };
                (node, req)
            })
            .collect()
    }

    /// Applies an OffsetForLeaderEpoch answer to the positions being validated.
    pub fn handle_validation(&mut self, resp: &OffsetForLeaderEpochResponse) {
        for t in &resp.topics {
            for p in &t.partitions {
                let tp = TopicPartition::new(t.topic.clone(), p.partition);
                let Some(s) = self.assigned.get(&tp) else {
                    continue;
                };
                let Some(position) = s.position.filter(|_| s.validating) else {
                    continue;
                };
                match p.error() {
                    BrokerErrorKind::None => {
                        let end = EpochEnd {
                            epoch: p.leader_epoch,
                            end_offset: p.end_offset,
                        };
                        let v = validate(position, end, self.settings.reset);
                        self.apply_validation(&tp, position, v);
                    }
                    kind if leader_error(kind) => {
                        log::debug!("{tp}: OffsetForLeaderEpoch {kind}, refreshing metadata");
                        self.metadata_stale = true;
                    }
                    kind => {
                        self.error = Some(broker_error(
                            "OffsetForLeaderEpoch",
                            kind,
                            p.error_code,
                            format!("validating the position {position} of {tp}"),
                        ));
                    }
                }
            }
        }
    }

    /// Moves the position of `tp` (at `position`) as a validation decided.
    fn apply_validation(&mut self, tp: &TopicPartition, position: i64, v: Validation) {
        let Some(s) = self.assigned.get_mut(tp) else {
            return;
        };
        match v {
            Validation::Valid => s.validating = false,
            Validation::SeekTo { offset, epoch } => {
                if offset < position {
                    log::warn!(
                        "{tp}: log truncation detected at offset {position}: fetching again from \
                         {offset}, the first offset known to diverge (records returned from there \
                         on are not in the log any more)"
                    );
                }
                s.position = Some(offset);
                s.offset_epoch = Some(epoch);
                s.validating = false;
            }
            Validation::Reset => {
                log::info!("{tp}: the leader knows no epoch of offset {position}; resetting");
                s.set_position(None);
            }
            Validation::Truncated { truncation_offset } => {
                // Stays unfetched until the caller seeks; the next poll asks again.
                s.validating = true;
                self.error = Some(Error::Consumer(ConsumerError::LogTruncation {
                    partition: tp.clone(),
                    fetch_offset: position,
                    truncation_offset,
                }));
            }
        }
    }
}
