package io.streamsassign.assignor.harness;

import io.streamsassign.assignor.core.GroupDecision;
import io.streamsassign.assignor.core.GroupInput;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Streams-group requests of the harness: {@code {"group": <streams-group state>}} (the format of
 * tests/corpora/kafka-streams-group/FORMAT.md) answered with
 * {@code {"members": {id: {"active": {sub: [p]}, "standby": {...}, "warmup": {}}}}}, the
 * decision {@link GroupDecision} makes (the broker adapter's).
 */
final class GroupRequests {
    private GroupRequests() { }

    static Object answer(Map<String, Object> doc, int repeat) {
        GroupInput input = input(doc);
        List<Long> nanos = new ArrayList<>();
        Map<String, GroupDecision.MemberTasks> decided = null;
        for (int i = 0; i < repeat; i++) {
            long start = System.nanoTime();
            decided = GroupDecision.assign(input);
            nanos.add(System.nanoTime() - start);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<String, GroupDecision.MemberTasks> e : decided.entrySet()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("active", e.getValue().active());
            one.put("standby", e.getValue().standby());
            one.put("warmup", Map.of());
            out.put(e.getKey(), one);
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("members", out);
        answer.put("nanos", repeat == 1 ? nanos.get(0) : nanos);
        return answer;
    }

    /** The streams-group document as the core's {@link GroupInput} (members in document order). */
    @SuppressWarnings("unchecked")
    static GroupInput input(Map<String, Object> doc) {
        Map<String, Object> configs = (Map<String, Object>) doc.getOrDefault("configs", Map.of());
        int standbys = ((Number) configs.getOrDefault("num.standby.replicas", 0L)).intValue();
        List<String> tags = new ArrayList<>();
        Object tagList = configs.get("rack.aware.assignment.tags");
        if (tagList != null) {
            for (Object t : (List<?>) tagList) {
                tags.add((String) t);
            }
        }
        Map<String, GroupInput.Subtopology> topology = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) doc.get("topology")).entrySet()) {
            Map<String, Object> sub = (Map<String, Object>) e.getValue();
            topology.put(e.getKey(), new GroupInput.Subtopology(
                    ((Number) sub.get("partitions")).intValue(), Boolean.TRUE.equals(sub.get("stateful"))));
        }
        List<GroupInput.Member> members = new ArrayList<>();
        for (Object o : (List<?>) doc.getOrDefault("members", List.of())) {
            Map<String, Object> m = (Map<String, Object>) o;
            Map<String, String> clientTags = new LinkedHashMap<>();
            Object t = m.get("client_tags");
            if (t != null) {
                ((Map<String, Object>) t).forEach((k, v) -> clientTags.put(k, (String) v));
            }
            members.add(new GroupInput.Member(
                    (String) m.get("member_id"),
                    (String) m.get("process_id"),
                    clientTags,
                    taskSet(m.get("active_tasks")),
                    taskSet(m.get("standby_tasks")),
                    taskSet(m.get("warmup_tasks")),
                    offsets(m.get("task_offsets")),
                    offsets(m.get("task_end_offsets"))));
        }
        return new GroupInput(standbys, tags, topology, members);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Set<Integer>> taskSet(Object doc) {
        Map<String, Set<Integer>> out = new LinkedHashMap<>();
        if (doc != null) {
            for (Map.Entry<String, Object> e : ((Map<String, Object>) doc).entrySet()) {
                Set<Integer> parts = new LinkedHashSet<>();
                for (Object p : (List<?>) e.getValue()) {
                    parts.add(((Number) p).intValue());
                }
                out.put(e.getKey(), parts);
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Map<Integer, Long>> offsets(Object doc) {
        Map<String, Map<Integer, Long>> out = new LinkedHashMap<>();
        if (doc != null) {
            for (Map.Entry<String, Object> e : ((Map<String, Object>) doc).entrySet()) {
                Map<Integer, Long> parts = new LinkedHashMap<>();
                ((Map<String, Object>) e.getValue()).forEach(
                        (p, v) -> parts.put(Integer.parseInt(p), ((Number) v).longValue()));
                out.put(e.getKey(), parts);
            }
        }
        return out;
    }
}
