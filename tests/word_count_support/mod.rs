//! Shared parts of the WordCount live tests: a skewed, unicode input with its expected counts
//! computed independently of the code under test, Rust instances in threads or processes, and
//! a reader of the output topic.
#![allow(dead_code)]

/// The WordCount application of `examples/word_count/` (topology and processors), compiled
/// from the example's own file so the tests run exactly what `cargo run --example word_count`
/// runs.
#[path = "../../examples/word_count/app.rs"]
pub mod word_count;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kafka_streams_group::consumer::{Fetcher, FetcherConfig, OffsetReset};
use kafka_streams_group::processing::{ProcessingConfig, ProcessingRuntime, ProcessingStats};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::streams::commit::TopicPartition;
use kafka_streams_group::{ClientConfig, StreamsTaskId, StreamsTaskRole};

/// Vocabulary entries with what Java's `toLowerCase().split("\\W+")` makes of each when it
/// stands between two ASCII delimiters, written out by hand (not computed by the library):
/// `\W` is ASCII-only, so every non-ASCII letter is a delimiter.
const VOCAB: &[(&str, &[&str])] = &[
    ("the", &["the"]),
    ("Kafka", &["kafka"]),
    ("STREAMS", &["streams"]),
    ("rust", &["rust"]),
    ("a", &["a"]),
    ("word_count", &["word_count"]),
    ("x42", &["x42"]),
    ("über", &["ber"]),
    ("naïve", &["na", "ve"]),
    ("日本語", &[]),
    ("Straße", &["stra", "e"]),
    ("café", &["caf"]),
    ("🙂ok", &["ok"]),
    ("Ελλάδα", &[]),
    ("Zürich", &["z", "rich"]),
];

/// Separators between words: all ASCII non-word characters.
const SEPARATORS: &[&str] = &[" ", ", ", " - ", "  ", "; "];

/// A deterministic pseudo-random generator (xorshift), so a failing run can be replayed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `n` lines of 1..=6 words with Zipf-like frequencies (the vocabulary first, then a tail of
/// `tail` synthetic words), some leading delimiters, some empty lines; and the expected final
/// count per word.
pub fn input(n: usize, tail: usize, seed: u64) -> (Vec<String>, BTreeMap<String, i64>) {
    let mut rng = Rng::new(seed);
    let tail_words: Vec<(String, Vec<String>)> = (0..tail)
        .map(|i| (format!("W{i}x"), vec![format!("w{i}x")]))
        .collect();
    let mut words: Vec<(String, Vec<String>)> = VOCAB
        .iter()
        .map(|(w, p)| (w.to_string(), p.iter().map(|s| s.to_string()).collect()))
        .collect();
    words.extend(tail_words);
    // Zipf weights 1/(rank+1), as cumulative integers.
    let mut cumulative = Vec::with_capacity(words.len());
    let mut total = 0u64;
    for rank in 0..words.len() {
        total += 1_000_000 / (rank as u64 + 1);
        cumulative.push(total);
    }
    let mut lines = Vec::with_capacity(n);
    let mut expected: BTreeMap<String, i64> = BTreeMap::new();
    for _ in 0..n {
        if rng.below(200) == 0 {
            // Java: "".split(..) == [""]: the empty word is counted.
            lines.push(String::new());
            *expected.entry(String::new()).or_default() += 1;
            continue;
        }
        let mut line = String::new();
        let mut pieces: Vec<String> = Vec::new();
        let leading = rng.below(10) == 0;
        if leading {
            line.push(' ');
        }
        let count = 1 + rng.below(6) as usize;
        for i in 0..count {
            if i > 0 {
                line.push_str(SEPARATORS[rng.below(SEPARATORS.len() as u64) as usize]);
            }
            let r = rng.below(total);
            let idx = cumulative.partition_point(|&c| c <= r);
            let (w, p) = &words[idx];
            line.push_str(w);
            pieces.extend(p.iter().cloned());
        }
        // A line starting with a delimiter yields a leading "" (only if some word follows:
        // Java drops trailing empty strings, and then all are trailing).
        let starts_with_delimiter = line
            .chars()
            .next()
            .is_some_and(|c| !(c.is_ascii_alphanumeric() || c == '_'));
        if starts_with_delimiter && !pieces.is_empty() {
            *expected.entry(String::new()).or_default() += 1;
        }
        for p in pieces {
            *expected.entry(p).or_default() += 1;
        }
        lines.push(line);
    }
    (lines, expected)
}

/// Writes `lines` to `topic` (null keys) from a thread, `chunk` lines at a time with `pause`
/// between chunks; returns when all are acknowledged.
pub fn feed(
    bootstrap: &str,
    topic: &str,
    lines: Vec<String>,
    chunk: usize,
    pause: Duration,
) -> JoinHandle<()> {
    let bootstrap = bootstrap.to_string();
    let topic = topic.to_string();
    std::thread::Builder::new()
        .name("feeder".into())
        .spawn(move || {
            let mut p = Producer::new(ProducerConfig::new(ClientConfig::new(bootstrap)))
                .expect("feeder producer");
            for part in lines.chunks(chunk) {
                for line in part {
                    p.send(ProducerRecord::new(
                        topic.clone(),
                        None,
                        Some(line.as_bytes()),
                    ))
                    .expect("feed a line");
                }
                p.flush(Instant::now() + Duration::from_secs(60))
                    .expect("flush the feed");
                std::thread::sleep(pause);
            }
        })
        .expect("spawn feeder")
}

/// One task's store as an instance holds it: role, counts (word → count), changelog offset
/// of the last record applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskStore {
    pub role: StreamsTaskRole,
    pub counts: BTreeMap<String, i64>,
    pub changelog_offset: Option<i64>,
}

/// What a running instance holds, refreshed by its thread every `SNAPSHOT_EVERY`.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub member_id: String,
    pub stats: ProcessingStats,
    pub tasks: BTreeMap<StreamsTaskId, TaskStore>,
}

const SNAPSHOT_EVERY: Duration = Duration::from_millis(300);

fn snapshot_of(rt: &ProcessingRuntime) -> Snapshot {
    let mut tasks: BTreeMap<StreamsTaskId, TaskStore> = BTreeMap::new();
    for (id, role, store) in rt.task_stores() {
        let t = tasks.entry(id.clone()).or_insert(TaskStore {
            role,
            counts: BTreeMap::new(),
            changelog_offset: None,
        });
        t.changelog_offset = t.changelog_offset.max(store.changelog_offset());
        for (k, v) in store.iter() {
            let v: [u8; 8] = v.try_into().expect("an 8-byte Long count");
            t.counts.insert(
                String::from_utf8_lossy(k).into_owned(),
                i64::from_be_bytes(v),
            );
        }
    }
    Snapshot {
        member_id: rt.handle().member_id().to_string(),
        stats: rt.stats(),
        tasks,
    }
}

/// A Rust WordCount instance running in a thread of the test.
pub struct RustInstance {
    pub name: String,
    stop: Arc<AtomicBool>,
    snapshot: Arc<Mutex<Snapshot>>,
    thread: Option<JoinHandle<Result<ProcessingStats, kafka_streams_group::Error>>>,
}

impl RustInstance {
    pub fn start(
        name: &str,
        bootstrap: &str,
        app: &str,
        input: &str,
        output: &str,
    ) -> RustInstance {
        Self::start_threads(name, bootstrap, app, input, output, 1)
    }

    /// [`start`](Self::start) with `num.stream.threads` = `threads`.
    pub fn start_threads(
        name: &str,
        bootstrap: &str,
        app: &str,
        input: &str,
        output: &str,
        threads: usize,
    ) -> RustInstance {
        let wc = word_count::app(app, input, output, None);
        Self::start_app(name, bootstrap, app, wc, threads)
    }

    /// An instance of application `app` running `wc` (e.g. WordCount written with the DSL)
    /// with `num.stream.threads` = `threads`.
    pub fn start_app(
        name: &str,
        bootstrap: &str,
        app: &str,
        wc: kafka_streams_group::processing::StreamsApp,
        threads: usize,
    ) -> RustInstance {
        let config = ProcessingConfig::new(bootstrap, app)
            .commit_interval(Duration::from_millis(500))
            .purge_interval(Duration::from_secs(1))
            .num_stream_threads(threads);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let snapshot = Arc::new(Mutex::new(Snapshot::default()));
        let shared = snapshot.clone();
        let n = name.to_string();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let mut rt = ProcessingRuntime::start(config, wc)?;
                eprintln!("{n}: joined as {}", rt.handle().member_id());
                let mut taken = Instant::now() - SNAPSHOT_EVERY;
                let r = loop {
                    if flag.load(Ordering::SeqCst) {
                        break Ok(());
                    }
                    if let Err(e) = rt.run_once() {
                        break Err(e);
                    }
                    if taken.elapsed() >= SNAPSHOT_EVERY {
                        taken = Instant::now();
                        let s = snapshot_of(&rt);
                        *shared.lock().unwrap_or_else(|e| e.into_inner()) = s;
                    }
                };
                let stats = rt.stats();
                let closed = rt.close();
                eprintln!("{n}: closed ({stats:?})");
                r.and(closed).map(|_| stats)
            })
            .expect("spawn instance");
        RustInstance {
            name: name.to_string(),
            stop,
            snapshot,
            thread: Some(thread),
        }
    }

    /// What the instance held at its last snapshot (at most `SNAPSHOT_EVERY` old).
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Clean close: commit, leave. Panics if the instance failed.
    pub fn close(mut self) -> ProcessingStats {
        self.stop.store(true, Ordering::SeqCst);
        let t = self.thread.take().expect("running");
        t.join()
            .expect("instance thread panicked")
            .unwrap_or_else(|e| panic!("{} failed: {e}", self.name))
    }
}

impl Drop for RustInstance {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// A Rust WordCount instance as a child process (`examples/word_count/`), for SIGKILL.
pub struct RustProcess {
    child: Child,
}

impl RustProcess {
    pub fn start(bootstrap: &str, app: &str, input: &str, output: &str) -> RustProcess {
        Self::start_logged(bootstrap, app, input, output, None)
    }

    /// [`start`](Self::start) with the library's log at `info` written to `log` (if given)
    /// instead of the test's stderr.
    pub fn start_logged(
        bootstrap: &str,
        app: &str,
        input: &str,
        output: &str,
        log: Option<&std::path::Path>,
    ) -> RustProcess {
        let root = env!("CARGO_MANIFEST_DIR");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "--example", "word_count"])
            .current_dir(root)
            .status()
            .expect("cargo build --example word_count");
        assert!(status.success(), "building examples/word_count/ failed");
        let child = Command::new(format!("{root}/target/debug/examples/word_count"))
            .args(["--bootstrap-server", bootstrap, "--application-id", app])
            .args(["--input", input, "--output", output, "--commit-ms", "500"])
            .args(["--quiet", "--no-stdin-input"])
            .stdin(Stdio::piped())
            .stdout(Stdio::inherit())
            .stderr(match log {
                Some(path) => Stdio::from(std::fs::File::create(path).expect("create the log")),
                None => Stdio::inherit(),
            })
            .envs(log.map(|_| ("RUST_LOG", "info")))
            .spawn()
            .expect("start examples/word_count");
        RustProcess { child }
    }

    /// SIGSTOP (`true`) or SIGCONT (`false`): a stopped process sends no heartbeat.
    pub fn pause(&self, stop: bool) {
        let pid = self.child.id().to_string();
        let signal = if stop { "-STOP" } else { "-CONT" };
        let status = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {signal} {pid}");
    }

    pub fn kill_hard(mut self) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill")
            .args(["-9", &pid])
            .status()
            .expect("kill");
        assert!(status.success(), "kill -9 {pid}");
        let _ = self.child.wait();
    }

    pub fn close(mut self) {
        if let Some(mut stdin) = self.child.stdin.take() {
            let _ = writeln!(stdin, "close");
        }
        let status = self.child.wait().expect("wait for word_count");
        assert!(status.success(), "word_count exited with {status}");
    }
}

impl Drop for RustProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Reads the output topic from the beginning: the last count per word, and how many
/// updates were read.
pub struct Counts {
    fetcher: Fetcher,
    pub last: BTreeMap<String, i64>,
    pub updates: u64,
}

impl Counts {
    pub fn new(bootstrap: &str, output: &str, partitions: i32) -> Counts {
        let config = FetcherConfig::new(ClientConfig::new(bootstrap))
            .auto_offset_reset(OffsetReset::Earliest)
            .fetch_max_wait(Duration::from_millis(200));
        let mut fetcher = Fetcher::connect(config, Duration::from_secs(30)).expect("fetcher");
        fetcher.assign((0..partitions).map(|p| TopicPartition::new(output, p)));
        Counts {
            fetcher,
            last: BTreeMap::new(),
            updates: 0,
        }
    }

    /// Reads what is there now (for at most `wait`); true if something new came.
    pub fn read(&mut self, wait: Duration) -> bool {
        let mut any = false;
        let end = Instant::now() + wait;
        loop {
            let parts = self
                .fetcher
                .poll((Instant::now() + Duration::from_millis(300)).min(end))
                .expect("read the output topic");
            if parts.is_empty() {
                return any;
            }
            for part in parts {
                part.for_each_record(|r| {
                    let key =
                        String::from_utf8(r.key.unwrap_or_default().to_vec()).expect("utf-8 key");
                    let v: [u8; 8] = r.value.expect("a count").try_into().expect("8-byte Long");
                    self.last.insert(key, i64::from_be_bytes(v));
                    self.updates += 1;
                })
                .expect("decode output");
                any = true;
            }
            if Instant::now() >= end {
                return any;
            }
        }
    }

    /// Reads until the counts equal `expected` and nothing new came for `quiet`, or
    /// `timeout`; returns true on a match that stayed.
    pub fn settle_exact(
        &mut self,
        expected: &BTreeMap<String, i64>,
        quiet: Duration,
        timeout: Duration,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        let mut last_new = Instant::now();
        while Instant::now() < deadline {
            if self.read(Duration::from_millis(500)) {
                last_new = Instant::now();
            } else if &self.last == expected && last_new.elapsed() >= quiet {
                return true;
            }
        }
        &self.last == expected
    }

    /// Reads until every count is at least the expected one and nothing new came for
    /// `quiet`, or `timeout`.
    pub fn settle_at_least(
        &mut self,
        expected: &BTreeMap<String, i64>,
        quiet: Duration,
        timeout: Duration,
    ) {
        let deadline = Instant::now() + timeout;
        let mut last_new = Instant::now();
        while Instant::now() < deadline {
            if self.read(Duration::from_millis(500)) {
                last_new = Instant::now();
            } else if below(&self.last, expected).is_empty() && last_new.elapsed() >= quiet {
                return;
            }
        }
    }
}

/// Polls `f` every 200 ms until it is true; panics naming `what` after `timeout`.
pub fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("timed out after {timeout:?} waiting for {what}");
}

/// Words whose count is below the expected one: (word, got, want).
pub fn below(got: &BTreeMap<String, i64>, want: &BTreeMap<String, i64>) -> Vec<(String, i64, i64)> {
    want.iter()
        .filter_map(|(w, n)| {
            let g = got.get(w).copied().unwrap_or(0);
            (g < *n).then(|| (w.clone(), g, *n))
        })
        .collect()
}

/// A readable summary of how `got` differs from `want` (first few words).
pub fn diff(got: &BTreeMap<String, i64>, want: &BTreeMap<String, i64>) -> String {
    let mut out = Vec::new();
    for (w, n) in want {
        let g = got.get(w).copied().unwrap_or(0);
        if g != *n {
            out.push(format!("{w:?}: got {g}, want {n}"));
        }
    }
    for w in got.keys().filter(|w| !want.contains_key(*w)) {
        out.push(format!("{w:?}: unexpected ({})", got[w]));
    }
    let n = out.len();
    out.truncate(12);
    format!("{n} word(s) differ: {}", out.join("; "))
}

/// Creates the input and output topics.
pub fn create_topics(bootstrap: &str, input: &str, output: &str, partitions: i32) {
    kafka_streams_group::admin::create_topics(
        &ClientConfig::new(bootstrap),
        &[
            kafka_streams_group::admin::NewTopic::new(input, partitions),
            kafka_streams_group::admin::NewTopic::new(output, partitions),
        ],
        Duration::from_secs(30),
    )
    .expect("create topics");
}

/// Per partition of `topic`, the offset of the first record still readable from its start
/// (`None`: nothing readable, e.g. all purged).
pub fn first_offsets(bootstrap: &str, topic: &str, partitions: i32) -> BTreeMap<i32, Option<i64>> {
    let config = FetcherConfig::new(ClientConfig::new(bootstrap))
        .auto_offset_reset(OffsetReset::Earliest)
        .fetch_max_wait(Duration::from_millis(200));
    let mut fetcher = Fetcher::connect(config, Duration::from_secs(30)).expect("fetcher");
    let mut first: BTreeMap<i32, Option<i64>> = (0..partitions).map(|p| (p, None)).collect();
    for p in 0..partitions {
        fetcher.assign([TopicPartition::new(topic, p)]);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline && first[&p].is_none() {
            for part in fetcher
                .poll(Instant::now() + Duration::from_millis(500))
                .expect("poll")
            {
                let mut min = None;
                part.for_each_record(|r| {
                    min = Some(min.map_or(r.offset, |m: i64| m.min(r.offset)));
                })
                .expect("decode");
                if min.is_some() {
                    first.insert(p, min);
                }
            }
        }
    }
    first
}

/// Starts the Java WordCount (`streams-peer --topology wordcount`, commit every 500 ms) as an
/// instance of application `app`, reading `input` and writing counts to `output`.
pub fn java_word_count(
    cluster: &crate::common::Cluster,
    app: &str,
    input: &str,
    output: &str,
) -> crate::common::peer::Peer {
    crate::common::peer::Peer::start_with(
        cluster,
        crate::common::peer::PeerOptions {
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
            "500",
        ],
    )
}
