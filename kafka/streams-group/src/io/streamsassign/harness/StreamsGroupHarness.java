package io.streamsassign.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.AssignmentConfigsImpl;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.MemberMetadataAndStateImpl;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

import java.io.BufferedReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Runs Kafka's broker-side streams-group StickyTaskAssignor (KIP-1071) on streams-group states
 * in the JSON format of kafka-streams-group/FORMAT.md, one document per line on standard input,
 * one answer per line on standard output.
 *
 * A line is either a state (answered with {"members": {...}} or {"error": "..."}) or
 * {"op": "time", "state": {...}, "runs": n, "warmup": w}, answered with the decision, the
 * wall-clock nanoseconds ("nanos") and the calling thread's CPU nanoseconds ("cpu_nanos") of
 * each of the n timed StickyTaskAssignor.assign() calls after w untimed ones (JSON parsing and
 * writing are outside the timed calls).
 *
 * Members are handed to Kafka's GroupSpecImpl in a LinkedHashMap, so GroupSpec.memberIds()
 * iterates in the order of the document's list, as the format prescribes.
 */
public final class StreamsGroupHarness {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private StreamsGroupHarness() {
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
                answer = answer(MAPPER.readTree(line));
            } catch (final RuntimeException e) {
                final ObjectNode error = MAPPER.createObjectNode();
                error.put("harness_error", e.getClass().getSimpleName() + ": " + e.getMessage());
                answer = error;
            }
            out.println(MAPPER.writeValueAsString(answer));
            out.flush();
        }
    }

    private static JsonNode answer(final JsonNode request) {
        if (request.has("op")) {
            final String op = request.get("op").asText();
            if (!"time".equals(op)) {
                throw new IllegalArgumentException("unknown op " + op);
            }
            final Input input = parse(request.get("state"));
            final int runs = request.path("runs").asInt(5);
            final int warmup = request.path("warmup").asInt(3);
            for (int i = 0; i < warmup; i++) {
                new StickyTaskAssignor().assign(input.groupSpec(), input.topology());
            }
            final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            final ArrayNode nanos = MAPPER.createArrayNode();
            final ArrayNode cpuNanos = MAPPER.createArrayNode();
            for (int i = 0; i < runs; i++) {
                final long cpuStart = threads.getCurrentThreadCpuTime();
                final long start = System.nanoTime();
                new StickyTaskAssignor().assign(input.groupSpec(), input.topology());
                nanos.add(System.nanoTime() - start);
                cpuNanos.add(threads.getCurrentThreadCpuTime() - cpuStart);
            }
            final ObjectNode answer = MAPPER.createObjectNode();
            answer.set("result", run(input));
            answer.set("nanos", nanos);
            answer.set("cpu_nanos", cpuNanos);
            return answer;
        }
        return run(parse(request));
    }

    /** The parsed state: Kafka's GroupSpec and a TopologyDescriber over the document. */
    private record Input(GroupSpecImpl groupSpec, TopologyDescriber topology, List<String> memberIds) {
    }

    private static JsonNode run(final Input input) {
        final TaskAssignor assignor = new StickyTaskAssignor();
        final GroupAssignment assignment;
        try {
            assignment = assignor.assign(input.groupSpec(), input.topology());
        } catch (final RuntimeException e) {
            final ObjectNode error = MAPPER.createObjectNode();
            error.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
            return error;
        }
        final ObjectNode members = MAPPER.createObjectNode();
        for (final String memberId : input.memberIds()) {
            final MemberAssignment member = assignment.members().get(memberId);
            final ObjectNode entry = MAPPER.createObjectNode();
            entry.set("active", tasks(member == null ? Map.of() : member.activeTasks()));
            entry.set("standby", tasks(member == null ? Map.of() : member.standbyTasks()));
            entry.set("warmup", MAPPER.createObjectNode());
            members.set(memberId, entry);
        }
        final ObjectNode answer = MAPPER.createObjectNode();
        answer.set("members", members);
        return answer;
    }

    private static ObjectNode tasks(final Map<String, Set<Integer>> tasks) {
        final ObjectNode node = MAPPER.createObjectNode();
        for (final Map.Entry<String, Set<Integer>> entry : new TreeMap<>(tasks).entrySet()) {
            if (entry.getValue().isEmpty()) {
                continue;
            }
            final ArrayNode partitions = node.putArray(entry.getKey());
            for (final int p : new TreeSet<>(entry.getValue())) {
                partitions.add(p);
            }
        }
        return node;
    }

    private static Input parse(final JsonNode state) {
        final JsonNode configs = state.path("configs");
        final int standbys = configs.path("num.standby.replicas").asInt(0);
        final List<String> tags = new ArrayList<>();
        configs.path("rack.aware.assignment.tags").forEach(t -> tags.add(t.asText()));

        final Map<String, Integer> partitions = new HashMap<>();
        final Map<String, Boolean> stateful = new HashMap<>();
        final Iterator<Map.Entry<String, JsonNode>> subs = state.get("topology").fields();
        while (subs.hasNext()) {
            final Map.Entry<String, JsonNode> sub = subs.next();
            partitions.put(sub.getKey(), sub.getValue().get("partitions").asInt());
            stateful.put(sub.getKey(), sub.getValue().get("stateful").asBoolean());
        }
        // Kafka's TopologyMetadata lists subtopologies sorted.
        final List<String> sorted = new ArrayList<>(new TreeSet<>(partitions.keySet()));
        final TopologyDescriber topology = new TopologyDescriber() {
            @Override
            public List<String> subtopologies() {
                return sorted;
            }

            @Override
            public int maxNumInputPartitions(final String subtopologyId) {
                final Integer n = partitions.get(subtopologyId);
                if (n == null) {
                    throw new NoSuchElementException("unknown subtopology " + subtopologyId);
                }
                return n;
            }

            @Override
            public boolean isStateful(final String subtopologyId) {
                return stateful.getOrDefault(subtopologyId, false);
            }
        };

        final Map<String, MemberMetadataAndStateImpl> members = new LinkedHashMap<>();
        final List<String> memberIds = new ArrayList<>();
        for (final JsonNode m : state.get("members")) {
            final String memberId = m.get("member_id").asText();
            memberIds.add(memberId);
            final Map<String, String> clientTags = new HashMap<>();
            m.path("client_tags").fields().forEachRemaining(e -> clientTags.put(e.getKey(), e.getValue().asText()));
            members.put(memberId, new MemberMetadataAndStateImpl(
                optional(m.get("instance_id")),
                optional(m.get("rack_id")),
                m.get("process_id").asText(),
                clientTags,
                taskSet(m.get("active_tasks")),
                taskSet(m.get("standby_tasks")),
                taskSet(m.get("warmup_tasks")),
                offsets(m.get("task_offsets")),
                offsets(m.get("task_end_offsets"))
            ));
        }
        final GroupSpecImpl groupSpec = new GroupSpecImpl(members, new AssignmentConfigsImpl(standbys, tags));
        return new Input(groupSpec, topology, memberIds);
    }

    private static Optional<String> optional(final JsonNode node) {
        return node == null || node.isNull() ? Optional.empty() : Optional.of(node.asText());
    }

    private static Map<String, Set<Integer>> taskSet(final JsonNode node) {
        final Map<String, Set<Integer>> tasks = new HashMap<>();
        if (node == null || node.isNull()) {
            return tasks;
        }
        node.fields().forEachRemaining(e -> {
            final Set<Integer> set = new HashSet<>();
            e.getValue().forEach(p -> set.add(p.asInt()));
            tasks.put(e.getKey(), set);
        });
        return tasks;
    }

    private static Map<String, Map<Integer, Long>> offsets(final JsonNode node) {
        final Map<String, Map<Integer, Long>> offsets = new HashMap<>();
        if (node == null || node.isNull()) {
            return offsets;
        }
        node.fields().forEachRemaining(e -> {
            final Map<Integer, Long> perPartition = new HashMap<>();
            e.getValue().fields().forEachRemaining(p -> perPartition.put(Integer.parseInt(p.getKey()), p.getValue().asLong()));
            offsets.put(e.getKey(), perPartition);
        });
        return offsets;
    }
}
