//! The topology builder and the DSL against Kafka Streams' own `InternalTopologyBuilder`
//! (issues 22 and 23), no broker needed.
//!
//! `TopologyParity.java` (testing/streams-peer) builds a corpus of topologies with Kafka
//! Streams 4.4.0 and prints each one's `Topology#describe()` and the joining-heartbeat topology
//! the Java client computes for it (application.id `parity`). This test builds the same
//! topologies, under the same names, with [`TopologyBuilder`] (Processor API) and the crate's
//! DSL, and requires both outputs to be identical: the describe text byte for byte, the
//! heartbeat topology field by field (list order included). Every program of the Java corpus
//! must have a Rust twin and vice versa.
//!
//! Ignored by default (needs Java and the built peer); `scripts/test.sh` runs it in its
//! conformance phase.

#[path = "topology_parity/dsl_corpus.rs"]
mod dsl_corpus;
#[path = "topology_parity/dsl_ops_corpus.rs"]
mod dsl_ops_corpus;
#[path = "support/heartbeat_json.rs"]
mod heartbeat_json;
#[path = "topology_parity/papi_corpus.rs"]
mod papi_corpus;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use heartbeat_json::{first_difference, to_json};
use kafka_streams_group::dsl::DslTopology;
use kafka_streams_group::topology::{HeartbeatTopologyOptions, TopologyBuilder};
use kafka_streams_group::JavaHashSetSizing;
use serde_json::Value;

/// One program of the corpus: its name (as in the Java corpus) and how to build it.
pub type Program = (&'static str, fn() -> TopologyBuilder);

/// One DSL program of the corpus (`tests/dsl_driver_diff.rs` runs these too).
pub type DslProgram = (&'static str, fn() -> DslTopology);

/// What the Java side printed for one program.
struct JavaOutput {
    describe: String,
    heartbeat: Result<Value, String>,
}

fn run_java() -> (String, BTreeMap<String, JavaOutput>) {
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
            "-Xmx256m",
            "-cp",
            classpath.trim(),
            "dev.ksg.peer.TopologyParity",
        ])
        .output()
        .expect("cannot start java");
    assert!(
        out.status.success(),
        "TopologyParity exited {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8 output");
    let mut lines = text.lines();
    let version = lines
        .next()
        .and_then(|l| l.strip_prefix("java "))
        .expect("a `java <version>` line")
        .to_string();
    let mut programs = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in lines {
        if let Some(name) = line.strip_prefix("### ") {
            current = Some((name.to_string(), String::new()));
        } else if let Some(rest) = line
            .strip_prefix("json ")
            .map(|j| Ok(serde_json::from_str(j).expect("heartbeat JSON")))
            .or_else(|| line.strip_prefix("error ").map(|e| Err(e.to_string())))
        {
            let (name, describe) = current.take().expect("a ### line before json/error");
            programs.insert(
                name,
                JavaOutput {
                    describe,
                    heartbeat: rest,
                },
            );
        } else if let Some((_, describe)) = current.as_mut() {
            describe.push_str(line);
            describe.push('\n');
        }
    }
    (version, programs)
}

/// The first line where two texts differ, with both lines.
fn text_difference(ours: &str, theirs: &str) -> Option<String> {
    if ours == theirs {
        return None;
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
    let i = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    Some(format!(
        "describe() line {}: rust {:?} / java {:?}\n--- rust:\n{ours}--- java:\n{theirs}",
        i + 1,
        a.get(i),
        b.get(i)
    ))
}

fn compare(
    name: &str,
    builder: &TopologyBuilder,
    java: &JavaOutput,
    sizing: JavaHashSetSizing,
) -> Vec<String> {
    let mut failures = Vec::new();
    if let Some(d) = text_difference(&builder.describe().to_string(), &java.describe) {
        failures.push(format!("{name}: {d}"));
    }
    let mut options = HeartbeatTopologyOptions::new("parity");
    options.java_hash_set_sizing = sizing;
    match (builder.streams_topology(&options), &java.heartbeat) {
        (Ok(ours), Ok(theirs)) => {
            if let Some(d) = first_difference(&to_json(&ours), theirs, "topology") {
                failures.push(format!("{name}: heartbeat {d}"));
            }
        }
        (ours, theirs) => failures.push(format!(
            "{name}: heartbeat rust {:?} / java {:?}",
            ours.map(|_| "a topology"),
            theirs.as_ref().map(|_| "a topology")
        )),
    }
    failures
}

#[test]
#[ignore = "needs Java and testing/streams-peer (scripts/test.sh runs it)"]
fn topologies_match_kafka_streams() {
    let (version, java) = run_java();
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
    let dsl = dsl_corpus::programs()
        .into_iter()
        .chain(dsl_ops_corpus::programs())
        .map(|(name, build)| (name, build().topology().clone()));
    let programs: Vec<(&str, TopologyBuilder)> = papi_corpus::programs()
        .into_iter()
        .map(|(name, build)| (name, build()))
        .chain(dsl)
        .collect();
    let ours: BTreeSet<&str> = programs.iter().map(|(n, _)| *n).collect();
    let theirs: BTreeSet<&str> = java.keys().map(String::as_str).collect();
    assert_eq!(
        ours, theirs,
        "the Rust and Java corpora name different programs"
    );
    let mut failures = Vec::new();
    for (name, builder) in &programs {
        failures.extend(compare(name, builder, &java[*name], sizing));
    }
    eprintln!(
        "{} programs against Kafka Streams 4.4.0 on Java {version}: {} differences",
        programs.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
