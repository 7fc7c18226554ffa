//! Blocking offset commits and fetches for a Streams member, on a connection of their own to
//! the group coordinator (so a commit never waits behind, or delays, a heartbeat), or, for a
//! processing member, on the [`SharedClient`] of its processing thread
//! ([`OffsetClient::use_shared`]: the fetcher, changelog reader, producer and purger take
//! turns on it on that thread, and the commits are made there too).
//!
//! The heartbeat side owns the member epoch; this side only reads it. A commit answered
//! STALE_MEMBER_EPOCH (the broker moved the member to a newer epoch that the heartbeat has not
//! brought yet) waits until the heartbeat delivered a new epoch and is resent with it, until
//! the caller's deadline. UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH end the call: nothing was
//! committed and the member's tasks are lost.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::client::{BrokerTarget, Client, ClientError, CoordinatorKey, SharedClient};
use crate::config::ClientConfig;
use crate::error::Error;
use crate::protocol::api::offset_commit::OffsetCommitRequest;
use crate::protocol::api::offset_fetch::OffsetFetchRequest;
use crate::protocol::{ApiMessage, BrokerErrorKind, Request};
use crate::streams::commit::{
    classify_commit, classify_fetch, commit_request, fetch_request, partitions_not_in,
    CommitAnswer, CommitOffset, FetchAnswer, OffsetCommitOutcome, OffsetFetchOutcome,
    TopicPartition, MAX_OFFSET_API_VERSION, MIN_STREAMS_OFFSET_COMMIT_VERSION,
};
use crate::streams::{StreamsTaskAssignment, StreamsTopology};

use super::config::StreamsGroupConfig;
use crate::connect::client_error;

/// What the commit loop needs from the member (the session or the heartbeat thread's handle).
pub(crate) trait MemberView {
    /// The member id and current epoch.
    fn identity(&self) -> (String, i32);
    /// The tasks the application last reported as owned.
    fn owned(&self) -> StreamsTaskAssignment;
    /// The broker's target tasks.
    fn target(&self) -> StreamsTaskAssignment;
    /// Blocks until the member epoch differs from `stale` (a heartbeat brought a new one),
    /// at most until `deadline`; returns without error when it stays the same.
    fn await_new_epoch(&mut self, stale: i32, deadline: Instant) -> Result<(), Error>;
}

/// The coordinator connection and the negotiated versions of the offset APIs.
pub(crate) struct OffsetClient {
    client_config: ClientConfig,
    group_id: String,
    instance_id: Option<String>,
    topology: StreamsTopology,
    /// The client: its own (opened on first use, dropped after a broken connection) or,
    /// when `shared`, the processing thread's.
    client: Option<SharedClient>,
    shared: bool,
    /// The group's key in the client's coordinator cache.
    coordinator_key: CoordinatorKey,
    /// Coordinator node and the OffsetCommit / OffsetFetch versions it speaks.
    versions: Option<(i32, i16, i16)>,
}

impl std::fmt::Debug for OffsetClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffsetClient")
            .field("group_id", &self.group_id)
            .field("versions", &self.versions)
            .finish()
    }
}

enum Sent<R> {
    Answer(R),
    /// A retriable failure (already logged); try again after a backoff.
    Retry(String),
}

impl OffsetClient {
    pub(crate) fn new(config: &StreamsGroupConfig) -> Self {
        Self {
            client_config: config.get_client_config().clone(),
            group_id: config.group_id().to_string(),
            instance_id: config.get_instance_id().map(str::to_string),
            topology: config.topology().clone(),
            client: None,
            shared: false,
            coordinator_key: CoordinatorKey::group(config.group_id()),
            versions: None,
        }
    }

    /// Sends the commits and fetches through `client` from now on instead of a connection
    /// of their own; the caller must use them from the thread that drives the client's
    /// other users (a request holds the client for its round trip).
    pub(crate) fn use_shared(&mut self, client: SharedClient) {
        self.client = Some(client);
        self.shared = true;
        self.versions = None;
    }

    /// The topology whose tasks the offsets belong to.
    pub(crate) fn topology(&self) -> &StreamsTopology {
        &self.topology
    }

    fn backoff(&self, failures: u32, deadline: Instant) {
        let (base, max) = self.client_config.get_retry_backoff();
        let delay = base
            .saturating_mul(1u32 << failures.min(16))
            .min(max)
            .min(deadline.saturating_duration_since(Instant::now()));
        std::thread::sleep(delay);
    }

    fn ensure_coordinator(&mut self, deadline: Instant) -> Result<(i32, i16, i16), Error> {
        if self.client.is_none() {
            let timeout = deadline.saturating_duration_since(Instant::now());
            let own = Client::from_config(&self.client_config, timeout)?;
            self.client = Some(SharedClient::new(own));
        }
        let mut client = self.client.as_ref().ok_or(Error::Closed)?.lock();
        let addr = client
            .coordinator(&self.coordinator_key, deadline)
            .map_err(client_error)?;
        if let Some(c) = self.versions.filter(|c| c.0 == addr.node_id) {
            return Ok(c);
        }
        let conn = client
            .connection(BrokerTarget::Node(addr.node_id), deadline)
            .map_err(client_error)?;
        let pick = |key: i16, min_needed: i16, name: &str| {
            match conn.api_versions().range(key) {
            Some((min, max)) if max >= min_needed && min <= MAX_OFFSET_API_VERSION => {
                Ok(max.min(MAX_OFFSET_API_VERSION))
            }
            range => Err(Error::Unsupported {
                what: format!(
                    "coordinator {} offers {name} at {range:?}; a Streams member needs v{min_needed} \
                     or newer (Kafka 4.2+)",
                    addr.addr()
                ),
            }),
        }
        };
        let commit = pick(
            OffsetCommitRequest::API_KEY,
            MIN_STREAMS_OFFSET_COMMIT_VERSION,
            "OffsetCommit",
        )?;
        let fetch = pick(OffsetFetchRequest::API_KEY, 9, "OffsetFetch")?;
        log::debug!(
            "group {}: offsets go to coordinator {} (OffsetCommit v{commit}, OffsetFetch v{fetch})",
            self.group_id,
            addr.addr()
        );
        let c = (addr.node_id, commit, fetch);
        self.versions = Some(c);
        Ok(c)
    }

    /// One round trip; retriable failures (coordinator lookup, transport) become `Retry`.
    fn send<R: Request>(
        &mut self,
        request: &R,
        pick_version: impl Fn((i32, i16, i16)) -> i16,
        deadline: Instant,
    ) -> Result<Sent<R::Response>, Error> {
        let request_deadline =
            deadline.min(Instant::now() + self.client_config.get_request_timeout());
        let coordinator = match self.ensure_coordinator(request_deadline) {
            Ok(c) => c,
            Err(e) if e.is_retriable() => {
                self.forget(&e);
                return Ok(Sent::Retry(e.to_string()));
            }
            Err(e) => return Err(e),
        };
        let sent = self.client.as_ref().ok_or(Error::Closed)?.lock().send_at(
            BrokerTarget::Node(coordinator.0),
            request,
            pick_version(coordinator),
            request_deadline,
        );
        match sent {
            Ok(r) => Ok(Sent::Answer(r)),
            Err(e) => {
                let broker_error = matches!(e, ClientError::Broker { .. });
                let e = client_error(e);
                if e.is_retriable() || !broker_error {
                    self.forget(&e);
                    if e.is_retriable() {
                        return Ok(Sent::Retry(e.to_string()));
                    }
                }
                Err(e)
            }
        }
    }

    /// After a failed round trip: the coordinator is looked up again (and the client
    /// reconnected after a broken connection; a shared client drops the broken connection
    /// itself and reopens it for whichever user needs it next).
    fn forget(&mut self, e: &Error) {
        self.versions = None;
        if let Some(client) = self.client.as_ref() {
            client.lock().forget_coordinator(&self.coordinator_key);
        }
        if !self.shared && matches!(e, Error::Disconnected { .. } | Error::Io { .. }) {
            self.client = None;
        }
    }

    /// After an answer with error `kind`: a coordinator that moved is looked up again.
    fn coordinator_failed(&mut self, kind: BrokerErrorKind) {
        if let Some(client) = self.client.as_ref() {
            if client
                .lock()
                .coordinator_failed(&self.coordinator_key, kind)
            {
                self.versions = None;
            }
        }
    }

    /// Commits `offsets` for the member `view` describes; see the module docs.
    pub(crate) fn commit(
        &mut self,
        view: &mut dyn MemberView,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
        timeout: Duration,
    ) -> Result<OffsetCommitOutcome, Error> {
        self.commit_with_epoch(view, offsets, timeout, None)
    }

    /// [`OffsetClient::commit`], with the first attempt carrying `first_epoch` instead of
    /// the current epoch (tests: a commit that raced an epoch bump).
    pub(crate) fn commit_with_epoch(
        &mut self,
        view: &mut dyn MemberView,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
        timeout: Duration,
        mut first_epoch: Option<i32>,
    ) -> Result<OffsetCommitOutcome, Error> {
        let deadline = Instant::now() + timeout;
        let owned = view.owned();
        let not_owned = partitions_not_in(&self.topology, [&owned], offsets.keys());
        if !not_owned.is_empty() {
            log::warn!(
                "group {}: not committing: {} partition(s) belong to no active task this member \
                 owns (first: {})",
                self.group_id,
                not_owned.len(),
                not_owned[0]
            );
            return Ok(OffsetCommitOutcome::NotOwned {
                partitions: not_owned,
            });
        }
        let mut stale_epoch_retries = 0;
        let mut failures = 0u32;
        let mut last;
        loop {
            let (member_id, current) = view.identity();
            let epoch = first_epoch.take().unwrap_or(current);
            let request = commit_request(
                &self.group_id,
                &member_id,
                epoch,
                self.instance_id.as_deref(),
                offsets,
            );
            match self.send(&request, |c| c.1, deadline)? {
                Sent::Answer(response) => match classify_commit(&response) {
                    CommitAnswer::Committed => {
                        return Ok(OffsetCommitOutcome::Committed {
                            member_epoch: epoch,
                            stale_epoch_retries,
                            partitions: offsets.len(),
                        })
                    }
                    CommitAnswer::StaleEpoch => {
                        stale_epoch_retries += 1;
                        log::info!(
                            "group {}: commit with epoch {epoch} answered STALE_MEMBER_EPOCH; \
                             resending once the heartbeat brings the new epoch",
                            self.group_id
                        );
                        last = "STALE_MEMBER_EPOCH".into();
                        view.await_new_epoch(epoch, deadline)?;
                    }
                    CommitAnswer::Fenced(error) => {
                        log::warn!(
                            "group {}: commit refused with {error}: nothing committed, the \
                             member's tasks are lost",
                            self.group_id
                        );
                        return Ok(OffsetCommitOutcome::MemberFenced {
                            error,
                            member_epoch: epoch,
                        });
                    }
                    CommitAnswer::Retriable(kind) => {
                        self.coordinator_failed(kind);
                        last = kind.to_string();
                        self.backoff(failures, deadline);
                        failures += 1;
                    }
                    CommitAnswer::Failed { committed, failed } => {
                        return Ok(OffsetCommitOutcome::PartitionErrors { committed, failed })
                    }
                },
                Sent::Retry(reason) => {
                    last = reason;
                    self.backoff(failures, deadline);
                    failures += 1;
                }
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout {
                    operation: format!(
                        "committing {} offset(s) in group {} (last answer: {last}); raise the \
                         timeout or check the coordinator",
                        offsets.len(),
                        self.group_id
                    ),
                    limit: timeout,
                });
            }
        }
    }

    /// Fetches the committed offsets of `partitions`, which must belong to active tasks the
    /// member is assigned or owns.
    pub(crate) fn fetch(
        &mut self,
        view: &mut dyn MemberView,
        partitions: &BTreeSet<TopicPartition>,
        timeout: Duration,
    ) -> Result<OffsetFetchOutcome, Error> {
        let deadline = Instant::now() + timeout;
        let owned = view.owned();
        let target = view.target();
        let not_assigned = partitions_not_in(&self.topology, [&owned, &target], partitions);
        if !not_assigned.is_empty() {
            return Ok(OffsetFetchOutcome::NotAssigned {
                partitions: not_assigned,
            });
        }
        let mut failures = 0u32;
        let mut last;
        loop {
            let (member_id, epoch) = view.identity();
            let request = fetch_request(&self.group_id, &member_id, epoch, partitions);
            match self.send(&request, |c| c.2, deadline)? {
                Sent::Answer(response) => {
                    match classify_fetch(&response, &self.group_id, partitions) {
                        FetchAnswer::Fetched(map) => return Ok(OffsetFetchOutcome::Fetched(map)),
                        FetchAnswer::StaleEpoch => {
                            last = "STALE_MEMBER_EPOCH".into();
                            view.await_new_epoch(epoch, deadline)?;
                        }
                        FetchAnswer::Fenced(error) => {
                            return Ok(OffsetFetchOutcome::MemberFenced { error })
                        }
                        FetchAnswer::Retriable(kind) => {
                            self.coordinator_failed(kind);
                            last = kind.to_string();
                            self.backoff(failures, deadline);
                            failures += 1;
                        }
                        FetchAnswer::Failed { fetched, failed } => {
                            return Ok(OffsetFetchOutcome::PartitionErrors { fetched, failed })
                        }
                    }
                }
                Sent::Retry(reason) => {
                    last = reason;
                    self.backoff(failures, deadline);
                    failures += 1;
                }
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout {
                    operation: format!(
                        "fetching {} committed offset(s) in group {} (last answer: {last})",
                        partitions.len(),
                        self.group_id
                    ),
                    limit: timeout,
                });
            }
        }
    }
}
