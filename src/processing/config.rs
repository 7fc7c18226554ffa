//! The processing runtime's configuration: Kafka Streams' property keys where they exist, on
//! top of a [`ClientConfig`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::config::ClientConfig;
use crate::error::Error;
use crate::session::StreamsGroupConfig;
use crate::streams::{StreamsTopology, UserEndpoint};

use super::deserialization::DeserializationHandler;

/// Kafka Streams' default `commit.interval.ms` under at-least-once.
pub const DEFAULT_COMMIT_INTERVAL: Duration = Duration::from_millis(30_000);
/// Kafka Streams' default `commit.interval.ms` under `exactly_once_v2` (`StreamsConfig`'s
/// `EOS_DEFAULT_COMMIT_INTERVAL_MS`).
pub const EOS_DEFAULT_COMMIT_INTERVAL: Duration = Duration::from_millis(100);
/// The `transaction.timeout.ms` Kafka Streams gives its producers under `exactly_once_v2`
/// (`StreamsConfig`'s producer default): a transaction of a stopped instance is aborted by
/// its coordinator after this long.
pub const EOS_TRANSACTION_TIMEOUT: Duration = Duration::from_millis(10_000);

/// `processing.guarantee`: what a crash may do to what readers see.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProcessingGuarantee {
    /// `at_least_once` (the default): output is flushed before the input offsets are
    /// committed; after a crash the records since the last commit are processed again, so
    /// their output and store updates may appear twice.
    #[default]
    AtLeastOnce,
    /// `exactly_once_v2` (KIP-447): each stream thread has one transactional producer
    /// (`transactional.id` `<application.id>-<process id>-<thread index>`); a commit puts
    /// the output, the changelog writes and the input offsets into one transaction, and
    /// input, restores and standbys read `read_committed`. A crash or a fencing aborts the
    /// open transaction: `read_committed` readers see every input record's effect once.
    ExactlyOnceV2,
}

impl ProcessingGuarantee {
    /// Java's property value (`at_least_once`, `exactly_once_v2`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProcessingGuarantee::AtLeastOnce => "at_least_once",
            ProcessingGuarantee::ExactlyOnceV2 => "exactly_once_v2",
        }
    }
}
/// Kafka Streams' default `repartition.purge.interval.ms`.
pub const DEFAULT_PURGE_INTERVAL: Duration = Duration::from_millis(30_000);

/// Kafka Streams' default `buffered.records.per.partition`.
pub const DEFAULT_BUFFERED_RECORDS: usize = 1000;

/// A change applied last to the membership configuration a
/// [`ProcessingRuntime`](super::ProcessingRuntime) joins with
/// ([`ProcessingConfig::with_group_config`]).
pub type GroupConfigHook = Arc<dyn Fn(StreamsGroupConfig) -> StreamsGroupConfig + Send + Sync>;

/// How a [`StreamsApp`](super::StreamsApp) runs: application id (= group id), the cluster,
/// commit and purge intervals, the deserialization handler, and the membership settings
/// (endpoint, static instance id, rack, client tags, rebalance timeout, and anything else of
/// [`StreamsGroupConfig`] through [`with_group_config`](Self::with_group_config)).
///
/// ```
/// use kafka_streams_group::processing::ProcessingConfig;
/// let config = ProcessingConfig::from_properties([
///     ("application.id", "wordcount"),
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("commit.interval.ms", "1000"),
/// ])?;
/// assert_eq!(config.application_id(), "wordcount");
/// # Ok::<(), kafka_streams_group::Error>(())
/// ```
#[derive(Clone)]
pub struct ProcessingConfig {
    application_id: String,
    client: ClientConfig,
    guarantee: ProcessingGuarantee,
    /// Set explicitly; else the guarantee's default.
    commit_interval: Option<Duration>,
    purge_interval: Duration,
    poll_wait: Duration,
    buffered_records: usize,
    max_task_idle_ms: i64,
    threads: usize,
    cache_max_bytes: u64,
    deserialization_handler: DeserializationHandler,
    replication_factor: Option<i16>,
    user_endpoint: Option<UserEndpoint>,
    instance_id: Option<String>,
    rack_id: Option<String>,
    client_tags: Vec<(String, String)>,
    rebalance_timeout_ms: Option<i32>,
    state_dir: Option<PathBuf>,
    group_hooks: Vec<GroupConfigHook>,
}

impl fmt::Debug for ProcessingConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessingConfig")
            .field("application_id", &self.application_id)
            .field("client", &self.client)
            .field("guarantee", &self.guarantee)
            .field("commit_interval", &self.get_commit_interval())
            .field("purge_interval", &self.purge_interval)
            .field("poll_wait", &self.poll_wait)
            .field("buffered_records", &self.buffered_records)
            .field("threads", &self.threads)
            .field("cache_max_bytes", &self.cache_max_bytes)
            .field("deserialization_handler", &self.deserialization_handler)
            .field("replication_factor", &self.replication_factor)
            .field("user_endpoint", &self.user_endpoint)
            .field("instance_id", &self.instance_id)
            .field("rack_id", &self.rack_id)
            .field("client_tags", &self.client_tags)
            .field("rebalance_timeout_ms", &self.rebalance_timeout_ms)
            .field("state_dir", &self.state_dir)
            .field("group_hooks", &self.group_hooks.len())
            .finish()
    }
}

/// Java's `StreamsConfig` bounds these keys below only (`commit.interval.ms` and
/// `repartition.purge.interval.ms` at 0, `poll.ms` not at all) and takes any `long` above;
/// the ranges here are narrower for the reasons given on each.
///
/// `poll.ms` range: at least 1 ms (0 busy-loops a core when no records come), at most
/// 5 min (the loop checks the stop flag and acknowledges revoked tasks between polls, and
/// Java's default rebalance timeout, `max.poll.interval.ms`, is 5 min).
pub const POLL_WAIT_RANGE: (Duration, Duration) =
    (Duration::from_millis(1), Duration::from_millis(300_000));
/// `commit.interval.ms` and `repartition.purge.interval.ms` range: 1 ms to 24 h (0 would
/// flush the producer and commit on every loop; past a day, a crash reprocesses more than a
/// day of input and committed offsets approach `offsets.retention.minutes`, 7 days).
pub const INTERVAL_RANGE: (Duration, Duration) =
    (Duration::from_millis(1), Duration::from_millis(86_400_000));

impl ProcessingConfig {
    /// A configuration with Kafka Streams' defaults (commit every 30 s, purge every 30 s,
    /// `poll.ms` 100).
    pub fn new(bootstrap: impl Into<String>, application_id: impl Into<String>) -> Self {
        ProcessingConfig {
            application_id: application_id.into(),
            client: ClientConfig::new(bootstrap),
            guarantee: ProcessingGuarantee::AtLeastOnce,
            commit_interval: None,
            purge_interval: DEFAULT_PURGE_INTERVAL,
            poll_wait: Duration::from_millis(100),
            buffered_records: DEFAULT_BUFFERED_RECORDS,
            max_task_idle_ms: 0,
            threads: 1,
            cache_max_bytes: crate::state::DEFAULT_CACHE_MAX_BYTES,
            deserialization_handler: DeserializationHandler::LogAndFail,
            replication_factor: None,
            user_endpoint: None,
            instance_id: None,
            rack_id: None,
            client_tags: Vec::new(),
            rebalance_timeout_ms: None,
            state_dir: None,
            group_hooks: Vec::new(),
        }
    }

    /// Reads Java property keys, so one properties file serves the Java and the Rust
    /// instances of an application. Keys and values are trimmed; a later duplicate replaces
    /// an earlier one. Every key of Java's `StreamsConfig` is one of:
    ///
    /// * applied: the client keys of [`ClientConfig::from_properties`]
    ///   (`bootstrap.servers`, required; `client.id`, `security.protocol`, `sasl.*`,
    ///   `ssl.*.location`, timeouts, ...); `application.id` (required); the membership keys
    ///   `application.server`, `group.instance.id`, `client.rack`, `client.tag.<key>`,
    ///   `max.poll.interval.ms` (with [`StreamsGroupConfig::from_properties`]'s checks);
    ///   `commit.interval.ms` and `repartition.purge.interval.ms` (1 ms..=24 h,
    ///   [`INTERVAL_RANGE`]); `poll.ms` (1 ms..=5 min, [`POLL_WAIT_RANGE`]);
    ///   `replication.factor` (the internal topics the member declares);
    ///   `num.stream.threads` (at least 1,
    ///   [`num_stream_threads`](Self::num_stream_threads));
    ///   `buffered.records.per.partition` (at least 1,
    ///   [`buffered_records_per_partition`](Self::buffered_records_per_partition));
    ///   `statestore.cache.max.bytes` (or the deprecated `cache.max.bytes.buffering`, which
    ///   it overrides, as in Java): the record cache;
    ///   `default.deserialization.exception.handler` ([`DeserializationHandler`]);
    ///   `state.dir` (where the process id is kept, [`state_dir`](Self::state_dir));
    /// * refused unless its value is what this crate does, with the reason:
    ///   `processing.guarantee` (`at_least_once` or `exactly_once_v2`; the deprecated
    ///   `exactly_once` and `exactly_once_beta` are refused, as Kafka 4 does),
    ///   `group.protocol` (`streams`), `max.task.idle.ms` (0 or
    ///   -1), `topology.optimization` (any of Java's values: the app's topology is sent as
    ///   given), Java's default classes for the timestamp extractor and the processing and
    ///   production exception handlers;
    /// * ignored with one `info` line saying why: what only matters to a JVM (serde classes,
    ///   metrics, RocksDB, `consumer.`/`producer.`/`admin.`/`topic.` overrides, ...), what
    ///   the broker decides under the Streams protocol (`num.standby.replicas`,
    ///   `rack.aware.assignment.*`, ...), and more: the README's Processing section has the
    ///   table.
    ///
    /// Any other key is an [`Error::InvalidConfiguration`] naming it and the closest accepted
    /// key (`commit.interval.msec`: did you mean `commit.interval.ms`?).
    pub fn from_properties<I, K, V>(props: I) -> Result<ProcessingConfig, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        super::config_keys::read(props)
    }

    /// Checks the durations against their ranges ([`POLL_WAIT_RANGE`],
    /// [`INTERVAL_RANGE`]) and the replication factor (-1 or positive); the error names the
    /// field, the value and the range.
    /// [`from_properties`](Self::from_properties) and `ProcessingRuntime::start` run it (the
    /// builder methods do not fail).
    pub fn validate(&self) -> Result<(), Error> {
        check_range("poll.ms", self.poll_wait, POLL_WAIT_RANGE)?;
        check_range(
            "commit.interval.ms",
            self.get_commit_interval(),
            INTERVAL_RANGE,
        )?;
        check_range(
            "repartition.purge.interval.ms",
            self.purge_interval,
            INTERVAL_RANGE,
        )?;
        if self.threads == 0 {
            return Err(Error::InvalidConfiguration {
                field: "num.stream.threads",
                reason: "0: at least 1 (the caller runs stream thread 1)".into(),
            });
        }
        if self.buffered_records == 0 {
            return Err(Error::InvalidConfiguration {
                field: "buffered.records.per.partition",
                reason: "0: a partition's queue must take at least 1 record".into(),
            });
        }
        if !matches!(self.max_task_idle_ms, 0 | -1) {
            return Err(Error::InvalidConfiguration {
                field: "max.task.idle.ms",
                reason: format!(
                    "{}: only 0 (the default: wait for partitions known to have data on the \
                     broker) and -1 (never wait) are supported; waiting longer for producers \
                     is not supported yet",
                    self.max_task_idle_ms
                ),
            });
        }
        match self.replication_factor {
            Some(rf) if rf < 1 && rf != -1 => Err(Error::InvalidConfiguration {
                field: "replication.factor",
                reason: format!("{rf}: use -1 (the broker's default) or 1..=32767"),
            }),
            _ => Ok(()),
        }
    }

    /// Replaces the client settings (security, timeouts, client id); the bootstrap servers
    /// are the client's.
    pub fn client_config(mut self, client: ClientConfig) -> Self {
        self.client = client;
        self
    }

    /// `commit.interval.ms`: how often progress is committed (producer flushed first);
    /// 1 ms..=24 h ([`INTERVAL_RANGE`], checked by [`validate`](Self::validate)). Unless
    /// set: 30 s under at-least-once, 100 ms under `exactly_once_v2`, as in Java.
    pub fn commit_interval(mut self, interval: Duration) -> Self {
        self.commit_interval = Some(interval);
        self
    }

    /// `processing.guarantee` (default [`ProcessingGuarantee::AtLeastOnce`]). Every
    /// instance of an application must use the same one.
    pub fn processing_guarantee(mut self, guarantee: ProcessingGuarantee) -> Self {
        self.guarantee = guarantee;
        self
    }

    /// `processing.guarantee`.
    pub fn get_processing_guarantee(&self) -> ProcessingGuarantee {
        self.guarantee
    }

    /// `repartition.purge.interval.ms`: how often consumed repartition records are deleted;
    /// 1 ms..=24 h ([`INTERVAL_RANGE`], checked by [`validate`](Self::validate)).
    pub fn purge_interval(mut self, interval: Duration) -> Self {
        self.purge_interval = interval;
        self
    }

    /// `poll.ms`: the longest a fetch waits for new records (and the loop idles with no
    /// active task); 1 ms..=5 min ([`POLL_WAIT_RANGE`], checked by
    /// [`validate`](Self::validate)).
    pub fn poll_wait(mut self, wait: Duration) -> Self {
        self.poll_wait = wait;
        self
    }

    /// `buffered.records.per.partition` (default 1000): the most fetched records a
    /// partition's queue holds (copied out of the fetched batch); a partition whose queue
    /// is full is paused in the fetcher until it drains below, and what a Fetch answer
    /// holds beyond waits in the fetched buffer. At least 1 (checked by
    /// [`validate`](Self::validate)).
    pub fn buffered_records_per_partition(mut self, records: usize) -> Self {
        self.buffered_records = records;
        self
    }

    /// `max.task.idle.ms` (default 0): with 0, a task reading several partitions (a join, a
    /// merge) processes nothing while one of them has an empty queue but records on the
    /// broker (its fetched lag is above zero, or unknown before the first Fetch answer), so
    /// records are taken in timestamp order across the partitions, as Kafka Streams does
    /// (`PartitionGroup#readyToProcess`); with -1 it processes whatever was fetched. Other
    /// values are refused by [`validate`](Self::validate).
    ///
    /// ```
    /// use kafka_streams_group::processing::ProcessingConfig;
    /// let c = ProcessingConfig::new("localhost:9092", "app").max_task_idle_ms(-1);
    /// assert_eq!(c.get_max_task_idle_ms(), -1);
    /// ```
    pub fn max_task_idle_ms(mut self, ms: i64) -> Self {
        self.max_task_idle_ms = ms;
        self
    }

    /// `num.stream.threads` (default 1): the stream threads of this instance, each a member
    /// of the group with its own loop, all with one process id (see
    /// [`ProcessingRuntime::start`](super::ProcessingRuntime::start)). At least 1 (checked
    /// by [`validate`](Self::validate)).
    pub fn num_stream_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// `replication.factor`: the replication factor of the internal topics (repartition and
    /// changelog topics) the member declares to the broker, for those the topology leaves at
    /// the broker's default (-1 or 0), as Java applies it to every internal topic. Default:
    /// the broker's default; -1 or 1..=32767 (checked by [`validate`](Self::validate)).
    pub fn replication_factor(mut self, replication_factor: i16) -> Self {
        self.replication_factor = Some(replication_factor);
        self
    }

    /// `application.server`: the interactive-query endpoint the member advertises.
    pub fn user_endpoint(mut self, host: impl Into<String>, port: u16) -> Self {
        self.user_endpoint = Some(UserEndpoint::new(host, port));
        self
    }

    /// `group.instance.id`: makes the member static (Kafka 4.4+ brokers).
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        self.instance_id = Some(id.into());
        self
    }

    /// `client.rack`: the member's rack.
    pub fn rack_id(mut self, rack: impl Into<String>) -> Self {
        self.rack_id = Some(rack.into());
        self
    }

    /// `client.tag.<key>`: client tags for rack-aware standby placement; replaces earlier
    /// ones.
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

    /// `max.poll.interval.ms`: the rebalance timeout sent on join (default 300000).
    pub fn rebalance_timeout_ms(mut self, ms: i32) -> Self {
        self.rebalance_timeout_ms = Some(ms);
        self
    }

    /// `state.dir`: where the instance keeps its process id across restarts, in
    /// `<dir>/<application.id>/kafka-streams-process-metadata` (Java's file and format), so a
    /// restarted instance keeps its `transactional.id`s and fences its predecessor's producer
    /// at once, and the broker sees the same process. The directory is created if missing and
    /// locked while the runtime runs: each instance needs its own. Unset (the default), the
    /// process id is new at every start. Stores stay in memory either way. A process id set
    /// through [`with_group_config`](Self::with_group_config) wins over the stored one.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// The state directory, if set.
    pub fn get_state_dir(&self) -> Option<&Path> {
        self.state_dir.as_deref()
    }

    /// Any other membership setting ([`StreamsGroupConfig`]: process id, join and close
    /// timeouts, retries, metrics, ...): `f` is applied last to the configuration
    /// [`group_config`](Self::group_config) builds, after every setting above; hooks run in
    /// the order they were added.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kafka_streams_group::processing::ProcessingConfig;
    /// use kafka_streams_group::{StreamsTopology, Subtopology};
    /// let config = ProcessingConfig::new("127.0.0.1:9092", "orders")
    ///     .user_endpoint("orders-1.internal", 8080)
    ///     .with_group_config(|g| g.process_id("3f1c...").join_timeout(Duration::from_secs(5)));
    /// let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("in"));
    /// let group = config.group_config(&topology);
    /// assert_eq!(group.get_process_id(), "3f1c...");
    /// ```
    pub fn with_group_config(
        mut self,
        f: impl Fn(StreamsGroupConfig) -> StreamsGroupConfig + Send + Sync + 'static,
    ) -> Self {
        self.group_hooks.push(Arc::new(f));
        self
    }

    /// The membership configuration a [`ProcessingRuntime`](super::ProcessingRuntime) joins
    /// with for `topology`: group id = `application.id`, this client, the member settings,
    /// `replication.factor` applied to the topology's internal topics, then the
    /// [`with_group_config`](Self::with_group_config) hooks. Checked when the member joins
    /// ([`StreamsGroupConfig::validate`]).
    pub fn group_config(&self, topology: &StreamsTopology) -> StreamsGroupConfig {
        self.group_config_for(topology, None)
    }

    /// [`group_config`](Self::group_config) with `process_id` (the one kept in the state
    /// directory) set before the hooks, so a hook's own process id wins.
    pub(crate) fn group_config_for(
        &self,
        topology: &StreamsTopology,
        process_id: Option<&str>,
    ) -> StreamsGroupConfig {
        let mut topology = topology.clone();
        if let Some(rf) = self.replication_factor {
            apply_replication_factor(&mut topology, rf);
        }
        let mut g = StreamsGroupConfig::new(String::new(), self.application_id.clone(), topology)
            .client_config(self.client.clone());
        if let Some(pid) = process_id {
            g = g.process_id(pid);
        }
        if let Some(e) = &self.user_endpoint {
            g = g.user_endpoint(e.host.clone(), e.port);
        }
        if let Some(id) = &self.instance_id {
            g = g.instance_id(id.clone());
        }
        if let Some(rack) = &self.rack_id {
            g = g.rack_id(rack.clone());
        }
        if !self.client_tags.is_empty() {
            g = g.client_tags(self.client_tags.clone());
        }
        if let Some(ms) = self.rebalance_timeout_ms {
            g = g.rebalance_timeout_ms(ms);
        }
        for hook in &self.group_hooks {
            g = hook(g);
        }
        g
    }

    /// The replication factor of internal topics, if set (`None`: the broker's default).
    pub fn get_replication_factor(&self) -> Option<i16> {
        self.replication_factor
    }

    /// `default.deserialization.exception.handler`: what a processor's
    /// [`Error::Deserialization`] for its record does (default
    /// [`LogAndFail`](DeserializationHandler::LogAndFail)).
    pub fn deserialization_handler(mut self, handler: DeserializationHandler) -> Self {
        self.deserialization_handler = handler;
        self
    }

    /// The deserialization handler.
    pub fn get_deserialization_handler(&self) -> DeserializationHandler {
        self.deserialization_handler
    }

    /// The application id (= the Streams group id).
    pub fn application_id(&self) -> &str {
        &self.application_id
    }

    /// The client settings.
    pub fn client(&self) -> &ClientConfig {
        &self.client
    }

    /// `statestore.cache.max.bytes`: the record cache of the stream thread, shared by the
    /// stores of its tasks (Java's default 10 MiB; 0 = off: every store update goes to the
    /// changelog at once). Dirty entries are flushed on every commit and on eviction.
    pub fn cache_max_bytes(mut self, bytes: u64) -> Self {
        self.cache_max_bytes = bytes;
        self
    }

    /// The record cache's size (`statestore.cache.max.bytes`).
    pub fn get_cache_max_bytes(&self) -> u64 {
        self.cache_max_bytes
    }

    /// The commit interval: as set, else the guarantee's default
    /// ([`DEFAULT_COMMIT_INTERVAL`], [`EOS_DEFAULT_COMMIT_INTERVAL`]).
    pub fn get_commit_interval(&self) -> Duration {
        match (self.commit_interval, self.guarantee) {
            (Some(d), _) => d,
            (None, ProcessingGuarantee::AtLeastOnce) => DEFAULT_COMMIT_INTERVAL,
            (None, ProcessingGuarantee::ExactlyOnceV2) => EOS_DEFAULT_COMMIT_INTERVAL,
        }
    }

    /// The purge interval.
    pub fn get_purge_interval(&self) -> Duration {
        self.purge_interval
    }

    /// The longest fetch wait.
    pub fn get_poll_wait(&self) -> Duration {
        self.poll_wait
    }

    /// `buffered.records.per.partition`.
    pub fn get_buffered_records_per_partition(&self) -> usize {
        self.buffered_records
    }

    /// `max.task.idle.ms`.
    pub fn get_max_task_idle_ms(&self) -> i64 {
        self.max_task_idle_ms
    }

    /// `num.stream.threads`.
    pub fn get_num_stream_threads(&self) -> usize {
        self.threads
    }
}

/// Sets `rf` on every repartition and changelog topic left at the broker's default.
fn apply_replication_factor(topology: &mut StreamsTopology, rf: i16) {
    for s in &mut topology.subtopologies {
        let internal = s
            .repartition_source_topics
            .iter_mut()
            .chain(s.state_changelog_topics.iter_mut());
        for t in internal.filter(|t| t.replication_factor <= 0) {
            t.replication_factor = rf;
        }
    }
}

fn check_range(
    field: &'static str,
    value: Duration,
    (min, max): (Duration, Duration),
) -> Result<(), Error> {
    if (min..=max).contains(&value) {
        return Ok(());
    }
    Err(Error::InvalidConfiguration {
        field,
        reason: format!(
            "{} ms is outside {}..={} ms",
            value.as_millis(),
            min.as_millis(),
            max.as_millis()
        ),
    })
}

#[cfg(test)]
mod tests;
