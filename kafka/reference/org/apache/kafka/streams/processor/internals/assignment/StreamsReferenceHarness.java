package org.apache.kafka.streams.processor.internals.assignment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.InternalTopicManager;
import org.apache.kafka.streams.processor.internals.ThreadAssignmentBridge;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * streams-assign reference harness: Kafka Streams' own classic task assignors run on the
 * project's cluster-state JSON (see docs/kafka-reference.md of the project).
 *
 * <p>Batch protocol: one JSON request per line on standard input, one JSON answer per line on
 * standard output. A request is {@code {"assignor": "high_availability" | "sticky" |
 * "fallback_prior", "state": <cluster state>, "repeat": n}}; the answer is
 * {@code {"result": <assignment>, "nanos": [n timings of assign()]}}, or
 * {@code {"kafka_exception": class, "message": text}} when Kafka's code throws, or
 * {@code {"error": text}} when the request itself is malformed.
 *
 * <p>The class sits in Kafka's package {@code org.apache.kafka.streams.processor.internals.assignment}
 * so it can use package-private members of {@link ClientState}; the lags are put into the
 * {@code ClientState}'s private lag map by reflection (Kafka computes them from offset sums the
 * project's format does not always carry).
 */
public final class StreamsReferenceHarness {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final long LONG_MAX = Long.MAX_VALUE;
    private static final long LATEST_OFFSET = -2L;

    private StreamsReferenceHarness() {
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
        final String assignor = request.path("assignor").asText("high_availability");
        final JsonNode state = request.get("state");
        if (state == null || !state.isObject()) {
            throw new BadRequest("request.state: expected a cluster-state object");
        }
        final int repeat = Math.max(1, request.path("repeat").asInt(1));
        final Input input = Input.parse(state);
        final ArrayNode nanos = JSON.arrayNode();
        ObjectNode result = null;
        for (int run = 0; run < repeat; run++) {
            final Built built = input.build();
            final LegacyTaskAssignor taskAssignor = taskAssignor(assignor);
            final boolean probing;
            final long start = System.nanoTime();
            try {
                probing = taskAssignor.assign(built.clients, built.allTasks, built.statefulTasks,
                    built.rackAwareTaskAssignor, input.configs);
            } catch (final RuntimeException e) {
                return kafkaException(e);
            }
            nanos.add(System.nanoTime() - start);
            if (run == repeat - 1) {
                try {
                    result = input.output(built, probing);
                } catch (final RuntimeException e) {
                    return kafkaException(e);
                }
            }
        }
        final ObjectNode answer = JSON.objectNode();
        answer.set("result", result);
        answer.set("nanos", nanos);
        return answer;
    }

    private static ObjectNode kafkaException(final RuntimeException e) {
        final ObjectNode answer = JSON.objectNode();
        answer.put("kafka_exception", e.getClass().getName());
        answer.put("message", String.valueOf(e.getMessage()));
        return answer;
    }

    static LegacyTaskAssignor taskAssignor(final String name) {
        switch (name) {
            case "high_availability":
                return new HighAvailabilityTaskAssignor();
            case "sticky":
                return new LegacyStickyTaskAssignor();
            case "fallback_prior":
                return new FallbackPriorTaskAssignor();
            default:
                throw new BadRequest("request.assignor: unknown assignor " + name);
        }
    }

    /** What Kafka's assignor receives, fresh for every run (assign() mutates the ClientStates). */
    static final class Built {
        final Map<ProcessId, ClientState> clients = new HashMap<>();
        final Set<TaskId> allTasks = new HashSet<>();
        final Set<TaskId> statefulTasks = new HashSet<>();
        RackAwareTaskAssignor rackAwareTaskAssignor;
    }

    static final class Consumer {
        String memberId;
        final Set<TaskId> prevActive = new LinkedHashSet<>();
        final Set<TaskId> prevStandby = new LinkedHashSet<>();
        final List<TopicPartition> owned = new ArrayList<>();
        String rack;
    }

    static final class Client {
        ProcessId id;
        String idText;
        int capacity;
        final Set<TaskId> prevActive = new LinkedHashSet<>();
        final Set<TaskId> prevStandby = new LinkedHashSet<>();
        final Map<TaskId, Long> lags = new TreeMap<>();
        final Map<String, String> tags = new HashMap<>();
        List<Consumer> consumers;
        String rack;
    }

    /** The parsed cluster state (read once, built into Kafka's objects for every run). */
    static final class Input {
        AssignmentConfigs configs;
        final List<TaskId> stateful = new ArrayList<>();
        final List<TaskId> stateless = new ArrayList<>();
        final List<Client> clients = new ArrayList<>();
        final Map<TaskId, List<TopicPartition>> taskPartitions = new HashMap<>();
        final Map<TaskId, List<TopicPartition>> changelogPartitions = new HashMap<>();
        final Map<TopicPartition, List<String>> partitionRacks = new HashMap<>();
        final Map<String, String> clientRacks = new HashMap<>();
        final Map<TaskId, Long> noStateLag = new HashMap<>();
        boolean revocation;
        String leader;
        Long nowMs;

        static Input parse(final JsonNode state) {
            final Input input = new Input();
            final JsonNode configs = state.path("configs");
            final List<String> tagKeys = new ArrayList<>();
            configs.path("rack_aware_assignment_tags").forEach(t -> tagKeys.add(t.asText()));
            input.configs = new AssignmentConfigs(
                configs.path("acceptable_recovery_lag").asLong(10_000L),
                configs.path("max_warmup_replicas").asInt(2),
                configs.path("num_standby_replicas").asInt(0),
                configs.path("probing_rebalance_interval_ms").asLong(600_000L),
                tagKeys,
                optionalInt(configs.get("rack_aware_assignment_traffic_cost")),
                optionalInt(configs.get("rack_aware_assignment_non_overlap_cost")),
                configs.path("rack_aware_assignment_strategy").asText("none"));
            state.path("stateful_tasks").forEach(t -> input.stateful.add(TaskId.parse(t.asText())));
            state.path("stateless_tasks").forEach(t -> input.stateless.add(TaskId.parse(t.asText())));
            final Set<TaskId> known = new HashSet<>(input.stateful);
            known.addAll(input.stateless);
            final Set<TaskId> statefulSet = new HashSet<>(input.stateful);
            final Map<TaskId, Long> endOffsetSums = new HashMap<>();
            state.path("changelog_end_offset_sums").fields().forEachRemaining(
                e -> endOffsetSums.put(TaskId.parse(e.getKey()), e.getValue().asLong()));
            final Long unknownEnd = LONG_MAX;
            for (final TaskId task : input.stateful) {
                input.noStateLag.put(task, endOffsetSums.getOrDefault(task, unknownEnd));
            }
            for (final JsonNode node : state.path("clients")) {
                input.clients.add(parseClient(node, known, statefulSet, endOffsetSums));
            }
            partitionMap(state.path("task_partitions"), known, input.taskPartitions);
            partitionMap(state.path("task_changelog_partitions"), known, input.changelogPartitions);
            state.path("partition_racks").fields().forEachRemaining(e -> {
                final int colon = e.getKey().lastIndexOf(':');
                final TopicPartition tp = new TopicPartition(e.getKey().substring(0, colon),
                    Integer.parseInt(e.getKey().substring(colon + 1)));
                final List<String> racks = new ArrayList<>();
                e.getValue().forEach(r -> racks.add(r.isNull() ? null : r.asText()));
                input.partitionRacks.put(tp, racks);
            });
            state.path("client_racks").fields().forEachRemaining(
                e -> input.clientRacks.put(e.getKey().toLowerCase(), e.getValue().asText()));
            for (final Client client : input.clients) {
                if (client.consumers != null) {
                    for (final Consumer consumer : client.consumers) {
                        input.revocation |= !consumer.owned.isEmpty();
                    }
                }
            }
            if (state.hasNonNull("leader")) {
                input.leader = state.get("leader").asText();
            }
            if (state.hasNonNull("now_ms")) {
                input.nowMs = state.get("now_ms").asLong();
            }
            return input;
        }

        private static OptionalInt optionalInt(final JsonNode node) {
            return node == null || node.isNull() ? OptionalInt.empty() : OptionalInt.of(node.asInt());
        }

        private static void partitionMap(final JsonNode node, final Set<TaskId> known,
                                         final Map<TaskId, List<TopicPartition>> into) {
            node.fields().forEachRemaining(e -> {
                final TaskId task = TaskId.parse(e.getKey());
                if (!known.contains(task)) {
                    return;
                }
                final List<TopicPartition> partitions = new ArrayList<>();
                e.getValue().forEach(p -> partitions.add(new TopicPartition(p.get(0).asText(), p.get(1).asInt())));
                into.put(task, partitions);
            });
        }

        private static void tasks(final JsonNode list, final Set<TaskId> known, final Set<TaskId> into) {
            for (final JsonNode t : list) {
                final TaskId task = TaskId.parse(t.asText());
                if (known.contains(task)) {
                    into.add(task);
                }
            }
        }

        private static Client parseClient(final JsonNode node, final Set<TaskId> known,
                                          final Set<TaskId> stateful, final Map<TaskId, Long> endOffsetSums) {
            final Client client = new Client();
            client.idText = node.get("id").asText().toLowerCase();
            client.id = new ProcessId(java.util.UUID.fromString(client.idText));
            node.path("tags").fields().forEachRemaining(e -> client.tags.put(e.getKey(), e.getValue().asText()));
            if (node.hasNonNull("rack")) {
                client.rack = node.get("rack").asText();
            }
            if (node.has("consumers") && !node.get("consumers").isNull()) {
                client.consumers = new ArrayList<>();
                for (final JsonNode c : node.get("consumers")) {
                    final Consumer consumer = new Consumer();
                    consumer.memberId = c.get("member_id").asText();
                    tasks(c.path("prev_active"), known, consumer.prevActive);
                    tasks(c.path("prev_standby"), known, consumer.prevStandby);
                    c.path("owned_partitions").forEach(
                        p -> consumer.owned.add(new TopicPartition(p.get(0).asText(), p.get(1).asInt())));
                    consumer.rack = c.hasNonNull("rack") ? c.get("rack").asText() : client.rack;
                    client.consumers.add(consumer);
                }
            }
            client.capacity = node.has("capacity") ? node.get("capacity").asInt()
                : client.consumers == null ? 1 : client.consumers.size();
            if (node.has("prev_active")) {
                tasks(node.get("prev_active"), known, client.prevActive);
            } else if (client.consumers != null) {
                client.consumers.forEach(c -> client.prevActive.addAll(c.prevActive));
            }
            if (node.has("prev_standby")) {
                tasks(node.get("prev_standby"), known, client.prevStandby);
            } else if (client.consumers != null) {
                client.consumers.forEach(c -> client.prevStandby.addAll(c.prevStandby));
            }
            final Map<TaskId, Long> given = new HashMap<>();
            if (node.has("task_offset_sums")) {
                // Kafka's own ClientState.computeTaskLags turns offset sums into lags.
                final ClientState scratch = new ClientState(client.id, 1, Collections.emptyMap());
                final Map<TaskId, Long> sums = new HashMap<>();
                node.get("task_offset_sums").fields().forEachRemaining(e -> {
                    final TaskId task = TaskId.parse(e.getKey());
                    if (stateful.contains(task)) {
                        sums.put(task, e.getValue().asLong());
                    }
                });
                scratch.addPreviousTasksAndOffsetSums("scratch", sums);
                final Map<TaskId, Long> ends = new HashMap<>();
                for (final TaskId task : stateful) {
                    ends.put(task, endOffsetSums.getOrDefault(task, LONG_MAX));
                }
                scratch.computeTaskLags(client.id, ends);
                for (final TaskId task : sums.keySet()) {
                    given.put(task, scratch.lagFor(task));
                }
            } else {
                node.path("task_lags").fields().forEachRemaining(e -> {
                    final TaskId task = TaskId.parse(e.getKey());
                    if (stateful.contains(task)) {
                        given.put(task, e.getValue().asLong());
                    }
                });
            }
            // As ClientState.initializePrevTasks derives them: a reported task running as active
            // (offset sum LATEST_OFFSET) is a previous active, any other reported task a previous standby.
            for (final TaskId task : new TreeSet<>(given.keySet())) {
                if (given.get(task) == LATEST_OFFSET) {
                    client.prevActive.add(task);
                }
            }
            for (final TaskId task : new TreeSet<>(given.keySet())) {
                if (!client.prevActive.contains(task)) {
                    client.prevStandby.add(task);
                }
            }
            client.prevStandby.removeAll(client.prevActive);
            client.lags.putAll(given);
            return client;
        }

        Built build() {
            // Kafka fills these hash containers in the order its leader meets members and partitions,
            // which the input does not record; the convention (ours too) is ProcessId / TaskId order,
            // which only decides the order inside one hash bucket.
            final Built built = new Built();
            built.statefulTasks.addAll(new TreeSet<>(stateful));
            built.allTasks.addAll(new TreeSet<>(allTasksInOrder()));
            final Field lagField;
            try {
                lagField = ClientState.class.getDeclaredField("taskLagTotals");
                lagField.setAccessible(true);
            } catch (final NoSuchFieldException e) {
                throw new IllegalStateException("ClientState.taskLagTotals not found in this Kafka version", e);
            }
            final Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer = new HashMap<>();
            final List<Client> byProcessId = new ArrayList<>(clients);
            byProcessId.sort((a, b) -> a.id.compareTo(b.id));
            for (final Client client : byProcessId) {
                final ClientState state = new ClientState(client.id, client.capacity, client.tags);
                state.addPreviousActiveTasks(new HashSet<>(client.prevActive));
                state.addPreviousStandbyTasks(new HashSet<>(client.prevStandby));
                try {
                    @SuppressWarnings("unchecked")
                    final Map<TaskId, Long> lags = (Map<TaskId, Long>) lagField.get(state);
                    // Every stateful task has a lag, as after ClientState.computeTaskLags: without
                    // reported state it is the task's end offset sum (Long.MAX_VALUE when unknown).
                    for (final TaskId task : stateful) {
                        final Long lag = client.lags.get(task);
                        lags.put(task, lag != null ? lag : noStateLag.get(task));
                    }
                } catch (final IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
                final Map<String, Optional<String>> racks = new HashMap<>();
                if (client.consumers != null) {
                    for (final Consumer consumer : client.consumers) {
                        final Map<TaskId, Long> reported = new HashMap<>();
                        for (final TaskId task : consumer.prevActive) {
                            if (built.statefulTasks.contains(task)) {
                                reported.put(task, 0L);
                            }
                        }
                        for (final TaskId task : consumer.prevStandby) {
                            if (built.statefulTasks.contains(task)) {
                                reported.put(task, 0L);
                            }
                        }
                        state.addPreviousTasksAndOffsetSums(consumer.memberId, reported);
                        state.addOwnedPartitions(consumer.owned, consumer.memberId);
                        racks.put(consumer.memberId, Optional.ofNullable(consumer.rack));
                    }
                } else {
                    final String rack = client.rack != null ? client.rack : clientRacks.get(client.idText);
                    racks.put(client.idText + "-consumer", Optional.ofNullable(rack));
                }
                racksForProcessConsumer.put(client.id, racks);
                built.clients.put(client.id, state);
            }
            built.rackAwareTaskAssignor = rackAwareTaskAssignor(racksForProcessConsumer);
            return built;
        }

        private RackAwareTaskAssignor rackAwareTaskAssignor(
                final Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer) {
            final Map<String, Node> nodesByRack = new HashMap<>();
            final List<Node> nodes = new ArrayList<>();
            final List<PartitionInfo> partitions = new ArrayList<>();
            final Map<TaskId, Set<TopicPartition>> partitionsForTask = new HashMap<>();
            for (final Map.Entry<TaskId, List<TopicPartition>> e : taskPartitions.entrySet()) {
                partitionsForTask.put(e.getKey(), new HashSet<>(e.getValue()));
                for (final TopicPartition tp : e.getValue()) {
                    final Node[] replicas = replicas(tp, nodesByRack, nodes);
                    partitions.add(new PartitionInfo(tp.topic(), tp.partition(),
                        replicas.length == 0 ? null : replicas[0], replicas, replicas));
                }
            }
            final Map<TaskId, Set<TopicPartition>> changelogsForTask = new HashMap<>();
            final Map<String, List<TopicPartitionInfo>> changelogInfo = new HashMap<>();
            for (final Map.Entry<TaskId, List<TopicPartition>> e : changelogPartitions.entrySet()) {
                changelogsForTask.put(e.getKey(), new HashSet<>(e.getValue()));
                for (final TopicPartition tp : e.getValue()) {
                    if (!partitionRacks.containsKey(tp)) {
                        continue; // "failed to describe": Kafka disables rack awareness
                    }
                    final List<Node> replicas = List.of(replicas(tp, nodesByRack, nodes));
                    changelogInfo.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(
                        new TopicPartitionInfo(tp.partition(), replicas.isEmpty() ? null : replicas.get(0),
                            replicas, replicas));
                }
            }
            final Map<Subtopology, Set<TaskId>> tasksForTopicGroup = new HashMap<>();
            for (final TaskId task : allTasksInOrder()) {
                tasksForTopicGroup.computeIfAbsent(new Subtopology(task.subtopology(), task.topologyName()),
                    k -> new HashSet<>()).add(task);
            }
            final Cluster cluster = new Cluster("reference", nodes, partitions, Set.of(), Set.of());
            return new RackAwareTaskAssignor(cluster, partitionsForTask, changelogsForTask, tasksForTopicGroup,
                racksForProcessConsumer,
                StreamsConfig.RACK_AWARE_ASSIGNMENT_STRATEGY_NONE.equals(configs.rackAwareAssignmentStrategy())
                    ? null : new DescribedTopics(changelogInfo),
                configs, Time.SYSTEM);
        }

        private List<TaskId> allTasksInOrder() {
            final List<TaskId> all = new ArrayList<>(stateful);
            all.addAll(stateless);
            return all;
        }

        private Node[] replicas(final TopicPartition tp, final Map<String, Node> nodesByRack, final List<Node> nodes) {
            final List<String> racks = partitionRacks.getOrDefault(tp, List.of());
            final Node[] replicas = new Node[racks.size()];
            for (int i = 0; i < racks.size(); i++) {
                final String rack = racks.get(i);
                final Node node;
                if (rack == null) {
                    node = new Node(nodes.size(), "broker-" + nodes.size(), 9092);
                    nodes.add(node);
                } else {
                    node = nodesByRack.computeIfAbsent(rack, r -> {
                        final Node n = new Node(nodes.size(), "broker-" + nodes.size(), 9092, r);
                        nodes.add(n);
                        return n;
                    });
                }
                replicas[i] = node;
            }
            return replicas;
        }

        ObjectNode output(final Built built, final boolean probing) {
            final ObjectNode document = JSON.objectNode();
            final ObjectNode clientsNode = JSON.objectNode();
            final ObjectNode nextRebalance = JSON.objectNode();
            final String leaderClient = leaderClient();
            for (final Client client : clients) {
                final ClientState state = built.clients.get(client.id);
                ObjectNode consumersNode = null;
                if (client.consumers != null) {
                    consumersNode = assignThreads(client, state, built.statefulTasks,
                        probing && client.idText.equals(leaderClient), nextRebalance);
                }
                final ObjectNode entry = JSON.objectNode();
                entry.set("active", taskArray(state.activeTasks()));
                entry.set("standby", taskArray(state.standbyTasks()));
                if (consumersNode != null) {
                    entry.set("consumers", consumersNode);
                }
                clientsNode.set(client.idText, entry);
            }
            document.put("probing_rebalance_needed", probing);
            document.set("clients", clientsNode);
            if (revocation) {
                document.set("next_rebalance_ms", nextRebalance);
            }
            return document;
        }

        private String leaderClient() {
            if (leader == null) {
                return null;
            }
            for (final Client client : clients) {
                if (client.idText.equals(leader.toLowerCase())) {
                    return client.idText;
                }
                if (client.consumers != null) {
                    for (final Consumer consumer : client.consumers) {
                        if (consumer.memberId.equals(leader)) {
                            return client.idText;
                        }
                    }
                }
            }
            return null;
        }

        /** StreamsPartitionAssignor.computeNewAssignment for one client: three Kafka calls, then revocation. */
        private ObjectNode assignThreads(final Client client, final ClientState state, final Set<TaskId> statefulTasks,
                                         final boolean encodeDeadline, final ObjectNode nextRebalance) {
            final SortedSet<String> consumers = new TreeSet<>();
            client.consumers.forEach(c -> consumers.add(c.memberId));
            final Map<String, Integer> threadLoad = new HashMap<>();
            final Map<String, List<TaskId>> active = ThreadAssignmentBridge.assignTasksToThreads(
                state.statefulActiveTasks(), true, consumers, state, threadLoad);
            final Map<String, List<TaskId>> standby = ThreadAssignmentBridge.assignTasksToThreads(
                state.standbyTasks(), true, consumers, state, threadLoad);
            final Map<String, List<TaskId>> stateless = ThreadAssignmentBridge.assignTasksToThreads(
                state.statelessActiveTasks(), false, consumers, state, threadLoad);
            for (final Map.Entry<String, List<TaskId>> e : stateless.entrySet()) {
                active.get(e.getKey()).addAll(e.getValue());
            }
            final ObjectNode node = JSON.objectNode();
            if (!revocation) {
                for (final String consumer : consumers) {
                    final ObjectNode roles = JSON.objectNode();
                    roles.set("active", taskArray(active.get(consumer)));
                    roles.set("standby", taskArray(standby.get(consumer)));
                    node.set(consumer, roles);
                }
                return node;
            }
            // The withholding of addClientAssignments (COOPERATIVE), written against ClientState's own
            // bookkeeping: a task whose partition another consumer still owns is revoked first.
            final Set<TopicPartition> allOwned = new HashSet<>();
            for (final Client c : clients) {
                if (c.consumers != null) {
                    c.consumers.forEach(m -> allOwned.addAll(m.owned));
                }
            }
            boolean deadlinePending = encodeDeadline;
            for (final String consumer : consumers) {
                final Set<TaskId> removed = new TreeSet<>();
                final List<TaskId> kept = new ArrayList<>();
                for (final TaskId task : active.get(consumer)) {
                    state.assignActiveToConsumer(task, consumer);
                    boolean withheld = false;
                    for (final TopicPartition tp : taskPartitions.getOrDefault(task, List.of())) {
                        final String owner = state.previousOwnerForPartition(tp);
                        if (!consumer.equals(owner) && allOwned.contains(tp)) {
                            withheld = true;
                            break;
                        }
                    }
                    if (withheld) {
                        removed.add(task);
                        state.revokeActiveFromConsumer(task, consumer);
                        state.unassignActive(task);
                    } else {
                        kept.add(task);
                    }
                }
                final Set<TaskId> standbys = new TreeSet<>(standby.get(consumer));
                for (final TaskId task : standby.get(consumer)) {
                    state.assignStandbyToConsumer(task, consumer);
                }
                for (final TaskId task : removed) {
                    if (state.previouslyOwnedStandby(task) && statefulTasks.contains(task)) {
                        state.assignStandbyToConsumer(task, consumer);
                        state.assignStandby(task);
                        standbys.add(task);
                    }
                }
                final ObjectNode roles = JSON.objectNode();
                roles.set("active", taskArray(kept));
                roles.set("standby", taskArray(standbys));
                roles.set("revoking", taskArray(removed));
                node.set(consumer, roles);
                if (!removed.isEmpty()) {
                    nextRebalance.put(consumer, 0L);
                    deadlinePending = false;
                } else if (deadlinePending) {
                    nextRebalance.put(consumer, nowMs + configs.probingRebalanceIntervalMs());
                    deadlinePending = false;
                }
            }
            return node;
        }
    }

    static ArrayNode taskArray(final java.util.Collection<TaskId> tasks) {
        final ArrayNode array = JSON.arrayNode();
        for (final TaskId task : new TreeSet<>(tasks)) {
            array.add(task.toString());
        }
        return array;
    }

    /** Answers Kafka's describe of the changelog topics from the request's partition racks. */
    static final class DescribedTopics extends InternalTopicManager {
        private final Map<String, List<TopicPartitionInfo>> topics;

        DescribedTopics(final Map<String, List<TopicPartitionInfo>> topics) {
            super(Time.SYSTEM, null, new StreamsConfig(streamsProperties()));
            this.topics = topics;
        }

        private static Properties streamsProperties() {
            final Properties props = new Properties();
            props.put(StreamsConfig.APPLICATION_ID_CONFIG, "streams-assign-reference");
            props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
            return props;
        }

        @Override
        public Map<String, List<TopicPartitionInfo>> getTopicPartitionInfo(final Set<String> names) {
            final Map<String, List<TopicPartitionInfo>> found = new LinkedHashMap<>();
            for (final String name : names) {
                if (topics.containsKey(name)) {
                    found.put(name, topics.get(name));
                }
            }
            return found;
        }
    }
}
