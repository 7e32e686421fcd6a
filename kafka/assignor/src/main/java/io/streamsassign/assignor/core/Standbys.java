package io.streamsassign.assignor.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** Standby replicas where state already is, spread over client tags, and warmup replicas. */
final class Standbys {
    private Standbys() { }

    /** assign_standby_tasks: per stateful task its standby clients (in placement order). */
    static List<List<Integer>> assignStandbyTasks(Problem p, int[] active, int[] target, Set<Integer> early) {
        int replicas = Math.min(p.cluster.numStandbyReplicas(), p.numClients - 1);
        List<List<Integer>> standbys = new ArrayList<>();
        for (int t = 0; t < p.numTasks; t++) {
            standbys.add(new ArrayList<>());
        }
        if (replicas <= 0) {
            return standbys;
        }
        int[][] bounds = Problem.balancedCountBounds((long) p.numTasks * (1 + replicas), p.capacity);
        int[] counts = new int[p.numClients];
        for (int c : target) {
            counts[c]++;
        }
        Heaps.LeastLoaded heap = new Heaps.LeastLoaded(counts, p.capacity, bounds[1]);
        int[] anchor = new int[p.numTasks];
        for (int t = 0; t < p.numTasks; t++) {
            anchor[t] = early.contains(t) ? target[t] : active[t];
        }
        for (int t = 0; t < p.numTasks; t++) {
            List<Integer> chosen = standbys.get(t);
            Set<Integer> taken = new HashSet<>();
            taken.add(anchor[t]);
            for (int i = 0; i < replicas; i++) {
                int c = p.tagged
                        ? tagAwareChoice(p, t, anchor[t], taken, counts, bounds)
                        : standbyChoice(p, t, taken, counts, bounds, heap);
                if (c < 0) {
                    break;
                }
                chosen.add(c);
                taken.add(c);
                counts[c]++;
                heap.touch(c);
            }
        }
        StandbyBounds.evenOutStandbys(p, anchor, standbys, counts, bounds);
        if (!p.tagged) {
            StandbyBounds.exchangeStandbys(p, anchor, standbys, counts, bounds);
        }
        for (int t : early) {
            List<Integer> chosen = standbys.get(t);
            int at = chosen.indexOf(active[t]);
            if (active[t] != target[t] && at >= 0) {
                chosen.set(at, target[t]);
            }
        }
        return standbys;
    }

    /** The _standby_key of client c for task t, as comparable parts. */
    private static Comparator<Integer> standbyOrder(Problem p, int t, int[] counts, int[][] bounds) {
        return Comparator.<Integer, Boolean>comparing(c -> counts[c] >= bounds[1][c])
                .thenComparingLong(c -> p.cost(t, c))
                .thenComparing(c -> p.fresh(c, t))
                .thenComparing(c -> counts[c] >= bounds[0][c])
                .thenComparing((a, b) -> Heaps.compare(
                        (double) (counts[a] + 1) / p.capacity[a], (double) (counts[b] + 1) / p.capacity[b]))
                .thenComparingInt(c -> c);
    }

    private static int standbyChoice(Problem p, int t, Set<Integer> taken, int[] counts, int[][] bounds,
            Heaps.LeastLoaded heap) {
        Comparator<Integer> order = standbyOrder(p, t, counts, bounds);
        TreeSet<Integer> holders = new TreeSet<>();
        for (int c : p.prevStandby[t]) {
            holders.add(c);
        }
        for (int c : p.holders[t]) {
            holders.add(c);
        }
        Integer best = null;
        for (int c : holders) {
            if (taken.contains(c)) {
                continue;
            }
            if (best == null || order.compare(c, best) < 0) {
                best = c;
            }
        }
        int generic = heap.pop(c -> taken.contains(c) || holders.contains(c));
        if (generic >= 0 && (best == null || order.compare(generic, best) < 0)) {
            best = generic;
        }
        if (best == null) {
            for (int c = 0; c < p.numClients; c++) {
                if (!taken.contains(c) && (best == null || order.compare(c, best) < 0)) {
                    best = c;
                }
            }
        }
        return best == null ? -1 : best;
    }

    private static int tagAwareChoice(Problem p, int t, int active, Set<Integer> taken, int[] counts,
            int[][] bounds) {
        int keys = p.tags[active].length;
        Comparator<Integer> order = Comparator.<Integer, Boolean>comparing(c -> p.sharedTags(c, active) == keys)
                .thenComparing(c -> counts[c] >= bounds[1][c])
                .thenComparingLong(c -> p.cost(t, c))
                .thenComparing(c -> p.fresh(c, t))
                .thenComparingInt(c -> p.sharedTags(c, active))
                .thenComparingInt(c -> overlap(p, c, taken))
                .thenComparing(c -> counts[c] >= bounds[0][c])
                .thenComparing((a, b) -> Heaps.compare(
                        (double) (counts[a] + 1) / p.capacity[a], (double) (counts[b] + 1) / p.capacity[b]))
                .thenComparingInt(c -> c);
        Integer best = null;
        for (int c = 0; c < p.numClients; c++) {
            if (!taken.contains(c) && (best == null || order.compare(c, best) < 0)) {
                best = c;
            }
        }
        return best == null ? -1 : best;
    }

    private static int overlap(Problem p, int c, Set<Integer> taken) {
        int n = 0;
        String[] mine = p.tags[c];
        for (int i = 0; i < mine.length; i++) {
            if (mine[i] == null) {
                continue;
            }
            for (int other : taken) {
                if (mine[i].equals(p.tags[other][i])) {
                    n++;
                    break;
                }
            }
        }
        return n;
    }

    /**
     * settle_standby_moves: standbys stay on cheaper holders while their places restore;
     * returns the pending standby moves as (task, client), and updates {@code standbys}.
     */
    static List<int[]> settleStandbyMoves(Problem p, int[] active, List<List<Integer>> standbys,
            int[] target, Set<Integer> early) {
        List<int[]> moves = new ArrayList<>();
        for (int task = 0; task < p.numTasks; task++) {
            final int t = task;
            List<Integer> chosen = standbys.get(t);
            Set<Integer> held = null;
            List<Integer> displaced = new ArrayList<>();
            for (int i = 0; i < chosen.size(); i++) {
                int c = chosen.get(i);
                if (p.inCaught(t, c) || (!p.hasState(c, t) && p.genericCaughtUp[t])
                        || (c == target[t] && early.contains(t))) {
                    continue;
                }
                Set<Integer> taken = new HashSet<>(chosen);
                taken.add(active[t]);
                if (held == null) {
                    held = new TreeSet<>();
                    for (int x : p.prevStandby[t]) {
                        held.add(x);
                    }
                    for (int x : p.prevActive[t]) {
                        held.add(x);
                    }
                }
                long cost = p.cost(t, c);
                boolean costFresh = !held.contains(c);
                TreeSet<Integer> candidates = new TreeSet<>(held);
                for (int x : p.holders[t]) {
                    candidates.add(x);
                }
                List<Integer> spare = new ArrayList<>();
                for (int h : candidates) {
                    if (taken.contains(h)) {
                        continue;
                    }
                    long hc = p.cost(t, h);
                    boolean hf = !held.contains(h);
                    if (hc < cost || (hc == cost && !hf && costFresh)) {
                        spare.add(h);
                    }
                }
                if (p.tagged && !spare.isEmpty()) {
                    int[] copies = new int[chosen.size() + 1];
                    copies[0] = active[t];
                    for (int j = 0; j < chosen.size(); j++) {
                        copies[j + 1] = chosen.get(j);
                    }
                    int spread = p.tagSpread(copies);
                    List<Integer> kept = new ArrayList<>();
                    for (int h : spare) {
                        copies[i + 1] = h;
                        if (p.tagSpread(copies) >= spread) {
                            kept.add(h);
                        }
                    }
                    spare = kept;
                }
                if (spare.isEmpty()) {
                    continue;
                }
                final Set<Integer> places = held;
                int best = spare.stream().min(Comparator.<Integer, Boolean>comparing(h -> !places.contains(h))
                        .thenComparingLong(h -> p.cost(t, h))
                        .thenComparingInt(h -> h)).orElseThrow();
                chosen.set(i, best);
                displaced.add(c);
            }
            for (int c : displaced) {
                if (!chosen.contains(c)) {
                    moves.add(new int[] {t, c});
                }
            }
        }
        return moves;
    }

    /** warmup_priority: (the client held no copy, records to restore, task). */
    static Comparator<Integer> warmupPriority(Problem p, int[] target) {
        return Comparator.<Integer, Boolean>comparing(t -> p.fresh(target[t], t))
                .thenComparingLong(t -> p.cost(t, target[t]))
                .thenComparingInt(t -> t);
    }

    /** assign_warmup_replicas: (task, client) pairs, at most {@code budget}. */
    static List<int[]> assignWarmupReplicas(Problem p, List<Integer> moving, int[] target,
            List<List<Integer>> standbys, List<int[]> standbyMoves, int budget) {
        List<int[]> wanted = new ArrayList<>();
        for (int t : moving) {
            if (!standbys.get(t).contains(target[t])) {
                wanted.add(new int[] {t, target[t]});
            }
        }
        Comparator<int[]> order = Comparator.<int[]>comparingLong(m -> p.cost(m[0], m[1]))
                .thenComparingInt(m -> m[0]);
        wanted.sort(order);
        List<int[]> later = new ArrayList<>(standbyMoves);
        later.sort(order.thenComparingInt(m -> m[1]));
        List<int[]> warmups = new ArrayList<>();
        Set<Long> placed = new HashSet<>();
        List<int[]> all = new ArrayList<>(wanted);
        all.addAll(later);
        for (int[] m : all) {
            if (warmups.size() == budget) {
                break;
            }
            long key = ((long) m[0] << 32) | m[1];
            if (!placed.contains(key) && !standbys.get(m[0]).contains(m[1])) {
                warmups.add(m);
                placed.add(key);
            }
        }
        return warmups;
    }
}
