//! Several Produce requests in flight (issue 25) against a one-node mock broker that checks
//! sequences as Kafka's `ProducerAppendInfo` does (the last 5 batches of a producer per
//! partition recognised as duplicates, a gap refused with OUT_OF_ORDER_SEQUENCE_NUMBER, any
//! first sequence taken from a producer it has no state of), with scripted faults on
//! Produce: an error answer (not written), a connection closed after the batch was written
//! (answer lost), a connection closed before. Whatever the faults, each partition's log
//! holds every record once, in the order sent, and requests were pipelined.

mod common;

use std::collections::{BTreeMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::protocol::api::api_versions::{
    ApiVersion, ApiVersionsRequest, ApiVersionsResponse,
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
use kafka_streams_group::protocol::frame::{
    decode_request_frame, encode_response_frame, FrameDecoder,
};
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::records::{BatchReader, DecodeLimits};
use kafka_streams_group::protocol::{ApiMessage, BrokerErrorKind, Request};
use kafka_streams_group::ClientConfig;

const PARTITIONS: i32 = 2;

/// What the mock does with one Produce request.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Answer every partition with this error (nothing written).
    Error(BrokerErrorKind),
    /// Write the batches, then close the connection without answering.
    WriteThenDrop,
    /// Close the connection without writing or answering.
    Drop,
}

/// One partition as the broker keeps it.
#[derive(Default)]
struct Partition {
    /// Values written, in log order.
    log: Vec<Vec<u8>>,
    /// (epoch, base sequence, last sequence) of the producer's last 5 batches.
    recent: VecDeque<(i16, i32, i32)>,
}

#[derive(Default)]
struct State {
    partitions: BTreeMap<i32, Partition>,
    /// Faults for the next Produce requests, in order (`None`: answer normally).
    faults: VecDeque<Option<Fault>>,
    /// Produce requests read, and those read while an earlier one was unanswered.
    produces: usize,
    pipelined: usize,
    duplicates: usize,
    out_of_order: usize,
}

struct Mock {
    state: Arc<Mutex<State>>,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

fn lock(s: &Mutex<State>) -> MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

impl Mock {
    fn start() -> Mock {
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().unwrap();
        l.set_nonblocking(true).unwrap();
        let (st, sp) = (state.clone(), stop.clone());
        let thread = thread::spawn(move || {
            let mut conns = Vec::new();
            while !sp.load(Ordering::SeqCst) {
                match l.accept() {
                    Ok((s, _)) => {
                        let (st, sp) = (st.clone(), sp.clone());
                        conns.push(thread::spawn(move || serve(s, addr, &st, &sp)));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(2)),
                }
            }
            for c in conns {
                let _ = c.join();
            }
        });
        Mock {
            state,
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn producer(&self, max_in_flight: usize) -> Producer {
        common::init_logging();
        let config = ProducerConfig::new(
            ClientConfig::new(self.addr.to_string())
                .client_id("inflight-mock")
                .request_timeout(Duration::from_secs(2))
                .retry_backoff(Duration::from_millis(5), Duration::from_millis(50)),
        )
        .batch_size(64)
        .linger(Duration::from_millis(1))
        .max_in_flight(max_in_flight)
        .max_block(Duration::from_secs(10));
        Producer::new(config).expect("producer")
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(mut s: TcpStream, own: SocketAddr, state: &Mutex<State>, stop: &AtomicBool) {
    let _ = s.set_nodelay(true);
    if s.set_read_timeout(Some(Duration::from_millis(2))).is_err() {
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
        let mut frames = VecDeque::new();
        while let Ok(Some(frame)) = decoder.next_frame() {
            frames.push_back(frame);
        }
        while let Some(frame) = frames.pop_front() {
            let Ok((key, _)) = RequestHeader::peek_api(&frame) else {
                return;
            };
            let reply = if key == ProduceRequest::API_KEY {
                // Slow enough that the client writes the next requests meanwhile.
                thread::sleep(Duration::from_millis(3));
                let mut st = lock(state);
                st.produces += 1;
                st.pipelined += usize::from(!frames.is_empty());
                produce(&frame, &mut st)
            } else {
                answer(key, &frame, own)
            };
            match reply {
                Some(bytes) if s.write_all(&bytes).is_ok() => {}
                _ => {
                    let _ = s.shutdown(Shutdown::Both);
                    return;
                }
            }
        }
    }
}

fn frame<R: Request>(cid: i32, body: &R::Response, version: i16) -> Option<Vec<u8>> {
    let mut b = Vec::new();
    encode_response_frame::<R>(&mut b, cid, body, version).ok()?;
    Some(b)
}

fn answer(key: i16, bytes: &[u8], own: SocketAddr) -> Option<Vec<u8>> {
    match key {
        k if k == ApiVersionsRequest::API_KEY => {
            let (h, _) = decode_request_frame::<ApiVersionsRequest>(bytes).ok()?;
            let keys = [
                (ApiVersionsRequest::API_KEY, 0, 3),
                (MetadataRequest::API_KEY, 0, MetadataRequest::MAX_VERSION),
                (ProduceRequest::API_KEY, 3, 11),
                (InitProducerIdRequest::API_KEY, 0, 5),
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
                ..Default::default()
            };
            frame::<ApiVersionsRequest>(h.correlation_id, &body, h.api_version)
        }
        k if k == MetadataRequest::API_KEY => {
            let (h, req) = decode_request_frame::<MetadataRequest>(bytes).ok()?;
            let body = MetadataResponse {
                brokers: vec![MetadataResponseBroker {
                    node_id: 0,
                    host: own.ip().to_string(),
                    port: i32::from(own.port()),
                    rack: None,
                }],
                topics: req
                    .topics
                    .unwrap_or_default()
                    .iter()
                    .map(|t| MetadataResponseTopic {
                        name: t.name.clone(),
                        partitions: (0..PARTITIONS)
                            .map(|p| MetadataResponsePartition {
                                partition_index: p,
                                leader_id: 0,
                                replica_nodes: vec![0].into(),
                                isr_nodes: vec![0].into(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            frame::<MetadataRequest>(h.correlation_id, &body, h.api_version)
        }
        k if k == InitProducerIdRequest::API_KEY => {
            let (h, _) = decode_request_frame::<InitProducerIdRequest>(bytes).ok()?;
            let body = InitProducerIdResponse {
                producer_id: 4242,
                producer_epoch: 0,
                ..Default::default()
            };
            frame::<InitProducerIdRequest>(h.correlation_id, &body, h.api_version)
        }
        _ => None,
    }
}

/// Kafka's sequence check for one batch of `p`: written, duplicate or out of order.
fn append(p: &mut Partition, epoch: i16, first: i32, values: Vec<Vec<u8>>) -> BrokerErrorKind {
    let last = first + values.len() as i32 - 1;
    if p.recent.contains(&(epoch, first, last)) {
        return BrokerErrorKind::DuplicateSequenceNumber;
    }
    let in_sequence = match p.recent.back() {
        None => true, // no state of this producer: any first sequence
        Some(&(e, _, _)) if e != epoch => epoch > e && first == 0,
        Some(&(_, _, prev)) => first == prev + 1,
    };
    if !in_sequence {
        return BrokerErrorKind::OutOfOrderSequenceNumber;
    }
    p.log.extend(values);
    p.recent.push_back((epoch, first, last));
    if p.recent.len() > 5 {
        p.recent.pop_front();
    }
    BrokerErrorKind::None
}

fn produce(bytes: &[u8], st: &mut State) -> Option<Vec<u8>> {
    let (h, req) = decode_request_frame::<ProduceRequest>(bytes).ok()?;
    let fault = st.faults.pop_front().flatten();
    if let Some(Fault::Drop) = fault {
        return None;
    }
    let mut responses = Vec::new();
    for t in &req.topic_data {
        let mut parts = Vec::new();
        for pd in &t.partition_data {
            let raw = pd.records.as_deref().map(BatchReader::new)?.next()?.ok()?;
            let batch = raw.decode(&DecodeLimits::default()).ok()?;
            let values: Vec<Vec<u8>> = batch
                .records()
                .map(|r| r.value.unwrap_or_default().to_vec())
                .collect();
            let code = match fault {
                Some(Fault::Error(k)) => k,
                _ => {
                    let p = st.partitions.entry(pd.index).or_default();
                    let hd = raw.header;
                    append(p, hd.producer_epoch, hd.base_sequence, values)
                }
            };
            st.duplicates += usize::from(code == BrokerErrorKind::DuplicateSequenceNumber);
            st.out_of_order += usize::from(code == BrokerErrorKind::OutOfOrderSequenceNumber);
            parts.push(PartitionProduceResponse {
                index: pd.index,
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
    if let Some(Fault::WriteThenDrop) = fault {
        return None;
    }
    let body = ProduceResponse {
        responses,
        ..Default::default()
    };
    frame::<ProduceRequest>(h.correlation_id, &body, h.api_version)
}

/// Sends `n` records (value = index, explicit partition index % 2) and flushes; returns
/// the values sent per partition, in order.
fn send_all(p: &mut Producer, n: usize) -> BTreeMap<i32, Vec<Vec<u8>>> {
    let mut sent: BTreeMap<i32, Vec<Vec<u8>>> = BTreeMap::new();
    for i in 0..n {
        let value = format!("{i:05}").into_bytes();
        let partition = (i % PARTITIONS as usize) as i32;
        let r = ProducerRecord::new("t", None, Some(&value)).partition(partition);
        p.send(r).expect("send");
        sent.entry(partition).or_default().push(value);
    }
    p.flush(Instant::now() + Duration::from_secs(20))
        .expect("flush");
    sent
}

fn logs(mock: &Mock) -> BTreeMap<i32, Vec<Vec<u8>>> {
    mock.state()
        .partitions
        .iter()
        .map(|(p, q)| (*p, q.log.clone()))
        .collect()
}

/// No fault: the producer keeps several requests in flight and everything lands in order.
#[test]
fn requests_are_pipelined_and_land_in_order() {
    let mock = Mock::start();
    let mut p = mock.producer(5);
    let sent = send_all(&mut p, 600);
    assert_eq!(logs(&mock), sent);
    let st = mock.state();
    eprintln!("{} Produce, {} pipelined", st.produces, st.pipelined);
    assert!(
        st.pipelined > 0,
        "requests were written before earlier answers"
    );
    assert_eq!((st.duplicates, st.out_of_order), (0, 0));
}

/// With `max.in.flight.requests.per.connection` 1, no request is written before the
/// previous one is answered.
#[test]
fn one_in_flight_never_pipelines() {
    let mock = Mock::start();
    let mut p = mock.producer(1);
    let sent = send_all(&mut p, 300);
    assert_eq!(logs(&mock), sent);
    assert_eq!(mock.state().pipelined, 0);
}

/// Faults among pipelined requests: a retriable error on one request (the later ones meet a
/// gap: OUT_OF_ORDER_SEQUENCE_NUMBER, retried behind it), a batch written whose answer is
/// lost with the connection (its resend is a DUPLICATE_SEQUENCE_NUMBER), a connection
/// closed before writing. Every record lands once, in order.
#[test]
fn faults_among_pipelined_requests_lose_and_duplicate_nothing() {
    let mock = Mock::start();
    {
        let mut st = mock.state();
        let mut script = vec![None; 6];
        script.push(Some(Fault::Error(BrokerErrorKind::NotEnoughReplicas)));
        script.extend([None, None, Some(Fault::WriteThenDrop), None, None]);
        script.extend([Some(Fault::Drop), None, None]);
        script.push(Some(Fault::Error(BrokerErrorKind::NotLeaderOrFollower)));
        script.extend([None; 4]);
        script.push(Some(Fault::WriteThenDrop));
        st.faults = script.into();
    }
    let mut p = mock.producer(5);
    let sent = send_all(&mut p, 800);
    let st = mock.state();
    eprintln!(
        "{} Produce, {} pipelined, {} duplicates, {} out of order, faults left {}",
        st.produces,
        st.pipelined,
        st.duplicates,
        st.out_of_order,
        st.faults.len()
    );
    assert!(st.faults.is_empty(), "every fault was met");
    drop(st);
    assert_eq!(logs(&mock), sent, "each record once, in order");
    assert!(mock.state().duplicates > 0, "a written batch was resent");
}

/// The live failure this guards against (Kafka 4.4.0, a new topic): the first Produce meets
/// NOT_LEADER_OR_FOLLOWER; a broker with no state of the producer takes any first sequence,
/// so a second batch already in flight would be written first, and the first one, refused
/// as out of order, rewritten behind it. One batch per partition goes until one is written.
#[test]
fn a_failed_first_request_does_not_let_later_batches_overtake_it() {
    let mock = Mock::start();
    mock.state().faults = [Some(Fault::Error(BrokerErrorKind::NotLeaderOrFollower))].into();
    let mut p = mock.producer(5);
    let sent = send_all(&mut p, 400);
    assert_eq!(logs(&mock), sent, "each record once, in order");
    assert_eq!(mock.state().out_of_order, 0);
}
