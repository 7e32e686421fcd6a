package org.apache.kafka.connect.runtime.distributed;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractCoordinator;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.JoinGroupResponseData.JoinGroupResponseMember;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.connect.runtime.TargetState;
import org.apache.kafka.connect.storage.ClusterConfigState;
import org.apache.kafka.connect.util.ConnectorTaskId;

import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * streams-assign reference harness for the assignors around Streams: Kafka's consumer
 * assignors (kafka-clients: RangeAssignor, RoundRobinAssignor, StickyAssignor,
 * CooperativeStickyAssignor) and Kafka Connect's EagerAssignor and
 * IncrementalCooperativeAssignor (connect-runtime), run unmodified on the project's JSON
 * (the formats of tests/corpora/kafka-consumer/FORMAT.md).
 *
 * <p>Batch protocol: one JSON request per line on standard input, one JSON answer per line on
 * standard output. Requests: {@code {"kind": "consumer", "state": <consumer-group state>}} and
 * {@code {"kind": "connect", "sequence": <Connect sequence with every per-round field explicit>}}.
 * The answer is {@code {"result": <expected-file document>}} (Connect: without {@code debug}),
 * {@code {"kafka_exception": class, "message": text}} when Kafka's code throws, or
 * {@code {"error": text}} for a malformed request.
 *
 * <p>Consumers reach the assignor as ConsumerCoordinator hands them over: a HashMap of
 * Subscriptions in JoinGroup order, sticky user data produced by each member's own assignor
 * instance ({@code onAssignment} then {@code subscriptionUserData}). Connect members send the
 * metadata bytes IncrementalCooperativeConnectProtocol writes; the leader's WorkerCoordinator is
 * an instance whose constructor is skipped (its collaborators are a live group) with just the
 * fields the assignors read set: config snapshot, generation, last completed generation. The
 * class sits in Connect's package for that.
 */
public final class GroupAssignorsHarness {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private GroupAssignorsHarness() {
    }

    public static void main(final String[] args) throws Exception {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        final PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode answer;
            try {
                answer = handle(MAPPER.readTree(line));
            } catch (final BadRequest e) {
                final ObjectNode error = JSON.objectNode();
                error.put("error", e.getMessage());
                answer = error;
            }
            out.println(MAPPER.writeValueAsString(answer));
            out.flush();
        }
    }

    /** A request the harness cannot read (not Kafka's failure). */
    static final class BadRequest extends RuntimeException {
        BadRequest(final String message) {
            super(message);
        }
    }

    static JsonNode handle(final JsonNode request) {
        final String kind = request.path("kind").asText("");
        final ObjectNode answer = JSON.objectNode();
        try {
            if ("consumer".equals(kind)) {
                answer.set("result", consumer(required(request, "state")));
            } else if ("connect".equals(kind)) {
                answer.set("result", connect(required(request, "sequence")));
            } else {
                throw new BadRequest("request.kind: expected consumer or connect, got " + kind);
            }
        } catch (final BadRequest e) {
            throw e;
        } catch (final RuntimeException e) {
            answer.removeAll();
            answer.put("kafka_exception", e.getClass().getName());
            answer.put("message", String.valueOf(e.getMessage()));
        }
        return answer;
    }

    private static JsonNode required(final JsonNode node, final String field) {
        final JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            throw new BadRequest("request." + field + ": missing");
        }
        return value;
    }

    // ---------------------------------------------------------------- consumer assignors

    static ObjectNode consumer(final JsonNode state) {
        final String name = state.path("assignor").asText();
        final ConsumerPartitionAssignor assignor = consumerAssignor(name);
        final JsonNode racks = state.path("partition_racks");
        final Map<String, Node> rackNodes = new LinkedHashMap<>();
        final List<PartitionInfo> partitions = new ArrayList<>();
        final Iterator<Map.Entry<String, JsonNode>> topics = state.path("topics").fields();
        while (topics.hasNext()) {
            final Map.Entry<String, JsonNode> topic = topics.next();
            for (int p = 0; p < topic.getValue().asInt(); p++) {
                final List<Node> replicas = new ArrayList<>();
                for (final JsonNode rack : racks.path(topic.getKey()).path(p)) {
                    replicas.add(rackNodes.computeIfAbsent(rack.asText(),
                        r -> new Node(rackNodes.size(), "broker-" + rackNodes.size(), 9092, r)));
                }
                final Node[] nodes = replicas.toArray(new Node[0]);
                partitions.add(new PartitionInfo(topic.getKey(), p,
                    nodes.length > 0 ? nodes[0] : Node.noNode(), nodes, nodes));
            }
        }
        final Cluster cluster = new Cluster("cluster", rackNodes.values(), partitions,
            Collections.emptySet(), Collections.emptySet());

        final Map<String, Subscription> subscriptions = new HashMap<>();
        for (final JsonNode member : state.path("members")) {
            final String memberId = member.path("member_id").asText();
            final List<String> subscribed = new ArrayList<>();
            member.path("topics").forEach(t -> subscribed.add(t.asText()));
            final List<TopicPartition> owned = new ArrayList<>();
            member.path("owned_partitions").forEach(tp ->
                owned.add(new TopicPartition(tp.get(0).asText(), tp.get(1).asInt())));
            final JsonNode generationNode = member.path("generation");
            final Integer generation = generationNode.isNumber() ? generationNode.asInt() : null;
            final Optional<String> rack = member.path("rack").isTextual()
                ? Optional.of(member.path("rack").asText()) : Optional.empty();
            final Optional<String> instance = member.path("group_instance_id").isTextual()
                ? Optional.of(member.path("group_instance_id").asText()) : Optional.empty();
            final ByteBuffer userData = userData(name, memberId, subscribed, owned, generation, instance);
            final Subscription subscription = new Subscription(subscribed, userData, owned,
                generation == null ? -1 : generation, rack);
            subscription.setGroupInstanceId(instance);
            subscriptions.put(memberId, subscription);
        }
        final GroupAssignment assignment = assignor.assign(cluster, new GroupSubscription(subscriptions));
        final ObjectNode byMember = JSON.objectNode();
        for (final String memberId : new java.util.TreeSet<>(subscriptions.keySet())) {
            final Assignment decided = assignment.groupAssignment().get(memberId);
            final List<TopicPartition> sorted = new ArrayList<>(
                decided == null ? Collections.emptyList() : decided.partitions());
            sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
            final ArrayNode list = byMember.putArray(memberId);
            for (final TopicPartition tp : sorted) {
                list.addArray().add(tp.topic()).add(tp.partition());
            }
        }
        final ObjectNode result = JSON.objectNode();
        result.set("assignment", byMember);
        return result;
    }

    private static ConsumerPartitionAssignor consumerAssignor(final String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new BadRequest("state.assignor: unknown assignor " + name);
        }
    }

    /** The user data each member's own assignor instance would send after its last assignment. */
    private static ByteBuffer userData(final String name, final String memberId, final List<String> topics,
                                       final List<TopicPartition> owned, final Integer generation,
                                       final Optional<String> instance) {
        final ConsumerPartitionAssignor own;
        if ("sticky".equals(name)) {
            own = new StickyAssignor();
        } else if ("cooperative-sticky".equals(name)) {
            own = new CooperativeStickyAssignor();
        } else {
            return null;
        }
        if (generation != null) {
            own.onAssignment(new Assignment(owned),
                new ConsumerGroupMetadata("group", generation, memberId, instance));
        }
        return own.subscriptionUserData(new HashSet<>(topics));
    }

    // ---------------------------------------------------------------- Connect assignors

    /** MockTime's essentials: a clock the harness sets before each round. */
    static final class SettableTime implements Time {
        long ms;

        @Override
        public long milliseconds() {
            return ms;
        }

        @Override
        public long nanoseconds() {
            return ms * 1_000_000L;
        }

        @Override
        public void sleep(final long millis) {
            ms += millis;
        }

        @Override
        public void waitObject(final Object obj, final Supplier<Boolean> condition, final long deadlineMs) {
            throw new UnsupportedOperationException("waitObject");
        }
    }

    static ObjectNode connect(final JsonNode sequence) {
        final String name = sequence.path("assignor").asText();
        final boolean eager = "eager".equals(name);
        final boolean sessioned = !"compatible".equals(sequence.path("protocol").asText("sessioned"));
        final int maxDelay = sequence.path("scheduled_rebalance_max_delay_ms").asInt(300000);
        final SettableTime time = new SettableTime();
        final ConnectAssignor assignor = eager
            ? new EagerAssignor(new LogContext())
            : new IncrementalCooperativeAssignor(new LogContext(), time, maxDelay);
        final ConnectProtocolCompatibility protocol = eager ? ConnectProtocolCompatibility.EAGER
            : sessioned ? ConnectProtocolCompatibility.SESSIONED : ConnectProtocolCompatibility.COMPATIBLE;
        final ObjectNode result = JSON.objectNode();
        final ArrayNode rounds = result.putArray("rounds");
        for (final JsonNode round : sequence.path("rounds")) {
            time.ms = round.path("time_ms").asLong();
            final long offset = round.path("config_offset").asLong();
            final String leader = round.path("leader").asText();
            final int generation = round.path("generation").asInt();
            final WorkerCoordinator coordinator = coordinator(configState(offset, round.path("connectors")),
                generation, round.path("last_completed_generation").asInt(), leader);
            final List<JoinGroupResponseMember> members = new ArrayList<>();
            for (final JsonNode member : round.path("members")) {
                final List<String> connectors = new ArrayList<>();
                member.path("owned_connectors").forEach(c -> connectors.add(c.asText()));
                final List<ConnectorTaskId> tasks = new ArrayList<>();
                member.path("owned_tasks").forEach(t -> tasks.add(new ConnectorTaskId(t.get(0).asText(), t.get(1).asInt())));
                final ExtendedAssignment ownedAssignment = new ExtendedAssignment(
                    IncrementalCooperativeConnectProtocol.CONNECT_PROTOCOL_V1,
                    ConnectProtocol.Assignment.NO_ERROR, leader, "", offset, connectors, tasks,
                    Collections.emptyList(), Collections.emptyList(), 0);
                final ByteBuffer metadata = IncrementalCooperativeConnectProtocol.serializeMetadata(
                    new ExtendedWorkerState(member.path("url").asText(), offset, ownedAssignment), sessioned);
                final byte[] bytes = new byte[metadata.remaining()];
                metadata.get(bytes);
                members.add(new JoinGroupResponseMember().setMemberId(member.path("worker_id").asText()).setMetadata(bytes));
            }
            final Map<String, ByteBuffer> answers = assignor.performAssignment(leader, protocol, members, coordinator);
            final ObjectNode out = rounds.addObject();
            out.put("leader", leader);
            out.put("generation", generation);
            out.put("config_offset", offset);
            out.put("time_ms", time.ms);
            final ObjectNode workers = out.putObject("workers");
            for (final Map.Entry<String, ByteBuffer> entry : new TreeMap<>(answers).entrySet()) {
                final ObjectNode worker = workers.putObject(entry.getKey());
                if (eager) {
                    final ConnectProtocol.Assignment a = ConnectProtocol.deserializeAssignment(entry.getValue());
                    fill(worker, a.connectors(), a.tasks(), Collections.emptyList(), Collections.emptyList(),
                        0, a.error(), 0, a.offset());
                } else {
                    final ExtendedAssignment a = IncrementalCooperativeConnectProtocol.deserializeAssignment(entry.getValue());
                    fill(worker, a.connectors(), a.tasks(), a.revokedConnectors(), a.revokedTasks(),
                        a.delay(), a.error(), a.version(), a.offset());
                }
            }
        }
        return result;
    }

    private static void fill(final ObjectNode worker, final Collection<String> connectors,
                             final Collection<ConnectorTaskId> tasks, final Collection<String> revokedConnectors,
                             final Collection<ConnectorTaskId> revokedTasks, final int delay, final short error,
                             final int version, final long offset) {
        final ArrayNode assignedConnectors = worker.putArray("assigned_connectors");
        new java.util.TreeSet<>(connectors).forEach(assignedConnectors::add);
        tasksTo(worker.putArray("assigned_tasks"), tasks);
        final ArrayNode revoked = worker.putArray("revoked_connectors");
        new java.util.TreeSet<>(revokedConnectors).forEach(revoked::add);
        tasksTo(worker.putArray("revoked_tasks"), revokedTasks);
        worker.put("delay_ms", delay);
        worker.put("error", error);
        worker.put("version", version);
        worker.put("config_offset", offset);
    }

    private static void tasksTo(final ArrayNode array, final Collection<ConnectorTaskId> tasks) {
        final List<ConnectorTaskId> sorted = new ArrayList<>(tasks);
        Collections.sort(sorted);
        for (final ConnectorTaskId task : sorted) {
            array.addArray().add(task.connector()).add(task.task());
        }
    }

    private static ClusterConfigState configState(final long offset, final JsonNode connectors) {
        final Map<String, Integer> taskCounts = new HashMap<>();
        final Map<String, Map<String, String>> connectorConfigs = new HashMap<>();
        final Map<String, TargetState> targetStates = new HashMap<>();
        final Map<ConnectorTaskId, Map<String, String>> taskConfigs = new HashMap<>();
        final Iterator<Map.Entry<String, JsonNode>> it = connectors.fields();
        while (it.hasNext()) {
            final Map.Entry<String, JsonNode> connector = it.next();
            final int count = connector.getValue().asInt();
            taskCounts.put(connector.getKey(), count);
            connectorConfigs.put(connector.getKey(), Collections.emptyMap());
            targetStates.put(connector.getKey(), TargetState.STARTED);
            for (int t = 0; t < count; t++) {
                taskConfigs.put(new ConnectorTaskId(connector.getKey(), t), Collections.emptyMap());
            }
        }
        return new ClusterConfigState(offset, null, taskCounts, connectorConfigs, targetStates, taskConfigs,
            Collections.emptyMap(), Collections.emptyMap(), Collections.emptyMap(),
            Collections.emptySet(), Collections.emptySet());
    }

    /** The leader's coordinator with only what the assignors read (the constructor needs a live group). */
    private static WorkerCoordinator coordinator(final ClusterConfigState snapshot, final int generation,
                                                 final int lastCompletedGeneration, final String leader) {
        try {
            final Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            final Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            final Object unsafe = theUnsafe.get(null);
            final Method allocate = unsafeClass.getMethod("allocateInstance", Class.class);
            final WorkerCoordinator coordinator = (WorkerCoordinator) allocate.invoke(unsafe, WorkerCoordinator.class);
            set(coordinator, WorkerCoordinator.class, "log", LoggerFactory.getLogger(WorkerCoordinator.class));
            set(coordinator, WorkerCoordinator.class, "configSnapshot", snapshot);
            set(coordinator, WorkerCoordinator.class, "lastCompletedGenerationId", lastCompletedGeneration);
            final java.lang.reflect.Constructor<?> generationOf = Class.forName(
                AbstractCoordinator.class.getName() + "$Generation")
                .getDeclaredConstructor(int.class, String.class, String.class);
            generationOf.setAccessible(true);
            set(coordinator, AbstractCoordinator.class, "generation",
                generationOf.newInstance(generation, leader, "sessioned"));
            return coordinator;
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException("cannot build the leader's WorkerCoordinator: " + e, e);
        }
    }

    private static void set(final Object target, final Class<?> owner, final String field, final Object value)
        throws ReflectiveOperationException {
        final Field f = owner.getDeclaredField(field);
        f.setAccessible(true);
        f.set(target, value);
    }
}
