package io.streamsassign.assignor.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The rebalance input indexed for the steps (streams_assign's {@code problem.IndexedCluster}):
 * clients {@code 0..C-1} in UUID order, stateful tasks {@code 0..T-1} in TaskId order; per task
 * the clients with local state (ascending), their lags, whether caught up, the records each
 * restores; the previous active and standby clients.
 */
final class Problem {
    final ClusterInput cluster;
    final int numClients;
    final int numTasks;
    final int[] capacity;
    final List<TaskKey> tasks;
    /** Per task: clients with local state, ascending. */
    final int[][] holders;
    final long[][] holderCost;
    final boolean[][] holderCaught;
    final int[] caughtCount;
    final int[][] prevActive;
    final int[][] prevStandby;
    final long[] noStateLag;
    final boolean[] genericCaughtUp;
    final long[] baseCost;
    /** Per client: tasks with state, ascending. */
    final int[][] stateTasks;
    /** Per client, per tag key: the value or null. */
    final String[][] tags;
    final boolean tagged;

    Problem(ClusterInput cluster) {
        this.cluster = cluster;
        List<ClientInput> clients = cluster.clients();
        numClients = clients.size();
        tasks = cluster.statefulTasks();
        numTasks = tasks.size();
        capacity = new int[numClients];
        Map<TaskKey, Integer> position = new HashMap<>();
        for (int t = 0; t < numTasks; t++) {
            position.put(tasks.get(t), t);
        }
        long acceptable = cluster.acceptableRecoveryLag();
        boolean unbounded = acceptable == ClusterInput.LONG_MAX;
        // Per task its (client, lag) rows in client order, previous actives and standbys, as
        // growable primitive arrays (no boxing: this runs once per task and holder).
        int[] holderCount = new int[numTasks];
        int[][] rowClient = new int[numTasks][];
        long[][] rowLag = new long[numTasks][];
        int[] paCount = new int[numTasks];
        int[][] pa = new int[numTasks][];
        int[] psCount = new int[numTasks];
        int[][] ps = new int[numTasks][];
        long[] largest = new long[numTasks];
        Arrays.fill(largest, -1);
        long clusterMax = 0;
        stateTasks = new int[numClients][];
        for (int c = 0; c < numClients; c++) {
            ClientInput client = clients.get(c);
            capacity[c] = client.capacity();
            int[] held = new int[client.taskLags().size()];
            int heldCount = 0;
            for (Map.Entry<TaskKey, Long> e : client.taskLags().entrySet()) {
                long lag = e.getValue();
                boolean finite = lag >= 0 && lag < ClusterInput.LONG_MAX;
                if (finite && lag > clusterMax) {
                    clusterMax = lag;
                }
                Integer t = position.get(e.getKey());
                if (t == null) {
                    continue;
                }
                int n = holderCount[t]++;
                if (rowClient[t] == null || n == rowClient[t].length) {
                    rowClient[t] = rowClient[t] == null ? new int[2] : Arrays.copyOf(rowClient[t], 2 * n);
                    rowLag[t] = rowLag[t] == null ? new long[2] : Arrays.copyOf(rowLag[t], 2 * n);
                }
                rowClient[t][n] = c;
                rowLag[t][n] = lag;
                held[heldCount++] = t;
                if (finite && lag > largest[t]) {
                    largest[t] = lag;
                }
            }
            for (TaskKey task : client.prevActive()) {
                Integer t = position.get(task);
                if (t != null) {
                    pa[t] = append(pa[t], paCount[t]++, c);
                }
            }
            for (TaskKey task : client.prevStandby()) {
                Integer t = position.get(task);
                if (t != null && (psCount[t] == 0 || ps[t][psCount[t] - 1] != c)) {
                    // clients come in ascending order, so a repeat of c is the last entry
                    ps[t] = append(ps[t], psCount[t]++, c);
                }
            }
            stateTasks[c] = Arrays.copyOf(held, heldCount);
            Arrays.sort(stateTasks[c]);
        }
        // estimated_changelog_records' rule: the records a client without state restores.
        long least = unbounded ? 0 : acceptable + 1;
        Map<TaskKey, Long> ends = cluster.changelogEndOffsetSums();
        noStateLag = new long[numTasks];
        genericCaughtUp = new boolean[numTasks];
        baseCost = new long[numTasks];
        for (int t = 0; t < numTasks; t++) {
            Long end = ends == null ? null : ends.get(tasks.get(t));
            if (end != null && end >= 0 && end < ClusterInput.LONG_MAX) {
                noStateLag[t] = end;
            } else {
                noStateLag[t] = Math.max(largest[t] >= 0 ? largest[t] : clusterMax, least);
            }
            long generic = ends == null
                    ? ClusterInput.LONG_MAX
                    : ends.getOrDefault(tasks.get(t), ClusterInput.LONG_MAX);
            genericCaughtUp[t] = ClusterInput.isCaughtUp(generic, acceptable);
            baseCost[t] = genericCaughtUp[t] ? 0 : noStateLag[t];
        }
        holders = new int[numTasks][];
        holderCost = new long[numTasks][];
        holderCaught = new boolean[numTasks][];
        caughtCount = new int[numTasks];
        prevActive = new int[numTasks][];
        prevStandby = new int[numTasks][];
        for (int t = 0; t < numTasks; t++) {
            int n = holderCount[t];
            holders[t] = new int[n];
            holderCost[t] = new long[n];
            holderCaught[t] = new boolean[n];
            for (int i = 0; i < n; i++) {
                int c = rowClient[t][i];
                long lag = rowLag[t][i];
                boolean finite = lag >= 0 && lag < ClusterInput.LONG_MAX;
                holders[t][i] = c;
                if (lag == -2 || unbounded || (finite && lag <= acceptable)) {
                    holderCaught[t][i] = true;
                    caughtCount[t]++;
                    holderCost[t][i] = 0;
                } else if (finite) {
                    holderCost[t][i] = lag;
                } else {
                    holderCost[t][i] = noStateLag[t];
                }
            }
            prevActive[t] = pa[t] == null ? new int[0] : Arrays.copyOf(pa[t], paCount[t]);
            prevStandby[t] = ps[t] == null ? new int[0] : Arrays.copyOf(ps[t], psCount[t]);
        }
        List<String> keys = cluster.tagKeys();
        tagged = !keys.isEmpty();
        tags = new String[numClients][keys.size()];
        for (int c = 0; c < numClients; c++) {
            for (int k = 0; k < keys.size(); k++) {
                tags[c][k] = clients.get(c).tags().get(keys.get(k));
            }
        }
    }

    private static int[] append(int[] items, int size, int value) {
        int[] out = items == null ? new int[2] : size == items.length ? Arrays.copyOf(items, 2 * size) : items;
        out[size] = value;
        return out;
    }

    /** The position of client c among the task's holders, or a negative number. */
    int holderIndex(int t, int c) {
        return Arrays.binarySearch(holders[t], c);
    }

    boolean hasState(int c, int t) {
        return holderIndex(t, c) >= 0;
    }

    /** Records to restore before c could run t (0 when caught up). */
    long cost(int t, int c) {
        int i = holderIndex(t, c);
        return i >= 0 ? holderCost[t][i] : baseCost[t];
    }

    boolean caughtUp(int c, int t) {
        int i = holderIndex(t, c);
        return i >= 0 ? holderCaught[t][i] : genericCaughtUp[t];
    }

    /** Whether c is a caught-up holder of t (in {@code caught[t]}). */
    boolean inCaught(int t, int c) {
        int i = holderIndex(t, c);
        return i >= 0 && holderCaught[t][i];
    }

    boolean wasActive(int t, int c) {
        for (int x : prevActive[t]) {
            if (x == c) {
                return true;
            }
        }
        return false;
    }

    boolean wasStandby(int t, int c) {
        return Arrays.binarySearch(prevStandby[t], c) >= 0;
    }

    /** The client held no copy of the task before. */
    boolean fresh(int c, int t) {
        return !wasStandby(t, c) && !wasActive(t, c);
    }

    int sharedTags(int client, int other) {
        int n = 0;
        String[] mine = tags[client];
        String[] theirs = tags[other];
        for (int k = 0; k < mine.length; k++) {
            if (mine[k] != null && mine[k].equals(theirs[k])) {
                n++;
            }
        }
        return n;
    }

    /** Per tag key, the distinct values among the clients, summed. */
    int tagSpread(int[] clients) {
        if (!tagged) {
            return 0;
        }
        int sum = 0;
        for (int k = 0; k < tags[0].length; k++) {
            java.util.HashSet<String> values = new java.util.HashSet<>();
            for (int c : clients) {
                if (tags[c][k] != null) {
                    values.add(tags[c][k]);
                }
            }
            sum += values.size();
        }
        return sum;
    }

    /** Per task, its (topology, subtopology) index in order of first appearance. */
    static int[] subtopologyIndices(List<TaskKey> tasks) {
        Map<TaskKey.SubKey, Integer> index = new HashMap<>();
        int[] out = new int[tasks.size()];
        for (int i = 0; i < tasks.size(); i++) {
            TaskKey.SubKey key = tasks.get(i).subtopologyKey();
            Integer g = index.get(key);
            if (g == null) {
                g = index.size();
                index.put(key, g);
            }
            out[i] = g;
        }
        return out;
    }

    /**
     * Per-client count bounds within which any assignment of {@code total} copies keeps tasks
     * per thread within one (balanced_count_bounds): {@code lam} the largest load
     * {@code k / cap} with {@code sum ceil(lam * cap) <= total}; lower {@code ceil(lam * cap)},
     * upper {@code floor((lam + 1) * cap)}; exact integer arithmetic.
     *
     * @return {lower, upper}
     */
    static int[][] balancedCountBounds(long total, int[] capacities) {
        int n = capacities.length;
        int[] lower = new int[n];
        int[] upper = new int[n];
        if (n == 0) {
            return new int[][] {lower, upper};
        }
        if (total == 0) {
            return new int[][] {lower, capacities.clone()};
        }
        long threads = 0;
        java.util.TreeMap<Integer, Integer> weight = new java.util.TreeMap<>();
        for (int cap : capacities) {
            threads += cap;
            weight.merge(cap, 1, Integer::sum);
        }
        List<long[]> candidates = new ArrayList<>();
        candidates.add(new long[] {0, 1});
        for (int cap : weight.keySet()) {
            long low = Math.max(0, Math.floorDiv((total - threads) * cap, threads));
            long high = -Math.floorDiv(-total * cap, threads);
            for (long k = low; k <= high; k++) {
                candidates.add(new long[] {k, cap});
            }
        }
        candidates.sort((a, b) -> Long.compare(a[0] * b[1], b[0] * a[1]));
        List<long[]> ordered = new ArrayList<>();
        for (long[] f : candidates) {
            if (ordered.isEmpty()) {
                ordered.add(f);
                continue;
            }
            long[] last = ordered.get(ordered.size() - 1);
            if (last[0] * f[1] != f[0] * last[1]) {
                ordered.add(f);
            }
        }
        int lo = 0;
        int hi = ordered.size() - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            long[] lam = ordered.get(mid);
            long sum = 0;
            for (Map.Entry<Integer, Integer> e : weight.entrySet()) {
                sum += e.getValue() * -Math.floorDiv(-lam[0] * e.getKey(), lam[1]);
            }
            if (sum <= total) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        long num = ordered.get(lo)[0];
        long den = ordered.get(lo)[1];
        for (int c = 0; c < n; c++) {
            lower[c] = (int) -Math.floorDiv(-num * capacities[c], den);
            upper[c] = (int) Math.floorDiv((num + den) * capacities[c], den);
        }
        return new int[][] {lower, upper};
    }
}
