package streamsassign.app;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes the input of {@link OrdersApp}: {@code count} records to {@code orders} (key
 * "order-i", value "customer-(i mod customers),amount") and to {@code payments} (key
 * "customer-(i mod customers)"), keyed so every partition gets records. Arguments:
 * bootstrap prefix count customers [start partitions]; the topics are {@code prefix + name}
 * and are created first (with {@code partitions} partitions, default 4) when missing. Waits for
 * every acknowledgement (acks=all).
 */
public final class Produce {

    private Produce() { }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String prefix = args[1];
        int count = Integer.parseInt(args[2]);
        int customers = Integer.parseInt(args[3]);
        int start = args.length > 4 ? Integer.parseInt(args[4]) : 0;
        int partitions = args.length > 5 ? Integer.parseInt(args[5]) : 4;
        Properties adminProps = new Properties();
        adminProps.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(adminProps)) {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> missing = new ArrayList<>();
            for (String name : new String[] {"orders", "payments", "customer-totals",
                    "payment-counts-out"}) {
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
                String customer = "customer-" + (i % customers);
                producer.send(new ProducerRecord<>(prefix + "orders", "order-" + i,
                    customer + "," + (1 + i % 97)));
                producer.send(new ProducerRecord<>(prefix + "payments", customer, "payment-" + i));
            }
            producer.flush();
        }
        System.out.println(count);
    }
}
