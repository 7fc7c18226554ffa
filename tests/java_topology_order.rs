//! Copartition groups in Java's order (issue 13), checked against Kafka Streams itself.
//!
//! Generates a few hundred topologies with random topic names (including families of names
//! with one `String.hashCode`, which share a hash bucket), 1–3 copartition groups of 2–6
//! source and repartition topics over one or two subtopologies (plus a subtopology writing the
//! repartition topics), plus uncopartitioned source topics; has Kafka Streams
//! 4.4.0 compute its joining-heartbeat topology for each (`scripts/streams-peer.sh
//! topology-order`, `TopologyOrder.java`: the client's own `initBrokerTopology` and
//! `HeartbeatState` code), builds the same topology with this crate, and compares the two
//! field by field. Runs once per Java runtime: the default `java`, and every binary in
//! `KSG_JAVA_ALT` (colon-separated; `scripts/test.sh` adds a JDK 19+ if it finds one, since the
//! group order differs between JDK 17 and 19+ for a few sizes).
//!
//! Ignored by default (needs Java and the built peer); `scripts/test.sh` runs it in its
//! conformance phase. `KSG_TOPOLOGY_SEED` replays one seed.

#[path = "support/heartbeat_json.rs"]
mod heartbeat_json;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use heartbeat_json::{first_difference, to_json};
use kafka_streams_group::{JavaHashSetSizing, StreamsTopology, Subtopology, TopicInfo};
use serde_json::Value;

const TOPOLOGIES: usize = 300;

/// A tiny deterministic generator (SplitMix64), so a seed replays the same topologies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}

/// A legal, fresh topic name: random characters, or (a third of the time) a member of a
/// family of names that all have the same `String.hashCode` ("Aa" and "BB" hash alike).
fn topic_name(rng: &mut Rng, used: &mut BTreeSet<String>) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
    loop {
        let name = if rng.below(3) == 0 {
            let blocks = rng.range(2, 4);
            let prefix = ["", "t.", "x-"][rng.below(3)];
            let mut s = prefix.to_string();
            for _ in 0..blocks {
                s.push_str(if rng.below(2) == 0 { "Aa" } else { "BB" });
            }
            s
        } else {
            let len = rng.range(1, 14);
            (0..len)
                .map(|_| CHARS[rng.below(CHARS.len())] as char)
                .collect()
        };
        if name != "." && name != ".." && used.insert(name.clone()) {
            return name;
        }
    }
}

/// One generated topology: per subtopology, its groups (`true` = copartitioned).
type Spec = Vec<Vec<(bool, Vec<String>)>>;

fn generate(rng: &mut Rng) -> Spec {
    let mut used = BTreeSet::new();
    let subtopologies = rng.range(1, 2);
    let mut spec: Spec = vec![Vec::new(); subtopologies];
    for _ in 0..rng.range(1, 3) {
        let n = rng.range(2, 6);
        // A quarter are repartition topics (`@`); they come after the source topics, the order
        // in which a CopartitionGroup (source indexes, then repartition indexes) declares them.
        let mut topics: Vec<String> = (0..n)
            .map(|_| {
                let name = topic_name(rng, &mut used);
                if rng.below(4) == 0 {
                    format!("@{name}")
                } else {
                    name
                }
            })
            .collect();
        topics.sort_by_key(|t| t.starts_with('@'));
        spec[rng.below(subtopologies)].push((true, topics));
    }
    for sub in &mut spec {
        // Sometimes a source topic outside every group, to shift the indexes.
        if sub.is_empty() || rng.below(2) == 0 {
            let at = rng.below(sub.len() + 1);
            sub.insert(at, (false, vec![topic_name(rng, &mut used)]));
        }
    }
    spec
}

fn spec_line(spec: &Spec) -> String {
    spec.iter()
        .map(|sub| {
            sub.iter()
                .map(|(co, topics)| format!("{}{}", if *co { "" } else { "!" }, topics.join(",")))
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// The wire name of a spec topic: `@name` is the internal topic `topology-order-name`.
fn wire_name(topic: &str) -> String {
    match topic.strip_prefix('@') {
        Some(name) => format!("topology-order-{name}"),
        None => topic.to_string(),
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("a JSON list")
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

fn topic_infos(v: &Value) -> Vec<TopicInfo> {
    v.as_array()
        .expect("a JSON list")
        .iter()
        .map(|t| {
            let mut info = TopicInfo::new(t["name"].as_str().expect("name"))
                .partitions(t["partitions"].as_i64().expect("partitions") as i32)
                .replication_factor(t["replicationFactor"].as_i64().expect("rf") as i16);
            for kv in t["topicConfigs"].as_array().expect("configs") {
                info = info.config(
                    kv["key"].as_str().expect("key"),
                    kv["value"].as_str().expect("value"),
                );
            }
            info
        })
        .collect()
}

fn shuffle<T>(rng: &mut Rng, v: &mut [T]) {
    for j in (1..v.len()).rev() {
        v.swap(j, rng.below(j + 1));
    }
}

/// This crate's topology for `spec`: each subtopology's lists as Java sent them, but shuffled
/// (`canonical` must restore the order), topic configs reversed, and the copartition groups
/// declared by name, in spec order, on the subtopology that reads them. Subtopologies are
/// declared in reverse.
fn rust_topology(
    spec: &Spec,
    java: &Value,
    sizing: JavaHashSetSizing,
    rng: &mut Rng,
) -> StreamsTopology {
    let mut topology = StreamsTopology::new().with_java_hash_set_sizing(sizing);
    let groups: Vec<Vec<String>> = spec
        .iter()
        .flatten()
        .filter(|(co, _)| *co)
        .map(|(_, topics)| topics.iter().map(|t| wire_name(t)).collect())
        .collect();
    for js in java["subtopologies"]
        .as_array()
        .expect("subtopologies")
        .iter()
        .rev()
    {
        let mut sources = strings(&js["sourceTopics"]);
        let mut sinks = strings(&js["repartitionSinkTopics"]);
        let mut reps = topic_infos(&js["repartitionSourceTopics"]);
        let mut changelogs = topic_infos(&js["stateChangelogTopics"]);
        shuffle(rng, &mut sources);
        shuffle(rng, &mut sinks);
        shuffle(rng, &mut reps);
        shuffle(rng, &mut changelogs);
        let mut s = Subtopology::new(js["subtopologyId"].as_str().expect("id"));
        for t in &sources {
            s = s.source_topic(t.clone());
        }
        for t in &sinks {
            s = s.repartition_sink_topic(t.clone());
        }
        for mut t in reps {
            t.topic_configs.reverse();
            s = s.repartition_source_topic(t);
        }
        for mut t in changelogs {
            t.topic_configs.reverse();
            s = s.state_changelog_topic(t);
        }
        let reads = |t: &String| {
            s.source_topics.contains(t) || s.repartition_source_topics.iter().any(|r| &r.name == t)
        };
        let mine: Vec<&Vec<String>> = groups.iter().filter(|g| g.iter().all(reads)).collect();
        for g in mine {
            s = s.copartition_topics(g).expect("copartition_topics");
        }
        topology = topology.subtopology(s);
    }
    topology
}

/// Runs the oracle with `java` on every spec; returns the Java version and one JSON per spec.
fn run_java(java: &str, lines: &[String]) -> (String, Vec<Value>) {
    let script = std::env::var_os("KSG_STREAMS_PEER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/streams-peer.sh")
        });
    let mut child = Command::new("bash")
        .arg(&script)
        .arg("topology-order")
        .env("KSG_JAVA", java)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {} topology-order: {e}", script.display()));
    let mut stdin = child.stdin.take().expect("stdin");
    let input = lines.join("\n") + "\n";
    let writer = std::thread::spawn(move || {
        stdin.write_all(input.as_bytes()).expect("write specs");
    });
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let version = out
        .next()
        .and_then(Result::ok)
        .and_then(|l| l.strip_prefix("java ").map(str::to_string))
        .unwrap_or_else(|| panic!("{java}: the oracle printed no `java <version>` line"));
    let mut results = Vec::new();
    for (line, spec) in out.zip(lines) {
        let line = line.expect("read oracle output");
        let value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("{java}: spec {spec:?} -> {line:?} ({e})"));
        results.push(value);
    }
    writer.join().expect("writer thread");
    let status = child.wait().expect("wait for the oracle");
    assert!(status.success(), "{java}: oracle exited {status}");
    assert_eq!(
        results.len(),
        lines.len(),
        "{java}: oracle answered too few topologies"
    );
    (version, results)
}

#[test]
#[ignore = "needs Java and testing/streams-peer (scripts/test.sh runs it)"]
fn copartition_order_matches_kafka_streams() {
    let seed = std::env::var("KSG_TOPOLOGY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x1307_2026_u64);
    let mut rng = Rng(seed);
    let specs: Vec<Spec> = (0..TOPOLOGIES).map(|_| generate(&mut rng)).collect();
    let lines: Vec<String> = specs.iter().map(spec_line).collect();

    let mut javas = vec!["java".to_string()];
    if let Ok(alt) = std::env::var("KSG_JAVA_ALT") {
        javas.extend(alt.split(':').filter(|s| !s.is_empty()).map(str::to_string));
    }
    for java in &javas {
        let (version, results) = run_java(java, &lines);
        let major: u32 = version
            .split('.')
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let sizing = if major >= 19 {
            JavaHashSetSizing::Jdk19AndLater
        } else {
            JavaHashSetSizing::Jdk11To18
        };
        let (mut failures, mut unsorted, mut groups) = (Vec::new(), 0, 0);
        for ((spec, line), theirs) in specs.iter().zip(&lines).zip(&results) {
            let ours = rust_topology(spec, theirs, sizing, &mut rng)
                .canonical()
                .unwrap_or_else(|e| panic!("canonical({line}): {e}"));
            if let Some(d) = first_difference(&to_json(&ours), theirs, "topology") {
                failures.push(format!("{line}\n    {d}"));
            }
            // How often Java's order is not the sorted one: the test's power to fail.
            for s in &ours.subtopologies {
                groups += s.copartition_groups.len();
                let mut sorted = s.copartition_groups.clone();
                sorted
                    .iter_mut()
                    .for_each(|g| g.source_topics.sort_unstable());
                sorted.sort();
                unsorted += usize::from(sorted != s.copartition_groups);
            }
        }
        eprintln!(
            "{java} (Java {version}, {sizing:?}): {} topologies, {groups} copartition groups, \
             {unsorted} subtopologies whose Java order is not sorted, {} differences (seed {seed})",
            specs.len(),
            failures.len()
        );
        assert!(
            failures.is_empty(),
            "{} of {} topologies differ from Java {version} ({java}); first ones:\n{}",
            failures.len(),
            specs.len(),
            failures
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
        assert!(
            unsorted >= TOPOLOGIES / 10,
            "only {unsorted} topologies where Java's order is not sorted: the generator lost its teeth"
        );
    }
}
