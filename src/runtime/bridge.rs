//! From the user-facing [`ClientConfig`] to the client layer's [`ClientOptions`]: the rustls
//! configuration built once, and a SASL factory that makes a fresh step machine per
//! (re-)authentication.

use std::sync::Arc;

use std::time::Duration;

use crate::client::{AuthStep, ClientOptions, ConnectionObserver, SaslAuthenticator, SaslFactory};
use crate::config::{ClientConfig, ClientMetrics, SaslConfig};
use crate::error::{Error, TlsProblem};
use crate::transport::sasl::{SaslMechanism, SaslStep};
use crate::transport::tls::build_client_config;
use rustls::pki_types::ServerName;

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
    options.attempt_timeout = Some(config.get_request_timeout());
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
        SaslMechanism::from_config(&config)
            .map(|m| Box::new(MechanismAdapter(m)) as Box<dyn SaslAuthenticator>)
            .map_err(|e| e.to_string())
    })
}

/// Lets a [`SaslMechanism`] step machine drive the client's SaslAuthenticate rounds.
struct MechanismAdapter(SaslMechanism);

impl SaslAuthenticator for MechanismAdapter {
    fn mechanism_name(&self) -> &str {
        self.0.name()
    }

    fn start(&mut self) -> Result<Vec<u8>, String> {
        Ok(self.0.start())
    }

    fn step(&mut self, server: &[u8]) -> Result<AuthStep, String> {
        match self.0.step(server) {
            Ok(SaslStep::Continue(next)) => Ok(AuthStep::Continue(next)),
            Ok(SaslStep::Done(last)) => Ok(AuthStep::Done(last)),
            Err(e) => Err(e.to_string()),
        }
    }
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
