package io.streamsassign.assignor;

import io.streamsassign.assignor.core.ClientInput;
import io.streamsassign.assignor.core.ClusterInput;
import io.streamsassign.assignor.core.Decision;
import io.streamsassign.assignor.core.Documents;
import io.streamsassign.assignor.core.LagAwareSticky;
import io.streamsassign.assignor.core.TaskKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code lag_aware_sticky} for Kafka Streams' classic protocol (KIP-924):
 * {@code task.assignor.class=io.streamsassign.assignor.LagAwareStickyTaskAssignor}.
 *
 * <p>Maps the {@link ApplicationState} (processes, threads, previous actives and standbys,
 * {@code statefulTasksToLagSums()}, client tags, the assignment configs) into the core
 * ({@link LagAwareSticky}), and the decision back into a {@link TaskAssignment}: ACTIVE and
 * STANDBY tasks per process, warmup replicas as standbys, and when a task still has to move a
 * follow-up (probing) rebalance {@code probing.rebalance.interval.ms} from now. Every result
 * passes Kafka's {@link TaskAssignmentUtils#validateTaskAssignment} before it is returned; on an
 * internal failure (an exception, or an assignment that does not validate) the assignor logs
 * why and returns Kafka's own {@link StickyTaskAssignor} decision (the KIP-924 assignor Kafka
 * ships; its HighAvailabilityTaskAssignor is not reachable through the public API).
 *
 * <p>Settings (application configs): {@value #LOG_DECISIONS_CONFIG} ({@code true} /
 * {@code false}, default false) logs each input and decision as JSON at INFO.
 *
 * <p>Lags: Kafka gives every process a lag for every stateful task, the whole changelog (its
 * end offset sum) for a process without state. The largest finite lag of a task over the
 * processes stands for that end offset sum; a process has local state of a task when it ran it,
 * held it, reports -2 / -3, or a lag below that sum.
 */
public class LagAwareStickyTaskAssignor implements TaskAssignor {
    /** Logs each input and decision as JSON at INFO ({@code true} / {@code false}). */
    public static final String LOG_DECISIONS_CONFIG = "lag.aware.sticky.log.decisions";

    private static final Logger LOG = LoggerFactory.getLogger(LagAwareStickyTaskAssignor.class);

    private boolean logDecisions;

    @Override
    public void configure(Map<String, ?> configs) {
        Object value = configs.get(LOG_DECISIONS_CONFIG);
        if (value == null) {
            return;
        }
        String text = value.toString().trim().toLowerCase(java.util.Locale.ROOT);
        if (!text.equals("true") && !text.equals("false")) {
            throw new ConfigException(LOG_DECISIONS_CONFIG, value, "must be true or false");
        }
        logDecisions = text.equals("true");
    }

    @Override
    public TaskAssignment assign(ApplicationState state) {
        try {
            Map<TaskKey, TaskId> ids = new HashMap<>();
            ClusterInput input = clusterInput(state, ids);
            Decision decision = LagAwareSticky.assign(input);
            TaskAssignment result = taskAssignment(state, decision, ids);
            TaskAssignor.AssignmentError error = TaskAssignmentUtils.validateTaskAssignment(state, result);
            if (error != TaskAssignor.AssignmentError.NONE) {
                throw new IllegalStateException("the assignment does not validate: " + error);
            }
            LOG.info("lag_aware_sticky assigned {} tasks to {} processes; probing rebalance: {}",
                    state.allTasks().size(), input.clients().size(), decision.probingRebalanceNeeded());
            if (logDecisions) {
                LOG.info("lag_aware_sticky input: {}", Documents.clusterJson(input));
                LOG.info("lag_aware_sticky decision: {}", Documents.decisionJson(decision));
            }
            return result;
        } catch (RuntimeException e) {
            LOG.warn("lag_aware_sticky failed ({}); falling back to Kafka's StickyTaskAssignor", e, e);
            return new StickyTaskAssignor().assign(state);
        }
    }

    static TaskKey key(TaskId id) {
        return new TaskKey(id.topologyName(), id.subtopology(), id.partition());
    }

    private static List<TaskKey> keys(Set<TaskId> ids, Map<TaskKey, TaskId> known) {
        List<TaskKey> out = new ArrayList<>();
        for (TaskId id : ids) {
            TaskKey k = key(id);
            known.putIfAbsent(k, id);
            out.add(k);
        }
        return out;
    }

    /** The core's input from Kafka's application state (see the class comment for lags). */
    static ClusterInput clusterInput(ApplicationState state, Map<TaskKey, TaskId> ids) {
        AssignmentConfigs configs = state.assignmentConfigs();
        List<TaskKey> stateful = new ArrayList<>();
        List<TaskKey> stateless = new ArrayList<>();
        for (TaskInfo info : state.allTasks().values()) {
            TaskKey k = key(info.id());
            ids.put(k, info.id());
            (info.isStateful() ? stateful : stateless).add(k);
        }
        Map<ProcessId, KafkaStreamsState> processes = state.kafkaStreamsStates(true);
        Map<TaskId, Long> ends = new HashMap<>();
        for (KafkaStreamsState process : processes.values()) {
            for (Map.Entry<TaskId, Long> e : process.statefulTasksToLagSums().entrySet()) {
                long lag = e.getValue();
                if (lag >= 0 && lag < Long.MAX_VALUE) {
                    ends.merge(e.getKey(), lag, Math::max);
                }
            }
        }
        List<ClientInput> clients = new ArrayList<>();
        for (KafkaStreamsState process : processes.values()) {
            Set<TaskId> held = new HashSet<>(process.previousActiveTasks());
            held.addAll(process.previousStandbyTasks());
            Map<TaskKey, Long> lags = new LinkedHashMap<>();
            for (Map.Entry<TaskId, Long> e : process.statefulTasksToLagSums().entrySet()) {
                long lag = e.getValue();
                Long end = ends.get(e.getKey());
                // With state: it ran or held the task, reports -2 / -3, or lags less than the
                // whole changelog (the lag Kafka gives a process without state).
                if (held.contains(e.getKey()) || lag < 0 || (end != null && lag < end)) {
                    lags.put(key(e.getKey()), lag);
                }
            }
            clients.add(new ClientInput(
                    process.processId().id().toString(),
                    process.numProcessingThreads(),
                    keys(process.previousActiveTasks(), ids),
                    keys(process.previousStandbyTasks(), ids),
                    lags,
                    process.clientTags()));
        }
        Map<TaskKey, Long> endSums = new LinkedHashMap<>();
        for (Map.Entry<TaskId, Long> e : ends.entrySet()) {
            endSums.put(key(e.getKey()), e.getValue());
        }
        return new ClusterInput(
                configs.acceptableRecoveryLag(),
                configs.maxWarmupReplicas(),
                configs.numStandbyReplicas(),
                configs.rackAwareAssignmentTags(),
                stateful,
                stateless,
                clients,
                endSums);
    }

    private static TaskAssignment taskAssignment(ApplicationState state, Decision decision,
            Map<TaskKey, TaskId> ids) {
        long interval = state.assignmentConfigs().probingRebalanceIntervalMs();
        Instant followup = Instant.now().plusMillis(interval);
        List<KafkaStreamsAssignment> out = new ArrayList<>();
        for (ProcessId process : state.kafkaStreamsStates(false).keySet()) {
            Decision.ClientDecision mine = decision.clients().get(process.id().toString());
            Set<AssignedTask> tasks = new HashSet<>();
            for (TaskKey k : mine.active()) {
                tasks.add(new AssignedTask(ids.get(k), AssignedTask.Type.ACTIVE));
            }
            for (TaskKey k : mine.standby()) {
                tasks.add(new AssignedTask(ids.get(k), AssignedTask.Type.STANDBY));
            }
            KafkaStreamsAssignment one = KafkaStreamsAssignment.of(process, tasks);
            out.add(decision.probingRebalanceNeeded() ? one.withFollowupRebalance(followup) : one);
        }
        return new TaskAssignment(out);
    }
}
