//! Opening connections: the bootstrap over every resolved address of every bootstrap
//! server, and the reconnect backoff every new connection waits out (see [`super::backoff`]).

use std::net::SocketAddr;
use std::time::Instant;

use crate::transport::stream::INTERRUPT_CHECK;
use crate::transport::TransportError;

use super::backoff::{Blocked, Peer};
use super::{cap, BrokerConnection, Client, ClientError};

/// Why no bootstrap address gave a working connection.
#[derive(Debug, Default)]
struct BootstrapFailure {
    /// One line per address tried or skipped, for the error message.
    attempts: Vec<String>,
    /// Errors of the attempts that reached a broker (got past the TCP connect): these say
    /// what is wrong, where "connection refused" only says nobody listens.
    reached: Vec<ClientError>,
}

impl BootstrapFailure {
    /// The one error that says best why the bootstrap failed: a refusal (credentials,
    /// certificate, a peer that is not Kafka or not TLS) as itself, since it is the same at
    /// every broker; else the error of the only attempt that reached a broker; else
    /// [`ClientError::NoBrokerAvailable`] listing every attempt.
    fn into_error(mut self) -> ClientError {
        if let Some(i) = self.reached.iter().position(|e| !e.is_retriable()) {
            if self.attempts.len() > 1 {
                log::debug!("bootstrap failed: {}", self.attempts.join("; "));
            }
            return self.reached.swap_remove(i);
        }
        if self.reached.len() == 1 {
            if let Some(e) = self.reached.pop() {
                return e;
            }
        }
        ClientError::NoBrokerAvailable {
            attempts: self.attempts,
        }
    }
}

/// One pass over the bootstrap addresses.
#[derive(Debug, Default)]
struct BootstrapPass {
    failure: BootstrapFailure,
    /// Whether any address was actually tried (not skipped for its backoff).
    tried: bool,
    /// When the first skipped address comes out of its reconnect backoff.
    earliest: Option<Instant>,
}

/// The outcome of one bootstrap attempt.
enum Attempt {
    /// The bootstrap connection is open.
    Connected,
    /// A refusal that every other address would repeat (credentials, certificates).
    Refused,
    /// Failed or skipped; try the next address.
    Failed,
}

/// Why a connection to `peer` is not attempted yet (the reason of the error a caller gets
/// when its deadline comes before the reconnect backoff ends).
fn backoff_reason(peer: Peer, blocked: &Blocked) -> String {
    format!(
        "not tried again yet: {peer} failed {} connection attempt(s) in a row (the last: {}), \
         and its reconnect backoff (reconnect.backoff.ms, growing to reconnect.backoff.max.ms) \
         runs {:?} longer",
        blocked.failures,
        blocked.last_error,
        blocked.until.saturating_duration_since(Instant::now())
    )
}

impl Client {
    /// Waits until `peer` may be connected to again after failed attempts, but not past
    /// `deadline` (nor the options' interrupt). At the deadline, a retriable
    /// [`TransportError::Connect`] for `addr` says so.
    pub(super) fn wait_for_backoff(
        &self,
        peer: Peer,
        addr: &str,
        deadline: Instant,
    ) -> Result<(), ClientError> {
        let Some(blocked) = self.reconnects.blocked(peer, Instant::now()) else {
            return Ok(());
        };
        log::debug!(
            "{peer} ({addr}): {} failed connection attempt(s); waiting {:?} before the next",
            blocked.failures,
            blocked.until.saturating_duration_since(Instant::now())
        );
        self.sleep_until(blocked.until.min(deadline));
        if self.reconnects.blocked(peer, Instant::now()).is_none() {
            return Ok(());
        }
        Err(ClientError::Transport(TransportError::Connect {
            addr: addr.to_string(),
            reason: backoff_reason(peer, &blocked),
        }))
    }

    /// Sleeps until `until`, or until the options' interrupt fires if that is sooner.
    fn sleep_until(&self, until: Instant) {
        loop {
            let target = cap(&self.opts, until);
            let now = Instant::now();
            if now >= target {
                return;
            }
            let mut pause = target - now;
            if self.opts.interrupt.is_some() {
                // Another thread may bring the interrupt forward: look again now and then.
                pause = pause.min(INTERRUPT_CHECK);
            }
            std::thread::sleep(pause);
        }
    }

    /// Records the outcome of a connection attempt to `peer` for its reconnect backoff.
    pub(super) fn note_attempt<T>(&mut self, peer: Peer, r: &Result<T, ClientError>) {
        match r {
            Ok(_) => self.reconnects.reset(peer),
            Err(e) => {
                let delay = self.reconnects.failed(
                    peer,
                    Instant::now(),
                    rand::random::<f64>(),
                    e.to_string(),
                );
                log::debug!("{peer}: connection attempt failed ({e}); next one in {delay:?}");
            }
        }
    }

    /// Tries every resolved address of every bootstrap server, in order, until one gives a
    /// working connection (TCP, TLS, ApiVersions, SASL). Each address is a separate attempt,
    /// so a host whose first address answers but misbehaves still gets its others tried.
    /// The one bootstrap path behind [`Client::connect`], reconnects and
    /// [`Client::from_config`]; a failure is reported by [`BootstrapFailure::into_error`].
    pub(super) fn bootstrap(&mut self, deadline: Instant) -> Result<(), ClientError> {
        self.connect_bootstrap(deadline)
            .map_err(BootstrapFailure::into_error)
    }

    /// Opens the bootstrap connection: every resolved address of every bootstrap server, in
    /// order, each attempt bounded by [`ClientOptions::attempt_timeout`] and all by
    /// `deadline`. Addresses in reconnect backoff are skipped; when all of them are, the
    /// first to come out of backoff is waited for (once, and not past `deadline`).
    fn connect_bootstrap(&mut self, deadline: Instant) -> Result<(), BootstrapFailure> {
        let mut waited = false;
        loop {
            let mut pass = BootstrapPass::default();
            for server in self.opts.bootstrap_servers.clone() {
                let left = deadline.saturating_duration_since(Instant::now());
                let addrs = match crate::transport::resolve_within(&server, left) {
                    Ok(a) => a,
                    Err(e) => {
                        pass.failure.attempts.push(format!("{server}: {e}"));
                        continue;
                    }
                };
                for sa in addrs {
                    match self.bootstrap_via(&server, sa, deadline, &mut pass) {
                        Attempt::Connected => return Ok(()),
                        Attempt::Refused => return Err(pass.failure),
                        Attempt::Failed => {}
                    }
                }
            }
            match pass.earliest {
                Some(at) if !pass.tried && !waited => {
                    waited = true;
                    self.sleep_until(at.min(deadline));
                }
                _ => {
                    let mut failure = pass.failure;
                    if failure.attempts.is_empty() {
                        failure
                            .attempts
                            .push("no bootstrap servers configured".to_string());
                    }
                    return Err(failure);
                }
            }
        }
    }

    /// One bootstrap attempt at address `sa` of `server`, unless the deadline passed or the
    /// address is in reconnect backoff (then it is noted in `pass` as skipped).
    fn bootstrap_via(
        &mut self,
        server: &str,
        sa: SocketAddr,
        deadline: Instant,
        pass: &mut BootstrapPass,
    ) -> Attempt {
        let failure = &mut pass.failure;
        let now = Instant::now();
        if now >= deadline {
            failure
                .attempts
                .push(format!("{server} ({sa}): deadline passed before trying"));
            return Attempt::Failed;
        }
        let peer = Peer::Bootstrap(sa);
        if let Some(blocked) = self.reconnects.blocked(peer, now) {
            failure.attempts.push(format!(
                "{server} ({sa}): {}",
                backoff_reason(peer, &blocked)
            ));
            pass.earliest = Some(
                pass.earliest
                    .map_or(blocked.until, |e| e.min(blocked.until)),
            );
            return Attempt::Failed;
        }
        pass.tried = true;
        let attempt_deadline = self
            .opts
            .attempt_timeout
            .map_or(deadline, |t| deadline.min(now + t));
        let r = self
            .broker_options(server, attempt_deadline)
            .and_then(|o| BrokerConnection::connect_addrs(server, &[sa], &o, attempt_deadline));
        self.note_attempt(peer, &r);
        match r {
            Ok(mut c) => {
                c.set_interrupt(self.opts.interrupt.clone());
                log::debug!("bootstrapped via {server} ({sa})");
                self.note_reopened(None);
                self.bootstrap = Some(c);
                Attempt::Connected
            }
            // Rejected credentials or certificates are the same at every broker, and
            // Kafka's clients treat them as fatal: report them at once instead of
            // trying (and being refused by) every address.
            Err(
                e @ (ClientError::Sasl { .. }
                | ClientError::SaslRefused { .. }
                | ClientError::Transport(
                    TransportError::Tls { .. } | TransportError::NotTls { .. },
                )),
            ) => {
                log::warn!("bootstrap via {server} ({sa}) refused: {e}");
                failure.attempts.push(format!("{server} ({sa}): {e}"));
                failure.reached.push(e);
                Attempt::Refused
            }
            Err(e) => {
                log::debug!("bootstrap via {server} ({sa}) failed: {e}");
                failure.attempts.push(format!("{server} ({sa}): {e}"));
                if !matches!(
                    e,
                    ClientError::Transport(
                        TransportError::Connect { .. } | TransportError::Resolve { .. }
                    )
                ) {
                    failure.reached.push(e);
                }
                Attempt::Failed
            }
        }
    }
}
