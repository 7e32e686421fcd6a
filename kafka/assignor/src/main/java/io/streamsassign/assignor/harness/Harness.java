package io.streamsassign.assignor.harness;

import io.streamsassign.assignor.core.ClientInput;
import io.streamsassign.assignor.core.ClusterInput;
import io.streamsassign.assignor.core.Decision;
import io.streamsassign.assignor.core.LagAwareSticky;
import io.streamsassign.assignor.core.TaskKey;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.PrintStream;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The differential harness (devtools/kafka/plugin_harness.py talks to it through JavaBatch):
 * one JSON request per line on standard input, one JSON answer per line on standard output.
 *
 * <p>Request {@code {"cluster": <cluster-state fields>}} (configs, stateful_tasks,
 * stateless_tasks, clients with id, capacity, prev_active, prev_standby, task_lags, tags;
 * changelog_end_offset_sums or null); answer {@code {"clients": {id: {"active": [...],
 * "standby": [...], "warmup": [...]}}, "probing_rebalance_needed": bool, "nanos": n}} or
 * {@code {"error": "<class>: <message>"}}. Request {@code {"group": ...}} runs the KIP-1357
 * adapter's per-member decision (see {@link GroupRequests}). With {@code "repeat": n} the
 * decision is made n times and {@code "nanos"} / {@code "cpu_nanos"} list each call's wall-clock
 * and calling-thread CPU time. Request {@code {"bench_group": ..., "warmup": w, "repeat": n}} times the
 * broker adapter beside Kafka's broker-side sticky assignor ({@link GroupBench}).
 */
public final class Harness {
    private Harness() { }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            Object answer;
            try {
                answer = answer(line);
            } catch (Exception | StackOverflowError e) {
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                System.err.println(trace);
                answer = Map.of("error", e.getClass().getName() + ": " + e.getMessage());
            }
            out.println(Json.write(answer));
        }
    }

    @SuppressWarnings("unchecked")
    private static Object answer(String line) throws Exception {
        Map<String, Object> request = (Map<String, Object>) Json.parse(line);
        int repeat = ((Number) request.getOrDefault("repeat", 1L)).intValue();
        if (request.containsKey("bench_group")) {
            return GroupBench.answer((Map<String, Object>) request.get("bench_group"),
                    ((Number) request.getOrDefault("warmup", 0L)).intValue(), repeat,
                    (String) request.get("only"));
        }
        if (request.containsKey("group")) {
            return GroupRequests.answer((Map<String, Object>) request.get("group"), repeat);
        }
        ClusterInput cluster = cluster((Map<String, Object>) request.get("cluster"));
        List<Long> nanos = new ArrayList<>();
        List<Long> cpuNanos = new ArrayList<>();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Decision decision = null;
        for (int i = 0; i < repeat; i++) {
            long cpuStart = threads.getCurrentThreadCpuTime();
            long start = System.nanoTime();
            decision = LagAwareSticky.assign(cluster);
            nanos.add(System.nanoTime() - start);
            cpuNanos.add(threads.getCurrentThreadCpuTime() - cpuStart);
        }
        Map<String, Object> answer = decisionJson(decision, repeat == 1 ? nanos.get(0) : nanos);
        answer.put("cpu_nanos", repeat == 1 ? cpuNanos.get(0) : cpuNanos);
        return answer;
    }

    static Map<String, Object> decisionJson(Decision decision, Object nanos) {
        Map<String, Object> clients = new LinkedHashMap<>();
        for (Map.Entry<String, Decision.ClientDecision> e : decision.clients().entrySet()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("active", names(e.getValue().active()));
            one.put("standby", names(e.getValue().standby()));
            one.put("warmup", names(e.getValue().warmup()));
            clients.put(e.getKey(), one);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("clients", clients);
        out.put("probing_rebalance_needed", decision.probingRebalanceNeeded());
        out.put("nanos", nanos);
        return out;
    }

    private static List<String> names(List<TaskKey> tasks) {
        List<String> out = new ArrayList<>();
        for (TaskKey t : tasks) {
            out.add(t.toString());
        }
        return out;
    }

    static List<TaskKey> tasks(Object list) {
        List<TaskKey> out = new ArrayList<>();
        if (list != null) {
            for (Object o : (List<?>) list) {
                out.add(TaskKey.parse((String) o));
            }
        }
        return out;
    }

    static Map<TaskKey, Long> taskLongs(Object map) {
        if (map == null) {
            return null;
        }
        Map<TaskKey, Long> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) map).entrySet()) {
            out.put(TaskKey.parse((String) e.getKey()), ((Number) e.getValue()).longValue());
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static ClusterInput cluster(Map<String, Object> doc) {
        Map<String, Object> configs = (Map<String, Object>) doc.getOrDefault("configs", Map.of());
        List<ClientInput> clients = new ArrayList<>();
        for (Object o : (List<?>) doc.get("clients")) {
            Map<String, Object> c = (Map<String, Object>) o;
            Map<TaskKey, Long> lags = taskLongs(c.get("task_lags"));
            Map<String, String> tags = new LinkedHashMap<>();
            Object tagDoc = c.get("tags");
            if (tagDoc != null) {
                for (Map.Entry<String, Object> e : ((Map<String, Object>) tagDoc).entrySet()) {
                    tags.put(e.getKey(), (String) e.getValue());
                }
            }
            clients.add(new ClientInput(
                    (String) c.get("id"),
                    ((Number) c.get("capacity")).intValue(),
                    tasks(c.get("prev_active")),
                    tasks(c.get("prev_standby")),
                    lags == null ? Map.of() : lags,
                    tags));
        }
        List<String> tagKeys = new ArrayList<>();
        Object keys = configs.get("rack_aware_assignment_tags");
        if (keys != null) {
            for (Object k : (List<?>) keys) {
                tagKeys.add((String) k);
            }
        }
        return new ClusterInput(
                ((Number) configs.getOrDefault("acceptable_recovery_lag", 10_000L)).longValue(),
                ((Number) configs.getOrDefault("max_warmup_replicas", 2L)).intValue(),
                ((Number) configs.getOrDefault("num_standby_replicas", 0L)).intValue(),
                tagKeys,
                tasks(doc.get("stateful_tasks")),
                tasks(doc.get("stateless_tasks")),
                clients,
                taskLongs(doc.get("changelog_end_offset_sums")));
    }
}
