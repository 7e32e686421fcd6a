package io.streamsassign.assignor;

import io.streamsassign.assignor.core.Documents;
import io.streamsassign.assignor.core.GroupDecision;
import io.streamsassign.assignor.core.GroupInput;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignorException;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code lag_aware_sticky} as a broker-side streams-group assignor (KIP-1357, Kafka 4.4+):
 * list {@code io.streamsassign.assignor.LagAwareStickyGroupAssignor} in the broker's
 * {@code group.streams.assignors}; a group picks it by its name {@value #NAME}.
 *
 * <p>Per member: the group's processes form the classic rebalance input (a process per client,
 * its members as its threads, lags from the members' reported {@code taskOffsets} and
 * {@code taskEndOffsets}), the core decides per process, and each process's actives and
 * standbys are spread over its members, back first to the member that owned each task
 * ({@link GroupDecision}; docs/plugins.md says how the target is chosen). No warm-ups: a
 * pending move waits on its caught-up owner until a later group epoch bump.
 *
 * <p>Thread-safe: no state is kept between calls. An internal failure is thrown as Kafka's
 * {@link TaskAssignorException} with the reason (the coordinator keeps the group's current
 * assignment). At DEBUG ({@code io.streamsassign}) it logs each input and decision as JSON
 * (the streams-group document format). JVM system properties {@value #ACCEPTABLE_RECOVERY_LAG_PROPERTY} and
 * {@value #MAX_WARMUP_REPLICAS_PROPERTY} change the two settings group configs do not carry.
 */
public class LagAwareStickyGroupAssignor implements TaskAssignor {
    /** The assignor's name, for {@code streams.assignor.name}. */
    public static final String NAME = "lag_aware_sticky";
    /** Records behind within which a process counts as caught up (default 10000). */
    public static final String ACCEPTABLE_RECOVERY_LAG_PROPERTY = "lag.aware.sticky.acceptable.recovery.lag";
    /** Pending moves whose target restores in a standby slot meanwhile (default 2). */
    public static final String MAX_WARMUP_REPLICAS_PROPERTY = "lag.aware.sticky.max.warmup.replicas";

    private static final Logger LOG = LoggerFactory.getLogger(LagAwareStickyGroupAssignor.class);

    private final long acceptableRecoveryLag;
    private final int maxWarmupReplicas;

    public LagAwareStickyGroupAssignor() {
        acceptableRecoveryLag = setting(ACCEPTABLE_RECOVERY_LAG_PROPERTY, GroupDecision.ACCEPTABLE_RECOVERY_LAG, 0);
        maxWarmupReplicas = (int) setting(MAX_WARMUP_REPLICAS_PROPERTY, GroupDecision.MAX_WARMUP_REPLICAS, 1);
    }

    private static long setting(String property, long fallback, long least) {
        String text = System.getProperty(property);
        if (text == null) {
            return fallback;
        }
        try {
            long value = Long.parseLong(text.trim());
            if (value >= least) {
                return value;
            }
        } catch (NumberFormatException ignored) {
            // reported below with the setting's name
        }
        throw new IllegalArgumentException(property + " must be an integer >= " + least + ", got " + text);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(GroupSpec spec, TopologyDescriber topology) throws TaskAssignorException {
        try {
            GroupInput input = groupInput(spec, topology);
            GroupDecision.Result decided = GroupDecision.decide(input, acceptableRecoveryLag, maxWarmupReplicas);
            Map<String, MemberAssignment> members = decided.memberTaskSets(MemberAssignment::new);
            LOG.info("lag_aware_sticky assigned the tasks of {} subtopologies to {} members",
                    topology.subtopologies().size(), members.size());
            if (LOG.isDebugEnabled()) {
                LOG.debug("lag_aware_sticky group input: {}", Documents.groupJson(input));
                LOG.debug("lag_aware_sticky group decision: {}", Documents.groupDecisionJson(decided.memberTasks()));
            }
            return new GroupAssignment(members);
        } catch (TaskAssignorException e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.warn("lag_aware_sticky failed: {}", e.toString(), e);
            throw new TaskAssignorException("lag_aware_sticky failed: " + e, e);
        }
    }

    static GroupInput groupInput(GroupSpec spec, TopologyDescriber topology) {
        Map<String, GroupInput.Subtopology> subs = new LinkedHashMap<>();
        for (String sub : topology.subtopologies()) {
            subs.put(sub, new GroupInput.Subtopology(topology.maxNumInputPartitions(sub), topology.isStateful(sub)));
        }
        List<GroupInput.Member> members = new ArrayList<>(spec.memberIds().size());
        for (String memberId : spec.memberIds()) {
            MemberAssignmentMetadata meta = spec.memberMetadata(memberId);
            MemberAssignmentState state = spec.memberAssignmentState(memberId);
            members.add(new GroupInput.Member(
                    memberId,
                    meta.processId(),
                    meta.clientTags(),
                    state.activeTasks(),
                    state.standbyTasks(),
                    state.warmupTasks(),
                    state.taskOffsets(),
                    state.taskEndOffsets()));
        }
        return new GroupInput(
                spec.configs().numStandbyReplicas(), spec.configs().rackAwareAssignmentTags(), subs, members);
    }
}
