//! One Kafka connection: request headers, correlation ids, ApiVersions, SASL.
//!
//! ```text
//!   BrokerConnection::connect
//!     ├─ transport::Connection::connect   TCP (+ TLS handshake)
//!     ├─ ApiVersions                      newest version first, v0 on UNSUPPORTED_VERSION
//!     └─ SASL (optional)                  SaslHandshake v1, then SaslAuthenticate rounds
//!   send_request::<R>(req, version)       header v1/v2, response header v0/v1
//! ```
//!
//! A blocking call sends and waits for its answer. Several requests may also be in flight
//! (`start_request` / `finish_request`, see [`pipeline`]): Kafka answers a connection's
//! requests in order, so a response whose correlation id is not the oldest one awaited can
//! only mean the stream is out of step, and the connection is dropped.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::protocol::api::api_versions::{
    decode_api_versions_response_frame, ApiVersionsRequest, ApiVersionsResponse,
};
use crate::protocol::api::sasl_authenticate::{SaslAuthenticateRequest, SaslAuthenticateResponse};
use crate::protocol::api::sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
use crate::protocol::codec::DecodeInto;
use crate::protocol::frame::{decode_response_frame, decode_response_frame_into};
use crate::protocol::{ApiMessage, BrokerErrorKind, Request};
use crate::transport::{ConnectOptions, Connection};

use super::auth::{AuthStep, SaslFactory};
use super::error::ClientError;
use super::observer::ConnectionObserver;

pub mod pipeline;

pub use pipeline::PendingRequest;

/// The software name and version sent in ApiVersions v3+ (shown by broker metrics).
const SOFTWARE_NAME: &str = "kafka-streams-group-rs";
const SOFTWARE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a broker supports, from its ApiVersions response: api key → (min, max).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiVersionTable {
    ranges: HashMap<i16, (i16, i16)>,
}

impl ApiVersionTable {
    /// Builds a table from `(api_key, min, max)` triples.
    pub fn from_ranges(ranges: impl IntoIterator<Item = (i16, i16, i16)>) -> Self {
        ApiVersionTable {
            ranges: ranges
                .into_iter()
                .map(|(k, lo, hi)| (k, (lo, hi)))
                .collect(),
        }
    }

    /// The broker's `(min, max)` for `api_key`, if it lists the API.
    pub fn range(&self, api_key: i16) -> Option<(i16, i16)> {
        self.ranges.get(&api_key).copied()
    }

    /// The highest version of `R` both this library and the broker support.
    pub fn pick<R: ApiMessage>(&self, broker: &str) -> Result<i16, ClientError> {
        let ours = (R::MIN_VERSION, R::MAX_VERSION);
        let unsupported = |broker_range| ClientError::UnsupportedApi {
            api: R::NAME,
            broker: broker.to_string(),
            broker_range,
            ours,
        };
        let (lo, hi) = self.range(R::API_KEY).ok_or_else(|| unsupported(None))?;
        let v = hi.min(R::MAX_VERSION);
        if v < lo.max(R::MIN_VERSION) {
            return Err(unsupported(Some((lo, hi))));
        }
        Ok(v)
    }
}

/// Settings for opening a [`BrokerConnection`].
#[derive(Clone, Default)]
pub struct BrokerConnectOptions {
    /// Transport settings (connect timeout, frame limit, TLS).
    pub transport: ConnectOptions,
    /// Client id sent in every request header.
    pub client_id: Option<String>,
    /// SASL mechanism factory; `None` for no SASL.
    pub sasl: Option<SaslFactory>,
    /// Receives connection and request events (metrics); `None` = not observed.
    pub observer: Option<Arc<dyn ConnectionObserver>>,
}

impl std::fmt::Debug for BrokerConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokerConnectOptions")
            .field("transport", &self.transport)
            .field("client_id", &self.client_id)
            .field("sasl", &self.sasl.is_some())
            .field("observer", &self.observer.is_some())
            .finish()
    }
}

/// A connection to one broker that speaks Kafka requests.
pub struct BrokerConnection {
    /// Unique in the process (see [`pipeline::PendingRequest`]).
    id: u64,
    conn: Connection,
    addr: String,
    client_id: Option<String>,
    next_correlation_id: i32,
    buf: Vec<u8>,
    versions: ApiVersionTable,
    /// When SASL finished and how long the broker lets the session live (0/None = forever).
    authenticated_at: Option<Instant>,
    session_lifetime: Option<Duration>,
    /// Kept to re-authenticate before the session lifetime runs out (KIP-368).
    sasl: Option<SaslFactory>,
    observer: Option<Arc<dyn ConnectionObserver>>,
    /// Whether `connection_opened` was reported, so `Drop` reports the close exactly once.
    reported_open: bool,
    /// Correlation ids written and not yet read, oldest first.
    awaited: VecDeque<i32>,
    /// Answers read for pending requests not yet finished, by correlation id.
    stash: HashMap<i32, Vec<u8>>,
    /// Pending requests whose answers are dropped when read.
    abandoned: HashSet<i32>,
}

impl Drop for BrokerConnection {
    fn drop(&mut self) {
        if self.reported_open {
            if let Some(o) = &self.observer {
                o.connection_closed();
            }
        }
    }
}

impl std::fmt::Debug for BrokerConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokerConnection")
            .field("addr", &self.addr)
            .field("conn", &self.conn)
            .field("next_correlation_id", &self.next_correlation_id)
            .field("session_lifetime", &self.session_lifetime)
            .field("sasl", &self.sasl.is_some())
            .finish()
    }
}

impl BrokerConnection {
    /// Connects to `addr` (`host:port`), negotiates ApiVersions and, if configured,
    /// authenticates with SASL; all of it before `deadline` (the TCP connect and TLS handshake
    /// additionally obey the transport's connect timeout).
    pub fn connect(
        addr: &str,
        opts: &BrokerConnectOptions,
        deadline: Instant,
    ) -> Result<BrokerConnection, ClientError> {
        let left = deadline.saturating_duration_since(Instant::now());
        let addrs = crate::transport::resolve_within(addr, left)?;
        BrokerConnection::connect_addrs(addr, &addrs, opts, deadline)
    }

    /// Like [`connect`](Self::connect) with already resolved addresses, tried in order for the
    /// TCP connect; `addr` (`host:port`) names the broker.
    pub fn connect_addrs(
        addr: &str,
        addrs: &[std::net::SocketAddr],
        opts: &BrokerConnectOptions,
        deadline: Instant,
    ) -> Result<BrokerConnection, ClientError> {
        let conn = Connection::connect_addrs(addr, addrs, &opts.transport)?;
        let mut bc = BrokerConnection {
            id: pipeline::next_connection_id(),
            conn,
            addr: addr.to_string(),
            client_id: opts.client_id.clone(),
            next_correlation_id: 0,
            buf: Vec::with_capacity(256),
            versions: ApiVersionTable::default(),
            authenticated_at: None,
            session_lifetime: None,
            sasl: opts.sasl.clone(),
            observer: opts.observer.clone(),
            reported_open: false,
            awaited: VecDeque::new(),
            stash: HashMap::new(),
            abandoned: HashSet::new(),
        };
        bc.negotiate_versions(deadline)?;
        if let Some(factory) = opts.sasl.as_ref() {
            bc.authenticate(factory, deadline)?;
        }
        if let Some(o) = &bc.observer {
            o.connection_opened();
            bc.reported_open = true;
        }
        Ok(bc)
    }

    /// The address this connection was opened to (`host:port`, as given).
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The socket address actually connected to.
    pub fn peer_addr(&self) -> std::net::SocketAddr {
        self.conn.peer_addr()
    }

    /// Lets another thread end this connection's waits early (see
    /// [`crate::transport::stream::Interrupt`]).
    pub fn set_interrupt(&mut self, interrupt: Option<crate::transport::stream::Interrupt>) {
        self.conn.set_interrupt(interrupt);
    }

    /// True once an error made the connection unusable; discard it.
    pub fn is_broken(&self) -> bool {
        self.conn.is_broken()
    }

    /// The broker's supported API versions.
    pub fn api_versions(&self) -> &ApiVersionTable {
        &self.versions
    }

    /// The highest version of `R` both sides support.
    pub fn pick_version<R: ApiMessage>(&self) -> Result<i16, ClientError> {
        self.versions.pick::<R>(&self.addr)
    }

    /// The SASL session lifetime the broker granted (`None` without SASL or when unlimited).
    pub fn session_lifetime(&self) -> Option<Duration> {
        self.session_lifetime
    }

    /// When the SASL session must be renewed: the broker closes the connection after
    /// `session_lifetime`; re-authenticating before then keeps it. `None` = never.
    pub fn reauthenticate_at(&self) -> Option<Instant> {
        Some(self.authenticated_at? + self.session_lifetime?)
    }

    /// True when a SASL session exists whose renewal time (90% of the granted lifetime,
    /// leaving room for the exchange itself, as Kafka's Java client does with 85-95%) has come.
    pub fn needs_reauthentication(&self, now: Instant) -> bool {
        match (self.authenticated_at, self.session_lifetime) {
            (Some(at), Some(life)) => now >= at + life.mul_f64(0.9),
            _ => false,
        }
    }

    /// Runs the SASL exchange again on this open connection (KIP-368 re-authentication),
    /// renewing the session lifetime. A no-op without SASL or when the broker granted an
    /// unlimited session: such a broker (`connections.max.reauth.ms=0`) answers a second
    /// SaslHandshake with ILLEGAL_SASL_STATE.
    pub fn reauthenticate(&mut self, deadline: Instant) -> Result<(), ClientError> {
        let Some(factory) = self.sasl.clone() else {
            return Ok(());
        };
        if self.session_lifetime.is_none() {
            return Ok(());
        }
        self.authenticate(&factory, deadline)
    }

    /// Sends `req` at `version` and waits for its response until `deadline`.
    ///
    /// A transport error, a response with the wrong correlation id or an undecodable response
    /// breaks the connection. Broker error codes inside the response are *not* checked here.
    pub fn send_request<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<R::Response, ClientError> {
        let frame = self.round_trip(req, version, deadline)?;
        let body = decode_response_frame::<R>(&frame, version).map(|(_, body)| body);
        self.decoded::<R, _>(version, body)
    }

    /// [`send_request`](Self::send_request) decoding the answer into `response`, reusing its
    /// allocations (see [`DecodeInto`]). On error `response` is valid but unspecified.
    pub fn send_request_into<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        deadline: Instant,
        response: &mut R::Response,
    ) -> Result<(), ClientError>
    where
        R::Response: DecodeInto,
    {
        let frame = self.round_trip(req, version, deadline)?;
        let decoded = decode_response_frame_into::<R>(&frame, version, response).map(|_| ());
        self.decoded::<R, _>(version, decoded)
    }

    /// The outcome of decoding a response: an undecodable one counts as a failed request and
    /// breaks the connection (see `decode_error`).
    pub(super) fn decoded<R: Request, T>(
        &mut self,
        version: i16,
        result: Result<T, crate::protocol::DecodeError>,
    ) -> Result<T, ClientError> {
        result.map_err(|source| {
            if let Some(o) = &self.observer {
                o.request_failed(R::API_KEY);
            }
            self.decode_error::<R>(version, source)
        })
    }

    /// Sends `req` and returns the response frame payload once its correlation id matched.
    fn round_trip<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<Vec<u8>, ClientError> {
        let start = Instant::now();
        let r = self.round_trip_inner(req, version, deadline);
        if let Some(o) = &self.observer {
            match &r {
                // +4: the size prefix, so the counts are bytes on the wire (before TLS).
                Ok(frame) => o.request_completed(
                    R::API_KEY,
                    start.elapsed(),
                    self.buf.len(),
                    frame.len() + 4,
                ),
                Err(_) => o.request_failed(R::API_KEY),
            }
        }
        r
    }

    fn round_trip_inner<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<Vec<u8>, ClientError> {
        let cid = self.write_request(req, version, deadline)?;
        self.read_answer::<R>(cid, version, deadline)
    }

    /// Like [`send_request`](Self::send_request) at the highest common version.
    pub fn send<R: Request>(
        &mut self,
        req: &R,
        deadline: Instant,
    ) -> Result<R::Response, ClientError> {
        let v = self.pick_version::<R>()?;
        self.send_request(req, v, deadline)
    }

    pub(super) fn decode_error<R: Request>(
        &mut self,
        version: i16,
        source: crate::protocol::DecodeError,
    ) -> ClientError {
        // The bytes no longer mean what we think: do not trust the stream any further.
        self.conn.mark_broken();
        ClientError::Decode {
            api: R::NAME,
            version,
            broker: self.addr.clone(),
            source,
        }
    }

    /// ApiVersions, newest version first. A broker that does not know that version answers
    /// UNSUPPORTED_VERSION in a v0 body listing its own ApiVersions range; retry with the
    /// highest version it lists (or v0).
    fn negotiate_versions(&mut self, deadline: Instant) -> Result<(), ClientError> {
        let mut version = ApiVersionsRequest::MAX_VERSION;
        for _ in 0..2 {
            let req = ApiVersionsRequest {
                client_software_name: SOFTWARE_NAME.to_string(),
                client_software_version: SOFTWARE_VERSION.to_string(),
                ..Default::default()
            };
            let frame = self.round_trip(&req, version, deadline)?;
            // A broker that does not know `version` answers with a *v0* body (Kafka's
            // ApiVersionsResponse.parse falls back the same way), so try that on failure.
            let resp: ApiVersionsResponse =
                match decode_api_versions_response_frame(&frame, version) {
                    Ok((_, body, v)) => {
                        // A v0 fallback body is only legitimate as an UNSUPPORTED_VERSION answer.
                        if v != version
                            && BrokerErrorKind::from(body.error_code)
                                != BrokerErrorKind::UnsupportedVersion
                        {
                            return Err(self.protocol_error(format!(
                                "ApiVersions v{version} answered with an undecodable body that \
                             reads as v0 without UNSUPPORTED_VERSION"
                            )));
                        }
                        body
                    }
                    Err(source) => {
                        return Err(self.decode_error::<ApiVersionsRequest>(version, source))
                    }
                };
            let kind = BrokerErrorKind::from(resp.error_code);
            if kind == BrokerErrorKind::UnsupportedVersion && version > 0 {
                let theirs = resp
                    .api_keys
                    .iter()
                    .find(|k| k.api_key == ApiVersionsRequest::API_KEY)
                    .map(|k| k.max_version.min(version - 1))
                    .unwrap_or(0);
                log::debug!(
                    "{}: ApiVersions v{version} unsupported, retrying v{theirs}",
                    self.addr
                );
                version = theirs.max(0);
                continue;
            }
            if kind != BrokerErrorKind::None {
                return Err(ClientError::Broker {
                    api: "ApiVersions",
                    broker: self.addr.clone(),
                    kind,
                    message: None,
                });
            }
            self.versions = ApiVersionTable::from_ranges(
                resp.api_keys
                    .iter()
                    .map(|k| (k.api_key, k.min_version, k.max_version)),
            );
            return Ok(());
        }
        Err(ClientError::Protocol {
            broker: self.addr.clone(),
            reason: "ApiVersions negotiation did not converge".to_string(),
        })
    }

    /// SaslHandshake v1 (names the mechanism), then SaslAuthenticate rounds until the
    /// mechanism says it is done. Records the session lifetime for re-authentication.
    fn authenticate(
        &mut self,
        factory: &SaslFactory,
        deadline: Instant,
    ) -> Result<(), ClientError> {
        let mut mech = match factory() {
            Ok(m) => m,
            Err(source) => {
                self.conn.mark_broken();
                return Err(self.sasl_refused(source));
            }
        };
        let hs_version = self.pick_version::<SaslHandshakeRequest>()?.min(1);
        if hs_version < 1 {
            return Err(self.sasl_error("broker lacks SaslHandshake v1".to_string()));
        }
        let hs: SaslHandshakeResponse = self.send_request(
            &SaslHandshakeRequest {
                mechanism: mech.mechanism_name().to_string(),
            },
            hs_version,
            deadline,
        )?;
        let kind = BrokerErrorKind::from(hs.error_code);
        if kind != BrokerErrorKind::None {
            self.conn.mark_broken();
            return Err(self.sasl_error(format!(
                "handshake for {} refused: {kind}; broker enables {:?}",
                mech.mechanism_name(),
                hs.mechanisms
            )));
        }
        let auth_version = self.pick_version::<SaslAuthenticateRequest>()?;
        let mut out = match mech.start() {
            Ok(b) => b,
            Err(source) => {
                self.conn.mark_broken();
                return Err(self.sasl_refused(source));
            }
        };
        let mut last = false;
        loop {
            let resp: SaslAuthenticateResponse = self.send_request(
                &SaslAuthenticateRequest { auth_bytes: out },
                auth_version,
                deadline,
            )?;
            let kind = BrokerErrorKind::from(resp.error_code);
            if kind != BrokerErrorKind::None {
                // The broker closes the connection after a failed authentication.
                self.conn.mark_broken();
                return Err(self.sasl_error(format!(
                    "{kind}: {}",
                    resp.error_message.as_deref().unwrap_or("")
                )));
            }
            let step = if last {
                AuthStep::Done(None)
            } else {
                match mech.step(&resp.auth_bytes) {
                    Ok(step) => step,
                    Err(source) => {
                        // The client refuses the server: not "rejected by the broker".
                        self.conn.mark_broken();
                        return Err(self.sasl_refused(source));
                    }
                }
            };
            match step {
                AuthStep::Continue(next) => out = next,
                AuthStep::Done(Some(final_bytes)) => {
                    out = final_bytes;
                    last = true;
                }
                AuthStep::Done(None) => {
                    self.authenticated_at = Some(Instant::now());
                    self.session_lifetime = u64::try_from(resp.session_lifetime_ms)
                        .ok()
                        .filter(|&ms| ms > 0)
                        .map(Duration::from_millis);
                    return Ok(());
                }
            }
        }
    }

    fn protocol_error(&mut self, reason: String) -> ClientError {
        self.conn.mark_broken();
        ClientError::Protocol {
            broker: self.addr.clone(),
            reason,
        }
    }

    fn sasl_refused(&self, source: crate::transport::sasl::SaslError) -> ClientError {
        ClientError::SaslRefused {
            broker: self.addr.clone(),
            source,
        }
    }

    fn sasl_error(&self, reason: String) -> ClientError {
        ClientError::Sasl {
            broker: self.addr.clone(),
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::find_coordinator::FindCoordinatorRequest;

    #[test]
    fn pick_takes_the_highest_common_version() {
        let t = ApiVersionTable::from_ranges([(10, 0, 99)]);
        assert_eq!(
            t.pick::<FindCoordinatorRequest>("b").unwrap(),
            FindCoordinatorRequest::MAX_VERSION
        );
        let t = ApiVersionTable::from_ranges([(10, 1, 3)]);
        assert_eq!(t.pick::<FindCoordinatorRequest>("b").unwrap(), 3);
    }

    #[test]
    fn pick_fails_without_overlap_or_listing() {
        let above = FindCoordinatorRequest::MAX_VERSION + 1;
        let t = ApiVersionTable::from_ranges([(10, above, above + 5)]);
        let e = t.pick::<FindCoordinatorRequest>("b").unwrap_err();
        assert!(
            matches!(
                e,
                ClientError::UnsupportedApi {
                    broker_range: Some(_),
                    ..
                }
            ),
            "{e:?}"
        );
        let e = ApiVersionTable::default()
            .pick::<FindCoordinatorRequest>("b")
            .unwrap_err();
        assert!(
            matches!(
                e,
                ClientError::UnsupportedApi {
                    broker_range: None,
                    ..
                }
            ),
            "{e:?}"
        );
    }
}
