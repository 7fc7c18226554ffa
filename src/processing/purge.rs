//! Purging consumed repartition records: DeleteRecords (API key 21) to each partition's
//! leader, as Kafka Streams' `TaskManager.maybePurgeCommittedRecords` does through the admin
//! client (streams-data-path.md §4.3). Repartition topics have `retention.ms=-1`, so this is
//! the only thing that ever removes their data.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use crate::client::{BrokerTarget, Client, SharedClient};
use crate::common::TopicPartition;
use crate::config::ClientConfig;
use crate::connect::client_error;
use crate::error::Error;
use crate::protocol::api::delete_records::{
    DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsResponse, DeleteRecordsTopic,
};
use crate::protocol::api::metadata::MetadataResponse;
use crate::protocol::BrokerErrorKind;

/// The longest a leader is asked to wait for its followers (Java's admin default
/// `default.api.timeout.ms` is larger; the deadline caps it anyway).
const MAX_BROKER_WAIT: Duration = Duration::from_secs(30);

/// Per-partition outcome: the new low watermark (log start offset), or the partition's
/// error.
pub type PurgeResults = BTreeMap<TopicPartition, Result<i64, BrokerErrorKind>>;

/// Deletes records below given offsets (DeleteRecords), with its own connections and
/// metadata. Connects on first use.
#[derive(Debug)]
pub struct RecordPurger {
    config: ClientConfig,
    client: Option<SharedClient>,
    /// topic → partition → leader node.
    leaders: HashMap<String, HashMap<i32, i32>>,
    /// The last metadata error of a topic without leaders (reported at the deadline).
    topic_errors: HashMap<String, BrokerErrorKind>,
}

/// Whether a partition error means "ask the current leader again".
fn retry_on(kind: BrokerErrorKind) -> bool {
    matches!(
        kind,
        BrokerErrorKind::NotLeaderOrFollower
            | BrokerErrorKind::LeaderNotAvailable
            | BrokerErrorKind::UnknownTopicOrPartition
            | BrokerErrorKind::RequestTimedOut
    ) || kind.is_retriable()
}

impl RecordPurger {
    /// A purger for the cluster of `client`; nothing is connected until the first call.
    pub fn new(client: ClientConfig) -> Self {
        RecordPurger {
            config: client,
            client: None,
            leaders: HashMap::new(),
            topic_errors: HashMap::new(),
        }
    }

    /// A purger on `shared`, a client shared with other users on the same thread: no
    /// connection of its own. `client` still gives the retry backoff.
    pub fn with_client(shared: SharedClient, client: ClientConfig) -> Self {
        RecordPurger {
            client: Some(shared),
            ..RecordPurger::new(client)
        }
    }

    fn client(&mut self, deadline: Instant) -> Result<parking_lot::MutexGuard<'_, Client>, Error> {
        if self.client.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            self.client = Some(SharedClient::connect(&self.config, left)?);
        }
        self.client
            .as_ref()
            .map(SharedClient::lock)
            .ok_or(Error::Closed)
    }

    fn leader(&self, tp: &TopicPartition) -> Option<i32> {
        self.leaders.get(&tp.topic)?.get(&tp.partition).copied()
    }

    fn load(&mut self, md: &MetadataResponse) {
        for t in &md.topics {
            let Some(name) = &t.name else { continue };
            if t.error() != BrokerErrorKind::None {
                self.topic_errors.insert(name.clone(), t.error());
            } else {
                self.topic_errors.remove(name);
            }
            let leaders = t
                .partitions
                .iter()
                .filter(|p| p.error_code == 0 && p.leader_id >= 0)
                .map(|p| (p.partition_index, p.leader_id))
                .collect();
            self.leaders.insert(name.clone(), leaders);
        }
    }

    /// Deletes the records before `offset` of each partition (the offset itself is kept and
    /// becomes the log start offset). Returns each partition's new low watermark or error;
    /// partition errors are logged and returned, not fatal. Leader moves are retried until
    /// `deadline`; a partition still unanswered then gets its topic's metadata error (e.g.
    /// `UNKNOWN_TOPIC_OR_PARTITION`) or else `REQUEST_TIMED_OUT`. The `Err` case is for failures that concern every partition (configuration, authentication).
    pub fn delete_records_before(
        &mut self,
        offsets: &BTreeMap<TopicPartition, i64>,
        deadline: Instant,
    ) -> Result<PurgeResults, Error> {
        let backoff = self.config.get_retry_backoff().0;
        let mut results = PurgeResults::new();
        let mut refresh = offsets.keys().any(|tp| self.leader(tp).is_none());
        loop {
            let pending: Vec<(&TopicPartition, i64)> = offsets
                .iter()
                .filter(|(tp, _)| !results.contains_key(*tp))
                .map(|(tp, o)| (tp, *o))
                .collect();
            if pending.is_empty() {
                return Ok(results);
            }
            if Instant::now() >= deadline {
                self.time_out(&pending, &mut results);
                return Ok(results);
            }
            if refresh {
                self.refresh_leaders(&pending, deadline)?;
                refresh = false;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let timeout_ms = i32::try_from(MAX_BROKER_WAIT.min(left).as_millis()).unwrap_or(0);
            let mut progress = false;
            for (node, req) in self.requests_by_leader(&pending, timeout_ms) {
                let sent = self
                    .client(deadline)?
                    .send(BrokerTarget::Node(node), &req, deadline);
                match sent {
                    Ok(resp) => {
                        let (done, stale) = take_results(&req, &resp, &mut results);
                        progress |= done;
                        refresh |= stale;
                    }
                    Err(e) if e.is_retriable() => {
                        log::debug!("DeleteRecords to node {node}: {e}; refreshing metadata");
                        refresh = true;
                    }
                    Err(e) => return Err(client_error(e)),
                }
            }
            if !progress {
                refresh = true;
                let left = deadline.saturating_duration_since(Instant::now());
                std::thread::sleep(backoff.min(left));
            }
        }
    }

    /// Answers every `pending` partition at the deadline: the topic's last metadata error if
    /// it has no leader, else a request timeout.
    fn time_out(&self, pending: &[(&TopicPartition, i64)], results: &mut PurgeResults) {
        for (tp, _) in pending {
            let kind = match self.topic_errors.get(&tp.topic) {
                Some(kind) if self.leader(tp).is_none() => *kind,
                _ => BrokerErrorKind::RequestTimedOut,
            };
            log::warn!("DeleteRecords {tp}: no answer before the deadline ({kind})");
            results.insert((*tp).clone(), Err(kind));
        }
    }

    /// Looks up the leaders of the `pending` partitions' topics again; a retriable failure
    /// is left for the next round.
    fn refresh_leaders(
        &mut self,
        pending: &[(&TopicPartition, i64)],
        deadline: Instant,
    ) -> Result<(), Error> {
        let mut topics: Vec<&str> = pending.iter().map(|(tp, _)| tp.topic.as_str()).collect();
        topics.dedup();
        let md = self.client(deadline)?.metadata(Some(&topics), deadline);
        match md {
            Ok(md) => self.load(&md),
            Err(e) if e.is_retriable() => log::debug!("purger metadata: {e}; retrying"),
            Err(e) => return Err(client_error(e)),
        }
        Ok(())
    }

    /// One DeleteRecords request per leader for the `pending` partitions whose leader is
    /// known (the others wait for a metadata refresh).
    fn requests_by_leader(
        &self,
        pending: &[(&TopicPartition, i64)],
        timeout_ms: i32,
    ) -> Vec<(i32, DeleteRecordsRequest)> {
        let mut by_node: BTreeMap<i32, BTreeMap<&str, Vec<DeleteRecordsPartition>>> =
            BTreeMap::new();
        for (tp, offset) in pending {
            let Some(node) = self.leader(tp) else {
                continue;
            };
            by_node
                .entry(node)
                .or_default()
                .entry(tp.topic.as_str())
                .or_default()
                .push(DeleteRecordsPartition {
                    partition_index: tp.partition,
                    offset: *offset,
                });
        }
        by_node
            .into_iter()
            .map(|(node, topics)| {
                let topics = topics
                    .into_iter()
                    .map(|(name, partitions)| DeleteRecordsTopic {
                        name: name.to_owned(),
                        partitions,
                    })
                    .collect();
                (node, DeleteRecordsRequest { topics, timeout_ms })
            })
            .collect()
    }
}

/// Moves the final answers of `resp` into `results`; returns (any final answer, any
/// partition to retry after a metadata refresh).
fn take_results(
    req: &DeleteRecordsRequest,
    resp: &DeleteRecordsResponse,
    results: &mut PurgeResults,
) -> (bool, bool) {
    let (mut done, mut stale) = (false, false);
    for t in &req.topics {
        for p in &t.partitions {
            let tp = TopicPartition::new(t.name.clone(), p.partition_index);
            let Some(r) = resp.partition(&t.name, p.partition_index) else {
                log::debug!("DeleteRecords answer without {tp}; asking again");
                stale = true;
                continue;
            };
            match r.error() {
                BrokerErrorKind::None => {
                    log::debug!("DeleteRecords {tp}: low watermark {}", r.low_watermark);
                    results.insert(tp, Ok(r.low_watermark));
                    done = true;
                }
                kind if retry_on(kind) => {
                    log::debug!("DeleteRecords {tp}: {kind}; asking the leader again");
                    stale = true;
                }
                kind => {
                    log::warn!(
                        "DeleteRecords {tp} before offset {}: {kind} (records stay)",
                        p.offset
                    );
                    results.insert(tp, Err(kind));
                    done = true;
                }
            }
        }
    }
    (done, stale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::delete_records::{
        DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
    };

    #[test]
    fn answers_are_final_or_retried_by_kind() {
        let req = DeleteRecordsRequest {
            topics: vec![DeleteRecordsTopic {
                name: "r".into(),
                partitions: (0..4)
                    .map(|p| DeleteRecordsPartition {
                        partition_index: p,
                        offset: 10,
                    })
                    .collect(),
            }],
            timeout_ms: 1000,
        };
        let part = |i, lw, code| DeleteRecordsPartitionResult {
            partition_index: i,
            low_watermark: lw,
            error_code: code,
        };
        let resp = DeleteRecordsResponse {
            throttle_time_ms: 0,
            topics: vec![DeleteRecordsTopicResult {
                name: "r".into(),
                // 3 is missing from the answer.
                partitions: vec![part(0, 10, 0), part(1, -1, 6), part(2, -1, 1)],
            }],
        };
        let mut results = PurgeResults::new();
        assert_eq!(take_results(&req, &resp, &mut results), (true, true));
        assert_eq!(results.get(&TopicPartition::new("r", 0)), Some(&Ok(10)));
        assert_eq!(
            results.get(&TopicPartition::new("r", 2)),
            Some(&Err(BrokerErrorKind::OffsetOutOfRange))
        );
        assert!(
            !results.contains_key(&TopicPartition::new("r", 1)),
            "NOT_LEADER retried"
        );
        assert!(
            !results.contains_key(&TopicPartition::new("r", 3)),
            "missing retried"
        );
    }

    #[test]
    fn nothing_to_purge_needs_no_connection() {
        let mut p = RecordPurger::new(ClientConfig::new("127.0.0.1:1"));
        let r = p
            .delete_records_before(&BTreeMap::new(), Instant::now() + Duration::from_secs(1))
            .unwrap();
        assert!(r.is_empty());
        assert!(p.client.is_none());
    }
}
