package streamsassign.app;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;

/**
 * Writes what the instance restores into its stores as JSON lines (Kafka Streams'
 * {@link StateRestoreListener}, set with {@code KafkaStreams#setGlobalStateRestoreListener}) and,
 * separately, what its standby tasks load ({@link StandbyUpdateListener}, set with
 * {@code KafkaStreams#setStandbyUpdateListener}).
 *
 * <p>Line kinds: {@code restore} once per restore of an active task's store partition, when it
 * ends ({@code onRestoreEnd}, {@code "ended":"end"}) or is suspended because the task moved away
 * ({@code onRestoreSuspended}, {@code "ended":"suspended"}): {"kind", "time_ms", "task", "store",
 * "changelog", "partition", "records", "start_offset", "end_offset", "ms", "ended"}, where
 * {@code start_offset} / {@code end_offset} are the offsets given to {@code onRestoreStart} and
 * {@code ms} the time since that call. {@code standby} once per batch a standby task loads
 * ({@code onBatchLoaded}): {"kind", "time_ms", "task", "store", "changelog", "partition",
 * "records", "batch_end_offset", "end_offset"}. The task of a restore is the store's
 * sub-topology (from {@code Topology#describe()}) and the changelog partition.
 */
final class RestoreLog implements StateRestoreListener, StandbyUpdateListener, AutoCloseable {

    private final PrintWriter writer;
    private final Map<String, Integer> subtopologyOfStore = new HashMap<>();
    private final Map<TopicPartition, long[]> started = new HashMap<>();

    RestoreLog(Path out, TopologyDescription topology) throws IOException {
        this.writer = new PrintWriter(new OutputStreamWriter(
            new FileOutputStream(out.toFile(), true), StandardCharsets.UTF_8), true);
        for (TopologyDescription.Subtopology sub : topology.subtopologies()) {
            for (TopologyDescription.Node node : sub.nodes()) {
                if (node instanceof TopologyDescription.Processor) {
                    for (String store : ((TopologyDescription.Processor) node).stores()) {
                        subtopologyOfStore.put(store, sub.id());
                    }
                }
            }
        }
    }

    private String task(String store, int partition) {
        Integer sub = subtopologyOfStore.get(store);
        return sub == null ? null : sub + "_" + partition;
    }

    private static String quoted(String text) {
        return text == null ? "null" : "\"" + text + "\"";
    }

    private String common(String kind, String task, TopicPartition changelog, String store) {
        return "{\"kind\":\"" + kind + "\",\"time_ms\":" + System.currentTimeMillis()
            + ",\"task\":" + quoted(task) + ",\"store\":" + quoted(store) + ",\"changelog\":"
            + quoted(changelog.topic()) + ",\"partition\":" + changelog.partition();
    }

    @Override
    public synchronized void onRestoreStart(
            TopicPartition changelog, String store, long startingOffset, long endingOffset) {
        started.put(changelog, new long[] {startingOffset, endingOffset, System.nanoTime()});
    }

    @Override
    public void onBatchRestored(
            TopicPartition changelog, String store, long batchEndOffset, long numRestored) {
    }

    @Override
    public void onRestoreEnd(TopicPartition changelog, String store, long totalRestored) {
        restored(changelog, store, totalRestored, "end");
    }

    @Override
    public void onRestoreSuspended(TopicPartition changelog, String store, long totalRestored) {
        restored(changelog, store, totalRestored, "suspended");
    }

    private synchronized void restored(
            TopicPartition changelog, String store, long total, String ended) {
        long[] start = started.remove(changelog);
        String offsets = start == null
            ? ",\"start_offset\":null,\"end_offset\":null,\"ms\":null"
            : ",\"start_offset\":" + start[0] + ",\"end_offset\":" + start[1] + ",\"ms\":"
                + (System.nanoTime() - start[2]) / 1_000_000;
        writer.println(common("restore", task(store, changelog.partition()), changelog, store)
            + ",\"records\":" + total + offsets + ",\"ended\":\"" + ended + "\"}");
    }

    @Override
    public void onUpdateStart(TopicPartition changelog, String store, long startingOffset) {
    }

    @Override
    public synchronized void onBatchLoaded(TopicPartition changelog, String store, TaskId task,
            long batchEndOffset, long batchSize, long currentEndOffset) {
        writer.println(common("standby", task.toString(), changelog, store) + ",\"records\":"
            + batchSize + ",\"batch_end_offset\":" + batchEndOffset + ",\"end_offset\":"
            + currentEndOffset + "}");
    }

    @Override
    public void onUpdateSuspended(TopicPartition changelog, String store, long storeOffset,
            long currentEndOffset, SuspendReason reason) {
    }

    @Override
    public synchronized void close() {
        writer.close();
    }
}
