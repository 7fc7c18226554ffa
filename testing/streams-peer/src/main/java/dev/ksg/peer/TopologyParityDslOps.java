package dev.ksg.peer;

import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KGroupedTable;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The second DSL half of the {@link TopologyParity} corpus (issue 23: KTable operations,
 * toTable, merge, split, repartition, process, joins, topology.optimization=all); the Rust
 * twins are in tests/topology_parity/dsl_ops_corpus.rs. Programs ending in {@code @all} are
 * built with {@code topology.optimization=all}.
 */
final class TopologyParityDslOps {
    private TopologyParityDslOps() {
    }

    private static void put(final Map<String, Function<Properties, Topology>> c, final String name,
                            final java.util.function.Consumer<StreamsBuilder> program) {
        c.put(name, p -> {
            final StreamsBuilder b = new StreamsBuilder();
            program.accept(b);
            return b.build(p);
        });
    }

    /** A processor that forwards nothing (a new one per get(), as Kafka Streams requires). */
    private static final class Noop implements Processor<String, String, String, String> {
        @Override
        public void process(final Record<String, String> record) {
        }
    }

    /** A fixed-key processor that forwards nothing. */
    private static final class NoopValues implements FixedKeyProcessor<String, String, String> {
        @Override
        public void process(final FixedKeyRecord<String, String> record) {
        }
    }

    private static Materialized<String, String, KeyValueStore<Bytes, byte[]>> store(final String name) {
        return Materialized.as(name);
    }

    private static Materialized<String, String, KeyValueStore<Bytes, byte[]>> unnamedStore() {
        return Materialized.with(Serdes.String(), Serdes.String());
    }

    static void programs(final Map<String, Function<Properties, Topology>> c) {
        tables(c);
        streams(c);
        joins(c);
        optimized(c);
    }

    private static void tables(final Map<String, Function<Properties, Topology>> c) {
        put(c, "ops-table-filter", b -> b.<String, String>table("t")
            .filter((k, v) -> v != null).toStream().to("out"));
        put(c, "ops-table-filter-not-materialized", b -> b.<String, String>table("t")
            .filterNot((k, v) -> v == null, store("f-store")).toStream().to("out"));
        put(c, "ops-table-filter-unnamed-materialized", b -> b.<String, String>table("t")
            .filter((k, v) -> true, Named.as("keep"), unnamedStore()).toStream().to("out"));
        put(c, "ops-table-map-values", b -> b.<String, String>table("t")
            .mapValues(v -> v + "!")
            .mapValues(v -> v, Named.as("same"))
            .toStream().to("out"));
        put(c, "ops-table-map-values-materialized", b -> b.<String, String>table("t", Materialized.as("src"))
            .mapValues(v -> v, Named.as("mv"), store("mv-store")).toStream().to("out"));
        put(c, "ops-table-group-by-count", b -> b.<String, String>table("t")
            .groupBy((k, v) -> KeyValue.pair(v, v)).count().toStream().to("out"));
        put(c, "ops-table-group-by-named-reduce-and-aggregate", b -> {
            final KGroupedTable<String, String> g = b.<String, String>table("t")
                .groupBy((k, v) -> KeyValue.pair(v, k), Grouped.as("regroup"));
            g.reduce((a, v) -> a + v, (a, v) -> a).toStream().to("reduced");
            g.aggregate(() -> 0L, (k, v, a) -> a + 1, (k, v, a) -> a - 1,
                Named.as("agg"), Materialized.with(Serdes.String(), Serdes.Long())).toStream().to("counted");
        });
        put(c, "ops-table-chain-group-by-materialized", b -> b.<String, String>table("t")
            .filter((k, v) -> true)
            .mapValues(v -> v)
            .groupBy((k, v) -> KeyValue.pair(v, v))
            .reduce((a, v) -> v, (a, v) -> a, Named.as("red"), store("red-store"))
            .toStream().to("out"));
    }

    private static void streams(final Map<String, Function<Properties, Topology>> c) {
        put(c, "ops-to-table", b -> b.<String, String>stream("in").toTable().toStream().to("out"));
        put(c, "ops-to-table-after-key-change", b -> b.<String, String>stream("in")
            .selectKey((k, v) -> v)
            .toTable(Named.as("tt"), store("tt-store"))
            .toStream().to("out"));
        put(c, "ops-to-table-unnamed-after-key-change", b -> b.<String, String>stream("in")
            .map((k, v) -> KeyValue.pair(v, k))
            .toTable()
            .filter((k, v) -> true)
            .toStream().to("out"));
        put(c, "ops-merge", b -> {
            final KStream<String, String> a = b.stream("a");
            final KStream<String, String> x = b.<String, String>stream("b").mapValues(v -> v);
            a.merge(x).to("out");
        });
        put(c, "ops-merge-named-then-count", b -> {
            final KStream<String, String> a = b.<String, String>stream("a").selectKey((k, v) -> v);
            final KStream<String, String> x = b.stream("b");
            a.merge(x, Named.as("m")).groupByKey().count().toStream().to("out");
        });
        put(c, "ops-split", b -> {
            final Map<String, KStream<String, String>> m = b.<String, String>stream("in").split()
                .branch((k, v) -> v.startsWith("a"))
                .branch((k, v) -> v.startsWith("b"))
                .defaultBranch();
            m.get("KSTREAM-BRANCH-00000000011").to("a");
            m.get("KSTREAM-BRANCH-00000000012").to("b");
            m.get("KSTREAM-BRANCH-00000000010").to("rest");
        });
        put(c, "ops-split-named", b -> {
            final Map<String, KStream<String, String>> m = b.<String, String>stream("in")
                .split(Named.as("sp-"))
                .branch((k, v) -> v.startsWith("a"), Branched.as("a"))
                .branch((k, v) -> v.startsWith("b"), Branched.withConsumer(s -> s.to("b")))
                .defaultBranch(Branched.withFunction(s -> s.mapValues(v -> v), "rest"));
            m.get("sp-a").to("a");
            m.get("sp-rest").to("rest");
        });
        put(c, "ops-split-no-default-then-group", b -> {
            final Map<String, KStream<String, String>> m = b.<String, String>stream("in")
                .selectKey((k, v) -> v)
                .split()
                .branch((k, v) -> true, Branched.as("x"))
                .noDefaultBranch();
            m.get("KSTREAM-BRANCH-0000000002x").groupByKey().count().toStream().to("out");
        });
        put(c, "ops-repartition", b -> b.<String, String>stream("in").repartition().to("out"));
        put(c, "ops-repartition-named-partitions", b -> b.<String, String>stream("in")
            .repartition(Repartitioned.<String, String>as("rp").withNumberOfPartitions(4))
            .groupByKey().count().toStream().to("out"));
        put(c, "ops-multiple-repartitions", b -> b.<String, String>stream("in")
            .selectKey((k, v) -> v)
            .groupByKey().count().toStream()
            .selectKey((k, v) -> String.valueOf(v))
            .mapValues(v -> String.valueOf(v))
            .groupByKey().reduce((a, v) -> v).toStream()
            .repartition(Repartitioned.<String, String>with(Serdes.String(), Serdes.String()).withNumberOfPartitions(2))
            .to("out"));
        put(c, "ops-process", b -> {
            b.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("ps"), Serdes.String(), Serdes.String()));
            b.<String, String>stream("in")
                .process(Noop::new, "ps")
                .process(Noop::new, Named.as("p2"))
                .processValues(NoopValues::new, "ps")
                .processValues(NoopValues::new, Named.as("pv2"))
                .groupByKey().count().toStream().to("out");
        });
    }

    private static void joins(final Map<String, Function<Properties, Topology>> c) {
        put(c, "ops-stream-table-join", b -> {
            final KTable<String, String> t = b.table("t");
            b.<String, String>stream("in").join(t, (v, x) -> v + x).to("out");
        });
        put(c, "ops-stream-table-left-join-named-after-key-change", b -> {
            final KStream<String, String> s = b.<String, String>stream("in").selectKey((k, v) -> v);
            final KTable<String, String> t = b.table("t", store("t-store"));
            s.leftJoin(t, (v, x) -> v + x, Joined.as("lj")).to("out");
        });
        put(c, "ops-stream-table-join-unnamed-after-key-change", b -> {
            final KTable<String, String> t = b.<String, String>table("t").filter((k, v) -> true);
            b.<String, String>stream("in").map((k, v) -> KeyValue.pair(v, k))
                .join(t, (v, x) -> v + x).to("out");
        });
        put(c, "ops-stream-join-aggregated-table", b -> {
            final KTable<String, String> users = b.<String, String>stream("users")
                .groupByKey().reduce((a, v) -> v);
            b.<String, String>stream("clicks").leftJoin(users, (v, u) -> v + u).to("out");
        });
        put(c, "ops-table-table-join", b -> {
            final KTable<String, String> a = b.table("a");
            final KTable<String, String> x = b.table("b");
            a.join(x, (l, r) -> l + r).toStream().to("out");
        });
        put(c, "ops-table-table-left-join-named-materialized", b -> {
            final KTable<String, String> a = b.table("a");
            final KTable<String, String> x = b.table("b", store("b-store"));
            a.leftJoin(x, (l, r) -> l + r, Named.as("lj"), store("lj-store")).toStream().to("out");
        });
        put(c, "ops-table-table-outer-join-unnamed-materialized", b -> {
            final KTable<String, String> a = b.<String, String>table("a").mapValues(v -> v);
            final KTable<String, String> x = b.table("b");
            a.outerJoin(x, (l, r) -> l + r, unnamedStore()).toStream().to("out");
        });
        put(c, "ops-join-chain", b -> {
            final KTable<String, String> a = b.table("a");
            final KTable<String, String> x = b.table("b");
            final KTable<String, String> y = b.table("c");
            final KTable<String, String> ax = a.leftJoin(x, (l, r) -> l + r);
            b.<String, String>stream("in").join(ax.outerJoin(y, (l, r) -> l + r), (v, t) -> v + t).to("out");
        });
        put(c, "ops-two-joins-one-key-change", b -> {
            final KTable<String, String> t = b.table("t");
            final KTable<String, String> u = b.table("u");
            final KStream<String, String> s = b.<String, String>stream("in").selectKey((k, v) -> v);
            s.join(t, (v, x) -> v + x).to("out1");
            s.leftJoin(u, (v, x) -> v + x).to("out2");
        });
        put(c, "ops-named-then-unnamed-join-one-key-change", b -> {
            final KTable<String, String> t = b.table("t");
            final KStream<String, String> s = b.<String, String>stream("in").map((k, v) -> KeyValue.pair(v, k));
            s.join(t, (v, x) -> v + x, Joined.as("first")).to("out1");
            s.leftJoin(t, (v, x) -> v + x).to("out2");
        });
        put(c, "ops-to-table-joined", b -> {
            final KTable<String, String> t = b.<String, String>stream("t").toTable();
            b.<String, String>stream("in").join(t, (v, x) -> v + x, Joined.as("j")).to("out");
        });
    }

    private static void optimized(final Map<String, Function<Properties, Topology>> c) {
        put(c, "ops-table-source-reuse@all", b -> b.<String, String>table("t", Materialized.as("t-store"))
            .toStream().to("out"));
        put(c, "ops-stream-table-join@all", b -> {
            final KTable<String, String> t = b.table("t");
            b.<String, String>stream("in").leftJoin(t, (v, x) -> v + x).to("out");
        });
        put(c, "ops-table-group-by@all", b -> b.<String, String>table("t", Consumed.as("tbl"))
            .groupBy((k, v) -> KeyValue.pair(v, v)).count().toStream().to("out"));
        // split with -1 keeps trailing empty words, as the Rust program's str::split does.
        put(c, "ops-wordcount@all", b -> b.<String, String>stream("lines")
            .flatMapValues(v -> java.util.List.of(v.split(" ", -1)))
            .groupBy((k, w) -> w)
            .count(Materialized.as("counts-store"))
            .toStream()
            .to("counts"));
        put(c, "ops-two-aggregations-one-key-change@all", b -> {
            final org.apache.kafka.streams.kstream.KGroupedStream<String, String> g = b.<String, String>stream("in")
                .selectKey((k, v) -> v)
                .groupByKey();
            g.count().toStream().to("counts");
            g.reduce((a, v) -> a + v).toStream().to("reduced");
        });
        put(c, "ops-branches-after-key-change@all", b -> {
            final KStream<String, String> s = b.<String, String>stream("in").map((k, v) -> KeyValue.pair(v, k));
            s.filter((k, v) -> true).peek((k, v) -> { }).groupByKey().count().toStream().to("counts");
            s.filterNot((k, v) -> false).groupByKey(Grouped.as("g2")).reduce((a, v) -> v).toStream().to("reduced");
            s.to("mapped");
        });
        put(c, "ops-value-change-blocks-merging@all", b -> {
            final KStream<String, String> s = b.<String, String>stream("in").selectKey((k, v) -> v);
            s.mapValues(v -> v).groupByKey().count().toStream().to("counts");
            s.groupByKey().reduce((a, v) -> v).toStream().to("reduced");
        });
        put(c, "ops-join-and-count-after-key-change@all", b -> {
            final KTable<String, String> t = b.table("t");
            final KStream<String, String> s = b.<String, String>stream("in").selectKey((k, v) -> v);
            s.join(t, (v, x) -> v + x).to("joined");
            s.groupByKey().count().toStream().to("counts");
            s.toTable().toStream().to("table");
        });
        put(c, "ops-explicit-repartition@all", b -> b.<String, String>stream("in")
            .selectKey((k, v) -> v)
            .repartition()
            .groupByKey().count().toStream().to("out"));
        put(c, "ops-multiple-repartitions@all", b -> b.<String, String>stream("in")
            .selectKey((k, v) -> v)
            .groupByKey().count().toStream()
            .selectKey((k, v) -> String.valueOf(v))
            .mapValues(v -> String.valueOf(v))
            .groupByKey().reduce((a, v) -> v).toStream()
            .to("out"));
        put(c, "ops-merge-two-key-changes-then-count@all", b -> {
            final KStream<String, String> a = b.<String, String>stream("a").selectKey((k, v) -> v);
            final KStream<String, String> x = b.<String, String>stream("b").selectKey((k, v) -> k + v);
            a.merge(x).groupByKey().count().toStream().to("out");
        });
        put(c, "ops-merge-named-then-count@all", b -> {
            final KStream<String, String> a = b.<String, String>stream("a").selectKey((k, v) -> v);
            final KStream<String, String> x = b.stream("b");
            a.merge(x, Named.as("m")).groupByKey().count().toStream().to("out");
        });
        put(c, "ops-key-change-merged-and-direct@all", b -> {
            final KStream<String, String> s = b.<String, String>stream("a").selectKey((k, v) -> v);
            s.merge(b.stream("b")).groupByKey().count().toStream().to("counts");
            s.groupByKey().reduce((a, v) -> v).toStream().to("reduced");
        });
        put(c, "ops-table-table-join@all", b -> {
            final KTable<String, String> a = b.table("a");
            a.join(b.table("b"), (l, r) -> l + r).toStream().to("out");
        });
    }
}
