package dev.ksg.peer;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.internals.StreamsRebalanceData;
import org.apache.kafka.common.message.StreamsGroupHeartbeatRequestData;
import org.apache.kafka.common.message.StreamsGroupHeartbeatRequestDataJsonConverter;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder;
import org.apache.kafka.streams.processor.internals.StreamThread;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;

/**
 * Computes, without any network, the {@code Topology} field of the joining StreamsGroupHeartbeat
 * that a Kafka Streams 4.4.0 member of this application sends.
 *
 * <p>It runs the very code the client runs instead of re-deriving it, so it cannot drift from what
 * Java sends:
 * <ol>
 *   <li>{@code new TopologyMetadata(builder, config).buildAndRewriteTopology()} as the
 *       KafkaStreams constructor does (decorates internal topic names with application.id);</li>
 *   <li>{@code StreamThread.initStreamsRebalanceData(...)} (package-private, called reflectively),
 *       which runs {@code initBrokerTopology}: subtopology id = nodeGroupId, source topics minus
 *       repartition topics, repartition sinks, repartition sources and changelogs with
 *       {@code InternalTopicConfig.properties(topic.* overrides, windowstore retention)} and
 *       {@code replication.factor}, copartition groups;</li>
 *   <li>{@code StreamsGroupHeartbeatRequestManager.HeartbeatState.fromStreamsToHeartbeatRequest(Map)}
 *       (private, called reflectively), which turns that into the request's subtopology list with the
 *       client's sorting (subtopologies by id, topics by name, topic configs by key);</li>
 *   <li>epoch = {@code StreamsRebalanceData.topologyEpoch()} (always 0 in 4.4.0).</li>
 * </ol>
 * The result is serialized with Kafka's generated {@code StreamsGroupHeartbeatRequestDataJsonConverter}
 * at the newest StreamsGroupHeartbeat version, so field names are the schema's in lowerCamelCase and
 * list order is wire order.
 */
final class WireTopology {
    private WireTopology() {
    }

    static StreamsGroupHeartbeatRequestData.Topology compute(final Topology topology, final StreamsConfig config)
        throws ReflectiveOperationException {
        final Field builderField = Topology.class.getDeclaredField("internalTopologyBuilder");
        builderField.setAccessible(true);
        final InternalTopologyBuilder builder = (InternalTopologyBuilder) builderField.get(topology);

        final TopologyMetadata metadata = new TopologyMetadata(builder, config);
        metadata.buildAndRewriteTopology();

        final Method init = StreamThread.class.getDeclaredMethod("initStreamsRebalanceData",
            UUID.class, StreamsConfig.class, Optional.class, Optional.class, TopologyMetadata.class,
            Supplier.class, Supplier.class);
        init.setAccessible(true);
        final Supplier<Map<StreamsRebalanceData.TaskId, Long>> noOffsets = Map::of;
        final StreamsRebalanceData data = (StreamsRebalanceData) invoke(init,
            UUID.randomUUID(), config, Optional.empty(), Optional.empty(), metadata, noOffsets, noOffsets);

        final Class<?> heartbeatState = Class.forName(
            "org.apache.kafka.clients.consumer.internals.StreamsGroupHeartbeatRequestManager$HeartbeatState");
        final Method convert = heartbeatState.getDeclaredMethod("fromStreamsToHeartbeatRequest", Map.class);
        convert.setAccessible(true);
        @SuppressWarnings("unchecked")
        final List<StreamsGroupHeartbeatRequestData.Subtopology> subtopologies =
            (List<StreamsGroupHeartbeatRequestData.Subtopology>) invoke(convert, data.subtopologies());

        return new StreamsGroupHeartbeatRequestData.Topology()
            .setEpoch(data.topologyEpoch())
            .setSubtopologies(subtopologies);
    }

    static String toJson(final StreamsGroupHeartbeatRequestData.Topology topology) {
        return StreamsGroupHeartbeatRequestDataJsonConverter.TopologyJsonConverter
            .write(topology, ApiKeys.STREAMS_GROUP_HEARTBEAT.latestVersion())
            .toString();
    }

    private static Object invoke(final Method method, final Object... args) throws ReflectiveOperationException {
        try {
            return method.invoke(null, args);
        } catch (final InvocationTargetException e) {
            // Surface the client's own exception (e.g. a TopologyException), not the wrapper.
            if (e.getCause() instanceof RuntimeException) {
                throw (RuntimeException) e.getCause();
            }
            throw e;
        }
    }
}
