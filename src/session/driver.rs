//! The one piece of I/O glue around the pure membership state machine.
//!
//! Both the blocking [`crate::StreamsGroupSession`] and the heartbeat thread own a `Driver`
//! and call [`Driver::poll`] whenever [`Driver::next_wakeup`] says so: it finds the
//! coordinator when the state machine needs one, sends the heartbeat the state machine asks
//! for, feeds the answer (or the failure) back, and publishes what changed. It is the only
//! place that reads the clock; the state machine gets `now` passed in.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

use crate::client::{coordinator_moved, BrokerTarget, Client, ClientError, CoordinatorKey};
use crate::config::{ClientConfig, ClientMetrics};
use crate::connect::client_error;
use crate::error::{BrokerErrorContext, Error};
use crate::protocol::api::streams_group_heartbeat::{
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
};
use crate::protocol::{ApiMessage, BrokerErrorKind};
use crate::streams::membership::{LeaveOutcome, MAX_HEARTBEAT_VERSION};
use crate::streams::{
    HeartbeatFailure, MemberState, MembershipCommand, MembershipEvent, RetryBackoff,
    StreamsGroupSessionAssignment, StreamsMembership, TasksLostReason,
};
use crate::transport::stream::Interrupt;
use crate::transport::TransportError;

use super::metrics::MemberMetrics;
use super::shared::{Shared, StreamsGroupState};

mod leave;

/// The outcome of one heartbeat round trip: `Ok` when the broker answered without error.
pub(crate) type RoundTrip = Result<(), Error>;

pub(crate) struct Driver {
    client_config: ClientConfig,
    client: Option<Client>,
    pub(crate) membership: StreamsMembership,
    /// Node id of the coordinator the state machine was told about.
    coordinator: Option<i32>,
    /// The group's key in the client's coordinator cache.
    coordinator_key: CoordinatorKey,
    /// When the next coordinator lookup may run (after a failed one).
    lookup_at: Option<Instant>,
    lookup_failures: u32,
    /// When the last coordinator lookup succeeded. As in Java's `RequestState`, a new lookup
    /// waits one base backoff after the previous answer, so a broker that answers
    /// NOT_COORDINATOR while FindCoordinator keeps naming it (a coordinator still loading)
    /// is not hammered at network speed; a real move (long after the last lookup) is not
    /// delayed at all.
    lookup_ok_at: Option<Instant>,
    backoff: RetryBackoff,
    request_timeout: Duration,
    group_id: String,
    shared: Arc<Shared>,
    metrics: ClientMetrics,
    pub(crate) member_metrics: Arc<MemberMetrics>,
    /// The error that stopped the session, if any.
    failure: Option<Arc<Error>>,
    /// The last broker or transport error of a heartbeat, for blocking callers.
    last_error: Option<Error>,
    /// What was last published to `shared` (the same `Arc`), to publish only changes.
    last_published: Arc<StreamsGroupSessionAssignment>,
    last_statuses: Vec<(i8, String)>,
    rng: rand::rngs::StdRng,
    /// Cuts blocking I/O short when the handle closes or drops (see [`Interrupt`]).
    interrupt: Interrupt,
    /// The deadline of the blocking call driving this driver on the caller's thread (join,
    /// heartbeat, close), if any: no lookup or heartbeat it starts outlives it.
    call_deadline: Option<Instant>,
    /// A leave heartbeat whose delivery failed retriably (NOT_COORDINATOR, coordinator not
    /// available, a broken or timed-out connection). The state machine treats a leave as fire
    /// and forget, like Java; the runtime resends it to the (re-discovered) coordinator until
    /// the close deadline, so that the broker hands the tasks over at once instead of after
    /// the session timeout. The state machine hears of the leave's fate once: the answer that
    /// finally arrives, or a disconnect when the close deadline passes.
    leave_retry: Option<StreamsGroupHeartbeatRequest>,
    leave_retry_at: Option<Instant>,
    leave_failures: u32,
    /// Why the last delivery of the leave heartbeat failed, for the error of `close`.
    leave_error: Option<Error>,
    /// Every heartbeat answer is decoded into this one value, reusing its strings and lists,
    /// so a steady member's responses decode without allocating.
    response: StreamsGroupHeartbeatResponse,
}

impl Driver {
    pub(crate) fn new(
        client_config: ClientConfig,
        group_id: String,
        membership: StreamsMembership,
        shared: Arc<Shared>,
    ) -> Self {
        let (base, max) = client_config.get_retry_backoff();
        let metrics = client_config.get_metrics().clone();
        Self {
            request_timeout: client_config.get_request_timeout(),
            coordinator_key: CoordinatorKey::group(group_id.as_str()),
            group_id,
            client_config,
            client: None,
            membership,
            coordinator: None,
            lookup_at: None,
            lookup_failures: 0,
            lookup_ok_at: None,
            backoff: RetryBackoff {
                base,
                max,
                ..RetryBackoff::default()
            },
            shared,
            metrics,
            member_metrics: Arc::new(MemberMetrics::default()),
            failure: None,
            last_error: None,
            last_published: Arc::new(StreamsGroupSessionAssignment::new()),
            last_statuses: Vec::new(),
            rng: rand::rngs::StdRng::from_rng(&mut rand::rng()),
            interrupt: Interrupt::new(),
            call_deadline: None,
            leave_retry: None,
            leave_retry_at: None,
            leave_failures: 0,
            leave_error: None,
            response: StreamsGroupHeartbeatResponse::default(),
        }
    }

    /// Bounds the I/O of the following polls by `deadline` too (not only by the request
    /// timeout), so that a blocking call returns by its own deadline even when a broker
    /// accepts connections and never answers; `None` lifts the bound.
    pub(crate) fn set_call_deadline(&mut self, deadline: Option<Instant>) {
        self.call_deadline = deadline;
    }

    /// `at`, brought forward to the blocking call's deadline if that is earlier.
    fn io_deadline(&self, at: Instant) -> Instant {
        self.call_deadline.map_or(at, |d| d.min(at))
    }

    /// The interrupt shared with every connection this driver opens.
    pub(crate) fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }

    /// Gives up resending the leave (the close deadline passed): the state machine learns
    /// that it failed and counts the member as left.
    pub(crate) fn abandon_leave(&mut self) {
        if self.leave_retry.take().is_some() {
            self.membership.handle_error(
                Instant::now(),
                HeartbeatFailure::Disconnected(
                    "close deadline passed before the leave was answered".into(),
                ),
            );
            self.drain_events();
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub(crate) fn failure(&self) -> Option<&Arc<Error>> {
        self.failure.as_ref()
    }

    pub(crate) fn take_last_error(&mut self) -> Option<Error> {
        self.last_error.take()
    }

    pub(crate) fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Applies a command to the state machine and publishes what it changed.
    pub(crate) fn command(
        &mut self,
        now: Instant,
        command: MembershipCommand,
    ) -> Result<(), Error> {
        if let Some(f) = &self.failure {
            return Err(Error::from_shared(f));
        }
        let r = self.membership.handle_command(now, command);
        self.drain_events();
        self.shared.publish_owned(self.membership.owned_tasks());
        r.map_err(Error::from)
    }

    /// True while the member needs a coordinator to talk to.
    fn wants_coordinator(&self) -> bool {
        self.failure.is_none()
            && matches!(
                self.membership.state(),
                MemberState::Joining
                    | MemberState::Reconciling
                    | MemberState::Acknowledging
                    | MemberState::Stable
                    | MemberState::Leaving
            )
    }

    /// When [`Driver::poll`] has something to do next; `None` = only a command can change that.
    pub(crate) fn next_wakeup(&self) -> Option<Instant> {
        if self.failure.is_some() {
            return None;
        }
        if self.leave_retry.is_some() {
            let mut at = self.leave_retry_at.unwrap_or_else(Instant::now);
            if self.coordinator.is_none() {
                at = at.max(self.lookup_at.unwrap_or(at));
            }
            return Some(at);
        }
        if self.wants_coordinator() && !self.membership.has_coordinator() {
            return Some(self.lookup_at.unwrap_or_else(Instant::now));
        }
        self.membership.poll_timeout()
    }

    /// Does what is due at `now`: a coordinator lookup and/or one heartbeat round trip.
    /// Returns the outcome of the round trip if one happened.
    pub(crate) fn poll(&mut self, now: Instant) -> Option<RoundTrip> {
        if self.failure.is_some() {
            return None;
        }
        if self.leave_retry.is_some() {
            return self.poll_leave_retry(now);
        }
        if self.wants_coordinator()
            && !self.membership.has_coordinator()
            && self.lookup_at.is_none_or(|at| now >= at)
        {
            self.find_coordinator(now);
        }
        let outcome = self
            .membership
            .poll_request(now)
            .map(|request| self.send_heartbeat(&request));
        self.drain_events();
        outcome
    }

    fn poll_leave_retry(&mut self, now: Instant) -> Option<RoundTrip> {
        if self.coordinator.is_none() {
            if self.lookup_at.is_some_and(|at| now < at) {
                return None;
            }
            self.find_coordinator(now);
            if self.coordinator.is_none() || self.failure.is_some() {
                return None;
            }
        }
        if self.leave_retry_at.is_some_and(|at| now < at) {
            return None;
        }
        let request = self.leave_retry.take()?;
        log::info!("group {}: resending the leave heartbeat", self.group_id);
        let outcome = self.send_heartbeat(&request);
        self.drain_events();
        Some(outcome)
    }

    /// The earliest time of the next coordinator lookup after the coordinator was lost.
    fn next_lookup_at(&mut self) -> Option<Instant> {
        let ok_at = self.lookup_ok_at?;
        let at = ok_at + self.backoff.delay(0, self.rng.random());
        (at > Instant::now()).then_some(at)
    }

    /// Keeps a leave whose delivery failed retriably for another attempt, after `delay`.
    fn retry_leave(&mut self, request: &StreamsGroupHeartbeatRequest, delay: Duration) {
        self.leave_failures = self.leave_failures.saturating_add(1);
        self.lose_coordinator();
        self.lookup_at = self.next_lookup_at();
        self.leave_retry = Some(request.clone());
        self.leave_retry_at = Some(Instant::now() + delay);
    }

    /// Forgets the coordinator, here and in the client's cache, so that the next lookup asks
    /// FindCoordinator again.
    fn lose_coordinator(&mut self) {
        self.coordinator = None;
        if let Some(client) = self.client.as_mut() {
            client.forget_coordinator(&self.coordinator_key);
        }
    }

    fn find_coordinator(&mut self, now: Instant) {
        // The lookup (bootstrap included) waits at most a request timeout, and never past
        // the deadline of the blocking call that drives it (a 3 s join must not wait 30 s).
        let deadline = self.io_deadline(now + self.request_timeout);
        let result = (|| -> Result<(i32, String, i16), Error> {
            if self.client.is_none() {
                // from_config keeps the typed error of a broker that refused us (SASL, TLS):
                // those are not retriable, so a wrong password fails the join at once instead
                // of reconnecting until the join timeout.
                let timeout = deadline.saturating_duration_since(Instant::now());
                let client = Client::from_config_with(
                    &self.client_config,
                    timeout,
                    Some(self.interrupt.clone()),
                )?;
                self.client = Some(client);
            }
            let client = self.client.as_mut().ok_or(Error::Closed)?;
            let addr = client
                .coordinator(&self.coordinator_key, deadline)
                .map_err(client_error)?;
            let conn = client
                .connection(BrokerTarget::Node(addr.node_id), deadline)
                .map_err(client_error)?;
            let range = conn
                .api_versions()
                .range(StreamsGroupHeartbeatRequest::API_KEY);
            let broker = format!("{} (node {})", addr.addr(), addr.node_id);
            let version = match range {
                Some((min, max)) if min <= MAX_HEARTBEAT_VERSION => max.min(MAX_HEARTBEAT_VERSION),
                _ => {
                    return Err(Error::Unsupported {
                        what: format!(
                            "broker {broker} does not offer StreamsGroupHeartbeat (API 88) at a \
                             version this library speaks (it offers {range:?}); Streams groups \
                             need Kafka 4.2 or newer"
                        ),
                    })
                }
            };
            Ok((addr.node_id, broker, version))
        })();
        match result {
            Ok((node, broker, api_version)) => {
                log::debug!(
                    "group {}: coordinator is {broker}, StreamsGroupHeartbeat v{api_version}",
                    self.group_id
                );
                self.coordinator = Some(node);
                self.lookup_at = None;
                self.lookup_failures = 0;
                self.lookup_ok_at = Some(Instant::now());
                if let Err(e) = self.membership.handle_command(
                    now,
                    MembershipCommand::CoordinatorReady {
                        broker,
                        api_version,
                    },
                ) {
                    self.fail(Error::from(e));
                }
            }
            Err(e) if e.is_retriable() => {
                // Found but not reachable: look it up again next time.
                self.lose_coordinator();
                let delay = self.backoff.delay(self.lookup_failures, self.rng.random());
                self.lookup_failures = self.lookup_failures.saturating_add(1);
                self.member_metrics.record_retry();
                self.metrics.record_retry();
                log::warn!(
                    "group {}: cannot reach the group coordinator ({e}); retrying in {delay:?}",
                    self.group_id
                );
                // A broken bootstrap connection is useless; start over next time.
                if matches!(e, Error::Disconnected { .. } | Error::Io { .. }) {
                    self.client = None;
                }
                self.lookup_at = Some(Instant::now() + delay);
                self.last_error = Some(e);
            }
            Err(e) => {
                log::error!(
                    "group {}: giving up on the coordinator lookup: {e}",
                    self.group_id
                );
                self.fail(e);
            }
        }
    }

    fn send_heartbeat(&mut self, request: &StreamsGroupHeartbeatRequest) -> RoundTrip {
        let version = self.membership.api_version().unwrap_or(0);
        let (Some(node), Some(client)) = (self.coordinator, self.client.as_mut()) else {
            // The state machine believed in a coordinator the driver has not got; tell it.
            let now = Instant::now();
            self.membership.handle_error(
                now,
                HeartbeatFailure::Disconnected("no coordinator connection".into()),
            );
            return Err(Error::Disconnected {
                broker: None,
                reason: "no coordinator connection".into(),
            });
        };
        let started = Instant::now();
        let deadline = self
            .call_deadline
            .map_or(started + self.request_timeout, |d| {
                d.min(started + self.request_timeout)
            });
        log::debug!(
            "group {}: heartbeat v{version} epoch {}",
            self.group_id,
            request.member_epoch
        );
        let result = client.send_at_into(
            BrokerTarget::Node(node),
            request,
            version,
            deadline,
            &mut self.response,
        );
        let now = Instant::now();
        let latency = now.saturating_duration_since(started);
        let is_leave = request.member_epoch < 0;
        match result {
            Ok(()) => {
                let response = &self.response;
                self.member_metrics.record_heartbeat(latency, now);
                let code = response.error_code;
                let message = response.error_message.clone();
                let moved = coordinator_moved(BrokerErrorKind::from_code(code));
                if is_leave && moved {
                    // Like a heartbeat after a coordinator move: look it up again, no backoff.
                    log::info!(
                        "group {}: leave answered {}; resending it to the new coordinator",
                        self.group_id,
                        BrokerErrorKind::from_code(code)
                    );
                    self.retry_leave(request, Duration::ZERO);
                    let e = Error::broker(
                        code,
                        message,
                        BrokerErrorContext {
                            api: Some("StreamsGroupHeartbeat"),
                            group: Some(self.group_id.clone()),
                            broker: None,
                        },
                    );
                    self.leave_error = Some(e.clone());
                    return Err(e);
                }
                self.leave_retry = None;
                self.membership.handle_response(now, response);
                if code == 0 {
                    // `last_error` is the error since the last good answer.
                    self.last_error = None;
                    Ok(())
                } else {
                    self.metrics
                        .record_error(StreamsGroupHeartbeatRequest::API_KEY);
                    let kind = BrokerErrorKind::from_code(code);
                    if !coordinator_moved(kind) {
                        self.member_metrics.record_retry();
                    }
                    log::warn!(
                        "group {}: heartbeat answered {kind}{}",
                        self.group_id,
                        message
                            .as_deref()
                            .map(|m| format!(": {m}"))
                            .unwrap_or_default()
                    );
                    let e = Error::broker(
                        code,
                        message,
                        BrokerErrorContext {
                            api: Some("StreamsGroupHeartbeat"),
                            group: Some(self.group_id.clone()),
                            broker: None,
                        },
                    );
                    self.last_error = Some(e.clone());
                    Err(e)
                }
            }
            Err(e) => {
                self.metrics
                    .record_error(StreamsGroupHeartbeatRequest::API_KEY);
                self.member_metrics.record_retry();
                let failure = heartbeat_failure(&e);
                log::warn!("group {}: heartbeat failed: {e}", self.group_id);
                if is_leave
                    && matches!(
                        failure,
                        HeartbeatFailure::Disconnected(_) | HeartbeatFailure::TimedOut
                    )
                {
                    let delay = self.backoff.delay(self.leave_failures, self.rng.random());
                    self.retry_leave(request, delay);
                    let e = client_error(e);
                    self.leave_error = Some(e.clone());
                    return Err(e);
                }
                // Any transport failure: forget the coordinator connection; the state
                // machine asks for a new lookup (CoordinatorLost) and a full heartbeat.
                if !matches!(e, ClientError::Broker { .. }) {
                    self.lose_coordinator();
                }
                let err = client_error(e);
                self.membership.handle_error(now, failure);
                self.last_error = Some(err.clone());
                Err(err)
            }
        }
    }

    /// Stops the session for good with `error`.
    pub(crate) fn fail(&mut self, error: Error) {
        let now = Instant::now();
        if self.membership.failure().is_none() {
            self.membership
                .handle_error(now, HeartbeatFailure::Fatal(error.to_string()));
        }
        let error = Arc::new(error);
        self.failure = Some(error.clone());
        self.drain_events();
        self.shared.publish_state(
            StreamsGroupState::Failed(error),
            self.membership.member_epoch(),
        );
    }

    /// Moves the state machine's events to the shared snapshot, the logs and the metrics.
    pub(crate) fn drain_events(&mut self) {
        while let Some(event) = self.membership.poll_event() {
            match event {
                MembershipEvent::StateChanged { from, to } => {
                    if to == MemberState::Reconciling && from != MemberState::Reconciling {
                        self.member_metrics.record_rebalance_started();
                        log::info!("group {}: rebalance started", self.group_id);
                    }
                    if matches!(from, MemberState::Reconciling | MemberState::Acknowledging)
                        && to == MemberState::Stable
                    {
                        {
                            log::info!(
                                "group {}: rebalance done, member epoch {}",
                                self.group_id,
                                self.membership.member_epoch()
                            );
                        }
                    }
                    if from == MemberState::Joining && to != MemberState::Joining {
                        log::info!(
                            "group {}: joined as member {} (epoch {})",
                            self.group_id,
                            self.membership.member_id(),
                            self.membership.member_epoch()
                        );
                    }
                    if to != MemberState::Failed {
                        self.shared.publish_state(
                            StreamsGroupState::from_member_state(to),
                            self.membership.member_epoch(),
                        );
                    }
                }
                MembershipEvent::AssignmentUpdated { assignment, .. } => {
                    self.log_status_changes(&assignment);
                }
                MembershipEvent::TasksLost { reason, tasks } => {
                    self.shared.publish_tasks_lost();
                    if reason == TasksLostReason::Fenced {
                        self.member_metrics.record_rejoin();
                        log::warn!(
                            "group {}: member {} was fenced; {} task(s) lost, rejoining",
                            self.group_id,
                            self.membership.member_id(),
                            tasks.iter().count()
                        );
                        self.shared.publish_state(StreamsGroupState::Fenced, 0);
                    }
                }
                MembershipEvent::CoordinatorLost => {
                    log::info!(
                        "group {}: coordinator lost; looking it up again",
                        self.group_id
                    );
                    self.lose_coordinator();
                    self.lookup_at = self.next_lookup_at();
                }
                MembershipEvent::HeartbeatIntervalAdjusted { received_ms, used } => {
                    log::warn!(
                        "group {}: the broker asked for a heartbeat interval of {received_ms} ms; \
                         using {} ms instead (the member keeps every interval within {}..={} ms; \
                         check the group's streams.heartbeat.interval.ms and the broker's \
                         group.streams.*heartbeat.interval.ms settings)",
                        self.group_id,
                        used.as_millis(),
                        crate::streams::membership::MIN_HEARTBEAT_INTERVAL.as_millis(),
                        crate::streams::membership::MAX_HEARTBEAT_INTERVAL.as_millis()
                    );
                }
                MembershipEvent::TopicAuthorizationFailed { message } => {
                    log::warn!(
                        "group {}: TOPIC_AUTHORIZATION_FAILED{}; staying in the group",
                        self.group_id,
                        message.map(|m| format!(": {m}")).unwrap_or_default()
                    );
                }
                MembershipEvent::Failed(e) => {
                    log::error!("group {}: member stopped: {e}", self.group_id);
                    if self.failure.is_none() {
                        let error = Arc::new(Error::Membership(e));
                        self.failure = Some(error.clone());
                        self.shared.publish_state(
                            StreamsGroupState::Failed(error),
                            self.membership.member_epoch(),
                        );
                    }
                }
                MembershipEvent::Left { .. }
                    if !self
                        .membership
                        .leave_outcome()
                        .is_none_or(LeaveOutcome::is_confirmed) =>
                {
                    log::warn!(
                        "group {}: member {} stopped heartbeating without a confirmed leave \
                         ({:?}); the broker removes it after the session timeout",
                        self.group_id,
                        self.membership.member_id(),
                        self.membership.leave_outcome()
                    );
                    self.shared
                        .publish_state(StreamsGroupState::Closed, self.membership.member_epoch());
                }
                MembershipEvent::Left { error } => {
                    log::info!(
                        "group {}: member {} left the group{}",
                        self.group_id,
                        self.membership.member_id(),
                        error
                            .map(|e| format!(" (leave answered {e})"))
                            .unwrap_or_default()
                    );
                    self.shared
                        .publish_state(StreamsGroupState::Closed, self.membership.member_epoch());
                }
            }
        }
        // Publish the cumulative assignment whenever it moved (tasks, statuses, endpoints,
        // epoch), as one full snapshot.
        let current = self.membership.assignment();
        if *current != *self.last_published {
            self.last_published = Arc::new(current.clone());
            self.shared.publish_assignment(self.last_published.clone());
        }
    }

    fn log_status_changes(&mut self, assignment: &StreamsGroupSessionAssignment) {
        let statuses: Vec<(i8, String)> = assignment
            .statuses
            .iter()
            .map(|s| (s.code.code(), s.detail.clone()))
            .collect();
        if statuses != self.last_statuses {
            for s in &assignment.statuses {
                log::warn!("group {}: status {:?}: {}", self.group_id, s.code, s.detail);
            }
            if statuses.is_empty() && !self.last_statuses.is_empty() {
                log::info!("group {}: statuses cleared", self.group_id);
            }
            self.last_statuses = statuses;
        }
    }
}

/// Maps a client-layer failure of a heartbeat to the state machine's input.
fn heartbeat_failure(e: &ClientError) -> HeartbeatFailure {
    match e {
        e if e.is_timeout() => HeartbeatFailure::TimedOut,
        ClientError::UnsupportedApi { .. } => HeartbeatFailure::UnsupportedVersion,
        ClientError::Sasl { reason, .. } => HeartbeatFailure::Fatal(reason.clone()),
        ClientError::SaslRefused { source, .. } => HeartbeatFailure::Fatal(source.to_string()),
        ClientError::Transport(e @ TransportError::NotTls { .. }) => {
            HeartbeatFailure::Fatal(e.to_string())
        }
        ClientError::Transport(TransportError::Tls { source, .. }) => {
            HeartbeatFailure::Fatal(source.to_string())
        }
        other => HeartbeatFailure::Disconnected(other.to_string()),
    }
}
