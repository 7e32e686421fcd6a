package io.streamsassign.assignor.core;

/**
 * A task id in Kafka Streams' terms ({@code 1_3}, or {@code name__1_3} for a named topology),
 * ordered as Kafka's {@code TaskId.compareTo}: topology name, subtopology, partition.
 * The adapters map Kafka's own {@code TaskId} onto it; the core needs no Kafka class.
 */
public record TaskKey(String topologyName, int subtopology, int partition)
        implements Comparable<TaskKey> {

    /** Parses {@code <sub>_<part>} or {@code <name>__<sub>_<part>}. */
    public static TaskKey parse(String text) {
        String name = null;
        String rest = text;
        int sep = text.indexOf("__");
        if (sep >= 0) {
            name = text.substring(0, sep);
            rest = text.substring(sep + 2);
        }
        int under = rest.indexOf('_');
        if (under < 0) {
            throw new IllegalArgumentException("malformed task id " + text);
        }
        return new TaskKey(
                name == null || name.isEmpty() ? null : name,
                Integer.parseInt(rest.substring(0, under)),
                Integer.parseInt(rest.substring(under + 1)));
    }

    @Override
    public int compareTo(TaskKey other) {
        String mine = topologyName == null ? "" : topologyName;
        String theirs = other.topologyName == null ? "" : other.topologyName;
        int byName = mine.compareTo(theirs);
        if (byName != 0) {
            return byName;
        }
        if (subtopology != other.subtopology) {
            return Integer.compare(subtopology, other.subtopology);
        }
        return Integer.compare(partition, other.partition);
    }

    /** Equal when topology name, subtopology and partition are (the record's rule, ints first). */
    @Override
    public boolean equals(Object other) {
        return other instanceof TaskKey k && subtopology == k.subtopology && partition == k.partition
                && java.util.Objects.equals(topologyName, k.topologyName);
    }

    /**
     * A hash that spreads (subtopology, partition) over every bit: the record's own
     * {@code 31 * subtopology + partition} makes ({@code s}, {@code p}) and ({@code s + 1},
     * {@code p - 31}) collide, which slows the hash look-ups of large topologies. The core only
     * looks task ids up by hash, never iterates a hashed collection of them, so no decision
     * depends on it.
     */
    @Override
    public int hashCode() {
        int h = (subtopology * 0x9E3779B1 + partition) * 0x85EBCA6B;
        h ^= h >>> 15;
        return topologyName == null ? h : h ^ 31 * topologyName.hashCode();
    }

    /** The subtopology key: (topology name, subtopology). */
    public SubKey subtopologyKey() {
        return new SubKey(topologyName, subtopology);
    }

    @Override
    public String toString() {
        String base = subtopology + "_" + partition;
        return topologyName == null ? base : topologyName + "__" + base;
    }

    /** A subtopology of a (possibly named) topology. */
    public record SubKey(String topologyName, int subtopology) { }
}
