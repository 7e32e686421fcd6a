package io.streamsassign.assignor.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeSet;

/** Standbys within their stateful-load bounds (even_out_standbys), then exchanged (exchange_standbys). */
final class StandbyBounds {
    private StandbyBounds() { }

    static void evenOutStandbys(Problem p, int[] active, List<List<Integer>> standbys, int[] counts,
            int[][] bounds) {
        Leveller leveller = new Leveller(p, active, standbys, counts, bounds);
        leveller.raiseToLowerBounds();
        leveller.lowerToUpperBounds();
    }

    private static final class Leveller {
        final Problem p;
        final int[] active;
        final List<List<Integer>> standbys;
        final int[] counts;
        final int[] lower;
        final int[] upper;
        final List<List<Integer>> heldBy = new ArrayList<>();
        final boolean tagged;

        Leveller(Problem p, int[] active, List<List<Integer>> standbys, int[] counts, int[][] bounds) {
            this.p = p;
            this.active = active;
            this.standbys = standbys;
            this.counts = counts;
            this.lower = bounds[0];
            this.upper = bounds[1];
            for (int c = 0; c < p.numClients; c++) {
                heldBy.add(new ArrayList<>());
            }
            for (int t = 0; t < standbys.size(); t++) {
                for (int c : standbys.get(t)) {
                    heldBy.get(c).add(t);
                }
            }
            tagged = p.tagged;
        }

        double load(int c) {
            return (double) counts[c] / p.capacity[c];
        }

        void raiseToLowerBounds() {
            PriorityQueue<Heaps.Entry> donors = Heaps.entryHeap();
            for (int c = 0; c < p.numClients; c++) {
                if (counts[c] > lower[c]) {
                    donors.add(new Heaps.Entry(-load(c), c));
                }
            }
            for (int receiver = 0; receiver < p.numClients; receiver++) {
                while (counts[receiver] < lower[receiver] && chainTo(receiver)) {
                    // each chain raises the receiver by one
                }
                if (counts[receiver] < lower[receiver]) {
                    trade(receiver, donors, true);
                }
                while (counts[receiver] < lower[receiver] && chain(receiver, true)) {
                    // each chain raises the receiver by one
                }
            }
        }

        void lowerToUpperBounds() {
            PriorityQueue<Heaps.Entry> receivers = Heaps.entryHeap();
            for (int c = 0; c < p.numClients; c++) {
                if (counts[c] < upper[c]) {
                    receivers.add(new Heaps.Entry(load(c), c));
                }
            }
            for (int donor = 0; donor < p.numClients; donor++) {
                if (counts[donor] > upper[donor]) {
                    trade(donor, receivers, false);
                }
                while (counts[donor] > upper[donor] && chain(donor, false)) {
                    // each chain lowers the donor by one
                }
            }
        }

        List<Integer> movable(int donor, int receiver) {
            List<Integer> out = new ArrayList<>();
            for (int t : heldBy.get(donor)) {
                if (active[t] != receiver && !standbys.get(t).contains(receiver)
                        && (!tagged || p.sharedTags(receiver, active[t]) <= p.sharedTags(donor, active[t]))) {
                    out.add(t);
                }
            }
            return out;
        }

        void move(int donor, int receiver, List<Integer> tasks) {
            int best = -1;
            long bestCost = 0;
            for (int t : tasks) {
                long cost = p.cost(t, receiver);
                if (best < 0 || cost < bestCost || (cost == bestCost && t < best)) {
                    best = t;
                    bestCost = cost;
                }
            }
            handOver(best, donor, receiver);
        }

        void handOver(int t, int donor, int receiver) {
            List<Integer> chosen = standbys.get(t);
            chosen.set(chosen.indexOf(donor), receiver);
            heldBy.get(donor).remove(Integer.valueOf(t));
            heldBy.get(receiver).add(t);
            counts[donor]--;
            counts[receiver]++;
        }

        boolean chainTo(int receiver) {
            Map<Integer, int[]> via = new HashMap<>();
            via.put(receiver, new int[] {-1, -1});
            ArrayDeque<Integer> queue = new ArrayDeque<>();
            queue.add(receiver);
            while (!queue.isEmpty()) {
                int x = queue.poll();
                for (int t : p.stateTasks[x]) {
                    if (active[t] == x || standbys.get(t).contains(x) || !p.caughtUp(x, t)) {
                        continue;
                    }
                    boolean xHeld = !p.fresh(x, t);
                    for (int h : standbys.get(t)) {
                        if (via.containsKey(h) || !(xHeld || p.fresh(h, t))
                                || (tagged && p.sharedTags(x, active[t]) > p.sharedTags(h, active[t]))) {
                            continue;
                        }
                        via.put(h, new int[] {t, x});
                        if (counts[h] > lower[h]) {
                            int z = h;
                            while (z != receiver) {
                                int[] step = via.get(z);
                                handOver(step[0], z, step[1]);
                                z = step[1];
                            }
                            return true;
                        }
                        queue.add(h);
                    }
                }
            }
            return false;
        }

        /** Whether the receiver may take the donor's standby of task t (no copy there, tags kept). */
        boolean mayTake(int t, int donor, int receiver) {
            int a = active[t];
            return a != receiver && !standbys.get(t).contains(receiver)
                    && (!tagged || p.sharedTags(receiver, a) <= p.sharedTags(donor, a));
        }

        /**
         * Moves the client one standby toward its bounds through a breadth-first chain of any
         * hand-overs mayTake allows, cheapest for the taker first (cost, task, client); only the
         * ends change counts. Raising: the client takes from one that takes from another ...
         * until one above its lower bound gives; lowering: the client gives to one that gives
         * ... until one below its upper bound takes.
         */
        boolean chain(int client, boolean raising) {
            int n = p.numClients;
            Map<Integer, int[]> via = new HashMap<>();
            via.put(client, new int[] {-1, -1});
            ArrayDeque<Integer> queue = new ArrayDeque<>();
            queue.add(client);
            while (!queue.isEmpty()) {
                int x = queue.poll();
                List<long[]> steps = new ArrayList<>();
                if (raising) { // x takes task t from holder y
                    for (int t = 0; t < standbys.size(); t++) {
                        for (int y : standbys.get(t)) {
                            if (!via.containsKey(y) && mayTake(t, y, x)) {
                                steps.add(new long[] {p.cost(t, x), t, y});
                            }
                        }
                    }
                } else { // x gives task t to client y
                    for (int t : heldBy.get(x)) {
                        for (int y = 0; y < n; y++) {
                            if (!via.containsKey(y) && mayTake(t, x, y)) {
                                steps.add(new long[] {p.cost(t, y), t, y});
                            }
                        }
                    }
                }
                steps.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0])
                        : a[1] != b[1] ? Long.compare(a[1], b[1]) : Long.compare(a[2], b[2]));
                for (long[] step : steps) {
                    int t = (int) step[1];
                    int y = (int) step[2];
                    if (via.containsKey(y)) {
                        continue;
                    }
                    via.put(y, new int[] {t, x});
                    if (raising ? counts[y] > lower[y] : counts[y] < upper[y]) {
                        int z = y;
                        while (z != client) {
                            int[] back = via.get(z);
                            if (raising) {
                                handOver(back[0], z, back[1]);
                            } else {
                                handOver(back[0], back[1], z);
                            }
                            z = back[1];
                        }
                        return true;
                    }
                    queue.add(y);
                }
            }
            return false;
        }

        void trade(int client, PriorityQueue<Heaps.Entry> heap, boolean taking) {
            double sign = taking ? -1 : 1;
            List<Heaps.Entry> skipped = new ArrayList<>();
            while (!heap.isEmpty()
                    && (taking ? counts[client] < lower[client] : counts[client] > upper[client])) {
                Heaps.Entry entry = heap.poll();
                int other = entry.client();
                if (other == client
                        || (taking ? counts[other] <= lower[other] : counts[other] >= upper[other])) {
                    continue;
                }
                if (entry.key() != sign * load(other)) {
                    heap.add(new Heaps.Entry(sign * load(other), other));
                    continue;
                }
                int donor = taking ? other : client;
                int receiver = taking ? client : other;
                List<Integer> tasks = movable(donor, receiver);
                if (tasks.isEmpty()) {
                    if (taking && heldBy.get(donor).isEmpty()) {
                        continue;
                    }
                    skipped.add(entry);
                    continue;
                }
                move(donor, receiver, tasks);
                heap.add(new Heaps.Entry(sign * load(other), other));
            }
            heap.addAll(skipped);
        }
    }

    /** exchange_standbys: Pareto steps (records, moved copies) within the bounds, without tags. */
    static void exchangeStandbys(Problem p, int[] active, List<List<Integer>> standbys, int[] counts,
            int[][] bounds) {
        int[] lower = bounds[0];
        int[] upper = bounds[1];
        List<TreeSet<Integer>> heldBy = new ArrayList<>();
        for (int c = 0; c < p.numClients; c++) {
            heldBy.add(new TreeSet<>());
        }
        for (int t = 0; t < standbys.size(); t++) {
            for (int c : standbys.get(t)) {
                heldBy.get(c).add(t);
            }
        }
        for (int t = 0; t < standbys.size(); t++) {
            List<Integer> chosen = standbys.get(t);
            for (int c : new ArrayList<>(chosen)) {
                boolean cHeld = !p.fresh(c, t);
                if (p.inCaught(t, c) && cHeld) {
                    continue;
                }
                long hereCost = p.cost(t, c);
                int hereFresh = cHeld ? 0 : 1;
                if (hereCost == 0 && hereFresh == 0) {
                    continue;
                }
                TreeSet<Integer> places = new TreeSet<>();
                for (int x : p.holders[t]) {
                    places.add(x);
                }
                for (int x : p.prevStandby[t]) {
                    places.add(x);
                }
                for (int x : p.prevActive[t]) {
                    places.add(x);
                }
                long bestR = 0;
                long bestM = 0;
                int bestH = -1;
                int bestU = -1;
                boolean found = false;
                for (int h : places) {
                    if (h == active[t] || chosen.contains(h)) {
                        continue;
                    }
                    long g0 = Math.subtractExact(p.cost(t, h), hereCost);
                    long g1 = (p.fresh(h, t) ? 1 : 0) - hereFresh;
                    if (g0 > 0 || g1 > 0 || (g0 == 0 && g1 == 0)) {
                        continue;
                    }
                    if (counts[h] < upper[h] && counts[c] > lower[c]) {
                        if (!found || g0 < bestR || (g0 == bestR && g1 < bestM)) {
                            found = true;
                            bestR = g0;
                            bestM = g1;
                            bestH = h;
                            bestU = -1;
                        }
                        continue;
                    }
                    for (int u : heldBy.get(h)) {
                        if (c == active[u] || standbys.get(u).contains(c)) {
                            continue;
                        }
                        int awayFresh = p.fresh(h, u) ? 1 : 0;
                        int backFresh = p.fresh(c, u) ? 1 : 0;
                        if (g1 == 0 && awayFresh == 0 && backFresh == 1) {
                            continue;
                        }
                        long s0 = Math.addExact(g0, Math.subtractExact(p.cost(u, c), p.cost(u, h)));
                        long s1 = g1 + backFresh - awayFresh;
                        boolean pareto = s0 <= 0 && s1 <= 0 && !(s0 == 0 && s1 == 0);
                        if (pareto && (!found || s0 < bestR || (s0 == bestR && s1 < bestM))) {
                            found = true;
                            bestR = s0;
                            bestM = s1;
                            bestH = h;
                            bestU = u;
                        }
                    }
                }
                if (found) {
                    chosen.set(chosen.indexOf(c), bestH);
                    heldBy.get(c).remove(t);
                    heldBy.get(bestH).add(t);
                    if (bestU < 0) {
                        counts[c]--;
                        counts[bestH]++;
                    } else {
                        List<Integer> other = standbys.get(bestU);
                        other.set(other.indexOf(bestH), c);
                        heldBy.get(bestH).remove(bestU);
                        heldBy.get(c).add(bestU);
                    }
                }
            }
        }
    }
}
