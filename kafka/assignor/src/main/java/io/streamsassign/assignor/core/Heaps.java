package io.streamsassign.assignor.core;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.IntPredicate;

/** The heaps of the steps, ordered as Python's tuples are (a double compared with &lt;, then ints). */
final class Heaps {
    private Heaps() { }

    /** A heap entry (key, client). */
    record Entry(double key, int client) { }

    static int compare(double a, double b) {
        return a < b ? -1 : a > b ? 1 : 0;
    }

    static PriorityQueue<Entry> entryHeap() {
        return new PriorityQueue<>((a, b) -> {
            int byKey = compare(a.key, b.key);
            return byKey != 0 ? byKey : Integer.compare(a.client, b.client);
        });
    }

    /**
     * Clients by {@code (count + 1) / capacity}, then index, with lazy deletion
     * (problem.LeastLoaded): an entry whose key no longer matches its client's count is stale.
     */
    static final class LeastLoaded {
        final int[] counts;
        final int[] capacity;
        final int[] limit;
        final PriorityQueue<Entry> heap = entryHeap();

        LeastLoaded(int[] counts, int[] capacity, int[] limit) {
            this.counts = counts;
            this.capacity = capacity;
            this.limit = limit;
            for (int c = 0; c < counts.length; c++) {
                if (counts[c] < limit[c]) {
                    heap.add(new Entry((double) (counts[c] + 1) / capacity[c], c));
                }
            }
        }

        /** The least-loaded client with room not excluded (it stays in the heap), or -1. */
        int pop(IntPredicate exclude) {
            List<Entry> aside = new ArrayList<>();
            int found = -1;
            while (!heap.isEmpty()) {
                Entry top = heap.peek();
                int c = top.client;
                if (counts[c] >= limit[c] || top.key != (double) (counts[c] + 1) / capacity[c]) {
                    heap.poll();
                    continue;
                }
                if (exclude.test(c)) {
                    aside.add(heap.poll());
                    continue;
                }
                found = c;
                break;
            }
            heap.addAll(aside);
            return found;
        }

        void touch(int client) {
            if (counts[client] < limit[client]) {
                heap.add(new Entry((double) (counts[client] + 1) / capacity[client], client));
            }
        }
    }
}
