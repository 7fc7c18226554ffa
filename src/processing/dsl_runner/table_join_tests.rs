//! `KTable`–`KTable` joins through the test driver, outputs worked out by hand from Java's
//! `KTableKTableInnerJoin` / `LeftJoin` / `RightJoin` / `OuterJoin` and
//! `KTableKTableJoinMerger` (a left join's table and both of an outer join's send old
//! values, which decides whether a delete with nothing on the other side forwards a
//! tombstone).

use crate::dsl::{Consumed, Materialized, StreamsBuilder};
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

fn or_dash(v: Option<&String>) -> &str {
    v.map_or("-", String::as_str)
}

/// Inner join, materialized: a result needs both sides; a delete on one side forwards a
/// tombstone while the other side has the key; the timestamp is the larger of both.
#[test]
fn table_table_inner_join() {
    let builder = StreamsBuilder::new();
    let right = builder.table::<String, String>("r");
    builder
        .table::<String, String>("l")
        .join_with(
            &right,
            None,
            Some(Materialized::named("j")),
            |a: &String, b: &String| format!("{a}+{b}"),
        )
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "l", "k", Some("a1"), 1);
    pipe(&mut d, "r", "k", Some("b1"), 2);
    pipe(&mut d, "l", "k", Some("a2"), 3);
    let store = d.store_entries("j");
    assert_eq!(store.len(), 1, "{store:?}");
    assert!(store[0].1.ends_with(b"a2+b1"), "{store:?}");
    assert_eq!(store[0].2, 3);
    pipe(&mut d, "r", "k", None, 4);
    pipe(&mut d, "l", "k", Some("a3"), 5);
    assert_eq!(
        out(&mut d),
        [
            row("k", Some("a1+b1"), 2),
            row("k", Some("a2+b1"), 3),
            row("k", None, 4)
        ]
    );
    assert!(d.store_entries("j").is_empty());
}

/// Left join: every row of the left table, with the right value if any; deleting the
/// right row re-joins with none; deleting the left row forwards a tombstone (its old value
/// is sent), also when the right side has the key, and even for a key the left table never
/// held if its store is not cached. A cached left table (Java's default, flushed after each
/// record as in `TopologyTestDriver`) drops that delete: nothing reaches the join.
#[test]
fn table_table_left_join() {
    let run = |left: Materialized| {
        let builder = StreamsBuilder::new();
        let right = builder.table::<String, String>("r");
        builder
            .table_with::<String, String>("l", Consumed::default(), left)
            .left_join(&right, |a: &String, b: Option<&String>| {
                format!("{a}+{}", or_dash(b))
            })
            .to_stream()
            .to("out");
        let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
        pipe(&mut d, "l", "k", Some("a1"), 1);
        pipe(&mut d, "r", "k", Some("b1"), 2);
        pipe(&mut d, "r", "k", None, 3);
        pipe(&mut d, "l", "k", None, 4);
        pipe(&mut d, "r", "j", Some("b2"), 5);
        pipe(&mut d, "l", "j", None, 6);
        pipe(&mut d, "l", "m", None, 7);
        out(&mut d)
    };
    let common = [
        row("k", Some("a1+-"), 1),
        row("k", Some("a1+b1"), 2),
        row("k", Some("a1+-"), 3),
        row("k", None, 4),
    ];
    assert_eq!(run(Materialized::default()), common);
    let mut uncached = common.to_vec();
    uncached.push(row("j", None, 6));
    assert_eq!(
        run(Materialized::default().with_caching_disabled()),
        uncached
    );
}

/// Outer join: either side alone joins; a delete with nothing left on either side forwards
/// a tombstone.
#[test]
fn table_table_outer_join() {
    let builder = StreamsBuilder::new();
    let right = builder.table::<String, String>("r");
    builder
        .table::<String, String>("l")
        .outer_join(&right, |a: Option<&String>, b: Option<&String>| {
            format!("{}+{}", or_dash(a), or_dash(b))
        })
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    pipe(&mut d, "l", "k", Some("a1"), 1);
    pipe(&mut d, "r", "k", Some("b1"), 2);
    pipe(&mut d, "l", "k", None, 3);
    pipe(&mut d, "r", "k", None, 4);
    pipe(&mut d, "r", "m", Some("c"), 5);
    pipe(&mut d, "r", "n", None, 6);
    assert_eq!(
        out(&mut d),
        [
            row("k", Some("a1+-"), 1),
            row("k", Some("a1+b1"), 2),
            row("k", Some("-+b1"), 3),
            row("k", None, 4),
            row("m", Some("-+c"), 5)
        ]
    );
}
