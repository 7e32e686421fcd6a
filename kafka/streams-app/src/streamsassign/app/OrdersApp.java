package streamsassign.app;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.LagInfo;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A small Kafka Streams application for the end-to-end checks of streams-assign.
 *
 * <p>Topology: sub-topology 0 reads {@code orders} ("customer,amount" values), keeps valid ones
 * and re-keys them by customer (stateless, writes a repartition topic); sub-topology 1 sums the
 * amounts per customer into the persistent store {@code order-totals}; sub-topology 2 counts
 * {@code payments} per key into the persistent store {@code payment-counts}.
 *
 * <p>Arguments are {@code key=value} pairs: bootstrap, app.id, state.dir, threads, standbys,
 * commit.ms, out (JSON-lines file of what this instance runs), topology.out (file for
 * Topology#describe()), acceptable.recovery.lag, max.warmup.replicas, probing.ms,
 * session.timeout.ms, heartbeat.ms, topics.prefix (put before the names of the input and output
 * topics, so several applications can share a broker without sharing input), restores.out
 * (JSON-lines file of the records restored into its stores and loaded by its standby tasks,
 * {@link RestoreLog}).
 *
 * <p>Every 200 ms it compares KafkaStreams#metadataForLocalThreads() and its state with the
 * last line written and, when they differ, appends one JSON line: {"seq", "time_ms", "state",
 * "threads": [{"name", "state", "active": [task ids], "standby": [task ids]}]}. A line of kind
 * "positions" carries the changelog positions of its local stores
 * (KafkaStreams#allLocalStorePartitionLags()) whenever they change. It stops on SIGTERM
 * (KafkaStreams#close, which checkpoints every store).
 */
public final class OrdersApp {

    private OrdersApp() { }

    static Topology topology(String prefix) {
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> orders =
            builder.stream(prefix + "orders", Consumed.with(Serdes.String(), Serdes.String()));
        orders.filter((key, value) -> value != null && value.indexOf(',') > 0)
            .selectKey((key, value) -> value.substring(0, value.indexOf(',')))
            .groupByKey(Grouped.with("orders-by-customer", Serdes.String(), Serdes.String()))
            .aggregate(
                () -> 0L,
                (customer, value, total) -> total + parseAmount(value),
                Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("order-totals")
                    .withKeySerde(Serdes.String())
                    .withValueSerde(Serdes.Long()))
            .toStream()
            .to(prefix + "customer-totals", Produced.with(Serdes.String(), Serdes.Long()));
        builder.stream(prefix + "payments", Consumed.with(Serdes.String(), Serdes.String()))
            .groupByKey()
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("payment-counts")
                .withKeySerde(Serdes.String())
                .withValueSerde(Serdes.Long()))
            .toStream()
            .to(prefix + "payment-counts-out", Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    private static long parseAmount(String value) {
        try {
            return Long.parseLong(value.substring(value.indexOf(',') + 1).trim());
        } catch (NumberFormatException e) {
            return 0L;
        }
    }

    public static void main(String[] argv) throws Exception {
        run(argv, OrdersApp::topology);
    }

    /** Runs the instance loop described above with the topology {@code topologyOf(prefix)}. */
    static void run(String[] argv, Function<String, Topology> topologyOf) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected key=value, got " + arg);
            }
            args.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, need(args, "app.id"));
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, need(args, "bootstrap"));
        props.put(StreamsConfig.STATE_DIR_CONFIG, need(args, "state.dir"));
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args.getOrDefault("threads", "1"));
        props.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, args.getOrDefault("standbys", "0"));
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, args.getOrDefault("commit.ms", "200"));
        props.put(StreamsConfig.ACCEPTABLE_RECOVERY_LAG_CONFIG,
            args.getOrDefault("acceptable.recovery.lag", "10000"));
        props.put(StreamsConfig.MAX_WARMUP_REPLICAS_CONFIG,
            args.getOrDefault("max.warmup.replicas", "2"));
        props.put(StreamsConfig.PROBING_REBALANCE_INTERVAL_MS_CONFIG,
            args.getOrDefault("probing.ms", "60000"));
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG),
            args.getOrDefault("session.timeout.ms", "6000"));
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG),
            args.getOrDefault("heartbeat.ms", "1000"));
        props.put(StreamsConfig.producerPrefix("linger.ms"), 0);
        // Any other Streams config, passed as config.<name>=<value> (client.tag.*, application.server).
        for (Map.Entry<String, String> arg : args.entrySet()) {
            if (arg.getKey().startsWith("config.")) {
                props.put(arg.getKey().substring("config.".length()), arg.getValue());
            }
        }

        Topology topology = topologyOf.apply(args.getOrDefault("topics.prefix", ""));
        String describeOut = args.get("topology.out");
        if (describeOut != null) {
            Files.writeString(Path.of(describeOut), topology.describe().toString());
        }
        Path out = Path.of(need(args, "out"));
        KafkaStreams streams = new KafkaStreams(topology, props);
        String restoresOut = args.get("restores.out");
        RestoreLog restores = restoresOut == null
            ? null : new RestoreLog(Path.of(restoresOut), topology.describe());
        if (restores != null) {
            streams.setGlobalStateRestoreListener(restores);
            streams.setStandbyUpdateListener(restores);
        }
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        try (PrintWriter writer = new PrintWriter(new OutputStreamWriter(
                new FileOutputStream(out.toFile(), true), StandardCharsets.UTF_8), true)) {
            streams.start();
            String lastThreads = null;
            String lastPositions = null;
            long seq = 0;
            long nextPositions = 0;
            while (true) {
                KafkaStreams.State state = streams.state();
                if (state == KafkaStreams.State.NOT_RUNNING || state == KafkaStreams.State.ERROR
                        || state == KafkaStreams.State.PENDING_SHUTDOWN
                        || state == KafkaStreams.State.PENDING_ERROR) {
                    break;
                }
                String threads = threadsJson(streams);
                String key = state + threads;
                if (!key.equals(lastThreads)) {
                    lastThreads = key;
                    writer.println("{\"kind\":\"assignment\",\"seq\":" + (seq++) + ",\"time_ms\":"
                        + System.currentTimeMillis() + ",\"state\":\"" + state + "\",\"threads\":"
                        + threads + "}");
                }
                long now = System.currentTimeMillis();
                if (now >= nextPositions && state == KafkaStreams.State.RUNNING) {
                    nextPositions = now + 1000;
                    String positions = positionsJson(streams);
                    if (positions != null && !positions.equals(lastPositions)) {
                        lastPositions = positions;
                        writer.println("{\"kind\":\"positions\",\"seq\":" + (seq++)
                            + ",\"time_ms\":" + now + ",\"positions\":" + positions + "}");
                    }
                }
                Thread.sleep(200);
            }
            writer.println("{\"kind\":\"stopped\",\"seq\":" + seq + ",\"time_ms\":"
                + System.currentTimeMillis() + ",\"state\":\"" + streams.state() + "\"}");
        } finally {
            if (restores != null) {
                restores.close();
            }
            closed.countDown();
        }
    }

    private static String need(Map<String, String> args, String key) {
        String value = args.get(key);
        if (value == null) {
            throw new IllegalArgumentException("missing argument " + key + "=...");
        }
        return value;
    }

    private static String threadsJson(KafkaStreams streams) {
        TreeMap<String, String> byName = new TreeMap<>();
        for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
            byName.put(thread.threadName(), "{\"name\":\"" + thread.threadName()
                + "\",\"state\":\"" + thread.threadState() + "\",\"active\":"
                + tasks(thread.activeTasks()) + ",\"standby\":" + tasks(thread.standbyTasks())
                + "}");
        }
        return "[" + String.join(",", byName.values()) + "]";
    }

    private static String tasks(Iterable<TaskMetadata> tasks) {
        TreeSet<org.apache.kafka.streams.processor.TaskId> ids = new TreeSet<>();
        for (TaskMetadata task : tasks) {
            ids.add(task.taskId());
        }
        List<String> quoted = new ArrayList<>();
        for (org.apache.kafka.streams.processor.TaskId id : ids) {
            quoted.add("\"" + id + "\"");
        }
        return "[" + String.join(",", quoted) + "]";
    }

    /** {"store": {"partition": [current offset position, end offset position]}} or null. */
    private static String positionsJson(KafkaStreams streams) {
        Map<String, Map<Integer, LagInfo>> lags;
        try {
            lags = streams.allLocalStorePartitionLags();
        } catch (RuntimeException e) {
            return null;
        }
        List<String> stores = new ArrayList<>();
        for (Map.Entry<String, Map<Integer, LagInfo>> store : new TreeMap<>(lags).entrySet()) {
            List<String> parts = new ArrayList<>();
            for (Map.Entry<Integer, LagInfo> part : new TreeMap<>(store.getValue()).entrySet()) {
                parts.add("\"" + part.getKey() + "\":[" + part.getValue().currentOffsetPosition()
                    + "," + part.getValue().endOffsetPosition() + "]");
            }
            stores.add("\"" + store.getKey() + "\":{" + String.join(",", parts) + "}");
        }
        return "{" + String.join(",", stores) + "}";
    }
}
