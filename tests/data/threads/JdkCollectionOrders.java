// Ground truth for streams_assign.java (hash_order, priority_queue): tests/java/test_hash_order.py.
//
// Prints, for 48 pseudo-random task sets (fixed seed), what OpenJDK's collections do with
// TaskId-like keys (hashCode = Objects.hash(subtopology, partition, topologyName)):
//   map_order                 HashMap filled in sorted order (as Collectors.toMap over a TreeSet)
//   map_order_after_removal   the same map after removing "removed"
//   heapified                 new PriorityQueue<>(hashSetOfTheTasks) in iterator (array) order
//   heap_after_ops            that queue after the "ops" (remove(Object) "-<task>", or "poll")
// Regenerate: javac JdkCollectionOrders.java && java JdkCollectionOrders > jdk_collection_orders.json
// (JDK 17 produced the checked-in file; HashMap/PriorityQueue layouts are unchanged since JDK 8.)
import java.util.*;

public class JdkCollectionOrders {
    static final class Tid implements Comparable<Tid> {
        final int sub, part; final String name;
        Tid(int s, int p, String n) { sub = s; part = p; name = n; }
        @Override public int hashCode() { return Objects.hash(sub, part, name); }
        @Override public boolean equals(Object o) {
            if (!(o instanceof Tid)) return false;
            Tid t = (Tid) o; return sub == t.sub && part == t.part && Objects.equals(name, t.name);
        }
        @Override public int compareTo(Tid o) {
            if (name != null && o.name != null) { int c = name.compareTo(o.name); if (c != 0) return c; }
            int c = Integer.compare(sub, o.sub); if (c != 0) return c; return Integer.compare(part, o.part);
        }
        @Override public String toString() { return (name == null ? "" : name + "__") + sub + "_" + part; }
    }
    static String list(Iterable<Tid> it) {
        StringBuilder b = new StringBuilder("["); boolean first = true;
        for (Tid t : it) { if (!first) b.append(","); first = false; b.append('"').append(t).append('"'); }
        return b.append("]").toString();
    }
    public static void main(String[] args) {
        Random r = new Random(20241025L);
        StringBuilder out = new StringBuilder("[\n");
        int cases = 0;
        for (int c = 0; c < 48; c++) {
            int kind = c % 4;
            TreeSet<Tid> tasks = new TreeSet<>();
            int n = 1 + r.nextInt(c < 24 ? 30 : 150);
            int subs = 1 + r.nextInt(kind == 3 ? 60 : 8);
            int parts = 1 + r.nextInt(90);
            String name = (kind == 2) ? ("topo" + r.nextInt(3)) : null;
            while (tasks.size() < Math.min(n, subs * parts)) tasks.add(new Tid(r.nextInt(subs), r.nextInt(parts), name));
            if (c == 0) { tasks.clear(); for (int s = 0; s < 11; s++) tasks.add(new Tid(s, s, null)); }
            List<Tid> inserted = new ArrayList<>(tasks);
            // HashMap filled in sorted order (Collectors.toMap / toSet over a TreeSet), some removed
            HashMap<Tid, Integer> map = new HashMap<>();
            for (Tid t : inserted) map.put(t, 1);
            List<Tid> removed = new ArrayList<>();
            for (Tid t : inserted) if (r.nextInt(3) == 0) removed.add(t);
            List<Tid> beforeRemoval = new ArrayList<>(map.keySet());
            for (Tid t : removed) map.remove(t);
            // PriorityQueue from a HashSet, then remove(Object) some and poll some
            HashSet<Tid> set = new HashSet<>(); for (Tid t : inserted) set.add(t);
            PriorityQueue<Tid> pq = new PriorityQueue<>(set);
            List<Tid> heapified = new ArrayList<>(); for (Tid t : pq) heapified.add(t);
            List<String> ops = new ArrayList<>();
            for (int i = 0; i < inserted.size() / 2; i++) {
                if (r.nextBoolean()) { Tid t = inserted.get(r.nextInt(inserted.size())); if (pq.remove(t)) ops.add("\"-" + t + "\""); }
                else { Tid t = pq.poll(); if (t != null) ops.add("\"poll\""); }
            }
            if (cases++ > 0) out.append(",\n");
            out.append("{\"inserted\":").append(list(inserted))
               .append(",\"map_order\":").append(list(beforeRemoval))
               .append(",\"removed\":").append(list(removed))
               .append(",\"map_order_after_removal\":").append(list(map.keySet()))
               .append(",\"heapified\":").append(list(heapified))
               .append(",\"ops\":").append(ops.toString())
               .append(",\"heap_after_ops\":").append(list(pq)).append("}");
        }
        out.append("\n]\n");
        System.out.print(out);
    }
}
