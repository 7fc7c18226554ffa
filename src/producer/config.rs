//! [`ProducerConfig`]: the connection settings of a [`ClientConfig`] (TLS, SASL, timeouts,
//! metrics) plus the producer's own, with Java's property keys.

use std::time::Duration;

use crate::config::ClientConfig;
use crate::error::Error;
use crate::protocol::records::Compression;

/// Producer property keys [`ProducerConfig::from_properties`] accepts besides
/// [`crate::properties::CLIENT_KEYS`].
pub const PRODUCER_KEYS: &[&str] = &[
    "linger.ms",
    "batch.size",
    "compression.type",
    "acks",
    "enable.idempotence",
    "delivery.timeout.ms",
    "buffer.memory",
    "max.block.ms",
    "transactional.id",
    "transaction.timeout.ms",
    "max.in.flight.requests.per.connection",
];

/// How a [`super::Producer`] batches, compresses and retries.
///
/// Defaults follow Java's producer: `linger.ms` 5, `batch.size` 16384, no compression,
/// `acks=all`, idempotence on, `delivery.timeout.ms` 120000, `buffer.memory` 33554432
/// (32 MiB), `max.block.ms` 60000, `max.in.flight.requests.per.connection` 5.
#[derive(Debug, Clone)]
pub struct ProducerConfig {
    client: ClientConfig,
    linger: Duration,
    batch_size: usize,
    compression: Compression,
    idempotence: bool,
    delivery_timeout: Duration,
    buffer_memory: usize,
    max_block: Duration,
    transactional_id: Option<String>,
    transaction_timeout: Duration,
    max_in_flight: usize,
}

impl ProducerConfig {
    /// A producer over `client`'s connection settings, with Java's defaults.
    pub fn new(client: ClientConfig) -> Self {
        ProducerConfig {
            client,
            linger: Duration::from_millis(5),
            batch_size: 16_384,
            compression: Compression::None,
            idempotence: true,
            delivery_timeout: Duration::from_secs(120),
            buffer_memory: 32 << 20,
            max_block: Duration::from_secs(60),
            transactional_id: None,
            transaction_timeout: Duration::from_secs(60),
            max_in_flight: 5,
        }
    }

    /// `max.in.flight.requests.per.connection` (Java's default 5): Produce requests sent to
    /// one broker and not yet answered, and so batches of one partition in flight. With
    /// idempotence at most 5 (the broker remembers a producer's last 5 batches per partition
    /// to recognise a resend); ordering is kept on retries either way.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n;
        self
    }

    /// `max.in.flight.requests.per.connection`.
    pub fn get_max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// `linger.ms`: how long a batch waits for more records before it is sent.
    pub fn linger(mut self, linger: Duration) -> Self {
        self.linger = linger;
        self
    }

    /// `batch.size`: the uncompressed size at which a partition's batch is closed.
    pub fn batch_size(mut self, bytes: usize) -> Self {
        self.batch_size = bytes;
        self
    }

    /// `compression.type`.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// `enable.idempotence`: a producer id and per-partition sequences, so that a retry
    /// never writes a batch twice. On by default.
    pub fn idempotence(mut self, on: bool) -> Self {
        self.idempotence = on;
        self
    }

    /// `delivery.timeout.ms`: the longest a record is retried before its failure is
    /// reported; also bounds each `send` that has to wait for room.
    pub fn delivery_timeout(mut self, timeout: Duration) -> Self {
        self.delivery_timeout = timeout;
        self
    }

    /// `buffer.memory`: the most bytes (uncompressed batch sizes) queued and not yet
    /// acknowledged. A [`send`](super::Producer::send) that would pass it sends what is
    /// ready and waits for acknowledgements, up to `max.block.ms`; a single record larger
    /// than it fails at once. 32 MiB by default.
    pub fn buffer_memory(mut self, bytes: usize) -> Self {
        self.buffer_memory = bytes;
        self
    }

    /// `max.block.ms`: the longest one [`send`](super::Producer::send) blocks, waiting for
    /// a new topic's metadata and for room in `buffer.memory` together. 60 s by default.
    pub fn max_block(mut self, max_block: Duration) -> Self {
        self.max_block = max_block;
        self
    }

    /// `transactional.id` (default none): makes the producer transactional
    /// ([`Producer::init_transactions`](super::Producer::init_transactions) and the other
    /// transaction calls). A second producer with the same id fences this one. Needs
    /// idempotence.
    pub fn transactional_id(mut self, id: impl Into<String>) -> Self {
        self.transactional_id = Some(id.into());
        self
    }

    /// `transaction.timeout.ms` (Java's default 60000): how long the transaction coordinator
    /// lets a transaction stay open before it aborts it. The broker caps it at its
    /// `transaction.max.timeout.ms` (default 900000) and refuses a larger value.
    pub fn transaction_timeout(mut self, timeout: Duration) -> Self {
        self.transaction_timeout = timeout;
        self
    }

    /// `transactional.id`.
    pub fn get_transactional_id(&self) -> Option<&str> {
        self.transactional_id.as_deref()
    }

    /// `transaction.timeout.ms`.
    pub fn get_transaction_timeout(&self) -> Duration {
        self.transaction_timeout
    }

    /// The connection settings.
    pub fn client(&self) -> &ClientConfig {
        &self.client
    }

    /// `linger.ms`.
    pub fn get_linger(&self) -> Duration {
        self.linger
    }

    /// `batch.size`.
    pub fn get_batch_size(&self) -> usize {
        self.batch_size
    }

    /// `compression.type`.
    pub fn get_compression(&self) -> Compression {
        self.compression
    }

    /// `enable.idempotence`.
    pub fn get_idempotence(&self) -> bool {
        self.idempotence
    }

    /// `delivery.timeout.ms`.
    pub fn get_delivery_timeout(&self) -> Duration {
        self.delivery_timeout
    }

    /// `buffer.memory`.
    pub fn get_buffer_memory(&self) -> usize {
        self.buffer_memory
    }

    /// `max.block.ms`.
    pub fn get_max_block(&self) -> Duration {
        self.max_block
    }

    /// Checks the producer settings and the client's.
    pub fn validate(&self) -> Result<(), Error> {
        if self.batch_size == 0 || self.batch_size > i32::MAX as usize {
            return Err(invalid(
                "batch.size",
                format!(
                    "{} is out of range: use 1..={} (Java's default is 16384)",
                    self.batch_size,
                    i32::MAX
                ),
            ));
        }
        if self.delivery_timeout.is_zero() {
            return Err(invalid(
                "delivery.timeout.ms",
                "must be positive (Java's default is 120000)".to_string(),
            ));
        }
        if let Some(id) = &self.transactional_id {
            if id.is_empty() {
                return Err(invalid(
                    "transactional.id",
                    "must not be empty (leave it unset for a non-transactional producer)"
                        .to_string(),
                ));
            }
            if !self.idempotence {
                return Err(invalid(
                    "enable.idempotence",
                    "must be true with transactional.id (a transactional producer is \
                     idempotent; remove enable.idempotence=false)"
                        .to_string(),
                ));
            }
        }
        let timeout_ms = self.transaction_timeout.as_millis();
        if timeout_ms == 0 || timeout_ms > i32::MAX as u128 {
            return Err(invalid(
                "transaction.timeout.ms",
                format!(
                    "{timeout_ms} is out of range: use 1..=2147483647 (Java's default is 60000)"
                ),
            ));
        }
        if self.max_in_flight == 0 || (self.idempotence && self.max_in_flight > 5) {
            return Err(invalid(
                "max.in.flight.requests.per.connection",
                format!(
                    "{} is out of range: use 1..=5 with idempotence (Java's default is 5; \
                     the broker keeps the last 5 batches of a producer to detect resends), \
                     or set enable.idempotence=false for more",
                    self.max_in_flight
                ),
            ));
        }
        if self.buffer_memory == 0 {
            return Err(invalid(
                "buffer.memory",
                "must be positive (Java's default is 33554432)".to_string(),
            ));
        }
        self.client.validate()
    }

    /// A producer configuration from Java producer properties: the producer keys
    /// ([`PRODUCER_KEYS`]) are taken here, every other key goes to
    /// [`ClientConfig::from_properties`] (which rejects unknown ones, with a suggestion).
    /// `acks` must be `all` or `-1` (the only setting an idempotent producer allows; this
    /// producer always waits for the in-sync replicas).
    pub fn from_properties<I, K, V>(props: I) -> Result<ProducerConfig, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut client_props = Vec::new();
        let mut own = Vec::new();
        for (k, v) in props {
            let (k, v) = (k.as_ref().trim().to_string(), v.as_ref().trim().to_string());
            if PRODUCER_KEYS.contains(&k.as_str()) {
                own.push((k, v));
            } else {
                client_props.push((k, v));
            }
        }
        let mut config = ProducerConfig::new(ClientConfig::from_properties(client_props)?);
        for (k, v) in own {
            config = match k.as_str() {
                "linger.ms" => config.linger(Duration::from_millis(number(&k, &v)?)),
                "batch.size" => config.batch_size(number(&k, &v)? as usize),
                "delivery.timeout.ms" => {
                    config.delivery_timeout(Duration::from_millis(number(&k, &v)?))
                }
                "buffer.memory" => config.buffer_memory(
                    usize::try_from(number(&k, &v)?)
                        .map_err(|_| invalid_key(&k, format!("{v:?} is too large")))?,
                ),
                "max.block.ms" => config.max_block(Duration::from_millis(number(&k, &v)?)),
                "max.in.flight.requests.per.connection" => config.max_in_flight(
                    usize::try_from(number(&k, &v)?)
                        .map_err(|_| invalid_key(&k, format!("{v:?} is too large")))?,
                ),
                "transactional.id" => config.transactional_id(v.clone()),
                "transaction.timeout.ms" => {
                    config.transaction_timeout(Duration::from_millis(number(&k, &v)?))
                }
                "compression.type" => {
                    let c = Compression::from_name(&v.to_ascii_lowercase()).ok_or_else(|| {
                        invalid(
                            "compression.type",
                            format!("{v:?} is not one of none, gzip, snappy, lz4, zstd"),
                        )
                    })?;
                    config.compression(c)
                }
                "enable.idempotence" => match v.to_ascii_lowercase().as_str() {
                    "true" => config.idempotence(true),
                    "false" => config.idempotence(false),
                    _ => {
                        return Err(invalid(
                            "enable.idempotence",
                            format!("{v:?} is not true or false"),
                        ))
                    }
                },
                "acks" => match v.to_ascii_lowercase().as_str() {
                    "all" | "-1" => config,
                    _ => {
                        return Err(invalid(
                            "acks",
                            format!("{v:?} is not supported: this producer always uses acks=all"),
                        ))
                    }
                },
                _ => config,
            };
        }
        config.validate()?;
        Ok(config)
    }
}

fn number(key: &str, value: &str) -> Result<u64, Error> {
    value
        .parse()
        .map_err(|_| invalid_key(key, format!("{value:?} is not a non-negative integer")))
}

fn invalid_key(key: &str, reason: String) -> Error {
    Error::InvalidConfiguration {
        field: crate::properties::FIELD,
        reason: format!("{key}: {reason}"),
    }
}

fn invalid(key: &'static str, reason: String) -> Error {
    invalid_key(key, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transactional_keys_have_javas_defaults_and_are_checked() {
        let c = ProducerConfig::new(ClientConfig::new("h:1"));
        assert_eq!(c.get_transactional_id(), None);
        assert_eq!(c.get_transaction_timeout(), Duration::from_secs(60));
        let c = ProducerConfig::from_properties([
            ("bootstrap.servers", "h:1"),
            ("transactional.id", "app-1"),
            ("transaction.timeout.ms", "10000"),
        ])
        .unwrap();
        assert_eq!(c.get_transactional_id(), Some("app-1"));
        assert_eq!(c.get_transaction_timeout(), Duration::from_secs(10));
        let e = ProducerConfig::from_properties([
            ("bootstrap.servers", "h:1"),
            ("transactional.id", "app-1"),
            ("enable.idempotence", "false"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("enable.idempotence"), "{e}");
        for bad in ["", "0"] {
            let key = if bad.is_empty() {
                "transactional.id"
            } else {
                "transaction.timeout.ms"
            };
            let e = ProducerConfig::from_properties([("bootstrap.servers", "h:1"), (key, bad)])
                .unwrap_err();
            assert!(e.to_string().contains(key), "{e}");
        }
    }

    #[test]
    fn max_in_flight_defaults_to_5_and_is_at_most_5_with_idempotence() {
        let c = ProducerConfig::new(ClientConfig::new("h:1"));
        assert_eq!(c.get_max_in_flight(), 5, "Java's default");
        let key = "max.in.flight.requests.per.connection";
        let c = ProducerConfig::from_properties([("bootstrap.servers", "h:1"), (key, "2")]);
        assert_eq!(c.unwrap().get_max_in_flight(), 2);
        for bad in ["0", "6"] {
            let e = ProducerConfig::from_properties([("bootstrap.servers", "h:1"), (key, bad)])
                .unwrap_err();
            assert!(e.to_string().contains(key), "{bad}: {e}");
        }
        let c = ProducerConfig::from_properties([
            ("bootstrap.servers", "h:1"),
            ("enable.idempotence", "false"),
            (key, "10"),
        ]);
        assert_eq!(
            c.unwrap().get_max_in_flight(),
            10,
            "no idempotence: no bound of 5"
        );
    }

    #[test]
    fn properties_map_to_the_builder() {
        let c = ProducerConfig::from_properties([
            ("bootstrap.servers", "127.0.0.1:9092"),
            ("linger.ms", "20"),
            ("batch.size", "65536"),
            ("compression.type", "zstd"),
            ("acks", "all"),
            ("enable.idempotence", "false"),
            ("delivery.timeout.ms", "30000"),
            ("buffer.memory", "1048576"),
            ("max.block.ms", "2500"),
        ])
        .unwrap();
        assert_eq!(c.get_buffer_memory(), 1 << 20);
        assert_eq!(c.get_max_block(), Duration::from_millis(2500));
        assert_eq!(c.get_linger(), Duration::from_millis(20));
        assert_eq!(c.get_batch_size(), 65536);
        assert_eq!(c.get_compression(), Compression::Zstd);
        assert!(!c.get_idempotence());
        assert_eq!(c.get_delivery_timeout(), Duration::from_secs(30));
        assert_eq!(c.client().bootstrap(), "127.0.0.1:9092");
    }

    #[test]
    fn java_defaults_for_buffer_memory_and_max_block() {
        let c = ProducerConfig::new(ClientConfig::new("h:1"));
        assert_eq!(c.get_buffer_memory(), 33_554_432);
        assert_eq!(c.get_max_block(), Duration::from_secs(60));
    }

    #[test]
    fn bad_values_name_the_key() {
        for (k, v) in [
            ("compression.type", "brotli"),
            ("acks", "0"),
            ("linger.ms", "-1"),
            ("batch.size", "0"),
            ("enable.idempotence", "maybe"),
            ("buffer.memory", "0"),
            ("buffer.memory", "-1"),
            ("max.block.ms", "soon"),
        ] {
            let e = ProducerConfig::from_properties([("bootstrap.servers", "h:1"), (k, v)])
                .unwrap_err()
                .to_string();
            assert!(e.contains(k), "{k}: {e}");
        }
        let e = ProducerConfig::from_properties([("bootstrap.servers", "h:1"), ("linger.m", "1")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("linger.m"), "{e}");
    }
}
