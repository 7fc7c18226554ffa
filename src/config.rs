//! Client configuration: [`ClientConfig`] and the pieces it is built from.
//!
//! [`ClientConfig`] is a consuming builder; every default is the Java client's (see each
//! method). Nothing here does I/O: certificate files named in a [`TlsConfig`] are read when
//! the connection layer builds its TLS setup ([`crate::tls::TlsConnector::new`]).
//!
//! Secrets ([`Secret`] passwords, private keys, OAuth tokens) never appear in `Debug` output.

use std::time::Duration;

pub use crate::common::sasl::{OAuthToken, OAuthTokenCallback, ScramAlgorithm};
use crate::error::Error;

mod bootstrap;
mod metrics;
mod sasl;
mod security;
mod tls;

pub use bootstrap::{parse_bootstrap, BrokerAddress};
pub use metrics::{ClientMetrics, ClientMetricsSnapshot};
pub use sasl::SaslConfig;
pub use security::{Secret, SecurityProtocol};
pub use tls::{CertificateSource, PrivateKeySource, TlsConfig};

/// Default `client.id`.
pub const DEFAULT_CLIENT_ID: &str = "kafka-streams-group";
/// Default request timeout (Kafka `request.timeout.ms` = 30 000).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default connection set-up timeout, TCP + TLS + SASL (Kafka
/// `socket.connection.setup.timeout.ms` = 10 000).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default first retry backoff (Kafka `retry.backoff.ms` = 100).
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(100);
/// Default retry backoff ceiling (Kafka `retry.backoff.max.ms` = 1 000).
pub const DEFAULT_RETRY_BACKOFF_MAX: Duration = Duration::from_millis(1000);
/// Default first reconnect backoff (Kafka `reconnect.backoff.ms` = 50).
pub const DEFAULT_RECONNECT_BACKOFF: Duration = Duration::from_millis(50);
/// Default reconnect backoff ceiling (Kafka `reconnect.backoff.max.ms` = 1 000).
pub const DEFAULT_RECONNECT_BACKOFF_MAX: Duration = Duration::from_millis(1000);
/// Default largest accepted response frame: 100 MiB (Kafka `socket.request.max.bytes`).
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;
/// Smallest accepted `max_frame_size`: below this even a metadata response would not fit.
pub const MIN_MAX_FRAME_SIZE: usize = 1024;

/// Connection-level client configuration (consuming builder).
///
/// ```
/// use std::time::Duration;
/// use kafka_streams_group::config::{ClientConfig, SaslConfig, SecurityProtocol, TlsConfig};
///
/// let config = ClientConfig::new("broker-1:9093,[::1]:9093")
///     .client_id("orders-app")
///     .security_protocol(SecurityProtocol::SaslSsl)
///     .tls(TlsConfig::new())
///     .sasl(SaslConfig::scram_sha512("app", "secret"))
///     .request_timeout(Duration::from_secs(20));
/// config.validate().unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct ClientConfig {
    bootstrap: String,
    client_id: String,
    connect_timeout: Duration,
    request_timeout: Duration,
    retry_backoff: Duration,
    retry_backoff_max: Duration,
    reconnect_backoff: Duration,
    reconnect_backoff_max: Duration,
    security_protocol: SecurityProtocol,
    tls: Option<TlsConfig>,
    sasl: Option<SaslConfig>,
    max_frame_size: usize,
    metrics: ClientMetrics,
}

impl ClientConfig {
    /// A configuration for the comma-separated `bootstrap` list (`host:port`, `[v6]:port`),
    /// with every other setting at its default.
    pub fn new(bootstrap: impl Into<String>) -> Self {
        ClientConfig {
            bootstrap: bootstrap.into(),
            client_id: DEFAULT_CLIENT_ID.to_owned(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            retry_backoff: DEFAULT_RETRY_BACKOFF,
            retry_backoff_max: DEFAULT_RETRY_BACKOFF_MAX,
            reconnect_backoff: DEFAULT_RECONNECT_BACKOFF,
            reconnect_backoff_max: DEFAULT_RECONNECT_BACKOFF_MAX,
            security_protocol: SecurityProtocol::Plaintext,
            tls: None,
            sasl: None,
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            metrics: ClientMetrics::new(),
        }
    }

    /// `client.id` sent in every request header. Default [`DEFAULT_CLIENT_ID`].
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = id.into();
        self
    }

    /// Limit for a connection's setup, Java's `socket.connection.setup.timeout.ms`: TCP
    /// connect + TLS handshake + ApiVersions + SASL (a bootstrap attempt never longer than the
    /// request timeout). Default [`DEFAULT_CONNECT_TIMEOUT`] (10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Limit for one request's round trip. Default [`DEFAULT_REQUEST_TIMEOUT`] (30 s).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Exponential retry backoff from `base` up to `max`. Defaults
    /// [`DEFAULT_RETRY_BACKOFF`] (100 ms) and [`DEFAULT_RETRY_BACKOFF_MAX`] (1 s).
    pub fn retry_backoff(mut self, base: Duration, max: Duration) -> Self {
        self.retry_backoff = base;
        self.retry_backoff_max = max;
        self
    }

    /// How long to wait before connecting again to a broker that could not be connected
    /// to: `base` after the first failed attempt, doubling with each further one up to `max`,
    /// each delay varied by ±20 % so that clients do not retry in step; a successful
    /// connection starts over. Kafka `reconnect.backoff.ms` / `reconnect.backoff.max.ms`;
    /// defaults [`DEFAULT_RECONNECT_BACKOFF`] (50 ms) and [`DEFAULT_RECONNECT_BACKOFF_MAX`]
    /// (1 s). A zero `base` turns the backoff off; `max` must not be below `base` (see
    /// [`validate`](Self::validate)).
    ///
    /// Every connection of the client layer (fetcher, producer, group coordinator, admin
    /// calls) obeys it: a call that needs a broker in backoff waits for the backoff to end,
    /// never past its own deadline.
    pub fn reconnect_backoff(mut self, base: Duration, max: Duration) -> Self {
        self.reconnect_backoff = base;
        self.reconnect_backoff_max = max;
        self
    }

    /// Security protocol. Default [`SecurityProtocol::Plaintext`].
    pub fn security_protocol(mut self, protocol: SecurityProtocol) -> Self {
        self.security_protocol = protocol;
        self
    }

    /// TLS settings (required for `SSL` and `SASL_SSL`). Default none.
    pub fn tls(mut self, tls: TlsConfig) -> Self {
        self.tls = Some(tls);
        self
    }

    /// SASL credentials (required for `SASL_*`). Default none.
    pub fn sasl(mut self, sasl: SaslConfig) -> Self {
        self.sasl = Some(sasl);
        self
    }

    /// Largest response frame accepted; larger frames close the connection.
    /// Default [`DEFAULT_MAX_FRAME_SIZE`] (100 MiB).
    pub fn max_frame_size(mut self, bytes: usize) -> Self {
        self.max_frame_size = bytes;
        self
    }

    /// Counters to record into (share a clone to read them). Default: a private fresh set.
    pub fn metrics(mut self, metrics: ClientMetrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// The bootstrap list as given.
    pub fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    /// The parsed bootstrap list.
    pub fn bootstrap_servers(&self) -> Result<Vec<BrokerAddress>, Error> {
        parse_bootstrap(&self.bootstrap)
    }

    /// The client id.
    pub fn get_client_id(&self) -> &str {
        &self.client_id
    }

    /// The connect timeout.
    pub fn get_connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The request timeout.
    pub fn get_request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// The retry backoff `(base, max)`.
    pub fn get_retry_backoff(&self) -> (Duration, Duration) {
        (self.retry_backoff, self.retry_backoff_max)
    }

    /// The reconnect backoff `(base, max)`.
    pub fn get_reconnect_backoff(&self) -> (Duration, Duration) {
        (self.reconnect_backoff, self.reconnect_backoff_max)
    }

    /// The security protocol.
    pub fn get_security_protocol(&self) -> SecurityProtocol {
        self.security_protocol
    }

    /// The TLS settings, if any.
    pub fn get_tls(&self) -> Option<&TlsConfig> {
        self.tls.as_ref()
    }

    /// The SASL settings, if any.
    pub fn get_sasl(&self) -> Option<&SaslConfig> {
        self.sasl.as_ref()
    }

    /// The largest accepted frame.
    pub fn get_max_frame_size(&self) -> usize {
        self.max_frame_size
    }

    /// The metrics handle.
    pub fn get_metrics(&self) -> &ClientMetrics {
        &self.metrics
    }

    /// Checks everything that can be checked without I/O; the first problem is reported as
    /// [`Error::InvalidConfiguration`].
    ///
    /// Besides syntax and ranges this refuses TLS or SASL settings the security protocol
    /// would not use: silently ignoring configured credentials hides mistakes.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |field: &'static str, reason: String| {
            Err(Error::InvalidConfiguration { field, reason })
        };
        self.bootstrap_servers()?;
        if self.client_id.len() > i16::MAX as usize {
            return bad(
                "client_id",
                format!("{} bytes; at most 32767", self.client_id.len()),
            );
        }
        if self.connect_timeout.is_zero() {
            return bad("connect_timeout", "must be greater than zero".to_owned());
        }
        if self.request_timeout.is_zero() {
            return bad("request_timeout", "must be greater than zero".to_owned());
        }
        if self.retry_backoff.is_zero() {
            return bad("retry_backoff", "base must be greater than zero".to_owned());
        }
        if self.retry_backoff > self.retry_backoff_max {
            return bad(
                "retry_backoff",
                format!(
                    "base {:?} is larger than max {:?}",
                    self.retry_backoff, self.retry_backoff_max
                ),
            );
        }
        if self.reconnect_backoff > self.reconnect_backoff_max {
            return bad(
                "reconnect_backoff",
                format!(
                    "base {:?} is larger than max {:?}",
                    self.reconnect_backoff, self.reconnect_backoff_max
                ),
            );
        }
        if !(MIN_MAX_FRAME_SIZE..=i32::MAX as usize).contains(&self.max_frame_size) {
            return bad(
                "max_frame_size",
                format!(
                    "{} outside {MIN_MAX_FRAME_SIZE}..={} (Kafka frame lengths are int32)",
                    self.max_frame_size,
                    i32::MAX
                ),
            );
        }
        let protocol = self.security_protocol;
        match (&self.tls, protocol.uses_tls()) {
            (None, true) => return bad("tls", format!("{protocol} needs a TlsConfig")),
            (Some(_), false) => {
                return bad(
                    "tls",
                    format!(
                        "TLS is configured but {protocol} does not use TLS; use SSL or SASL_SSL"
                    ),
                )
            }
            (Some(tls), true) => {
                if let Some(name) = tls.server_name_override() {
                    if rustls::pki_types::ServerName::try_from(name).is_err() {
                        return bad(
                            "tls.server_name",
                            format!("{name:?} is not a valid DNS name or IP address"),
                        );
                    }
                }
            }
            (None, false) => {}
        }
        match (&self.sasl, protocol.uses_sasl()) {
            (None, true) => bad("sasl", format!("{protocol} needs a SaslConfig")),
            (Some(_), false) => bad(
                "sasl",
                format!(
                    "SASL is configured but {protocol} does not use SASL; use SASL_PLAINTEXT or SASL_SSL"
                ),
            ),
            (Some(sasl), true) => sasl.validate(),
            (None, false) => Ok(()),
        }
    }
}
