//! `KStream`–`KTable` joins through the test driver: Java's `KStreamKTableJoinProcessor`
//! semantics, the table's store materialized by the join, the repartition after a key change.

use super::*;
use crate::dsl::{Materialized, StreamsBuilder};
use crate::processing::DslTestDriver;

fn be(n: i64) -> Vec<u8> {
    n.to_be_bytes().to_vec()
}

fn field(v: &str, i: usize) -> String {
    v.split(':').nth(i).unwrap_or_default().to_string()
}

/// Orders (`"customer:amount"` by order id) re-keyed by customer, joined with the customers
/// table (customer → region), summed per region: two repartitions, the table's store added
/// by the join.
fn order_totals(left: bool) -> DslTopology {
    let builder = StreamsBuilder::new();
    let regions = builder.table::<String, String>("customers");
    let by_customer = builder
        .stream::<String, String>("orders")
        .select_key(|_, order: &String| field(order, 0));
    let joined = if left {
        by_customer.left_join(&regions, |order: &String, region: Option<&String>| {
            let region = region.map_or("unknown", String::as_str);
            format!("{region}:{}", field(order, 1))
        })
    } else {
        by_customer.join(&regions, |order: &String, region: &String| {
            format!("{region}:{}", field(order, 1))
        })
    };
    joined
        .group_by(|_, j: &String| field(j, 0))
        .aggregate_with(
            None,
            Materialized::named("totals"),
            || 0i64,
            |_, j: &String, total: &i64| total + field(j, 1).parse::<i64>().unwrap_or(0),
        )
        .to_stream()
        .to("out");
    builder.build().unwrap()
}

fn totals(d: &mut DslTestDriver) -> Vec<(String, i64)> {
    d.read_typed::<String, i64>("out")
        .unwrap()
        .into_iter()
        .map(|(k, v, _)| (k, v))
        .collect()
}

/// The inner join: an order of an unknown customer is dropped, a customer's new region
/// counts from then on, a deleted customer joins nothing; the table's store (generated
/// name, materialized by the join) holds the customers and is change-logged.
#[test]
fn stream_table_join_then_aggregate() {
    let mut d = DslTestDriver::new(&order_totals(false), "app").unwrap();
    d.pipe_input("customers", Some(b"c1"), Some(b"north"), 1)
        .unwrap();
    d.pipe_input("customers", Some(b"c2"), Some(b"south"), 2)
        .unwrap();
    d.pipe_input("orders", Some(b"o1"), Some(b"c1:5"), 3)
        .unwrap();
    d.pipe_input("orders", Some(b"o2"), Some(b"c2:7"), 4)
        .unwrap();
    d.pipe_input("orders", Some(b"o3"), Some(b"c9:100"), 5)
        .unwrap();
    d.pipe_input("orders", Some(b"o4"), Some(b"c1:11"), 6)
        .unwrap();
    d.pipe_input("customers", Some(b"c1"), Some(b"south"), 7)
        .unwrap();
    d.pipe_input("orders", Some(b"o5"), Some(b"c1:1"), 8)
        .unwrap();
    d.pipe_input("customers", Some(b"c2"), None, 9).unwrap();
    d.pipe_input("orders", Some(b"o6"), Some(b"c2:1000"), 10)
        .unwrap();
    let want: Vec<(String, i64)> = vec![
        ("north".into(), 5),
        ("south".into(), 7),
        ("north".into(), 16),
        ("south".into(), 8),
    ];
    assert_eq!(totals(&mut d), want);
    let store = "customers-STATE-STORE-0000000000";
    assert_eq!(
        d.store_entries(store),
        [(b"c1".to_vec(), b"south".to_vec(), 7)]
    );
    assert_eq!(
        d.take_changelog(store).len(),
        4,
        "three puts and a tombstone"
    );
    let mut sums = d.store_entries("totals");
    sums.sort();
    assert_eq!(
        sums,
        [
            (b"north".to_vec(), be(16), 6),
            (b"south".to_vec(), be(8), 8)
        ]
    );
    // The join's output went through the join's repartition topic, keyed by customer.
    let repartitioned = d.read_output("app-KSTREAM-KEY-SELECT-0000000004-repartition");
    assert_eq!(repartitioned.len(), 6);
    assert_eq!(repartitioned[0].key.as_deref(), Some(&b"c1"[..]));
}

/// The left join passes every order on, with no region where the customer is unknown.
#[test]
fn stream_table_left_join() {
    let mut d = DslTestDriver::new(&order_totals(true), "app").unwrap();
    d.pipe_input("customers", Some(b"c1"), Some(b"north"), 1)
        .unwrap();
    d.pipe_input("orders", Some(b"o1"), Some(b"c1:5"), 2)
        .unwrap();
    d.pipe_input("orders", Some(b"o2"), Some(b"c9:3"), 3)
        .unwrap();
    d.pipe_input("orders", Some(b"o3"), Some(b"c9:4"), 4)
        .unwrap();
    let want: Vec<(String, i64)> = vec![
        ("north".into(), 5),
        ("unknown".into(), 3),
        ("unknown".into(), 7),
    ];
    assert_eq!(totals(&mut d), want);
}

/// A join with a table that is not a `table()` or an aggregation cannot run: its node says
/// why (the runner refuses the program naming the first node it cannot run).
#[test]
fn a_join_with_a_derived_table_is_refused() {
    let builder = StreamsBuilder::new();
    let t = builder
        .table::<String, String>("t")
        .map_values(|v: &String| v.len() as i64);
    builder
        .stream::<String, String>("s")
        .join(&t, |v: &String, n: &i64| format!("{v}{n}"))
        .to("out");
    let p = builder.build().unwrap();
    let join = p
        .topology()
        .nodes()
        .iter()
        .find(|n| n.name.starts_with("KSTREAM-JOIN-"))
        .expect("a join node")
        .name
        .clone();
    match p.node_exec(&join) {
        Some(NodeExec::Unavailable(why)) => assert!(why.contains("KTABLE-MAPVALUES-"), "{why}"),
        other => panic!("{join}: {other:?}"),
    }
    assert!(DslTestDriver::new(&p, "app").is_err());
}
