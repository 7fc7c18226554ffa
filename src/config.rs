//! Client configuration: [`ClientConfig`] and the pieces it is built from.
//!
//! [`ClientConfig`] is a consuming builder; every default is the Java client's (see each
//! method). Nothing here does I/O: certificate files named in a [`TlsConfig`] are read when
//! the connection layer builds its TLS setup ([`crate::tls::TlsConnector::new`]).
//!
//! Secrets ([`Secret`] passwords, private keys, OAuth tokens) never appear in `Debug` output.

use std::collections::BTreeMap;
use std::fmt;
use std::net::Ipv6Addr;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::error::Error;
pub use crate::transport::sasl::{OAuthToken, OAuthTokenCallback, ScramAlgorithm};

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
pub const DEFAULT_RECONNECT_BACKOFF: Duration = crate::client::DEFAULT_RECONNECT_BACKOFF;
/// Default reconnect backoff ceiling (Kafka `reconnect.backoff.max.ms` = 1 000).
pub const DEFAULT_RECONNECT_BACKOFF_MAX: Duration = crate::client::DEFAULT_RECONNECT_BACKOFF_MAX;
/// Default largest accepted response frame: 100 MiB (Kafka `socket.request.max.bytes`).
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;
/// Smallest accepted `max_frame_size`: below this even a metadata response would not fit.
pub const MIN_MAX_FRAME_SIZE: usize = 1024;

/// A secret string (password). `Debug` and `Display` print `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        Secret(secret.into())
    }

    /// The secret itself; only for the code that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"<redacted>\"")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Secret(s)
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Secret(s.to_owned())
    }
}

/// Kafka `security.protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SecurityProtocol {
    /// `PLAINTEXT`: TCP, no authentication (the default).
    #[default]
    Plaintext,
    /// `SSL`: TLS, optionally with a client certificate.
    Ssl,
    /// `SASL_PLAINTEXT`: SASL over TCP.
    SaslPlaintext,
    /// `SASL_SSL`: SASL over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// The Kafka name (`PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL`).
    pub fn as_str(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }

    /// Whether the connection is wrapped in TLS.
    pub fn uses_tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }

    /// Whether the connection authenticates with SASL.
    pub fn uses_sasl(self) -> bool {
        matches!(
            self,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }
}

impl fmt::Display for SecurityProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SecurityProtocol {
    type Err = Error;

    /// Parses Kafka's names, case-insensitively (as the Java client does).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Ok(SecurityProtocol::Plaintext),
            "SSL" => Ok(SecurityProtocol::Ssl),
            "SASL_PLAINTEXT" => Ok(SecurityProtocol::SaslPlaintext),
            "SASL_SSL" => Ok(SecurityProtocol::SaslSsl),
            _ => Err(Error::InvalidConfiguration {
                field: "security_protocol",
                reason: format!(
                    "unknown security protocol {s:?}; expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"
                ),
            }),
        }
    }
}

/// Where certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertificateSource {
    /// A PEM file with one or more `CERTIFICATE` sections.
    PemFile(PathBuf),
    /// PEM text with one or more `CERTIFICATE` sections.
    Pem(Vec<u8>),
    /// DER certificates (a chain: leaf first).
    Der(Vec<Vec<u8>>),
}

/// Where a client private key comes from: PKCS#8, PKCS#1 (RSA) or SEC1 (EC), unencrypted.
/// `Debug` never shows key material.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrivateKeySource {
    /// A PEM file with a `PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY` section.
    PemFile(PathBuf),
    /// PEM text with a private key section.
    Pem(Vec<u8>),
    /// A DER key; the format is recognised from its structure.
    Der(Vec<u8>),
}

impl fmt::Debug for PrivateKeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrivateKeySource::PemFile(p) => f.debug_tuple("PemFile").field(p).finish(),
            PrivateKeySource::Pem(_) => f.write_str("Pem(<redacted>)"),
            PrivateKeySource::Der(_) => f.write_str("Der(<redacted>)"),
        }
    }
}

/// TLS settings for `SSL` and `SASL_SSL`.
///
/// Defaults: trust the platform's root store, verify the broker's hostname, no client
/// certificate, TLS 1.2 and 1.3 only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsConfig {
    ca: Vec<CertificateSource>,
    platform_roots: Option<bool>,
    server_name: Option<String>,
    client_auth: Option<(CertificateSource, PrivateKeySource)>,
    dangerous_disable_hostname_verification: bool,
}

impl TlsConfig {
    /// Defaults: platform roots, hostname verification on, no client certificate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Trusts the CA certificates in a PEM file. Once any CA is given the platform roots are
    /// no longer trusted unless [`trust_platform_roots(true)`](Self::trust_platform_roots).
    pub fn ca_pem_file(self, path: impl Into<PathBuf>) -> Self {
        self.ca(CertificateSource::PemFile(path.into()))
    }

    /// Trusts the CA certificates in PEM text.
    pub fn ca_pem(self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca(CertificateSource::Pem(pem.into()))
    }

    /// Trusts one DER CA certificate.
    pub fn ca_der(self, der: impl Into<Vec<u8>>) -> Self {
        self.ca(CertificateSource::Der(vec![der.into()]))
    }

    /// Trusts certificates from any source.
    pub fn ca(mut self, source: CertificateSource) -> Self {
        self.ca.push(source);
        self
    }

    /// Whether to trust the platform's root store (default: only when no CA is given).
    pub fn trust_platform_roots(mut self, trust: bool) -> Self {
        self.platform_roots = Some(trust);
        self
    }

    /// Verifies brokers against this name instead of the host in their address (useful when
    /// brokers are reached by IP or through a tunnel). Default: the address's host.
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.server_name = Some(name.into());
        self
    }

    /// Mutual TLS: client certificate chain and key from PEM files.
    pub fn client_cert_pem_file(self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.client_auth(
            CertificateSource::PemFile(cert.into()),
            PrivateKeySource::PemFile(key.into()),
        )
    }

    /// Mutual TLS: client certificate chain and key from PEM text.
    pub fn client_cert_pem(self, cert: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        self.client_auth(
            CertificateSource::Pem(cert.into()),
            PrivateKeySource::Pem(key.into()),
        )
    }

    /// Mutual TLS: DER certificate chain (leaf first) and DER key.
    pub fn client_cert_der(self, chain: Vec<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        self.client_auth(
            CertificateSource::Der(chain),
            PrivateKeySource::Der(key.into()),
        )
    }

    /// Mutual TLS from any sources.
    pub fn client_auth(mut self, cert: CertificateSource, key: PrivateKeySource) -> Self {
        self.client_auth = Some((cert, key));
        self
    }

    /// **Dangerous**: accept a broker certificate whose names do not match the broker's
    /// host. The chain, validity period and key usage are still verified against the trusted
    /// roots, so an untrusted or expired certificate is still refused; only the name check
    /// goes. Default `false`. Prefer [`server_name`](Self::server_name).
    pub fn dangerous_disable_hostname_verification(mut self, disable: bool) -> Self {
        self.dangerous_disable_hostname_verification = disable;
        self
    }

    /// The configured CA sources.
    pub fn ca_sources(&self) -> &[CertificateSource] {
        &self.ca
    }

    /// Whether the platform root store is trusted.
    pub fn uses_platform_roots(&self) -> bool {
        self.platform_roots.unwrap_or(self.ca.is_empty())
    }

    /// The server-name override, if any.
    pub fn server_name_override(&self) -> Option<&str> {
        self.server_name.as_deref()
    }

    /// The client certificate and key, if mutual TLS is configured.
    pub fn client_auth_sources(&self) -> Option<(&CertificateSource, &PrivateKeySource)> {
        self.client_auth.as_ref().map(|(c, k)| (c, k))
    }

    /// Whether hostname verification is disabled.
    pub fn hostname_verification_disabled(&self) -> bool {
        self.dangerous_disable_hostname_verification
    }
}

/// SASL credentials for `SASL_PLAINTEXT` / `SASL_SSL`. `Debug` never shows secrets.
#[derive(Clone)]
#[non_exhaustive]
pub enum SaslConfig {
    /// `PLAIN`.
    Plain {
        /// Authentication identity.
        username: String,
        /// Password.
        password: Secret,
    },
    /// `SCRAM-SHA-256` or `SCRAM-SHA-512`.
    Scram {
        /// Hash function.
        algorithm: ScramAlgorithm,
        /// Username (escaped on the wire as RFC 5802 requires).
        username: String,
        /// Password.
        password: Secret,
    },
    /// `OAUTHBEARER` with a token from the application, fetched on every authentication.
    OAuthBearer {
        /// Produces the token.
        callback: OAuthTokenCallback,
    },
}

impl fmt::Debug for SaslConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaslConfig::Plain { username, password } => f
                .debug_struct("Plain")
                .field("username", username)
                .field("password", password)
                .finish(),
            SaslConfig::Scram {
                algorithm,
                username,
                password,
            } => f
                .debug_struct("Scram")
                .field("algorithm", algorithm)
                .field("username", username)
                .field("password", password)
                .finish(),
            SaslConfig::OAuthBearer { .. } => f
                .debug_struct("OAuthBearer")
                .field("callback", &"<callback>")
                .finish(),
        }
    }
}

impl SaslConfig {
    /// `PLAIN` credentials.
    pub fn plain(username: impl Into<String>, password: impl Into<Secret>) -> Self {
        SaslConfig::Plain {
            username: username.into(),
            password: password.into(),
        }
    }

    /// `SCRAM-SHA-256` credentials.
    pub fn scram_sha256(username: impl Into<String>, password: impl Into<Secret>) -> Self {
        SaslConfig::Scram {
            algorithm: ScramAlgorithm::Sha256,
            username: username.into(),
            password: password.into(),
        }
    }

    /// `SCRAM-SHA-512` credentials.
    pub fn scram_sha512(username: impl Into<String>, password: impl Into<Secret>) -> Self {
        SaslConfig::Scram {
            algorithm: ScramAlgorithm::Sha512,
            username: username.into(),
            password: password.into(),
        }
    }

    /// `OAUTHBEARER` with a token callback.
    pub fn oauthbearer<F>(callback: F) -> Self
    where
        F: Fn() -> Result<OAuthToken, String> + Send + Sync + 'static,
    {
        SaslConfig::OAuthBearer {
            callback: Arc::new(callback),
        }
    }

    /// The mechanism name sent in `SaslHandshake`.
    pub fn mechanism_name(&self) -> &'static str {
        match self {
            SaslConfig::Plain { .. } => "PLAIN",
            SaslConfig::Scram { algorithm, .. } => algorithm.mechanism_name(),
            SaslConfig::OAuthBearer { .. } => "OAUTHBEARER",
        }
    }

    fn validate(&self) -> Result<(), Error> {
        let check = |username: &str, password: &Secret| {
            let reason = if username.is_empty() {
                "username is empty"
            } else if username.contains('\0') {
                "username contains NUL"
            } else if password.expose().is_empty() {
                "password is empty"
            } else if matches!(self, SaslConfig::Plain { .. }) && password.expose().contains('\0') {
                "password contains NUL"
            } else {
                return Ok(());
            };
            Err(Error::InvalidConfiguration {
                field: "sasl",
                reason: format!("{}: {reason}", self.mechanism_name()),
            })
        };
        match self {
            SaslConfig::Plain { username, password }
            | SaslConfig::Scram {
                username, password, ..
            } => check(username, password),
            SaslConfig::OAuthBearer { .. } => Ok(()),
        }
    }
}

/// One `host:port` from the bootstrap list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BrokerAddress {
    /// Host name or IP literal (IPv6 without brackets).
    pub host: String,
    /// TCP port (1..=65535).
    pub port: u16,
}

impl fmt::Display for BrokerAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl FromStr for BrokerAddress {
    type Err = Error;

    /// Parses `host:port`, `1.2.3.4:port` or `[v6]:port`.
    fn from_str(entry: &str) -> Result<Self, Self::Err> {
        let bad = |reason: String| Error::InvalidConfiguration {
            field: "bootstrap",
            reason,
        };
        let entry = entry.trim();
        if entry.is_empty() {
            return Err(bad("empty entry in the bootstrap list".to_owned()));
        }
        let (host, port) = if let Some(rest) = entry.strip_prefix('[') {
            let (v6, after) = rest
                .split_once(']')
                .ok_or_else(|| bad(format!("{entry:?}: '[' without matching ']'")))?;
            v6.parse::<Ipv6Addr>()
                .map_err(|_| bad(format!("{entry:?}: {v6:?} is not an IPv6 address")))?;
            let port = after
                .strip_prefix(':')
                .ok_or_else(|| bad(format!("{entry:?}: missing ':port' after ']'")))?;
            (v6, port)
        } else {
            let (host, port) = entry
                .rsplit_once(':')
                .ok_or_else(|| bad(format!("{entry:?}: expected host:port")))?;
            if host.contains(':') {
                return Err(bad(format!(
                    "{entry:?}: IPv6 addresses must be written in brackets, e.g. [::1]:9092"
                )));
            }
            if host.is_empty() {
                return Err(bad(format!("{entry:?}: empty host")));
            }
            let host_ok = host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
            if !host_ok {
                return Err(bad(format!("{entry:?}: invalid character in host")));
            }
            (host, port)
        };
        let port: u16 = match port.parse::<u32>() {
            Ok(p @ 1..=65535) => p as u16,
            Ok(p) => return Err(bad(format!("{entry:?}: port {p} outside 1..=65535"))),
            Err(_) => return Err(bad(format!("{entry:?}: port {port:?} is not a number"))),
        };
        Ok(BrokerAddress {
            host: host.to_owned(),
            port,
        })
    }
}

/// Parses a comma-separated bootstrap list; empty entries are errors.
pub fn parse_bootstrap(list: &str) -> Result<Vec<BrokerAddress>, Error> {
    if list.trim().is_empty() {
        return Err(Error::InvalidConfiguration {
            field: "bootstrap",
            reason: "bootstrap list is empty".to_owned(),
        });
    }
    list.split(',').map(str::parse).collect()
}

#[derive(Debug, Default)]
struct ApiCounters {
    requests: u64,
    errors: u64,
}

#[derive(Debug, Default)]
struct MetricsLocked {
    per_api: BTreeMap<i16, ApiCounters>,
    latency_max: Duration,
    latency_total: Duration,
    latency_count: u64,
}

#[derive(Debug, Default)]
struct MetricsInner {
    locked: Mutex<MetricsLocked>,
    retries: AtomicU64,
    reconnects: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    open_connections: AtomicI64,
}

/// Shared client counters. Cloning is cheap and every clone updates the same counters, so
/// the application keeps one clone to read [`snapshot`](Self::snapshot) while the client
/// layer records into another.
#[derive(Debug, Clone, Default)]
pub struct ClientMetrics {
    inner: Arc<MetricsInner>,
}

/// A point-in-time copy of [`ClientMetrics`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientMetricsSnapshot {
    /// Completed requests per API key.
    pub requests_by_api: BTreeMap<i16, u64>,
    /// Failed requests (transport failure, timeout or error code) per API key.
    pub errors_by_api: BTreeMap<i16, u64>,
    /// Requests retried.
    pub retries: u64,
    /// Connections re-established after a failure.
    pub reconnects: u64,
    /// Bytes received from brokers.
    pub bytes_in: u64,
    /// Bytes sent to brokers.
    pub bytes_out: u64,
    /// Longest request round trip.
    pub request_latency_max: Duration,
    /// Mean request round trip (zero before the first request).
    pub request_latency_mean: Duration,
    /// Connections open now.
    pub open_connections: u64,
}

impl ClientMetrics {
    /// Fresh, zeroed counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a completed request round trip for `api_key`.
    pub fn record_request(&self, api_key: i16, latency: Duration) {
        let mut m = self.inner.locked.lock();
        m.per_api.entry(api_key).or_default().requests += 1;
        m.latency_max = m.latency_max.max(latency);
        m.latency_total = m.latency_total.saturating_add(latency);
        m.latency_count += 1;
    }

    /// Records a failed request for `api_key`.
    pub fn record_error(&self, api_key: i16) {
        self.inner
            .locked
            .lock()
            .per_api
            .entry(api_key)
            .or_default()
            .errors += 1;
    }

    /// Records one retry.
    pub fn record_retry(&self) {
        self.inner.retries.fetch_add(1, Ordering::Relaxed);
    }

    /// Records one reconnect.
    pub fn record_reconnect(&self) {
        self.inner.reconnects.fetch_add(1, Ordering::Relaxed);
    }

    /// Records bytes received.
    pub fn record_bytes_in(&self, n: u64) {
        self.inner.bytes_in.fetch_add(n, Ordering::Relaxed);
    }

    /// Records bytes sent.
    pub fn record_bytes_out(&self, n: u64) {
        self.inner.bytes_out.fetch_add(n, Ordering::Relaxed);
    }

    /// Records a connection opened.
    pub fn record_connection_opened(&self) {
        self.inner.open_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Records a connection closed.
    pub fn record_connection_closed(&self) {
        self.inner.open_connections.fetch_sub(1, Ordering::Relaxed);
    }

    /// A consistent copy of the per-API counters and latency, plus the atomic counters.
    pub fn snapshot(&self) -> ClientMetricsSnapshot {
        let m = self.inner.locked.lock();
        let mean = match u32::try_from(m.latency_count) {
            Ok(0) => Duration::ZERO,
            Ok(n) => m.latency_total / n,
            // More than 4 billion requests: divide in nanoseconds instead.
            Err(_) => Duration::from_nanos(
                u64::try_from(m.latency_total.as_nanos() / u128::from(m.latency_count))
                    .unwrap_or(u64::MAX),
            ),
        };
        ClientMetricsSnapshot {
            requests_by_api: m.per_api.iter().map(|(k, c)| (*k, c.requests)).collect(),
            errors_by_api: m
                .per_api
                .iter()
                .filter(|(_, c)| c.errors > 0)
                .map(|(k, c)| (*k, c.errors))
                .collect(),
            retries: self.inner.retries.load(Ordering::Relaxed),
            reconnects: self.inner.reconnects.load(Ordering::Relaxed),
            bytes_in: self.inner.bytes_in.load(Ordering::Relaxed),
            bytes_out: self.inner.bytes_out.load(Ordering::Relaxed),
            request_latency_max: m.latency_max,
            request_latency_mean: mean,
            // A close recorded before its open would go negative; report zero then.
            open_connections: u64::try_from(self.inner.open_connections.load(Ordering::Relaxed))
                .unwrap_or(0),
        }
    }
}

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

    /// Limit for TCP connect + TLS handshake + SASL. Default [`DEFAULT_CONNECT_TIMEOUT`] (10 s).
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
