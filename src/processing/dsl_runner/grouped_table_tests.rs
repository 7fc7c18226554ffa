//! `KTable.groupBy` and `KGroupedTable` aggregations through the test driver, with outputs
//! (and repartition-topic bytes) worked out by hand from Java's `KTableRepartitionMap`,
//! `ChangedSerializer`, `KTableAggregate` and `KTableReduce`.

use crate::dsl::exec_table::{deserialize_change, serialize_change};
use crate::dsl::{Materialized, StreamsBuilder};
use crate::processing::DslTestDriver;

fn pipe(d: &mut DslTestDriver, topic: &str, k: &str, v: Option<&str>, ts: i64) {
    d.pipe_input(topic, Some(k.as_bytes()), v.map(str::as_bytes), ts)
        .unwrap();
}

fn counts(d: &mut DslTestDriver) -> Vec<(String, i64, i64)> {
    d.read_typed::<String, i64>("out").unwrap()
}

fn c(k: &str, n: i64, ts: i64) -> (String, i64, i64) {
    (k.to_string(), n, ts)
}

/// Users by region counted: a user moving region is subtracted from the old region (its own
/// record, first) and added to the new one; a deleted user is subtracted; an update that
/// keeps the region is one record carrying both values (flag 2).
#[test]
fn table_group_by_count_subtracts_then_adds() {
    let builder = StreamsBuilder::new();
    builder
        .table::<String, String>("users")
        .group_by(|_, region: &String| (region.clone(), region.clone()))
        .count()
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "users", "alice", Some("north"), 1);
    pipe(&mut d, "users", "bob", Some("north"), 2);
    pipe(&mut d, "users", "alice", Some("south"), 3);
    pipe(&mut d, "users", "bob", None, 4);
    pipe(&mut d, "users", "alice", Some("south"), 5);
    assert_eq!(
        counts(&mut d),
        [
            c("north", 1, 1),
            c("north", 2, 2),
            c("north", 1, 3),
            c("south", 1, 3),
            c("north", 0, 4),
            c("south", 1, 5)
        ]
    );
    let topic = "app-KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition";
    let written: Vec<(Vec<u8>, Vec<u8>)> = d
        .read_output(topic)
        .into_iter()
        .map(|r| (r.key.unwrap_or_default(), r.value.unwrap_or_default()))
        .collect();
    let rec = |k: &str, v: &[u8]| (k.as_bytes().to_vec(), v.to_vec());
    assert_eq!(
        written,
        [
            rec("north", b"north\x01"),
            rec("north", b"north\x01"),
            rec("north", b"north\x00"),
            rec("south", b"south\x01"),
            rec("north", b"north\x00"),
            rec("south", b"\x0asouthsouth\x02"),
        ]
    );
}

/// A sum per region with `reduce(adder, subtractor)` after an unmaterialized filter: the
/// filter passes old values on (computed from the source's old row), a row leaving the
/// filter is subtracted, an update rejected on both sides is not forwarded at all.
#[test]
fn filtered_table_group_by_reduce() {
    let field = |v: &String, i: usize| v.split(':').nth(i).unwrap_or_default().to_string();
    let builder = StreamsBuilder::new();
    builder
        .table::<String, String>("accounts")
        .filter(|_, v: &String| !v.ends_with(":0"))
        .group_by(move |_, v: &String| {
            let amount = field(v, 1).parse::<i64>().unwrap_or(0);
            (field(v, 0), amount)
        })
        .reduce(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b)
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "accounts", "a", Some("n:5"), 1);
    pipe(&mut d, "accounts", "b", Some("n:3"), 2);
    pipe(&mut d, "accounts", "a", Some("n:0"), 3);
    pipe(&mut d, "accounts", "c", Some("s:0"), 4);
    pipe(&mut d, "accounts", "a", Some("s:2"), 5);
    pipe(&mut d, "accounts", "b", Some("s:4"), 6);
    assert_eq!(
        counts(&mut d),
        [
            c("n", 5, 1),
            c("n", 8, 2),
            c("n", 3, 3),
            c("s", 2, 5),
            c("n", 0, 6),
            c("s", 6, 6)
        ]
    );
}

/// `aggregate(initializer, adder, subtractor)`: a list of names per region.
#[test]
fn table_group_by_aggregate() {
    let builder = StreamsBuilder::new();
    builder
        .table::<String, String>("users")
        .group_by(|user: &String, region: &String| (region.clone(), user.clone()))
        .aggregate(
            String::new,
            |_, user: &String, agg: &String| format!("{agg}+{user}"),
            |_, user: &String, agg: &String| format!("{agg}-{user}"),
        )
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "users", "al", Some("n"), 1);
    pipe(&mut d, "users", "bo", Some("n"), 2);
    pipe(&mut d, "users", "al", Some("s"), 3);
    let got = d.read_typed::<String, String>("out").unwrap();
    let s = |k: &str, v: &str, ts: i64| (k.to_string(), v.to_string(), ts);
    assert_eq!(
        got,
        [
            s("n", "+al", 1),
            s("n", "+al+bo", 2),
            s("n", "+al+bo-al", 3),
            s("s", "+al", 3)
        ]
    );
}

/// `ChangedSerializer` / `ChangedDeserializer` bytes: the length of the new value is a
/// zig-zag varint (200 → 400 → `0x90 0x03`).
#[test]
fn change_bytes_match_javas_format() {
    let new = vec![7u8; 200];
    let both = serialize_change(Some(&new), Some(b"old")).unwrap();
    assert_eq!(&both[..2], &[0x90, 0x03]);
    assert_eq!(both.len(), 2 + 200 + 3 + 1);
    assert_eq!(both.last(), Some(&2));
    assert_eq!(
        deserialize_change(&both).unwrap(),
        (Some(&new[..]), Some(&b"old"[..]))
    );
    assert_eq!(serialize_change(None, Some(b"x")).unwrap(), b"x\x00");
    assert_eq!(
        deserialize_change(b"x\x01").unwrap(),
        (Some(&b"x"[..]), None)
    );
    // Flags 3–5 carry an isLatest byte before the flag.
    assert_eq!(
        deserialize_change(b"x\x01\x03").unwrap(),
        (None, Some(&b"x"[..]))
    );
    assert_eq!(serialize_change(None, None), None);
    assert!(deserialize_change(b"").is_err());
    assert!(deserialize_change(b"x\x09").is_err());
    assert!(deserialize_change(b"\x7fab\x02").is_err());
}

/// A stream joined with a `mapValues` table materialized under a name: the join reads the
/// operation's store (a deleted row joins nothing).
#[test]
fn stream_join_with_a_materialized_map_values_table() {
    let builder = StreamsBuilder::new();
    let lens = builder.table::<String, String>("t").map_values_with(
        None,
        Some(Materialized::named("lens")),
        |v: &String| v.len() as i64,
    );
    builder
        .stream::<String, String>("s")
        .join(&lens, |v: &String, n: &i64| format!("{v}{n}"))
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "t", "a", Some("abc"), 1);
    pipe(&mut d, "s", "a", Some("x"), 2);
    pipe(&mut d, "s", "b", Some("y"), 3);
    pipe(&mut d, "t", "a", None, 4);
    pipe(&mut d, "s", "a", Some("z"), 5);
    pipe(&mut d, "t", "b", Some(""), 6);
    pipe(&mut d, "s", "b", Some("w"), 7);
    let got = d.read_typed::<String, String>("out").unwrap();
    let s = |k: &str, v: &str, ts: i64| (k.to_string(), v.to_string(), ts);
    assert_eq!(got, [s("a", "x3", 2), s("b", "w0", 7)]);
}

/// A stream joined with a grouped table's count.
#[test]
fn stream_join_with_a_grouped_table_count() {
    let builder = StreamsBuilder::new();
    let per_region = builder
        .table::<String, String>("users")
        .group_by(|_, region: &String| (region.clone(), region.clone()))
        .count();
    builder
        .stream::<String, String>("q")
        .join(&per_region, |v: &String, n: &i64| format!("{v}:{n}"))
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "users", "alice", Some("north"), 1);
    pipe(&mut d, "users", "bob", Some("north"), 2);
    pipe(&mut d, "q", "north", Some("q"), 3);
    pipe(&mut d, "users", "bob", Some("south"), 4);
    pipe(&mut d, "q", "north", Some("r"), 5);
    pipe(&mut d, "q", "west", Some("s"), 6);
    let got = d.read_typed::<String, String>("out").unwrap();
    let s = |k: &str, v: &str, ts: i64| (k.to_string(), v.to_string(), ts);
    assert_eq!(got, [s("north", "q:2", 3), s("north", "r:1", 5)]);
}

/// A stream's count regrouped by the count: the stream aggregation sends its old count, so
/// a key moving from count 1 to 2 is subtracted from "1" before it is added to "2".
#[test]
fn stream_count_regrouped_by_count() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("s")
        .group_by_key()
        .count()
        .group_by(|k: &String, n: &i64| (n.to_string(), k.clone()))
        .count()
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "s", "a", Some("x"), 1);
    pipe(&mut d, "s", "a", Some("x"), 2);
    pipe(&mut d, "s", "b", Some("x"), 3);
    assert_eq!(
        counts(&mut d),
        [c("1", 1, 1), c("1", 0, 2), c("2", 1, 2), c("1", 1, 3)]
    );
}

/// A cached grouped-table count in the test driver (Java's `TopologyTestDriver` flushes
/// after each record): a regrouped stream count still subtracts, since the cached stream
/// count's flush carries the count the store held before the record as the old value, and
/// the grouped count's own flush forwards its value with the old one.
#[test]
fn cached_stream_count_regrouped_keeps_its_subtractions() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("s")
        .group_by_key()
        .count_with(None, Materialized::named("per-key"))
        .group_by(|k: &String, n: &i64| (n.to_string(), k.clone()))
        .count_with(None, Materialized::named("per-count"))
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "s", "a", Some("x"), 1);
    pipe(&mut d, "s", "a", Some("x"), 2);
    assert_eq!(counts(&mut d), [c("1", 1, 1), c("1", 0, 2), c("2", 1, 2)]);
}
