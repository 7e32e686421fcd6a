package io.streamsassign.assignor.core;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The decision of {@code streams_assign.assignors.lag_aware_sticky.LagAwareStickyTaskAssignor},
 * step for step (the Python module is the reference and documents the algorithm; the
 * differential in {@code tests/plugins/} checks both decide the same on every input):
 * balance bounds, target actives, immediate actives (KIP-441's caught-up rule), standbys,
 * warmups, stateless actives.
 *
 * <p>Stateless, thread-safe: every call works on its own data. Arithmetic is exact:
 * {@code ArithmeticException} when a sum of restore costs would overflow a {@code long}
 * (records near {@code Long.MAX_VALUE}); the adapters fall back to Kafka's assignor then.
 */
public final class LagAwareSticky {
    /** The assignor's name, as in streams_assign's registry. */
    public static final String NAME = "lag_aware_sticky";

    private LagAwareSticky() { }

    /** Decides actives, standbys (warmups included) and warmups for one rebalance. */
    public static Decision assign(ClusterInput cluster) {
        Problem p = new Problem(cluster);
        int[] target = Actives.assignTargetStatefulActives(p);
        List<Integer> moving = new ArrayList<>();
        int[] active = Actives.assignImmediateStatefulActives(p, target, moving);
        int budget = cluster.maxWarmupReplicas();
        List<Integer> ranked = new ArrayList<>(moving);
        ranked.sort(Standbys.warmupPriority(p, target));
        Set<Integer> early = new HashSet<>(ranked.subList(0, Math.min(budget, ranked.size())));
        List<List<Integer>> standbys = Standbys.assignStandbyTasks(p, active, target, early);
        List<int[]> standbyMoves = Standbys.settleStandbyMoves(p, active, standbys, target, early);
        int swapped = 0;
        for (int t : early) {
            if (standbys.get(t).contains(target[t])) {
                swapped++;
            }
        }
        List<int[]> warmups = Standbys.assignWarmupReplicas(
                p, moving, target, standbys, standbyMoves, budget - swapped);
        int n = p.numClients;
        List<List<TaskKey>> act = new ArrayList<>();
        List<List<TaskKey>> stby = new ArrayList<>();
        List<List<TaskKey>> warm = new ArrayList<>();
        for (int c = 0; c < n; c++) {
            act.add(new ArrayList<>());
            stby.add(new ArrayList<>());
            warm.add(new ArrayList<>());
        }
        for (int t = 0; t < p.numTasks; t++) {
            act.get(active[t]).add(p.tasks.get(t));
        }
        for (int t = 0; t < p.numTasks; t++) {
            for (int c : standbys.get(t)) {
                stby.get(c).add(p.tasks.get(t));
            }
        }
        for (int[] w : warmups) {
            stby.get(w[1]).add(p.tasks.get(w[0]));
            warm.get(w[1]).add(p.tasks.get(w[0]));
        }
        int[] activeCounts = new int[n];
        for (int c = 0; c < n; c++) {
            activeCounts[c] = act.get(c).size();
        }
        List<List<TaskKey>> stateless = Stateless.assignStatelessTasks(cluster, activeCounts);
        Map<String, Decision.ClientDecision> decided = new LinkedHashMap<>();
        for (int c = 0; c < n; c++) {
            List<TaskKey> a = act.get(c);
            a.addAll(stateless.get(c));
            a.sort(null);
            stby.get(c).sort(null);
            warm.get(c).sort(null);
            decided.put(cluster.clients().get(c).id(),
                    new Decision.ClientDecision(List.copyOf(a), List.copyOf(stby.get(c)), List.copyOf(warm.get(c))));
        }
        return new Decision(decided, !moving.isEmpty() || !standbyMoves.isEmpty());
    }
}
