package io.streamsassign.assignor.core;

import java.util.List;
import java.util.Map;

/**
 * One Kafka Streams process (client) at a rebalance: the input half of Kafka's
 * {@code ClientState}.
 *
 * @param id        the process id (a UUID string)
 * @param capacity  stream threads, at least 1
 * @param prevActive tasks it ran as active before
 * @param prevStandby tasks it held as standby before
 * @param taskLags  changelog lag in records per task with local state: -2 a running active
 *                  ({@code Task.LATEST_OFFSET}), -3 unknown; a task absent has no local state
 * @param tags      {@code client.tag.*} values (KIP-708)
 */
public record ClientInput(
        String id,
        int capacity,
        List<TaskKey> prevActive,
        List<TaskKey> prevStandby,
        Map<TaskKey, Long> taskLags,
        Map<String, String> tags) { }
