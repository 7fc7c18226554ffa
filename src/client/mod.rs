//! Connections to brokers: correlation ids, ApiVersions negotiation, bootstrap, coordinator lookup.
//!
//! [`Client`] is a small blocking cluster client: it bootstraps from a list of servers, keeps
//! one [`BrokerConnection`] per broker (each with the broker's negotiated API versions), and
//! offers the few cluster calls a Streams group member needs: metadata, coordinator lookup,
//! topic creation, and a generic [`Client::send`] for everything else. Every call takes a
//! deadline. A connection that fails in any way is dropped and reopened on next use.
//!
//! A broker that cannot be connected to is not tried again at once: each node (and each
//! bootstrap address) has a reconnect backoff growing from `reconnect.backoff.ms` to
//! `reconnect.backoff.max.ms` ([`backoff`]), as in Java's `ClusterConnectionStates`. A call
//! that needs a connection to a node in backoff waits for the backoff to end, but never past
//! its deadline; at the deadline it fails with a retriable [`TransportError::Connect`] naming
//! the backoff and the last failure.

pub mod any_node;
pub mod auth;
pub mod backoff;
pub mod connection;
pub mod coordinator;
pub mod error;
mod multi;
pub mod observer;
mod open;
pub mod shared;

use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;

use crate::protocol::api::create_topics::{
    CreatableTopic, CreateTopicsRequest, CreateTopicsResponse,
};
use crate::protocol::api::metadata::{MetadataRequest, MetadataRequestTopic, MetadataResponse};
use crate::protocol::{BrokerErrorKind, Request};
use crate::transport::{ConnectOptions, TransportError, DEFAULT_MAX_FRAME_SIZE};

use backoff::{Peer, Reconnects};

pub use any_node::{NodeCandidate, NodeRotation};
pub use auth::{AuthStep, SaslAuthenticator, SaslFactory};
pub use backoff::{ReconnectBackoff, DEFAULT_RECONNECT_BACKOFF, DEFAULT_RECONNECT_BACKOFF_MAX};
pub use connection::{ApiVersionTable, BrokerConnectOptions, BrokerConnection, PendingRequest};
pub use coordinator::{coordinator_moved, CoordinatorKey, CoordinatorType};
pub use error::ClientError;
pub use observer::ConnectionObserver;
pub use shared::SharedClient;

/// Pause between attempts when the broker says "try again" (coordinator loading, ...).
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// `deadline`, brought forward to the options' interrupt if that is set earlier.
fn cap(opts: &ClientOptions, deadline: Instant) -> Instant {
    opts.interrupt
        .as_ref()
        .map_or(deadline, |i| i.cap(deadline))
}

/// How a [`Client`] reaches the cluster.
#[derive(Clone)]
pub struct ClientOptions {
    /// `host:port` of one or more brokers; tried in order, every resolved address of each.
    pub bootstrap_servers: Vec<String>,
    /// Client id sent in every request header.
    pub client_id: Option<String>,
    /// Time allowed for each TCP connect attempt, and for the TLS handshake.
    pub connect_timeout: Duration,
    /// Largest response frame accepted.
    pub max_frame_size: usize,
    /// TLS client config; the server name is each broker's advertised host. `None` = plaintext.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// The name every broker certificate is verified against instead of the host in the
    /// broker's address (`TlsConfig::server_name`). `None` = the address's host.
    pub tls_server_name: Option<ServerName<'static>>,
    /// SASL mechanism factory; `None` = no SASL.
    pub sasl: Option<SaslFactory>,
    /// Receives connection and request events (metrics); `None` = not observed.
    pub observer: Option<Arc<dyn ConnectionObserver>>,
    /// Lets another thread cut every blocking call of this client short (a heartbeat thread
    /// being closed or dropped); `None` = calls run to their own deadlines.
    pub interrupt: Option<crate::transport::stream::Interrupt>,
    /// Longest one bootstrap attempt (TCP, TLS, ApiVersions, SASL) may take, so that one
    /// silent address cannot use up the whole deadline before the next is tried. `None` =
    /// only the caller's deadline.
    pub attempt_timeout: Option<Duration>,
    /// Delay before connecting again to a broker (or bootstrap address) whose last
    /// connection attempt failed (`reconnect.backoff.ms` / `reconnect.backoff.max.ms`).
    pub reconnect_backoff: ReconnectBackoff,
}

impl ClientOptions {
    /// Plaintext, no SASL, default timeouts, for the given bootstrap servers.
    pub fn new<S: Into<String>>(bootstrap_servers: impl IntoIterator<Item = S>) -> Self {
        ClientOptions {
            bootstrap_servers: bootstrap_servers.into_iter().map(Into::into).collect(),
            client_id: Some("kafka-streams-group".to_string()),
            connect_timeout: Duration::from_secs(10),
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            tls: None,
            tls_server_name: None,
            sasl: None,
            observer: None,
            interrupt: None,
            attempt_timeout: None,
            reconnect_backoff: ReconnectBackoff::default(),
        }
    }
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("bootstrap_servers", &self.bootstrap_servers)
            .field("client_id", &self.client_id)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_frame_size", &self.max_frame_size)
            .field("tls", &self.tls.is_some())
            .field("tls_server_name", &self.tls_server_name)
            .field("sasl", &self.sasl.is_some())
            .field("observer", &self.observer.is_some())
            .field(
                "interrupt",
                &self.interrupt.as_ref().and_then(|i| i.deadline()),
            )
            .field("attempt_timeout", &self.attempt_timeout)
            .field("reconnect_backoff", &self.reconnect_backoff)
            .finish()
    }
}

/// A broker's advertised address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BrokerAddress {
    /// Node id.
    pub node_id: i32,
    /// Advertised host.
    pub host: String,
    /// Advertised port.
    pub port: i32,
}

impl BrokerAddress {
    /// `host:port`, with brackets around an IPv6 literal.
    pub fn addr(&self) -> String {
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Which broker a [`Client::send`] goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BrokerTarget {
    /// Any connected broker (the bootstrap connection if nothing else is open). Retries go
    /// to the same broker: an operation that any broker may answer and that a broker may
    /// refuse for a while (InitProducerId, FindCoordinator) picks its node with
    /// [`Client::any_node`] instead.
    Any,
    /// A node by id; its address must be known from Metadata or FindCoordinator.
    Node(i32),
}

/// A blocking cluster client. See the module docs.
pub struct Client {
    opts: ClientOptions,
    /// The connection made at bootstrap while its node id is unknown. It moves into `nodes`
    /// once a node with the same socket address is asked for (e.g. it is the coordinator).
    bootstrap: Option<BrokerConnection>,
    nodes: HashMap<i32, BrokerConnection>,
    brokers: HashMap<i32, BrokerAddress>,
    /// Per-broker ApiVersions, kept across reconnects for inspection.
    versions: HashMap<i32, ApiVersionTable>,
    /// Connections dropped as broken (`None` = the bootstrap one), so that opening their
    /// replacement is reported as a reconnect.
    dropped: std::collections::HashSet<Option<i32>>,
    /// Coordinators found, per key type and key, until an answer says they moved.
    coordinators: HashMap<CoordinatorKey, BrokerAddress>,
    /// Failed connection attempts per node and bootstrap address, and when each may be
    /// tried again.
    reconnects: Reconnects,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("opts", &self.opts)
            .field(
                "bootstrap",
                &self.bootstrap.as_ref().map(|c| c.addr().to_string()),
            )
            .field("nodes", &self.nodes.keys().collect::<Vec<_>>())
            .field("brokers", &self.brokers)
            .field("coordinators", &self.coordinators)
            .finish()
    }
}

impl Client {
    /// Connects to the first reachable bootstrap server (every address of every server, in
    /// order) and negotiates ApiVersions with it, before `deadline`.
    ///
    /// A refusal (SASL, TLS, a peer that is not Kafka or not TLS) ends the bootstrap at once
    /// and is returned as itself; when only one attempt reached a broker its error is
    /// returned; otherwise [`ClientError::NoBrokerAvailable`] lists every attempt.
    pub fn connect(opts: ClientOptions, deadline: Instant) -> Result<Client, ClientError> {
        let deadline = cap(&opts, deadline);
        let mut client = Client::unconnected(opts);
        client.bootstrap(deadline)?;
        Ok(client)
    }

    /// A client that has not connected yet.
    fn unconnected(opts: ClientOptions) -> Client {
        Client {
            reconnects: Reconnects::new(opts.reconnect_backoff),
            opts,
            bootstrap: None,
            nodes: HashMap::new(),
            brokers: HashMap::new(),
            versions: HashMap::new(),
            dropped: std::collections::HashSet::new(),
            coordinators: HashMap::new(),
        }
    }

    /// The options this client was built with.
    pub fn options(&self) -> &ClientOptions {
        &self.opts
    }

    /// Brokers known from Metadata and FindCoordinator responses.
    pub fn brokers(&self) -> impl Iterator<Item = &BrokerAddress> {
        self.brokers.values()
    }

    /// How many broker connections are open (bootstrap included); for diagnostics and tests.
    pub fn connection_count(&self) -> usize {
        usize::from(self.bootstrap.is_some()) + self.nodes.len()
    }

    /// The ApiVersions of node `node_id`, once a connection to it was made.
    pub fn api_versions(&self, node_id: i32) -> Option<&ApiVersionTable> {
        self.versions.get(&node_id)
    }

    /// The ApiVersions of the broker a [`BrokerTarget::Any`] request would go to.
    pub fn any_api_versions(&mut self, deadline: Instant) -> Result<ApiVersionTable, ClientError> {
        Ok(self
            .connection(BrokerTarget::Any, deadline)?
            .api_versions()
            .clone())
    }

    /// Sends `req` to `target` at the highest version both sides support and returns the
    /// response. Broker error codes inside it are for the caller to check.
    pub fn send<R: Request>(
        &mut self,
        target: BrokerTarget,
        req: &R,
        deadline: Instant,
    ) -> Result<R::Response, ClientError> {
        let conn = self.connection(target, deadline)?;
        let v = conn.pick_version::<R>()?;
        self.send_at(target, req, v, deadline)
    }

    /// Sends `req` to `target` at an explicit `version`.
    pub fn send_at<R: Request>(
        &mut self,
        target: BrokerTarget,
        req: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<R::Response, ClientError> {
        self.exchange(target, deadline, |conn| {
            conn.send_request(req, version, deadline)
        })
    }

    /// [`send_at`](Self::send_at) decoding the answer into `response`, reusing its
    /// allocations (see [`crate::protocol::codec::DecodeInto`]): the heartbeat loop's path.
    /// On error `response` is valid but unspecified.
    pub fn send_at_into<R: Request>(
        &mut self,
        target: BrokerTarget,
        req: &R,
        version: i16,
        deadline: Instant,
        response: &mut R::Response,
    ) -> Result<(), ClientError>
    where
        R::Response: crate::protocol::codec::DecodeInto,
    {
        self.exchange(target, deadline, |conn| {
            conn.send_request_into(req, version, deadline, response)
        })
    }

    /// Writes `req` at `version` to node `node` without waiting for its answer (several
    /// may be in flight on one connection; see [`connection::pipeline`]); collect the answer
    /// with [`finish_on`](Self::finish_on).
    pub fn start_on<R: Request>(
        &mut self,
        node: i32,
        req: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<PendingRequest, ClientError> {
        self.exchange(BrokerTarget::Node(node), deadline, |conn| {
            conn.start_request(req, version, deadline)
        })
    }

    /// The answer of `pending`, written to node `node` by [`start_on`](Self::start_on),
    /// waiting until `deadline`. If that connection was dropped since (it broke, or the node
    /// moved), the request is lost: a retriable [`TransportError::Broken`], and no new
    /// connection is opened.
    pub fn finish_on<R: Request>(
        &mut self,
        node: i32,
        pending: PendingRequest,
        deadline: Instant,
    ) -> Result<R::Response, ClientError> {
        let deadline = cap(&self.opts, deadline);
        let Some(conn) = self
            .nodes
            .get_mut(&node)
            .filter(|c| c.id() == pending.connection_id() && !c.is_broken())
        else {
            return Err(ClientError::Transport(TransportError::Broken {
                peer: format!("node {node}"),
            }));
        };
        let r = conn.finish_request::<R>(pending, deadline);
        if conn.is_broken() {
            self.drop_connection(BrokerTarget::Node(node));
        }
        r
    }

    /// Gives up on `pending` (written to node `node`): its answer is dropped when read.
    pub fn abandon_on(&mut self, node: i32, pending: PendingRequest) {
        if let Some(conn) = self.nodes.get_mut(&node) {
            conn.abandon(pending);
        }
    }

    /// Runs one request/response `exchange` on `target`'s connection: re-authenticates first
    /// when the SASL session is about to expire (KIP-368), and forgets the connection if the
    /// exchange broke it.
    fn exchange<T>(
        &mut self,
        target: BrokerTarget,
        deadline: Instant,
        exchange: impl FnOnce(&mut BrokerConnection) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let conn = self.connection(target, deadline)?;
        let r = if conn.needs_reauthentication(Instant::now()) {
            conn.reauthenticate(deadline).and_then(|()| exchange(conn))
        } else {
            exchange(conn)
        };
        if conn.is_broken() {
            self.drop_connection(target);
        }
        r
    }

    /// Metadata for `topics` (`None` = all topics), from any broker. Updates the broker
    /// address book. Per-topic error codes are left in the response.
    pub fn metadata(
        &mut self,
        topics: Option<&[&str]>,
        deadline: Instant,
    ) -> Result<MetadataResponse, ClientError> {
        let req = MetadataRequest {
            topics: topics.map(|ts| {
                ts.iter()
                    .map(|t| MetadataRequestTopic {
                        name: Some((*t).to_string()),
                        ..Default::default()
                    })
                    .collect()
            }),
            allow_auto_topic_creation: false,
            ..Default::default()
        };
        let resp = self.send(BrokerTarget::Any, &req, deadline)?;
        let kind = BrokerErrorKind::from(resp.error_code);
        if kind != BrokerErrorKind::None {
            return Err(self.broker_error("Metadata", kind, None));
        }
        for b in &resp.brokers {
            self.learn(BrokerAddress {
                node_id: b.node_id,
                host: b.host.clone(),
                port: b.port,
            });
        }
        Ok(resp)
    }

    /// Creates topics (on any broker; KRaft brokers forward to the controller) and returns
    /// the response with its per-topic results. A top-level failure is an error; per-topic
    /// error codes (e.g. TOPIC_ALREADY_EXISTS) are left to the caller.
    pub fn create_topics(
        &mut self,
        req: &CreateTopicsRequest,
        deadline: Instant,
    ) -> Result<CreateTopicsResponse, ClientError> {
        self.send(BrokerTarget::Any, req, deadline)
    }

    /// Creates one topic with `partitions` partitions and `replication_factor` replicas
    /// (`-1` for either = broker default). `Ok(true)` if created, `Ok(false)` if it already
    /// existed; any other per-topic error code is an error carrying the broker's message.
    pub fn create_topic(
        &mut self,
        name: &str,
        partitions: i32,
        replication_factor: i16,
        deadline: Instant,
    ) -> Result<bool, ClientError> {
        let timeout_ms = deadline
            .saturating_duration_since(Instant::now())
            .as_millis()
            .min(i32::MAX as u128) as i32;
        let req = CreateTopicsRequest {
            topics: vec![CreatableTopic {
                name: name.to_string(),
                num_partitions: partitions,
                replication_factor,
                ..Default::default()
            }],
            timeout_ms,
            validate_only: false,
        };
        let resp = self.create_topics(&req, deadline)?;
        let Some(t) = resp.topics.into_iter().find(|t| t.name == name) else {
            return Err(ClientError::Protocol {
                broker: self.any_addr(),
                reason: format!("CreateTopics response lacks topic {name:?}"),
            });
        };
        match BrokerErrorKind::from(t.error_code) {
            BrokerErrorKind::None => Ok(true),
            BrokerErrorKind::TopicAlreadyExists => Ok(false),
            kind => Err(self.broker_error("CreateTopics", kind, t.error_message)),
        }
    }

    /// The open connection for `target`, opening one if needed.
    pub fn connection(
        &mut self,
        target: BrokerTarget,
        deadline: Instant,
    ) -> Result<&mut BrokerConnection, ClientError> {
        let deadline = cap(&self.opts, deadline);
        self.prune_broken();
        match target {
            BrokerTarget::Any => {
                if self.bootstrap.is_none() && self.nodes.is_empty() {
                    self.bootstrap(deadline)?;
                }
                let none = || ClientError::NoBrokerAvailable {
                    attempts: vec!["no connection after bootstrap".to_string()],
                };
                if self.bootstrap.is_some() {
                    return self.bootstrap.as_mut().ok_or_else(none);
                }
                self.nodes.values_mut().next().ok_or_else(none)
            }
            BrokerTarget::Node(id) => {
                if !self.nodes.contains_key(&id) {
                    let mut conn = self.open_node(id, deadline)?;
                    conn.set_interrupt(self.opts.interrupt.clone());
                    self.note_reopened(Some(id));
                    self.versions.insert(id, conn.api_versions().clone());
                    self.nodes.insert(id, conn);
                }
                self.nodes
                    .get_mut(&id)
                    .ok_or_else(|| ClientError::NoBrokerAvailable {
                        attempts: vec![format!("node {id}")],
                    })
            }
        }
    }

    fn open_node(&mut self, id: i32, deadline: Instant) -> Result<BrokerConnection, ClientError> {
        let addr = self
            .brokers
            .get(&id)
            .ok_or_else(|| ClientError::Protocol {
                broker: self.any_addr(),
                reason: format!("address of node {id} unknown (no Metadata/FindCoordinator yet)"),
            })?
            .addr();
        // Reuse the bootstrap connection if it already goes to this broker.
        if let Some(b) = &self.bootstrap {
            let same = addr
                .to_socket_addrs()
                .map(|mut it| it.any(|sa: SocketAddr| sa == b.peer_addr()))
                .unwrap_or(false);
            if same {
                log::debug!("node {id} ({addr}) is the bootstrap connection; reusing it");
                if let Some(c) = self.bootstrap.take() {
                    return Ok(c);
                }
            }
        }
        let peer = Peer::Node(id);
        self.wait_for_backoff(peer, &addr, deadline)?;
        let opts = self.broker_options(&addr, deadline)?;
        let r = BrokerConnection::connect(&addr, &opts, deadline);
        self.note_attempt(peer, &r);
        r
    }

    fn broker_options(
        &self,
        addr: &str,
        deadline: Instant,
    ) -> Result<BrokerConnectOptions, ClientError> {
        let left = deadline.saturating_duration_since(Instant::now());
        let tls = match &self.opts.tls {
            None => None,
            Some(cfg) => {
                let name = match &self.opts.tls_server_name {
                    Some(name) => name.clone(),
                    None => server_name(addr)?,
                };
                Some((Arc::clone(cfg), name))
            }
        };
        Ok(BrokerConnectOptions {
            transport: ConnectOptions {
                connect_timeout: self.opts.connect_timeout.min(left),
                max_frame_size: self.opts.max_frame_size,
                tls,
            },
            client_id: self.opts.client_id.clone(),
            sasl: self.opts.sasl.clone(),
            observer: self.opts.observer.clone(),
        })
    }

    fn learn(&mut self, b: BrokerAddress) {
        if let Some(old) = self.brokers.get(&b.node_id) {
            if old != &b {
                // The node moved: its open connection goes to the old address, and the
                // failures to reach the old address say nothing about the new one.
                self.nodes.remove(&b.node_id);
                self.reconnects.reset(Peer::Node(b.node_id));
            }
        }
        self.brokers.insert(b.node_id, b);
    }

    fn prune_broken(&mut self) {
        if self
            .bootstrap
            .as_ref()
            .is_some_and(BrokerConnection::is_broken)
        {
            self.bootstrap = None;
            self.dropped.insert(None);
        }
        let dropped = &mut self.dropped;
        self.nodes.retain(|id, c| {
            let keep = !c.is_broken();
            if !keep {
                dropped.insert(Some(*id));
            }
            keep
        });
    }

    fn drop_connection(&mut self, target: BrokerTarget) {
        match target {
            BrokerTarget::Node(id) => {
                if self.nodes.remove(&id).is_some() {
                    self.dropped.insert(Some(id));
                }
            }
            BrokerTarget::Any => self.prune_broken(),
        }
    }

    fn note_reopened(&mut self, key: Option<i32>) {
        if self.dropped.remove(&key) {
            if let Some(o) = &self.opts.observer {
                o.reconnected();
            }
        }
    }

    fn any_addr(&self) -> String {
        self.bootstrap
            .as_ref()
            .or_else(|| self.nodes.values().next())
            .map(|c| c.addr().to_string())
            .unwrap_or_else(|| "(no broker)".to_string())
    }

    fn broker_error(
        &self,
        api: &'static str,
        kind: BrokerErrorKind,
        message: Option<String>,
    ) -> ClientError {
        ClientError::Broker {
            api,
            broker: self.any_addr(),
            kind,
            message,
        }
    }
}

/// The TLS server name for `host:port`: the host, without IPv6 brackets.
fn server_name(addr: &str) -> Result<ServerName<'static>, ClientError> {
    let bad = |reason: String| {
        ClientError::Transport(TransportError::Resolve {
            addr: addr.to_string(),
            reason,
        })
    };
    let (host, _) = addr
        .rsplit_once(':')
        .ok_or_else(|| bad("expected host:port".to_string()))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_string())
        .map_err(|e| bad(format!("not a valid TLS server name: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_name_is_the_host_without_brackets() {
        assert_eq!(server_name("localhost:9093").unwrap().to_str(), "localhost");
        assert_eq!(server_name("127.0.0.1:9093").unwrap().to_str(), "127.0.0.1");
        assert_eq!(server_name("[::1]:9093").unwrap().to_str(), "::1");
        assert!(server_name("no-port").is_err());
        assert!(server_name("bad host!:1").is_err());
    }

    #[test]
    fn broker_address_brackets_ipv6() {
        let b = |host: &str| BrokerAddress {
            node_id: 1,
            host: host.to_string(),
            port: 9092,
        };
        assert_eq!(b("localhost").addr(), "localhost:9092");
        assert_eq!(b("::1").addr(), "[::1]:9092");
    }
}
