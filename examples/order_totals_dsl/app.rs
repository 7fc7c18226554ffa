//! Order totals per region, a join and an aggregation written with the DSL: the same program
//! as the Java streams peer's `--topology ordertotals` (`OrderTotals.java`), so a Rust
//! instance and Java instances share one application.
//!
//! ```text
//! KTable<String, String> regions = builder.table(customers);       // customer -> region
//! builder.stream(orders)                                           // order id -> "customer:amount"
//!     .selectKey((orderId, order) -> field(order, 0))              // key change: repartition
//!     .join(regions, (order, region) -> region + ":" + field(order, 1))
//!     .groupBy((customer, joined) -> field(joined, 0))             // a second repartition
//!     .aggregate(() -> 0L, (region, joined, total) -> total + amount(joined),
//!                Materialized.as("region-totals"))
//!     .toStream()
//!     .to(output, Produced.with(Serdes.String(), Serdes.Long()));
//! ```
//!
//! Three subtopologies: the orders re-keyed by customer (written to the join's repartition
//! topic); the join, reading that topic and `customers` (copartitioned), with the customers
//! table's store (`customers-STATE-STORE-0000000000`, materialized by the join) and its
//! changelog; the aggregation, reading the group-by repartition topic, with the queryable
//! store [`STORE`] and its changelog. The live test `tests/live_order_totals.rs` compiles this
//! file too.

use kafka_streams_group::dsl::{DslTopology, Materialized, StreamsBuilder};
use kafka_streams_group::processing::StreamsApp;
use kafka_streams_group::topology::{HeartbeatTopologyOptions, TopologyBuildError};
use kafka_streams_group::Error;

/// The aggregation's store: region → total (a Java `Long`).
pub const STORE: &str = "region-totals";

/// Field `i` of `"a:b"` (`""` if missing), as `OrderTotals.field` in Java.
pub fn field(value: &str, i: usize) -> String {
    value.split(':').nth(i).unwrap_or_default().to_string()
}

/// The amount of a joined `"region:amount"` value; not a number counts as 0, as in Java.
pub fn amount(joined: &str) -> i64 {
    field(joined, 1).parse().unwrap_or(0)
}

/// The program: `orders` joined with `customers`, summed per region into [`STORE`], each new
/// total written to `output`.
pub fn program(
    orders: &str,
    customers: &str,
    output: &str,
) -> Result<DslTopology, TopologyBuildError> {
    let builder = StreamsBuilder::new();
    let regions = builder.table::<String, String>(customers);
    builder
        .stream::<String, String>(orders)
        .select_key(|_order_id: &String, order: &String| field(order, 0))
        .join(&regions, |order: &String, region: &String| {
            format!("{region}:{}", field(order, 1))
        })
        .group_by(|_customer: &String, joined: &String| field(joined, 0))
        .aggregate_with(
            None,
            Materialized::named(STORE),
            || 0i64,
            |_region: &String, joined: &String, total: &i64| total + amount(joined),
        )
        .to_stream()
        .to(output);
    builder.build()
}

/// The application `application_id` of [`program`], ready for `ProcessingRuntime::start`.
pub fn app(
    application_id: &str,
    orders: &str,
    customers: &str,
    output: &str,
) -> Result<StreamsApp, Error> {
    let program = program(orders, customers, output).map_err(|e| Error::InvalidConfiguration {
        field: "dsl",
        reason: e.to_string(),
    })?;
    StreamsApp::from_dsl(&program, &HeartbeatTopologyOptions::new(application_id))
}
