package io.streamsassign.assignor.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.BiFunction;

/**
 * lag_aware_sticky's decision for a streams group, per member: the broker plug-in's, as
 * {@code streams_assign.assignors.lag_aware_sticky.streams_group} decides it (the Python module
 * documents the rules; the differential checks both agree). The group's processes form the
 * classic rebalance input ({@link #clusterInput}), {@link LagAwareSticky} decides per process,
 * and each process's actives and standbys (no warm-ups) are spread over its members.
 *
 * <p>The group is indexed once per call ({@link Indexed}): every task of the topology gets a
 * dense index in TaskId order, so the per-process sets, offset maxima and the per-member owner
 * look-ups are array passes instead of hash sets of task ids.
 */
public final class GroupDecision {
    /** {@code acceptable.recovery.lag} of the broker form (Kafka Streams' default), records. */
    public static final long ACCEPTABLE_RECOVERY_LAG = 10_000L;
    /** {@code max.warmup.replicas} of the broker form (Kafka Streams' default). */
    public static final int MAX_WARMUP_REPLICAS = 2;

    private GroupDecision() { }

    /** One member's tasks: subtopology id -> partitions (ascending), for actives and standbys. */
    public record MemberTasks(Map<String, List<Integer>> active, Map<String, List<Integer>> standby) { }

    /** The classic rebalance input of the group's processes (group_cluster_state). */
    public static ClusterInput clusterInput(GroupInput group, long acceptableRecoveryLag, int maxWarmupReplicas) {
        return new Indexed(group).clusterInput(acceptableRecoveryLag, maxWarmupReplicas);
    }

    /** Per member (every member of the group) its active and standby tasks. */
    public static Map<String, MemberTasks> assign(GroupInput group) {
        return assign(group, ACCEPTABLE_RECOVERY_LAG, MAX_WARMUP_REPLICAS);
    }

    /** {@link #assign(GroupInput)} with the two settings the group configs do not carry. */
    public static Map<String, MemberTasks> assign(GroupInput group, long acceptableRecoveryLag, int maxWarmupReplicas) {
        return decide(group, acceptableRecoveryLag, maxWarmupReplicas).memberTasks();
    }

    /**
     * The decision of {@link #assign(GroupInput, long, int)}, kept as task indices until asked
     * in one of its two shapes.
     *
     * @throws IllegalArgumentException when two subtopology ids have the same number (such as
     *                                  {@code 1} and {@code 01}) and only one is stateful
     */
    public static Result decide(GroupInput group, long acceptableRecoveryLag, int maxWarmupReplicas) {
        if (group.members().isEmpty()) {
            return new Result(null, List.of(), new int[0][], new int[0][]);
        }
        Indexed ix = new Indexed(group);
        Decision decision = LagAwareSticky.assign(ix.clusterInput(acceptableRecoveryLag, maxWarmupReplicas));
        Placement placement = new Placement(ix);
        int total = group.members().size();
        List<String> memberIds = new ArrayList<>(total);
        int[][] actives = new int[total][];
        int[][] standbys = new int[total][];
        for (int p = 0; p < ix.processes.size(); p++) {
            int first = ix.firstMember[p];
            int count = ix.members.get(p).size();
            Decision.ClientDecision mine = decision.clients().get(ix.clientIds.get(p));
            List<TaskKey> standby = mine.standby();
            if (!mine.warmup().isEmpty()) {
                standby = new ArrayList<>(standby);
                standby.removeAll(mine.warmup());
            }
            placement.spread(ix.indices(mine.active()), first, count, ix.ownedActive, actives);
            placement.spread(ix.indices(standby), first, count, ix.ownedStandby, standbys);
            for (GroupInput.Member m : ix.members.get(p)) {
                memberIds.add(m.memberId());
            }
        }
        return new Result(ix, memberIds, actives, standbys);
    }

    /**
     * A group decision: per member (process by process, each process's members in member id
     * order) its active and standby task indices.
     */
    public static final class Result {
        private final Indexed ix;
        private final List<String> memberIds;
        private final int[][] active;
        private final int[][] standby;

        Result(Indexed ix, List<String> memberIds, int[][] active, int[][] standby) {
            this.ix = ix;
            this.memberIds = memberIds;
            this.active = active;
            this.standby = standby;
        }

        /** Per member its tasks as subtopology id -> partitions, ascending (the harness's shape). */
        public Map<String, MemberTasks> memberTasks() {
            Map<String, MemberTasks> out = new LinkedHashMap<>(2 * memberIds.size());
            for (int i = 0; i < memberIds.size(); i++) {
                out.put(memberIds.get(i), new MemberTasks(ix.taskLists(active[i]), ix.taskLists(standby[i])));
            }
            return out;
        }

        /**
         * Per member {@code make(active, standby)} of its tasks as subtopology id -> partitions in
         * hash sets (Kafka's shape: {@code MemberAssignment::new}), in a hash map.
         */
        public <T> Map<String, T> memberTaskSets(
                BiFunction<Map<String, Set<Integer>>, Map<String, Set<Integer>>, T> make) {
            Map<String, T> out = new HashMap<>(2 * memberIds.size());
            for (int i = 0; i < memberIds.size(); i++) {
                out.put(memberIds.get(i), make.apply(ix.taskSets(active[i]), ix.taskSets(standby[i])));
            }
            return out;
        }
    }

    /** A growable list of task indices. */
    static final class IntList {
        int[] items = new int[8];
        int size;

        void add(int value) {
            if (size == items.length) {
                items = Arrays.copyOf(items, size * 2);
            }
            items[size++] = value;
        }

        int[] toArray() {
            return Arrays.copyOf(items, size);
        }

        int[] sorted() {
            int[] out = Arrays.copyOf(items, size);
            Arrays.sort(out);
            return out;
        }
    }

    /**
     * The group indexed for one decision: subtopology ids as TaskId numbers (their value when
     * all are decimal, else their rank in String order), every task a dense index in TaskId
     * order, the processes, each with its members in member id order, and the client id of each
     * process.
     */
    static final class Indexed {
        final GroupInput group;
        /** Per block (a TaskId number, ascending): the number, the id answered, stateful. */
        final int[] number;
        final String[] name;
        final boolean[] stateful;
        /** Per block its first task index; {@code start[blocks]} is the task count. */
        final int[] start;
        final Map<String, Integer> blockOf = new HashMap<>();
        final TaskKey[] keys;
        final int[] blockOfTask;
        final List<String> processes = new ArrayList<>();
        final List<List<GroupInput.Member>> members = new ArrayList<>();
        final List<String> clientIds;
        /** Per process the position of its first member in member order (processes' members in turn). */
        final int[] firstMember;
        /** Per member (in that order) its known active tasks, and its standby and warm-up tasks. */
        final int[][] ownedActive;
        final int[][] ownedStandby;

        Indexed(GroupInput group) {
            this.group = group;
            List<String> ids = new ArrayList<>(group.topology().keySet());
            ids.sort(null);
            boolean numeric = ids.stream().allMatch(s -> !s.isEmpty() && s.chars().allMatch(ch -> ch >= '0' && ch <= '9'));
            // Ids sharing a number ("1", "01") share its tasks, answered under the last in String order.
            TreeMap<Integer, List<String>> byNumber = new TreeMap<>();
            for (int n = 0; n < ids.size(); n++) {
                byNumber.computeIfAbsent(numeric ? Integer.parseInt(ids.get(n)) : n, k -> new ArrayList<>()).add(ids.get(n));
            }
            int blocks = byNumber.size();
            number = new int[blocks];
            name = new String[blocks];
            stateful = new boolean[blocks];
            start = new int[blocks + 1];
            int b = 0;
            for (Map.Entry<Integer, List<String>> e : byNumber.entrySet()) {
                number[b] = e.getKey();
                int partitions = 0;
                for (String id : e.getValue()) {
                    GroupInput.Subtopology sub = group.topology().get(id);
                    if (id != e.getValue().get(0) && sub.stateful() != stateful[b]) {
                        throw new IllegalArgumentException("subtopology ids " + e.getValue().get(0) + " and " + id
                                + " are both TaskId subtopology " + e.getKey() + " but only one is stateful");
                    }
                    stateful[b] = sub.stateful();
                    partitions = Math.max(partitions, sub.partitions());
                    name[b] = id;
                    blockOf.put(id, b);
                }
                start[b + 1] = start[b] + partitions;
                b++;
            }
            keys = new TaskKey[start[blocks]];
            blockOfTask = new int[keys.length];
            for (b = 0; b < blocks; b++) {
                for (int t = start[b]; t < start[b + 1]; t++) {
                    keys[t] = new TaskKey(null, number[b], t - start[b]);
                    blockOfTask[t] = b;
                }
            }
            // Members by process, each process's in member id order; processes in group order
            // (no decision depends on it: the core orders clients by UUID) unless two process
            // ids name one UUID, when the core's stable sort keeps the order of each one's least
            // member id, as the Python reference's does.
            Map<String, List<GroupInput.Member>> byProcess = new LinkedHashMap<>();
            for (GroupInput.Member m : group.members()) {
                byProcess.computeIfAbsent(m.processId(), k -> new ArrayList<>(4)).add(m);
            }
            for (List<GroupInput.Member> mine : byProcess.values()) {
                mine.sort(Comparator.comparing(GroupInput.Member::memberId));
            }
            processes.addAll(byProcess.keySet());
            List<String> uuids = clientIds(processes);
            if (new HashSet<>(uuids).size() < uuids.size()) {
                processes.sort(Comparator.comparing(pid -> byProcess.get(pid).get(0).memberId()));
                uuids = clientIds(processes);
            }
            clientIds = uuids;
            for (String pid : processes) {
                members.add(byProcess.get(pid));
            }
            firstMember = new int[processes.size()];
            ownedActive = new int[group.members().size()][];
            ownedStandby = new int[group.members().size()][];
            int g = 0;
            for (int p = 0; p < processes.size(); p++) {
                firstMember[p] = g;
                for (GroupInput.Member m : members.get(p)) {
                    ownedActive[g] = indices(m.activeTasks(), new IntList()).toArray();
                    ownedStandby[g++] = indices(m.warmupTasks(), indices(m.standbyTasks(), new IntList())).toArray();
                }
            }
        }

        /** Per process the UUID it is ordered by: itself, or 0..0n in String order if any is not one. */
        private static List<String> clientIds(List<String> processes) {
            List<String> out = new ArrayList<>(processes.size());
            if (processes.stream().allMatch(Indexed::isUuidText)) {
                for (String id : processes) {
                    out.add(isLowerCase(id) ? id : UUID.fromString(id).toString());
                }
                return out;
            }
            List<String> ordered = new ArrayList<>(processes);
            ordered.sort(null);
            Map<String, String> numbered = new HashMap<>();
            for (int n = 0; n < ordered.size(); n++) {
                numbered.put(ordered.get(n), new UUID(0L, n + 1).toString());
            }
            for (String id : processes) {
                out.add(numbered.get(id));
            }
            return out;
        }

        /** {@code UUID.toString} form in any case: 8-4-4-4-12 hexadecimal digits. */
        static boolean isUuidText(String id) {
            if (id.length() != 36) {
                return false;
            }
            for (int i = 0; i < 36; i++) {
                char ch = id.charAt(i);
                boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
                boolean hex = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
                if (dash ? ch != '-' : !hex) {
                    return false;
                }
            }
            return true;
        }

        private static boolean isLowerCase(String id) {
            for (int i = 0; i < id.length(); i++) {
                if (id.charAt(i) >= 'A' && id.charAt(i) <= 'F') {
                    return false;
                }
            }
            return true;
        }

        /** The task index of partition {@code p} of subtopology {@code sub}, or -1 when the topology has no such task. */
        int index(String sub, int p) {
            Integer b = blockOf.get(sub);
            if (b == null || p < 0 || p >= start[b + 1] - start[b]) {
                return -1;
            }
            return start[b] + p;
        }

        /** The indices of tasks of this topology (as the core answers them). */
        int[] indices(List<TaskKey> tasks) {
            int[] out = new int[tasks.size()];
            for (int i = 0; i < out.length; i++) {
                TaskKey t = tasks.get(i);
                out[i] = start[Arrays.binarySearch(number, t.subtopology())] + t.partition();
            }
            return out;
        }

        /** Per subtopology id (TaskId order) the partitions of the given task indices, ascending. */
        Map<String, List<Integer>> taskLists(int[] tasks) {
            Arrays.sort(tasks);
            Map<String, List<Integer>> out = new LinkedHashMap<>();
            List<Integer> current = null;
            int block = -1;
            for (int t : tasks) {
                if (blockOfTask[t] != block) {
                    block = blockOfTask[t];
                    current = new ArrayList<>();
                    out.put(name[block], current);
                }
                current.add(t - start[block]);
            }
            return out;
        }

        /** Per subtopology id the partitions of the given task indices, as hash sets. */
        Map<String, Set<Integer>> taskSets(int[] tasks) {
            Arrays.sort(tasks);
            Map<String, Set<Integer>> out = new HashMap<>();
            Set<Integer> current = null;
            int block = -1;
            for (int t : tasks) {
                if (blockOfTask[t] != block) {
                    block = blockOfTask[t];
                    current = new HashSet<>();
                    out.put(name[block], current);
                }
                current.add(t - start[block]);
            }
            return out;
        }

        /** Adds the known tasks of {@code sets} to {@code found} (repeats kept); returns it. */
        IntList indices(Map<String, Set<Integer>> sets, IntList found) {
            for (Map.Entry<String, Set<Integer>> e : sets.entrySet()) {
                Integer b = blockOf.get(e.getKey());
                if (b == null) {
                    continue;
                }
                int size = start[b + 1] - start[b];
                for (int p : e.getValue()) {
                    if (p >= 0 && p < size) {
                        found.add(start[b] + p);
                    }
                }
            }
            return found;
        }

        /** Adds each task of {@code tasks} not marked in {@code stamps} nor {@code excluded} to {@code found}, marking it. */
        static void mark(int[] tasks, int[] stamps, int stamp, int[] excluded, IntList found) {
            for (int t : tasks) {
                if (stamps[t] != stamp && (excluded == null || excluded[t] != stamp)) {
                    stamps[t] = stamp;
                    found.add(t);
                }
            }
        }

        /**
         * Per stateful task in {@code reports}, the largest value (values of {@code Long.MAX_VALUE}
         * left out when {@code ends}): into {@code values} where {@code stamps} is marked.
         */
        void largest(Map<String, Map<Integer, Long>> reports, boolean ends, long[] values, int[] stamps, int stamp,
                IntList found) {
            for (Map.Entry<String, Map<Integer, Long>> e : reports.entrySet()) {
                Integer b = blockOf.get(e.getKey());
                if (b == null || !stateful[b]) {
                    continue;
                }
                for (Map.Entry<Integer, Long> v : e.getValue().entrySet()) {
                    int t = index(e.getKey(), v.getKey());
                    if (t < 0) {
                        continue;
                    }
                    long value = v.getValue();
                    if (ends && value == Long.MAX_VALUE) {
                        continue;
                    }
                    if (stamps[t] != stamp) {
                        stamps[t] = stamp;
                        values[t] = value;
                        if (found != null) {
                            found.add(t);
                        }
                    } else if (value > values[t]) {
                        values[t] = value;
                    }
                }
            }
        }

        ClusterInput clusterInput(long acceptableRecoveryLag, int maxWarmupReplicas) {
            int numTasks = keys.length;
            List<TaskKey> statefulTasks = new ArrayList<>();
            List<TaskKey> statelessTasks = new ArrayList<>();
            for (int t = 0; t < numTasks; t++) {
                (stateful[blockOfTask[t]] ? statefulTasks : statelessTasks).add(keys[t]);
            }
            long[] groupEnds = new long[numTasks];
            int[] groupEndStamps = new int[numTasks];
            for (GroupInput.Member m : group.members()) {
                // An end offset sum of Long.MAX_VALUE (4.4 members report it for some standbys)
                // counts as not reported: as an end it would make lags near Long.MAX_VALUE.
                largest(m.taskEndOffsets(), true, groupEnds, groupEndStamps, 1, null);
            }
            Map<TaskKey, Long> ends = new LinkedHashMap<>();
            for (int t = 0; t < numTasks; t++) {
                if (groupEndStamps[t] == 1) {
                    ends.put(keys[t], groupEnds[t]);
                }
            }
            int[] activeStamps = new int[numTasks];
            int[] heldStamps = new int[numTasks];
            int[] offsetStamps = new int[numTasks];
            int[] endStamps = new int[numTasks];
            long[] offsets = new long[numTasks];
            long[] processEnds = new long[numTasks];
            List<ClientInput> clients = new ArrayList<>();
            for (int p = 0; p < processes.size(); p++) {
                int stamp = p + 1;
                List<GroupInput.Member> mine = members.get(p);
                IntList active = new IntList();
                IntList held = new IntList();
                IntList reported = new IntList();
                for (int g = firstMember[p]; g < firstMember[p] + mine.size(); g++) {
                    mark(ownedActive[g], activeStamps, stamp, null, active);
                }
                for (int g = firstMember[p]; g < firstMember[p] + mine.size(); g++) {
                    mark(ownedStandby[g], heldStamps, stamp, activeStamps, held);
                }
                for (GroupInput.Member m : mine) {
                    largest(m.taskOffsets(), false, offsets, offsetStamps, stamp, reported);
                    largest(m.taskEndOffsets(), true, processEnds, endStamps, stamp, null);
                }
                // The process's own tasks only (not every stateful task): its actives, the tasks
                // it reported an offset for, then its unreported standby and warm-up tasks.
                Map<TaskKey, Long> lags = new LinkedHashMap<>();
                int[] activeTasks = active.sorted();
                for (int t : activeTasks) {
                    if (stateful[blockOfTask[t]]) {
                        lags.put(keys[t], -2L);
                    }
                }
                for (int i = 0; i < reported.size; i++) {
                    int t = reported.items[i];
                    if (activeStamps[t] != stamp) {
                        // Against the process's own end, else any member's (a restarted process
                        // reports offsets from its state directory and no end).
                        Long end = endStamps[t] == stamp ? Long.valueOf(processEnds[t])
                                : groupEndStamps[t] == 1 ? Long.valueOf(groupEnds[t]) : null;
                        lags.put(keys[t], reportedLag(offsets[t], end));
                    }
                }
                // An unreported standby or warm-up (assigned since the last report, most likely
                // restoring): state that is never more caught up than none, preferred to none
                // in ties; the whole changelog as lag when its end is known, else -3.
                int[] heldTasks = held.sorted();
                for (int t : heldTasks) {
                    if (stateful[blockOfTask[t]] && offsetStamps[t] != stamp) {
                        lags.put(keys[t], groupEndStamps[t] == 1 ? groupEnds[t] : -3L);
                    }
                }
                clients.add(new ClientInput(
                        clientIds.get(p), mine.size(), taskKeys(activeTasks), taskKeys(heldTasks), lags,
                        mine.get(0).clientTags()));
            }
            return new ClusterInput(
                    acceptableRecoveryLag,
                    maxWarmupReplicas,
                    group.numStandbyReplicas(),
                    group.tagKeys(),
                    statefulTasks,
                    statelessTasks,
                    clients,
                    ends.isEmpty() ? null : ends);
        }

        private List<TaskKey> taskKeys(int[] tasks) {
            List<TaskKey> out = new ArrayList<>(tasks.length);
            for (int t : tasks) {
                out.add(keys[t]);
            }
            return out;
        }
    }

    /**
     * The lag of a reported offset sum against a reported end offset sum (records): -2 and -3
     * stay, no end gives -3, an offset at or beyond the end 0. Unlike Kafka's classic
     * {@code ClientState#computeTaskLags} (an offset beyond the end: the whole end), since a
     * streams group's end may be another member's, up to a report interval old, and Kafka 4.4
     * members report a caught-up store's end one below its offset.
     */
    private static long reportedLag(long offset, Long end) {
        if (offset == -2 || offset == -3) {
            return offset;
        }
        if (end == null) {
            return -3L;
        }
        return Math.max(end - offset, 0L);
    }

    /** Per-member spreading of one process's tasks, with owner look-ups by task index. */
    static final class Placement {
        private final Indexed ix;
        /** Per task: the member (position in its process) that owned it, valid where stamped. */
        private final int[] owner;
        private final int[] ownerStamps;
        private int stamp;

        Placement(Indexed ix) {
            this.ix = ix;
            owner = new int[ix.keys.length];
            ownerStamps = new int[ix.keys.length];
        }

        /**
         * A process's tasks over its members: each member {@code floor} or {@code ceil} of an
         * even share (the first {@code n mod m} to reach {@code ceil} keep it); each task first
         * to the member that owned it ({@code owned}: per member its active tasks, or its standby
         * and warm-up tasks; the first such member in member id order), the rest to the member
         * with the fewest (then member id order). The process's {@code m} members are members
         * {@code first..first+m-1}; each one's task indices go to {@code out[member]}.
         */
        void spread(int[] tasks, int first, int m, int[][] owned, int[][] out) {
            stamp++;
            for (int i = 0; i < m; i++) {
                for (int t : owned[first + i]) {
                    if (ownerStamps[t] != stamp) {
                        ownerStamps[t] = stamp;
                        owner[t] = i;
                    }
                }
            }
            int n = tasks.length;
            int floor = n / m;
            int highs = n % m;
            IntList[] placed = new IntList[m];
            for (int i = 0; i < m; i++) {
                placed[i] = new IntList();
            }
            IntList rest = new IntList();
            for (int t : tasks) {
                int o = ownerStamps[t] == stamp ? owner[t] : -1;
                int count = o < 0 ? 0 : placed[o].size;
                if (o >= 0 && (count < floor || (count == floor && highs > 0))) {
                    if (count == floor) {
                        highs--;
                    }
                    placed[o].add(t);
                } else {
                    rest.add(t);
                }
            }
            for (int k = 0; k < rest.size; k++) {
                int target = -1;
                for (int i = 0; i < m; i++) {
                    int count = placed[i].size;
                    boolean room = count < floor || (count == floor && highs > 0);
                    if (room && (target < 0 || count < placed[target].size)) {
                        target = i;
                    }
                }
                if (placed[target].size == floor) {
                    highs--;
                }
                placed[target].add(rest.items[k]);
            }
            for (int i = 0; i < m; i++) {
                out[first + i] = Arrays.copyOf(placed[i].items, placed[i].size);
            }
        }
    }
}
