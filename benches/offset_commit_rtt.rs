//! Issue 14: one `commit_offsets` round trip (two partitions) as a live Streams member, versus a
//! raw ping-pong of the same OffsetCommit v9 frame (same member id, epoch and offsets) on one
//! plain TCP connection to the same coordinator: the gap is what the library adds (ownership
//! check, the commit connection's lock, request building, encoding, answer classification; on
//! the handle also nothing else, since commits do not go through the heartbeat thread).
//!
//! Needs a broker: `KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo bench --bench offset_commit_rtt`
//! (without it the bench says so and measures nothing).

// criterion_group!/criterion_main! generate undocumented public functions.
#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use kafka_streams_group::admin::{create_topics, NewTopic};
use kafka_streams_group::client::{Client, ClientOptions};
use kafka_streams_group::protocol::frame::encode_request_frame;
use kafka_streams_group::streams::commit::commit_request;
use kafka_streams_group::{
    ClientConfig, CommitOffset, StreamsGroupConfig, StreamsGroupSession, StreamsTaskRuntime,
    StreamsTopology, Subtopology, TopicPartition,
};

fn bootstrap() -> Option<String> {
    let path = std::env::var_os("KSG_CLUSTER_ENV")?;
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("KSG_BOOTSTRAP_PLAINTEXT="))
        .map(|s| s.trim().to_string())
}

fn bench(c: &mut Criterion) {
    let Some(bootstrap) = bootstrap() else {
        eprintln!("offset_commit_rtt: KSG_CLUSTER_ENV is not set; nothing measured");
        return;
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let group = format!("ksg-bench-commit-{nanos:x}");
    let input = format!("{group}-in");
    create_topics(
        &ClientConfig::new(bootstrap.clone()),
        &[NewTopic::new(&input, 2)],
        Duration::from_secs(30),
    )
    .expect("create topic");
    let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic(&input));
    let handle = StreamsGroupSession::join(
        StreamsGroupConfig::new(bootstrap.clone(), &group, topology)
            .join_timeout(Duration::from_secs(30)),
    )
    .expect("join")
    .spawn_heartbeat_thread()
    .expect("spawn");
    let mut rt = StreamsTaskRuntime::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while rt.owned_assignment().active().count() < 2 {
        let step = handle.begin_reconciliation(&mut rt).expect("plan");
        handle.release_revoked(&mut rt, &step).expect("release");
        handle.acknowledge_assigned(&mut rt, &step).expect("ack");
        assert!(Instant::now() < deadline, "no tasks");
        std::thread::sleep(Duration::from_millis(50));
    }
    let offsets: BTreeMap<_, _> = (0..2)
        .map(|p| (TopicPartition::new(&input, p), CommitOffset::new(100)))
        .collect();
    assert!(handle
        .commit_offsets(&offsets, Duration::from_secs(10))
        .expect("commit")
        .is_committed());

    // The raw ping-pong: the same OffsetCommit v9 frame on one TCP connection to the
    // coordinator, answer read back whole.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut client =
        Client::connect(ClientOptions::new([bootstrap.as_str()]), deadline).expect("connect");
    let coordinator = client
        .find_coordinator(&group, deadline)
        .expect("coordinator");
    let request = commit_request(
        &group,
        &handle.member_id(),
        handle.member_epoch(),
        None,
        &offsets,
    );
    let mut frame = Vec::new();
    encode_request_frame(&mut frame, 7, Some("kafka-streams-group"), &request, 9).expect("frame");
    let mut s = TcpStream::connect(coordinator.addr()).expect("connect coordinator");
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
    // ApiVersions is not needed for a v9 request on a fresh plaintext connection.
    assert!(ping() > 8);

    let mut g = c.benchmark_group("offset_commit_round_trip");
    g.bench_function("handle_commit_offsets", |b| {
        b.iter(|| {
            black_box(
                handle
                    .commit_offsets(&offsets, Duration::from_secs(10))
                    .expect("commit"),
            )
        })
    });
    g.bench_function("raw_offset_commit_ping_pong", |b| {
        b.iter(|| black_box(ping()))
    });
    g.finish();
    let _ = handle.close();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
