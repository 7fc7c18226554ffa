package dev.ksg.peer;

import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * The one topology every streams peer runs: count the records of the input topic per value.
 *
 * <pre>
 *   input (String, String)
 *     -> selectKey(value)                 re-key by value: forces a repartition
 *     -> groupByKey -> count("counts")    state store "counts" (RocksDB, changelogged)
 *     -> toStream -> output (String, Long)
 * </pre>
 *
 * The key change before the aggregation splits it into two subtopologies joined by the internal
 * topic {@code <application.id>-counts-repartition}; the store adds the changelog
 * {@code <application.id>-counts-changelog}. So a group running it has 2 x (input partitions)
 * tasks: {@code 0_p} reads the input, {@code 1_p} reads the repartition topic and owns the store.
 *
 * <p>A record whose value equals the poison value makes selectKey throw {@link PoisonRecordException};
 * the peer's uncaught-exception handler answers that with SHUTDOWN_APPLICATION. The check sits in
 * the selectKey lambda, so it adds no node to the topology.
 *
 * <p>{@code --topology join} runs instead a KStream-KTable join, the classic copartitioned
 * topology (issue 13):
 * <pre>
 *   input (String, String) -> join(table(--table), v + "|" + t) -> output (String, String)
 * </pre>
 * One subtopology reading both topics, copartition group {input, table}, and the table's store
 * with changelog {@code <application.id>-<table>-STATE-STORE-0000000000-changelog}.
 */
final class PeerTopology {
    private PeerTopology() {
    }

    static Topology build(final StreamsPeer.Options opts, final Properties props) {
        if (opts.topology.equals("join")) {
            return buildJoin(opts.input, opts.table, opts.output, props);
        }
        if (opts.topology.equals("ordertotals")) {
            return OrderTotals.build(opts.input, opts.table, opts.output, props);
        }
        if (opts.topology.equals("wordcount")) {
            return buildWordCount(opts.input, opts.output, opts.store, opts.benchEvents, props);
        }
        return build(opts.input, opts.output, opts.poison, props);
    }

    /**
     * WordCountDemo's topology, exactly ({@code streams/examples/.../wordcount/WordCountDemo.java}):
     * split each line into lower-case words on {@code \\W+}, re-key by word, count, write
     * (String word, Long count) to the output. With String default serdes as the demo sets them.
     *
     * <p>{@code store} picks the count store (issue 25's like-for-like benchmark): {@code rocksdb}
     * is the demo's own {@code count()} (the default, timestamped RocksDB store); {@code memory} is
     * {@code Stores.inMemoryKeyValueStore} with caching disabled, named as {@code count()} names
     * its store, so the repartition and changelog topics are the same in both; {@code memory-cached}
     * is the same store with caching enabled (Materialized's default), for changelog counts with
     * the record cache on (with {@code statestore.cache.max.bytes} set: the peer sets 0). {@code benchEvents}
     * adds a {@code peek} after the count that emits {@code bench first-record <epoch ms>} once
     * (the first count update this instance makes); it adds a processor, no topic.
     */
    static Topology buildWordCount(final String input, final String output, final String store,
                                   final boolean benchEvents, final Properties props) {
        final StreamsBuilder builder = new StreamsBuilder();
        final KStream<String, String> source = builder.stream(input);
        final KGroupedStream<String, String> grouped = source
            .flatMapValues(value -> Arrays.asList(value.toLowerCase(Locale.getDefault()).split("\\W+")))
            .groupBy((key, value) -> value);
        final KTable<String, Long> counts;
        if (store.equals("memory")) {
            counts = grouped.count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore(WORDCOUNT_STORE))
                .withKeySerde(Serdes.String())
                .withValueSerde(Serdes.Long())
                .withCachingDisabled());
        } else if (store.equals("memory-cached")) {
            counts = grouped.count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore(WORDCOUNT_STORE))
                .withKeySerde(Serdes.String())
                .withValueSerde(Serdes.Long())
                .withCachingEnabled());
        } else {
            counts = grouped.count();
        }
        KStream<String, Long> updates = counts.toStream();
        if (benchEvents) {
            final AtomicBoolean first = new AtomicBoolean(false);
            updates = updates.peek((k, v) -> {
                if (!first.get() && first.compareAndSet(false, true)) {
                    StreamsPeer.benchEvent("first-record");
                }
            });
        }
        updates.to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build(props);
    }

    /** The name {@code count()} gives WordCountDemo's store (its fourth generated name). */
    static final String WORDCOUNT_STORE = "KSTREAM-AGGREGATE-STATE-STORE-0000000003";

    static Topology buildJoin(final String input, final String table, final String output, final Properties props) {
        final StreamsBuilder builder = new StreamsBuilder();
        final KTable<String, String> customers = builder.table(table, Consumed.with(Serdes.String(), Serdes.String()));
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .join(customers, (order, customer) -> order + "|" + customer)
            .to(output, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build(props);
    }

    static Topology build(final String input, final String output, final String poison, final Properties props) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .selectKey((key, value) -> {
                if (value != null && value.equals(poison)) {
                    throw new PoisonRecordException("poison record (key " + key + ") on " + input);
                }
                return value;
            })
            .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        // build(props) applies the same optimizations KafkaStreams would see (none are on by
        // default); the props must be the ones the KafkaStreams instance gets.
        return builder.build(props);
    }

    /** Thrown from the topology on a poison record; the handler maps it to SHUTDOWN_APPLICATION. */
    static final class PoisonRecordException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PoisonRecordException(final String message) {
            super(message);
        }
    }
}
