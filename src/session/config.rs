//! `StreamsGroupConfig`: everything a member needs to join, checked before any connection.

use std::time::Duration;

use crate::config::{ClientConfig, ClientMetrics, SecurityProtocol, TlsConfig};
use crate::error::Error;
use crate::streams::membership::random_process_id;
use crate::streams::{MembershipConfig, RetryBackoff, StreamsTopology, UserEndpoint};

/// Default number of attempts a blocking call makes before it gives up (see
/// [`StreamsGroupConfig::max_retries`]).
pub const DEFAULT_MAX_RETRIES: u32 = 5;

/// Default `RebalanceTimeoutMs` (Kafka Streams sends `max.poll.interval.ms`, 300 s).
pub const DEFAULT_REBALANCE_TIMEOUT_MS: i32 = 300_000;

/// Default time [`crate::StreamsGroupSession::join`] waits for the broker to accept the member.
pub const DEFAULT_JOIN_TIMEOUT: Duration = Duration::from_secs(60);

/// Default time a graceful close waits for the leave heartbeat to be answered.
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// Configuration of one Streams group member.
///
/// ```
/// use kafka_streams_group::{StreamsGroupConfig, StreamsTopology, Subtopology};
///
/// let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("input"));
/// let config = StreamsGroupConfig::new("127.0.0.1:9092", "my-app", topology)
///     .client_id("my-app-1")
///     .rebalance_timeout_ms(60_000);
/// config.validate().unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct StreamsGroupConfig {
    client: ClientConfig,
    group_id: String,
    topology: StreamsTopology,
    process_id: String,
    user_endpoint: Option<UserEndpoint>,
    rack_id: Option<String>,
    client_tags: Vec<(String, String)>,
    instance_id: Option<String>,
    rebalance_timeout_ms: i32,
    max_retries: u32,
    join_timeout: Duration,
    close_timeout: Duration,
}

impl StreamsGroupConfig {
    /// A member of group `group_id` (Kafka Streams' `application.id`) running `topology`,
    /// reaching the cluster through the comma-separated `bootstrap_servers`.
    ///
    /// Defaults: a fresh random process id, no endpoint, rack, tags or instance id, a 300 s
    /// rebalance timeout, [`DEFAULT_MAX_RETRIES`], [`DEFAULT_JOIN_TIMEOUT`],
    /// [`DEFAULT_CLOSE_TIMEOUT`], and [`ClientConfig`]'s defaults.
    pub fn new(
        bootstrap_servers: impl Into<String>,
        group_id: impl Into<String>,
        topology: StreamsTopology,
    ) -> Self {
        Self {
            client: ClientConfig::new(bootstrap_servers),
            group_id: group_id.into(),
            topology,
            process_id: random_process_id(&mut rand::rng()),
            user_endpoint: None,
            rack_id: None,
            client_tags: Vec::new(),
            instance_id: None,
            rebalance_timeout_ms: DEFAULT_REBALANCE_TIMEOUT_MS,
            max_retries: DEFAULT_MAX_RETRIES,
            join_timeout: DEFAULT_JOIN_TIMEOUT,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
        }
    }

    fn map_client(mut self, f: impl FnOnce(ClientConfig) -> ClientConfig) -> Self {
        let placeholder = ClientConfig::new(String::new());
        let client = std::mem::replace(&mut self.client, placeholder);
        self.client = f(client);
        self
    }

    /// Replaces the whole client configuration (TLS, SASL, timeouts …). Its bootstrap servers
    /// replace the ones given to [`StreamsGroupConfig::new`].
    pub fn client_config(mut self, client: ClientConfig) -> Self {
        self.client = client;
        self
    }

    /// Same as [`StreamsGroupConfig::client_config`].
    pub fn with_client_config(self, client: ClientConfig) -> Self {
        self.client_config(client)
    }

    /// The client id sent in every request header (default `kafka-streams-group`).
    pub fn client_id(self, id: impl Into<String>) -> Self {
        self.map_client(|c| c.client_id(id))
    }

    /// Makes the member static (`group.instance.id`). Needs a Kafka 4.4+ broker
    /// (StreamsGroupHeartbeat v1); joining an older broker fails with an error naming it.
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        self.instance_id = Some(id.into());
        self
    }

    /// Rack id (`client.rack`), sent on join.
    pub fn rack_id(mut self, rack: impl Into<String>) -> Self {
        self.rack_id = Some(rack.into());
        self
    }

    /// `RebalanceTimeoutMs` sent on join: how long the broker waits for this member to give up
    /// revoked tasks before removing it (default 300000).
    pub fn rebalance_timeout_ms(mut self, ms: i32) -> Self {
        self.rebalance_timeout_ms = ms;
        self
    }

    /// The process id (a UUID string in Kafka Streams; default: a random one per config).
    /// Members of one process share it, so the broker never gives one process the same task
    /// twice.
    pub fn process_id(mut self, id: impl Into<String>) -> Self {
        self.process_id = id.into();
        self
    }

    /// The interactive-query endpoint (`application.server`).
    pub fn user_endpoint(mut self, host: impl Into<String>, port: u16) -> Self {
        self.user_endpoint = Some(UserEndpoint::new(host, port));
        self
    }

    /// Client tags for rack-aware standby placement (`client.tag.<key>`); replaces earlier ones.
    pub fn client_tags<K: Into<String>, V: Into<String>>(
        mut self,
        tags: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.client_tags = tags
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self
    }

    /// How many attempts a blocking call ([`crate::StreamsGroupSession::heartbeat`]) makes
    /// through retriable errors before it returns the last one (default 5).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// Request timeout in milliseconds (default 30000).
    pub fn request_timeout_ms(self, ms: u64) -> Self {
        self.map_client(|c| c.request_timeout(Duration::from_millis(ms)))
    }

    /// How long [`crate::StreamsGroupSession::join`] waits for the broker to accept the member.
    pub fn join_timeout(mut self, timeout: Duration) -> Self {
        self.join_timeout = timeout;
        self
    }

    /// How long a graceful close waits for the leave heartbeat to be answered.
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// Security protocol (default PLAINTEXT).
    pub fn security_protocol(self, protocol: SecurityProtocol) -> Self {
        self.map_client(|c| c.security_protocol(protocol))
    }

    /// TLS settings, for SSL and SASL_SSL.
    pub fn tls(self, tls: TlsConfig) -> Self {
        self.map_client(|c| c.tls(tls))
    }

    /// A shared metrics handle; the member records into it.
    pub fn metrics(self, metrics: ClientMetrics) -> Self {
        self.map_client(|c| c.metrics(metrics))
    }

    /// The group id.
    pub fn group_id(&self) -> &str {
        &self.group_id
    }

    /// The client configuration.
    pub fn get_client_config(&self) -> &ClientConfig {
        &self.client
    }

    /// The topology as given.
    pub fn topology(&self) -> &StreamsTopology {
        &self.topology
    }

    /// The static member instance id, if set.
    pub fn get_instance_id(&self) -> Option<&str> {
        self.instance_id.as_deref()
    }

    /// The rebalance timeout: how long the broker waits for the member to release revoked
    /// tasks before it removes the member from the group.
    pub fn get_rebalance_timeout(&self) -> Duration {
        Duration::from_millis(u64::try_from(self.rebalance_timeout_ms).unwrap_or(0))
    }

    /// The process id.
    pub fn get_process_id(&self) -> &str {
        &self.process_id
    }

    /// The configured attempts for blocking calls.
    pub fn get_max_retries(&self) -> u32 {
        self.max_retries
    }

    /// The join timeout.
    pub fn get_join_timeout(&self) -> Duration {
        self.join_timeout
    }

    /// The close timeout.
    pub fn get_close_timeout(&self) -> Duration {
        self.close_timeout
    }

    /// Checks everything that can be checked without a broker: the client settings, a
    /// non-empty group id, a valid topology (at least one subtopology, unique ids, copartition
    /// indexes in range, changelog partitions 0), a positive rebalance timeout and non-empty
    /// instance, rack and process ids where set.
    pub fn validate(&self) -> Result<(), Error> {
        self.build_config().map(|_| ())
    }

    /// Validates and produces the membership configuration the state machine runs on.
    pub fn build_config(&self) -> Result<MembershipConfig, Error> {
        self.client.validate()?;
        let invalid =
            |field: &'static str, reason: String| Error::InvalidConfiguration { field, reason };
        if self.group_id.trim().is_empty() {
            return Err(invalid("group_id", "must not be empty".into()));
        }
        self.topology
            .validate()
            .map_err(|e| invalid("topology", e.to_string()))?;
        if self.rebalance_timeout_ms <= 0 {
            return Err(invalid(
                "rebalance_timeout_ms",
                format!("must be positive, got {}", self.rebalance_timeout_ms),
            ));
        }
        if self.process_id.trim().is_empty() {
            return Err(invalid("process_id", "must not be empty".into()));
        }
        if matches!(&self.instance_id, Some(id) if id.trim().is_empty()) {
            return Err(invalid(
                "instance_id",
                "must not be empty when set (the broker rejects an empty instance id)".into(),
            ));
        }
        if matches!(&self.rack_id, Some(r) if r.trim().is_empty()) {
            return Err(invalid(
                "rack_id",
                "must not be empty when set (the broker rejects an empty rack id)".into(),
            ));
        }
        let (base, max) = self.client.get_retry_backoff();
        let mut config = MembershipConfig::new(
            self.group_id.clone(),
            self.topology.clone(),
            self.process_id.clone(),
        )
        .rebalance_timeout_ms(self.rebalance_timeout_ms)
        .retry_backoff(RetryBackoff {
            base,
            max,
            ..RetryBackoff::default()
        });
        if let Some(e) = &self.user_endpoint {
            config = config.user_endpoint(e.clone());
        }
        if let Some(r) = &self.rack_id {
            config = config.rack_id(r.clone());
        }
        if let Some(i) = &self.instance_id {
            config = config.instance_id(i.clone());
        }
        for (k, v) in &self.client_tags {
            config = config.client_tag(k.clone(), v.clone());
        }
        Ok(config)
    }
}
