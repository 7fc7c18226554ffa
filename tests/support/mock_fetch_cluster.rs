//! An in-process mock Kafka cluster for fetcher tests: `n` loopback listeners (node ids
//! 1..=n), plain std threads, real Kafka frames through the crate's own protocol types.
//!
//! Include it with `#[path = "support/mock_fetch_cluster.rs"] mod mock_fetch_cluster;`.
//!
//! It answers ApiVersions (Metadata, ListOffsets, Fetch, OffsetForLeaderEpoch; a node can be
//! told not to advertise Fetch), Metadata (every node; topic `t`, id [`TOPIC_ID`], with the
//! leaders and epochs the test sets), ListOffsets (offset 0 for every partition) and Fetch
//! and OffsetForLeaderEpoch through closures the test sets. For producers: InitProducerId
//! through a closure (default: producer id 4000 + node, epoch 0) and Produce (every partition
//! acknowledged at base offset 0). FindCoordinator through a closure (default: node 1), for
//! either form (single key or batched). Dropping the mock stops and joins every thread.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use kafka_streams_group::protocol::api::api_versions::{
    ApiVersion, ApiVersionsRequest, ApiVersionsResponse,
};
use kafka_streams_group::protocol::api::fetch::{FetchRequest, FetchResponse};
use kafka_streams_group::protocol::api::find_coordinator::{
    Coordinator, FindCoordinatorRequest, FindCoordinatorResponse,
};
use kafka_streams_group::protocol::api::init_producer_id::{
    InitProducerIdRequest, InitProducerIdResponse,
};
use kafka_streams_group::protocol::api::list_offsets::{
    ListOffsetsPartitionResponse, ListOffsetsRequest, ListOffsetsResponse, ListOffsetsTopicResponse,
};
use kafka_streams_group::protocol::api::metadata::{
    MetadataRequest, MetadataResponse, MetadataResponseBroker, MetadataResponsePartition,
    MetadataResponseTopic,
};
use kafka_streams_group::protocol::api::offset_for_leader_epoch::{
    OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse,
};
use kafka_streams_group::protocol::api::produce::{
    PartitionProduceResponse, ProduceRequest, ProduceResponse, TopicProduceResponse,
};
use kafka_streams_group::protocol::frame::{
    decode_request_frame, encode_response_frame, FrameDecoder,
};
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::{ApiMessage, Request, Uuid};

/// The id of topic `t`.
pub const TOPIC_ID: Uuid = Uuid([9; 16]);

const TICK: Duration = Duration::from_millis(5);

type FetchFn = Box<dyn FnMut(i32, &FetchRequest) -> FetchResponse + Send>;
/// `f(node)` = (error code, coordinator node) of a FindCoordinator answered by `node`.
type FindCoordinatorFn = Box<dyn FnMut(i32) -> (i16, i32) + Send>;
type InitPidFn = Box<dyn FnMut(i32) -> InitProducerIdResponse + Send>;
type EpochFn =
    Box<dyn FnMut(i32, &OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse + Send>;

struct State {
    /// (leader node, leader epoch) of each partition of `t`.
    leaders: Vec<(i32, i32)>,
    /// Nodes that do not advertise Fetch.
    no_fetch: Vec<i32>,
    fetch: FetchFn,
    epochs: EpochFn,
    init_pid: InitPidFn,
    find_coordinator: FindCoordinatorFn,
    /// (node, api key) of every request, in arrival order.
    log: Vec<(i32, i16)>,
    /// How long each node holds its Fetch answers (outside the state lock, so that nodes
    /// answer independently of each other).
    fetch_delay: Vec<(i32, Duration)>,
    /// Nodes Metadata advertises at an address where nothing listens (a dead broker).
    dead: Vec<(i32, SocketAddr)>,
}

struct Inner {
    state: Mutex<State>,
    stop: AtomicBool,
    addrs: Vec<SocketAddr>,
}

/// The mock cluster. See the module docs.
pub struct MockFetchCluster {
    inner: Arc<Inner>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl MockFetchCluster {
    /// `nodes` listeners; topic `t` with `leaders` ((node, epoch) per partition). Fetch
    /// answers empty and OffsetForLeaderEpoch answers nothing until set.
    pub fn start(nodes: usize, leaders: &[(i32, i32)]) -> MockFetchCluster {
        let listeners: Vec<TcpListener> = (0..nodes)
            .map(|_| {
                let l = TcpListener::bind("127.0.0.1:0").expect("bind");
                l.set_nonblocking(true).expect("nonblocking");
                l
            })
            .collect();
        let addrs = listeners
            .iter()
            .map(|l| l.local_addr().expect("addr"))
            .collect();
        let inner = Arc::new(Inner {
            state: Mutex::new(State {
                leaders: leaders.to_vec(),
                no_fetch: Vec::new(),
                fetch: Box::new(|_, _| FetchResponse::default()),
                epochs: Box::new(|_, _| OffsetForLeaderEpochResponse::default()),
                init_pid: Box::new(|node| InitProducerIdResponse {
                    producer_id: 4000 + i64::from(node),
                    ..InitProducerIdResponse::default()
                }),
                find_coordinator: Box::new(|_| (0, 1)),
                log: Vec::new(),
                fetch_delay: Vec::new(),
                dead: Vec::new(),
            }),
            stop: AtomicBool::new(false),
            addrs,
        });
        let threads: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        for (i, l) in listeners.into_iter().enumerate() {
            let (inner, ts) = (inner.clone(), threads.clone());
            let node = i as i32 + 1;
            let t = thread::spawn(move || accept_loop(l, node, inner, ts));
            lock(&threads).push(t);
        }
        MockFetchCluster { inner, threads }
    }

    /// The bootstrap list (every node).
    pub fn bootstrap(&self) -> String {
        let addrs: Vec<String> = self.inner.addrs.iter().map(ToString::to_string).collect();
        addrs.join(",")
    }

    /// Sets the leaders ((node, epoch) per partition) Metadata reports.
    pub fn set_leaders(&self, leaders: &[(i32, i32)]) {
        lock(&self.inner.state).leaders = leaders.to_vec();
    }

    /// `node` stops advertising Fetch in ApiVersions (a Fetch to it cannot be sent).
    pub fn without_fetch(&self, node: i32) {
        lock(&self.inner.state).no_fetch.push(node);
    }

    /// `node` sends each Fetch answer `delay` after the request arrived.
    pub fn delay_fetch(&self, node: i32, delay: Duration) {
        let mut s = lock(&self.inner.state);
        s.fetch_delay.retain(|(n, _)| *n != node);
        s.fetch_delay.push((node, delay));
    }

    /// Metadata also advertises node `node` at an address where nothing listens (connections
    /// to it are refused): a dead broker, e.g. a leader the test then names.
    pub fn add_dead_node(&self, node: i32) {
        let addr = {
            let l = TcpListener::bind("127.0.0.1:0").expect("bind");
            l.local_addr().expect("addr")
        };
        lock(&self.inner.state).dead.push((node, addr));
    }

    /// Answers every Fetch with `f(node, request)`.
    pub fn on_fetch(&self, f: impl FnMut(i32, &FetchRequest) -> FetchResponse + Send + 'static) {
        lock(&self.inner.state).fetch = Box::new(f);
    }

    /// Answers every OffsetForLeaderEpoch with `f(node, request)`.
    pub fn on_epochs(
        &self,
        f: impl FnMut(i32, &OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse
            + Send
            + 'static,
    ) {
        lock(&self.inner.state).epochs = Box::new(f);
    }

    /// Answers every InitProducerId with `f(node)`.
    pub fn on_init_producer_id(
        &self,
        f: impl FnMut(i32) -> InitProducerIdResponse + Send + 'static,
    ) {
        lock(&self.inner.state).init_pid = Box::new(f);
    }

    /// Answers every FindCoordinator at `node` with `f(node)` = (error code, coordinator).
    pub fn on_find_coordinator(&self, f: impl FnMut(i32) -> (i16, i32) + Send + 'static) {
        lock(&self.inner.state).find_coordinator = Box::new(f);
    }

    /// The nodes that got a request of `api_key`, in arrival order.
    pub fn nodes_of(&self, api_key: i16) -> Vec<i32> {
        lock(&self.inner.state)
            .log
            .iter()
            .filter(|(_, k)| *k == api_key)
            .map(|(n, _)| *n)
            .collect()
    }

    /// How many requests of `api_key` arrived (at any node).
    pub fn count(&self, api_key: i16) -> usize {
        lock(&self.inner.state)
            .log
            .iter()
            .filter(|(_, k)| *k == api_key)
            .count()
    }
}

impl Drop for MockFetchCluster {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::SeqCst);
        let threads: Vec<JoinHandle<()>> = lock(&self.threads).drain(..).collect();
        for t in threads {
            let _ = t.join();
        }
    }
}

fn accept_loop(
    l: TcpListener,
    node: i32,
    inner: Arc<Inner>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
) {
    while !inner.stop.load(Ordering::SeqCst) {
        match l.accept() {
            Ok((s, _)) => {
                let i = inner.clone();
                let t = thread::spawn(move || serve(s, node, &i));
                lock(&threads).push(t);
            }
            Err(_) => thread::sleep(TICK),
        }
    }
}

fn serve(mut s: TcpStream, node: i32, inner: &Inner) {
    let _ = s.set_nodelay(true);
    if s.set_nonblocking(false).is_err() || s.set_read_timeout(Some(TICK)).is_err() {
        return;
    }
    let mut decoder = FrameDecoder::new();
    let mut buf = [0u8; 8192];
    while !inner.stop.load(Ordering::SeqCst) {
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => decoder.push(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => return,
        }
        while let Ok(Some(frame)) = decoder.next_frame() {
            let Ok((key, _)) = RequestHeader::peek_api(&frame) else {
                return;
            };
            lock(&inner.state).log.push((node, key));
            let answer = match key {
                k if k == ApiVersionsRequest::API_KEY => api_versions(&frame, node, inner),
                k if k == MetadataRequest::API_KEY => metadata(&frame, inner),
                k if k == ListOffsetsRequest::API_KEY => list_offsets(&frame),
                k if k == FetchRequest::API_KEY => {
                    let delay = lock(&inner.state)
                        .fetch_delay
                        .iter()
                        .find(|(n, _)| *n == node)
                        .map(|(_, d)| *d);
                    let a = answer::<FetchRequest>(&frame, |r| (lock(&inner.state).fetch)(node, r));
                    if let Some(d) = delay {
                        thread::sleep(d);
                    }
                    a
                }
                k if k == OffsetForLeaderEpochRequest::API_KEY => {
                    answer::<OffsetForLeaderEpochRequest>(&frame, |r| {
                        (lock(&inner.state).epochs)(node, r)
                    })
                }
                k if k == InitProducerIdRequest::API_KEY => {
                    answer::<InitProducerIdRequest>(&frame, |_| (lock(&inner.state).init_pid)(node))
                }
                k if k == ProduceRequest::API_KEY => produce(&frame),
                k if k == FindCoordinatorRequest::API_KEY => find_coordinator(&frame, node, inner),
                _ => None,
            };
            match answer {
                Some(bytes) if s.write_all(&bytes).is_ok() => {}
                _ => return,
            }
        }
    }
}

/// Decodes `frame` as `R`, answers with `f`, encodes at the request's version.
fn answer<R: Request>(frame: &[u8], f: impl FnOnce(&R) -> R::Response) -> Option<Vec<u8>> {
    let (h, req) = decode_request_frame::<R>(frame).ok()?;
    let body = f(&req);
    let mut out = Vec::new();
    encode_response_frame::<R>(&mut out, h.correlation_id, &body, h.api_version).ok()?;
    Some(out)
}

fn api_versions(frame: &[u8], node: i32, inner: &Inner) -> Option<Vec<u8>> {
    let no_fetch = lock(&inner.state).no_fetch.contains(&node);
    answer::<ApiVersionsRequest>(frame, |_| {
        let mut keys = vec![
            (
                ApiVersionsRequest::API_KEY,
                0,
                ApiVersionsRequest::MAX_VERSION,
            ),
            (MetadataRequest::API_KEY, 0, MetadataRequest::MAX_VERSION),
            (
                ListOffsetsRequest::API_KEY,
                ListOffsetsRequest::MIN_VERSION,
                ListOffsetsRequest::MAX_VERSION,
            ),
            (
                OffsetForLeaderEpochRequest::API_KEY,
                OffsetForLeaderEpochRequest::MIN_VERSION,
                OffsetForLeaderEpochRequest::MAX_VERSION,
            ),
            (
                InitProducerIdRequest::API_KEY,
                InitProducerIdRequest::MIN_VERSION,
                InitProducerIdRequest::MAX_VERSION,
            ),
            (
                ProduceRequest::API_KEY,
                ProduceRequest::MIN_VERSION,
                ProduceRequest::MAX_VERSION,
            ),
            (
                FindCoordinatorRequest::API_KEY,
                FindCoordinatorRequest::MIN_VERSION,
                FindCoordinatorRequest::MAX_VERSION,
            ),
        ];
        if !no_fetch {
            keys.push((
                FetchRequest::API_KEY,
                FetchRequest::MIN_VERSION,
                FetchRequest::MAX_VERSION,
            ));
        }
        ApiVersionsResponse {
            api_keys: keys
                .into_iter()
                .map(|(api_key, min_version, max_version)| ApiVersion {
                    api_key,
                    min_version,
                    max_version,
                })
                .collect(),
            ..ApiVersionsResponse::default()
        }
    })
}

fn metadata(frame: &[u8], inner: &Inner) -> Option<Vec<u8>> {
    let (leaders, dead) = {
        let s = lock(&inner.state);
        (s.leaders.clone(), s.dead.clone())
    };
    let live = inner
        .addrs
        .iter()
        .enumerate()
        .map(|(i, a)| (i as i32 + 1, *a));
    answer::<MetadataRequest>(frame, |_| MetadataResponse {
        brokers: live
            .chain(dead)
            .map(|(node_id, a)| MetadataResponseBroker {
                node_id,
                host: a.ip().to_string(),
                port: i32::from(a.port()),
                rack: None,
            })
            .collect(),
        controller_id: 1,
        topics: vec![MetadataResponseTopic {
            name: Some("t".into()),
            topic_id: TOPIC_ID,
            partitions: leaders
                .iter()
                .enumerate()
                .map(|(p, (node, epoch))| MetadataResponsePartition {
                    partition_index: p as i32,
                    leader_id: *node,
                    leader_epoch: *epoch,
                    replica_nodes: vec![*node].into(),
                    isr_nodes: vec![*node].into(),
                    ..MetadataResponsePartition::default()
                })
                .collect(),
            ..MetadataResponseTopic::default()
        }],
        ..MetadataResponse::default()
    })
}

fn list_offsets(frame: &[u8]) -> Option<Vec<u8>> {
    answer::<ListOffsetsRequest>(frame, |req| ListOffsetsResponse {
        topics: req
            .topics
            .iter()
            .map(|t| ListOffsetsTopicResponse {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| ListOffsetsPartitionResponse {
                        partition_index: p.partition_index,
                        offset: 0,
                        ..ListOffsetsPartitionResponse::default()
                    })
                    .collect(),
            })
            .collect(),
        ..ListOffsetsResponse::default()
    })
}

/// Acknowledges every partition of a Produce at base offset 0.
fn produce(frame: &[u8]) -> Option<Vec<u8>> {
    answer::<ProduceRequest>(frame, |req| ProduceResponse {
        responses: req
            .topic_data
            .iter()
            .map(|t| TopicProduceResponse {
                name: t.name.clone(),
                topic_id: t.topic_id,
                partition_responses: t
                    .partition_data
                    .iter()
                    .map(|p| PartitionProduceResponse {
                        index: p.index,
                        base_offset: 0,
                        ..PartitionProduceResponse::default()
                    })
                    .collect(),
            })
            .collect(),
        ..ProduceResponse::default()
    })
}

/// FindCoordinator: the closure's (error, coordinator node) for every key asked, the node's
/// address from the mock's listeners.
fn find_coordinator(frame: &[u8], node: i32, inner: &Inner) -> Option<Vec<u8>> {
    let (code, coordinator) = (lock(&inner.state).find_coordinator)(node);
    let addr = inner
        .addrs
        .get((coordinator - 1).max(0) as usize)
        .copied()?;
    let (host, port) = (addr.ip().to_string(), i32::from(addr.port()));
    answer::<FindCoordinatorRequest>(frame, |req| {
        if req.coordinator_keys.is_empty() {
            // v0-3: one key, the answer at the top level.
            return FindCoordinatorResponse {
                error_code: code,
                node_id: coordinator,
                host: host.clone(),
                port,
                ..FindCoordinatorResponse::default()
            };
        }
        FindCoordinatorResponse {
            coordinators: req
                .coordinator_keys
                .iter()
                .map(|key| Coordinator {
                    key: key.clone(),
                    node_id: coordinator,
                    host: host.clone(),
                    port,
                    error_code: code,
                    error_message: None,
                })
                .collect(),
            ..FindCoordinatorResponse::default()
        }
    })
}
