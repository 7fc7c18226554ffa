//! From the user's [`ClientConfig`] to a connected [`Client`], and from the client layer's
//! errors to the crate's [`Error`].
//!
//! This glue sits above `client` and `transport` and below `session`, `admin` and
//! `describe`: it imports `config`, `error`, `client` and `transport`, and none of those
//! imports it, so every import points down the layers (ARCHITECTURE.md §1). It holds:
//!
//! * [`Client::from_config`] and the few `Client` calls that return the crate's [`Error`];
//!   the bootstrap itself is the client layer's one bootstrap path ([`Client::connect`]),
//!   which already reports a refusal (SASL, TLS, a peer that is not Kafka or not TLS) typed;
//! * the [`ClientOptions`] built from a [`ClientConfig`] (rustls setup, SASL factory,
//!   metrics observer);
//! * [`SaslMechanism::from_config`], which needs the configuration type the SASL layer must
//!   not import;
//! * the mapping [`ClientError`] → [`Error`].
//!
//! ```no_run
//! use std::time::Duration;
//! use kafka_streams_group::client::Client;
//! use kafka_streams_group::{ClientConfig, SaslConfig, SecurityProtocol, TlsConfig};
//!
//! let config = ClientConfig::new("broker-1:9093")
//!     .security_protocol(SecurityProtocol::SaslSsl)
//!     .tls(TlsConfig::new().ca_pem_file("/etc/kafka/ca.pem"))
//!     .sasl(SaslConfig::scram_sha512("app", "secret"))
//!     .request_timeout(Duration::from_secs(10));
//! let mut client = Client::from_config(&config, Duration::from_secs(30))?;
//! let metadata = client.fetch_metadata(None, Duration::from_secs(10))?;
//! println!("{} brokers", metadata.brokers.len());
//! let coordinator = client.lookup_coordinator("my-app", Duration::from_secs(10))?;
//! println!("group coordinator: {}", coordinator.addr());
//! # Ok::<(), kafka_streams_group::Error>(())
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;

use crate::client::{
    ApiVersionTable, BrokerAddress, Client, ClientError, ClientOptions, ConnectionObserver,
    ReconnectBackoff, SaslAuthenticator, SaslFactory,
};
use crate::config::{ClientConfig, ClientMetrics, SaslConfig};
use crate::error::{BrokerErrorContext, Error, TlsProblem};
use crate::protocol::api::metadata::MetadataResponse;
use crate::tls::build_client_config;
use crate::transport::error::NOT_TLS;
use crate::transport::sasl::{OAuthBearer, Plain, SaslError, SaslMechanism, Scram};
use crate::transport::stream::Interrupt;
use crate::transport::TransportError;

impl Client {
    /// Validates `config`, builds its TLS and SASL setup, and connects to the first bootstrap
    /// server that gives a working connection (TCP, TLS, ApiVersions, SASL), all within
    /// `timeout`.
    ///
    /// Each attempt obeys the config's limits as well: the whole attempt (TCP connect, TLS
    /// handshake, ApiVersions and SASL) [`ClientConfig::connect_timeout`]
    /// (`socket.connection.setup.timeout.ms`) from its start, and never more than
    /// [`ClientConfig::request_timeout`]; none outlives `timeout`.
    /// Every resolved address is tried at most once, and there is no retry loop: a rejected
    /// password or certificate ends the bootstrap at once (it is the same at every broker),
    /// so it costs one connection.
    ///
    /// Errors are typed: [`Error::InvalidConfiguration`] / [`Error::TlsSetup`] before any I/O;
    /// [`Error::Tls`] for certificate and handshake failures, [`Error::SaslAuthentication`]
    /// (naming the mechanism) for credentials the broker rejected, [`Error::Sasl`] when this
    /// client refused the server (a SCRAM signature that does not verify, ...),
    /// [`Error::Timeout`] for a broker that does not answer, [`Error::Protocol`] for a
    /// non-Kafka peer (a TLS listener reached without TLS, or a plaintext listener reached
    /// with TLS). A refusal from any broker is returned as such; when no attempt got past the
    /// TCP connect, or several failed only transiently, the result is [`Error::Disconnected`]
    /// listing every attempt.
    pub fn from_config(config: &ClientConfig, timeout: Duration) -> Result<Client, Error> {
        Self::from_config_with(config, timeout, None)
    }

    /// [`Client::from_config`] whose blocking waits also end when `interrupt` fires (the
    /// heartbeat thread's close and drop).
    pub(crate) fn from_config_with(
        config: &ClientConfig,
        timeout: Duration,
        interrupt: Option<Interrupt>,
    ) -> Result<Client, Error> {
        let mut opts = client_options(config)?;
        if interrupt.is_some() {
            opts.interrupt = interrupt;
        }
        Client::connect(opts, Instant::now() + timeout).map_err(|e| config_error(config, e))
    }

    /// The ApiVersions of the broker [`fetch_metadata`](Self::fetch_metadata) would ask,
    /// connecting (again) within `timeout` if needed.
    pub fn broker_api_versions(&mut self, timeout: Duration) -> Result<ApiVersionTable, Error> {
        self.any_api_versions(Instant::now() + timeout)
            .map_err(client_error)
    }

    /// [`Client::metadata`] with a timeout and the crate's [`Error`]: metadata for `topics`
    /// (`None` = all topics). Per-topic error codes are left in the response.
    pub fn fetch_metadata(
        &mut self,
        topics: Option<&[&str]>,
        timeout: Duration,
    ) -> Result<MetadataResponse, Error> {
        self.metadata(topics, Instant::now() + timeout)
            .map_err(client_error)
    }

    /// [`Client::find_coordinator`] with a timeout and the crate's [`Error`]: the coordinator
    /// of consumer/streams group `group`, looked up afresh (and remembered for
    /// [`Client::coordinator`]), retrying "not available / loading" answers until `timeout`.
    pub fn lookup_coordinator(
        &mut self,
        group: &str,
        timeout: Duration,
    ) -> Result<BrokerAddress, Error> {
        self.find_coordinator(group, Instant::now() + timeout)
            .map_err(client_error)
    }
}

impl SaslMechanism {
    /// Builds the mechanism the configuration names. SCRAM draws its nonce from `rand`'s
    /// thread RNG; OAUTHBEARER calls the token callback now.
    pub fn from_config(config: &SaslConfig) -> Result<Self, SaslError> {
        match config {
            SaslConfig::Plain { username, password } => {
                Plain::new(username, password.expose()).map(SaslMechanism::Plain)
            }
            SaslConfig::Scram {
                algorithm,
                username,
                password,
            } => Scram::new(*algorithm, username, password.expose()).map(SaslMechanism::Scram),
            SaslConfig::OAuthBearer { callback } => {
                OAuthBearer::from_callback(callback).map(SaslMechanism::OAuthBearer)
            }
        }
    }
}

/// [`client_error`] plus what only the configuration knows: the SASL mechanism's name in a
/// broker's rejection (the client layer reports it without one).
pub(crate) fn config_error(config: &ClientConfig, e: ClientError) -> Error {
    match client_error(e) {
        Error::SaslAuthentication { mechanism, message } if mechanism.is_empty() => {
            Error::SaslAuthentication {
                mechanism: config
                    .get_sasl()
                    .map(|s| s.mechanism_name().to_owned())
                    .unwrap_or_default(),
                message,
            }
        }
        other => other,
    }
}

/// Builds the client layer's options. Fails on invalid settings or TLS material that cannot
/// be loaded, before any connection is attempted.
pub(crate) fn client_options(config: &ClientConfig) -> Result<ClientOptions, Error> {
    config.validate()?;
    let servers = config
        .bootstrap_servers()?
        .into_iter()
        .map(|b| {
            if b.host.contains(':') {
                format!("[{}]:{}", b.host, b.port)
            } else {
                format!("{}:{}", b.host, b.port)
            }
        })
        .collect::<Vec<_>>();
    let mut options = ClientOptions::new(servers);
    options.client_id = Some(config.get_client_id().to_owned());
    options.connect_timeout = config.get_connect_timeout();
    // Java's `socket.connection.setup.timeout.ms`: a connection is set up (TCP, TLS,
    // ApiVersions, SASL) within it, so a bootstrap server that accepts TCP but never answers
    // (a stopped broker) is left for the next address after it, not after the request
    // timeout; never longer than the request timeout, as before.
    let setup = config
        .get_connect_timeout()
        .min(config.get_request_timeout());
    options.attempt_timeout = Some(setup);
    let (base, max) = config.get_reconnect_backoff();
    options.reconnect_backoff = ReconnectBackoff::new(base, max);
    options.max_frame_size = config.get_max_frame_size();
    options.observer = Some(Arc::new(config.get_metrics().clone()));
    let protocol = config.get_security_protocol();
    if protocol.uses_tls() {
        let tls = config.get_tls().ok_or(Error::InvalidConfiguration {
            field: "tls",
            reason: format!("{protocol:?} needs TLS settings"),
        })?;
        options.tls = Some(build_client_config(tls)?);
        // validate() checked that an override parses; keep the error path anyway.
        options.tls_server_name = tls
            .server_name_override()
            .map(|name| {
                ServerName::try_from(name.to_owned()).map_err(|_| {
                    Error::TlsSetup(TlsProblem::InvalidServerName {
                        name: name.to_owned(),
                    })
                })
            })
            .transpose()?;
    }
    if protocol.uses_sasl() {
        let sasl = config
            .get_sasl()
            .cloned()
            .ok_or(Error::InvalidConfiguration {
                field: "sasl",
                reason: format!("{protocol:?} needs SASL settings"),
            })?;
        options.sasl = Some(sasl_factory(sasl));
    }
    Ok(options)
}

fn sasl_factory(config: SaslConfig) -> SaslFactory {
    Arc::new(move || {
        SaslMechanism::from_config(&config).map(|m| Box::new(m) as Box<dyn SaslAuthenticator>)
    })
}

/// The client layer reports connections, requests and bytes; `ClientMetrics` counts them.
impl ConnectionObserver for ClientMetrics {
    fn connection_opened(&self) {
        self.record_connection_opened();
    }

    fn connection_closed(&self) {
        self.record_connection_closed();
    }

    fn request_completed(
        &self,
        api_key: i16,
        latency: Duration,
        bytes_out: usize,
        bytes_in: usize,
    ) {
        self.record_request(api_key, latency);
        self.record_bytes_out(bytes_out as u64);
        self.record_bytes_in(bytes_in as u64);
    }

    fn request_failed(&self, api_key: i16) {
        self.record_error(api_key);
    }

    fn retried(&self) {
        self.record_retry();
    }

    fn reconnected(&self) {
        self.record_reconnect();
    }
}

/// Maps the client layer's error into the crate's.
pub(crate) fn client_error(e: ClientError) -> Error {
    match e {
        ClientError::Transport(t) => transport_error(t),
        ClientError::Encode { source, .. } => Error::Encode(source),
        ClientError::Decode { source, .. } => Error::Decode(source),
        ClientError::CorrelationMismatch {
            api,
            broker,
            expected,
            got,
        } => Error::Protocol {
            broker: Some(broker),
            message: format!(
                "{api} response has correlation id {got}, expected {expected}; connection dropped"
            ),
        },
        ClientError::Broker {
            api,
            broker,
            kind,
            message,
        } => Error::Broker {
            kind,
            code: kind.code(),
            message,
            context: BrokerErrorContext {
                api: Some(api),
                group: None,
                broker: Some(broker),
            },
        },
        ClientError::UnsupportedApi {
            api,
            broker,
            broker_range,
            ours,
        } => Error::Unsupported {
            what: format!(
                "{api} on {broker}: the broker offers {broker_range:?}, this library speaks \
                 versions {}..={}",
                ours.0, ours.1
            ),
        },
        ClientError::Sasl { broker, reason } => Error::SaslAuthentication {
            mechanism: String::new(),
            message: format!("{broker}: {reason}"),
        },
        ClientError::SaslRefused { broker, source } => Error::Sasl {
            mechanism: source.mechanism(),
            broker: Some(broker),
            source,
        },
        ClientError::NoBrokerAvailable { attempts } => Error::Disconnected {
            broker: None,
            reason: format!("no broker reachable: {}", attempts.join("; ")),
        },
        ClientError::Timeout { op } => Error::Timeout {
            operation: op,
            limit: Duration::ZERO,
        },
        ClientError::Protocol { broker, reason } => Error::Protocol {
            broker: Some(broker),
            message: reason,
        },
    }
}

fn transport_error(t: TransportError) -> Error {
    match t {
        TransportError::Timeout { op, peer, elapsed } => Error::Timeout {
            operation: format!("{op} to {peer}"),
            limit: elapsed,
        },
        TransportError::Tls { peer, source } => Error::Tls {
            broker: Some(peer),
            source,
        },
        TransportError::Io { peer, source } => Error::Io {
            operation: "socket I/O",
            broker: Some(peer),
            source,
        },
        TransportError::NotTls { peer } => Error::Protocol {
            broker: Some(peer),
            message: NOT_TLS.to_string(),
        },
        TransportError::FrameTooLarge { peer, size, max } => Error::Protocol {
            broker: Some(peer),
            message: format!(
                "frame announces {size} bytes, above the limit of {max} (is this a TLS \
                 listener reached without TLS?)"
            ),
        },
        other => Error::Disconnected {
            broker: None,
            reason: other.to_string(),
        },
    }
}
