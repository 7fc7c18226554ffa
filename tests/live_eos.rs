//! Live: `processing.guarantee=exactly_once_v2` (issue 24). WordCount processes run with
//! exactly-once and no record cache, so every counted word occurrence sends one update; a
//! `read_committed` reader of the output must see, per word, exactly the counts 1, 2, ..., N
//! (a repeated count is a double count, a missing one a lost update), whatever kill -9 or
//! SIGSTOP does to the instances.
//!
//! ```text
//! KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo test --test live_eos -- --ignored --test-threads 1
//! ```

mod common;
mod word_count_support;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::peer::{Peer, PeerOptions};
use common::{init_logging, kafka_tool, unique_name, Cluster, LIVE};
use kafka_streams_group::consumer::{Fetcher, FetcherConfig, IsolationLevel, OffsetReset};
use kafka_streams_group::processing::decode_partition_time;
use kafka_streams_group::{ClientConfig, StreamsTaskId, TopicPartition};
use word_count_support::{create_topics, feed, input, Rng};

static SERIAL: Mutex<()> = Mutex::new(());

const PARTITIONS: i32 = 4;

/// One WordCount process (`examples/word_count`) under exactly_once_v2.
struct EosProcess {
    child: Child,
    name: String,
}

fn build_example() {
    let root = env!("CARGO_MANIFEST_DIR");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--example", "word_count"])
        .current_dir(root)
        .status()
        .expect("cargo build --example word_count");
    assert!(status.success(), "building examples/word_count/ failed");
}

impl EosProcess {
    fn log(app: &str, name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("{app}-{name}.log"))
    }

    fn start(name: &str, bootstrap: &str, app: &str, input: &str, output: &str) -> EosProcess {
        Self::start_with(name, bootstrap, app, input, output, "exactly_once_v2")
    }

    /// [`start`](Self::start) with another `processing.guarantee` (the break-it runs).
    fn start_with(
        name: &str,
        bootstrap: &str,
        app: &str,
        input: &str,
        output: &str,
        guarantee: &str,
    ) -> EosProcess {
        Self::start_args(name, bootstrap, app, input, output, guarantee, &[])
    }

    /// [`start_with`](Self::start_with) and more arguments (`--state-dir DIR`).
    fn start_args(
        name: &str,
        bootstrap: &str,
        app: &str,
        input: &str,
        output: &str,
        guarantee: &str,
        extra: &[&str],
    ) -> EosProcess {
        let root = env!("CARGO_MANIFEST_DIR");
        let log = Self::log(app, name);
        let child = Command::new(format!("{root}/target/debug/examples/word_count"))
            .args(["--bootstrap-server", bootstrap, "--application-id", app])
            .args(["--input", input, "--output", output])
            .args(["--processing-guarantee", guarantee])
            .args(["--cache-max-bytes", "0", "--partitions", "4"])
            .args(extra)
            .args(["--quiet", "--no-stdin-input"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .expect("create the log"),
            ))
            .env("RUST_LOG", "kafka_streams_group=info")
            .spawn()
            .expect("start examples/word_count");
        eprintln!("started {name} (pid {}), log {}", child.id(), log.display());
        EosProcess {
            child,
            name: name.to_string(),
        }
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {signal} {pid}");
    }

    fn kill_hard(mut self) {
        self.signal("-9");
        let _ = self.child.wait();
    }

    /// Closes stdin: the instance commits and leaves cleanly; true if it exited with 0.
    fn close(mut self) -> bool {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("{} did not close within 60 s: killed", self.name);
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }
}

impl Drop for EosProcess {
    fn drop(&mut self) {
        // A test that panics takes its instances with it.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A `read_committed` reader of the output: every update per word, in order.
struct Updates {
    fetcher: Fetcher,
    seen: BTreeMap<String, Vec<i64>>,
    /// Words whose updates were not 1, 2, 3, ... (word, previous, got).
    breaks: Vec<(String, i64, i64)>,
    total: u64,
}

impl Updates {
    fn new(bootstrap: &str, output: &str) -> Updates {
        let config = FetcherConfig::new(ClientConfig::new(bootstrap))
            .auto_offset_reset(OffsetReset::Earliest)
            .isolation_level(IsolationLevel::ReadCommitted)
            .fetch_max_wait(Duration::from_millis(200));
        let mut fetcher = Fetcher::connect(config, Duration::from_secs(30)).expect("fetcher");
        fetcher.assign((0..PARTITIONS).map(|p| TopicPartition::new(output, p)));
        Updates {
            fetcher,
            seen: BTreeMap::new(),
            breaks: Vec::new(),
            total: 0,
        }
    }

    /// Reads what is there (for at most `wait`); true if something new came.
    fn read(&mut self, wait: Duration) -> bool {
        let mut any = false;
        let end = Instant::now() + wait;
        while Instant::now() < end {
            let parts = self
                .fetcher
                .poll((Instant::now() + Duration::from_millis(300)).min(end))
                .expect("read the output topic");
            for part in parts {
                part.for_each_record(|r| {
                    let key =
                        String::from_utf8(r.key.unwrap_or_default().to_vec()).expect("utf-8 key");
                    let v: [u8; 8] = r.value.expect("a count").try_into().expect("8-byte Long");
                    let count = i64::from_be_bytes(v);
                    let counts = self.seen.entry(key.clone()).or_default();
                    let prev = counts.last().copied().unwrap_or(0);
                    if count != prev + 1 {
                        self.breaks.push((key, prev, count));
                    }
                    counts.push(count);
                    self.total += 1;
                    any = true;
                })
                .expect("decode output");
            }
        }
        any
    }

    fn last(&self) -> BTreeMap<String, i64> {
        self.seen
            .iter()
            .filter_map(|(w, c)| Some((w.clone(), *c.last()?)))
            .collect()
    }

    /// Reads until the last counts equal `expected` and nothing came for `quiet`.
    fn settle(&mut self, expected: &BTreeMap<String, i64>, quiet: Duration, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut last_new = Instant::now();
        while Instant::now() < deadline {
            if self.read(Duration::from_millis(500)) {
                last_new = Instant::now();
            } else if &self.last() == expected && last_new.elapsed() >= quiet {
                return;
            }
        }
    }
}

fn mismatches(got: &BTreeMap<String, i64>, want: &BTreeMap<String, i64>) -> Vec<String> {
    let words: std::collections::BTreeSet<&String> = got.keys().chain(want.keys()).collect();
    words
        .into_iter()
        .filter(|w| got.get(*w) != want.get(*w))
        .map(|w| format!("{w}: got {:?}, want {:?}", got.get(w), want.get(w)))
        .take(20)
        .collect()
}

/// Two exactly-once WordCount processes, input flowing, `rounds` (`KSG_EOS_ROUNDS`, default
/// 8) kill -9 of a random instance followed by a restart: the read_committed reader sees
/// exactly 1..=N per word, and the final counts are exact.
///
/// With restores ending at the last stable offset instead of the high watermark
/// (`ChangelogReader::end_offset` asking read_committed) this test fails on Kafka 4.4.0:
/// 100 breaks such as "the" 1817 then 698 (a task moved twice while a killed instance's open
/// transaction held the changelog's LSO back, and was restored short of committed records).
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn kill_9_under_exactly_once_changes_nothing_readers_see() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _ = LIVE;
    init_logging();
    let rounds: usize = std::env::var("KSG_EOS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let cluster = Cluster::get();
    let bootstrap = cluster.plaintext().to_string();
    let app = unique_name("eos-k9");
    let (in_t, out_t) = (format!("{app}-in"), format!("{app}-out"));
    create_topics(&bootstrap, &in_t, &out_t, PARTITIONS);
    build_example();
    let (lines, expected) = input(8_000, 200, 2424);
    let mut instances: Vec<EosProcess> = (0..2)
        .map(|i| EosProcess::start(&format!("r{i}"), &bootstrap, &app, &in_t, &out_t))
        .collect();
    let mut reader = Updates::new(&bootstrap, &out_t);
    // About 40 s of input on a loaded machine, so every kill lands while records flow.
    let feeder = feed(&bootstrap, &in_t, lines, 40, Duration::from_millis(150));
    let mut rng = Rng::new(97);
    let started = Instant::now();
    for round in 0..rounds {
        // Let work happen (and commit) between kills.
        let until = Instant::now() + Duration::from_millis(2_500 + rng.below(2_500));
        while Instant::now() < until {
            reader.read(Duration::from_millis(300));
        }
        let victim = rng.below(instances.len() as u64) as usize;
        let name = instances[victim].name.clone();
        eprintln!(
            "round {round}: kill -9 {name} after {:?}, {} updates read",
            started.elapsed(),
            reader.total
        );
        instances.remove(victim).kill_hard();
        instances.insert(
            victim,
            EosProcess::start(&format!("{name}.{round}"), &bootstrap, &app, &in_t, &out_t),
        );
    }
    feeder.join().expect("feeder");
    reader.settle(&expected, Duration::from_secs(5), Duration::from_secs(180));
    for i in instances {
        let name = i.name.clone();
        assert!(i.close(), "{name} did not close cleanly");
    }
    let words: i64 = expected.values().sum();
    eprintln!(
        "{rounds} kills in {:?}: {} updates read for {words} words, {} breaks",
        started.elapsed(),
        reader.total,
        reader.breaks.len()
    );
    assert!(
        reader.breaks.is_empty(),
        "a read_committed reader saw double counts or gaps: {:?}",
        &reader.breaks[..reader.breaks.len().min(20)]
    );
    let off = mismatches(&reader.last(), &expected);
    assert!(off.is_empty(), "final counts differ: {off:?}");
    assert_eq!(reader.total as i64, words, "one update per counted word");
}

/// A zombie: an exactly-once instance stopped (SIGSTOP) past its session timeout (3 s on
/// the harness broker) and its transaction timeout (10 s), its tasks moved to the other
/// instance, then resumed: whatever it had open or writes after resuming never reaches a
/// `read_committed` reader (no count twice), it rejoins and takes tasks again, and both
/// close cleanly with exact counts.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_resumed_zombie_writes_nothing_visible_and_rejoins() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init_logging();
    let cluster = Cluster::get();
    let bootstrap = cluster.plaintext().to_string();
    let app = unique_name("eos-z");
    let (in_t, out_t) = (format!("{app}-in"), format!("{app}-out"));
    create_topics(&bootstrap, &in_t, &out_t, PARTITIONS);
    build_example();
    let (lines, expected) = input(6_000, 200, 4242);
    let zombie = EosProcess::start("zombie", &bootstrap, &app, &in_t, &out_t);
    let other = EosProcess::start("other", &bootstrap, &app, &in_t, &out_t);
    let mut reader = Updates::new(&bootstrap, &out_t);
    let feeder = feed(&bootstrap, &in_t, lines, 40, Duration::from_millis(150));
    let until = Instant::now() + Duration::from_secs(6);
    while Instant::now() < until {
        reader.read(Duration::from_millis(300));
    }
    eprintln!("SIGSTOP zombie ({} updates read)", reader.total);
    zombie.signal("-STOP");
    let until = Instant::now() + Duration::from_secs(15);
    while Instant::now() < until {
        reader.read(Duration::from_millis(300));
    }
    let log = EosProcess::log(&app, "zombie");
    let before = std::fs::read_to_string(&log).unwrap_or_default().len();
    eprintln!("SIGCONT zombie ({} updates read)", reader.total);
    zombie.signal("-CONT");
    feeder.join().expect("feeder");
    reader.settle(&expected, Duration::from_secs(5), Duration::from_secs(180));
    let after = std::fs::read_to_string(&log).unwrap_or_default();
    let resumed = after.get(before..).unwrap_or_default();
    let took_tasks = resumed
        .lines()
        .any(|l| l.contains("owning ") && !l.contains("owning 0 active"));
    let zombie_ok = zombie.close();
    let other_ok = other.close();
    eprintln!(
        "zombie: {} updates read, {} breaks; after resuming it logged:\n{}",
        reader.total,
        reader.breaks.len(),
        resumed
            .lines()
            .filter(|l| l.contains("WARN") || l.contains("owning"))
            .take(15)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        reader.breaks.is_empty(),
        "a read_committed reader saw double counts or gaps: {:?}",
        &reader.breaks[..reader.breaks.len().min(20)]
    );
    let off = mismatches(&reader.last(), &expected);
    assert!(off.is_empty(), "final counts differ: {off:?}");
    assert!(
        took_tasks,
        "the resumed zombie never owned an active task again"
    );
    assert!(
        zombie_ok && other_ok,
        "zombie {zombie_ok}, other {other_ok}: not clean"
    );
}

/// The read_committed end (last stable offset) and the high watermark of `parts`.
fn stable_and_end(
    f: &mut Fetcher,
    parts: &[TopicPartition],
) -> (BTreeMap<TopicPartition, i64>, BTreeMap<TopicPartition, i64>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let lso = f
        .end_offsets(parts, IsolationLevel::ReadCommitted, deadline)
        .expect("read_committed end offsets");
    let hwm = f
        .end_offsets(parts, IsolationLevel::ReadUncommitted, deadline)
        .expect("end offsets");
    (lso, hwm)
}

/// Whether some partition has records of a transaction not ended yet (its LSO is below its
/// high watermark).
fn open_transaction(
    lso: &BTreeMap<TopicPartition, i64>,
    hwm: &BTreeMap<TopicPartition, i64>,
) -> bool {
    hwm.iter().any(|(tp, h)| lso.get(tp).is_some_and(|l| l < h))
}

/// What a Rust process logged as its `transactional.id` (waits for the line up to 60 s).
fn logged_transactional_id(app: &str, name: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let log = std::fs::read_to_string(EosProcess::log(app, name)).unwrap_or_default();
        if let Some(id) = log
            .lines()
            .find_map(|l| l.split("transactional.id ").nth(1))
        {
            return id.trim().to_string();
        }
        assert!(
            Instant::now() < deadline,
            "{name} logged no transactional.id"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One exactly-once WordCount process (`extra` arguments), input flowing: kill -9 it while
/// it has a transaction open (seen on the output: LSO below the high watermark, checked
/// again once it is dead) and restart it at once. Returns how long after the kill every
/// output partition shows new committed output to read_committed readers (its LSO two past
/// its end at the kill: a record and its commit marker beyond whatever the killed instance
/// left), and whether the restarted process had the same transactional id. The counts are
/// exact at the end.
fn restart_after_kill_9(cluster: &Cluster, variant: &str, extra: &[&str]) -> (Duration, bool) {
    let since = std::time::SystemTime::now();
    let bootstrap = cluster.plaintext();
    let app = unique_name(&format!("eos-pid-{variant}"));
    let (in_t, out_t) = (format!("{app}-in"), format!("{app}-out"));
    create_topics(bootstrap, &in_t, &out_t, PARTITIONS);
    let start = |name: &str| {
        EosProcess::start_args(
            name,
            bootstrap,
            &app,
            &in_t,
            &out_t,
            "exactly_once_v2",
            extra,
        )
    };
    let (lines, expected) = input(5_000, 200, 2409);
    let mut p = start("a");
    let mut reader = Updates::new(bootstrap, &out_t);
    let outputs: Vec<TopicPartition> = (0..PARTITIONS)
        .map(|i| TopicPartition::new(out_t.as_str(), i))
        .collect();
    let mut probe = Fetcher::connect(
        FetcherConfig::new(ClientConfig::new(bootstrap)),
        Duration::from_secs(30),
    )
    .expect("probe");
    // About 30 s of input: through the start, the kill and most of the longest wait after
    // it (what the killed instance left uncommitted is processed again after the restart).
    let feeder = feed(bootstrap, &in_t, lines, 25, Duration::from_millis(100));
    let deadline = Instant::now() + Duration::from_secs(120);
    while reader.total == 0 {
        assert!(
            Instant::now() < deadline,
            "{variant}: no output within 120 s"
        );
        reader.read(Duration::from_millis(300));
    }
    reader.read(Duration::from_secs(2));
    let mut names = vec!["a".to_string()];
    let (killed_at, end_at_kill) = 'kill: {
        for attempt in 0..5 {
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until {
                let (lso, hwm) = stable_and_end(&mut probe, &outputs);
                if open_transaction(&lso, &hwm) {
                    break;
                }
            }
            p.kill_hard();
            let killed_at = Instant::now();
            let (lso, hwm) = stable_and_end(&mut probe, &outputs);
            let open = open_transaction(&lso, &hwm);
            let name = format!("b{attempt}");
            p = start(&name);
            names.push(name);
            if open {
                eprintln!("{variant}: killed with a transaction open: stable {lso:?}, end {hwm:?}");
                break 'kill (killed_at, hwm);
            }
            eprintln!("{variant}: killed between transactions; again");
            reader.read(Duration::from_secs(6));
        }
        panic!("{variant}: never killed the instance with a transaction open");
    };
    let resumed = loop {
        let (lso, _) = stable_and_end(&mut probe, &outputs);
        if end_at_kill.iter().all(|(tp, end)| lso[tp] >= end + 2) {
            break killed_at.elapsed();
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(90),
            "{variant}: no new committed output 90 s after the kill: {lso:?} vs {end_at_kill:?}"
        );
        reader.read(Duration::from_millis(100));
    };
    let ids: Vec<String> = names[names.len() - 2..]
        .iter()
        .map(|n| logged_transactional_id(&app, n))
        .collect();
    eprintln!(
        "{variant}: new committed output on every partition {resumed:?} after the kill; \
         transactional ids {} then {}",
        ids[0], ids[1]
    );
    feeder.join().expect("feeder");
    reader.settle(&expected, Duration::from_secs(4), Duration::from_secs(120));
    assert!(
        p.close(),
        "{variant}: the restarted instance did not close cleanly"
    );
    assert!(
        reader.breaks.is_empty(),
        "{variant}: double counts or gaps: {:?}",
        &reader.breaks[..reader.breaks.len().min(20)]
    );
    let off = mismatches(&reader.last(), &expected);
    assert!(off.is_empty(), "{variant}: final counts differ: {off:?}");
    // The Rust instances' TxnOffsetCommits carried the partition time.
    assert_partition_times(cluster, &app, since);
    (resumed, ids[0] == ids[1])
}

/// Issue 24: with `state.dir` a restarted instance keeps its process id (Java's
/// `kafka-streams-process-metadata`), hence its `transactional.id`, and its InitProducerId
/// aborts the transaction its kill -9'd predecessor left open at once; without, that
/// transaction holds the output's last stable offset (and restores) back until the
/// coordinator times it out (`transaction.timeout.ms` 10 s, checked every 10 s). Measured as
/// the time from the kill until every output partition shows new committed output.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_restart_with_its_state_dir_fences_the_killed_predecessor_at_once() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init_logging();
    let cluster = Cluster::get();
    build_example();
    let (without, same) = restart_after_kill_9(&cluster, "new-id", &[]);
    assert!(
        !same,
        "without a state dir every start has a new process id"
    );
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(unique_name("eos-pid"));
    let dir_arg = dir.to_str().expect("utf-8 path");
    let (with, same) = restart_after_kill_9(&cluster, "state-dir", &["--state-dir", dir_arg]);
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("new committed output after kill -9 + restart: {without:?} with a new process id, {with:?} with the kept one");
    assert!(same, "the restarted instance kept its transactional id");
    assert!(
        without >= Duration::from_secs(9),
        "the open transaction of a new-id restart ends only at its timeout (10 s): {without:?}"
    );
    assert!(
        with < Duration::from_secs(9) && with < without,
        "the kept transactional id fences the predecessor at once: {with:?} (new id: {without:?})"
    );
}

/// One instance of the mixed test: a Rust process or the Java Streams peer.
enum Instance {
    Rust(EosProcess),
    Java(Peer),
}

/// The guarantee a side runs with: exactly_once_v2 unless `var` says otherwise. Setting
/// `KSG_EOS_JAVA_RUST_GUARANTEE=at_least_once` (or `KSG_EOS_JAVA_PEER_GUARANTEE=…`) is how
/// the mixed test is shown to fail: a kill -9 then re-counts records readers already saw.
fn guarantee(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| "exactly_once_v2".into())
}

/// The Java WordCount (streams-peer `--topology wordcount`) under `guarantee`, committing
/// every 100 ms (Java's exactly-once default), keeping its state in `state_dir` across
/// restarts as a real deployment does (same process id, so the same transactional id).
fn java_eos(
    cluster: &Cluster,
    app: &str,
    input: &str,
    output: &str,
    state_dir: &std::path::Path,
    guarantee: &str,
) -> Peer {
    let dir = state_dir.to_str().expect("utf-8 state dir");
    Peer::start_with(
        cluster,
        PeerOptions {
            group: app,
            input,
            app_server: None,
            tags: Vec::new(),
        },
        &[
            "--topology",
            "wordcount",
            "--output",
            output,
            "--commit-ms",
            "100",
            "--processing-guarantee",
            guarantee,
            "--state-dir",
            dir,
        ],
    )
}

/// Every committed offset of group `group`: (topic, partition) → (offset, metadata).
fn committed_offsets(cluster: &Cluster, group: &str) -> BTreeMap<(String, i32), (i64, String)> {
    use kafka_streams_group::client::{BrokerTarget, Client, ClientOptions};
    use kafka_streams_group::protocol::api::offset_fetch::{
        OffsetFetchRequest, OffsetFetchRequestGroup,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut client =
        Client::connect(ClientOptions::new([cluster.plaintext()]), deadline).expect("connect");
    let coordinator = client
        .find_coordinator(group, deadline)
        .expect("coordinator");
    let request = OffsetFetchRequest {
        groups: vec![OffsetFetchRequestGroup {
            group_id: group.to_string(),
            member_id: None,
            member_epoch: -1,
            topics: None,
        }],
        require_stable: true,
        ..Default::default()
    };
    let response = client
        .send_at(
            BrokerTarget::Node(coordinator.node_id),
            &request,
            9,
            deadline,
        )
        .expect("OffsetFetch");
    let mut out = BTreeMap::new();
    for g in response.groups {
        for t in g.topics {
            for p in t.partitions {
                out.insert(
                    (t.name.clone(), p.partition_index),
                    (p.committed_offset, p.metadata.unwrap_or_default()),
                );
            }
        }
    }
    out
}

/// Every committed offset of `group` carries Kafka Streams' metadata with a partition time
/// of this run (`since` to now): Java's `TopicPartitionMetadata`, magic 2, as Java writes it
/// and reads it back when it takes the task over (empty or garbage metadata decodes to -1).
fn assert_partition_times(cluster: &Cluster, group: &str, since: std::time::SystemTime) {
    let epoch_ms = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_millis() as i64
    };
    let (from, to) = (epoch_ms(since), epoch_ms(std::time::SystemTime::now()));
    let offsets = committed_offsets(cluster, group);
    assert!(!offsets.is_empty(), "{group}: nothing committed");
    for ((topic, partition), (offset, metadata)) in &offsets {
        let time = decode_partition_time(metadata);
        assert!(
            metadata.len() == 12 && metadata.starts_with("Ag") && (from..=to).contains(&time),
            "{topic}-{partition} @ {offset}: metadata {metadata:?} (partition time {time}) \
             is not Java's encoding of a time of this run ({from}..={to})"
        );
    }
}

/// The mixed group: the Java WordCount and two Rust WordCount processes, all under
/// exactly_once_v2, one application; input flowing, `rounds` (`KSG_EOS_JAVA_ROUNDS`, else
/// `KSG_EOS_ROUNDS` but at least 20) kill -9 of a random instance (Java or Rust) followed by a
/// restart. A read_committed reader of the output sees exactly 1..=N per word (a count twice
/// is a double count), the final counts are exact, and the changelog, read read_committed,
/// holds the same: every word's values increase and end at the truth.
///
/// With the Rust instances at at_least_once (`KSG_EOS_JAVA_RUST_GUARANTEE=at_least_once`)
/// this test fails on Kafka 4.4.0: 38,944 updates for 36,867 words, 48 breaks such as "the"
/// 2112 then 2370, the same in the changelog.
///
/// Every committed offset, Java's or Rust's, carries the partition time as Java writes it
/// (`AgAAAaJE…`: magic 2 + 8-byte time, base64), so whichever instance takes a task over
/// starts from it. (Before issue 24's fix the Rust runtime's TxnOffsetCommit carried empty
/// metadata, and this check failed on the partitions Rust had committed last.)
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn java_and_rust_under_exactly_once_survive_kill_9() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init_logging();
    let t0 = Instant::now();
    let run_started = std::time::SystemTime::now();
    let rounds: usize = match std::env::var("KSG_EOS_JAVA_ROUNDS") {
        Ok(v) => v.parse().expect("KSG_EOS_JAVA_ROUNDS"),
        Err(_) => std::env::var("KSG_EOS_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
            .max(20),
    };
    let (rust_g, java_g) = (
        guarantee("KSG_EOS_JAVA_RUST_GUARANTEE"),
        guarantee("KSG_EOS_JAVA_PEER_GUARANTEE"),
    );
    let cluster = Cluster::get();
    let bootstrap = cluster.plaintext().to_string();
    let app = unique_name("eos-j9");
    let (in_t, out_t) = (format!("{app}-in"), format!("{app}-out"));
    create_topics(&bootstrap, &in_t, &out_t, PARTITIONS);
    build_example();
    let java_dir =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{app}-java"));
    let (lines, expected) = input(10_000, 200, 2471);
    let rust = |name: &str| {
        Instance::Rust(EosProcess::start_with(
            name, &bootstrap, &app, &in_t, &out_t, &rust_g,
        ))
    };
    let java = || Instance::Java(java_eos(&cluster, &app, &in_t, &out_t, &java_dir, &java_g));
    let mut instances = vec![java(), rust("r0"), rust("r1")];
    let mut names = ["java".to_string(), "r0".into(), "r1".into()];
    let mut reader = Updates::new(&bootstrap, &out_t);
    // Input for about as long as the kills take (about 3.5 s a round), so kills land while
    // records flow; 50 chunks of 200 lines.
    let pause = Duration::from_millis((rounds as u64 * 3_500 / 50).max(100));
    let feeder = feed(&bootstrap, &in_t, lines, 200, pause);
    let mut rng = Rng::new(2471);
    let started = Instant::now();
    eprintln!(
        "set up (topics, example build, 3 instances) in {:?}",
        t0.elapsed()
    );
    let (mut java_kills, mut rust_kills) = (0, 0);
    let mut java_pids = std::collections::BTreeSet::new();
    for round in 0..rounds {
        let until = Instant::now() + Duration::from_millis(2_000 + rng.below(2_000));
        while Instant::now() < until {
            reader.read(Duration::from_millis(300));
        }
        let victim = rng.below(instances.len() as u64) as usize;
        eprintln!(
            "round {round}: kill -9 {} after {:?}, {} updates read, input done: {}",
            names[victim],
            started.elapsed(),
            reader.total,
            feeder.is_finished()
        );
        match instances.remove(victim) {
            Instance::Rust(p) => {
                p.kill_hard();
                rust_kills += 1;
                let name = format!("r{victim}.{round}");
                instances.insert(victim, rust(&name));
                names[victim] = name;
            }
            Instance::Java(p) => {
                p.kill_hard();
                java_kills += 1;
                instances.insert(victim, java());
            }
        }
    }
    feeder.join().expect("feeder");
    reader.settle(&expected, Duration::from_secs(4), Duration::from_secs(120));
    let settled = started.elapsed();
    // What Java and Rust left behind: committed offsets (metadata = partition time) and the
    // transactional ids, Java's identified by its process id.
    let mut java_tasks = std::collections::BTreeSet::new();
    for i in instances.iter_mut() {
        if let Instance::Java(p) = i {
            java_pids.insert(p.info_field("processId"));
            java_tasks = p.active_tasks();
        }
    }
    let offsets = committed_offsets(&cluster, &app);
    for ((topic, partition), (offset, metadata)) in &offsets {
        let sub = if *topic == in_t { "0" } else { "1" };
        let owner = if java_tasks.contains(&StreamsTaskId::new(sub, *partition)) {
            "task on java now"
        } else {
            "task on rust now"
        };
        eprintln!(
            "committed {topic}-{partition} @ {offset} metadata {metadata:?} (partition time {}; {owner})",
            decode_partition_time(metadata)
        );
    }
    assert_partition_times(&cluster, &app, run_started);
    let txns = kafka_tool(
        &cluster,
        "org.apache.kafka.tools.TransactionsCommand",
        &["--bootstrap-server", cluster.plaintext(), "list"],
    );
    let ours: Vec<&str> = txns.lines().filter(|l| l.starts_with(&app)).collect();
    eprintln!(
        "transactional ids (java process ids {java_pids:?}):\n{}",
        ours.join("\n")
    );
    for i in instances {
        match i {
            Instance::Rust(p) => {
                let name = p.name.clone();
                assert!(p.close(), "{name} did not close cleanly");
            }
            Instance::Java(p) => p.close(),
        }
    }
    // The changelog as a restore reads it.
    let mut changelog = Updates::new(
        &bootstrap,
        &word_count_support::word_count::changelog_topic(&app),
    );
    changelog.settle(&expected, Duration::from_secs(2), Duration::from_secs(30));
    let _ = std::fs::remove_dir_all(&java_dir);
    let words: i64 = expected.values().sum();
    eprintln!(
        "mixed ({rust_g} rust, {java_g} java): {rounds} kills ({java_kills} java, {rust_kills} \
         rust) in {:?}, settled at {settled:?}: {} updates read for {words} words, {} breaks; \
         changelog {} records, {} breaks",
        started.elapsed(),
        reader.total,
        reader.breaks.len(),
        changelog.total,
        changelog.breaks.len()
    );
    assert!(
        reader.breaks.is_empty(),
        "a read_committed reader saw double counts or gaps: {:?}",
        &reader.breaks[..reader.breaks.len().min(20)]
    );
    let off = mismatches(&reader.last(), &expected);
    assert!(off.is_empty(), "final counts differ: {off:?}");
    assert_eq!(reader.total as i64, words, "one update per counted word");
    assert!(
        changelog.breaks.is_empty(),
        "the changelog (read_committed) repeats or skips counts: {:?}",
        &changelog.breaks[..changelog.breaks.len().min(20)]
    );
    let off = mismatches(&changelog.last(), &expected);
    assert!(off.is_empty(), "the changelog ends elsewhere: {off:?}");
    // Every transactional id of the application is `<app>-<process id>-<thread>`, Java's
    // and Rust's alike.
    for l in &ours {
        let id = l.split_whitespace().next().unwrap_or_default();
        assert!(
            id.ends_with("-1"),
            "transactional id {id} is not <app>-<process>-1"
        );
    }
    assert!(
        ours.iter().any(|l| java_pids
            .iter()
            .any(|p| l.starts_with(&format!("{app}-{p}-1")))),
        "no transactional id of the Java instance ({java_pids:?}) among {ours:?}"
    );
    assert!(
        java_kills > 0 && rust_kills > 0,
        "kills: {java_kills} java, {rust_kills} rust"
    );
}
