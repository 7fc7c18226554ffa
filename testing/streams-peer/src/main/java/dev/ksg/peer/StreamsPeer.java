package dev.ksg.peer;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.StreamThread;

/**
 * A Java Kafka Streams 4.4.0 application driven over stdin/stdout by tests. See README.md beside
 * the pom for the command line and the control protocol.
 *
 * <p>No static logger here on purpose: the log destination is chosen from the arguments, so log4j
 * must not initialise before {@link #main} has set {@code peer.log.file}.
 */
public final class StreamsPeer {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** stdout as it was at start: protocol lines only. System.out is pointed at stderr. */
    private static PrintStream protocol;

    private final Options opts;
    private final Properties props;
    private final Path stateDir;
    private final boolean ownsStateDir;
    private final Path logFile;
    private final long startNanos;
    private KafkaStreams streams;
    private KafkaProducer<String, String> producer;
    private final AtomicBoolean closed = new AtomicBoolean(false);

    private StreamsPeer(final Options opts, final Properties props, final Path stateDir, final boolean ownsStateDir,
                        final Path logFile, final long startNanos) {
        this.opts = opts;
        this.props = props;
        this.stateDir = stateDir;
        this.ownsStateDir = ownsStateDir;
        this.logFile = logFile;
        this.startNanos = startNanos;
    }

    public static void main(final String[] args) throws Exception {
        final long startNanos = System.nanoTime();
        protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        // Anything a library prints to System.out must not corrupt the protocol.
        System.setOut(System.err);

        final Options opts;
        try {
            opts = Options.parse(args);
        } catch (final IllegalArgumentException e) {
            System.err.println("streams-peer: " + e.getMessage());
            System.err.println(Options.USAGE);
            System.exit(2);
            return;
        }
        if (opts.help) {
            System.err.println(Options.USAGE);
            return;
        }

        if (opts.printTopology) {
            System.setProperty("peer.log.file", "/dev/stderr");
            System.setProperty("peer.log.level", opts.logLevel == null ? "WARN" : opts.logLevel);
            // A state dir is required by StreamsConfig only nominally; nothing is written to it.
            final Properties props = opts.streamsProperties(Paths.get(System.getProperty("java.io.tmpdir")));
            final Topology topology = PeerTopology.build(opts, props);
            protocol.println(WireTopology.toJson(WireTopology.compute(topology, new StreamsConfig(props))));
            return;
        }

        final boolean ownsStateDir = opts.stateDir == null;
        final Path stateDir = ownsStateDir
            ? Files.createTempDirectory("streams-peer-")
            : Files.createDirectories(Paths.get(opts.stateDir));
        final Path logFile = opts.logFile != null ? Paths.get(opts.logFile) : stateDir.resolve("peer.log");
        System.setProperty("peer.log.file", logFile.toAbsolutePath().toString());
        System.setProperty("peer.log.level", opts.logLevel == null ? "INFO" : opts.logLevel);

        final StreamsPeer peer = new StreamsPeer(opts, opts.streamsProperties(stateDir), stateDir, ownsStateDir,
            logFile, startNanos);
        System.exit(peer.run());
    }

    private int run() throws IOException {
        final Topology topology = PeerTopology.build(opts, props);
        streams = new KafkaStreams(topology, props);
        streams.setStateListener((newState, oldState) -> {
            log("state " + oldState + " -> " + newState + " at " + elapsedMs() + " ms since JVM start");
            emit("state " + newState);
            if (opts.benchEvents) {
                benchEvent("state " + newState);
            }
        });
        if (opts.benchEvents) {
            streams.setGlobalStateRestoreListener(new BenchRestoreListener());
        }
        streams.setUncaughtExceptionHandler(e -> {
            final StreamThreadExceptionResponse response =
                isPoison(e) ? StreamThreadExceptionResponse.SHUTDOWN_APPLICATION : StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
            emit("uncaught " + response + " " + oneLine(rootCause(e).toString()));
            return response;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> closeStreams(true), "streams-peer-sigterm"));

        emit("ready");
        streams.start();

        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.strip();
            if (line.isEmpty()) {
                continue;
            }
            final String[] words = line.split("\\s+", 2);
            final String command = words[0];
            final String rest = words.length > 1 ? words[1] : "";
            try {
                switch (command) {
                    case "tasks":
                        emit(tasksLine());
                        break;
                    case "metadata":
                        emit("metadata " + metadataJson());
                        break;
                    case "key-metadata":
                        emit(keyMetadata(rest));
                        break;
                    case "describe":
                        emit("describe " + JSON.writeValueAsString(topology.describe().toString()));
                        break;
                    case "topology":
                        final Topology fresh = PeerTopology.build(opts, props);
                        emit("topology " + WireTopology.toJson(WireTopology.compute(fresh, new StreamsConfig(props))));
                        break;
                    case "state":
                        emit("state " + streams.state());
                        break;
                    case "info":
                        emit("info " + infoJson());
                        break;
                    case "shutdown-application":
                        emit(shutdownApplication());
                        break;
                    case "produce":
                        emit(produce(rest));
                        break;
                    case "close":
                        closeAndExit(!rest.equals("remain"));
                        return 0;
                    default:
                        emit("err " + command + " unknown command");
                }
            } catch (final Exception e) {
                emit("err " + command + " " + oneLine(e.toString()));
            }
        }
        log("stdin closed: closing");
        closeAndExit(true);
        return 0;
    }

    private void closeAndExit(final boolean leaveGroup) {
        closeStreams(leaveGroup);
        emit("closed");
    }

    /** Idempotent: the control loop and the SIGTERM hook may both get here. */
    private void closeStreams(final boolean leaveGroup) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        final long t0 = System.nanoTime();
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
        final boolean done = streams.close(CloseOptions.timeout(Duration.ofSeconds(30))
            .withGroupMembershipOperation(leaveGroup
                ? CloseOptions.GroupMembershipOperation.LEAVE_GROUP
                : CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP));
        log("close(leaveGroup=" + leaveGroup + ") " + (done ? "finished" : "timed out") + " in "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
        if (ownsStateDir) {
            deleteRecursively(stateDir);
        }
    }

    /** {@code tasks active=0_0,1_0 standby=} over all local stream threads, sorted by task id. */
    private String tasksLine() {
        final TreeSet<TaskId> active = new TreeSet<>();
        final TreeSet<TaskId> standby = new TreeSet<>();
        for (final ThreadMetadata thread : streams.metadataForLocalThreads()) {
            thread.activeTasks().stream().map(TaskMetadata::taskId).forEach(active::add);
            thread.standbyTasks().stream().map(TaskMetadata::taskId).forEach(standby::add);
        }
        return "tasks active=" + join(active) + " standby=" + join(standby);
    }

    private static String join(final Collection<TaskId> ids) {
        return ids.stream().map(TaskId::toString).collect(Collectors.joining(","));
    }

    /** metadataForAllStreamsClients(), sorted by endpoint; partitions as topic-partition strings. */
    private String metadataJson() throws IOException {
        final String self = props.getProperty(StreamsConfig.APPLICATION_SERVER_CONFIG);
        final List<StreamsMetadata> all = new ArrayList<>(streams.metadataForAllStreamsClients());
        all.sort(Comparator.comparing(m -> m.host() + ":" + m.port()));
        final ArrayNode clients = JSON.createArrayNode();
        for (final StreamsMetadata m : all) {
            final ObjectNode c = clients.addObject();
            final String endpoint = m.host() + ":" + m.port();
            c.put("endpoint", endpoint);
            c.put("local", endpoint.equals(self));
            // Only this instance's process id is known: StreamsMetadata does not carry it.
            if (endpoint.equals(self)) {
                c.put("processId", processId().toString());
            }
            partitions(c.putArray("active"), m.topicPartitions());
            partitions(c.putArray("standby"), m.standbyTopicPartitions());
            m.stateStoreNames().stream().sorted().forEach(c.putArray("stores")::add);
            m.standbyStateStoreNames().stream().sorted().forEach(c.putArray("standbyStores")::add);
        }
        return JSON.writeValueAsString(clients);
    }

    /**
     * {@code key-metadata STORE KEY}: {@code queryMetadataForKey(STORE, KEY, StringSerializer)} as
     * {@code key-metadata {"active":"h:p","standby":["h:p",…],"partition":p}} (an unknown active
     * host is {@code "unavailable:-1"}; an unknown store, for which Java returns null, is
     * {@code key-metadata null}).
     */
    private String keyMetadata(final String rest) throws IOException {
        final String[] parts = rest.split("\\s+", 2);
        if (parts.length < 2) {
            return "err key-metadata usage: key-metadata STORE KEY";
        }
        final KeyQueryMetadata m = streams.queryMetadataForKey(parts[0], parts[1], new StringSerializer());
        if (m == null) {
            return "key-metadata null";
        }
        final ObjectNode o = JSON.createObjectNode();
        o.put("active", m.activeHost().host() + ":" + m.activeHost().port());
        m.standbyHosts().stream().map(h -> h.host() + ":" + h.port()).sorted()
            .forEach(o.putArray("standby")::add);
        o.put("partition", m.partition());
        return "key-metadata " + JSON.writeValueAsString(o);
    }

    private static void partitions(final ArrayNode into, final Collection<TopicPartition> tps) {
        tps.stream()
            .sorted(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition))
            .forEach(tp -> into.add(tp.topic() + "-" + tp.partition()));
    }

    private String infoJson() throws Exception {
        final ObjectNode o = JSON.createObjectNode();
        o.put("processId", processId().toString());
        o.put("applicationId", opts.group);
        o.put("endpoint", opts.appServer);
        o.put("stateDir", stateDir.toString());
        o.put("logFile", logFile.toString());
        o.put("state", streams.state().toString());
        final ArrayNode threads = o.putArray("threads");
        streams.metadataForLocalThreads().stream()
            .sorted(Comparator.comparing(ThreadMetadata::threadName))
            .forEach(t -> threads.addObject()
                .put("name", t.threadName())
                .put("state", t.threadState())
                .put("consumerClientId", t.consumerClientId()));
        o.put("uptimeMs", elapsedMs());
        return JSON.writeValueAsString(o);
    }

    /**
     * What {@code KafkaStreams.handleStreamsUncaughtException} does for SHUTDOWN_APPLICATION, minus
     * the exception: {@code StreamThread.sendShutdownRequest()} on every live stream thread. With the
     * streams protocol that sets the sticky ShutdownApplication flag of the next heartbeats; the broker
     * then answers every member of the group with status SHUTDOWN_APPLICATION and each instance goes
     * to ERROR. (Streams' handler path additionally starts a thread when only one is alive, because
     * there the calling thread is the dying one; here the threads are healthy, so that is skipped.)
     */
    private String shutdownApplication() throws ReflectiveOperationException {
        final Field threadsField = KafkaStreams.class.getDeclaredField("threads");
        threadsField.setAccessible(true);
        @SuppressWarnings("unchecked")
        final List<StreamThread> threads = (List<StreamThread>) threadsField.get(streams);
        int requested = 0;
        synchronized (threads) {
            for (final StreamThread t : threads) {
                if (t.isAlive()) {
                    t.sendShutdownRequest();
                    requested++;
                }
            }
        }
        if (requested == 0) {
            return "err shutdown-application no live stream thread";
        }
        log("shutdown-application requested on " + requested + " stream thread(s)");
        return "ok shutdown-application threads=" + requested;
    }

    /** {@code produce TOPIC KEY VALUE...}: one record, sent synchronously. Key "-" = null key. */
    private String produce(final String rest) throws Exception {
        final String[] parts = rest.split("\\s+", 3);
        if (parts.length < 3) {
            return "err produce usage: produce TOPIC KEY VALUE";
        }
        if (producer == null) {
            final Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.bootstrap);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, opts.group + "-peer-producer");
            p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
            opts.producerOverrides(p);
            producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        }
        final String key = parts[1].equals("-") ? null : parts[1];
        final RecordMetadata md = producer.send(new ProducerRecord<>(parts[0], key, parts[2])).get(30, TimeUnit.SECONDS);
        return "ok produce " + md.topic() + "-" + md.partition() + "@" + md.offset();
    }

    private UUID processId() {
        try {
            final Field f = KafkaStreams.class.getDeclaredField("processId");
            f.setAccessible(true);
            return (UUID) f.get(streams);
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean isPoison(final Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof PeerTopology.PoisonRecordException) {
                return true;
            }
        }
        return false;
    }

    private static Throwable rootCause(final Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }

    private long elapsedMs() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    private static String oneLine(final String s) {
        return s.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n");
    }

    private static void emit(final String line) {
        synchronized (protocol) {
            protocol.println(line);
            protocol.flush();
        }
    }

    /**
     * {@code bench <what> <epoch ms>} on the protocol stream (only with {@code --bench-events}):
     * wall-clock milliseconds, so a script can subtract the time it launched the process.
     */
    static void benchEvent(final String what) {
        emit("bench " + what + " " + System.currentTimeMillis());
    }

    /** Restore start and end per changelog partition, as {@code bench restore-…} events. */
    private static final class BenchRestoreListener implements StateRestoreListener {
        @Override
        public void onRestoreStart(final TopicPartition tp, final String store, final long start, final long end) {
            benchEvent("restore-start " + tp + " " + start + " " + end);
        }

        @Override
        public void onBatchRestored(final TopicPartition tp, final String store, final long batchEnd,
                                    final long records) {
        }

        @Override
        public void onRestoreEnd(final TopicPartition tp, final String store, final long total) {
            benchEvent("restore-end " + tp + " " + total);
        }
    }

    private static void log(final String message) {
        org.slf4j.LoggerFactory.getLogger(StreamsPeer.class).info(message);
    }

    private static void deleteRecursively(final Path root) {
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (final IOException ignored) {
            // Best effort: a leftover temp dir is harmless.
        }
    }

    /** Command-line options; every one has a default except --group (and --bootstrap to run). */
    static final class Options {
        static final String USAGE = String.join("\n",
            "usage: StreamsPeer [--print-topology] --group ID [--bootstrap HOST:PORT] [options]",
            "  --group ID            application.id = the Streams group id (required)",
            "  --bootstrap H:P       bootstrap.servers (required unless --print-topology)",
            "  --input TOPIC         input topic (default streams-peer-input)",
            "  --output TOPIC        output topic (default streams-peer-output)",
            "  --topology NAME       count (default), join: stream(input).join(table(--table)) -> output,",
            "                        or wordcount: WordCountDemo's topology (split, groupBy word, count),",
            "                        or ordertotals: orders (--input) joined with customers (--table),",
            "                        summed per region into store region-totals (OrderTotals.java)",
            "  --store KIND          wordcount's count store: rocksdb (default, the demo's), memory",
            "                        (Stores.inMemoryKeyValueStore, caching disabled) or memory-cached",
            "                        (the same with caching enabled: Materialized's default; the cache",
            "                        still needs --config statestore.cache.max.bytes=N, 0 here by default)",
            "  --bench-events        also print 'bench <event> <epoch ms>' lines: state changes, the first",
            "                        count update (wordcount), restore start/end per changelog partition",
            "  --table TOPIC         the KTable topic of --topology join (default customers)",
            "  --app-server H:P      application.server (default: unset)",
            "  --tag K=V             client.tag.K=V (repeatable)",
            "  --threads N           num.stream.threads (default 1)",
            "  --state-dir DIR       state.dir (default: a fresh temp dir, deleted on close)",
            "  --commit-ms MS        commit.interval.ms (default 100)",
            "  --processing-guarantee G  processing.guarantee: at_least_once (default) or exactly_once_v2",
            "  --poison VALUE        input value that triggers SHUTDOWN_APPLICATION (default __poison__)",
            "  --config K=V          any other Streams/client config (repeatable; last wins)",
            "  --log-file FILE       log file (default STATE_DIR/peer.log; --print-topology logs to stderr)",
            "  --log-level LEVEL     root log level (default INFO; WARN for --print-topology)",
            "  --print-topology      print the heartbeat topology as JSON and exit, no Kafka needed");

        boolean printTopology;
        boolean help;
        String group;
        String bootstrap;
        String input = "streams-peer-input";
        String output = "streams-peer-output";
        String topology = "count";
        String table = "customers";
        String store = "rocksdb";
        boolean benchEvents;
        String appServer;
        final Map<String, String> tags = new LinkedHashMap<>();
        int threads = 1;
        String stateDir;
        long commitMs = 100;
        String processingGuarantee = StreamsConfig.AT_LEAST_ONCE;
        String poison = "__poison__";
        final Map<String, String> configs = new LinkedHashMap<>();
        String logFile;
        String logLevel;

        static Options parse(final String[] args) {
            final Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                final String a = args[i];
                switch (a) {
                    case "--print-topology": o.printTopology = true; continue;
                    case "--bench-events": o.benchEvents = true; continue;
                    case "-h":
                    case "--help": o.help = true; continue;
                    default: break;
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("missing value for " + a);
                }
                final String v = args[++i];
                switch (a) {
                    case "--group": o.group = v; break;
                    case "--bootstrap": o.bootstrap = v; break;
                    case "--input": o.input = v; break;
                    case "--output": o.output = v; break;
                    case "--topology": o.topology = v; break;
                    case "--table": o.table = v; break;
                    case "--store": o.store = v; break;
                    case "--app-server": o.appServer = v; break;
                    case "--tag": putKv(o.tags, a, v); break;
                    case "--threads": o.threads = Integer.parseInt(v); break;
                    case "--state-dir": o.stateDir = v; break;
                    case "--commit-ms": o.commitMs = Long.parseLong(v); break;
                    case "--processing-guarantee": o.processingGuarantee = v; break;
                    case "--poison": o.poison = v; break;
                    case "--config": putKv(o.configs, a, v); break;
                    case "--log-file": o.logFile = v; break;
                    case "--log-level": o.logLevel = v; break;
                    default: throw new IllegalArgumentException("unknown option " + a);
                }
            }
            if (o.help) {
                return o;
            }
            if (o.group == null || o.group.isEmpty()) {
                throw new IllegalArgumentException("--group is required");
            }
            if (!o.topology.equals("count") && !o.topology.equals("join") && !o.topology.equals("wordcount")
                && !o.topology.equals("ordertotals")) {
                throw new IllegalArgumentException("--topology is count, join, wordcount or ordertotals, not "
                    + o.topology);
            }
            if (!o.store.equals("rocksdb") && !o.store.equals("memory") && !o.store.equals("memory-cached")) {
                throw new IllegalArgumentException("--store is rocksdb, memory or memory-cached, not " + o.store);
            }
            if (!o.processingGuarantee.equals(StreamsConfig.AT_LEAST_ONCE)
                && !o.processingGuarantee.equals(StreamsConfig.EXACTLY_ONCE_V2)) {
                throw new IllegalArgumentException("--processing-guarantee is at_least_once or exactly_once_v2, not "
                    + o.processingGuarantee);
            }
            if (!o.printTopology && (o.bootstrap == null || o.bootstrap.isEmpty())) {
                throw new IllegalArgumentException("--bootstrap is required");
            }
            return o;
        }

        private static void putKv(final Map<String, String> into, final String option, final String kv) {
            final int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(option + " wants K=V, got " + kv);
            }
            into.put(kv.substring(0, eq), kv.substring(eq + 1));
        }

        /** The one place the Streams configuration is made: run mode and --print-topology share it. */
        Properties streamsProperties(final Path stateDir) {
            final Properties p = new Properties();
            p.put(StreamsConfig.APPLICATION_ID_CONFIG, group);
            // Never contacted with --print-topology; StreamsConfig only insists it is set.
            p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap != null ? bootstrap : "127.0.0.1:9");
            p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
            if (appServer != null) {
                p.put(StreamsConfig.APPLICATION_SERVER_CONFIG, appServer);
            }
            tags.forEach((k, v) -> p.put(StreamsConfig.CLIENT_TAG_PREFIX + k, v));
            p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
            p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
            p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, commitMs);
            // exactly_once_v2: Streams then reads read_committed and gives each stream thread one
            // transactional producer (transactional.id <application.id>-<processId>-<thread index>).
            p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, processingGuarantee);
            // No record cache: every count update reaches the output topic at the next commit.
            p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L);
            if (topology.equals("wordcount")) {
                // WordCountDemo's own settings (the cache is off above, as the demo has it).
                p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
                p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
                p.put(org.apache.kafka.clients.consumer.ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            }
            configs.forEach(p::put);
            return p;
        }

        /** Client configs from --config that a plain producer understands (security settings …). */
        void producerOverrides(final Properties p) {
            configs.forEach((k, v) -> {
                if (k.startsWith("security.") || k.startsWith("ssl.") || k.startsWith("sasl.")) {
                    p.put(k, v);
                }
            });
        }
    }
}
