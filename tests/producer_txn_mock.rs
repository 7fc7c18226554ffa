//! The transactional producer against a scripted in-process broker (issue 24): the faults a
//! real broker cannot give on demand, each met as Java's `TransactionManager` meets it.
//!
//! * `PRODUCER_FENCED` at EndTxn and `INVALID_PRODUCER_EPOCH` at Produce: fatal, reported
//!   as fenced; the producer refuses further transactions.
//! * `CONCURRENT_TRANSACTIONS` at InitProducerId and EndTxn: retried until it passes.
//! * `NOT_COORDINATOR` mid-commit: the coordinator moved to the other node; EndTxn is sent
//!   again to the new one after a new FindCoordinator.
//! * `NOT_COORDINATOR` and `CONCURRENT_TRANSACTIONS` at TxnOffsetCommit (the commit of a
//!   Streams thread: offsets with the member id and epoch): retried, after a new lookup of
//!   the group coordinator for the first; the offsets are committed once, with the records.
//! * A request timeout after EndTxn was sent (the coordinator committed, the answer never
//!   came): EndTxn is resent and recognised as a retry; every record is committed once.
//!
//! The mock is two nodes (0 and 1) sharing one transaction coordinator state: producer id,
//! epoch (bumped by InitProducerId and, transaction version 2, by every EndTxn), the
//! batches of the open transaction and what was committed, keyed by (epoch, sequence) so a
//! duplicate shows.

mod common;

use std::collections::{BTreeMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use kafka_streams_group::producer::transaction::{GroupMetadata, TxnState};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::protocol::api::add_partitions_to_txn::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnRequest, AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopicResult,
};
use kafka_streams_group::protocol::api::api_versions::{
    ApiVersion, ApiVersionsRequest, ApiVersionsResponse, FinalizedFeatureKey,
};
use kafka_streams_group::protocol::api::end_txn::{EndTxnRequest, EndTxnResponse};
use kafka_streams_group::protocol::api::find_coordinator::{
    Coordinator, FindCoordinatorRequest, FindCoordinatorResponse,
};
use kafka_streams_group::protocol::api::init_producer_id::{
    InitProducerIdRequest, InitProducerIdResponse,
};
use kafka_streams_group::protocol::api::metadata::{
    MetadataRequest, MetadataResponse, MetadataResponseBroker, MetadataResponsePartition,
    MetadataResponseTopic,
};
use kafka_streams_group::protocol::api::produce::{
    PartitionProduceResponse, ProduceRequest, ProduceResponse, TopicProduceResponse,
};
use kafka_streams_group::protocol::api::txn_offset_commit::{
    TxnOffsetCommitRequest, TxnOffsetCommitResponse, TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
};
use kafka_streams_group::protocol::frame::{
    decode_request_frame, encode_response_frame, FrameDecoder,
};
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::records::BatchReader;
use kafka_streams_group::protocol::{ApiMessage, BrokerErrorKind, Request};
use kafka_streams_group::streams::commit::TopicPartition;
use kafka_streams_group::ClientConfig;

const PID: i64 = 1000;

/// What the mock does with the next request of one API.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Answer with this error code.
    Error(BrokerErrorKind),
    /// Answer NOT_COORDINATOR and move the coordinator to node `to`.
    MoveCoordinator(i32),
    /// Apply the request (an EndTxn commits) but never answer.
    ApplySilently,
}

#[derive(Default)]
struct State {
    epoch: i16,
    /// Transaction version 2: EndTxn bumps the epoch and answers with it.
    v2: bool,
    coordinator: i32,
    /// The group coordinator (FindCoordinator key type 0), which TxnOffsetCommit goes to.
    group_coordinator: i32,
    /// Offsets of the open transaction: (group, topic, partition) -> offset; moved to
    /// `committed_offsets` by a committing EndTxn (counting a second commit of one).
    pending_offsets: BTreeMap<(String, String, i32), i64>,
    committed_offsets: BTreeMap<(String, String, i32), i64>,
    /// (member id, member epoch) of every TxnOffsetCommit.
    offset_members: Vec<(String, i32)>,
    /// Faults per API key, used first.
    faults: BTreeMap<i16, VecDeque<Fault>>,
    /// (node, api key, epoch in the request) of every transactional request.
    log: Vec<(i32, i16, i16)>,
    /// Batches of the open transaction: (epoch, base sequence) -> records.
    open: BTreeMap<(i16, i32), i32>,
    /// Records committed, and batches seen twice in one transaction.
    committed: i32,
    duplicates: i32,
    /// The last EndTxn: (epoch it ended, committed?).
    ended: Option<(i16, bool)>,
    find_coordinator_calls: usize,
}

struct Mock {
    state: Arc<Mutex<State>>,
    addrs: Vec<SocketAddr>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

fn lock(s: &Mutex<State>) -> MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

impl Mock {
    fn start(v2: bool) -> Mock {
        let state = Arc::new(Mutex::new(State {
            v2,
            ..State::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let listeners: Vec<TcpListener> = (0..2)
            .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind"))
            .collect();
        let addrs: Vec<SocketAddr> = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
        let mut threads = Vec::new();
        for (node, l) in listeners.into_iter().enumerate() {
            l.set_nonblocking(true).unwrap();
            let (state, stop, addrs) = (state.clone(), stop.clone(), addrs.clone());
            threads.push(thread::spawn(move || {
                let mut conns = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    match l.accept() {
                        Ok((s, _)) => {
                            let (state, stop, addrs) = (state.clone(), stop.clone(), addrs.clone());
                            conns.push(thread::spawn(move || {
                                serve(s, node as i32, &addrs, &state, &stop)
                            }));
                        }
                        Err(_) => thread::sleep(Duration::from_millis(5)),
                    }
                }
                for c in conns {
                    let _ = c.join();
                }
            }));
        }
        Mock {
            state,
            addrs,
            stop,
            threads,
        }
    }

    fn fault(&self, api: i16, faults: impl IntoIterator<Item = Fault>) {
        lock(&self.state)
            .faults
            .entry(api)
            .or_default()
            .extend(faults);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn producer(&self) -> Producer {
        common::init_logging();
        let config = ProducerConfig::new(
            ClientConfig::new(self.addrs[0].to_string())
                .client_id("txn-mock")
                .request_timeout(Duration::from_millis(500))
                .retry_backoff(Duration::from_millis(10), Duration::from_millis(100)),
        )
        .transactional_id("txn-mock")
        .linger(Duration::from_millis(1))
        .max_block(Duration::from_secs(10));
        Producer::new(config).expect("producer")
    }

    /// EndTxn requests as (node, epoch).
    fn end_txns(&self) -> Vec<(i32, i16)> {
        self.state()
            .log
            .iter()
            .filter(|(_, k, _)| *k == EndTxnRequest::API_KEY)
            .map(|(n, _, e)| (*n, *e))
            .collect()
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn serve(
    mut s: TcpStream,
    node: i32,
    addrs: &[SocketAddr],
    state: &Mutex<State>,
    stop: &AtomicBool,
) {
    let _ = s.set_nodelay(true);
    if s.set_read_timeout(Some(Duration::from_millis(5))).is_err() {
        return;
    }
    let mut decoder = FrameDecoder::new();
    let mut buf = [0u8; 65536];
    while !stop.load(Ordering::SeqCst) {
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
            let reply = answer(key, &frame, node, addrs, state);
            match reply {
                Some(bytes) if s.write_all(&bytes).is_ok() => {}
                Some(_) => return,
                None => {} // silent
            }
        }
    }
    let _ = s.shutdown(Shutdown::Both);
}

fn frame<R: Request>(cid: i32, body: &R::Response, version: i16) -> Option<Vec<u8>> {
    let mut b = Vec::new();
    encode_response_frame::<R>(&mut b, cid, body, version).ok()?;
    Some(b)
}

fn answer(
    key: i16,
    bytes: &[u8],
    node: i32,
    addrs: &[SocketAddr],
    state: &Mutex<State>,
) -> Option<Vec<u8>> {
    match key {
        k if k == ApiVersionsRequest::API_KEY => {
            let (h, _) = decode_request_frame::<ApiVersionsRequest>(bytes).ok()?;
            let v2 = lock(state).v2;
            let keys = [
                (ApiVersionsRequest::API_KEY, 0, 3),
                (
                    FindCoordinatorRequest::API_KEY,
                    0,
                    FindCoordinatorRequest::MAX_VERSION,
                ),
                (MetadataRequest::API_KEY, 0, MetadataRequest::MAX_VERSION),
                (ProduceRequest::API_KEY, 3, 12),
                (InitProducerIdRequest::API_KEY, 0, 5),
                (EndTxnRequest::API_KEY, 0, 5),
                (AddPartitionsToTxnRequest::API_KEY, 0, 3),
                (TxnOffsetCommitRequest::API_KEY, 0, 5),
            ];
            let body = ApiVersionsResponse {
                api_keys: keys
                    .iter()
                    .map(|&(api_key, min_version, max_version)| ApiVersion {
                        api_key,
                        min_version,
                        max_version,
                    })
                    .collect(),
                finalized_features: vec![FinalizedFeatureKey {
                    name: "transaction.version".into(),
                    max_version_level: if v2 { 2 } else { 1 },
                    min_version_level: if v2 { 2 } else { 1 },
                }],
                ..Default::default()
            };
            frame::<ApiVersionsRequest>(h.correlation_id, &body, h.api_version)
        }
        k if k == FindCoordinatorRequest::API_KEY => {
            let (h, req) = decode_request_frame::<FindCoordinatorRequest>(bytes).ok()?;
            let c = {
                let mut st = lock(state);
                st.find_coordinator_calls += 1;
                match req.key_type {
                    0 => st.group_coordinator,
                    _ => st.coordinator,
                }
            };
            let addr = addrs[c as usize];
            let mut body = FindCoordinatorResponse {
                coordinators: req
                    .coordinator_keys
                    .iter()
                    .map(|k| Coordinator {
                        key: k.clone(),
                        node_id: c,
                        host: addr.ip().to_string(),
                        port: i32::from(addr.port()),
                        error_code: 0,
                        error_message: None,
                    })
                    .collect(),
                ..Default::default()
            };
            if h.api_version < 4 {
                body.coordinators.clear();
                body.node_id = c;
                body.host = addr.ip().to_string();
                body.port = i32::from(addr.port());
            }
            frame::<FindCoordinatorRequest>(h.correlation_id, &body, h.api_version)
        }
        k if k == MetadataRequest::API_KEY => {
            let (h, req) = decode_request_frame::<MetadataRequest>(bytes).ok()?;
            let body = MetadataResponse {
                brokers: (0..2)
                    .map(|n| MetadataResponseBroker {
                        node_id: n,
                        host: addrs[n as usize].ip().to_string(),
                        port: i32::from(addrs[n as usize].port()),
                        rack: None,
                    })
                    .collect(),
                topics: req
                    .topics
                    .unwrap_or_default()
                    .iter()
                    .map(|t| MetadataResponseTopic {
                        name: t.name.clone(),
                        partitions: vec![MetadataResponsePartition {
                            partition_index: 0,
                            leader_id: 0,
                            replica_nodes: vec![0].into(),
                            isr_nodes: vec![0].into(),
                            ..Default::default()
                        }],
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            frame::<MetadataRequest>(h.correlation_id, &body, h.api_version)
        }
        k if k == ProduceRequest::API_KEY => produce(bytes, state),
        k if k == InitProducerIdRequest::API_KEY => {
            let (h, req) = decode_request_frame::<InitProducerIdRequest>(bytes).ok()?;
            let mut st = lock(state);
            st.log.push((node, k, req.producer_epoch));
            let body = match next_fault(&mut st, k, node) {
                Some(code) => InitProducerIdResponse {
                    error_code: code.code(),
                    ..Default::default()
                },
                None => {
                    st.epoch += 1; // fences every older producer of the id
                    st.open.clear(); // and aborts its transaction
                    InitProducerIdResponse {
                        producer_id: PID,
                        producer_epoch: st.epoch,
                        ..Default::default()
                    }
                }
            };
            frame::<InitProducerIdRequest>(h.correlation_id, &body, h.api_version)
        }
        k if k == EndTxnRequest::API_KEY => end_txn(bytes, node, state),
        k if k == TxnOffsetCommitRequest::API_KEY => txn_offset_commit(bytes, node, state),
        k if k == AddPartitionsToTxnRequest::API_KEY => {
            let (h, req) = decode_request_frame::<AddPartitionsToTxnRequest>(bytes).ok()?;
            let mut st = lock(state);
            st.log.push((node, k, req.producer_epoch));
            let code = match next_fault(&mut st, k, node) {
                Some(code) => code,
                None if req.producer_epoch < st.epoch => BrokerErrorKind::ProducerFenced,
                None => BrokerErrorKind::None,
            };
            let body = AddPartitionsToTxnResponse {
                throttle_time_ms: 0,
                results: req
                    .topics
                    .iter()
                    .map(|t| AddPartitionsToTxnTopicResult {
                        name: t.name.clone(),
                        results_by_partition: t
                            .partitions
                            .iter()
                            .map(|&p| AddPartitionsToTxnPartitionResult {
                                partition_index: p,
                                partition_error_code: code.code(),
                            })
                            .collect(),
                    })
                    .collect(),
            };
            frame::<AddPartitionsToTxnRequest>(h.correlation_id, &body, h.api_version)
        }
        _ => None,
    }
}

/// The next scripted fault of `api`, as an error code (applying a coordinator move);
/// `None` = answer normally. A request to a node that is not the coordinator is refused.
fn next_fault(st: &mut State, api: i16, node: i32) -> Option<BrokerErrorKind> {
    if node != st.coordinator {
        return Some(BrokerErrorKind::NotCoordinator);
    }
    match st.faults.get_mut(&api).and_then(VecDeque::pop_front) {
        Some(Fault::Error(k)) => Some(k),
        Some(Fault::MoveCoordinator(to)) => {
            st.coordinator = to;
            Some(BrokerErrorKind::NotCoordinator)
        }
        Some(Fault::ApplySilently) => {
            st.faults
                .entry(api)
                .or_default()
                .push_front(Fault::ApplySilently);
            None
        }
        None => None,
    }
}

fn produce(bytes: &[u8], state: &Mutex<State>) -> Option<Vec<u8>> {
    let (h, req) = decode_request_frame::<ProduceRequest>(bytes).ok()?;
    let mut st = lock(state);
    let fault = st
        .faults
        .get_mut(&ProduceRequest::API_KEY)
        .and_then(VecDeque::pop_front);
    let mut responses = Vec::new();
    for t in &req.topic_data {
        let mut parts = Vec::new();
        for p in &t.partition_data {
            let mut code = BrokerErrorKind::None;
            if let Some(Fault::Error(k)) = fault {
                code = k;
            }
            if let Some(Ok(batch)) = p
                .records
                .as_deref()
                .map(BatchReader::new)
                .and_then(|mut r| r.next())
            {
                let hd = batch.header;
                assert!(hd.attributes.transactional, "transactional batches");
                assert!(
                    req.transactional_id.is_some(),
                    "Produce names the transactional id"
                );
                if hd.producer_epoch < st.epoch {
                    code = BrokerErrorKind::InvalidProducerEpoch;
                }
                if code == BrokerErrorKind::None
                    && st
                        .open
                        .insert((hd.producer_epoch, hd.base_sequence), hd.records_count)
                        .is_some()
                {
                    st.duplicates += 1;
                    code = BrokerErrorKind::DuplicateSequenceNumber;
                }
            }
            parts.push(PartitionProduceResponse {
                index: p.index,
                error_code: code.code(),
                base_offset: 0,
                ..Default::default()
            });
        }
        responses.push(TopicProduceResponse {
            name: t.name.clone(),
            partition_responses: parts,
            ..Default::default()
        });
    }
    let body = ProduceResponse {
        responses,
        ..Default::default()
    };
    frame::<ProduceRequest>(h.correlation_id, &body, h.api_version)
}

fn end_txn(bytes: &[u8], node: i32, state: &Mutex<State>) -> Option<Vec<u8>> {
    let (h, req) = decode_request_frame::<EndTxnRequest>(bytes).ok()?;
    let mut st = lock(state);
    st.log
        .push((node, EndTxnRequest::API_KEY, req.producer_epoch));
    let silent = matches!(
        st.faults
            .get(&EndTxnRequest::API_KEY)
            .and_then(|f| f.front()),
        Some(Fault::ApplySilently)
    ) && node == st.coordinator;
    let fault = next_fault(&mut st, EndTxnRequest::API_KEY, node);
    if silent {
        st.faults
            .get_mut(&EndTxnRequest::API_KEY)
            .and_then(VecDeque::pop_front);
    }
    let v2 = st.v2;
    let error = match fault {
        Some(k) => k,
        // A retry of the EndTxn that ended the last transaction (v2: one epoch back).
        None if st.ended == Some((req.producer_epoch, req.committed))
            && st.open.is_empty()
            && (if v2 {
                req.producer_epoch + 1 == st.epoch
            } else {
                req.producer_epoch == st.epoch
            }) =>
        {
            BrokerErrorKind::None
        }
        None if req.producer_epoch < st.epoch => BrokerErrorKind::ProducerFenced,
        None => {
            let records: i32 = std::mem::take(&mut st.open).values().sum();
            let offsets = std::mem::take(&mut st.pending_offsets);
            if req.committed {
                st.committed += records;
                for (k, o) in offsets {
                    if st.committed_offsets.insert(k, o) == Some(o) {
                        st.duplicates += 1;
                    }
                }
            }
            st.ended = Some((req.producer_epoch, req.committed));
            if v2 {
                st.epoch += 1;
            }
            BrokerErrorKind::None
        }
    };
    if silent {
        return None;
    }
    let body = EndTxnResponse {
        error_code: error.code(),
        producer_id: if v2 { PID } else { -1 },
        producer_epoch: if v2 { st.epoch } else { -1 },
        ..Default::default()
    };
    frame::<EndTxnRequest>(h.correlation_id, &body, h.api_version)
}

/// TxnOffsetCommit, answered by the group coordinator only: the offsets join the open
/// transaction (made visible by its committing EndTxn).
fn txn_offset_commit(bytes: &[u8], node: i32, state: &Mutex<State>) -> Option<Vec<u8>> {
    let (h, req) = decode_request_frame::<TxnOffsetCommitRequest>(bytes).ok()?;
    let mut st = lock(state);
    st.log
        .push((node, TxnOffsetCommitRequest::API_KEY, req.producer_epoch));
    let next = match node == st.group_coordinator {
        true => st
            .faults
            .get_mut(&TxnOffsetCommitRequest::API_KEY)
            .and_then(VecDeque::pop_front),
        false => Some(Fault::Error(BrokerErrorKind::NotCoordinator)),
    };
    let fault = match next {
        Some(Fault::Error(k)) => Some(k),
        Some(Fault::MoveCoordinator(to)) => {
            st.group_coordinator = to;
            Some(BrokerErrorKind::NotCoordinator)
        }
        Some(Fault::ApplySilently) | None => None,
    };
    let error = match fault {
        Some(k) => k,
        None if req.producer_epoch < st.epoch => BrokerErrorKind::InvalidProducerEpoch,
        None => {
            st.offset_members
                .push((req.member_id.clone(), req.generation_id_or_member_epoch));
            for t in &req.topics {
                for p in &t.partitions {
                    let key = (req.group_id.clone(), t.name.clone(), p.partition_index);
                    st.pending_offsets.insert(key, p.committed_offset);
                }
            }
            BrokerErrorKind::None
        }
    };
    let body = TxnOffsetCommitResponse {
        topics: req
            .topics
            .iter()
            .map(|t| TxnOffsetCommitResponseTopic {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| TxnOffsetCommitResponsePartition {
                        partition_index: p.partition_index,
                        error_code: error.code(),
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    frame::<TxnOffsetCommitRequest>(h.correlation_id, &body, h.api_version)
}

fn send(p: &mut Producer, n: usize) {
    for i in 0..n {
        let v = format!("v{i}");
        p.send(ProducerRecord::new("out", None, Some(v.as_bytes())))
            .expect("send");
    }
}

/// PRODUCER_FENCED at EndTxn: the commit fails as fenced, the producer is in FatalError
/// and refuses the next transaction; nothing was committed.
#[test]
fn producer_fenced_at_end_txn_is_fatal() {
    let mock = Mock::start(true);
    let mut p = mock.producer();
    p.init_transactions().expect("init");
    p.begin_transaction().unwrap();
    send(&mut p, 5);
    mock.fault(
        EndTxnRequest::API_KEY,
        [Fault::Error(BrokerErrorKind::ProducerFenced)],
    );
    let e = p.commit_transaction().expect_err("fenced");
    eprintln!("{e}");
    assert!(e.is_fenced(), "{e:?}");
    assert!(!e.is_abortable());
    assert_eq!(p.transaction_state(), Some(TxnState::FatalError));
    let again = p
        .begin_transaction()
        .expect_err("a fenced producer is done");
    assert!(again.is_fenced(), "{again:?}");
    assert_eq!(mock.state().committed, 0);
    assert_eq!(mock.end_txns().len(), 1, "not retried");
}

/// INVALID_PRODUCER_EPOCH on a batch (a newer producer took over between InitProducerId
/// and the batch): the commit fails as fenced.
#[test]
fn invalid_producer_epoch_on_a_batch_fences_the_producer() {
    let mock = Mock::start(true);
    let mut p = mock.producer();
    p.init_transactions().expect("init");
    p.begin_transaction().unwrap();
    send(&mut p, 3);
    mock.state().epoch += 1; // another producer's InitProducerId
    let e = p.commit_transaction().expect_err("fenced");
    eprintln!("{e}");
    assert!(e.is_fenced(), "{e:?}");
    assert_eq!(p.transaction_state(), Some(TxnState::FatalError));
    assert!(mock.end_txns().is_empty(), "no EndTxn after a fenced batch");
}

/// CONCURRENT_TRANSACTIONS (the previous transaction of the id is still completing) at
/// InitProducerId and three times at EndTxn: retried, the commit succeeds, once.
#[test]
fn concurrent_transactions_is_retried() {
    let mock = Mock::start(true);
    let concurrent = Fault::Error(BrokerErrorKind::ConcurrentTransactions);
    mock.fault(InitProducerIdRequest::API_KEY, [concurrent; 2]);
    let mut p = mock.producer();
    p.init_transactions()
        .expect("init retries CONCURRENT_TRANSACTIONS");
    p.begin_transaction().unwrap();
    send(&mut p, 7);
    mock.fault(EndTxnRequest::API_KEY, [concurrent; 3]);
    p.commit_transaction()
        .expect("commit retries CONCURRENT_TRANSACTIONS");
    let st = mock.state();
    assert_eq!((st.committed, st.duplicates), (7, 0));
    let inits = st
        .log
        .iter()
        .filter(|(_, k, _)| *k == InitProducerIdRequest::API_KEY)
        .count();
    assert_eq!(inits, 3);
    drop(st);
    assert_eq!(mock.end_txns().len(), 4);
    assert_eq!(p.transaction_state(), Some(TxnState::Ready));
}

/// NOT_COORDINATOR at EndTxn, the coordinator moved to node 1: FindCoordinator again, then
/// EndTxn to node 1, which commits; the next transaction goes to node 1 directly.
#[test]
fn not_coordinator_mid_commit_sends_end_txn_to_the_new_coordinator() {
    let mock = Mock::start(true);
    let mut p = mock.producer();
    p.init_transactions().expect("init");
    p.begin_transaction().unwrap();
    send(&mut p, 4);
    let lookups = mock.state().find_coordinator_calls;
    mock.fault(EndTxnRequest::API_KEY, [Fault::MoveCoordinator(1)]);
    p.commit_transaction()
        .expect("commit on the new coordinator");
    let ends = mock.end_txns();
    assert_eq!(
        ends.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        vec![0, 1],
        "{ends:?}"
    );
    assert!(
        mock.state().find_coordinator_calls > lookups,
        "looked up again"
    );
    assert_eq!(mock.state().committed, 4);
    p.begin_transaction().unwrap();
    send(&mut p, 2);
    p.commit_transaction().expect("second commit");
    assert_eq!(mock.end_txns().last().map(|(n, _)| *n), Some(1));
    assert_eq!(mock.state().committed, 6);
}

/// A Streams thread's commit (records, then the input offsets with the member id and epoch,
/// then EndTxn) whose TxnOffsetCommit meets CONCURRENT_TRANSACTIONS, then NOT_COORDINATOR
/// (the group coordinator moved to node 1): retried, the second time after a new
/// FindCoordinator for the group, at node 1; the transaction coordinator did not move, so
/// EndTxn still goes to node 0. The records and the offsets are committed once, together.
#[test]
fn txn_offset_commit_retries_and_follows_the_group_coordinator() {
    let mock = Mock::start(true);
    let mut p = mock.producer();
    p.init_transactions().expect("init");
    p.begin_transaction().unwrap();
    send(&mut p, 4);
    mock.fault(
        TxnOffsetCommitRequest::API_KEY,
        [
            Fault::Error(BrokerErrorKind::ConcurrentTransactions),
            Fault::MoveCoordinator(1),
        ],
    );
    let lookups = mock.state().find_coordinator_calls;
    let group = GroupMetadata {
        member_id: "m-1".into(),
        member_epoch: 7,
        ..GroupMetadata::new("app")
    };
    let offsets = BTreeMap::from([(TopicPartition::new("in", 0), 4)]);
    p.send_offsets_to_transaction(&offsets, &group)
        .expect("offsets in the transaction");
    p.commit_transaction().expect("commit");
    let st = mock.state();
    let sent: Vec<i32> = st
        .log
        .iter()
        .filter(|(_, k, _)| *k == TxnOffsetCommitRequest::API_KEY)
        .map(|(n, _, _)| *n)
        .collect();
    assert_eq!(sent, [0, 0, 1], "retried, then at the new coordinator");
    assert!(st.find_coordinator_calls > lookups, "looked up again");
    assert_eq!(st.offset_members, [("m-1".to_string(), 7)]);
    let key = ("app".to_string(), "in".to_string(), 0);
    assert_eq!(st.committed_offsets, BTreeMap::from([(key, 4)]));
    assert_eq!((st.committed, st.duplicates), (4, 0));
    drop(st);
    assert_eq!(
        mock.end_txns().iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        [0]
    );
}

/// The coordinator commits but its EndTxn answer never comes (request timeout 500 ms):
/// the producer sends EndTxn again, the coordinator recognises the retry (transaction
/// version 2: the epoch one back) and answers with the bumped epoch; every record was
/// committed exactly once and the next transaction uses the new epoch.
#[test]
fn a_timeout_after_end_txn_was_sent_is_retried_without_loss_or_duplicates() {
    for v2 in [true, false] {
        let mock = Mock::start(v2);
        let mut p = mock.producer();
        p.init_transactions().expect("init");
        let epoch = p.identity().unwrap().producer_epoch;
        p.begin_transaction().unwrap();
        send(&mut p, 10);
        mock.fault(EndTxnRequest::API_KEY, [Fault::ApplySilently]);
        p.commit_transaction().expect("commit after a lost answer");
        let ends = mock.end_txns();
        assert_eq!(ends.len(), 2, "sent twice: {ends:?}");
        assert_eq!(ends[0].1, ends[1].1, "the retry is the same EndTxn");
        {
            let st = mock.state();
            assert_eq!((st.committed, st.duplicates), (10, 0), "v2={v2}");
        }
        let next = p.identity().unwrap().producer_epoch;
        assert_eq!(next, if v2 { epoch + 1 } else { epoch }, "v2={v2}");
        p.begin_transaction().unwrap();
        send(&mut p, 3);
        p.commit_transaction().expect("next transaction");
        let st = mock.state();
        assert_eq!((st.committed, st.duplicates), (13, 0), "v2={v2}");
    }
}

/// A batch that fails for good (INVALID_RECORD) fails the transaction: the commit says
/// abort, the abort ends it, and the producer goes on. Transaction version 1 closes the
/// sequence gap with an epoch bump (InitProducerId with the current id and epoch, KIP-360);
/// version 2 takes the new epoch from the abort's EndTxn.
#[test]
fn an_abortable_batch_error_asks_for_an_abort_and_the_producer_goes_on() {
    for v2 in [false, true] {
        let mock = Mock::start(v2);
        let mut p = mock.producer();
        p.init_transactions().expect("init");
        let epoch = p.identity().unwrap().producer_epoch;
        p.begin_transaction().unwrap();
        mock.fault(
            ProduceRequest::API_KEY,
            [Fault::Error(BrokerErrorKind::InvalidRecord)],
        );
        send(&mut p, 2);
        let e = p.commit_transaction().expect_err("the batch failed");
        eprintln!("v2={v2}: {e}");
        assert!(e.is_abortable() && !e.is_fenced(), "{e:?}");
        assert_eq!(p.transaction_state(), Some(TxnState::AbortableError));
        let refused = p
            .send(ProducerRecord::new("out", None, Some(b"x")))
            .expect_err("nothing more goes into a failed transaction");
        assert!(
            refused.to_string().contains("abort_transaction"),
            "{refused}"
        );
        p.abort_transaction().expect("abort");
        assert_eq!(p.transaction_state(), Some(TxnState::Ready));
        assert_eq!(p.identity().unwrap().producer_epoch, epoch + 1, "v2={v2}");
        let bumps: Vec<i16> = mock
            .state()
            .log
            .iter()
            .filter(|(_, k, _)| *k == InitProducerIdRequest::API_KEY)
            .map(|(_, _, e)| *e)
            .collect();
        if v2 {
            assert_eq!(bumps, vec![-1], "v2: the abort's EndTxn bumped the epoch");
        } else {
            assert_eq!(bumps, vec![-1, epoch], "v1: InitProducerId bumps the epoch");
        }
        p.begin_transaction().unwrap();
        send(&mut p, 3);
        p.commit_transaction()
            .expect("the next transaction commits");
        let st = mock.state();
        assert_eq!((st.committed, st.duplicates), (3, 0), "v2={v2}");
    }
}
