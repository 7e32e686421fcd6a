package io.streamsassign.assignor.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeMap;
import java.util.function.IntFunction;

/**
 * spread_subtopologies: even out each subtopology's tasks over the clients within one task
 * (Kafka's {@code TaskAssignorConvergenceTest} skew check), by moves within the total bounds or
 * swaps with one of {@link #SWAP_CHOICES} other subtopologies; cheapest (records, moved
 * actives) first.
 */
final class SubtopologySpread {
    static final int SWAP_CHOICES = 3;

    /** What placing a task on a client costs: records to restore, then moved actives. */
    interface Cost {
        long restore(int t, int c);

        long moved(int t, int c);
    }

    private final int[] owner;
    private final int[] counts;
    private final int[] lower;
    private final int[] upper;
    private final Cost cost;
    private final IntFunction<int[]> holders;
    private final List<Map<Integer, List<Integer>>> byClient = new ArrayList<>();
    private final int[][] held;
    private final int[] size;

    private SubtopologySpread(int[] groups, int[] owner, int[] counts, int[] lower, int[] upper,
            Cost cost, IntFunction<int[]> holders) {
        this.owner = owner;
        this.counts = counts;
        this.lower = lower;
        this.upper = upper;
        this.cost = cost;
        this.holders = holders;
        int nGroups = 0;
        for (int g : groups) {
            nGroups = Math.max(nGroups, g + 1);
        }
        held = new int[nGroups][counts.length];
        size = new int[nGroups];
        for (int g = 0; g < nGroups; g++) {
            byClient.add(new HashMap<>());
        }
        for (int t = 0; t < groups.length; t++) {
            int g = groups[t];
            byClient.get(g).computeIfAbsent(owner[t], k -> new ArrayList<>()).add(t);
            held[g][owner[t]]++;
            size[g]++;
        }
    }

    static void spread(int[] groups, int[] owner, int[] counts, int[] lower, int[] upper,
            Cost cost, IntFunction<int[]> holders) {
        if (counts.length < 2 || groups.length == 0) {
            return;
        }
        SubtopologySpread s = new SubtopologySpread(groups, owner, counts, lower, upper, cost, holders);
        List<Integer> pending = new ArrayList<>();
        for (int g = 0; g < s.size.length; g++) {
            pending.add(g);
        }
        while (!pending.isEmpty()) {
            List<Integer> stuck = new ArrayList<>();
            boolean progressed = false;
            for (int g : pending) {
                boolean[] r = s.evenOut(g);
                if (r[0]) {
                    stuck.add(g);
                }
                progressed |= r[1];
            }
            pending = progressed ? stuck : List.of();
        }
    }

    private List<Integer> tasksOf(int g, int c) {
        return byClient.get(g).computeIfAbsent(c, k -> new ArrayList<>());
    }

    private void move(int t, int g, int src, int dst) {
        tasksOf(g, src).remove(Integer.valueOf(t));
        tasksOf(g, dst).add(t);
        held[g][src]--;
        held[g][dst]++;
        owner[t] = dst;
    }

    /** A step: cost (restore, moved), task, swap task or -1, its subtopology or -1, receiver. */
    private record Step(long restore, long moved, int t, int u, int h, int receiver)
            implements Comparable<Step> {
        @Override
        public int compareTo(Step o) {
            if (restore != o.restore) {
                return Long.compare(restore, o.restore);
            }
            if (moved != o.moved) {
                return Long.compare(moved, o.moved);
            }
            if (t != o.t) {
                return Integer.compare(t, o.t);
            }
            if (u != o.u) {
                return Integer.compare(u, o.u);
            }
            if (h != o.h) {
                return Integer.compare(h, o.h);
            }
            return Integer.compare(receiver, o.receiver);
        }
    }

    /** What moving task t from src to dst adds, records to restore: cost there minus here. */
    private long deltaRestore(int t, int src, int dst) {
        return Math.subtractExact(cost.restore(t, dst), cost.restore(t, src));
    }

    /** What moving task t from src to dst adds, moved actives: cost there minus here. */
    private long deltaMoved(int t, int src, int dst) {
        return cost.moved(t, dst) - cost.moved(t, src);
    }

    private Step plan(int g, int donor, int receiver, int t) {
        long thereR = deltaRestore(t, donor, receiver);
        long thereM = deltaMoved(t, donor, receiver);
        if (counts[donor] > lower[donor] && counts[receiver] < upper[receiver]) {
            return new Step(thereR, thereM, t, -1, -1, receiver);
        }
        List<int[]> spare = new ArrayList<>();
        for (int h = 0; h < held.length; h++) {
            int[] rows = held[h];
            if (h != g && rows[donor] < rows[receiver]) {
                spare.add(new int[] {rows[donor] - rows[receiver], h});
            }
        }
        spare.sort((a, b) -> a[0] != b[0] ? Integer.compare(a[0], b[0]) : Integer.compare(a[1], b[1]));
        Step best = null;
        for (int i = 0; i < Math.min(SWAP_CHOICES, spare.size()); i++) {
            int h = spare.get(i)[1];
            int u = -1;
            long uR = 0;
            long uM = 0;
            for (int x : tasksOf(h, receiver)) {
                long r = deltaRestore(x, receiver, donor);
                long m = deltaMoved(x, receiver, donor);
                if (u < 0 || r < uR || (r == uR && (m < uM || (m == uM && x < u)))) {
                    u = x;
                    uR = r;
                    uM = m;
                }
            }
            Step option = new Step(Math.addExact(thereR, uR), thereM + uM, t, u, h, receiver);
            if (best == null || option.compareTo(best) < 0) {
                best = option;
            }
        }
        return best;
    }

    /** {stuck without a step, made a step}. */
    private boolean[] evenOut(int g) {
        int[] row = held[g];
        int max = Integer.MIN_VALUE;
        int min = Integer.MAX_VALUE;
        for (int v : row) {
            max = Math.max(max, v);
            min = Math.min(min, v);
        }
        if (max - min <= 1) {
            return new boolean[] {false, false};
        }
        Extremes extremes = new Extremes(row.clone());
        boolean stepped = false;
        for (int i = 0; i < size[g]; i++) {
            int donor = extremes.most();
            int least = extremes.least();
            if (extremes.counts[donor] - extremes.counts[least] <= 1) {
                break;
            }
            Step step = options(g, donor, least, extremes.counts);
            if (step == null) {
                return new boolean[] {true, stepped};
            }
            int receiver = step.receiver;
            move(step.t, g, donor, receiver);
            if (step.u < 0) {
                counts[donor]--;
                counts[receiver]++;
            } else {
                move(step.u, step.h, receiver, donor);
            }
            extremes.add(donor, -1);
            extremes.add(receiver, 1);
            stepped = true;
        }
        return new boolean[] {false, stepped};
    }

    /** A (restore, moved, task) key of the cheapest task per receiver. */
    private record Cheapest(long restore, long moved, int t) implements Comparable<Cheapest> {
        @Override
        public int compareTo(Cheapest o) {
            if (restore != o.restore) {
                return Long.compare(restore, o.restore);
            }
            if (moved != o.moved) {
                return Long.compare(moved, o.moved);
            }
            return Integer.compare(t, o.t);
        }
    }

    private Step options(int g, int donor, int least, int[] row) {
        List<Integer> tasks = tasksOf(g, donor);
        Map<Integer, Cheapest> cheapest = new HashMap<>();
        Cheapest first = null;
        for (int t : tasks) {
            Cheapest key = new Cheapest(deltaRestore(t, donor, least), deltaMoved(t, donor, least), t);
            if (first == null || key.compareTo(first) < 0) {
                first = key;
            }
        }
        cheapest.put(least, first);
        if (holders != null) {
            for (int t : tasks) {
                for (int c : holders.apply(t)) {
                    if (c == least || row[c] != row[least]) {
                        continue;
                    }
                    Cheapest key = new Cheapest(deltaRestore(t, donor, c), deltaMoved(t, donor, c), t);
                    Cheapest old = cheapest.get(c);
                    if (old == null || key.compareTo(old) < 0) {
                        cheapest.put(c, key);
                    }
                }
            }
        }
        TreeMap<Cheapest, List<Integer>> ordered = new TreeMap<>();
        for (Map.Entry<Integer, Cheapest> e : cheapest.entrySet()) {
            ordered.computeIfAbsent(e.getValue(), k -> new ArrayList<>()).add(e.getKey());
        }
        Step best = null;
        for (Map.Entry<Cheapest, List<Integer>> e : ordered.entrySet()) {
            List<Integer> receivers = e.getValue();
            receivers.sort(null);
            Cheapest key = e.getKey();
            for (int r : receivers) {
                if (best != null && (key.restore > best.restore
                        || (key.restore == best.restore && key.moved > best.moved))) {
                    return best;
                }
                Step step = plan(g, donor, r, key.t);
                if (step != null && (best == null || step.compareTo(best) < 0)) {
                    best = step;
                }
            }
        }
        return best;
    }

    /** Per-client counts with their largest (lazy heap) and smallest (level walk) at hand. */
    private static final class Extremes {
        final int[] counts;
        private final PriorityQueue<int[]> most = new PriorityQueue<>(
                (a, b) -> a[0] != b[0] ? Integer.compare(a[0], b[0]) : Integer.compare(a[1], b[1]));
        private int level;
        private List<Integer> atLevel;
        private int next;

        Extremes(int[] counts) {
            this.counts = counts;
            int min = Integer.MAX_VALUE;
            for (int c = 0; c < counts.length; c++) {
                if (counts[c] != 0) {
                    most.add(new int[] {-counts[c], c});
                }
                min = Math.min(min, counts[c]);
            }
            level = min;
            atLevel = clientsAt(level);
            next = 0;
        }

        private List<Integer> clientsAt(int value) {
            List<Integer> out = new ArrayList<>();
            for (int c = 0; c < counts.length; c++) {
                if (counts[c] == value) {
                    out.add(c);
                }
            }
            return out;
        }

        int most() {
            while (-most.peek()[0] != counts[most.peek()[1]]) {
                most.poll();
            }
            return most.peek()[1];
        }

        int least() {
            while (true) {
                while (next < atLevel.size()) {
                    int c = atLevel.get(next);
                    if (counts[c] == level) {
                        return c;
                    }
                    next++;
                }
                level++;
                atLevel = clientsAt(level);
                next = 0;
            }
        }

        void add(int client, int delta) {
            counts[client] += delta;
            if (counts[client] > 0) {
                most.add(new int[] {-counts[client], client});
            }
        }
    }
}
