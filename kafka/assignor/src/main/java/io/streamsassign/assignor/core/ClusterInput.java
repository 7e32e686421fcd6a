package io.streamsassign.assignor.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One rebalance's input, as streams_assign.model.ClusterState holds it: the assignment configs,
 * the stateful and stateless tasks, the clients and, when known, the changelog end offset sums.
 *
 * <p>The constructor sorts tasks in TaskId order and clients in {@code java.util.UUID} order
 * (the order Kafka iterates them), so callers may pass them in any order.
 *
 * @param acceptableRecoveryLag {@code acceptable.recovery.lag}, records; {@code Long.MAX_VALUE}
 *                              is unbounded
 * @param maxWarmupReplicas     {@code max.warmup.replicas}
 * @param numStandbyReplicas    {@code num.standby.replicas}
 * @param tagKeys               {@code rack.aware.assignment.tags}
 * @param changelogEndOffsetSums per stateful task the changelog's end offset sum, or null
 */
public record ClusterInput(
        long acceptableRecoveryLag,
        int maxWarmupReplicas,
        int numStandbyReplicas,
        List<String> tagKeys,
        List<TaskKey> statefulTasks,
        List<TaskKey> statelessTasks,
        List<ClientInput> clients,
        Map<TaskKey, Long> changelogEndOffsetSums) {

    /** Java's {@code Long.MAX_VALUE}: an unknown changelog size or an unbounded lag. */
    public static final long LONG_MAX = Long.MAX_VALUE;

    public ClusterInput {
        statefulTasks = sorted(statefulTasks);
        statelessTasks = sorted(statelessTasks);
        // Each id parsed once (not once per comparison); a stable sort, as before.
        List<Map.Entry<UUID, ClientInput>> ordered = new ArrayList<>(clients.size());
        for (ClientInput c : clients) {
            ordered.add(Map.entry(UUID.fromString(c.id()), c));
        }
        ordered.sort(Map.Entry.comparingByKey());
        List<ClientInput> sortedClients = new ArrayList<>(ordered.size());
        for (Map.Entry<UUID, ClientInput> e : ordered) {
            sortedClients.add(e.getValue());
        }
        clients = List.copyOf(sortedClients);
        tagKeys = List.copyOf(tagKeys);
    }

    private static List<TaskKey> sorted(List<TaskKey> tasks) {
        List<TaskKey> copy = new ArrayList<>(tasks);
        copy.sort(null);
        return List.copyOf(copy);
    }

    /** Kafka's caught-up rule: -2, any lag when unbounded, or {@code 0 <= lag <= acceptable}. */
    public static boolean isCaughtUp(long lag, long acceptable) {
        return lag == -2 || acceptable == LONG_MAX || (lag >= 0 && lag <= acceptable);
    }
}
