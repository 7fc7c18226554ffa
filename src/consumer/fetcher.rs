//! The blocking shell: a [`Client`] and a [`FetcherCore`], driven by `poll(deadline)`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::client::{BrokerTarget, Client, ClientError, SharedClient};
use crate::common::TopicPartition;
use crate::connect::client_error;
use crate::error::Error;
use crate::protocol::api::fetch::FetchRequest;
use crate::protocol::api::list_offsets::{
    ListOffsetsRequest, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP,
};

use super::config::{FetcherConfig, IsolationLevel, OffsetReset};
use super::core::FetcherCore;
use super::records::PartitionRecords;

/// Time kept between the broker's longest wait and the poll deadline for the answer to
/// travel back, at most.
const ANSWER_MARGIN: Duration = Duration::from_millis(100);

/// Below this much time before the poll deadline no Fetch is sent: it could not come back.
const MIN_FETCH_TIME: Duration = Duration::from_millis(2);

/// A blocking consumer of explicitly assigned partitions (no consumer group).
///
/// ```no_run
/// use std::time::{Duration, Instant};
/// use kafka_streams_group::consumer::{Fetcher, FetcherConfig, OffsetReset};
/// use kafka_streams_group::streams::commit::TopicPartition;
/// use kafka_streams_group::ClientConfig;
/// let config = FetcherConfig::new(ClientConfig::new("localhost:9092"))
///     .auto_offset_reset(OffsetReset::Earliest);
/// let mut fetcher = Fetcher::connect(config, Duration::from_secs(10))?;
/// fetcher.assign([TopicPartition::new("input", 0)]);
/// for part in fetcher.poll(Instant::now() + Duration::from_secs(1))? {
///     part.for_each_record(|r| println!("{} {:?}", r.offset, r.value))?;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Fetcher {
    config: FetcherConfig,
    client: SharedClient,
    core: FetcherCore,
}

impl Fetcher {
    /// Connects to the cluster within `timeout`.
    pub fn connect(config: FetcherConfig, timeout: Duration) -> Result<Fetcher, Error> {
        let client = Client::from_config(config.client(), timeout)?;
        Ok(Fetcher::with_client(SharedClient::new(client), config))
    }

    /// A fetcher on `client`, shared with other users on the same thread (e.g. a producer):
    /// no connection of its own. `config.client()` still gives the retry backoff; the
    /// connection settings are `client`'s. The fetcher's metadata and positions stay its own.
    pub fn with_client(client: SharedClient, config: FetcherConfig) -> Fetcher {
        Fetcher {
            core: FetcherCore::new(*config.settings()),
            config,
            client,
        }
    }

    /// Replaces the assignment; partitions kept keep their position and paused flag.
    pub fn assign(&mut self, partitions: impl IntoIterator<Item = TopicPartition>) {
        self.core.assign(partitions);
    }

    /// The assigned partitions.
    pub fn assignment(&self) -> Vec<TopicPartition> {
        self.core.assignment().cloned().collect()
    }

    /// The next offset to fetch for `tp`; `None` until the first poll reset it or a seek.
    pub fn position(&self, tp: &TopicPartition) -> Option<i64> {
        self.core.position(tp)
    }

    /// How many records of `tp` the broker holds past the position, as the last Fetch
    /// answer for it said (Java's `Consumer#currentLag`); `None` before such an answer.
    pub fn fetched_lag(&self, tp: &TopicPartition) -> Option<i64> {
        self.core.fetched_lag(tp)
    }

    /// The next poll fetches `tp` from `offset`.
    pub fn seek(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), Error> {
        self.core.seek(tp, offset)
    }

    /// The next poll fetches `tp` from its log start offset.
    pub fn seek_to_beginning(&mut self, tp: &TopicPartition) -> Result<(), Error> {
        self.core.seek_to(tp, OffsetReset::Earliest)
    }

    /// The next poll fetches `tp` from its log end offset.
    pub fn seek_to_end(&mut self, tp: &TopicPartition) -> Result<(), Error> {
        self.core.seek_to(tp, OffsetReset::Latest)
    }

    /// Stops fetching `tp` (its position is kept) until [`resume`](Self::resume).
    pub fn pause(&mut self, tp: &TopicPartition) -> Result<(), Error> {
        self.core.set_paused(tp, true)
    }

    /// Fetches `tp` again.
    pub fn resume(&mut self, tp: &TopicPartition) -> Result<(), Error> {
        self.core.set_paused(tp, false)
    }

    /// The paused partitions.
    pub fn paused(&self) -> Vec<TopicPartition> {
        self.core.paused().cloned().collect()
    }

    /// The configuration.
    pub fn config(&self) -> &FetcherConfig {
        &self.config
    }

    /// Fetches records of the assigned, unpaused partitions; returns as soon as some
    /// arrived, or empty at `deadline`. Positions move past the records returned.
    ///
    /// Partitions without a position are reset first (ListOffsets by `auto.offset.reset`;
    /// `none` is an error naming the partition). A moved leader (NOT_LEADER_OR_FOLLOWER,
    /// FENCED_LEADER_EPOCH, ...) or a lost connection refreshes the metadata and the poll
    /// goes on. After a leader change each position is validated (KIP-320: the leader epoch
    /// of the last record consumed is sent with every Fetch and, after a change, asked with
    /// OffsetForLeaderEpoch): a log truncated under it (unclean leader election) moves it
    /// back to the first offset known to diverge, or, under `auto.offset.reset=none`, is
    /// [`ConsumerError::LogTruncation`](super::ConsumerError::LogTruncation).
    ///
    /// The Fetches to the different leaders are in flight at the same time and their answers
    /// are applied as they come, so a poll over several leaders takes as long as the slowest
    /// one, not their sum. With `fetch.min.bytes` <= 1 (the default) and several leaders,
    /// every leader is first asked without a wait, and only when none had records are they all asked again with
    /// the broker's wait (`fetch.max.wait.ms`, never past `deadline`): one idle leader's wait
    /// never holds back another's records. With a larger `fetch.min.bytes` every Fetch waits
    /// for its leader to gather that much, and the poll ends when the last leader answered.
    /// A leader in reconnect backoff (`reconnect.backoff.ms`) is not waited for: the poll
    /// fetches from the others and refreshes the metadata.
    pub fn poll(&mut self, deadline: Instant) -> Result<Vec<PartitionRecords>, Error> {
        let backoff = self.config.client().get_retry_backoff().0;
        let mut waited = false;
        loop {
            if let Some(e) = self.core.take_error() {
                return Err(e);
            }
            let now = Instant::now();
            if now + MIN_FETCH_TIME >= deadline {
                return Ok(Vec::new());
            }
            if self.core.needs_metadata() {
                if let Err(e) = self.refresh_metadata(deadline) {
                    if !e.is_retriable() {
                        return Err(client_error(e));
                    }
                    log::debug!("fetcher metadata: {e}; retrying");
                }
                if self.core.needs_metadata() {
                    sleep_until(deadline, backoff);
                    continue;
                }
            }
            for (node, req) in self.core.reset_requests()? {
                match self.send_list_offsets(node, &req, deadline) {
                    Ok(()) => {}
                    Err(e) if e.is_retriable() => {
                        log::debug!("ListOffsets to node {node}: {e}");
                        self.core.invalidate_metadata();
                    }
                    Err(e) => return Err(client_error(e)),
                }
            }
            self.validate_positions(deadline)?;
            let nodes = self.core.fetch_nodes();
            if nodes.is_empty() {
                // Nothing to fetch (all paused, none assigned, resets pending): wait a
                // little, then look again.
                sleep_until(deadline, backoff);
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left < MIN_FETCH_TIME {
                // Too little time for a round trip: a Fetch sent now would only time out
                // and cost its connection.
                return Ok(Vec::new());
            }
            let margin = ANSWER_MARGIN.min(left / 5);
            let long = self.core.settings().max_wait.min(left - margin);
            // With fetch.min.bytes <= 1 a leader holding data answers at once anyway: ask
            // every leader without a wait first, so that one idle leader's wait does not hold
            // the others' records; only when none had any, wait for data on all of them. One
            // leader alone answers as soon as it has data: it gets the wait at once.
            let quick = !waited && nodes.len() > 1 && self.core.settings().min_bytes <= 1;
            let wait = if quick { Duration::ZERO } else { long };
            let (out, sent) = self.fetch_round(&nodes, wait, deadline)?;
            if !out.is_empty() {
                return Ok(out);
            }
            waited = true;
            if sent == 0 {
                // No leader could be asked (all in reconnect backoff): look again a little
                // later rather than spin on metadata.
                sleep_until(deadline, backoff);
            }
        }
    }

    /// The log end offset (ListOffsets `latest`) of each partition of `partitions`, assigned
    /// or not, under `isolation`: the high watermark for `read_uncommitted`, the last stable
    /// offset for `read_committed`. Kafka Streams restores changelogs up to the
    /// `read_uncommitted` end. Retries leader moves until `deadline`.
    pub fn end_offsets(
        &mut self,
        partitions: &[TopicPartition],
        isolation: IsolationLevel,
        deadline: Instant,
    ) -> Result<BTreeMap<TopicPartition, i64>, Error> {
        self.list_offsets(partitions, LATEST_TIMESTAMP, isolation, deadline)
    }

    /// The log start offset (ListOffsets `earliest`) of each partition of `partitions`,
    /// assigned or not. Retries leader moves until `deadline`.
    pub fn beginning_offsets(
        &mut self,
        partitions: &[TopicPartition],
        deadline: Instant,
    ) -> Result<BTreeMap<TopicPartition, i64>, Error> {
        let isolation = IsolationLevel::ReadUncommitted;
        self.list_offsets(partitions, EARLIEST_TIMESTAMP, isolation, deadline)
    }

    fn list_offsets(
        &mut self,
        partitions: &[TopicPartition],
        timestamp: i64,
        isolation: IsolationLevel,
        deadline: Instant,
    ) -> Result<BTreeMap<TopicPartition, i64>, Error> {
        let backoff = self.config.client().get_retry_backoff().0;
        let limit = deadline.saturating_duration_since(Instant::now());
        let mut found = BTreeMap::new();
        let mut refresh = !self.core.leaders_known(partitions);
        loop {
            let missing: Vec<TopicPartition> = partitions
                .iter()
                .filter(|tp| !found.contains_key(*tp))
                .cloned()
                .collect();
            if missing.is_empty() {
                return Ok(found);
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout {
                    operation: format!(
                        "ListOffsets of {} (leader unknown or moving)",
                        missing
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    limit,
                });
            }
            if refresh || !self.core.leaders_known(&missing) {
                let mut topics = self.core.topics();
                topics.extend(missing.iter().map(|tp| tp.topic.clone()));
                topics.sort();
                topics.dedup();
                let names: Vec<&str> = topics.iter().map(String::as_str).collect();
                let md = self.client.lock().metadata(Some(&names), deadline);
                match md {
                    Ok(md) => self.core.update_metadata(&md),
                    Err(e) if e.is_retriable() => log::debug!("fetcher metadata: {e}; retrying"),
                    Err(e) => return Err(client_error(e)),
                }
                refresh = false;
                if !self.core.leaders_known(&missing) {
                    sleep_until(deadline, backoff);
                    refresh = true;
                    continue;
                }
            }
            let before = found.len();
            for (node, req) in self.core.offsets_requests(&missing, timestamp, isolation) {
                let r = self
                    .client
                    .lock()
                    .send(BrokerTarget::Node(node), &req, deadline);
                match r {
                    Ok(resp) => self.core.handle_offsets(&resp, &mut found)?,
                    Err(e) if e.is_retriable() => {
                        log::debug!("ListOffsets to node {node}: {e}");
                        refresh = true;
                    }
                    Err(e) => return Err(client_error(e)),
                }
            }
            if found.len() < partitions.len() && found.len() == before {
                refresh = true;
                sleep_until(deadline, backoff);
            }
        }
    }

    fn refresh_metadata(&mut self, deadline: Instant) -> Result<(), ClientError> {
        let topics = self.core.topics();
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        let md = self.client.lock().metadata(Some(&names), deadline)?;
        self.core.update_metadata(&md);
        Ok(())
    }

    /// Sends the OffsetForLeaderEpoch requests that validate positions after a leader
    /// change (KIP-320); a retriable failure refreshes the metadata and asks again later.
    fn validate_positions(&mut self, deadline: Instant) -> Result<(), Error> {
        for (node, req) in self.core.validation_requests() {
            let r = self
                .client
                .lock()
                .send(BrokerTarget::Node(node), &req, deadline);
            match r {
                Ok(resp) => self.core.handle_validation(&resp),
                Err(e) if e.is_retriable() => {
                    log::debug!("OffsetForLeaderEpoch to node {node}: {e}");
                    self.core.invalidate_metadata();
                }
                Err(e) => return Err(client_error(e)),
            }
        }
        Ok(())
    }

    fn send_list_offsets(
        &mut self,
        node: i32,
        req: &ListOffsetsRequest,
        deadline: Instant,
    ) -> Result<(), ClientError> {
        let resp = self
            .client
            .lock()
            .send(BrokerTarget::Node(node), req, deadline)?;
        self.core.handle_list_offsets(&resp);
        Ok(())
    }

    /// One Fetch to each of `nodes`, all in flight at once, each asking the broker to wait
    /// at most `wait`; the answers are applied as they come. Returns the records and how
    /// many requests were sent. A leader that cannot be reached (in reconnect backoff, lost
    /// connection) refreshes the metadata; a non-retriable error is returned at once when
    /// no record arrived, else kept for the next poll (the positions of the records in hand
    /// already moved).
    fn fetch_round(
        &mut self,
        nodes: &[i32],
        wait: Duration,
        deadline: Instant,
    ) -> Result<(Vec<PartitionRecords>, usize), Error> {
        let wait_ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
        let mut client = self.client.lock();
        let mut failures = Vec::new();
        let mut requests = Vec::with_capacity(nodes.len());
        for (node, version) in client.open_each::<FetchRequest>(nodes, deadline) {
            match version {
                Ok(v) => requests.push((node, v, self.core.fetch_request(node, v, wait_ms))),
                Err(e) => failures.push((node, e)),
            }
        }
        let sent = requests.len();
        let mut out = Vec::new();
        let core = &mut self.core;
        client.send_each(requests, deadline, |node, r| match r {
            Ok(resp) => out.extend(core.handle_fetch(resp)),
            Err(e) => failures.push((node, e)),
        });
        drop(client);
        for (node, e) in failures {
            if e.is_timeout() && Instant::now() >= deadline {
                // The caller's deadline ended the wait, not the broker: the leader is still
                // the leader, so keep the metadata (refreshing it here made short polls
                // loop on refresh + reconnect without fetching).
                log::debug!("Fetch to node {node}: {e} (poll deadline reached)");
            } else if e.is_retriable() {
                log::debug!("Fetch to node {node}: {e}; refreshing metadata");
                self.core.invalidate_metadata();
            } else if out.is_empty() {
                return Err(client_error(e));
            } else {
                // Records of other leaders are in hand and their positions moved: return
                // them; the error comes with the next poll (as Java does).
                log::debug!("Fetch to node {node}: {e}; returned with the next poll");
                self.core.defer_error(client_error(e));
            }
        }
        Ok((out, sent))
    }
}

/// Sleeps `pause`, or until `deadline` if that is sooner.
fn sleep_until(deadline: Instant, pause: Duration) {
    let left = deadline.saturating_duration_since(Instant::now());
    std::thread::sleep(pause.min(left));
}
