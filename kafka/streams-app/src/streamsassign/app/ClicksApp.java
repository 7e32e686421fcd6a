package streamsassign.app;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * A second application for the end-to-end checks, with another topology than {@link OrdersApp}.
 *
 * <p>Topology: one sub-topology reads three sources, {@code clicks} and {@code views} (streams,
 * merged) and {@code users} (a table materialized in {@code users-store}), joins each click or
 * view with its user, and writes two repartition topics: by page ({@code by-page}) and by user
 * name ({@code by-name}); a stateless branch of it samples {@code views} to
 * {@code views-sampled}. The {@code by-page} sub-topology counts per page in 10-minute windows
 * (window store {@code page-counts}); the {@code by-name} sub-topology aggregates per name
 * ({@code name-totals}); a stateless sub-topology upper-cases {@code events}. All inputs are
 * keyed by user, so the join's sources are co-partitioned.
 *
 * <p>{@code ClicksApp key=value...} runs an instance exactly as {@link OrdersApp} does (same
 * arguments, same JSON-lines output). {@code ClicksApp produce bootstrap prefix count users
 * [start partitions]} creates the topics when missing and writes {@code count} records to each
 * of {@code clicks}, {@code views}, {@code users} and {@code events} (acks=all).
 */
public final class ClicksApp {

    private ClicksApp() { }

    static Topology topology(String prefix) {
        Serde<String> text = Serdes.String();
        StreamsBuilder builder = new StreamsBuilder();
        KTable<String, String> users = builder.table(prefix + "users", Consumed.with(text, text),
            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("users-store")
                .withKeySerde(text).withValueSerde(text));
        KStream<String, String> clicks = builder.stream(prefix + "clicks", Consumed.with(text, text));
        KStream<String, String> views = builder.stream(prefix + "views", Consumed.with(text, text));
        views.filter((user, page) -> page != null && page.endsWith("0"))
            .to(prefix + "views-sampled", Produced.with(text, text));
        KStream<String, String> enriched =
            clicks.merge(views).join(users, (page, name) -> page + "," + name);
        enriched.groupBy((user, value) -> value.substring(0, value.indexOf(',')),
                Grouped.with("by-page", text, text))
            .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMinutes(10)))
            .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("page-counts")
                .withKeySerde(text).withValueSerde(Serdes.Long()))
            .toStream((window, count) -> window.key())
            .to(prefix + "page-counts-out", Produced.with(text, Serdes.Long()));
        enriched.groupBy((user, value) -> value.substring(value.indexOf(',') + 1),
                Grouped.with("by-name", text, text))
            .aggregate(() -> 0L, (name, value, total) -> total + 1,
                Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("name-totals")
                    .withKeySerde(text).withValueSerde(Serdes.Long()))
            .toStream()
            .to(prefix + "name-totals-out", Produced.with(text, Serdes.Long()));
        builder.stream(prefix + "events", Consumed.with(text, text))
            .filter((key, value) -> value != null)
            .mapValues(value -> value.toUpperCase())
            .to(prefix + "events-out", Produced.with(text, text));
        return builder.build();
    }

    public static void main(String[] argv) throws Exception {
        if (argv.length > 0 && argv[0].equals("produce")) {
            produce(argv);
        } else {
            OrdersApp.run(argv, ClicksApp::topology);
        }
    }

    private static void produce(String[] args) throws Exception {
        String bootstrap = args[1];
        String prefix = args[2];
        int count = Integer.parseInt(args[3]);
        int users = Integer.parseInt(args[4]);
        int start = args.length > 5 ? Integer.parseInt(args[5]) : 0;
        int partitions = args.length > 6 ? Integer.parseInt(args[6]) : 4;
        Properties adminProps = new Properties();
        adminProps.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(adminProps)) {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> missing = new ArrayList<>();
            for (String name : new String[] {"clicks", "views", "users", "events", "views-sampled",
                    "page-counts-out", "name-totals-out", "events-out"}) {
                if (!existing.contains(prefix + name)) {
                    missing.add(new NewTopic(prefix + name, partitions, (short) 1));
                }
            }
            if (!missing.isEmpty()) {
                admin.createTopics(missing).all().get();
            }
        }
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = start; i < start + count; i++) {
                String user = "user-" + (i % users);
                producer.send(new ProducerRecord<>(prefix + "users", user, "name-" + (i % 13)));
                producer.send(new ProducerRecord<>(prefix + "clicks", user, "page-" + (i % 29)));
                producer.send(new ProducerRecord<>(prefix + "views", user, "page-" + (i % 31)));
                producer.send(new ProducerRecord<>(prefix + "events", "event-" + i, "e" + i));
            }
            producer.flush();
        }
        System.out.println(count);
    }
}
