//! [`FetcherConfig`]: the client settings plus the fetch settings, as a builder or from Java
//! consumer property keys.

use std::time::Duration;

use crate::config::ClientConfig;
use crate::error::Error;

/// `auto.offset.reset`: where a partition without a valid position starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OffsetReset {
    /// The log start offset (`earliest`).
    Earliest,
    /// The log end offset: only records written from now on (`latest`, Java's default).
    Latest,
    /// No reset: `poll` fails with [`Error::InvalidConfiguration`] naming the partition
    /// (`none`; Java throws `NoOffsetForPartitionException` / `OffsetOutOfRangeException`).
    None,
}

impl OffsetReset {
    /// The Java property value.
    pub fn as_str(self) -> &'static str {
        match self {
            OffsetReset::Earliest => "earliest",
            OffsetReset::Latest => "latest",
            OffsetReset::None => "none",
        }
    }
}

/// `isolation.level`: which records a fetch may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IsolationLevel {
    /// Every record up to the high watermark, aborted transactional data included.
    ReadUncommitted,
    /// Records up to the last stable offset, aborted transactional data dropped (Java's
    /// default, and what Kafka Streams uses with exactly-once).
    ReadCommitted,
}

impl IsolationLevel {
    /// The wire value of the Fetch/ListOffsets `IsolationLevel` field.
    pub fn wire(self) -> i8 {
        match self {
            IsolationLevel::ReadUncommitted => crate::protocol::api::fetch::READ_UNCOMMITTED,
            IsolationLevel::ReadCommitted => crate::protocol::api::fetch::READ_COMMITTED,
        }
    }
}

/// The fetch settings without the connection settings; kept by the pure core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchSettings {
    /// `fetch.min.bytes`: the broker answers once it has this much (or the wait ends).
    pub min_bytes: i32,
    /// `fetch.max.wait.ms`: longest the broker holds a Fetch waiting for `min_bytes`.
    pub max_wait: Duration,
    /// `fetch.max.bytes`: soft cap on one Fetch response.
    pub max_bytes: i32,
    /// `max.partition.fetch.bytes`: soft cap per partition in one response.
    pub partition_max_bytes: i32,
    /// `isolation.level`.
    pub isolation: IsolationLevel,
    /// `auto.offset.reset`.
    pub reset: OffsetReset,
}

impl Default for FetchSettings {
    /// Java's consumer defaults, except `isolation.level`, which is `read_uncommitted` in
    /// Java too.
    fn default() -> Self {
        FetchSettings {
            min_bytes: 1,
            max_wait: Duration::from_millis(500),
            max_bytes: 50 * 1024 * 1024,
            partition_max_bytes: 1024 * 1024,
            isolation: IsolationLevel::ReadUncommitted,
            reset: OffsetReset::Latest,
        }
    }
}

/// Configuration of a [`Fetcher`](super::Fetcher): a [`ClientConfig`] (bootstrap, TLS, SASL,
/// timeouts, metrics) and the fetch settings.
///
/// ```
/// use std::time::Duration;
/// use kafka_streams_group::consumer::{FetcherConfig, IsolationLevel, OffsetReset};
/// use kafka_streams_group::ClientConfig;
/// let c = FetcherConfig::new(ClientConfig::new("localhost:9092"))
///     .auto_offset_reset(OffsetReset::Earliest)
///     .isolation_level(IsolationLevel::ReadCommitted)
///     .fetch_max_wait(Duration::from_millis(100));
/// assert_eq!(c.settings().reset, OffsetReset::Earliest);
/// let p = FetcherConfig::from_properties([
///     ("bootstrap.servers", "localhost:9092"),
///     ("auto.offset.reset", "earliest"),
///     ("fetch.min.bytes", "1024"),
/// ]).unwrap();
/// assert_eq!(p.settings().min_bytes, 1024);
/// ```
#[derive(Debug, Clone)]
pub struct FetcherConfig {
    client: ClientConfig,
    settings: FetchSettings,
}

/// The Java consumer keys [`FetcherConfig::from_properties`] takes besides the client keys.
pub const FETCHER_KEYS: &[&str] = &[
    "auto.offset.reset",
    "fetch.max.bytes",
    "fetch.max.wait.ms",
    "fetch.min.bytes",
    "isolation.level",
    "max.partition.fetch.bytes",
];

fn invalid(reason: String) -> Error {
    Error::InvalidConfiguration {
        field: "fetcher properties",
        reason,
    }
}

fn positive_i32(key: &str, value: &str) -> Result<i32, Error> {
    value
        .parse::<i32>()
        .ok()
        .filter(|v| *v >= 0)
        .ok_or_else(|| {
            invalid(format!(
                "{key}={value:?}: expected a number in 0..={}",
                i32::MAX
            ))
        })
}

impl FetcherConfig {
    /// The client settings with the fetch settings at their defaults ([`FetchSettings::default`]).
    pub fn new(client: ClientConfig) -> Self {
        FetcherConfig {
            client,
            settings: FetchSettings::default(),
        }
    }

    /// Builds a configuration from Java consumer properties: the client keys of
    /// [`ClientConfig::from_properties`] plus [`FETCHER_KEYS`] (`auto.offset.reset` =
    /// earliest/latest/none, `isolation.level` = read_uncommitted/read_committed, and the
    /// byte and wait limits). Unknown keys are errors.
    pub fn from_properties<I, K, V>(props: I) -> Result<FetcherConfig, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut client_props = Vec::new();
        let mut settings = FetchSettings::default();
        for (k, v) in props {
            let (key, value) = (k.as_ref().trim(), v.as_ref().trim());
            match key {
                "auto.offset.reset" => {
                    settings.reset = match value {
                        "earliest" => OffsetReset::Earliest,
                        "latest" => OffsetReset::Latest,
                        "none" => OffsetReset::None,
                        _ => {
                            return Err(invalid(format!(
                                "auto.offset.reset={value:?}: expected earliest, latest or none"
                            )))
                        }
                    }
                }
                "isolation.level" => {
                    settings.isolation = match value {
                        "read_uncommitted" => IsolationLevel::ReadUncommitted,
                        "read_committed" => IsolationLevel::ReadCommitted,
                        _ => {
                            return Err(invalid(format!(
                            "isolation.level={value:?}: expected read_uncommitted or read_committed"
                        )))
                        }
                    }
                }
                "fetch.min.bytes" => settings.min_bytes = positive_i32(key, value)?,
                "fetch.max.bytes" => settings.max_bytes = positive_i32(key, value)?,
                "max.partition.fetch.bytes" => {
                    settings.partition_max_bytes = positive_i32(key, value)?
                }
                "fetch.max.wait.ms" => {
                    settings.max_wait =
                        Duration::from_millis(positive_i32(key, value)?.unsigned_abs().into())
                }
                _ => client_props.push((key.to_owned(), value.to_owned())),
            }
        }
        Ok(FetcherConfig {
            client: ClientConfig::from_properties(client_props)?,
            settings,
        })
    }

    /// `auto.offset.reset`. Default [`OffsetReset::Latest`].
    pub fn auto_offset_reset(mut self, reset: OffsetReset) -> Self {
        self.settings.reset = reset;
        self
    }

    /// `isolation.level`. Default [`IsolationLevel::ReadUncommitted`].
    pub fn isolation_level(mut self, level: IsolationLevel) -> Self {
        self.settings.isolation = level;
        self
    }

    /// `fetch.min.bytes`. Default 1.
    pub fn fetch_min_bytes(mut self, bytes: i32) -> Self {
        self.settings.min_bytes = bytes.max(0);
        self
    }

    /// `fetch.max.wait.ms`. Default 500 ms. A poll never waits past its own deadline.
    pub fn fetch_max_wait(mut self, wait: Duration) -> Self {
        self.settings.max_wait = wait;
        self
    }

    /// `fetch.max.bytes`. Default 50 MiB.
    pub fn fetch_max_bytes(mut self, bytes: i32) -> Self {
        self.settings.max_bytes = bytes.max(0);
        self
    }

    /// `max.partition.fetch.bytes`. Default 1 MiB. The broker still returns one whole batch
    /// larger than this, so that a large record cannot stall a partition.
    pub fn max_partition_fetch_bytes(mut self, bytes: i32) -> Self {
        self.settings.partition_max_bytes = bytes.max(0);
        self
    }

    /// The client settings.
    pub fn client(&self) -> &ClientConfig {
        &self.client
    }

    /// The fetch settings.
    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }
}
