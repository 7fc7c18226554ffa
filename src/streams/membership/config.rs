//! What a member is configured with: group, topology, process, endpoint, rack, tags, static
//! membership, rebalance timeout and the retry backoff curve.

use std::time::Duration;

use crate::streams::assignment::UserEndpoint;
use crate::streams::topology::StreamsTopology;

/// Capped exponential retry backoff with jitter (Java `retry.backoff.ms`,
/// `retry.backoff.max.ms`, `RequestState.RETRY_BACKOFF_JITTER`).
#[derive(Clone, Debug, PartialEq)]
pub struct RetryBackoff {
    /// Delay after the first failure (default 100 ms).
    pub base: Duration,
    /// Upper bound of any delay (default 1000 ms).
    pub max: Duration,
    /// Relative jitter: each delay is multiplied by a factor in `[1 - jitter, 1 + jitter)`
    /// (default 0.2). Must be within `0.0..=1.0`.
    pub jitter: f64,
}

impl Default for RetryBackoff {
    fn default() -> Self {
        Self {
            base: Duration::from_millis(100),
            max: Duration::from_millis(1000),
            jitter: 0.2,
        }
    }
}

impl RetryBackoff {
    /// The delay after `attempts` earlier consecutive failures (0 for the first failure), with
    /// `unit` a uniform random number in `[0, 1)` choosing the jitter. Pure, so that the curve
    /// can be tested exactly.
    pub fn delay(&self, attempts: u32, unit: f64) -> Duration {
        let base = self.base.as_secs_f64();
        let max = self.max.as_secs_f64();
        // 2^attempts overflows nothing here: the exponent is capped long before f64 trouble.
        let term = base * 2f64.powi(attempts.min(62) as i32);
        let unit = if unit.is_finite() {
            unit.clamp(0.0, 1.0)
        } else {
            0.5
        };
        let factor = 1.0 - self.jitter + 2.0 * self.jitter * unit;
        let secs = (term * factor).min(max).max(0.0);
        Duration::from_secs_f64(secs)
    }
}

/// What the member declares about itself. Built with [`MembershipConfig::new`] and the
/// setters; checked by [`StreamsMembership::new`](super::StreamsMembership::new).
#[derive(Clone, Debug)]
pub struct MembershipConfig {
    /// The group id (Kafka Streams' `application.id`).
    pub group_id: String,
    /// The topology; normalised by [`StreamsMembership::new`](super::StreamsMembership::new).
    pub topology: StreamsTopology,
    /// Id of the process hosting this member (a UUID string in Java; shared by all members of
    /// one process). See [`random_process_id`](super::random_process_id).
    pub process_id: String,
    /// Interactive-query endpoint (`application.server`).
    pub user_endpoint: Option<UserEndpoint>,
    /// Rack id (`client.rack`).
    pub rack_id: Option<String>,
    /// Client tags for rack-aware standby placement (`client.tag.*`).
    pub client_tags: Vec<(String, String)>,
    /// Static membership instance id (`group.instance.id`); needs a v1 (Kafka 4.4+) broker.
    pub instance_id: Option<String>,
    /// `RebalanceTimeoutMs` sent on join (Java: `max.poll.interval.ms`, default 300000).
    pub rebalance_timeout_ms: i32,
    /// Retry backoff for failed heartbeats.
    pub retry_backoff: RetryBackoff,
}

impl MembershipConfig {
    /// A dynamic member with no endpoint, rack or tags, a 300 s rebalance timeout and the
    /// default backoff.
    pub fn new(
        group_id: impl Into<String>,
        topology: StreamsTopology,
        process_id: impl Into<String>,
    ) -> Self {
        Self {
            group_id: group_id.into(),
            topology,
            process_id: process_id.into(),
            user_endpoint: None,
            rack_id: None,
            client_tags: Vec::new(),
            instance_id: None,
            rebalance_timeout_ms: 300_000,
            retry_backoff: RetryBackoff::default(),
        }
    }

    /// Sets the interactive-query endpoint.
    pub fn user_endpoint(mut self, endpoint: UserEndpoint) -> Self {
        self.user_endpoint = Some(endpoint);
        self
    }

    /// Sets the rack id.
    pub fn rack_id(mut self, rack: impl Into<String>) -> Self {
        self.rack_id = Some(rack.into());
        self
    }

    /// Adds a client tag.
    pub fn client_tag(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.client_tags.push((key.into(), value.into()));
        self
    }

    /// Makes the member static.
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        self.instance_id = Some(id.into());
        self
    }

    /// Sets the rebalance timeout.
    pub fn rebalance_timeout_ms(mut self, ms: i32) -> Self {
        self.rebalance_timeout_ms = ms;
        self
    }

    /// Sets the retry backoff.
    pub fn retry_backoff(mut self, backoff: RetryBackoff) -> Self {
        self.retry_backoff = backoff;
        self
    }
}
