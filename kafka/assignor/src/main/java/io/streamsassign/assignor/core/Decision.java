package io.streamsassign.assignor.core;

import java.util.List;
import java.util.Map;

/**
 * The assignor's decision: per process id its active, standby (warmups included) and warmup
 * tasks, each in TaskId order, and whether a probing rebalance must follow.
 */
public record Decision(Map<String, ClientDecision> clients, boolean probingRebalanceNeeded) {

    /** One client's tasks; {@code standby} includes the warmups. */
    public record ClientDecision(List<TaskKey> active, List<TaskKey> standby, List<TaskKey> warmup) { }
}
