package dev.ksg.peer;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.InternalTopicProperties;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder;

/**
 * The copartition-group oracle (issue 13): builds topologies with copartitioned source topics
 * and prints the heartbeat topology Kafka Streams itself computes for each, no Kafka needed.
 *
 * <p>stdin: one topology per line. Subtopologies are separated by {@code |}, the groups of a
 * subtopology by {@code ;}, the topics of a group by {@code ,}. A group starting with {@code !}
 * is read by the subtopology but not copartitioned. A topic starting with {@code @} is an
 * internal (repartition) topic: registered with {@code addInternalTopic}, written by one extra
 * subtopology (source topic {@code feeder}, one sink per repartition topic), and named on the
 * wire {@code topology-order-<name>}. Example: {@code a,b;!x|c,@d,e}.
 *
 * <p>For each group the topology gets one source node {@code src-K-J} reading the group's
 * topics in the order given (so Java adds them to the copartition set in that order), every
 * source of subtopology K feeds one no-op processor {@code proc-K} (which makes them one
 * subtopology), and each copartitioned group is declared with
 * {@code InternalTopologyBuilder.copartitionSources([src-K-J])}, in line order, as the DSL's
 * joins do. The heartbeat topology is then computed by {@link WireTopology} (the client's own
 * {@code initBrokerTopology} and {@code HeartbeatState} code).
 *
 * <p>stdout: first {@code java <java.specification.version>}, then one JSON line per input
 * line ({@code error <message>} when Kafka Streams refuses the topology).
 */
final class TopologyOrder {
    private TopologyOrder() {
    }

    public static void main(final String[] args) throws Exception {
        // Logs (StreamsConfig warnings) to stderr, and only errors; stdout is the protocol.
        System.setProperty("peer.log.file", "/dev/stderr");
        System.setProperty("peer.log.level", "ERROR");
        final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        out.println("java " + System.getProperty("java.specification.version"));
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "topology-order");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir"));
        final StreamsConfig config = new StreamsConfig(props);
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            try {
                out.println(WireTopology.toJson(WireTopology.compute(build(line), config)));
            } catch (final RuntimeException e) {
                out.println("error " + e);
            }
        }
    }

    static Topology build(final String spec) throws ReflectiveOperationException {
        final Topology topology = new Topology();
        final Field builderField = Topology.class.getDeclaredField("internalTopologyBuilder");
        builderField.setAccessible(true);
        final InternalTopologyBuilder builder = (InternalTopologyBuilder) builderField.get(topology);
        final List<String> copartitioned = new ArrayList<>();
        final List<String> internal = new ArrayList<>();
        final String[] subtopologies = spec.split("\\|", -1);
        for (int k = 0; k < subtopologies.length; k++) {
            final List<String> nodes = new ArrayList<>();
            final String[] groups = subtopologies[k].split(";", -1);
            for (int j = 0; j < groups.length; j++) {
                final boolean plain = groups[j].startsWith("!");
                final String[] topics = (plain ? groups[j].substring(1) : groups[j]).split(",", -1);
                for (int t = 0; t < topics.length; t++) {
                    if (topics[t].startsWith("@")) {
                        topics[t] = topics[t].substring(1);
                        builder.addInternalTopic(topics[t], InternalTopicProperties.empty());
                        internal.add(topics[t]);
                    }
                }
                final String node = "src-" + k + "-" + j;
                topology.addSource(node, topics);
                nodes.add(node);
                if (!plain) {
                    copartitioned.add(node);
                }
            }
            topology.addProcessor("proc-" + k, NoOp::new, nodes.toArray(new String[0]));
        }
        if (!internal.isEmpty()) {
            topology.addSource("feeder-src", "feeder");
            topology.addProcessor("feeder-proc", NoOp::new, "feeder-src");
            for (final String topic : internal) {
                topology.addSink("sink-" + topic, topic, "feeder-proc");
            }
        }
        for (final String node : copartitioned) {
            builder.copartitionSources(List.of(node));
        }
        return topology;
    }

    private static final class NoOp implements Processor<Object, Object, Object, Object> {
        @Override
        public void process(final Record<Object, Object> record) {
        }
    }
}
