package io.streamsassign.assignor.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A cluster input and a decision as JSON text in streams_assign's cluster-state and assignment
 * shapes, for the adapters' decision log lines (so a run can be checked against the Python
 * reference on the same input).
 */
public final class Documents {
    private Documents() { }

    /** The cluster-state document of {@code cluster} (configs, tasks, clients, end sums). */
    public static String clusterJson(ClusterInput cluster) {
        Map<String, Object> configs = new LinkedHashMap<>();
        configs.put("acceptable_recovery_lag", cluster.acceptableRecoveryLag());
        configs.put("max_warmup_replicas", cluster.maxWarmupReplicas());
        configs.put("num_standby_replicas", cluster.numStandbyReplicas());
        configs.put("rack_aware_assignment_tags", cluster.tagKeys());
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("configs", configs);
        doc.put("stateful_tasks", names(cluster.statefulTasks()));
        doc.put("stateless_tasks", names(cluster.statelessTasks()));
        List<Object> clients = new ArrayList<>();
        for (ClientInput c : cluster.clients()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("id", c.id());
            one.put("capacity", c.capacity());
            one.put("prev_active", names(c.prevActive()));
            one.put("prev_standby", names(c.prevStandby()));
            one.put("task_lags", byName(c.taskLags()));
            one.put("tags", c.tags());
            clients.add(one);
        }
        doc.put("clients", clients);
        if (cluster.changelogEndOffsetSums() != null) {
            doc.put("changelog_end_offset_sums", byName(cluster.changelogEndOffsetSums()));
        }
        return write(doc);
    }

    /** The decision: {clients: {id: {active, standby, warmup}}, probing_rebalance_needed}. */
    public static String decisionJson(Decision decision) {
        Map<String, Object> clients = new LinkedHashMap<>();
        for (Map.Entry<String, Decision.ClientDecision> e : decision.clients().entrySet()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("active", names(e.getValue().active()));
            one.put("standby", names(e.getValue().standby()));
            one.put("warmup", names(e.getValue().warmup()));
            clients.put(e.getKey(), one);
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("clients", clients);
        doc.put("probing_rebalance_needed", decision.probingRebalanceNeeded());
        return write(doc);
    }

    /** The streams-group document of {@code group} (tests/corpora/kafka-streams-group/FORMAT.md). */
    public static String groupJson(GroupInput group) {
        Map<String, Object> configs = new LinkedHashMap<>();
        configs.put("num.standby.replicas", group.numStandbyReplicas());
        configs.put("rack.aware.assignment.tags", group.tagKeys());
        Map<String, Object> topology = new LinkedHashMap<>();
        group.topology().forEach((sub, t) -> {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("partitions", t.partitions());
            one.put("stateful", t.stateful());
            topology.put(sub, one);
        });
        List<Object> members = new ArrayList<>();
        for (GroupInput.Member m : group.members()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("member_id", m.memberId());
            one.put("process_id", m.processId());
            one.put("client_tags", m.clientTags());
            one.put("active_tasks", sortedSets(m.activeTasks()));
            one.put("standby_tasks", sortedSets(m.standbyTasks()));
            one.put("warmup_tasks", sortedSets(m.warmupTasks()));
            one.put("task_offsets", offsets(m.taskOffsets()));
            one.put("task_end_offsets", offsets(m.taskEndOffsets()));
            members.add(one);
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("configs", configs);
        doc.put("topology", topology);
        doc.put("members", members);
        return write(doc);
    }

    /** A streams-group decision: {members: {id: {active: {sub: [p]}, standby, warmup}}}. */
    public static String groupDecisionJson(Map<String, GroupDecision.MemberTasks> decided) {
        Map<String, Object> members = new LinkedHashMap<>();
        decided.forEach((id, tasks) -> {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("active", tasks.active());
            one.put("standby", tasks.standby());
            one.put("warmup", Map.of());
            members.put(id, one);
        });
        return write(Map.of("members", members));
    }

    private static Map<String, Object> sortedSets(Map<String, java.util.Set<Integer>> tasks) {
        Map<String, Object> out = new LinkedHashMap<>();
        tasks.forEach((sub, parts) -> {
            if (!parts.isEmpty()) {
                out.put(sub, new java.util.TreeSet<>(parts));
            }
        });
        return out;
    }

    private static Map<String, Object> offsets(Map<String, Map<Integer, Long>> values) {
        Map<String, Object> out = new LinkedHashMap<>();
        values.forEach((sub, parts) -> {
            Map<String, Object> one = new LinkedHashMap<>();
            new java.util.TreeMap<>(parts).forEach((p, v) -> one.put(String.valueOf(p), v));
            out.put(sub, one);
        });
        return out;
    }

    private static List<String> names(List<TaskKey> tasks) {
        List<String> out = new ArrayList<>();
        for (TaskKey t : tasks) {
            out.add(t.toString());
        }
        return out;
    }

    private static Map<String, Object> byName(Map<TaskKey, Long> values) {
        Map<String, Object> out = new LinkedHashMap<>();
        values.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> out.put(e.getKey().toString(), e.getValue()));
        return out;
    }

    /** JSON text of maps, lists, strings, numbers, booleans and null. */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                writeString(String.valueOf(e.getKey()), out);
                out.append(':');
                write(e.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof Iterable<?> list) {
            out.append('[');
            boolean first = true;
            for (Object v : list) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(v, out);
            }
            out.append(']');
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else {
            writeString(value.toString(), out);
        }
    }

    private static void writeString(String text, StringBuilder out) {
        out.append('"');
        for (char ch : text.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                out.append('\\').append(ch);
            } else if (ch < 0x20) {
                out.append(String.format("\\u%04x", (int) ch));
            } else {
                out.append(ch);
            }
        }
        out.append('"');
    }
}
