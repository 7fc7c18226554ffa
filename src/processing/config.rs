//! The processing runtime's configuration: Kafka Streams' property keys where they exist, on
//! top of a [`ClientConfig`].

use std::time::Duration;

use crate::config::ClientConfig;
use crate::error::Error;

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
}

impl ProcessingConfig {
    /// A configuration with Kafka Streams' defaults (commit every 30 s, purge every 30 s).
    pub fn new(bootstrap: impl Into<String>, application_id: impl Into<String>) -> Self {
        ProcessingConfig {
            application_id: application_id.into(),
            client: ClientConfig::new(bootstrap),
            commit_interval: DEFAULT_COMMIT_INTERVAL,
            purge_interval: DEFAULT_PURGE_INTERVAL,
            poll_wait: Duration::from_millis(100),
        }
    }

    /// Reads Java property keys: `application.id` and `bootstrap.servers` (required),
    /// `commit.interval.ms`, `repartition.purge.interval.ms`, `poll.ms`,
    /// `processing.guarantee` (only `at_least_once`: `exactly_once_v2` is refused, it needs
    /// transactions, which this crate does not implement yet). Unknown keys are ignored here.
    pub fn from_properties<I, K, V>(props: I) -> Result<ProcessingConfig, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut app = None;
        let mut bootstrap = None;
        let mut commit = None;
        let mut purge = None;
        let mut poll = None;
        for (k, v) in props {
            let (k, v) = (k.as_ref(), v.as_ref().trim());
            match k {
                "application.id" => app = Some(v.to_string()),
                "bootstrap.servers" => bootstrap = Some(v.to_string()),
                "commit.interval.ms" => commit = Some(millis("commit.interval.ms", v)?),
                "repartition.purge.interval.ms" => {
                    purge = Some(millis("repartition.purge.interval.ms", v)?)
                }
                "poll.ms" => poll = Some(millis("poll.ms", v)?),
                "processing.guarantee" => check_guarantee(v)?,
                _ => {}
            }
        }
        let app = app
            .filter(|a| !a.is_empty())
            .ok_or(Error::InvalidConfiguration {
                field: "application.id",
                reason: "required: set application.id (it is the Streams group id)".into(),
            })?;
        let bootstrap = bootstrap
            .filter(|b| !b.is_empty())
            .ok_or(Error::InvalidConfiguration {
                field: "bootstrap.servers",
                reason: "required: set bootstrap.servers to host:port of a broker".into(),
            })?;
        let mut c = ProcessingConfig::new(bootstrap, app);
        if let Some(d) = commit {
            c.commit_interval = d;
        }
        if let Some(d) = purge {
            c.purge_interval = d;
        }
        if let Some(d) = poll {
            c.poll_wait = d;
        }
        Ok(c)
    }

    /// Replaces the client settings (security, timeouts, client id); the bootstrap servers
    /// are the client's.
    pub fn client_config(mut self, client: ClientConfig) -> Self {
        self.client = client;
        self
    }

    /// `commit.interval.ms`: how often progress is committed (producer flushed first).
    pub fn commit_interval(mut self, interval: Duration) -> Self {
        self.commit_interval = interval;
        self
    }

    /// `repartition.purge.interval.ms`: how often consumed repartition records are deleted.
    pub fn purge_interval(mut self, interval: Duration) -> Self {
        self.purge_interval = interval;
        self
    }

    /// `poll.ms`: the longest a fetch waits for new records.
    pub fn poll_wait(mut self, wait: Duration) -> Self {
        self.poll_wait = wait;
        self
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

    #[test]
    fn reads_java_keys_and_refuses_exactly_once() {
        let c = ProcessingConfig::from_properties([
            ("application.id", "a"),
            ("bootstrap.servers", "h:1"),
            ("commit.interval.ms", "250"),
            ("repartition.purge.interval.ms", "1000"),
            ("processing.guarantee", "at_least_once"),
        ])
        .unwrap();
        assert_eq!(c.get_commit_interval(), Duration::from_millis(250));
        assert_eq!(c.get_purge_interval(), Duration::from_secs(1));
        let e = ProcessingConfig::from_properties([
            ("application.id", "a"),
            ("bootstrap.servers", "h:1"),
            ("processing.guarantee", "exactly_once_v2"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("at_least_once"), "{e}");
        assert!(ProcessingConfig::from_properties([("bootstrap.servers", "h:1")]).is_err());
    }
}
