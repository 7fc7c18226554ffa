//! Live fault tests: a member of a real Streams group (the harness broker) loses its
//! coordinator connection for 3 heartbeat intervals and must come back by itself.
//!
//! Getting the coordinator traffic through the fault proxy needs care: the broker advertises
//! its own `127.0.0.1:port` in FindCoordinator, so a member bootstrapping through the proxy
//! would open its coordinator connection straight to the broker. Instead of a test hook in the
//! public API, the chain is
//!
//! ```text
//! member ──► FaultProxy ──► Relay ──► broker
//! ```
//!
//! where `Relay` (below) forwards frames unchanged except FindCoordinator responses, whose
//! coordinator address it rewrites to the proxy's. The member's client then finds the
//! coordinator at the bootstrap address and reuses that connection, so every byte it sends
//! crosses the proxy.

#[path = "support/fault_proxy.rs"]
mod fault_proxy;

mod common;

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use fault_proxy::{Fault, FaultProxy};
use kafka_streams_group::protocol::api::find_coordinator::FindCoordinatorRequest;
use kafka_streams_group::protocol::frame::{
    decode_response_frame, encode_response_frame, peek_correlation_id, FrameDecoder,
};
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::ApiMessage;
use kafka_streams_group::{
    ClientConfig, StreamsGroupConfig, StreamsGroupSession, StreamsGroupState, StreamsTaskRuntime,
    StreamsTopology, Subtopology,
};

const LIVE: &str = common::LIVE;
/// The harness broker's `group.streams.heartbeat.interval.ms`.
const HBI: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_millis(1000);
const POLL: Duration = Duration::from_millis(20);

/// Live tests in this binary measure the process's thread count: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Forwards Kafka traffic to `upstream`, rewriting the coordinator address in FindCoordinator
/// responses to `advertise`. Std threads; dropping it stops and joins them all.
struct Relay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: Option<JoinHandle<()>>,
}

impl Relay {
    fn start(upstream: SocketAddr, advertise: Arc<Mutex<Option<SocketAddr>>>) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind relay");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let (s, t) = (stop.clone(), threads.clone());
        let accept = thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                let client = match listener.accept() {
                    Ok((c, _)) => c,
                    Err(_) => {
                        thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                };
                let Ok(server) = TcpStream::connect(upstream) else {
                    continue;
                };
                for sock in [&client, &server] {
                    let _ = sock.set_nonblocking(false);
                    let _ = sock.set_read_timeout(Some(POLL));
                    let _ = sock.set_nodelay(true);
                }
                // correlation id → (api key, version) of the requests in flight.
                let inflight: Arc<Mutex<HashMap<i32, (i16, i16)>>> = Arc::default();
                let (c2, s2) = (
                    client.try_clone().expect("clone"),
                    server.try_clone().expect("clone"),
                );
                let (st, inf, adv) = (s.clone(), inflight.clone(), advertise.clone());
                let up = thread::spawn(move || {
                    pump(client, server, &st, |frame, out| {
                        if let Ok((key, version)) = RequestHeader::peek_api(frame) {
                            if let Ok(cid) = peek_request_cid(frame) {
                                inf.lock().unwrap().insert(cid, (key, version));
                            }
                        }
                        out.extend_from_slice(&(frame.len() as u32).to_be_bytes());
                        out.extend_from_slice(frame);
                    })
                });
                let st = s.clone();
                let down = thread::spawn(move || {
                    pump(s2, c2, &st, |frame, out| {
                        let req = peek_correlation_id(frame).ok().and_then(|cid| {
                            inflight.lock().unwrap().remove(&cid).map(|r| (cid, r))
                        });
                        if let (Some((cid, (key, version))), Some(to)) = (req, *adv.lock().unwrap())
                        {
                            if key == FindCoordinatorRequest::API_KEY {
                                let decoded =
                                    decode_response_frame::<FindCoordinatorRequest>(frame, version);
                                if let Ok((_, mut body)) = decoded {
                                    if version < 4 {
                                        // v4+ has only the batched list; setting the old
                                        // fields there would not encode.
                                        body.host = to.ip().to_string();
                                        body.port = i32::from(to.port());
                                    }
                                    for c in &mut body.coordinators {
                                        c.host = to.ip().to_string();
                                        c.port = i32::from(to.port());
                                    }
                                    if encode_response_frame::<FindCoordinatorRequest>(
                                        out, cid, &body, version,
                                    )
                                    .is_ok()
                                    {
                                        return;
                                    }
                                }
                            }
                        }
                        out.extend_from_slice(&(frame.len() as u32).to_be_bytes());
                        out.extend_from_slice(frame);
                    })
                });
                let mut ts = t.lock().unwrap();
                ts.push(up);
                ts.push(down);
            }
        });
        Relay {
            addr,
            stop,
            threads,
            accept: Some(accept),
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(a) = self.accept.take() {
            let _ = a.join();
        }
        for t in std::mem::take(&mut *self.threads.lock().unwrap()) {
            let _ = t.join();
        }
    }
}

/// Request header: api key (2), version (2), then the correlation id.
fn peek_request_cid(frame: &[u8]) -> Result<i32, ()> {
    frame
        .get(4..8)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(())
}

/// Copies frames from `from` to `to`, passing each through `map`; ends on EOF, error or stop.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    stop: &AtomicBool,
    mut map: impl FnMut(&[u8], &mut Vec<u8>),
) {
    let mut decoder = FrameDecoder::new();
    let mut buf = [0u8; 16 * 1024];
    let mut out = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => decoder.push(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => break,
        }
        out.clear();
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => map(&frame, &mut out),
                Ok(None) => break,
                Err(_) => {
                    let _ = from.shutdown(Shutdown::Both);
                    let _ = to.shutdown(Shutdown::Both);
                    return;
                }
            }
        }
        if to.write_all(&out).is_err() {
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Joins a fresh group through proxy → relay → broker, cuts the proxy with `cut` for 3×HBI,
/// restores it and checks the member comes back on its own.
fn outage(label: &str, cut: impl FnOnce(&FaultProxy)) {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    common::init_logging();
    let cluster = common::Cluster::get();
    let broker: SocketAddr = cluster.plaintext_first().parse().expect("broker address");
    let group = common::unique_name("faults");
    let input = format!("{group}-in");
    common::create_topic(&cluster, &input, 2);

    let advertise = Arc::new(Mutex::new(None));
    let relay = Relay::start(broker, advertise.clone());
    let proxy = FaultProxy::start(relay.addr);
    *advertise.lock().unwrap() = Some(proxy.addr());
    let bootstrap = proxy.addr().to_string();

    let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic(&input));
    let config = StreamsGroupConfig::new(&bootstrap, &group, topology.clone())
        .client_config(
            ClientConfig::new(&bootstrap)
                .client_id("live-faults")
                .request_timeout(Duration::from_secs(1))
                .retry_backoff(Duration::from_millis(100), MAX_BACKOFF),
        )
        .join_timeout(Duration::from_secs(30))
        .close_timeout(Duration::from_secs(5));
    let handle = StreamsGroupSession::join(config)
        .expect("join")
        .spawn_heartbeat_thread()
        .expect("spawn");
    let mut runtime = StreamsTaskRuntime::for_topology(&topology);

    // Stable with both tasks.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        handle
            .reconcile_task_runtime(&mut runtime)
            .expect("reconcile");
        if matches!(handle.state(), StreamsGroupState::Stable)
            && handle.assignment().active().count() == 2
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never stable: {:?}",
            handle.state()
        );
        thread::sleep(Duration::from_millis(50));
    }
    // Let connections settle (the bootstrap connection became the coordinator's).
    thread::sleep(HBI * 2);
    let baseline = thread_count();
    let member_id = handle.member_id();
    let epoch = handle.member_epoch();
    let mut sub = handle.subscribe_assignment();
    let _ = sub.try_recv();
    let heartbeats_before = handle.metrics().heartbeats;
    assert!(
        proxy.accepted() >= 1,
        "member traffic goes through the proxy"
    );

    let outage = HBI * 3;
    let t0 = Instant::now();
    cut(&proxy);
    let mut empty_seen = false;
    let mut watch = |sub: &mut kafka_streams_group::AssignmentSubscriber| {
        while let Some(a) = sub.try_recv() {
            empty_seen |= a.tasks.is_empty();
        }
    };
    while t0.elapsed() < outage {
        watch(&mut sub);
        thread::sleep(Duration::from_millis(10));
    }
    let during = handle.metrics().heartbeats - heartbeats_before;
    proxy.set_fault(Fault::PassThrough);
    let t1 = Instant::now();

    // Back: a heartbeat answered after the outage, stable, same identity.
    let heartbeats_at_restore = handle.metrics().heartbeats;
    let bound = outage + HBI * 3 + MAX_BACKOFF;
    let recovered = loop {
        watch(&mut sub);
        if handle.metrics().heartbeats > heartbeats_at_restore
            && matches!(handle.state(), StreamsGroupState::Stable)
        {
            break t0.elapsed();
        }
        assert!(
            t0.elapsed() < bound + Duration::from_secs(5),
            "{label}: not back: {:?}",
            handle.state()
        );
        thread::sleep(Duration::from_millis(10));
    };
    // Keep watching for a few more intervals.
    let until = Instant::now() + HBI * 3;
    while Instant::now() < until {
        watch(&mut sub);
        thread::sleep(Duration::from_millis(20));
    }
    // Threads: proxy and relay threads of the dead connections are gone again.
    let mut threads = thread_count();
    let settle = Instant::now() + Duration::from_secs(3);
    while threads > baseline && Instant::now() < settle {
        thread::sleep(Duration::from_millis(50));
        threads = thread_count();
    }
    println!(
        "{label}: outage {} ms, heartbeats answered during it {during}, stable again {} ms after \
         the cut ({} ms after restore; bound {} ms); member {} epoch {} → {} epoch {}; empty \
         snapshot seen: {empty_seen}; threads {baseline} → {threads}; proxy accepted {}",
        outage.as_millis(),
        recovered.as_millis(),
        recovered.saturating_sub(t1.duration_since(t0)).as_millis(),
        bound.as_millis(),
        member_id,
        epoch,
        handle.member_id(),
        handle.member_epoch(),
        proxy.accepted()
    );
    assert!(recovered <= bound, "{label}: {recovered:?} > {bound:?}");
    assert_eq!(handle.member_id(), member_id, "{label}: same member id");
    assert_eq!(handle.member_epoch(), epoch, "{label}: same epoch");
    assert!(!empty_seen, "{label}: no empty snapshot during the outage");
    assert_eq!(handle.assignment().active().count(), 2);
    assert!(
        threads <= baseline,
        "{label}: threads {baseline} → {threads}"
    );
    handle.close().expect("close");
    drop(proxy);
    drop(relay);
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn coordinator_blackholed_for_three_intervals_member_recovers() {
    let _ = LIVE;
    outage("blackhole", |p| p.set_fault(Fault::Blackhole));
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn coordinator_disconnected_and_refused_for_three_intervals_member_recovers() {
    outage("disconnect+refuse", |p| {
        p.set_fault(Fault::Disconnect);
        thread::sleep(Duration::from_millis(30));
        p.set_fault(Fault::RefuseNew);
    });
}
