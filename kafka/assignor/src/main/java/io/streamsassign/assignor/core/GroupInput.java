package io.streamsassign.assignor.core;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a streams group's coordinator hands its assignor (KIP-1071 / KIP-1357), without Kafka's
 * classes: the topology, the group configs and the members.
 *
 * @param numStandbyReplicas {@code num.standby.replicas} of the group
 * @param tagKeys            {@code rack.aware.assignment.tags}
 * @param topology           subtopology id -> (partitions, stateful)
 * @param members            the members, in any order
 */
public record GroupInput(
        int numStandbyReplicas,
        List<String> tagKeys,
        Map<String, Subtopology> topology,
        List<Member> members) {

    /** A subtopology: its task count ({@code maxNumInputPartitions}) and whether it has state. */
    public record Subtopology(int partitions, boolean stateful) { }

    /**
     * A member (one stream thread): its process, client tags, current tasks and the changelog
     * offset sums it last reported (absent when it never reported).
     */
    public record Member(
            String memberId,
            String processId,
            Map<String, String> clientTags,
            Map<String, Set<Integer>> activeTasks,
            Map<String, Set<Integer>> standbyTasks,
            Map<String, Set<Integer>> warmupTasks,
            Map<String, Map<Integer, Long>> taskOffsets,
            Map<String, Map<Integer, Long>> taskEndOffsets) { }
}
