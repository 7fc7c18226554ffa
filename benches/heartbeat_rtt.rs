//! Issue 8, item 4: one `heartbeat_now()` round trip through the heartbeat thread against an
//! in-process mock coordinator on loopback, versus a raw blocking TCP ping-pong of the same
//! request and response bytes against the same server loop, and versus the "hop floor": the
//! same ping-pong done by a second thread that the benchmark thread hands each request to
//! over a crossbeam channel and gets the answer back from over another — the least any design
//! with a dedicated I/O thread (as `heartbeat_now` has) can cost on this machine.
//!
//! `cargo bench --bench heartbeat_rtt -- --warm-up-time 1 --measurement-time 3`

// criterion_group!/criterion_main! generate undocumented public functions.
#![allow(missing_docs)]

#[path = "support/mock.rs"]
mod mock;

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use kafka_streams_group::protocol::api::streams_group_heartbeat::StreamsGroupHeartbeatRequest;
use kafka_streams_group::protocol::frame::encode_request_frame;
use kafka_streams_group::{StreamsGroupConfig, StreamsGroupSession, StreamsTopology, Subtopology};

/// The longest interval the member accepts (`MAX_HEARTBEAT_INTERVAL`, 15 s; larger answers are
/// clamped to it): a periodic heartbeat may fire at most once per 15 s of measurement, which
/// adds one extra round trip to one sample out of thousands.
const INTERVAL_MS: i32 = 15_000;

fn bench(c: &mut Criterion) {
    let m = mock::start(INTERVAL_MS);
    let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("in"));
    let handle = StreamsGroupSession::join(
        StreamsGroupConfig::new(m.addr.clone(), "bench-group", topology)
            .join_timeout(Duration::from_secs(10)),
    )
    .expect("join the mock")
    .spawn_heartbeat_thread()
    .expect("spawn");
    handle.heartbeat_now().expect("first heartbeat");

    // The same steady heartbeat the member sends, framed as it frames it.
    let req = StreamsGroupHeartbeatRequest {
        group_id: "bench-group".into(),
        member_id: handle.member_id(),
        member_epoch: handle.member_epoch(),
        endpoint_information_epoch: 0,
        rebalance_timeout_ms: -1,
        ..Default::default()
    };
    let mut frame = Vec::new();
    encode_request_frame(&mut frame, 7, Some("kafka-streams-group"), &req, 1).expect("frame");
    let pp = mock::start_ping_pong(mock::heartbeat_response_body(INTERVAL_MS, 1), true);
    let mut s = TcpStream::connect(&pp).expect("connect ping-pong");
    s.set_nodelay(true).expect("nodelay");
    let mut resp = Vec::new();
    let mut ping = move || {
        s.write_all(&frame).expect("write");
        let mut len = [0u8; 4];
        s.read_exact(&mut len).expect("read");
        resp.resize(i32::from_be_bytes(len) as usize, 0);
        s.read_exact(&mut resp).expect("read");
        resp.len()
    };
    assert!(ping() > 8);

    // Hop floor: the same ping-pong on its own connection, run by an I/O thread; requests go
    // to it and answers come back over two long-lived crossbeam channels.
    let (hop_tx, hop_rx) = crossbeam_channel::bounded::<()>(1);
    let (done_tx, done_rx) = crossbeam_channel::bounded::<usize>(1);
    let mut hop_frame = Vec::new();
    encode_request_frame(&mut hop_frame, 7, Some("kafka-streams-group"), &req, 1).expect("frame");
    let mut hs = TcpStream::connect(&pp).expect("connect ping-pong");
    hs.set_nodelay(true).expect("nodelay");
    let hop_thread = std::thread::Builder::new()
        .name("hop-floor-io".into())
        .spawn(move || {
            let mut resp = Vec::new();
            for () in hop_rx {
                hs.write_all(&hop_frame).expect("write");
                let mut len = [0u8; 4];
                hs.read_exact(&mut len).expect("read");
                resp.resize(i32::from_be_bytes(len) as usize, 0);
                hs.read_exact(&mut resp).expect("read");
                if done_tx.send(resp.len()).is_err() {
                    return;
                }
            }
        })
        .expect("spawn hop-floor thread");
    let hop = || {
        hop_tx.send(()).expect("hand off");
        done_rx.recv().expect("answer")
    };
    assert!(hop() > 8);

    // The same member protocol without the thread hop: the blocking session's `heartbeat()`
    // runs the driver on the calling thread. The gap between this and `heartbeat_now` is the
    // cost of the command channel + waker + reply.
    let mut session = StreamsGroupSession::join(
        StreamsGroupConfig::new(
            m.addr.clone(),
            "bench-group",
            StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("in")),
        )
        .join_timeout(Duration::from_secs(10)),
    )
    .expect("join the mock");
    session.heartbeat().expect("heartbeat");

    let mut g = c.benchmark_group("heartbeat_round_trip");
    g.bench_function("heartbeat_now", |b| {
        b.iter(|| black_box(handle.heartbeat_now().expect("heartbeat").member_epoch))
    });
    g.bench_function("session_heartbeat_same_thread", |b| {
        b.iter(|| black_box(session.heartbeat().expect("heartbeat").member_epoch))
    });
    g.bench_function("raw_tcp_ping_pong", |b| b.iter(|| black_box(ping())));
    // Reference line: the ping-pong behind a thread hop over two crossbeam channels.
    g.bench_function("hop_floor_ping_pong_via_io_thread", |b| {
        b.iter(|| black_box(hop()))
    });
    g.finish();
    drop(hop_tx);
    let _ = hop_thread.join();
    // The mock answers a leave like any heartbeat; the outcome does not matter here.
    let _ = handle.close();
    let _ = session.close();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
