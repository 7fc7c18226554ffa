package dev.ksg.peer;

import java.io.BufferedReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.test.TestRecord;

/**
 * The Java half of the DSL driver differential test (issue 23, tests/dsl_driver_diff.rs): runs
 * programs of the {@link TopologyParity} DSL corpus through Kafka Streams' own
 * {@link TopologyTestDriver} over records the Rust test generated, and prints what each wrote
 * and its final store contents, for the test to compare with the crate's {@code DslTestDriver}.
 *
 * <p>Input (file named by the first argument): per program a line {@code ### <name>}, then
 * one line per record, {@code <topic> TAB <key> TAB <value> TAB <timestamp> TAB <headers>},
 * key and value in hex ({@code -} for a null), headers as {@code name:value} pairs in hex
 * separated by {@code ,} ({@code -} for a null value or no headers). Every program runs in a fresh driver (application.id
 * {@code parity}, String default serdes, {@code topology.optimization=all} for a program whose
 * name ends in {@code @all}, otherwise the default configuration).
 *
 * <p>Output (stdout): per program {@code ### <name>}, then per topic the driver saw written
 * (sorted by name; changelog and repartition topics included) its records in the order
 * written, {@code out <topic> <key> <value> <timestamp> <headers>}, then per store (sorted by name) its
 * entries in key order, {@code store <name> <key> <value> <timestamp>} (the value without the
 * timestamp, in the bytes of the store's value serde); or {@code error <message>} if the
 * program failed.
 */
final class DriverDiff {
    private DriverDiff() {
    }

    private static final HexFormat HEX = HexFormat.of();

    private static String hex(final byte[] b) {
        return b == null ? "-" : HEX.formatHex(b);
    }

    private static byte[] unhex(final String s) {
        return "-".equals(s) ? null : HEX.parseHex(s);
    }

    /** One input record. */
    private record Input(String topic, byte[] key, byte[] value, long timestamp, Headers headers) {
    }

    /** {@code name:value} in hex, {@code ,} between, {@code -} for a null value or none. */
    private static Headers headers(final String text) {
        final Headers headers = new RecordHeaders();
        if (!"-".equals(text)) {
            for (final String h : text.split(",")) {
                final String[] kv = h.split(":", 2);
                headers.add(new String(unhex(kv[0]), StandardCharsets.UTF_8), unhex(kv[1]));
            }
        }
        return headers;
    }

    private static String text(final Headers headers) {
        final List<String> each = new ArrayList<>();
        for (final Header h : headers) {
            each.add(hex(h.key().getBytes(StandardCharsets.UTF_8)) + ":" + hex(h.value()));
        }
        return each.isEmpty() ? "-" : String.join(",", each);
    }

    public static void main(final String[] args) throws Exception {
        System.setProperty("peer.log.file", "/dev/stderr");
        System.setProperty("peer.log.level", "ERROR");
        final PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
            StandardCharsets.UTF_8);
        final Map<String, Function<Properties, Topology>> corpus = new LinkedHashMap<>();
        TopologyParityDsl.programs(corpus);
        TopologyParityDslOps.programs(corpus);
        final Map<String, List<Input>> inputs = new LinkedHashMap<>();
        try (BufferedReader r = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8)) {
            List<Input> current = null;
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.startsWith("### ")) {
                    current = new ArrayList<>();
                    inputs.put(line.substring(4), current);
                } else if (!line.isEmpty() && current != null) {
                    final String[] f = line.split("\t", -1);
                    current.add(new Input(f[0], unhex(f[1]), unhex(f[2]), Long.parseLong(f[3]), headers(f[4])));
                }
            }
        }
        final Path stateDir = Files.createTempDirectory("driver-diff");
        for (final Map.Entry<String, List<Input>> e : inputs.entrySet()) {
            out.println("### " + e.getKey());
            final Function<Properties, Topology> program = corpus.get(e.getKey());
            if (program == null) {
                out.println("error no program " + e.getKey() + " in the Java corpus");
                continue;
            }
            try {
                // As TopologyParity: a name ending in "@all" is built and run with
                // topology.optimization=all.
                run(out, program, e.getValue(), stateDir, e.getKey().endsWith("@all") ? "all" : "none");
            } catch (final Exception ex) {
                out.println("error " + String.valueOf(ex).replace('\n', ' '));
            }
        }
        out.flush();
    }

    private static void run(final PrintStream out, final Function<Properties, Topology> program,
                            final List<Input> inputs, final Path stateDir, final String optimization)
        throws Exception {
        final Properties props = TopologyParity.config(optimization);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        final Topology topology = program.apply(props);
        try (TopologyTestDriver driver = new TopologyTestDriver(topology, props)) {
            final Map<String, TestInputTopic<byte[], byte[]>> topics = new TreeMap<>();
            for (final Input in : inputs) {
                topics.computeIfAbsent(in.topic(), t -> driver.createInputTopic(t,
                        new ByteArraySerializer(), new ByteArraySerializer()))
                    .pipeInput(new TestRecord<>(in.key(), in.value(), in.headers(), in.timestamp()));
            }
            for (final String topic : new TreeSet<>(driver.producedTopicNames())) {
                final TestOutputTopic<byte[], byte[]> t = driver.createOutputTopic(topic,
                    new ByteArrayDeserializer(), new ByteArrayDeserializer());
                for (final TestRecord<byte[], byte[]> r : t.readRecordsToList()) {
                    out.println("out " + topic + " " + hex(r.key()) + " " + hex(r.value()) + " "
                        + r.timestamp() + " " + text(r.headers()));
                }
            }
            for (final String store : new TreeSet<>(driver.getAllStateStores().keySet())) {
                final KeyValueStore<Object, ValueAndTimestamp<Object>> kv = driver.getTimestampedKeyValueStore(store);
                if (kv == null) {
                    out.println("error store " + store + " is not a timestamped key-value store");
                    continue;
                }
                final TreeMap<String, String> entries = new TreeMap<>();
                try (KeyValueIterator<Object, ValueAndTimestamp<Object>> it = kv.all()) {
                    while (it.hasNext()) {
                        final KeyValue<Object, ValueAndTimestamp<Object>> entry = it.next();
                        final String key = hex(bytes(entry.key));
                        entries.put(key, "store " + store + " " + key + " " + hex(bytes(entry.value.value())) + " "
                            + entry.value.timestamp());
                    }
                }
                entries.values().forEach(out::println);
            }
        }
    }

    /** The bytes of a corpus key or value, as its serde (String, Long, Integer) writes them. */
    private static byte[] bytes(final Object o) {
        if (o == null) {
            return null;
        } else if (o instanceof String s) {
            return s.getBytes(StandardCharsets.UTF_8);
        } else if (o instanceof Long l) {
            return ByteBuffer.allocate(8).putLong(l).array();
        } else if (o instanceof Integer i) {
            return ByteBuffer.allocate(4).putInt(i).array();
        } else if (o instanceof byte[] b) {
            return Arrays.copyOf(b, b.length);
        }
        throw new IllegalArgumentException("no serde known for " + o.getClass());
    }
}
