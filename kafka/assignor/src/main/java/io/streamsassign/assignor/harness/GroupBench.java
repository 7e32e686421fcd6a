package io.streamsassign.assignor.harness;

import io.streamsassign.assignor.LagAwareStickyGroupAssignor;
import io.streamsassign.assignor.core.GroupInput;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.coordinator.group.api.streams.assignor.AssignmentConfigs;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;

/**
 * Side-by-side timing of two KIP-1357 assignors on one streams group, in one JVM:
 * {@link LagAwareStickyGroupAssignor} and Kafka 4.4's broker-side
 * {@code org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor} (loaded by name,
 * so the harness runs without it unless asked; its class path must then hold Kafka 4.4's
 * {@code kafka-group-coordinator} jars).
 *
 * <p>Request {@code {"bench_group": <streams-group state>, "warmup": w, "repeat": n}}: both
 * assignors get the same {@link GroupSpec} and {@link TopologyDescriber} objects (built once,
 * outside the timed calls); {@code w} untimed calls of each, alternating, then {@code n} timed
 * calls of each, alternating, so JIT warm-up and machine load fall on both alike. With
 * {@code "only": "lag_aware_sticky"} or {@code "kafka_sticky"} just that one runs (its own JVM
 * then has no JIT profile of the other's code). Answer
 * {@code {"lag_aware_sticky": {"nanos": [...], "cpu_nanos": [...], "members": m},
 * "kafka_sticky": {...}}}: per timed call its wall-clock and calling-thread CPU nanoseconds, and
 * the number of members the returned {@code GroupAssignment} names.
 */
final class GroupBench {
    /** Kafka 4.4's broker-side streams-group sticky assignor (KIP-1071). */
    static final String KAFKA_STICKY = "org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor";

    private GroupBench() { }

    static Object answer(Map<String, Object> doc, int warmup, int runs, String only)
            throws ReflectiveOperationException {
        GroupInput input = GroupRequests.input(doc);
        GroupSpec spec = groupSpec(input);
        TopologyDescriber topology = topology(input);
        Map<String, TaskAssignor> assignors = new LinkedHashMap<>();
        if (only == null || only.equals("lag_aware_sticky")) {
            assignors.put("lag_aware_sticky", new LagAwareStickyGroupAssignor());
        }
        if (only == null || only.equals("kafka_sticky")) {
            assignors.put("kafka_sticky",
                    (TaskAssignor) Class.forName(KAFKA_STICKY).getDeclaredConstructor().newInstance());
        }
        if (assignors.isEmpty()) {
            throw new IllegalArgumentException("only must be lag_aware_sticky or kafka_sticky, got " + only);
        }
        for (int i = 0; i < warmup; i++) {
            for (TaskAssignor assignor : assignors.values()) {
                assignor.assign(spec, topology);
            }
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, List<Long>> nanos = new LinkedHashMap<>();
        Map<String, List<Long>> cpu = new LinkedHashMap<>();
        Map<String, Long> members = new LinkedHashMap<>();
        for (String name : assignors.keySet()) {
            nanos.put(name, new ArrayList<>());
            cpu.put(name, new ArrayList<>());
        }
        for (int i = 0; i < runs; i++) {
            for (Map.Entry<String, TaskAssignor> e : assignors.entrySet()) {
                String name = e.getKey();
                members.put(name, (long) timed(e.getValue(), spec, topology, threads, nanos.get(name), cpu.get(name)));
            }
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        for (String name : assignors.keySet()) {
            answer.put(name, Map.of("nanos", nanos.get(name), "cpu_nanos", cpu.get(name), "members", members.get(name)));
        }
        return answer;
    }

    private static int timed(TaskAssignor assignor, GroupSpec spec, TopologyDescriber topology,
            ThreadMXBean threads, List<Long> nanos, List<Long> cpu) {
        long cpuStart = threads.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        GroupAssignment result = assignor.assign(spec, topology);
        nanos.add(System.nanoTime() - start);
        cpu.add(threads.getCurrentThreadCpuTime() - cpuStart);
        return result.members().size();
    }

    /** One member as Kafka's metadata and state views (one object, as Kafka's own impl). */
    private record MemberView(GroupInput.Member m) implements MemberAssignmentMetadata, MemberAssignmentState {
        @Override
        public Optional<String> instanceId() {
            return Optional.empty();
        }

        @Override
        public Optional<String> rackId() {
            return Optional.empty();
        }

        @Override
        public String processId() {
            return m.processId();
        }

        @Override
        public Map<String, String> clientTags() {
            return m.clientTags();
        }

        @Override
        public Map<String, Set<Integer>> activeTasks() {
            return m.activeTasks();
        }

        @Override
        public Map<String, Set<Integer>> standbyTasks() {
            return m.standbyTasks();
        }

        @Override
        public Map<String, Set<Integer>> warmupTasks() {
            return m.warmupTasks();
        }

        @Override
        public Map<String, Map<Integer, Long>> taskOffsets() {
            return m.taskOffsets();
        }

        @Override
        public Map<String, Map<Integer, Long>> taskEndOffsets() {
            return m.taskEndOffsets();
        }
    }

    /** The group as Kafka's {@link GroupSpec}: members in document order, as the coordinator's map. */
    static GroupSpec groupSpec(GroupInput input) {
        Map<String, MemberView> members = new LinkedHashMap<>();
        for (GroupInput.Member m : input.members()) {
            members.put(m.memberId(), new MemberView(m));
        }
        AssignmentConfigs configs = new AssignmentConfigs() {
            @Override
            public int numStandbyReplicas() {
                return input.numStandbyReplicas();
            }

            @Override
            public List<String> rackAwareAssignmentTags() {
                return input.tagKeys();
            }
        };
        return new GroupSpec() {
            @Override
            public Collection<String> memberIds() {
                return members.keySet();
            }

            @Override
            public MemberAssignmentMetadata memberMetadata(String memberId) {
                return member(memberId);
            }

            @Override
            public MemberAssignmentState memberAssignmentState(String memberId) {
                return member(memberId);
            }

            private MemberView member(String memberId) {
                MemberView m = members.get(memberId);
                if (m == null) {
                    throw new IllegalArgumentException("unknown member " + memberId);
                }
                return m;
            }

            @Override
            public AssignmentConfigs configs() {
                return configs;
            }
        };
    }

    /** The topology as Kafka's {@link TopologyDescriber}: subtopologies sorted, as the broker lists them. */
    static TopologyDescriber topology(GroupInput input) {
        List<String> sorted = new ArrayList<>(new TreeSet<>(input.topology().keySet()));
        return new TopologyDescriber() {
            @Override
            public List<String> subtopologies() {
                return sorted;
            }

            @Override
            public int maxNumInputPartitions(String subtopologyId) {
                GroupInput.Subtopology sub = input.topology().get(subtopologyId);
                if (sub == null) {
                    throw new NoSuchElementException("unknown subtopology " + subtopologyId);
                }
                return sub.partitions();
            }

            @Override
            public boolean isStateful(String subtopologyId) {
                GroupInput.Subtopology sub = input.topology().get(subtopologyId);
                return sub != null && sub.stateful();
            }
        };
    }
}
