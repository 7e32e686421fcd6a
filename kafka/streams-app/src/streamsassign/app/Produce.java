package streamsassign.app;

import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes the input of {@link OrdersApp}: {@code count} records to {@code orders} (key
 * "order-i", value "customer-(i mod customers),amount") and to {@code payments} (key
 * "customer-(i mod customers)"), keyed so every partition gets records. Arguments:
 * bootstrap count customers [start]. Waits for every acknowledgement (acks=all).
 */
public final class Produce {

    private Produce() { }

    public static void main(String[] args) {
        String bootstrap = args[0];
        int count = Integer.parseInt(args[1]);
        int customers = Integer.parseInt(args[2]);
        int start = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = start; i < start + count; i++) {
                String customer = "customer-" + (i % customers);
                producer.send(new ProducerRecord<>("orders", "order-" + i,
                    customer + "," + (1 + i % 97)));
                producer.send(new ProducerRecord<>("payments", customer, "payment-" + i));
            }
            producer.flush();
        }
        System.out.println(count);
    }
}
