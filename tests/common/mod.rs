//! Shared helpers for the live tests: where the harness broker is and how to reach it.
//!
//! `scripts/test.sh` starts a real Kafka broker with `scripts/kafka.sh` and points
//! `KSG_CLUSTER_ENV` at the `cluster.env` file the launcher writes. Live tests are
//! `#[ignore]`d so that a bare `cargo test` reports them as ignored, never as passed;
//! when they do run without a broker they fail with a message saying how to start one.
#![allow(dead_code)]

pub mod member;
pub mod peer;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// The marker every live test carries, so `cargo test -- --ignored` selects exactly them.
pub const LIVE: &str = "live: needs a Kafka broker (scripts/test.sh runs it)";

/// The harness broker as described by `cluster.env`.
pub struct Cluster {
    values: BTreeMap<String, String>,
    /// Path of the file the values came from.
    pub path: PathBuf,
}

impl Cluster {
    /// Reads the cluster file named by `KSG_CLUSTER_ENV`; panics with instructions if absent,
    /// which fails the live test (it must never pass without a broker).
    pub fn get() -> Cluster {
        let path = std::env::var_os("KSG_CLUSTER_ENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                panic!(
                    "KSG_CLUSTER_ENV is not set: live tests need the harness broker. Run \
                 `scripts/test.sh`, or `scripts/kafka.sh start` and then \
                 `KSG_CLUSTER_ENV=.kafka/run-19092/cluster.env cargo test -- --ignored`"
                )
            });
        Cluster::from_file(path)
    }

    /// Reads the cluster file that the environment variable `var` names; `None` (after saying
    /// why) when it is unset, i.e. when no dedicated broker was started for `test`. For tests
    /// that kill brokers and so never touch the shared one.
    pub fn from_var(var: &str, test: &str) -> Option<Cluster> {
        let Some(path) = std::env::var_os(var).map(PathBuf::from) else {
            eprintln!(
                "SKIPPED {test}: {var} is not set. This test kills brokers, so it needs its own \
                 (scripts/test.sh starts one in the \"broker loss and connection churn\" phase)."
            );
            return None;
        };
        Some(Cluster::from_file(path))
    }

    /// Reads `path` (`KEY=value` lines, `#` comments); panics if it cannot.
    pub fn from_file(path: PathBuf) -> Cluster {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "cannot read cluster file {}: {e} (is the broker running?)",
                path.display()
            )
        });
        let values = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        Cluster { values, path }
    }

    /// One value of the cluster file, e.g. `KSG_BOOTSTRAP_PLAINTEXT`.
    pub fn value(&self, key: &str) -> &str {
        self.values
            .get(key)
            .unwrap_or_else(|| panic!("{} has no {key}", self.path.display()))
    }

    /// The Kafka version of the running broker, e.g. `(4, 4, 0)`.
    pub fn kafka_version(&self) -> (u32, u32, u32) {
        let v = self.value("KSG_KAFKA_VERSION");
        let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        (
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
        )
    }

    /// The PLAINTEXT bootstrap list (`host:port`, comma-separated when several nodes run).
    pub fn plaintext(&self) -> &str {
        self.value("KSG_BOOTSTRAP_PLAINTEXT")
    }

    /// `host:port` of the first node's PLAINTEXT listener, for raw sockets.
    pub fn plaintext_first(&self) -> &str {
        self.plaintext().split(',').next().unwrap_or_default()
    }
}

/// A name no other test (or earlier run against the same broker) uses.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}-{}-{nanos:x}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Routes the library's `log` records to stderr (captured by the test harness, shown when a
/// test fails). Level from `KSG_LOG` (`error`…`trace`, default `info`).
pub fn init_logging() {
    struct StderrLogger;
    impl log::Log for StderrLogger {
        fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
            metadata.level() <= log::max_level()
        }
        fn log(&self, record: &log::Record<'_>) {
            if self.enabled(record.metadata()) {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                eprintln!(
                    "{}.{:03} {:5} [{}] {}",
                    t.as_secs() % 100_000,
                    t.subsec_millis(),
                    record.level(),
                    std::thread::current().name().unwrap_or("?"),
                    record.args()
                );
            }
        }
        fn flush(&self) {}
    }
    static LOGGER: StderrLogger = StderrLogger;
    let level = match std::env::var("KSG_LOG").as_deref() {
        Ok("error") => log::LevelFilter::Error,
        Ok("warn") => log::LevelFilter::Warn,
        Ok("debug") => log::LevelFilter::Debug,
        Ok("trace") => log::LevelFilter::Trace,
        _ => log::LevelFilter::Info,
    };
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}

/// The topology of the Java peer (testing/streams-peer): `stream(input).selectKey(..)
/// .groupByKey().count(Materialized.as("counts"))`, exactly as Kafka Streams 4.4 sends it in
/// its joining heartbeat (`scripts/streams-peer.sh print-topology`).
pub fn counts_topology(group: &str, input: &str) -> kafka_streams_group::StreamsTopology {
    use kafka_streams_group::{StreamsTopology, Subtopology, TopicInfo};
    let repartition = format!("{group}-counts-repartition");
    StreamsTopology::new()
        .subtopology(
            Subtopology::new("0")
                .source_topic(input)
                .repartition_sink_topic(repartition.clone()),
        )
        .subtopology(
            Subtopology::new("1")
                .repartition_source_topic(
                    TopicInfo::new(repartition)
                        .config("cleanup.policy", "delete")
                        .config("message.timestamp.type", "CreateTime")
                        .config("retention.ms", "-1")
                        .config("segment.bytes", "52428800"),
                )
                .state_changelog_topic(
                    TopicInfo::new(format!("{group}-counts-changelog"))
                        .config("cleanup.policy", "compact")
                        .config("message.timestamp.type", "CreateTime"),
                ),
        )
}

/// Creates `topic` with `partitions` partitions on the harness broker.
pub fn create_topic(cluster: &Cluster, topic: &str, partitions: i32) {
    kafka_streams_group::admin::create_topics(
        &kafka_streams_group::ClientConfig::new(cluster.plaintext()),
        &[kafka_streams_group::admin::NewTopic::new(topic, partitions)],
        std::time::Duration::from_secs(30),
    )
    .unwrap_or_else(|e| panic!("create topic {topic}: {e}"));
}

/// Runs `scripts/kafka.sh ARGS` on the broker in `run_dir` with `extra_env`, as an operator
/// would by hand; panics (with the script's output) if it fails. Returns how long it took.
/// `KSG_NODES` and `KSG_BROKER_CONFIG` of the test's own environment are not passed on: later
/// commands read the node count from the run dir, and a `start` gets them from `extra_env`.
pub fn kafka_sh(run_dir: &str, args: &[&str], extra_env: &[(&str, String)]) -> std::time::Duration {
    kafka_sh_with(run_dir, args, extra_env, |_| {})
}

/// [`kafka_sh`] that hands the script's process id to `on_spawn` once it runs (so that a
/// [`Watchdog`] can end a `start` that is still running when it fires).
pub fn kafka_sh_with(
    run_dir: &str,
    args: &[&str],
    extra_env: &[(&str, String)],
    on_spawn: impl FnOnce(u32),
) -> std::time::Duration {
    let started = std::time::Instant::now();
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka.sh"))
        .args(args)
        .env("KSG_RUN_DIR", run_dir)
        .env_remove("KSG_NODES")
        .env_remove("KSG_BROKER_CONFIG");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run scripts/kafka.sh: {e}"));
    on_spawn(child.id());
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("scripts/kafka.sh: {e}"));
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in stderr.lines() {
        eprintln!("  {line}");
    }
    assert!(
        out.status.success(),
        "scripts/kafka.sh {args:?} failed ({}): {}{stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    took
}

/// Runs a Kafka command-line tool (`class`, e.g.
/// `org.apache.kafka.tools.streams.StreamsGroupCommand`) from the harness broker's own jars
/// (`scripts/kafka.sh tool`) against `cluster` and returns its standard output; panics with
/// both outputs if the tool fails.
pub fn kafka_tool(cluster: &Cluster, class: &str, args: &[&str]) -> String {
    let out = std::process::Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka.sh"))
        .arg("tool")
        .arg(class)
        .args(args)
        .env("KSG_RUN_DIR", cluster.value("KSG_RUN_DIR"))
        .env("KSG_KAFKA_VERSION", cluster.value("KSG_KAFKA_VERSION"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/kafka.sh tool {class}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{class} failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A live test's watchdog: if the test is still running after `limit`, it prints the step
/// the test was in, runs `on_fire` (e.g. stops the test's own broker) and ends the whole
/// test process with exit code 101, so that a hang fails CI with a message instead of
/// stalling it. Dropping the watchdog (the test finished, or panicked) disarms it.
pub struct Watchdog {
    state: std::sync::Arc<(std::sync::Mutex<(String, bool)>, std::sync::Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// Arms a watchdog for `test`, starting in step "start".
    pub fn start(
        test: &'static str,
        limit: std::time::Duration,
        on_fire: impl FnOnce() + Send + 'static,
    ) -> Watchdog {
        let state = std::sync::Arc::new((
            std::sync::Mutex::new(("start".to_string(), false)),
            std::sync::Condvar::new(),
        ));
        let shared = std::sync::Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name(format!("watchdog-{test}"))
            .spawn(move || {
                let started = std::time::Instant::now();
                let (lock, cvar) = &*shared;
                let mut g = lock.lock().unwrap_or_else(|e| e.into_inner());
                while !g.1 {
                    let left = limit.saturating_sub(started.elapsed());
                    if left.is_zero() {
                        eprintln!(
                            "WATCHDOG: {test} still running after {limit:?}, in step \"{}\"; \
                             ending the test process",
                            g.0
                        );
                        drop(g);
                        on_fire();
                        std::process::exit(101);
                    }
                    g = cvar
                        .wait_timeout(g, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            })
            .expect("spawn the watchdog");
        Watchdog {
            state,
            thread: Some(thread),
        }
    }

    /// Names the step the test is in now (what the watchdog reports if it fires).
    pub fn step(&self, step: impl Into<String>) {
        let step = step.into();
        eprintln!("step: {step}");
        self.state.0.lock().unwrap_or_else(|e| e.into_inner()).0 = step;
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.state.0.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.state.1.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sets dynamic configs of group `group` (e.g. `streams.num.standby.replicas`) as an operator
/// would, with Kafka's own `kafka-configs.sh` class run from the broker's jars
/// (`scripts/kafka.sh tool`); the group need not exist yet. The class moved from
/// `kafka.admin` (4.2) to `org.apache.kafka.tools` (4.4): the one the jars hold is used.
pub fn set_group_configs(cluster: &Cluster, group: &str, configs: &[(&str, &str)]) {
    let libs = std::path::Path::new(cluster.value("KSG_KAFKA_LIBS"));
    let version = cluster.value("KSG_KAFKA_VERSION");
    let tools_jar = libs.join(format!("kafka-tools-{version}.jar"));
    let class = match std::fs::read(&tools_jar) {
        // A jar's central directory names its classes uncompressed.
        Ok(bytes) if contains(&bytes, b"org/apache/kafka/tools/ConfigCommand.class") => {
            "org.apache.kafka.tools.ConfigCommand"
        }
        _ => "kafka.admin.ConfigCommand",
    };
    let pairs = configs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let bootstrap = cluster.plaintext_first();
    kafka_sh(
        cluster.value("KSG_RUN_DIR"),
        &[
            "tool",
            "--kafka",
            version,
            class,
            "--bootstrap-server",
            bootstrap,
            "--entity-type",
            "groups",
            "--entity-name",
            group,
            "--alter",
            "--add-config",
            &pairs,
        ],
        &[],
    );
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
