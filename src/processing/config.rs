//! The processing runtime's configuration: Kafka Streams' property keys where they exist, on
//! top of a [`ClientConfig`].

use std::time::Duration;

use crate::config::ClientConfig;
use crate::error::Error;
use crate::properties;

use super::deserialization::DeserializationHandler;

/// Kafka Streams' default `commit.interval.ms` under at-least-once.
pub const DEFAULT_COMMIT_INTERVAL: Duration = Duration::from_millis(30_000);
/// Kafka Streams' default `repartition.purge.interval.ms`.
pub const DEFAULT_PURGE_INTERVAL: Duration = Duration::from_millis(30_000);

/// How a [`StreamsApp`](super::StreamsApp) runs: application id (= group id), the cluster,
/// commit and purge intervals.
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
#[derive(Clone, Debug)]
pub struct ProcessingConfig {
    application_id: String,
    client: ClientConfig,
    commit_interval: Duration,
    purge_interval: Duration,
    poll_wait: Duration,
    deserialization_handler: DeserializationHandler,
}

/// The keys [`ProcessingConfig::from_properties`] takes besides the client keys
/// ([`crate::properties::CLIENT_KEYS`]).
const PROCESSING_KEYS: &[&str] = &[
    "application.id",
    "commit.interval.ms",
    "repartition.purge.interval.ms",
    "poll.ms",
    "processing.guarantee",
    "group.protocol",
    "default.deserialization.exception.handler",
    "deserialization.exception.handler",
];

/// Kafka Streams keys that Java applications commonly set and that mean nothing here: they
/// are accepted (so one properties file can serve the Java and the Rust instances of an
/// application) and each is logged once at `info` with the reason.
const IGNORED_KEYS: &[(&str, &str)] = &[
    (
        "default.key.serde",
        "serdes are Rust types chosen in the processor code, not Java classes",
    ),
    (
        "default.value.serde",
        "serdes are Rust types chosen in the processor code, not Java classes",
    ),
    (
        "state.dir",
        "stores are held in memory and restored from their changelogs; nothing is written to disk",
    ),
];

const ACCEPTED: &str = "the client keys (bootstrap.servers, client.id, security.protocol, \
     sasl.*, ssl.*.location, ...), application.id, commit.interval.ms, \
     repartition.purge.interval.ms, poll.ms, processing.guarantee, group.protocol, and the \
     ignored default.key.serde, default.value.serde, state.dir";

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
            commit_interval: DEFAULT_COMMIT_INTERVAL,
            purge_interval: DEFAULT_PURGE_INTERVAL,
            poll_wait: Duration::from_millis(100),
            deserialization_handler: DeserializationHandler::LogAndFail,
        }
    }

    /// Reads Java property keys. Keys and values are trimmed; a later duplicate replaces an
    /// earlier one. Accepted, and nothing else:
    ///
    /// * the client keys of [`ClientConfig::from_properties`] (`bootstrap.servers`, required;
    ///   `security.protocol`, `sasl.*`, `ssl.*.location`, timeouts, ...), applied to
    ///   [`client`](Self::client) with the same checks: `security.protocol=SSL` gives TLS;
    /// * `application.id` (required), `commit.interval.ms` and
    ///   `repartition.purge.interval.ms` (1 ms..=24 h, [`INTERVAL_RANGE`]), `poll.ms`
    ///   (1 ms..=5 min, [`POLL_WAIT_RANGE`]);
    /// * `processing.guarantee`: only `at_least_once` (`exactly_once_v2` is refused: it needs
    ///   transactions, which this crate does not implement yet);
    /// * `group.protocol`: only `streams` (this crate speaks only the Streams group protocol,
    ///   KIP-1071; `classic` is refused);
    /// * ignored, each with an `info` log line saying why, because Java applications commonly
    ///   set them and one properties file may serve Java and Rust instances:
    ///   `default.key.serde`, `default.value.serde` (serdes are Rust types chosen in code) and
    ///   `state.dir` (stores are in memory, restored from their changelogs).
    ///
    /// Any other key is an [`Error::InvalidConfiguration`] naming it and the closest accepted
    /// key (`commit.interval.msec`: did you mean `commit.interval.ms`?). Other Kafka Streams
    /// settings (`num.stream.threads`, `num.standby.replicas`, which is a group setting on
    /// the broker, ...) are refused too: ignoring them silently would hide that they have
    /// no effect.
    pub fn from_properties<I, K, V>(props: I) -> Result<ProcessingConfig, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut client_props = Vec::new();
        let mut app = None;
        let mut commit = None;
        let mut purge = None;
        let mut poll = None;
        let mut handler = None;
        for (k, v) in props {
            let (k, v) = (k.as_ref().trim(), v.as_ref().trim());
            match k {
                "application.id" => app = Some(v.to_string()),
                "commit.interval.ms" => commit = Some(millis("commit.interval.ms", v)?),
                "repartition.purge.interval.ms" => {
                    purge = Some(millis("repartition.purge.interval.ms", v)?)
                }
                "poll.ms" => poll = Some(millis("poll.ms", v)?),
                "processing.guarantee" => check_guarantee(v)?,
                "group.protocol" => check_group_protocol(v)?,
                "default.deserialization.exception.handler"
                | "deserialization.exception.handler" => {
                    handler = Some(DeserializationHandler::from_property(v)?)
                }
                _ if properties::CLIENT_KEYS.contains(&k) => {
                    client_props.push((k.to_string(), v.to_string()))
                }
                _ => match IGNORED_KEYS.iter().find(|(key, _)| *key == k) {
                    Some((key, why)) => log::info!("{key}={v:?} ignored: {why}"),
                    None => {
                        let own: Vec<&'static str> = PROCESSING_KEYS
                            .iter()
                            .copied()
                            .chain(IGNORED_KEYS.iter().map(|(key, _)| *key))
                            .collect();
                        return Err(properties::reject_key(k, &own, ACCEPTED));
                    }
                },
            }
        }
        let app = app
            .filter(|a| !a.is_empty())
            .ok_or(Error::InvalidConfiguration {
                field: "application.id",
                reason: "required: set application.id (it is the Streams group id)".into(),
            })?;
        let client = ClientConfig::from_properties(client_props)?;
        let mut c = ProcessingConfig::new(client.bootstrap().to_owned(), app).client_config(client);
        if let Some(d) = commit {
            c.commit_interval = d;
        }
        if let Some(d) = purge {
            c.purge_interval = d;
        }
        if let Some(d) = poll {
            c.poll_wait = d;
        }
        if let Some(h) = handler {
            c.deserialization_handler = h;
        }
        c.validate()?;
        Ok(c)
    }

    /// Checks the durations against their ranges ([`POLL_WAIT_RANGE`],
    /// [`INTERVAL_RANGE`]); the error names the field, the value and the range.
    /// [`from_properties`](Self::from_properties) and `ProcessingRuntime::start` run it (the
    /// builder methods do not fail).
    pub fn validate(&self) -> Result<(), Error> {
        check_range("poll.ms", self.poll_wait, POLL_WAIT_RANGE)?;
        check_range("commit.interval.ms", self.commit_interval, INTERVAL_RANGE)?;
        check_range(
            "repartition.purge.interval.ms",
            self.purge_interval,
            INTERVAL_RANGE,
        )
    }

    /// Replaces the client settings (security, timeouts, client id); the bootstrap servers
    /// are the client's.
    pub fn client_config(mut self, client: ClientConfig) -> Self {
        self.client = client;
        self
    }

    /// `commit.interval.ms`: how often progress is committed (producer flushed first);
    /// 1 ms..=24 h ([`INTERVAL_RANGE`], checked by [`validate`](Self::validate)).
    pub fn commit_interval(mut self, interval: Duration) -> Self {
        self.commit_interval = interval;
        self
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

    /// The commit interval.
    pub fn get_commit_interval(&self) -> Duration {
        self.commit_interval
    }

    /// The purge interval.
    pub fn get_purge_interval(&self) -> Duration {
        self.purge_interval
    }

    /// The longest fetch wait.
    pub fn get_poll_wait(&self) -> Duration {
        self.poll_wait
    }
}

fn millis(key: &'static str, v: &str) -> Result<Duration, Error> {
    v.parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| Error::InvalidConfiguration {
            field: key,
            reason: format!("{v:?} is not a number of milliseconds"),
        })
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

fn check_group_protocol(v: &str) -> Result<(), Error> {
    if v.eq_ignore_ascii_case("streams") {
        return Ok(());
    }
    Err(Error::InvalidConfiguration {
        field: "group.protocol",
        reason: format!(
            "{v:?}: only streams (KIP-1071) is supported; this crate does not implement the \
             classic rebalance protocol"
        ),
    })
}

fn check_guarantee(v: &str) -> Result<(), Error> {
    match v {
        "at_least_once" => Ok(()),
        "exactly_once_v2" | "exactly_once" | "exactly_once_beta" => {
            Err(Error::InvalidConfiguration {
                field: "processing.guarantee",
                reason: format!(
                    "{v} needs a transactional producer, which this crate does not implement \
                     yet; use at_least_once (and the same on every instance of the application)"
                ),
            })
        }
        other => Err(Error::InvalidConfiguration {
            field: "processing.guarantee",
            reason: format!("unknown value {other:?}; use at_least_once"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SecurityProtocol;

    const BASE: [(&str, &str); 2] = [("application.id", "a"), ("bootstrap.servers", "h:1")];

    fn with(extra: &[(&str, &str)]) -> Result<ProcessingConfig, Error> {
        ProcessingConfig::from_properties(BASE.iter().chain(extra).copied())
    }

    fn err(extra: &[(&str, &str)]) -> String {
        match with(extra) {
            Ok(c) => panic!("{extra:?} accepted: {c:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn reads_java_keys_and_refuses_exactly_once() {
        let c = with(&[
            ("commit.interval.ms", "250"),
            ("repartition.purge.interval.ms", "1000"),
            ("poll.ms", " 50 "),
            ("processing.guarantee", "at_least_once"),
            ("group.protocol", "streams"),
        ])
        .unwrap();
        assert_eq!(c.get_commit_interval(), Duration::from_millis(250));
        assert_eq!(c.get_purge_interval(), Duration::from_secs(1));
        assert_eq!(c.get_poll_wait(), Duration::from_millis(50));
        let e = err(&[("processing.guarantee", "exactly_once_v2")]);
        assert!(e.contains("at_least_once"), "{e}");
        let e = err(&[("group.protocol", "classic")]);
        assert!(e.contains("group.protocol") && e.contains("streams"), "{e}");
        assert!(ProcessingConfig::from_properties([("bootstrap.servers", "h:1")]).is_err());
        assert!(ProcessingConfig::from_properties([("application.id", "a")]).is_err());
    }

    #[test]
    fn deserialization_handler_from_java_class_names() {
        assert_eq!(
            with(&[]).unwrap().get_deserialization_handler(),
            DeserializationHandler::LogAndFail
        );
        for key in [
            "default.deserialization.exception.handler",
            "deserialization.exception.handler",
        ] {
            let c = with(&[(
                key,
                "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler",
            )])
            .unwrap();
            assert_eq!(
                c.get_deserialization_handler(),
                DeserializationHandler::LogAndContinue
            );
            let e = err(&[(key, "com.acme.DlqHandler")]);
            assert!(e.contains("com.acme.DlqHandler"), "{e}");
        }
    }

    #[test]
    fn client_keys_reach_the_client() {
        let c = with(&[
            ("security.protocol", "SSL"),
            ("client.id", "me"),
            ("request.timeout.ms", "1234"),
        ])
        .unwrap();
        assert_eq!(c.client().get_security_protocol(), SecurityProtocol::Ssl);
        assert!(c.client().get_tls().is_some());
        assert_eq!(c.client().bootstrap(), "h:1");
        let plain = with(&[]).unwrap();
        assert_eq!(
            plain.client().get_security_protocol(),
            SecurityProtocol::Plaintext
        );
        // The client's own checks apply: ssl.* keys need a TLS protocol.
        let e = err(&[("ssl.ca.location", "/ca.pem")]);
        assert!(e.contains("ssl.ca.location"), "{e}");
        // Java-client spellings get the key to use instead.
        let e = err(&[("ssl.truststore.location", "/t.jks")]);
        assert!(e.contains("ssl.ca.location"), "{e}");
    }

    #[test]
    fn common_java_only_keys_are_ignored() {
        let c = with(&[
            (
                "default.key.serde",
                "org.apache.kafka.common.serialization.Serdes$StringSerde",
            ),
            (
                "default.value.serde",
                "org.apache.kafka.common.serialization.Serdes$LongSerde",
            ),
            ("state.dir", "/tmp/kafka-streams"),
        ])
        .unwrap();
        assert_eq!(c.get_commit_interval(), DEFAULT_COMMIT_INTERVAL);
    }

    #[test]
    fn unknown_keys_are_refused_with_the_closest_key() {
        for (key, closest) in [
            ("commit.interval.msec", "commit.interval.ms"),
            ("poll.msec", "poll.ms"),
            ("bootstrap.server", "bootstrap.servers"),
            ("security_protocol", "security.protocol"),
            ("default.key.serdes", "default.key.serde"),
        ] {
            let e = err(&[(key, "1")]);
            assert!(e.contains(&format!("{key:?}")), "{e}");
            assert!(e.contains(&format!("did you mean {closest:?}")), "{e}");
        }
        // Kafka Streams settings without effect here, and member settings that
        // ProcessingConfig does not carry, are refused rather than dropped.
        for key in ["num.stream.threads", "application.server", "xyz"] {
            let e = err(&[(key, "1")]);
            assert!(e.contains(&format!("unknown key {key:?}")), "{e}");
        }
    }

    #[test]
    fn durations_are_bounded() {
        for (key, value, range) in [
            ("poll.ms", "0", "1..=300000 ms"),
            ("poll.ms", "300001", "1..=300000 ms"),
            ("poll.ms", "99999999999999", "1..=300000 ms"),
            ("commit.interval.ms", "0", "1..=86400000 ms"),
            ("commit.interval.ms", "86400001", "1..=86400000 ms"),
            ("repartition.purge.interval.ms", "0", "1..=86400000 ms"),
        ] {
            let e = err(&[(key, value)]);
            assert!(
                e.contains(key) && e.contains(&format!("{value} ms")) && e.contains(range),
                "{key}={value}: {e}"
            );
        }
        let e = err(&[("poll.ms", "-1")]);
        assert!(e.contains("poll.ms"), "{e}");
        let c = with(&[
            ("poll.ms", "300000"),
            ("commit.interval.ms", "1"),
            ("repartition.purge.interval.ms", "86400000"),
        ])
        .unwrap();
        assert_eq!(c.get_poll_wait(), POLL_WAIT_RANGE.1);
        // Builder values are checked by validate().
        let built = ProcessingConfig::new("h:1", "a");
        assert!(built.validate().is_ok());
        for bad in [
            built.clone().poll_wait(Duration::ZERO),
            built.clone().poll_wait(Duration::from_secs(3601)),
            built.clone().commit_interval(Duration::ZERO),
            built.clone().purge_interval(Duration::from_secs(86_401)),
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
