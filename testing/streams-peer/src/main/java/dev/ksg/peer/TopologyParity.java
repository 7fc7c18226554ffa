package dev.ksg.peer;

import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.InternalTopicProperties;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * The topology-builder parity oracle (issues 22 and 23): builds a fixed corpus of topologies
 * with Kafka Streams 4.4.0 itself and prints, for each, {@code Topology#describe()} and the
 * joining-heartbeat topology (computed by {@link WireTopology}, the client's own code). No Kafka
 * needed. {@code tests/topology_parity.rs} builds the same topologies with the crate's builder
 * (and DSL) under the same names and compares both outputs.
 *
 * <p>stdout: first {@code java <java.specification.version>}, then per topology: {@code ### <name>}, the describe() text, then one line
 * {@code json <heartbeat topology JSON>} (or {@code error <message>}). application.id is
 * {@code parity}; programs whose name ends in {@code @all} are built with
 * {@code topology.optimization=all}, all others with {@code none}.
 */
final class TopologyParity {
    private TopologyParity() {
    }

    public static void main(final String[] args) throws Exception {
        System.setProperty("peer.log.file", "/dev/stderr");
        System.setProperty("peer.log.level", "ERROR");
        final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        out.println("java " + System.getProperty("java.specification.version"));
        final Map<String, Function<Properties, Topology>> corpus = new LinkedHashMap<>();
        processorApi(corpus);
        TopologyParityDsl.programs(corpus);
        TopologyParityDslOps.programs(corpus);
        for (final Map.Entry<String, Function<Properties, Topology>> e : corpus.entrySet()) {
            final Properties props = config(e.getKey().endsWith("@all") ? "all" : "none");
            out.println("### " + e.getKey());
            try {
                final Topology topology = e.getValue().apply(props);
                out.print(topology.describe());
                out.println("json " + WireTopology.toJson(WireTopology.compute(topology, new StreamsConfig(props))));
            } catch (final Exception ex) {
                out.println("error " + ex);
            }
        }
    }

    static Properties config(final String optimization) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "parity");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir"));
        props.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, optimization);
        return props;
    }

    static InternalTopologyBuilder internal(final Topology topology) {
        try {
            final Field f = Topology.class.getDeclaredField("internalTopologyBuilder");
            f.setAccessible(true);
            return (InternalTopologyBuilder) f.get(topology);
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static final class NoOp implements Processor<Object, Object, Object, Object> {
        @Override
        public void process(final Record<Object, Object> record) {
        }
    }

    private static void store(final Topology t, final String name, final String... processors) {
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name),
            Serdes.String(), Serdes.Long()), processors);
    }

    /** The Processor-API corpus; the Rust twins are in tests/topology_parity.rs. */
    static void processorApi(final Map<String, Function<Properties, Topology>> c) {
        c.put("papi-single", p -> {
            final Topology t = new Topology();
            t.addSource("src", "in");
            t.addProcessor("proc", NoOp::new, "src");
            t.addSink("sink", "out", "proc");
            return t;
        });
        c.put("papi-repartition-and-store", p -> {
            final Topology t = new Topology();
            t.addSource("src", "in");
            t.addProcessor("proc", NoOp::new, "src");
            internal(t).addInternalTopic("rep", InternalTopicProperties.empty());
            t.addSink("to-rep", "rep", "proc");
            t.addSource("from-rep", "rep");
            t.addProcessor("proc2", NoOp::new, "from-rep");
            store(t, "counts", "proc2");
            t.addSink("out", "out", "proc2");
            return t;
        });
        c.put("papi-branches", p -> {
            final Topology t = new Topology();
            t.addSource("s", "t");
            t.addProcessor("b-leaf", NoOp::new, "s");
            t.addProcessor("a-leaf", NoOp::new, "s");
            t.addProcessor("c-chain", NoOp::new, "s");
            t.addProcessor("d", NoOp::new, "c-chain");
            t.addProcessor("e", NoOp::new, "d");
            t.addSink("k1", "o1", "e", "a-leaf");
            t.addSink("k2", "o2", "b-leaf");
            return t;
        });
        c.put("papi-diamond", p -> {
            final Topology t = new Topology();
            t.addSource("source", "x", "c", "a", "b");
            t.addProcessor("left", NoOp::new, "source");
            t.addProcessor("right", NoOp::new, "source");
            t.addProcessor("right-2", NoOp::new, "right");
            t.addProcessor("merge", NoOp::new, "left", "right-2");
            t.addSink("sink", "out", "merge");
            return t;
        });
        c.put("papi-shared-store", p -> {
            final Topology t = new Topology();
            t.addSource("s1", "a");
            t.addSource("s2", "b");
            t.addProcessor("p1", NoOp::new, "s1");
            t.addProcessor("p2", NoOp::new, "s2");
            store(t, "shared", "p1", "p2");
            store(t, "own", "p2");
            t.addSource("s3", "c");
            t.addProcessor("p3", NoOp::new, "s3");
            return t;
        });
        c.put("papi-stores-and-logging", p -> {
            final Topology t = new Topology();
            t.addSource("src", "in");
            t.addProcessor("proc", NoOp::new, "src");
            t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("plain"),
                Serdes.String(), Serdes.Long()).withLoggingDisabled(), "proc");
            t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("tuned"),
                Serdes.String(), Serdes.Long()).withLoggingEnabled(Map.of("min.insync.replicas", "2",
                "cleanup.policy", "compact,delete")), "proc");
            store(t, "zeta", "proc");
            store(t, "alpha", "proc");
            return t;
        });
        c.put("papi-copartition", p -> {
            final Topology t = new Topology();
            t.addSource("orders-src", "orders");
            t.addSource("customers-src", "customers");
            t.addProcessor("join", NoOp::new, "orders-src", "customers-src");
            internal(t).copartitionSources(List.of("orders-src", "customers-src"));
            t.addSink("joined", "joined", "join");
            return t;
        });
        c.put("papi-fixed-partitions", p -> {
            final Topology t = new Topology();
            t.addSource("src", "in");
            t.addProcessor("proc", NoOp::new, "src");
            internal(t).addInternalTopic("fixed", new InternalTopicProperties(6));
            internal(t).addInternalTopic("free", InternalTopicProperties.empty());
            t.addSink("to-fixed", "fixed", "proc");
            t.addSink("to-free", "free", "proc");
            t.addSource("from-fixed", "fixed");
            t.addSource("from-free", "free");
            t.addProcessor("both", NoOp::new, "from-fixed", "from-free");
            t.addSink("unread", "plain-out", "both");
            return t;
        });
        c.put("papi-wide-fanout", p -> {
            final Topology t = new Topology();
            t.addSource("root", "in");
            t.addProcessor("m", NoOp::new, "root");
            t.addProcessor("q", NoOp::new, "root");
            t.addProcessor("b", NoOp::new, "m");
            t.addProcessor("z", NoOp::new, "root");
            t.addProcessor("y", NoOp::new, "q");
            t.addProcessor("x", NoOp::new, "y");
            t.addProcessor("a", NoOp::new, "root");
            t.addProcessor("k", NoOp::new, "b");
            t.addSink("s-a", "oa", "a", "x", "k");
            return t;
        });
    }
}
