package dev.ksg.peer;

import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

import org.apache.kafka.streams.Topology;

/**
 * The DSL half of the {@link TopologyParity} corpus; the Rust twins (same names, same
 * operations in the same order) are in tests/topology_parity/dsl_corpus.rs.
 */
final class TopologyParityDsl {
    private TopologyParityDsl() {
    }

    static void programs(final Map<String, Function<Properties, Topology>> c) {
    }
}
