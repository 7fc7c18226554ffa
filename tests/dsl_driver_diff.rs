//! The DSL parity corpus through two test drivers (issue 23, "must show 2"): every corpus
//! program the runner executes runs through [`DslTestDriver`] here and through Kafka Streams'
//! own `TopologyTestDriver` (`DriverDiff.java` in testing/streams-peer, all programs in one
//! JVM) on the same seeded records, and both must write the same records (key, value,
//! timestamp) in the same order to every topic, the changelogs and repartition topics
//! included, and end with the same store contents.
//!
//! Both drivers have one partition per topic, so "the same order per partition" is the same
//! order per topic. The records are generated here (a fixed seed, [`RECORDS`] per program)
//! and handed to Java in a file: small key and value alphabets so aggregations collide,
//! timestamps that move forward and sometimes back, headers on a fifth of the records (the
//! sinks pass them on), and null keys and null values where the
//! program's Rust types can hold them (a `String` key or value that reaches a user function
//! cannot be null; Java would pass `null` to the lambda instead).
//!
//! Programs the runner refuses are listed, not compared. Ignored by default (needs Java and
//! the built peer); `scripts/test.sh` runs it after `topology_parity`.

#[path = "topology_parity/dsl_corpus.rs"]
mod dsl_corpus;
#[path = "topology_parity/dsl_ops_corpus.rs"]
mod dsl_ops_corpus;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use kafka_streams_group::dsl::DslTopology;
use kafka_streams_group::processing::DslTestDriver;

/// One DSL program of the corpus: its name (as in the Java corpus) and how to build it.
pub type DslProgram = (&'static str, fn() -> DslTopology);

/// Records generated per program.
const RECORDS: usize = 1200;
/// The application id of both drivers (it prefixes internal topics).
const APP: &str = "parity";

/// What a topic of a program is fed with.
#[derive(Clone, Copy)]
struct Feed {
    topic: &'static str,
    null_keys: bool,
    null_values: bool,
    /// Lines of words (for word counting) rather than one word.
    lines: bool,
    /// Keys from the value alphabet: a table joined by a stream whose key became its value.
    value_keys: bool,
}

const fn feed(topic: &'static str, null_keys: bool, null_values: bool) -> Feed {
    Feed {
        topic,
        null_keys,
        null_values,
        lines: false,
        value_keys: false,
    }
}

/// A table keyed like the values of the stream that joins it after a key change.
const fn keyed_by_values(topic: &'static str) -> Feed {
    Feed {
        value_keys: true,
        ..feed(topic, true, true)
    }
}

/// The input topics of each runnable program and the nulls its types admit.
fn feeds(program: &str) -> Option<Vec<Feed>> {
    let plain = || vec![feed("in", false, false)];
    // The key and value reach no user function before an aggregation skips them.
    let nullable = || vec![feed("in", true, true)];
    Some(match program {
        "dsl-filter-to"
        | "dsl-stateless-chain"
        | "dsl-foreach-and-branches"
        | "dsl-group-by-count"
        | "dsl-aggregate"
        | "dsl-named"
        | "dsl-named-grouping-reused"
        | "dsl-unnamed-grouping-twice"
        | "dsl-after-aggregation"
        | "dsl-to-extractor"
        | "dsl-named-processors" => plain(),
        "dsl-count"
        | "dsl-reduce"
        | "dsl-logging-config"
        | "dsl-group-by-key-named-no-repartition" => nullable(),
        "dsl-wordcount" => vec![Feed {
            lines: true,
            ..feed("lines", false, false)
        }],
        // mapValues reads only the value.
        "dsl-multi-topic-and-two-streams" => vec![
            feed("b", true, false),
            feed("a", true, false),
            feed("c", true, false),
            feed("other", false, false),
        ],
        // flatMapValues reads only the value; lines put several words under one key.
        "dsl-two-key-changes-one-topic" => vec![Feed {
            lines: true,
            ..feed("in", false, false)
        }],
        "dsl-flat-map-values-count" => vec![Feed {
            lines: true,
            ..feed("in", true, false)
        }],
        // A table skips null keys; a null value is a delete (tombstone).
        "dsl-table-to-stream" | "dsl-table-materialized-to-stream" => {
            vec![feed("t", true, true)]
        }
        // The filter after toStream reads the value: no tombstones.
        "dsl-table-materialized" => vec![feed("t", true, false)],
        // Joins: the stream side's closures read keys and values (none null); tables take
        // null keys (skipped) and tombstones. After a key change to the value, the tables
        // are keyed from the value alphabet, so the joins hit and miss.
        "ops-stream-table-join" => vec![feed("in", false, false), feed("t", true, true)],
        "ops-stream-table-left-join-named-after-key-change" => {
            vec![feed("in", false, false), keyed_by_values("t")]
        }
        "ops-stream-join-aggregated-table" => {
            vec![feed("clicks", false, false), feed("users", true, true)]
        }
        "ops-two-joins-one-key-change" => vec![
            feed("in", false, false),
            keyed_by_values("t"),
            keyed_by_values("u"),
        ],
        "ops-named-then-unnamed-join-one-key-change" => {
            vec![feed("in", false, false), keyed_by_values("t")]
        }
        // Table operations never pass a null to a user function (a tombstone stays null).
        "ops-table-filter"
        | "ops-table-filter-not-materialized"
        | "ops-table-filter-unnamed-materialized"
        | "ops-table-map-values"
        | "ops-table-map-values-materialized"
        | "ops-table-group-by-count"
        | "ops-table-group-by-named-reduce-and-aggregate"
        | "ops-table-chain-group-by-materialized" => vec![feed("t", true, true)],
        "ops-table-table-join" | "ops-table-table-left-join-named-materialized" => {
            vec![feed("a", true, true), feed("b", true, true)]
        }
        // toTable skips null keys and deletes on null values; repartition and count read
        // neither.
        "ops-to-table" | "ops-repartition" | "ops-repartition-named-partitions" => {
            vec![feed("in", true, true)]
        }
        // selectKey, map and the branch predicates take the key and the value (a String
        // cannot be null).
        "ops-to-table-after-key-change"
        | "ops-to-table-unnamed-after-key-change"
        | "ops-split"
        | "ops-split-named"
        | "ops-split-no-default-then-group"
        | "ops-multiple-repartitions" => vec![feed("in", false, false)],
        // mapValues reads the value of b; a goes straight to the sink.
        "ops-merge" => vec![feed("a", true, true), feed("b", true, false)],
        // selectKey takes a's key and value; the count skips b's nulls.
        "ops-merge-named-then-count" => vec![feed("a", false, false), feed("b", true, true)],
        "ops-to-table-joined" => vec![feed("in", false, false), feed("t", true, true)],
        // Logging disabled: map reads the key and the value.
        "dsl-count-materialized-unnamed" => plain(),
        // mapValues reads the events' values; the table takes null keys and tombstones.
        "dsl-table-named-unlogged" => vec![feed("events", true, false), feed("t", true, true)],
        // topology.optimization=all: the source table's store restores from its topic, and
        // repartition steps after one key change are merged.
        "ops-table-source-reuse@all" | "ops-table-group-by@all" => vec![feed("t", true, true)],
        "ops-stream-table-join@all" => vec![feed("in", false, false), feed("t", true, true)],
        "ops-table-table-join@all" => vec![feed("a", true, true), feed("b", true, true)],
        "ops-wordcount@all" => vec![Feed {
            lines: true,
            ..feed("lines", false, false)
        }],
        "ops-two-aggregations-one-key-change@all"
        | "ops-branches-after-key-change@all"
        | "ops-value-change-blocks-merging@all"
        | "ops-explicit-repartition@all"
        | "ops-multiple-repartitions@all" => plain(),
        "ops-join-and-count-after-key-change@all" => {
            vec![feed("in", false, false), keyed_by_values("t")]
        }
        "ops-merge-two-key-changes-then-count@all" => {
            vec![feed("a", false, false), feed("b", false, false)]
        }
        // b reaches the count without a user function.
        "ops-merge-named-then-count@all" | "ops-key-change-merged-and-direct@all" => {
            vec![feed("a", false, false), feed("b", true, true)]
        }
        _ => return None,
    })
}

/// splitmix64: the same numbers on every platform, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len() as u64) as usize]
    }
}

/// Headers: name, value (`None`: null).
type Headers = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// One input record: topic, key, value, timestamp, headers.
type Input = (&'static str, Option<Vec<u8>>, Option<Vec<u8>>, i64, Headers);

const KEYS: [&str; 5] = ["k0", "k1", "k2", "k3", "k4"];
const VALUES: [&str; 6] = ["a", "b", "c", "a", "ab", ""];
const WORDS: [&str; 3] = ["a", "b", "c"];

/// [`RECORDS`] records over `feeds`, from a seed of the program's name.
fn generate(program: &str, feeds: &[Feed]) -> Vec<Input> {
    let seed = program.bytes().fold(0x1071_0023_u64, |h, b| {
        h.wrapping_mul(31).wrapping_add(b.into())
    });
    let mut rng = Rng(seed);
    let mut ts: i64 = 1_000;
    (0..RECORDS)
        .map(|_| {
            let f = feeds[rng.below(feeds.len() as u64) as usize];
            // Mostly forward, about a third of the steps back (never below 0).
            ts = (ts + rng.below(81) as i64 - 30).max(0);
            let key = match f.null_keys && rng.chance(5) {
                true => None,
                false if f.value_keys => Some(rng.pick(&VALUES).as_bytes().to_vec()),
                false => Some(rng.pick(&KEYS).as_bytes().to_vec()),
            };
            let value = if f.null_values && rng.chance(8) {
                None
            } else if f.lines {
                let n = rng.below(4);
                let mut line = (0..n)
                    .map(|_| rng.pick(&WORDS))
                    .collect::<Vec<_>>()
                    .join(" ");
                if rng.chance(10) {
                    line.push(' ');
                }
                if rng.chance(10) {
                    line = line.replacen(' ', "  ", 1);
                }
                Some(line.into_bytes())
            } else {
                Some(rng.pick(&VALUES).as_bytes().to_vec())
            };
            // A fifth of the records carry headers, a few with a null value.
            let headers = match rng.below(20) {
                0..=2 => vec![(b"seq".to_vec(), Some(ts.to_string().into_bytes()))],
                3 => vec![
                    (b"h".to_vec(), None),
                    (b"h".to_vec(), Some(b"again".to_vec())),
                ],
                _ => Vec::new(),
            };
            (f.topic, key, value, ts, headers)
        })
        .collect()
}

/// Headers as DriverDiff.java writes them: `name:value` in hex, `,` between, `-` for a null
/// value or no headers.
fn headers_text(headers: &[(Vec<u8>, Option<Vec<u8>>)]) -> String {
    if headers.is_empty() {
        return "-".to_string();
    }
    let each: Vec<String> = headers
        .iter()
        .map(|(k, v)| format!("{}:{}", hex(Some(k)), hex(v.as_deref())))
        .collect();
    each.join(",")
}

fn hex(b: Option<&[u8]>) -> String {
    match b {
        None => "-".to_string(),
        Some(b) => b.iter().fold(String::new(), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        }),
    }
}

/// The Rust driver's lines for one program, in DriverDiff.java's form.
fn run_rust(program: &DslTopology, inputs: &[Input]) -> Result<Vec<String>, String> {
    let mut d = DslTestDriver::new(program, APP).map_err(|e| e.to_string())?;
    for (i, (topic, k, v, ts, h)) in inputs.iter().enumerate() {
        d.pipe_input_with_headers(topic, k.as_deref(), v.as_deref(), *ts, h.clone())
            .map_err(|e| format!("record {i} ({topic}): {e}"))?;
    }
    let mut topics: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for topic in d.output_topics() {
        let lines = d.read_output(&topic).into_iter().map(|r| {
            let (k, v) = (hex(r.key.as_deref()), hex(r.value.as_deref()));
            let h = headers_text(&r.headers);
            format!("out {topic} {k} {v} {} {h}", r.timestamp)
        });
        topics.entry(topic.clone()).or_default().extend(lines);
    }
    let stores = d.store_names();
    for store in &stores {
        let topic = format!("{APP}-{store}-changelog");
        let lines: Vec<String> = d
            .take_changelog(store)
            .into_iter()
            .map(|c| {
                let (k, v) = (hex(Some(&c.key)), hex(c.value.as_deref()));
                // Kafka Streams writes changelog records without headers.
                format!("out {topic} {k} {v} {} -", c.timestamp)
            })
            .collect();
        if !lines.is_empty() {
            topics.entry(topic).or_default().extend(lines);
        }
    }
    let mut lines: Vec<String> = topics.into_values().flatten().collect();
    for store in &stores {
        for (k, v, ts) in d.store_entries(store) {
            lines.push(format!(
                "store {store} {} {} {ts}",
                hex(Some(&k)),
                hex(Some(&v))
            ));
        }
    }
    Ok(lines)
}

/// Runs DriverDiff.java once over `input` (the file's text): each program's lines.
fn run_java(input: &str) -> BTreeMap<String, Vec<String>> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join("dsl_driver_diff.input");
    std::fs::write(&file, input).expect("write the input file");
    let script = std::env::var_os("KSG_STREAMS_PEER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/streams-peer.sh")
        });
    let cp = Command::new("bash")
        .arg(&script)
        .arg("classpath")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} classpath: {e}", script.display()));
    assert!(cp.status.success(), "streams-peer.sh classpath failed");
    let classpath = String::from_utf8(cp.stdout).expect("utf-8 classpath");
    let out = Command::new("java")
        .args([
            "-Xmx512m",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            classpath.trim(),
            "dev.ksg.peer.DriverDiff",
        ])
        .arg(&file)
        .output()
        .expect("cannot start java");
    assert!(
        out.status.success(),
        "DriverDiff exited {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8 output");
    let mut programs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("### ") {
            current = Some(name.to_string());
            programs.entry(name.to_string()).or_default();
        } else if let Some(name) = &current {
            programs
                .get_mut(name)
                .expect("a program entry")
                .push(line.to_string());
        }
    }
    programs
}

/// The first difference between two programs' lines, with a little context.
fn difference(name: &str, ours: &[String], theirs: &[String]) -> Option<String> {
    if ours == theirs {
        return None;
    }
    let i = ours
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    let from = i.saturating_sub(3);
    let show = |l: &[String]| l[from.min(l.len())..(i + 3).min(l.len())].join("\n  ");
    Some(format!(
        "{name}: line {} differs ({} rust lines, {} java lines)\n rust:\n  {}\n java:\n  {}",
        i + 1,
        ours.len(),
        theirs.len(),
        show(ours),
        show(theirs)
    ))
}

#[test]
#[ignore = "needs Java and testing/streams-peer (scripts/test.sh runs it)"]
fn dsl_programs_match_topology_test_driver() {
    let started = Instant::now();
    let mut runnable = Vec::new();
    let mut refused = Vec::new();
    for (name, build) in dsl_corpus::programs()
        .into_iter()
        .chain(dsl_ops_corpus::programs())
    {
        let program = build();
        match DslTestDriver::new(&program, APP) {
            Ok(_) => runnable.push((name, program)),
            Err(e) => refused.push(format!("{name}: {e}")),
        }
    }
    let mut input = String::new();
    let mut inputs = Vec::new();
    let mut failures = Vec::new();
    // The programs with a feed, in the order of `inputs`.
    let mut fed = Vec::new();
    for (name, program) in &runnable {
        let Some(f) = feeds(name) else {
            failures.push(format!(
                "{name}: runs, but the test has no input feed for it"
            ));
            continue;
        };
        let records = generate(name, &f);
        let _ = writeln!(input, "### {name}");
        for (topic, k, v, ts, h) in &records {
            let (k, v, h) = (hex(k.as_deref()), hex(v.as_deref()), headers_text(h));
            let _ = writeln!(input, "{topic}\t{k}\t{v}\t{ts}\t{h}");
        }
        inputs.push(records);
        fed.push((name, program));
    }
    let java_started = Instant::now();
    let java = run_java(&input);
    let java_took = java_started.elapsed();
    let mut lines = 0;
    for ((name, program), records) in fed.into_iter().zip(&inputs) {
        let ours = run_rust(program, records).unwrap_or_else(|e| vec![format!("error {e}")]);
        let theirs = java.get(*name).cloned().unwrap_or_default();
        lines += theirs.len();
        failures.extend(difference(name, &ours, &theirs));
    }
    eprintln!(
        "refused by the runner ({}):\n  {}",
        refused.len(),
        refused.join("\n  ")
    );
    eprintln!(
        "{} programs x {RECORDS} records through DslTestDriver and TopologyTestDriver \
         (Kafka Streams 4.4.0): {lines} output and store lines, {} differences; \
         java {:.1} s, total {:.1} s",
        inputs.len(),
        failures.len(),
        java_took.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        inputs.len() >= 65,
        "only {} programs ran: the runner refuses more of the corpus than before",
        inputs.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
