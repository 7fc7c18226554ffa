//! `KTable` `filter` / `filterNot` / `mapValues` through the test driver, with outputs worked
//! out by hand from Java's `KTableFilter` and `KTableMapValues` (no operation downstream asks
//! for old values, so each update forwards `Change(new, null)`: `toStream` sees the new value,
//! null included).

use crate::dsl::{Materialized, StreamsBuilder};
use crate::processing::DslTestDriver;

fn pipe(d: &mut DslTestDriver, topic: &str, k: &str, v: Option<&str>, ts: i64) {
    d.pipe_input(topic, Some(k.as_bytes()), v.map(str::as_bytes), ts)
        .unwrap();
}

fn out(d: &mut DslTestDriver) -> Vec<(String, Option<String>, i64)> {
    d.read_typed::<String, Option<String>>("out").unwrap()
}

fn row(k: &str, v: Option<&str>, ts: i64) -> (String, Option<String>, i64) {
    (k.to_string(), v.map(str::to_string), ts)
}

/// An unmaterialized filter: a row it rejects is forwarded as a tombstone (whether or not
/// the key passed before), a source tombstone stays a tombstone; no store is written.
#[test]
fn table_filter_forwards_rejected_rows_as_tombstones() {
    let builder = StreamsBuilder::new();
    builder
        .table::<String, Option<String>>("t")
        .filter(|_, v: &Option<String>| v.as_ref().is_some_and(|v| v.len() > 1))
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "t", "a", Some("xx"), 1);
    pipe(&mut d, "t", "b", Some("y"), 2);
    pipe(&mut d, "t", "a", Some("z"), 3);
    pipe(&mut d, "t", "b", None, 4);
    pipe(&mut d, "t", "c", Some("long"), 5);
    assert_eq!(
        out(&mut d),
        [
            row("a", Some("xx"), 1),
            row("b", None, 2),
            row("a", None, 3),
            row("b", None, 4),
            row("c", Some("long"), 5)
        ]
    );
}

/// A materialized `filterNot`: its store holds the rows it keeps; a rejected row deletes
/// the key's row.
#[test]
fn materialized_table_filter_not_keeps_its_rows_in_its_store() {
    let builder = StreamsBuilder::new();
    builder
        .table::<String, String>("t")
        .filter_not_with(None, Some(Materialized::named("good")), |_, v: &String| {
            v == "bad"
        })
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "t", "a", Some("ok"), 1);
    pipe(&mut d, "t", "b", Some("fine"), 2);
    pipe(&mut d, "t", "a", Some("bad"), 3);
    assert_eq!(
        out(&mut d),
        [
            row("a", Some("ok"), 1),
            row("b", Some("fine"), 2),
            row("a", None, 3)
        ]
    );
    let store = d.store_entries("good");
    assert_eq!(store.len(), 1, "{store:?}");
    assert_eq!(store[0].0, b"b");
    assert!(store[0].1.ends_with(b"fine"), "{store:?}");
    assert_eq!(store[0].2, 2);
}

/// A materialized `mapValues`: a null is not mapped (stays a tombstone, deletes the row).
#[test]
fn materialized_table_map_values() {
    let builder = StreamsBuilder::new();
    builder
        .table::<String, String>("t")
        .map_values_with(None, Some(Materialized::named("lens")), |v: &String| {
            v.len() as i64
        })
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "t", "a", Some("abc"), 1);
    pipe(&mut d, "t", "b", Some(""), 2);
    pipe(&mut d, "t", "a", None, 3);
    let got = d.read_typed::<String, Option<i64>>("out").unwrap();
    assert_eq!(
        got,
        [
            ("a".to_string(), Some(3), 1),
            ("b".to_string(), Some(0), 2),
            ("a".to_string(), None, 3)
        ]
    );
    let store = d.store_entries("lens");
    assert_eq!(store.len(), 1, "{store:?}");
    assert_eq!(store[0].0, b"b");
    assert!(store[0].1.ends_with(&0i64.to_be_bytes()), "{store:?}");
}

/// As Java's `TopologyTestDriver` (record cache on, flushed after each record): a
/// materialized filter's store is cached, so a row it rejects for a key it never held is a
/// delete the flush drops (nothing forwarded), and its forwards wait for the flush; with
/// caching disabled the same tombstone is forwarded at once.
#[test]
fn cached_materialized_filter_drops_a_delete_of_a_key_it_never_held() {
    let build = |m: Materialized| {
        let builder = StreamsBuilder::new();
        builder
            .table::<String, String>("t")
            .filter_with(None, Some(m), |_, v: &String| v != "bad")
            .to_stream()
            .to("out");
        DslTestDriver::new(&builder.build().unwrap(), "app").unwrap()
    };
    let mut cached = build(Materialized::named("f"));
    pipe(&mut cached, "t", "a", Some("bad"), 1);
    pipe(&mut cached, "t", "b", Some("ok"), 2);
    pipe(&mut cached, "t", "b", Some("bad"), 3);
    assert_eq!(
        out(&mut cached),
        [row("b", Some("ok"), 2), row("b", None, 3)]
    );
    assert_eq!(cached.take_changelog("f").len(), 2);
    let mut plain = build(Materialized::named("f").with_caching_disabled());
    pipe(&mut plain, "t", "a", Some("bad"), 1);
    assert_eq!(out(&mut plain), [row("a", None, 1)]);
}

/// A `toTable()` materialized by name is cached: the two updates of one key that one
/// record makes (through `flatMapValues`) show as the last one.
#[test]
fn cached_to_table_forwards_one_update_per_key_per_record() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .flat_map_values(|v: &String| vec![format!("{v}1"), format!("{v}2")])
        .to_table_with(None, Materialized::named("tt"))
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "in", "k", Some("x"), 5);
    assert_eq!(out(&mut d), [row("k", Some("x2"), 5)]);
    let log: Vec<_> = d
        .take_changelog("tt")
        .into_iter()
        .map(|c| c.value)
        .collect();
    assert_eq!(log, [Some(b"x2".to_vec())]);
}
