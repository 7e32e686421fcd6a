package io.streamsassign.assignor.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/** Stateless actives: counts within Kafka's balance window, as sticky as they allow. */
final class Stateless {
    private Stateless() { }

    /** least_loaded_counts: Kafka's least-loaded deal as G x C counts. */
    static int[][] leastLoadedCounts(int[] groupSizes, int[] activeCounts, int[] capacity) {
        int n = capacity.length;
        long[] load = new long[n];
        for (int c = 0; c < n; c++) {
            load[c] = activeCounts[c];
        }
        int[][] counts = new int[groupSizes.length][];
        // entries (key, quota, client)
        PriorityQueue<double[]> heap = new PriorityQueue<>((a, b) -> {
            int k = Heaps.compare(a[0], b[0]);
            if (k != 0) {
                return k;
            }
            if (a[1] != b[1]) {
                return Double.compare(a[1], b[1]);
            }
            return Double.compare(a[2], b[2]);
        });
        for (int c = 0; c < n; c++) {
            heap.add(new double[] {(double) load[c] / capacity[c], 0, c});
        }
        for (int g = 0; g < groupSizes.length; g++) {
            int[] quota = new int[n];
            List<Integer> touched = new ArrayList<>();
            for (int i = 0; i < groupSizes[g]; i++) {
                int c;
                while (true) {
                    double[] e = heap.poll();
                    c = (int) e[2];
                    if ((int) e[1] == quota[c] && e[0] == (double) load[c] / capacity[c]) {
                        break;
                    }
                }
                if (quota[c] == 0) {
                    touched.add(c);
                }
                quota[c]++;
                load[c]++;
                heap.add(new double[] {(double) load[c] / capacity[c], quota[c], c});
            }
            for (int c : touched) {
                heap.add(new double[] {(double) load[c] / capacity[c], 0, c});
            }
            counts[g] = quota;
        }
        return counts;
    }

    /** balance_window: per client the stateless totals keeping every load in [m, m + 1]. */
    static int[][] balanceWindow(int[][] counts, int[] activeCounts, int[] capacity) {
        int n = capacity.length;
        long[] loads = new long[n];
        for (int c = 0; c < n; c++) {
            loads[c] = activeCounts[c];
            for (int[] row : counts) {
                loads[c] += row[c];
            }
        }
        int least = 0;
        for (int c = 1; c < n; c++) {
            if ((double) loads[c] / capacity[c] < (double) loads[least] / capacity[least]) {
                least = c;
            }
        }
        long num = loads[least];
        long den = capacity[least];
        int[] lower = new int[n];
        int[] upper = new int[n];
        for (int c = 0; c < n; c++) {
            lower[c] = (int) Math.max(0, -Math.floorDiv(-num * capacity[c], den) - activeCounts[c]);
            upper[c] = (int) Math.max(0, Math.floorDiv((num + den) * capacity[c], den) - activeCounts[c]);
        }
        return new int[][] {lower, upper};
    }

    /** assign_stateless_tasks: per client its stateless actives. */
    static List<List<TaskKey>> assignStatelessTasks(ClusterInput cluster, int[] activeCounts) {
        List<ClientInput> clients = cluster.clients();
        int n = clients.size();
        int[] capacity = new int[n];
        for (int c = 0; c < n; c++) {
            capacity[c] = clients.get(c).capacity();
        }
        List<TaskKey> stateless = cluster.statelessTasks();
        LinkedHashMap<TaskKey.SubKey, List<Integer>> bySub = new LinkedHashMap<>();
        Map<TaskKey, Integer> position = new HashMap<>();
        for (int i = 0; i < stateless.size(); i++) {
            bySub.computeIfAbsent(stateless.get(i).subtopologyKey(), k -> new ArrayList<>()).add(i);
            position.put(stateless.get(i), i);
        }
        Set<TaskKey.SubKey> statefulSubs = new HashSet<>();
        for (TaskKey t : cluster.statefulTasks()) {
            statefulSubs.add(t.subtopologyKey());
        }
        int[] previous = new int[stateless.size()];
        Arrays.fill(previous, -1);
        for (int c = n - 1; c >= 0; c--) {
            for (TaskKey task : clients.get(c).prevActive()) {
                Integer pos = position.get(task);
                if (pos != null) {
                    previous[pos] = c;
                }
            }
        }
        List<List<Integer>> groups = new ArrayList<>(bySub.values());
        List<TaskKey.SubKey> keys = new ArrayList<>(bySub.keySet());
        int[][] returning = new int[groups.size()][n];
        int[] sizes = new int[groups.size()];
        for (int g = 0; g < groups.size(); g++) {
            sizes[g] = groups.get(g).size();
            for (int i : groups.get(g)) {
                if (previous[i] >= 0) {
                    returning[g][previous[i]]++;
                }
            }
        }
        int[][] counts = leastLoadedCounts(sizes, activeCounts, capacity);
        if (!groups.isEmpty()) {
            int[][] window = balanceWindow(counts, activeCounts, capacity);
            int[][] low = new int[groups.size()][];
            int[][] high = new int[groups.size()][];
            for (int g = 0; g < groups.size(); g++) {
                int[] row = counts[g];
                if (statefulSubs.contains(keys.get(g))) {
                    low[g] = row.clone();
                    high[g] = row.clone();
                    continue;
                }
                int min = Arrays.stream(row).min().orElse(0);
                int max = Arrays.stream(row).max().orElse(0);
                int floor = Math.min(sizes[g] / n, min);
                int ceiling = Math.max(-Math.floorDiv(-sizes[g], n), max);
                low[g] = new int[n];
                high[g] = new int[n];
                Arrays.fill(low[g], floor);
                Arrays.fill(high[g], ceiling);
            }
            stickyCounts(counts, returning, low, high, window[0], window[1]);
        }
        List<List<TaskKey>> result = new ArrayList<>();
        for (int c = 0; c < n; c++) {
            result.add(new ArrayList<>());
        }
        for (int g = 0; g < groups.size(); g++) {
            int[] quota = counts[g].clone();
            List<TaskKey> rest = new ArrayList<>();
            for (int i : groups.get(g)) {
                int c = previous[i];
                if (c >= 0 && quota[c] > 0) {
                    result.get(c).add(stateless.get(i));
                    quota[c]--;
                } else {
                    rest.add(stateless.get(i));
                }
            }
            int next = 0;
            for (int c = 0; c < n; c++) {
                for (int k = 0; k < quota[c]; k++) {
                    result.get(c).add(rest.get(next++));
                }
            }
        }
        return result;
    }

    /** sticky_counts: raise, within the bounds, the tasks that stay on the client that ran them. */
    static void stickyCounts(int[][] counts, int[][] returning, int[][] low, int[][] high, int[] lower,
            int[] upper) {
        Deal deal = new Deal(counts, returning, low, high, lower, upper);
        List<int[]> wanted = new ArrayList<>();
        for (int g = 0; g < counts.length; g++) {
            for (int p = 0; p < returning[g].length; p++) {
                int back = returning[g][p];
                if (back != 0 && counts[g][p] < back && counts[g][p] < high[g][p]) {
                    wanted.add(new int[] {g, p, Math.min(back, high[g][p])});
                }
            }
        }
        boolean improved = true;
        while (improved && !wanted.isEmpty()) {
            improved = false;
            List<int[]> left = new ArrayList<>();
            for (int[] w : wanted) {
                int[] row = counts[w[0]];
                while (row[w[1]] < w[2]) {
                    if (!keepOneMore(deal, w[0], w[1])) {
                        left.add(w);
                        break;
                    }
                    improved = true;
                }
            }
            wanted = left;
        }
    }

    private static int firstWithRoom(int[] gives, int[][] k, int[][] high, int q) {
        for (int h : gives) {
            if (k[h][q] < high[h][q]) {
                return h;
            }
        }
        return -1;
    }

    private static boolean keepOneMore(Deal deal, int g, int p) {
        boolean excess = deal.total[p] >= deal.upper[p];
        if (!excess && deal.fedBy[g] > 0) {
            deal.move(g, deal.firstFeeder(g), p);
            return true;
        }
        int[] gives = java.util.stream.IntStream.range(0, deal.k.length)
                .filter(h -> h != g && deal.spare[h].get(p)).toArray();
        if (excess && gives.length == 0) {
            return false;
        }
        int passes = -1;
        if (excess) {
            for (int h : gives) {
                if (deal.taker(h) >= 0) {
                    passes = h;
                    break;
                }
            }
        }
        int[][] k = deal.k;
        int[][] high = deal.high;
        if (excess && deal.fedBy[g] > 0) {
            BitSet feeders = (BitSet) deal.spare[g].clone();
            feeders.and(deal.above);
            for (int q = feeders.nextSetBit(0); q >= 0; q = feeders.nextSetBit(q + 1)) {
                int swap = firstWithRoom(gives, k, high, q);
                if ((swap >= 0 || passes >= 0) && handOver(deal, g, p, q, swap, passes)) {
                    return true;
                }
            }
        }
        BitSet others = (BitSet) deal.spare[g].clone();
        others.andNot(deal.above);
        if (others.isEmpty()) {
            return false;
        }
        int[] extra = !excess && deal.total[p] + 1 > deal.lower[p] ? gives : new int[0];
        boolean[] fed = deal.fed(extra);
        List<Integer> drains = new ArrayList<>();
        for (int h = 0; h < k.length; h++) {
            if (fed[h]) {
                drains.add(h);
            }
        }
        if (!fed[g] && drains.isEmpty() && gives.length == 0) {
            return false;
        }
        for (int q = others.nextSetBit(0); q >= 0; q = others.nextSetBit(q + 1)) {
            int swap = firstWithRoom(gives, k, high, q);
            if (swap < 0) {
                boolean drained = fed[g];
                for (int i = 0; !drained && i < drains.size(); i++) {
                    int h = drains.get(i);
                    drained = k[h][q] < high[h][q];
                }
                if ((excess && passes < 0) || !drained) {
                    continue;
                }
            }
            if (handOver(deal, g, p, q, swap, excess ? passes : -1)) {
                return true;
            }
        }
        return false;
    }

    private static boolean handOver(Deal deal, int g, int p, int q, int swap, int passes) {
        int mark = deal.log.size();
        int state = deal.state;
        deal.move(g, q, p);
        if (swap >= 0) {
            deal.move(swap, p, q);
        } else if (passes >= 0) {
            deal.move(passes, p, deal.taker(passes));
        }
        if (deal.total[q] < deal.lower[q] && !deal.drawDeficit(q)) {
            deal.undo(mark, state);
            return false;
        }
        return true;
    }

    /** The counts of one stateless deal with their bounds, and the hand-overs between clients. */
    private static final class Deal {
        final int[][] k;
        final int[][] r;
        final int[][] low;
        final int[][] high;
        final int[] lower;
        final int[] upper;
        final int[] total;
        final BitSet[] spare;
        final BitSet above = new BitSet();
        final BitSet below = new BitSet();
        final int[] fedBy;
        final BitSet[] room;
        final List<int[]> log = new ArrayList<>();
        int state;
        private int states;
        private int fedState = -1;
        private int[] fedExtra;
        private boolean[] fedValue;

        Deal(int[][] counts, int[][] returning, int[][] low, int[][] high, int[] lower, int[] upper) {
            this.k = counts;
            this.r = returning;
            this.low = low;
            this.high = high;
            this.lower = lower;
            this.upper = upper;
            int n = lower.length;
            int groups = counts.length;
            total = new int[n];
            for (int[] row : counts) {
                for (int c = 0; c < n; c++) {
                    total[c] += row[c];
                }
            }
            spare = new BitSet[groups];
            room = new BitSet[groups];
            for (int g = 0; g < groups; g++) {
                spare[g] = new BitSet();
                room[g] = new BitSet();
                for (int c = 0; c < n; c++) {
                    if (counts[g][c] > low[g][c] && counts[g][c] > returning[g][c]) {
                        spare[g].set(c);
                    }
                    if (counts[g][c] < high[g][c]) {
                        room[g].set(c);
                    }
                }
            }
            for (int c = 0; c < n; c++) {
                if (total[c] > lower[c]) {
                    above.set(c);
                }
                if (total[c] < upper[c]) {
                    below.set(c);
                }
            }
            fedBy = new int[groups];
            for (int g = 0; g < groups; g++) {
                BitSet both = (BitSet) spare[g].clone();
                both.and(above);
                fedBy[g] = both.cardinality();
            }
        }

        int firstFeeder(int g) {
            BitSet both = (BitSet) spare[g].clone();
            both.and(above);
            return both.nextSetBit(0);
        }

        int taker(int g) {
            BitSet both = (BitSet) below.clone();
            both.and(room[g]);
            return both.nextSetBit(0);
        }

        void move(int g, int giver, int taker) {
            shift(g, giver, taker);
            log.add(new int[] {g, giver, taker});
            states++;
            state = states;
        }

        void undo(int mark, int previousState) {
            while (log.size() > mark) {
                int[] e = log.remove(log.size() - 1);
                shift(e[0], e[2], e[1]);
            }
            state = previousState;
        }

        private void shift(int g, int giver, int taker) {
            int[] row = k[g];
            row[giver]--;
            row[taker]++;
            int[][] changes = {{giver, -1}, {taker, 1}};
            for (int[] change : changes) {
                int c = change[0];
                room[g].set(c, row[c] < high[g][c]);
                int t = total[c] + change[1];
                total[c] = t;
                boolean wasAbove = above.get(c);
                boolean isSpare = row[c] > low[g][c] && row[c] > r[g][c];
                if (isSpare != spare[g].get(c)) {
                    spare[g].set(c, isSpare);
                    if (wasAbove) {
                        fedBy[g] += isSpare ? 1 : -1;
                    }
                }
                boolean isAbove = t > lower[c];
                if (isAbove != wasAbove) {
                    above.set(c, isAbove);
                    int step = isAbove ? 1 : -1;
                    for (int h = 0; h < spare.length; h++) {
                        if (spare[h].get(c)) {
                            fedBy[h] += step;
                        }
                    }
                }
                below.set(c, t < upper[c]);
            }
        }

        boolean[] fed(int[] extra) {
            if (fedState == state && Arrays.equals(fedExtra, extra)) {
                return fedValue;
            }
            int groups = k.length;
            boolean[] fed = new boolean[groups];
            for (int g = 0; g < groups; g++) {
                fed[g] = fedBy[g] > 0;
            }
            for (int g : extra) {
                fed[g] = true;
            }
            boolean grown = true;
            while (grown) {
                grown = false;
                BitSet reach = new BitSet();
                for (int h = 0; h < groups; h++) {
                    if (fed[h]) {
                        reach.or(room[h]);
                    }
                }
                for (int g = 0; g < groups; g++) {
                    if (!fed[g] && spare[g].intersects(reach)) {
                        fed[g] = true;
                        grown = true;
                    }
                }
            }
            fedState = state;
            fedExtra = extra.clone();
            fedValue = fed;
            return fed;
        }

        boolean drawDeficit(int start) {
            Map<Integer, int[]> parent = new HashMap<>();
            parent.put(start, new int[] {-1, -1});
            boolean[] opened = new boolean[k.length];
            ArrayDeque<Integer> queue = new ArrayDeque<>();
            queue.add(start);
            while (!queue.isEmpty()) {
                int x = queue.poll();
                List<Integer> reached = new ArrayList<>();
                for (int g = 0; g < k.length; g++) {
                    if (!opened[g] && k[g][x] < high[g][x]) {
                        reached.add(g);
                    }
                }
                for (int g : reached) {
                    opened[g] = true;
                    if (fedBy[g] > 0) {
                        int z = firstFeeder(g);
                        parent.put(z, new int[] {x, g});
                        while (z != start) {
                            int[] e = parent.get(z);
                            move(e[1], z, e[0]);
                            z = e[0];
                        }
                        return true;
                    }
                }
                for (int g : reached) {
                    for (int z = spare[g].nextSetBit(0); z >= 0; z = spare[g].nextSetBit(z + 1)) {
                        if (!parent.containsKey(z)) {
                            parent.put(z, new int[] {x, g});
                            queue.add(z);
                        }
                    }
                }
            }
            return false;
        }
    }
}
