//! An in-process mock Kafka broker for Streams group tests: a loopback TCP listener served by
//! plain std threads that speaks real Kafka frames through the crate's own protocol types.
//!
//! Include it from a test binary with
//! `#[path = "support/mock_coordinator.rs"] mod mock_coordinator;` (from a directory binary `tests/x/main.rs`: `"../support/mock_coordinator.rs"`).
//!
//! It answers ApiVersions (advertised StreamsGroupHeartbeat range configurable), FindCoordinator
//! (pointing at itself or at any address the test sets, e.g. a second mock or a fault proxy),
//! a minimal Metadata (optionally with every asked topic, see
//! [`MockCoordinator::set_metadata_partitions`], and resetting connections on request), a
//! Produce and InitProducerId it never answers (a stalled broker, see [`MockCoordinator::set_silent_produce`]),
//! and StreamsGroupHeartbeat through a **script**: queued [`Reply`]s are used
//! first, then the fallback responder closure. Every heartbeat request is recorded decoded,
//! with its receive time and connection number; a request that arrives on a connection while an
//! earlier one on it is still unanswered is counted as *pipelined* (the client must never do
//! that). Dropping the mock (or [`MockCoordinator::shutdown`]) stops and joins every thread.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use kafka_streams_group::protocol::api::api_versions::{
    ApiVersion, ApiVersionsRequest, ApiVersionsResponse,
};
use kafka_streams_group::protocol::api::find_coordinator::{
    Coordinator, FindCoordinatorRequest, FindCoordinatorResponse,
};
use kafka_streams_group::protocol::api::init_producer_id::InitProducerIdRequest;
use kafka_streams_group::protocol::api::metadata::{
    MetadataRequest, MetadataResponse, MetadataResponseBroker, MetadataResponsePartition,
    MetadataResponseTopic,
};
use kafka_streams_group::protocol::api::offset_commit::{
    OffsetCommitRequest, OffsetCommitResponse, OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
};
use kafka_streams_group::protocol::api::offset_fetch::OffsetFetchRequest;
use kafka_streams_group::protocol::api::produce::ProduceRequest;
use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, TaskIds,
};
use kafka_streams_group::protocol::frame::{
    decode_request_frame, encode_response_frame, FrameDecoder,
};
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::{ApiMessage, Request};

/// How often blocked mock threads look at their stop flag and due replies.
const TICK: Duration = Duration::from_millis(5);

/// What the mock does with one heartbeat request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Answer with this response (member id filled in from the request when left empty).
    Respond(StreamsGroupHeartbeatResponse),
    /// Answer with only this error code (and no message).
    Error(i16),
    /// Wait this long, then do the inner reply (the connection keeps being read meanwhile).
    Delay(Duration, Box<Reply>),
    /// Close the connection without answering.
    Drop,
    /// Never answer; keep the connection open.
    Never,
    /// Answer with this reply but a correlation id that is off by 1000.
    WrongCorrelation(Box<Reply>),
}

/// One heartbeat request as the mock received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// When its last byte was read.
    pub at: Instant,
    /// Which accepted connection (0-based, in accept order) carried it.
    pub conn: usize,
    /// Request version.
    pub version: i16,
    /// Correlation id.
    pub correlation_id: i32,
    /// The decoded request.
    pub request: StreamsGroupHeartbeatRequest,
    /// True when another request on the same connection was still unanswered.
    pub pipelined: bool,
}

/// What the fallback responder sees.
pub struct Call<'a> {
    /// The request.
    pub request: &'a StreamsGroupHeartbeatRequest,
    /// Index of this heartbeat among all the mock received (0-based).
    pub index: usize,
    /// Request version.
    pub version: i16,
}

type Responder = Box<dyn FnMut(&Call<'_>) -> Reply + Send>;

/// Where FindCoordinator sends the client.
#[derive(Clone, Debug)]
pub struct Target {
    /// Node id.
    pub node_id: i32,
    /// Host.
    pub host: String,
    /// Port.
    pub port: i32,
}

struct Settings {
    /// StreamsGroupHeartbeat (API 88) range advertised in ApiVersions; `None` = not listed.
    heartbeat_versions: Option<(i16, i16)>,
    /// FindCoordinator answer.
    coordinator: Target,
    /// FindCoordinator error code (0 = ok).
    find_coordinator_error: i16,
    /// Metadata topics: `None` lists none; `Some(0)` answers each asked topic with
    /// UNKNOWN_TOPIC_OR_PARTITION, `Some(n)` with `n` partitions led by this mock.
    metadata_partitions: Option<i32>,
    /// Metadata requests still to be answered with a TCP reset instead.
    metadata_resets: usize,
    /// Advertise Produce and InitProducerId and swallow every such request (never answer).
    silent_produce: bool,
    /// `Some`: advertise OffsetCommit and OffsetFetch v9 and answer every partition of a commit with the
    /// next code of the queue (0 once it is empty); `None`: OffsetCommit is not offered.
    offset_commit_errors: Option<VecDeque<i16>>,
}

struct Inner {
    settings: Mutex<Settings>,
    script: Mutex<VecDeque<Reply>>,
    responder: Mutex<Responder>,
    log: Mutex<Vec<Recorded>>,
    log_changed: Condvar,
    find_coordinator_calls: AtomicUsize,
    produce_calls: AtomicUsize,
    offset_commit_calls: AtomicUsize,
    connections: AtomicUsize,
    open_connections: AtomicUsize,
    stop: AtomicBool,
    /// Set to drop every open connection once (connection threads clear it by exiting).
    kill_generation: AtomicUsize,
}

/// The mock broker. See the module docs.
pub struct MockCoordinator {
    addr: SocketAddr,
    node_id: i32,
    inner: Arc<Inner>,
    accept: Option<JoinHandle<()>>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A successful answer: `epoch`, heartbeat interval `hbi_ms`, no task lists (null = unchanged).
pub fn ok(epoch: i32, hbi_ms: i32) -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        member_epoch: epoch,
        heartbeat_interval_ms: hbi_ms,
        ..StreamsGroupHeartbeatResponse::default()
    }
}

/// A successful answer assigning exactly these active tasks (`(subtopology, partitions)`) and
/// empty standby and warm-up lists.
pub fn assign(epoch: i32, hbi_ms: i32, active: &[(&str, &[i32])]) -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        active_tasks: Some(tasks(active)),
        standby_tasks: Some(Vec::new()),
        warmup_tasks: Some(Vec::new()),
        ..ok(epoch, hbi_ms)
    }
}

/// Wire task lists.
pub fn tasks(list: &[(&str, &[i32])]) -> Vec<TaskIds> {
    list.iter()
        .map(|(s, p)| TaskIds {
            subtopology_id: (*s).to_string(),
            partitions: p.to_vec(),
        })
        .collect()
}

/// A responder that behaves like a quiet broker: a join (epoch 0) gets epoch `epoch` and
/// the `active` tasks; every other heartbeat gets the same epoch and null task lists; a leave
/// is answered with the leave epoch.
pub fn steady(
    epoch: i32,
    hbi_ms: i32,
    active: &'static [(&'static str, &'static [i32])],
) -> impl FnMut(&Call<'_>) -> Reply + Send + 'static {
    move |c: &Call<'_>| {
        let e = c.request.member_epoch;
        if e == 0 {
            Reply::Respond(assign(epoch, hbi_ms, active))
        } else {
            // A heartbeat keeps its epoch; a leave is answered with the leave epoch.
            Reply::Respond(ok(e, hbi_ms))
        }
    }
}

impl MockCoordinator {
    /// A mock on a free loopback port, node id 1, advertising heartbeat v0-1, answering every
    /// heartbeat with `steady(1, 200, &[])`.
    pub fn start() -> MockCoordinator {
        Self::start_on("127.0.0.1:0", 1).expect("bind mock coordinator")
    }

    /// A mock with `node_id` listening on `addr` (e.g. a fixed port chosen earlier).
    pub fn start_on(addr: &str, node_id: i32) -> std::io::Result<MockCoordinator> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let inner = Arc::new(Inner {
            settings: Mutex::new(Settings {
                heartbeat_versions: Some((0, 1)),
                coordinator: Target {
                    node_id,
                    host: addr.ip().to_string(),
                    port: i32::from(addr.port()),
                },
                find_coordinator_error: 0,
                metadata_partitions: None,
                metadata_resets: 0,
                silent_produce: false,
                offset_commit_errors: None,
            }),
            script: Mutex::new(VecDeque::new()),
            responder: Mutex::new(Box::new(steady(1, 200, &[]))),
            log: Mutex::new(Vec::new()),
            log_changed: Condvar::new(),
            find_coordinator_calls: AtomicUsize::new(0),
            produce_calls: AtomicUsize::new(0),
            offset_commit_calls: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            open_connections: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            kill_generation: AtomicUsize::new(0),
        });
        let threads: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::new(Mutex::new(Vec::new()));
        let (i, t) = (inner.clone(), threads.clone());
        let accept = thread::Builder::new()
            .name("mock-accept".into())
            .spawn(move || accept_loop(listener, i, t, node_id, addr))?;
        Ok(MockCoordinator {
            addr,
            node_id,
            inner,
            accept: Some(accept),
            threads,
        })
    }

    /// `host:port` to bootstrap from.
    pub fn addr(&self) -> String {
        self.addr.to_string()
    }

    /// The socket address.
    pub fn socket_addr(&self) -> SocketAddr {
        self.addr
    }

    /// This mock's node id.
    pub fn node_id(&self) -> i32 {
        self.node_id
    }

    /// Advertise StreamsGroupHeartbeat `min..=max` (`None`: not at all).
    pub fn set_heartbeat_versions(&self, range: Option<(i16, i16)>) {
        lock(&self.inner.settings).heartbeat_versions = range;
    }

    /// FindCoordinator answers point at `node_id` on `addr` (another mock, a proxy …).
    pub fn set_coordinator(&self, node_id: i32, addr: SocketAddr) {
        lock(&self.inner.settings).coordinator = Target {
            node_id,
            host: addr.ip().to_string(),
            port: i32::from(addr.port()),
        };
    }

    /// FindCoordinator answers with this error code (0 = the coordinator).
    pub fn set_find_coordinator_error(&self, code: i16) {
        lock(&self.inner.settings).find_coordinator_error = code;
    }

    /// How Metadata answers the topics asked for (see `Settings::metadata_partitions`).
    pub fn set_metadata_partitions(&self, partitions: Option<i32>) {
        lock(&self.inner.settings).metadata_partitions = partitions;
    }

    /// The next `n` Metadata requests get their connection reset (RST) instead of an answer.
    pub fn reset_next_metadata(&self, n: usize) {
        lock(&self.inner.settings).metadata_resets = n;
    }

    /// Metadata resets armed by [`Self::reset_next_metadata`] and not yet done.
    pub fn metadata_resets_left(&self) -> usize {
        lock(&self.inner.settings).metadata_resets
    }

    /// Advertises Produce and InitProducerId and never answers them (`true`), as a broker
    /// that stalls.
    pub fn set_silent_produce(&self, on: bool) {
        lock(&self.inner.settings).silent_produce = on;
    }

    /// Replaces the fallback responder.
    pub fn set_responder(&self, f: impl FnMut(&Call<'_>) -> Reply + Send + 'static) {
        *lock(&self.inner.responder) = Box::new(f);
    }

    /// Queues replies used (in order) before the fallback responder.
    pub fn push(&self, replies: impl IntoIterator<Item = Reply>) {
        lock(&self.inner.script).extend(replies);
    }

    /// Heartbeats received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.inner.log).clone()
    }

    /// How many heartbeats were received so far.
    pub fn count(&self) -> usize {
        lock(&self.inner.log).len()
    }

    /// Waits until at least `n` heartbeats were received; returns them, or `None` on timeout.
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Option<Vec<Recorded>> {
        let deadline = Instant::now() + timeout;
        let mut log = lock(&self.inner.log);
        loop {
            if log.len() >= n {
                return Some(log.clone());
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            log = self
                .inner
                .log_changed
                .wait_timeout(log, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Waits until a heartbeat matching `pred` arrives (looking at all received so far too).
    pub fn wait_for_match(
        &self,
        timeout: Duration,
        pred: impl Fn(&Recorded) -> bool,
    ) -> Option<Recorded> {
        let deadline = Instant::now() + timeout;
        let mut log = lock(&self.inner.log);
        loop {
            if let Some(r) = log.iter().find(|r| pred(r)) {
                return Some(r.clone());
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            log = self
                .inner
                .log_changed
                .wait_timeout(log, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Heartbeats received at or after `from` and before `to` (e.g. a rate per second).
    pub fn count_between(&self, from: Instant, to: Instant) -> usize {
        lock(&self.inner.log)
            .iter()
            .filter(|r| r.at >= from && r.at < to)
            .count()
    }

    /// Heartbeats that arrived while another one on the same connection was unanswered.
    pub fn pipelined(&self) -> usize {
        lock(&self.inner.log).iter().filter(|r| r.pipelined).count()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.inner.connections.load(Ordering::SeqCst)
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.inner.open_connections.load(Ordering::SeqCst)
    }

    /// FindCoordinator requests answered so far.
    pub fn find_coordinator_calls(&self) -> usize {
        self.inner.find_coordinator_calls.load(Ordering::SeqCst)
    }

    /// Offers OffsetCommit and OffsetFetch v9 and answers the next commits with `errors`, one code per
    /// commit for all its partitions, then with 0.
    pub fn answer_offset_commits(&self, errors: impl IntoIterator<Item = i16>) {
        lock(&self.inner.settings).offset_commit_errors = Some(errors.into_iter().collect());
    }

    /// OffsetCommit requests received.
    pub fn offset_commit_calls(&self) -> usize {
        self.inner.offset_commit_calls.load(Ordering::SeqCst)
    }

    /// Produce requests received (each swallowed, see [`Self::set_silent_produce`]).
    pub fn produce_calls(&self) -> usize {
        self.inner.produce_calls.load(Ordering::SeqCst)
    }

    /// Closes every open connection (new ones are accepted as usual).
    pub fn drop_connections(&self) {
        self.inner.kill_generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Stops accepting, closes every connection and joins every thread.
    pub fn shutdown(mut self) {
        self.stop_all();
    }

    fn stop_all(&mut self) {
        self.inner.stop.store(true, Ordering::SeqCst);
        if let Some(a) = self.accept.take() {
            let _ = a.join();
        }
        let threads = std::mem::take(&mut *lock(&self.threads));
        for t in threads {
            let _ = t.join();
        }
    }
}

impl Drop for MockCoordinator {
    fn drop(&mut self) {
        self.stop_all();
    }
}

fn accept_loop(
    listener: TcpListener,
    inner: Arc<Inner>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    node_id: i32,
    own: SocketAddr,
) {
    while !inner.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let conn = inner.connections.fetch_add(1, Ordering::SeqCst);
                inner.open_connections.fetch_add(1, Ordering::SeqCst);
                let i = inner.clone();
                let t = thread::Builder::new()
                    .name(format!("mock-conn-{conn}"))
                    .spawn(move || {
                        serve(stream, &i, conn, node_id, own);
                        i.open_connections.fetch_sub(1, Ordering::SeqCst);
                    });
                match t {
                    Ok(t) => lock(&threads).push(t),
                    Err(_) => {
                        inner.open_connections.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => thread::sleep(TICK),
            Err(_) => thread::sleep(TICK),
        }
    }
}

/// A reply waiting for its time (a `Delay`), or never (`Never`).
struct Pending {
    due: Option<Instant>,
    correlation_id: i32,
    version: i16,
    reply: Reply,
}

fn serve(mut s: TcpStream, inner: &Inner, conn: usize, node_id: i32, own: SocketAddr) {
    let _ = s.set_nodelay(true);
    if s.set_nonblocking(false).is_err() || s.set_read_timeout(Some(TICK)).is_err() {
        return;
    }
    let generation = inner.kill_generation.load(Ordering::SeqCst);
    let mut decoder = FrameDecoder::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        if inner.stop.load(Ordering::SeqCst)
            || inner.kill_generation.load(Ordering::SeqCst) != generation
        {
            let _ = s.shutdown(Shutdown::Both);
            return;
        }
        // Replies whose delay is over.
        let now = Instant::now();
        let mut i = 0;
        while i < pending.len() {
            if pending[i].due.is_some_and(|d| d <= now) {
                let p = pending.remove(i);
                if !act(&mut s, p.reply, p.correlation_id, p.version, &mut pending) {
                    return;
                }
            } else {
                i += 1;
            }
        }
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => decoder.push(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => return,
        }
        loop {
            let frame = match decoder.next_frame() {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(_) => return,
            };
            let Ok((key, version)) = RequestHeader::peek_api(&frame) else {
                return;
            };
            let ok = match key {
                k if k == ApiVersionsRequest::API_KEY => {
                    api_versions(&mut s, &frame, version, inner)
                }
                k if k == FindCoordinatorRequest::API_KEY => {
                    inner.find_coordinator_calls.fetch_add(1, Ordering::SeqCst);
                    find_coordinator(&mut s, &frame, inner)
                }
                k if k == MetadataRequest::API_KEY => {
                    let (partitions, reset) = {
                        let mut settings = lock(&inner.settings);
                        let reset = settings.metadata_resets > 0;
                        settings.metadata_resets = settings.metadata_resets.saturating_sub(1);
                        (settings.metadata_partitions, reset)
                    };
                    if reset {
                        // SO_LINGER 0: closing sends an RST (the client reads ECONNRESET).
                        let _ = socket2::SockRef::from(&s).set_linger(Some(Duration::ZERO));
                        return;
                    }
                    metadata(&mut s, &frame, node_id, own, partitions)
                }
                k if k == StreamsGroupHeartbeatRequest::API_KEY => {
                    heartbeat(&mut s, &frame, inner, conn, &mut pending)
                }
                k if k == ProduceRequest::API_KEY => {
                    inner.produce_calls.fetch_add(1, Ordering::SeqCst);
                    lock(&inner.settings).silent_produce
                }
                k if k == InitProducerIdRequest::API_KEY => lock(&inner.settings).silent_produce,
                k if k == OffsetCommitRequest::API_KEY => {
                    inner.offset_commit_calls.fetch_add(1, Ordering::SeqCst);
                    offset_commit(&mut s, &frame, inner)
                }
                _ => false,
            };
            if !ok {
                let _ = s.shutdown(Shutdown::Both);
                return;
            }
        }
    }
}

fn send<R: Request>(s: &mut TcpStream, cid: i32, body: &R::Response, version: i16) -> bool {
    let mut b = Vec::new();
    if encode_response_frame::<R>(&mut b, cid, body, version).is_err() {
        return false;
    }
    s.write_all(&b).is_ok()
}

fn api_versions(s: &mut TcpStream, frame: &[u8], version: i16, inner: &Inner) -> bool {
    // An ApiVersions request at a version we cannot decode still gets a v0 answer.
    let cid = match decode_request_frame::<ApiVersionsRequest>(frame) {
        Ok((h, _)) => h.correlation_id,
        Err(_) => return false,
    };
    let mut keys = vec![
        (
            ApiVersionsRequest::API_KEY,
            0,
            ApiVersionsRequest::MAX_VERSION,
        ),
        (
            FindCoordinatorRequest::API_KEY,
            0,
            FindCoordinatorRequest::MAX_VERSION,
        ),
        (MetadataRequest::API_KEY, 0, MetadataRequest::MAX_VERSION),
    ];
    if let Some((min, max)) = lock(&inner.settings).heartbeat_versions {
        keys.push((StreamsGroupHeartbeatRequest::API_KEY, min, max));
    }
    if lock(&inner.settings).offset_commit_errors.is_some() {
        // OffsetFetch is offered too (the member checks both), never answered.
        keys.push((OffsetCommitRequest::API_KEY, 9, 9));
        keys.push((OffsetFetchRequest::API_KEY, 9, 9));
    }
    if lock(&inner.settings).silent_produce {
        keys.push((
            ProduceRequest::API_KEY,
            ProduceRequest::MIN_VERSION,
            ProduceRequest::MAX_VERSION,
        ));
        keys.push((
            InitProducerIdRequest::API_KEY,
            InitProducerIdRequest::MIN_VERSION,
            InitProducerIdRequest::MAX_VERSION,
        ));
    }
    let body = ApiVersionsResponse {
        api_keys: keys
            .into_iter()
            .map(|(api_key, min_version, max_version)| ApiVersion {
                api_key,
                min_version,
                max_version,
            })
            .collect(),
        ..ApiVersionsResponse::default()
    };
    send::<ApiVersionsRequest>(s, cid, &body, version)
}

fn offset_commit(s: &mut TcpStream, frame: &[u8], inner: &Inner) -> bool {
    let Ok((h, req)) = decode_request_frame::<OffsetCommitRequest>(frame) else {
        return false;
    };
    let error_code = lock(&inner.settings)
        .offset_commit_errors
        .as_mut()
        .and_then(VecDeque::pop_front)
        .unwrap_or(0);
    let body = OffsetCommitResponse {
        topics: req
            .topics
            .iter()
            .map(|t| OffsetCommitResponseTopic {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| OffsetCommitResponsePartition {
                        partition_index: p.partition_index,
                        error_code,
                    })
                    .collect(),
                ..OffsetCommitResponseTopic::default()
            })
            .collect(),
        ..OffsetCommitResponse::default()
    };
    send::<OffsetCommitRequest>(s, h.correlation_id, &body, h.api_version)
}

fn find_coordinator(s: &mut TcpStream, frame: &[u8], inner: &Inner) -> bool {
    let Ok((h, req)) = decode_request_frame::<FindCoordinatorRequest>(frame) else {
        return false;
    };
    let (target, error_code) = {
        let st = lock(&inner.settings);
        (st.coordinator.clone(), st.find_coordinator_error)
    };
    let body = if h.api_version >= 4 {
        FindCoordinatorResponse {
            coordinators: req
                .coordinator_keys
                .iter()
                .map(|k| Coordinator {
                    key: k.clone(),
                    node_id: target.node_id,
                    host: target.host.clone(),
                    port: target.port,
                    error_code,
                    error_message: None,
                })
                .collect(),
            ..FindCoordinatorResponse::default()
        }
    } else {
        FindCoordinatorResponse {
            error_code,
            node_id: target.node_id,
            host: target.host.clone(),
            port: target.port,
            ..FindCoordinatorResponse::default()
        }
    };
    send::<FindCoordinatorRequest>(s, h.correlation_id, &body, h.api_version)
}

fn metadata(
    s: &mut TcpStream,
    frame: &[u8],
    node_id: i32,
    own: SocketAddr,
    partitions: Option<i32>,
) -> bool {
    let Ok((h, req)) = decode_request_frame::<MetadataRequest>(frame) else {
        return false;
    };
    let asked = req.topics.unwrap_or_default();
    let topics = match partitions {
        None => Vec::new(),
        Some(n) => asked
            .iter()
            .enumerate()
            .map(|(i, t)| MetadataResponseTopic {
                error_code: if n > 0 { 0 } else { 3 }, // UNKNOWN_TOPIC_OR_PARTITION
                name: t.name.clone(),
                topic_id: kafka_streams_group::protocol::Uuid((0x5eed + i as u128).to_be_bytes()),
                partitions: (0..n)
                    .map(|p| MetadataResponsePartition {
                        partition_index: p,
                        leader_id: node_id,
                        replica_nodes: vec![node_id].into(),
                        isr_nodes: vec![node_id].into(),
                        ..MetadataResponsePartition::default()
                    })
                    .collect(),
                ..MetadataResponseTopic::default()
            })
            .collect(),
    };
    let body = MetadataResponse {
        brokers: vec![MetadataResponseBroker {
            node_id,
            host: own.ip().to_string(),
            port: i32::from(own.port()),
            rack: None,
        }],
        controller_id: node_id,
        topics,
        ..MetadataResponse::default()
    };
    send::<MetadataRequest>(s, h.correlation_id, &body, h.api_version)
}

fn heartbeat(
    s: &mut TcpStream,
    frame: &[u8],
    inner: &Inner,
    conn: usize,
    pending: &mut Vec<Pending>,
) -> bool {
    let at = Instant::now();
    let Ok((h, req)) = decode_request_frame::<StreamsGroupHeartbeatRequest>(frame) else {
        return false;
    };
    // The reply is chosen before the request becomes visible in the log, under the log's
    // lock: a test that waits for request n and then scripts a reply scripts request n + 1.
    let reply = {
        let mut log = lock(&inner.log);
        let index = log.len();
        let scripted = lock(&inner.script).pop_front();
        let reply = match scripted {
            Some(r) => r,
            None => (lock(&inner.responder))(&Call {
                request: &req,
                index,
                version: h.api_version,
            }),
        };
        log.push(Recorded {
            at,
            conn,
            version: h.api_version,
            correlation_id: h.correlation_id,
            request: req.clone(),
            pipelined: !pending.is_empty(),
        });
        inner.log_changed.notify_all();
        reply
    };
    let reply = fill_member_id(reply, &req.member_id);
    act(s, reply, h.correlation_id, h.api_version, pending)
}

fn fill_member_id(reply: Reply, member_id: &str) -> Reply {
    match reply {
        Reply::Respond(mut r) => {
            if r.member_id.is_empty() {
                r.member_id = member_id.to_string();
            }
            Reply::Respond(r)
        }
        Reply::Delay(d, inner) => Reply::Delay(d, Box::new(fill_member_id(*inner, member_id))),
        Reply::WrongCorrelation(inner) => {
            Reply::WrongCorrelation(Box::new(fill_member_id(*inner, member_id)))
        }
        other => other,
    }
}

/// Carries out `reply`; false = close the connection.
fn act(
    s: &mut TcpStream,
    reply: Reply,
    cid: i32,
    version: i16,
    pending: &mut Vec<Pending>,
) -> bool {
    match reply {
        Reply::Respond(r) => send::<StreamsGroupHeartbeatRequest>(s, cid, &r, version),
        Reply::Error(code) => {
            let r = StreamsGroupHeartbeatResponse {
                error_code: code,
                ..StreamsGroupHeartbeatResponse::default()
            };
            send::<StreamsGroupHeartbeatRequest>(s, cid, &r, version)
        }
        Reply::Delay(d, inner) => {
            pending.push(Pending {
                due: Some(Instant::now() + d),
                correlation_id: cid,
                version,
                reply: *inner,
            });
            true
        }
        Reply::Drop => false,
        Reply::Never => {
            pending.push(Pending {
                due: None,
                correlation_id: cid,
                version,
                reply: Reply::Never,
            });
            true
        }
        Reply::WrongCorrelation(inner) => act(s, *inner, cid.wrapping_add(1000), version, pending),
    }
}
