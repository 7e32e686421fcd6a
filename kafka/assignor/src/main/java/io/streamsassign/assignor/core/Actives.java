package io.streamsassign.assignor.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/** Stateful actives: where each task should run (target) and where it runs now (immediate). */
final class Actives {
    private Actives() { }

    /** assign_target_stateful_actives: per stateful task its target client. */
    static int[] assignTargetStatefulActives(Problem p) {
        int[][] bounds = Problem.balancedCountBounds(p.numTasks, p.capacity);
        int[] lower = bounds[0];
        int[] upper = bounds[1];
        int[] groups = Problem.subtopologyIndices(p.tasks);
        int[] counts = new int[p.numClients];
        int[] target = keepCaughtUpOwners(p, upper, groups, counts);
        placeTheOthers(p, target, counts, upper);
        raiseToLowerBounds(p, target, counts, lower);
        SubtopologySpread.spread(groups, target, counts, lower, upper, new SubtopologySpread.Cost() {
            @Override
            public long restore(int t, int c) {
                return p.cost(t, c);
            }

            @Override
            public long moved(int t, int c) {
                return p.wasActive(t, c) ? 0 : 1;
            }
        }, t -> p.holders[t]);
        return target;
    }

    private static int[] keepCaughtUpOwners(Problem p, int[] upper, int[] groups, int[] counts) {
        int[] target = new int[p.numTasks];
        Arrays.fill(target, -1);
        List<List<Integer>> kept = new ArrayList<>();
        for (int c = 0; c < p.numClients; c++) {
            kept.add(new ArrayList<>());
        }
        for (int t = 0; t < p.numTasks; t++) {
            int[] owners = p.prevActive[t];
            if (owners.length == 0) {
                continue;
            }
            int owner = owners[0];
            if (owners.length > 1) {
                for (int c : owners) {
                    long key = p.cost(t, c);
                    long best = p.cost(t, owner);
                    if (key < best || (key == best && c < owner)) {
                        owner = c;
                    }
                }
            }
            if (p.caughtUp(owner, t) || p.caughtCount[t] == 0) {
                kept.get(owner).add(t);
            }
        }
        int[] room = new int[p.numClients];
        for (int c = 0; c < p.numClients; c++) {
            room[c] = Math.max(0, upper[c] - kept.get(c).size());
        }
        Map<Integer, Boolean> hasAlternative = new HashMap<>();
        Map<Integer, Boolean> hasRoom = new HashMap<>();
        for (int c = 0; c < p.numClients; c++) {
            if (kept.get(c).size() <= upper[c]) {
                continue;
            }
            for (int t : kept.get(c)) {
                hasAlternative.put(t, p.caughtCount[t] > 1 || p.genericCaughtUp[t]);
                boolean any = p.genericCaughtUp[t];
                for (int i = 0; !any && i < p.holders[t].length; i++) {
                    any = p.holderCaught[t][i] && room[p.holders[t][i]] > 0;
                }
                hasRoom.put(t, any);
            }
        }
        for (int c = 0; c < p.numClients; c++) {
            List<Integer> tasks = kept.get(c);
            if (tasks.size() > upper[c]) {
                tasks = keepWithin(tasks, upper[c], groups, hasRoom, hasAlternative, p.noStateLag);
            }
            for (int t : tasks) {
                target[t] = c;
            }
            counts[c] = tasks.size();
        }
        return target;
    }

    private static List<Integer> keepWithin(List<Integer> tasks, int limit, int[] groups,
            Map<Integer, Boolean> hasRoom, Map<Integer, Boolean> hasAlternative, long[] noState) {
        Map<Integer, Integer> rank = new HashMap<>();
        Map<Integer, Integer> seen = new HashMap<>();
        List<Integer> byChangelog = new ArrayList<>(tasks);
        byChangelog.sort(Comparator.<Integer>comparingLong(t -> -noState[t]).thenComparingInt(t -> t));
        for (int t : byChangelog) {
            if (hasAlternative.get(t)) {
                int r = seen.getOrDefault(groups[t], 0);
                rank.put(t, r);
                seen.put(groups[t], r + 1);
            }
        }
        List<Integer> ordered = new ArrayList<>(tasks);
        ordered.sort(Comparator.<Integer, Boolean>comparing(hasRoom::get)
                .thenComparing(hasAlternative::get)
                .thenComparingInt(t -> rank.getOrDefault(t, 0))
                .thenComparingLong(t -> -noState[t])
                .thenComparingInt(t -> t));
        return ordered.subList(0, limit);
    }

    private static void placeTheOthers(Problem p, int[] target, int[] counts, int[] upper) {
        Heaps.LeastLoaded heap = new Heaps.LeastLoaded(counts, p.capacity, upper);
        List<Integer> pending = new ArrayList<>();
        for (int t = 0; t < target.length; t++) {
            if (target[t] < 0) {
                pending.add(t);
            }
        }
        pending.sort(Comparator.<Integer, Boolean>comparing(t -> p.genericCaughtUp[t])
                .thenComparingInt(t -> p.caughtCount[t])
                .thenComparingInt(t -> t));
        for (int t : pending) {
            int best = -1;
            long bestCost = 0;
            boolean bestGeneric = false;
            double bestLoad = 0;
            int[] holders = p.holders[t];
            for (int i = 0; i < holders.length; i++) {
                int c = holders[i];
                if (counts[c] >= upper[c]) {
                    continue;
                }
                long cost = p.holderCost[t][i];
                double load = (double) (counts[c] + 1) / p.capacity[c];
                if (best < 0 || cost < bestCost
                        || (cost == bestCost && (load < bestLoad || (load == bestLoad && c < best)))) {
                    best = c;
                    bestCost = cost;
                    bestLoad = load;
                }
            }
            int generic = heap.pop(c -> p.hasState(c, t));
            if (generic >= 0) {
                long cost = p.baseCost[t];
                double load = (double) (counts[generic] + 1) / p.capacity[generic];
                // key (cost, True, load, c) against the best holder's (cost, False, ...)
                if (best < 0 || cost < bestCost || (cost == bestCost && bestGeneric
                        && (load < bestLoad || (load == bestLoad && generic < best)))) {
                    best = generic;
                }
            }
            if (best < 0) {
                double least = 0;
                for (int c = 0; c < p.numClients; c++) {
                    double load = (double) counts[c] / p.capacity[c];
                    if (best < 0 || load < least) {
                        best = c;
                        least = load;
                    }
                }
            }
            target[t] = best;
            counts[best]++;
            heap.touch(best);
        }
    }

    private static void raiseToLowerBounds(Problem p, int[] target, int[] counts, int[] lower) {
        List<Integer> deficient = new ArrayList<>();
        for (int c = 0; c < p.numClients; c++) {
            if (counts[c] < lower[c]) {
                deficient.add(c);
            }
        }
        if (deficient.isEmpty()) {
            return;
        }
        List<List<Integer>> owned = new ArrayList<>();
        for (int c = 0; c < p.numClients; c++) {
            owned.add(new ArrayList<>());
        }
        for (int t = 0; t < target.length; t++) {
            owned.get(target[t]).add(t);
        }
        PriorityQueue<Heaps.Entry> donors = Heaps.entryHeap();
        for (int c = 0; c < p.numClients; c++) {
            if (counts[c] > lower[c]) {
                donors.add(new Heaps.Entry((double) (-counts[c]) / p.capacity[c], c));
            }
        }
        for (int d : deficient) {
            List<Integer> candidates = new ArrayList<>();
            for (int t : p.stateTasks[d]) {
                if (p.caughtUp(d, t) && target[t] != d) {
                    candidates.add(t);
                }
            }
            while (counts[d] < lower[d] && !candidates.isEmpty()) {
                int chosen = -1;
                double chosenLoad = 0;
                boolean chosenMoved = false;
                for (int t : candidates) {
                    int o = target[t];
                    if (counts[o] <= lower[o]) {
                        continue;
                    }
                    double load = (double) counts[o] / p.capacity[o];
                    boolean moved = !p.wasActive(t, o);
                    // max by (load, moved, -t)
                    if (chosen < 0 || load > chosenLoad || (load == chosenLoad
                            && ((moved && !chosenMoved) || (moved == chosenMoved && t < chosen)))) {
                        chosen = t;
                        chosenLoad = load;
                        chosenMoved = moved;
                    }
                }
                if (chosen < 0) {
                    break;
                }
                candidates.remove(Integer.valueOf(chosen));
                moveTarget(chosen, d, target, counts, owned);
            }
            while (counts[d] < lower[d]) {
                while (!donors.isEmpty()) {
                    Heaps.Entry top = donors.peek();
                    int donor = top.client();
                    if (counts[donor] <= lower[donor]) {
                        donors.poll();
                        continue;
                    }
                    double current = (double) (-counts[donor]) / p.capacity[donor];
                    if (top.key() != current) {
                        donors.poll();
                        donors.add(new Heaps.Entry(current, donor));
                        continue;
                    }
                    break;
                }
                if (donors.isEmpty()) {
                    return;
                }
                int donor = donors.peek().client();
                int chosen = -1;
                long chosenCost = 0;
                boolean chosenRuns = false;
                for (int t : owned.get(donor)) {
                    long cost = p.cost(t, d);
                    boolean runs = p.wasActive(t, donor);
                    // min by (cost, runs, -t)
                    if (chosen < 0 || cost < chosenCost || (cost == chosenCost
                            && ((!runs && chosenRuns) || (runs == chosenRuns && t > chosen)))) {
                        chosen = t;
                        chosenCost = cost;
                        chosenRuns = runs;
                    }
                }
                moveTarget(chosen, d, target, counts, owned);
            }
        }
    }

    private static void moveTarget(int task, int client, int[] target, int[] counts,
            List<List<Integer>> owned) {
        owned.get(target[task]).remove(Integer.valueOf(task));
        counts[target[task]]--;
        owned.get(client).add(task);
        counts[client]++;
        target[task] = client;
    }

    /**
     * assign_immediate_stateful_actives: per task its client now; {@code moving} receives the
     * tasks whose target is not where they run now (ascending).
     */
    static int[] assignImmediateStatefulActives(Problem p, int[] target, List<Integer> moving) {
        int[] active = target.clone();
        for (int t = 0; t < target.length; t++) {
            int c = target[t];
            if (p.caughtUp(c, t)) {
                continue;
            }
            List<Integer> caught = new ArrayList<>();
            for (int h : p.holders[t]) {
                if (p.caughtUp(h, t)) {
                    caught.add(h);
                }
            }
            List<Integer> pool;
            if (!caught.isEmpty()) {
                List<Integer> owners = new ArrayList<>();
                for (int h : p.prevActive[t]) {
                    if (caught.contains(h)) {
                        owners.add(h);
                    }
                }
                pool = owners.isEmpty() ? caught : owners;
            } else {
                pool = new ArrayList<>();
                pool.add(c);
                for (int h : p.holders[t]) {
                    pool.add(h);
                }
            }
            final int tt = t;
            int best = pool.stream().min(Comparator.<Integer>comparingLong(h -> p.cost(tt, h))
                    .thenComparing(h -> !p.wasActive(tt, h))
                    .thenComparing(h -> h != c)
                    .thenComparingInt(h -> h)).orElseThrow();
            if (best != c) {
                active[t] = best;
                moving.add(t);
            }
        }
        return active;
    }
}
