//! [`Client::from_config`]: a [`Client`] built from the user-facing [`ClientConfig`], plus a
//! few calls that return the crate's [`Error`] instead of the client layer's
//! [`ClientError`].
//!
//! It lives inside `client` (not in `runtime`) because it reports a failed bootstrap from the
//! client's own record of it: [`Client::connect`] folds every failed attempt into
//! [`ClientError::NoBrokerAvailable`]'s strings, which would turn a rejected password or an
//! untrusted certificate into an untyped "no broker reachable". Here each attempt's error is
//! kept, and when only one attempt got past the TCP connect its typed error is returned. Both
//! run the same bootstrap loop.
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

use std::time::{Duration, Instant};

use super::{ApiVersionTable, BrokerAddress, Client, ClientError};
use crate::config::ClientConfig;
use crate::error::Error;
use crate::protocol::api::metadata::MetadataResponse;
use crate::runtime::bridge::client_options;
use crate::runtime::driver::client_error;

impl Client {
    /// Validates `config`, builds its TLS and SASL setup, and connects to the first bootstrap
    /// server that gives a working connection (TCP, TLS, ApiVersions, SASL), all within
    /// `timeout`.
    ///
    /// Each attempt obeys the config's limits as well: the TCP connect and TLS handshake
    /// [`ClientConfig::connect_timeout`], and the whole attempt (ApiVersions and SASL
    /// included) [`ClientConfig::request_timeout`] from its start. Every resolved address is
    /// tried at most once, and there is no retry loop: a rejected password or certificate ends
    /// the bootstrap at once (it is the same at every broker), so it costs one connection.
    ///
    /// Errors are typed: [`Error::InvalidConfiguration`] / [`Error::TlsSetup`] before any I/O;
    /// [`Error::Tls`] for certificate and handshake failures, [`Error::SaslAuthentication`]
    /// (naming the mechanism) for rejected credentials, [`Error::Timeout`] for a broker that
    /// does not answer, [`Error::Protocol`] for a non-Kafka peer (e.g. a TLS listener reached
    /// without TLS). A refusal (SASL, TLS, protocol) from any broker is returned as such; when
    /// no attempt got past the TCP connect, or several failed only transiently, the result is
    /// [`Error::Disconnected`] listing every attempt.
    pub fn from_config(config: &ClientConfig, timeout: Duration) -> Result<Client, Error> {
        Self::from_config_with(config, timeout, None)
    }

    /// [`Client::from_config`] whose blocking waits also end when `interrupt` fires (the
    /// heartbeat thread's close and drop).
    pub(crate) fn from_config_with(
        config: &ClientConfig,
        timeout: Duration,
        interrupt: Option<crate::transport::stream::Interrupt>,
    ) -> Result<Client, Error> {
        let mut opts = client_options(config)?;
        if interrupt.is_some() {
            opts.interrupt = interrupt;
        }
        let deadline = Instant::now() + timeout;
        let mut client = Client::unconnected(opts);
        let failure = match client.connect_bootstrap(deadline) {
            Ok(()) => return Ok(client),
            Err(failure) => failure,
        };
        let mut errors: Vec<Error> = failure
            .reached
            .into_iter()
            .map(|e| config_error(config, e))
            .collect();
        // A broker that refused us (credentials, certificate, not Kafka) gives the same answer
        // on every retry: that error is the result, typed and not retriable. Otherwise the
        // only broker that answered at all says best what went wrong.
        let pick = match errors.iter().position(|e| !e.is_retriable()) {
            Some(i) => Some(errors.swap_remove(i)),
            None if errors.len() == 1 => errors.pop(),
            None => None,
        };
        if let Some(e) = pick {
            if failure.attempts.len() > 1 {
                log::debug!("bootstrap failed: {}", failure.attempts.join("; "));
            }
            return Err(e);
        }
        Err(Error::Disconnected {
            broker: None,
            reason: format!("no broker reachable: {}", failure.attempts.join("; ")),
        })
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
    /// of consumer/streams group `group`, retrying "not available / loading" answers until
    /// `timeout`.
    pub fn lookup_coordinator(
        &mut self,
        group: &str,
        timeout: Duration,
    ) -> Result<BrokerAddress, Error> {
        self.find_coordinator(group, Instant::now() + timeout)
            .map_err(client_error)
    }
}

/// [`client_error`] plus what only the configuration knows: the SASL mechanism's name, and
/// the limit of a timeout the client layer reported without one.
/// Maps a client-layer error with the configuration at hand: names the configured SASL
/// mechanism in authentication failures and the request timeout in timeouts.
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
        Error::Timeout { operation, limit } if limit.is_zero() => Error::Timeout {
            operation,
            limit: config.get_request_timeout(),
        },
        other => other,
    }
}
