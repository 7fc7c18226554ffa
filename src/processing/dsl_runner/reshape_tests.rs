//! `split`/`branch`, `merge`, `repartition` and `toTable` through the test driver, with
//! outputs worked out by hand from Java's `KStreamBranch`, `KStreamPassThrough`, the
//! repartition step (null keys dropped, written and read back) and `KTableSource`.

use super::*;
use crate::dsl::{Branched, Materialized, Repartitioned, StreamsBuilder};
use crate::processing::DslTestDriver;

fn pairs(d: &mut DslTestDriver, topic: &str) -> Vec<(String, String, i64)> {
    d.read_typed::<String, String>(topic).unwrap()
}

fn pipe(d: &mut DslTestDriver, topic: &str, k: &str, v: &str, ts: i64) {
    d.pipe_input(topic, Some(k.as_bytes()), Some(v.as_bytes()), ts)
        .unwrap();
}

fn kv(k: &str, v: &str, ts: i64) -> (String, String, i64) {
    (k.to_string(), v.to_string(), ts)
}

/// A record goes to the first branch whose predicate holds, else to the default branch;
/// a record matching two predicates goes to the first only.
#[test]
fn split_sends_each_record_to_its_first_matching_branch() {
    let builder = StreamsBuilder::new();
    let branches = builder
        .stream::<String, String>("in")
        .split()
        .branch(|_, v: &String| v.starts_with('a'))
        .branch_with(|_, v: &String| v.len() > 3, Branched::named("long"))
        .default_branch();
    let names: Vec<&str> = branches.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "KSTREAM-BRANCH-00000000010",
            "KSTREAM-BRANCH-00000000011",
            "KSTREAM-BRANCH-0000000001long"
        ]
    );
    for (name, out) in [
        ("KSTREAM-BRANCH-00000000011", "a"),
        ("KSTREAM-BRANCH-0000000001long", "long"),
        ("KSTREAM-BRANCH-00000000010", "rest"),
    ] {
        branches[name].to(out);
    }
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "in", "k1", "apple", 1); // both predicates: the first only
    pipe(&mut d, "in", "k2", "bread", 2);
    pipe(&mut d, "in", "k3", "ab", 3);
    pipe(&mut d, "in", "k4", "xy", 4);
    assert_eq!(
        pairs(&mut d, "a"),
        [kv("k1", "apple", 1), kv("k3", "ab", 3)]
    );
    assert_eq!(pairs(&mut d, "long"), [kv("k2", "bread", 2)]);
    assert_eq!(pairs(&mut d, "rest"), [kv("k4", "xy", 4)]);
}

/// Without a default branch a record no predicate takes is dropped.
#[test]
fn split_without_default_branch_drops_the_rest() {
    let builder = StreamsBuilder::new();
    let branches = builder
        .stream::<String, String>("in")
        .split()
        .branch(|_, v: &String| v == "x")
        .no_default_branch();
    assert_eq!(branches.len(), 1);
    for b in branches.values() {
        b.to("x");
    }
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "in", "k1", "y", 1);
    pipe(&mut d, "in", "k2", "x", 2);
    assert_eq!(pairs(&mut d, "x"), [kv("k2", "x", 2)]);
}

/// `merge`: the records of both streams, each when it arrives.
#[test]
fn merge_forwards_both_streams() {
    let builder = StreamsBuilder::new();
    let a = builder.stream::<String, String>("a");
    let b = builder
        .stream::<String, String>("b")
        .map_values(|v: &String| v.to_uppercase());
    a.merge(&b).to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "a", "k1", "x", 1);
    pipe(&mut d, "b", "k2", "y", 2);
    pipe(&mut d, "a", "k3", "z", 3);
    assert_eq!(
        pairs(&mut d, "out"),
        [kv("k1", "x", 1), kv("k2", "Y", 2), kv("k3", "z", 3)]
    );
}

/// `repartition`: a null key is dropped, the rest is written to the repartition topic with
/// the types' serdes and read back by the next subtopology.
#[test]
fn repartition_writes_and_reads_back_the_records() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<Option<String>, String>("in")
        .repartition_with(Repartitioned::named("r").with_partitions(3))
        .map_values(|v: &String| format!("{v}!"))
        .to("out");
    let program = builder.build().unwrap();
    let mut d = DslTestDriver::new(&program, "app").unwrap();
    pipe(&mut d, "in", "k1", "x", 1);
    d.pipe_input("in", None, Some(b"lost"), 2).unwrap();
    pipe(&mut d, "in", "k2", "y", 3);
    let written = d.read_output("app-r-repartition");
    let written: Vec<_> = written
        .iter()
        .map(|r| (r.key.clone(), r.value.clone(), r.timestamp))
        .collect();
    assert_eq!(
        written,
        [
            (Some(b"k1".to_vec()), Some(b"x".to_vec()), 1),
            (Some(b"k2".to_vec()), Some(b"y".to_vec()), 3)
        ]
    );
    assert_eq!(pairs(&mut d, "out"), [kv("k1", "x!", 1), kv("k2", "y!", 3)]);
    let topology = format!(
        "{:?}",
        DslProgram::lower(&program, &options())
            .unwrap()
            .streams_topology()
    );
    assert!(topology.contains("r-repartition"), "{topology}");
}

fn options() -> HeartbeatTopologyOptions {
    HeartbeatTopologyOptions::new("app")
}

/// `toTable` materialized by name: the store holds the latest value per key (a null value
/// deletes it); every update is forwarded; after a key change the stream is repartitioned
/// first.
#[test]
fn to_table_keeps_the_latest_value_per_key() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, Option<String>>("in")
        .select_key(|k: &String, _| k.to_uppercase())
        .to_table_with(None, Materialized::named("latest"))
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "in", "a", "1", 1);
    pipe(&mut d, "in", "b", "2", 2);
    pipe(&mut d, "in", "a", "3", 3);
    d.pipe_input("in", Some(b"b"), None, 4).unwrap();
    let out: Vec<_> = d.read_typed::<String, Option<String>>("out").unwrap();
    assert_eq!(
        out,
        [
            ("A".to_string(), Some("1".to_string()), 1),
            ("B".to_string(), Some("2".to_string()), 2),
            ("A".to_string(), Some("3".to_string()), 3),
            ("B".to_string(), None, 4)
        ]
    );
    let store = d.store_entries("latest");
    assert_eq!(store.len(), 1);
    assert_eq!(&store[0].0, b"A");
    assert!(store[0].1.ends_with(b"3"), "{store:?}");
    assert_eq!(store[0].2, 3);
    assert_eq!(
        d.read_output("app-KSTREAM-TOTABLE-0000000002-repartition")
            .len(),
        4
    );
}
