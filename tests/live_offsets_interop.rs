//! Live, with the Java Kafka Streams peer (testing/streams-peer, same topology as
//! `common::counts_topology`): offsets move both ways across a handover, and a Rust
//! application that takes 2 s to stop a revoked task releases it before Java receives it.
//!
//!     KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo test --test live_offsets_interop -- --ignored --nocapture

mod common;

use common::peer::{Peer, PeerOptions};

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_streams_group::consumer::{Fetcher, FetcherConfig, OffsetReset};
use kafka_streams_group::streams::commit::TopicPartition as FetchTp;
use kafka_streams_group::{
    describe_streams_group, ClientConfig, CommitOffset, OffsetFetchOutcome, StreamsGroupConfig,
    StreamsGroupSession, StreamsGroupSessionHandle, StreamsTaskId, StreamsTaskRole,
    StreamsTaskRuntime, TopicPartition,
};

/// StreamsGroupDescribe samples: (time, per member: id and current active tasks).
type Samples = Arc<Mutex<Vec<(u128, Vec<(String, BTreeSet<StreamsTaskId>)>)>>>;

const T: Duration = Duration::from_secs(20);

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

fn note(what: &str) {
    eprintln!("{} {what}", now_ms());
}

fn active_of(rt: &StreamsTaskRuntime) -> BTreeSet<StreamsTaskId> {
    rt.owned_assignment().active().cloned().collect()
}

fn reconcile(handle: &StreamsGroupSessionHandle, rt: &mut StreamsTaskRuntime) {
    let step = handle.begin_reconciliation(rt).expect("plan");
    handle.release_revoked(rt, &step).expect("release");
    handle.acknowledge_assigned(rt, &step).expect("acknowledge");
}

fn committed(handle: &StreamsGroupSessionHandle, tp: &TopicPartition) -> Option<(i64, String)> {
    match handle
        .fetch_committed_offsets(&[tp.clone()].into(), T)
        .expect("fetch")
    {
        OffsetFetchOutcome::Fetched(m) => {
            m.get(tp).cloned().flatten().map(|c| (c.offset, c.metadata))
        }
        other => panic!("fetch {tp}: {other:?}"),
    }
}

/// The keys of the records on partition 0 of `topic`, read from the earliest offset with the
/// library's fetcher (assigned: no consumer group) until every key of `want` has been seen.
///
/// This waits on the event (the records being there), not on a time. It replaces one run of
/// Kafka's ConsoleConsumer with `--timeout-ms 5000`, which failed on a loaded machine with no
/// keys at all: that window starts with the tool's first poll and so includes its own cold
/// bootstrap (metadata, ListOffsets, first fetch), which under load can take longer than the
/// window, and the tool then exits empty although the records are on the topic. `within`
/// only decides when to call it a failure (30 s, the bound this test gives Java's commit;
/// the output is normally there within a few hundred ms of the input commit); the keys read
/// by then are returned for the caller's message. Output records keep the order of the
/// input (one partition all the way), so records Java would have made from v0..v2 come
/// before those of v3, v4 and are among the keys returned.
fn keys_until(
    cluster: &common::Cluster,
    topic: &str,
    want: &[&str],
    within: Duration,
) -> Vec<String> {
    let config = FetcherConfig::new(ClientConfig::new(cluster.plaintext()))
        .auto_offset_reset(OffsetReset::Earliest)
        .fetch_max_wait(Duration::from_millis(100));
    let mut fetcher = Fetcher::connect(config, T).expect("fetcher connects");
    fetcher.assign([FetchTp::new(topic.to_string(), 0)]);
    let deadline = Instant::now() + within;
    let mut keys: Vec<String> = Vec::new();
    while !want.iter().all(|w| keys.iter().any(|k| k == w)) && Instant::now() < deadline {
        let parts = fetcher
            .poll(deadline.min(Instant::now() + Duration::from_millis(500)))
            .expect("poll the output");
        for part in parts {
            part.for_each_record(|r| {
                keys.push(String::from_utf8_lossy(r.key.unwrap_or_default()).to_string())
            })
            .expect("decode the output");
        }
    }
    keys
}

/// Polls the Java peer's running active tasks every 50 ms on its own thread, recording when
/// each task first showed up; hands the peer back when stopped.
struct JavaWatch {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<BTreeMap<StreamsTaskId, u128>>>,
    current: Arc<Mutex<BTreeSet<StreamsTaskId>>>,
    thread: std::thread::JoinHandle<Peer>,
}

impl JavaWatch {
    fn start(mut peer: Peer) -> JavaWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let seen: Arc<Mutex<BTreeMap<StreamsTaskId, u128>>> = Default::default();
        let current: Arc<Mutex<BTreeSet<StreamsTaskId>>> = Default::default();
        let thread = {
            let (stop, seen, current) = (stop.clone(), seen.clone(), current.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let tasks = peer.active_tasks();
                    let at = now_ms();
                    for t in &tasks {
                        if !seen.lock().unwrap().contains_key(t) {
                            note(&format!("Java runs {t}"));
                            seen.lock().unwrap().insert(t.clone(), at);
                        }
                    }
                    *current.lock().unwrap() = tasks;
                    std::thread::sleep(Duration::from_millis(50));
                }
                peer
            })
        };
        JavaWatch {
            stop,
            seen,
            current,
            thread,
        }
    }

    fn wait_for(&self, want: &BTreeSet<StreamsTaskId>, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(45);
        while *self.current.lock().unwrap() != *want {
            assert!(
                Instant::now() < deadline,
                "{what}: Java runs {:?}",
                self.current.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stop(self) -> Peer {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("watch thread")
    }
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn offsets_move_both_ways_and_java_waits_for_the_rust_release() {
    common::init_logging();
    let cluster = common::Cluster::get();
    if cluster.kafka_version() < (4, 2, 0) {
        eprintln!("SKIPPED: Streams groups need Kafka 4.2+");
        return;
    }
    let group = common::unique_name("ksg-offsets-java");
    let input = common::unique_name("ksg-offsets-java-in");
    common::create_topic(&cluster, &input, 1);
    // The peer's output topic (the broker does not auto-create topics).
    common::create_topic(&cluster, &format!("{group}-out"), 1);
    let all: BTreeSet<_> = [StreamsTaskId::new("0", 0), StreamsTaskId::new("1", 0)].into();
    let source = TopicPartition::new(&input, 0);
    let config = || {
        StreamsGroupConfig::new(
            cluster.plaintext(),
            &group,
            common::counts_topology(&group, &input),
        )
        .join_timeout(T)
    };

    // 1. Rust alone owns both tasks and commits offset 3 for the input partition.
    let rust = StreamsGroupSession::join(config())
        .expect("rust joins")
        .spawn_heartbeat_thread()
        .expect("spawn");
    let rust_id = rust.member_id();
    let mut rt = StreamsTaskRuntime::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while active_of(&rt) != all {
        reconcile(&rust, &mut rt);
        assert!(Instant::now() < deadline, "rust never owned {all:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let partition_time = 1_700_000_000_000;
    let commit3: BTreeMap<_, _> = [(
        source.clone(),
        CommitOffset::new(3).partition_time(partition_time),
    )]
    .into();
    assert!(rust
        .commit_offsets(&commit3, T)
        .expect("commit")
        .is_committed());
    note("Rust committed input-0 = 3");

    // StreamsGroupDescribe samples: (time, member id, current active tasks).
    let stop = Arc::new(AtomicBool::new(false));
    let samples: Samples = Default::default();
    let sampler = {
        let (stop, samples, bootstrap, group) = (
            stop.clone(),
            samples.clone(),
            cluster.plaintext().to_string(),
            group.clone(),
        );
        std::thread::spawn(move || {
            let client = ClientConfig::new(bootstrap);
            while !stop.load(Ordering::Relaxed) {
                if let Ok(d) = describe_streams_group(&client, &group, Duration::from_secs(5)) {
                    let owners = d
                        .members
                        .iter()
                        .map(|m| (m.member_id.clone(), m.assignment.active.clone()))
                        .collect();
                    samples.lock().unwrap().push((now_ms(), owners));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };

    // 2. Java joins; five records v0..v4 go to the input (offsets 0..4).
    let mut peer = Peer::start(
        &cluster,
        PeerOptions {
            group: &group,
            input: &input,
            app_server: None,
            tags: Vec::new(),
        },
    );
    for i in 0..5 {
        peer.command(&format!("produce {input} k v{i}"));
    }
    let java = JavaWatch::start(peer);

    // 3. The Rust application needs 2 s to stop a revoked task; it commits, then releases.
    let mut confirmed: BTreeMap<StreamsTaskId, u128> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while confirmed.is_empty() {
        let step = rust.begin_reconciliation(&mut rt).expect("plan");
        assert!(
            step.plan().lost.is_empty(),
            "rust lost tasks: {:?}",
            step.plan()
        );
        if !step.plan().revoked.is_empty() {
            for (t, _) in &step.plan().revoked {
                note(&format!("Rust told to revoke {t}; stopping it (2 s)"));
            }
            std::thread::sleep(Duration::from_secs(2));
            if step
                .plan()
                .revoked
                .iter()
                .any(|(t, r)| t.subtopology_id == "0" && *r == StreamsTaskRole::Active)
            {
                assert!(rust
                    .commit_offsets(&commit3, T)
                    .expect("commit")
                    .is_committed());
            }
            let at = now_ms();
            for (t, _) in &step.plan().revoked {
                note(&format!("Rust stopped {t} and committed; releasing"));
                confirmed.insert(t.clone(), at);
            }
        }
        rust.release_revoked(&mut rt, &step).expect("release");
        rust.acknowledge_assigned(&mut rt, &step)
            .expect("acknowledge");
        assert!(Instant::now() < deadline, "no task moved to Java");
        std::thread::sleep(Duration::from_millis(20));
    }
    let moved: BTreeSet<_> = confirmed.keys().cloned().collect();
    java.wait_for(&moved, "Java takes the released task");
    for (t, at) in &confirmed {
        let java_at = java.seen.lock().unwrap()[t];
        note(&format!(
            "{t}: Rust released at {at}, Java runs it from {java_at} (+{} ms)",
            java_at - at
        ));
        assert!(java_at >= *at, "Java ran {t} before Rust released it");
    }

    // 4. Rust leaves; Java takes everything and must resume the input at offset 3.
    rust.close().expect("rust leaves");
    java.wait_for(&all, "Java takes all tasks");
    let deadline = Instant::now() + Duration::from_secs(30);
    let java_committed = loop {
        // Read as an admin: a second member would take tasks away from Java.
        let offsets = admin_committed(&cluster, &group, &input);
        if offsets == Some(5) {
            break 5;
        }
        assert!(
            Instant::now() < deadline,
            "Java did not commit input-0 = 5 (now {offsets:?})"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let java_committed_at = Instant::now();
    // Java's own account of its position: its consumer logs where it started the partition.
    let peer_log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{group}-peer.log"));
    let log = std::fs::read_to_string(&peer_log).expect("peer log");
    let position = log
        .lines()
        .find(|l| l.contains(&format!("partition {input}-0 to the committed offset")))
        .unwrap_or_else(|| panic!("Java never set {input}-0 from a committed offset"));
    note(&format!(
        "Java: {}",
        &position[position.find("Setting").unwrap_or(0)..]
    ));
    assert!(
        position.contains("FetchPosition{offset=3,"),
        "Java did not resume at the Rust commit: {position}"
    );
    // Java's input commit (5) says v3, v4 reached the repartition topic, not yet the output:
    // the counts come out once task 1_0 has processed them, so wait for them to be there.
    let out_keys = keys_until(
        &cluster,
        &format!("{group}-out"),
        &["v3", "v4"],
        Duration::from_secs(30),
    );
    note(&format!(
        "Java's output keys: {out_keys:?} ({} ms after its input commit was seen)",
        java_committed_at.elapsed().as_millis()
    ));
    assert!(
        out_keys.contains(&"v3".to_string()) && out_keys.contains(&"v4".to_string()),
        "Java did not process v3, v4: {out_keys:?}"
    );
    for skipped in ["v0", "v1", "v2"] {
        assert!(
            !out_keys.contains(&skipped.to_string()),
            "Java reprocessed {skipped}: it did not resume at the Rust commit: {out_keys:?}"
        );
    }

    // 5. Java → Rust: a Rust member joins, Java leaves, Rust reads Java's committed offset.
    let rust2 = StreamsGroupSession::join(config())
        .expect("rust2 joins")
        .spawn_heartbeat_thread()
        .expect("spawn");
    let peer = java.stop();
    peer.close();
    let mut rt2 = StreamsTaskRuntime::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while active_of(&rt2) != all {
        reconcile(&rust2, &mut rt2);
        assert!(Instant::now() < deadline, "rust2 never owned {all:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (offset, metadata) = committed(&rust2, &source).expect("Java committed input-0");
    note(&format!(
        "Rust reads Java's commit: {offset} (metadata {metadata:?})"
    ));
    assert_eq!(offset, java_committed);
    assert!(
        metadata.starts_with("Ag"),
        "Java writes TopicPartitionMetadata v2 (base64 of magic 2): {metadata:?}"
    );
    rust2.close().expect("rust2 leaves");

    stop.store(true, Ordering::Relaxed);
    sampler.join().expect("sampler");
    let samples = samples.lock().unwrap().clone();
    assert!(samples.len() >= 10, "{} describe samples", samples.len());
    for (at, owners) in &samples {
        for t in &all {
            let holders: Vec<&String> = owners
                .iter()
                .filter(|(_, tasks)| tasks.contains(t))
                .map(|(m, _)| m)
                .collect();
            assert!(holders.len() <= 1, "{t} held by {holders:?} at {at}");
            if let Some(confirmed_at) = confirmed.get(t) {
                if *at < *confirmed_at && !holders.is_empty() {
                    assert_eq!(
                        holders[0], &rust_id,
                        "describe at {at}: {t} left Rust before the release at {confirmed_at}"
                    );
                }
            }
        }
    }
    eprintln!("{} describe samples agree", samples.len());
}

/// The committed offset of `input`-0 as an admin sees it (no member id).
fn admin_committed(cluster: &common::Cluster, group: &str, input: &str) -> Option<i64> {
    use kafka_streams_group::client::{BrokerTarget, Client, ClientOptions};
    use kafka_streams_group::protocol::api::offset_fetch::{
        OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic,
    };
    let deadline = Instant::now() + T;
    let mut client = Client::connect(ClientOptions::new([cluster.plaintext()]), deadline).ok()?;
    let coordinator = client.find_coordinator(group, deadline).ok()?;
    let request = OffsetFetchRequest {
        groups: vec![OffsetFetchRequestGroup {
            group_id: group.to_string(),
            member_id: None,
            member_epoch: -1,
            topics: Some(vec![OffsetFetchRequestTopic {
                name: input.to_string(),
                partition_indexes: vec![0],
                ..Default::default()
            }]),
        }],
        ..Default::default()
    };
    let response = client
        .send_at(
            BrokerTarget::Node(coordinator.node_id),
            &request,
            9,
            deadline,
        )
        .ok()?;
    let p = response
        .groups
        .first()?
        .topics
        .first()?
        .partitions
        .first()?;
    (p.committed_offset >= 0).then_some(p.committed_offset)
}
