package dev.ksg.peer;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.RecordContext;
import org.apache.kafka.streams.processor.TopicNameExtractor;

/**
 * The DSL half of the {@link TopologyParity} corpus; the Rust twins (same names, same
 * operations in the same order) are in tests/topology_parity/dsl_corpus.rs.
 *
 * <p>The functions compute what their Rust twins compute (tests/dsl_driver_diff.rs runs both
 * programs on the same records through the two test drivers): {@code v.isEmpty()} for
 * {@code v.is_empty()}, {@code split(" ", -1)} for Rust's {@code split(' ')} (which keeps
 * trailing empty strings), and serdes given where the Rust types pick a non-String serde.
 */
final class TopologyParityDsl {
    private TopologyParityDsl() {
    }

    /** A topic-name extractor whose describe() text is stable ("ext"). */
    private static final class Ext implements TopicNameExtractor<String, String> {
        @Override
        public String extract(final String key, final String value, final RecordContext context) {
            return "out-" + key;
        }

        @Override
        public String toString() {
            return "ext";
        }
    }

    private static void put(final Map<String, Function<Properties, Topology>> c, final String name,
                            final java.util.function.Consumer<StreamsBuilder> program) {
        c.put(name, p -> {
            final StreamsBuilder b = new StreamsBuilder();
            program.accept(b);
            return b.build(p);
        });
    }

    static void programs(final Map<String, Function<Properties, Topology>> c) {
        put(c, "dsl-filter-to", b -> b.<String, String>stream("in").filter((k, v) -> !v.isEmpty()).to("out"));
        put(c, "dsl-stateless-chain", b -> b.<String, String>stream("in")
            .filterNot((k, v) -> v.isEmpty())
            .mapValues(v -> v + "!")
            .flatMapValues(v -> List.of(v, v))
            .peek((k, v) -> { })
            .selectKey((k, v) -> v)
            .map((k, v) -> KeyValue.pair(v, k))
            .flatMap((k, v) -> List.of(KeyValue.pair(k, v)))
            .to("out"));
        put(c, "dsl-foreach-and-branches", b -> {
            final KStream<String, String> s = b.stream("in");
            s.foreach((k, v) -> { });
            s.filter((k, v) -> true).to("a");
            s.mapValues(v -> v).to("b");
        });
        put(c, "dsl-count", b -> b.<String, String>stream("in").groupByKey().count().toStream().to("out"));
        put(c, "dsl-group-by-count", b -> b.<String, String>stream("in")
            .groupBy((k, v) -> v).count().toStream().to("out"));
        put(c, "dsl-wordcount", b -> b.<String, String>stream("lines")
            .flatMapValues(v -> List.of(v.split(" ", -1)))
            .groupBy((k, w) -> w)
            .count(Materialized.as("counts-store"))
            .toStream()
            .to("counts"));
        put(c, "dsl-reduce", b -> b.<String, String>stream("in")
            .groupByKey().reduce((a, v) -> a + v).toStream().to("out"));
        put(c, "dsl-aggregate", b -> b.<String, String>stream("in")
            .selectKey((k, v) -> v)
            .groupByKey()
            .aggregate(() -> 0L, (k, v, a) -> a + 1, Materialized.with(Serdes.String(), Serdes.Long()))
            .toStream()
            .to("out"));
        put(c, "dsl-named", b -> b.<String, String>stream("in", Consumed.as("src"))
            .filter((k, v) -> true, Named.as("f"))
            .groupBy((k, v) -> v, Grouped.as("g"))
            .count(Named.as("cnt"), Materialized.as("store"))
            .toStream(Named.as("ts"))
            .to("out", Produced.as("sink")));
        put(c, "dsl-count-materialized-unnamed", b -> b.<String, String>stream("in")
            .map((k, v) -> KeyValue.pair(v, k))
            .groupByKey()
            .count(Materialized.<String, Long, org.apache.kafka.streams.state.KeyValueStore<
                org.apache.kafka.common.utils.Bytes, byte[]>>with(Serdes.String(), Serdes.Long())
                .withLoggingDisabled())
            .toStream()
            .to("out"));
        put(c, "dsl-named-grouping-reused", b -> {
            final KGroupedStream<String, String> g = b.<String, String>stream("in")
                .map((k, v) -> KeyValue.pair(v, k))
                .groupByKey(Grouped.as("g"));
            g.count().toStream().to("counts");
            g.reduce((a, v) -> a + v).toStream().to("reduced");
        });
        put(c, "dsl-unnamed-grouping-twice", b -> {
            final KGroupedStream<String, String> g = b.<String, String>stream("in")
                .selectKey((k, v) -> v)
                .groupByKey();
            g.count().toStream().to("counts");
            g.count().toStream().to("counts2");
        });
        put(c, "dsl-logging-config", b -> b.<String, String>stream("in")
            .groupByKey()
            .count(Materialized.<String, Long, org.apache.kafka.streams.state.KeyValueStore<
                org.apache.kafka.common.utils.Bytes, byte[]>>as("s")
                .withLoggingEnabled(Map.of("min.insync.replicas", "2", "cleanup.policy", "compact,delete")))
            .toStream()
            .to("out"));
        put(c, "dsl-multi-topic-and-two-streams", b -> {
            b.<String, String>stream(List.of("b", "a", "c")).mapValues(v -> v).to("out");
            b.<String, String>stream("other").filter((k, v) -> true).to("out2");
        });
        put(c, "dsl-after-aggregation", b -> b.<String, String>stream("in")
            .groupBy((k, v) -> v)
            .aggregate(() -> "", (k, v, a) -> a + v)
            .toStream()
            .filter((k, v) -> true)
            .mapValues(v -> v.length())
            .to("out", Produced.with(Serdes.String(), Serdes.Integer())));
        put(c, "dsl-to-extractor", b -> b.<String, String>stream("in")
            .to(new Ext(), Produced.as("dynamic")));
        put(c, "dsl-group-by-key-named-no-repartition", b -> b.<String, String>stream("in")
            .groupByKey(Grouped.as("unused"))
            .count()
            .toStream()
            .to("out"));
        put(c, "dsl-named-processors", b -> b.<String, String>stream("in")
            .mapValues(v -> v, Named.as("mv"))
            .selectKey((k, v) -> v, Named.as("sk"))
            .peek((k, v) -> { }, Named.as("pk"))
            .groupByKey(Grouped.as("by-value"))
            .reduce((a, v) -> v, Named.as("red"), Materialized.as("red-store"))
            .toStream()
            .to("out"));
        put(c, "dsl-table-to-stream", b -> b.<String, String>table("t").toStream().to("out"));
        put(c, "dsl-table-materialized", b -> b.<String, String>table("t", Materialized.as("t-store"))
            .toStream()
            .filter((k, v) -> !v.isEmpty())
            .to("out"));
        // Several updates of one key in one record, and deletes of absent keys: what the
        // record cache (on by default, flushed after every record by TopologyTestDriver) hides.
        put(c, "dsl-flat-map-values-count", b -> b.<String, String>stream("in")
            .flatMapValues(v -> List.of(v.split(" ", -1)))
            .groupByKey()
            .count()
            .toStream()
            .to("out"));
        put(c, "dsl-table-materialized-to-stream", b -> b.<String, String>table("t", Materialized.as("tomb-store"))
            .toStream()
            .to("out"));
        // Two repartition topics feeding one output topic: the order in which the driver
        // takes the records of several internal topics shows.
        put(c, "dsl-two-key-changes-one-topic", b -> {
            final KStream<String, String> s = b.stream("in");
            for (int i = 0; i < 2; i++) {
                s.flatMap((k, v) -> {
                    final List<KeyValue<String, String>> out = new java.util.ArrayList<>();
                    for (final String w : v.split(" ", -1)) {
                        out.add(KeyValue.pair(w, v));
                    }
                    return out;
                })
                    .groupByKey()
                    .count()
                    .toStream()
                    .to("out");
            }
        });
        put(c, "dsl-table-named-unlogged", b -> {
            b.<String, String>stream("events").mapValues(v -> v).to("out");
            b.table("t", Consumed.<String, String>as("tbl"),
                Materialized.<String, String, org.apache.kafka.streams.state.KeyValueStore<
                    org.apache.kafka.common.utils.Bytes, byte[]>>as("s2").withLoggingDisabled())
                .toStream(Named.as("tbl-out"))
                .to("out2");
        });
    }
}
