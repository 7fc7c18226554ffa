package dev.ksg.peer;

import java.util.Properties;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * {@code --topology ordertotals}: order totals per region, a join and an aggregation, the same
 * program as the crate's {@code examples/order_totals_dsl/app.rs} (issue 23).
 *
 * <pre>
 *   orders    (order id, "customer:amount")  = --input
 *   customers (customer, region)             = --table
 *
 *   table(customers)
 *   stream(orders).selectKey(customer)                      key change: a repartition for the join
 *     .join(customers, "region:amount")                     the table's store, copartitioned
 *     .groupBy(region)                                      a second repartition
 *     .aggregate(0, total + amount, "region-totals")        store "region-totals" (Long)
 *     .toStream().to(--output)                              (String region, Long total)
 * </pre>
 *
 * Three subtopologies: the orders re-keyed by customer; the join (reading the join's repartition
 * topic and the customers topic, with the customers table's store and its changelog); the
 * aggregation (reading the group-by repartition topic, with "region-totals" and its changelog).
 * An amount that is not a number counts as 0, as in the Rust program.
 */
final class OrderTotals {
    /** The aggregation's store: queryable by this name. */
    static final String STORE = "region-totals";

    private OrderTotals() {
    }

    static Topology build(final String orders, final String customers, final String output,
                          final Properties props) {
        final StreamsBuilder builder = new StreamsBuilder();
        final KTable<String, String> regions =
            builder.table(customers, Consumed.with(Serdes.String(), Serdes.String()));
        builder.stream(orders, Consumed.with(Serdes.String(), Serdes.String()))
            .selectKey((orderId, order) -> field(order, 0))
            .join(regions, (order, region) -> region + ":" + field(order, 1),
                Joined.with(Serdes.String(), Serdes.String(), Serdes.String()))
            .groupBy((customer, joined) -> field(joined, 0), Grouped.with(Serdes.String(), Serdes.String()))
            .aggregate(() -> 0L, (region, joined, total) -> total + amount(joined),
                Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as(STORE)
                    .withKeySerde(Serdes.String())
                    .withValueSerde(Serdes.Long()))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build(props);
    }

    /** Field {@code i} of "a:b" ("" if missing), as the Rust program's {@code field}. */
    static String field(final String value, final int i) {
        final String[] parts = value.split(":", -1);
        return i < parts.length ? parts[i] : "";
    }

    static long amount(final String joined) {
        try {
            return Long.parseLong(field(joined, 1));
        } catch (final NumberFormatException e) {
            return 0L;
        }
    }
}
