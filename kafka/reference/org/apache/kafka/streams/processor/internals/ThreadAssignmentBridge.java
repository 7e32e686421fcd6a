package org.apache.kafka.streams.processor.internals;

import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;

/**
 * streams-assign reference harness: a door to Kafka's package-private
 * {@code StreamsPartitionAssignor.assignTasksToThreads}.
 *
 * <p>This class lives in Kafka's package {@code org.apache.kafka.streams.processor.internals}
 * (on the class path, beside Kafka's jar) only so that it may call that static method; it
 * adds no logic of its own.
 */
public final class ThreadAssignmentBridge {
    private ThreadAssignmentBridge() {
    }

    /** Kafka's own thread assignment of one client's tasks (one of its three calls per client). */
    public static Map<String, List<TaskId>> assignTasksToThreads(final Collection<TaskId> tasks,
                                                                 final boolean stateful,
                                                                 final SortedSet<String> consumers,
                                                                 final ClientState state,
                                                                 final Map<String, Integer> threadLoad) {
        return StreamsPartitionAssignor.assignTasksToThreads(tasks, stateful, consumers, state, threadLoad);
    }
}
