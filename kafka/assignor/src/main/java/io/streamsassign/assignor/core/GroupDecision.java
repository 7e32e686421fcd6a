package io.streamsassign.assignor.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * lag_aware_sticky's decision for a streams group, per member: the broker plug-in's, as
 * {@code streams_assign.assignors.lag_aware_sticky.streams_group} decides it (the Python module
 * documents the rules; the differential checks both agree). The group's processes form the
 * classic rebalance input ({@link #clusterInput}), {@link LagAwareSticky} decides per process,
 * and each process's actives and standbys (no warm-ups) are spread over its members.
 */
public final class GroupDecision {
    /** {@code acceptable.recovery.lag} of the broker form (Kafka Streams' default), records. */
    public static final long ACCEPTABLE_RECOVERY_LAG = 10_000L;
    /** {@code max.warmup.replicas} of the broker form (Kafka Streams' default). */
    public static final int MAX_WARMUP_REPLICAS = 2;

    private static final Pattern UUID_TEXT = Pattern.compile(
            "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    private GroupDecision() { }

    /** One member's tasks: subtopology id -> partitions (ascending), for actives and standbys. */
    public record MemberTasks(Map<String, List<Integer>> active, Map<String, List<Integer>> standby) { }

    /** Subtopology ids as TaskId numbers: their value when all are decimal, else their rank. */
    static final class Numbering {
        final Map<String, Integer> number = new HashMap<>();
        final Map<Integer, String> name = new HashMap<>();

        Numbering(GroupInput group) {
            List<String> ids = new ArrayList<>(group.topology().keySet());
            ids.sort(null);
            boolean numeric = ids.stream().allMatch(s -> !s.isEmpty() && s.chars().allMatch(ch -> ch >= '0' && ch <= '9'));
            for (int n = 0; n < ids.size(); n++) {
                int value = numeric ? Integer.parseInt(ids.get(n)) : n;
                number.put(ids.get(n), value);
                name.put(value, ids.get(n));
            }
        }

        TaskKey task(String sub, int partition) {
            Integer n = number.get(sub);
            return n == null ? null : new TaskKey(null, n, partition);
        }

        Set<TaskKey> tasks(List<Map<String, Set<Integer>>> sets) {
            Set<TaskKey> out = new HashSet<>();
            for (Map<String, Set<Integer>> set : sets) {
                for (Map.Entry<String, Set<Integer>> e : set.entrySet()) {
                    for (int p : e.getValue()) {
                        TaskKey t = task(e.getKey(), p);
                        if (t != null) {
                            out.add(t);
                        }
                    }
                }
            }
            return out;
        }

        Map<TaskKey, Long> offsets(List<Map<String, Map<Integer, Long>>> reports) {
            Map<TaskKey, Long> out = new HashMap<>();
            for (Map<String, Map<Integer, Long>> report : reports) {
                for (Map.Entry<String, Map<Integer, Long>> e : report.entrySet()) {
                    for (Map.Entry<Integer, Long> v : e.getValue().entrySet()) {
                        TaskKey t = task(e.getKey(), v.getKey());
                        if (t != null) {
                            out.merge(t, v.getValue(), Math::max);
                        }
                    }
                }
            }
            return out;
        }
    }

    /** Process id -> the UUID it is ordered by (itself, or 0..0n in String order if any is not one). */
    static Map<String, String> processIds(GroupInput group) {
        TreeSet<String> ids = new TreeSet<>();
        for (GroupInput.Member m : group.members()) {
            ids.add(m.processId());
        }
        Map<String, String> out = new LinkedHashMap<>();
        boolean all = ids.stream().allMatch(id -> UUID_TEXT.matcher(id).matches());
        int n = 0;
        for (String id : ids) {
            out.put(id, all ? UUID.fromString(id).toString() : new UUID(0L, ++n).toString());
        }
        return out;
    }

    /** Process id -> its members in member id order. */
    static Map<String, List<GroupInput.Member>> byProcess(GroupInput group) {
        List<GroupInput.Member> members = new ArrayList<>(group.members());
        members.sort(Comparator.comparing(GroupInput.Member::memberId));
        Map<String, List<GroupInput.Member>> out = new LinkedHashMap<>();
        for (GroupInput.Member m : members) {
            out.computeIfAbsent(m.processId(), k -> new ArrayList<>()).add(m);
        }
        return out;
    }

    private static long computeTaskLag(long offset, long end) {
        if (offset == -2 || offset == -3) {
            return offset;
        }
        return end < offset ? end : end - offset;
    }

    /** The classic rebalance input of the group's processes (group_cluster_state). */
    public static ClusterInput clusterInput(GroupInput group, long acceptableRecoveryLag, int maxWarmupReplicas) {
        Numbering numbering = new Numbering(group);
        TreeSet<TaskKey> stateful = new TreeSet<>();
        TreeSet<TaskKey> stateless = new TreeSet<>();
        for (Map.Entry<String, GroupInput.Subtopology> e : group.topology().entrySet()) {
            for (int p = 0; p < e.getValue().partitions(); p++) {
                (e.getValue().stateful() ? stateful : stateless).add(numbering.task(e.getKey(), p));
            }
        }
        Set<TaskKey> known = new HashSet<>(stateful);
        known.addAll(stateless);
        Map<String, String> ids = processIds(group);
        List<Map<String, Map<Integer, Long>>> allEnds = new ArrayList<>();
        for (GroupInput.Member m : group.members()) {
            allEnds.add(m.taskEndOffsets());
        }
        Map<TaskKey, Long> ends = new TreeMap<>();
        numbering.offsets(allEnds).forEach((t, v) -> {
            if (stateful.contains(t)) {
                ends.put(t, v);
            }
        });
        List<ClientInput> clients = new ArrayList<>();
        for (Map.Entry<String, List<GroupInput.Member>> e : byProcess(group).entrySet()) {
            List<GroupInput.Member> members = e.getValue();
            List<Map<String, Set<Integer>>> actives = new ArrayList<>();
            List<Map<String, Set<Integer>>> held = new ArrayList<>();
            List<Map<String, Map<Integer, Long>>> offsetReports = new ArrayList<>();
            List<Map<String, Map<Integer, Long>>> endReports = new ArrayList<>();
            for (GroupInput.Member m : members) {
                actives.add(m.activeTasks());
                held.add(m.standbyTasks());
                held.add(m.warmupTasks());
                offsetReports.add(m.taskOffsets());
                endReports.add(m.taskEndOffsets());
            }
            Set<TaskKey> active = numbering.tasks(actives);
            active.retainAll(known);
            Set<TaskKey> standby = numbering.tasks(held);
            standby.retainAll(known);
            standby.removeAll(active);
            Map<TaskKey, Long> offsets = numbering.offsets(offsetReports);
            Map<TaskKey, Long> memberEnds = numbering.offsets(endReports);
            // The process's own tasks only (not every stateful task): its actives, then the
            // tasks it reported an offset for.
            Map<TaskKey, Long> lags = new LinkedHashMap<>();
            for (TaskKey t : active) {
                if (stateful.contains(t)) {
                    lags.put(t, -2L);
                }
            }
            for (Map.Entry<TaskKey, Long> o : offsets.entrySet()) {
                TaskKey t = o.getKey();
                if (stateful.contains(t) && !active.contains(t)) {
                    Long end = memberEnds.get(t);
                    lags.put(t, end == null ? -3L : computeTaskLag(o.getValue(), end));
                }
            }
            clients.add(new ClientInput(
                    ids.get(e.getKey()),
                    members.size(),
                    new ArrayList<>(new TreeSet<>(active)),
                    new ArrayList<>(new TreeSet<>(standby)),
                    lags,
                    members.get(0).clientTags()));
        }
        return new ClusterInput(
                acceptableRecoveryLag,
                maxWarmupReplicas,
                group.numStandbyReplicas(),
                group.tagKeys(),
                new ArrayList<>(stateful),
                new ArrayList<>(stateless),
                clients,
                ends.isEmpty() ? null : ends);
    }

    /** Per member (every member of the group) its active and standby tasks. */
    public static Map<String, MemberTasks> assign(GroupInput group) {
        return assign(group, ACCEPTABLE_RECOVERY_LAG, MAX_WARMUP_REPLICAS);
    }

    /** {@link #assign(GroupInput)} with the two settings the group configs do not carry. */
    public static Map<String, MemberTasks> assign(GroupInput group, long acceptableRecoveryLag, int maxWarmupReplicas) {
        Map<String, MemberTasks> result = new LinkedHashMap<>();
        if (group.members().isEmpty()) {
            return result;
        }
        Decision decision = LagAwareSticky.assign(clusterInput(group, acceptableRecoveryLag, maxWarmupReplicas));
        Numbering numbering = new Numbering(group);
        Map<String, String> ids = processIds(group);
        for (Map.Entry<String, List<GroupInput.Member>> e : byProcess(group).entrySet()) {
            List<GroupInput.Member> members = e.getValue();
            Decision.ClientDecision mine = decision.clients().get(ids.get(e.getKey()));
            List<TaskKey> standby = new ArrayList<>(mine.standby());
            standby.removeAll(mine.warmup());
            Map<String, Set<TaskKey>> ownedActive = new HashMap<>();
            Map<String, Set<TaskKey>> ownedStandby = new HashMap<>();
            for (GroupInput.Member m : members) {
                ownedActive.put(m.memberId(), numbering.tasks(List.of(m.activeTasks())));
                ownedStandby.put(m.memberId(), numbering.tasks(List.of(m.standbyTasks(), m.warmupTasks())));
            }
            Map<String, List<TaskKey>> actives = spread(mine.active(), members, ownedActive);
            Map<String, List<TaskKey>> standbys = spread(standby, members, ownedStandby);
            for (GroupInput.Member m : members) {
                result.put(m.memberId(), new MemberTasks(
                        taskSet(actives.get(m.memberId()), numbering),
                        taskSet(standbys.get(m.memberId()), numbering)));
            }
        }
        return result;
    }

    private static Map<String, List<Integer>> taskSet(List<TaskKey> tasks, Numbering numbering) {
        Map<String, List<Integer>> out = new LinkedHashMap<>();
        List<TaskKey> sorted = new ArrayList<>(tasks);
        sorted.sort(null);
        for (TaskKey t : sorted) {
            out.computeIfAbsent(numbering.name.get(t.subtopology()), k -> new ArrayList<>()).add(t.partition());
        }
        return out;
    }

    /**
     * A process's tasks over its members: each member {@code floor} or {@code ceil} of an even
     * share (the first {@code n mod m} to reach {@code ceil} keep it); each task first to the
     * member that owned it, the rest to the member with the fewest (then member id order).
     */
    static Map<String, List<TaskKey>> spread(List<TaskKey> tasks, List<GroupInput.Member> members,
            Map<String, Set<TaskKey>> owned) {
        int n = tasks.size();
        int m = members.size();
        int floor = n / m;
        int[] highs = {n % m};
        Map<String, List<TaskKey>> placed = new LinkedHashMap<>();
        for (GroupInput.Member member : members) {
            placed.put(member.memberId(), new ArrayList<>());
        }
        java.util.function.Predicate<String> room = id -> {
            int count = placed.get(id).size();
            return count < floor || (count == floor && highs[0] > 0);
        };
        List<TaskKey> rest = new ArrayList<>();
        for (TaskKey task : tasks) {
            String owner = null;
            for (GroupInput.Member member : members) {
                if (owned.get(member.memberId()).contains(task)) {
                    owner = member.memberId();
                    break;
                }
            }
            if (owner != null && room.test(owner)) {
                if (placed.get(owner).size() == floor) {
                    highs[0]--;
                }
                placed.get(owner).add(task);
            } else {
                rest.add(task);
            }
        }
        for (TaskKey task : rest) {
            String target = null;
            for (GroupInput.Member member : members) {
                String id = member.memberId();
                if (room.test(id) && (target == null || placed.get(id).size() < placed.get(target).size())) {
                    target = id;
                }
            }
            if (placed.get(target).size() == floor) {
                highs[0]--;
            }
            placed.get(target).add(task);
        }
        return placed;
    }
}
