import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.utils.internals.AppInfoParser;

/**
 * Prints one streams group (KIP-1071) as Kafka's Admin client describes it, as one JSON document
 * on standard output: {@code Admin#describeStreamsGroups} (members with member epoch, process id,
 * client tags, rack, instance id, current and target assignments, reported task offsets and end
 * offsets; subtopologies), the partition counts of the subtopologies' source and repartition
 * source topics ({@code Admin#describeTopics}) and the group's configs
 * ({@code Admin#describeConfigs} of the GROUP resource). Members are printed in the order the
 * Admin client returns them; nothing is interpreted here.
 *
 * <p>Arguments: bootstrap servers, group id, optionally the request time-out in ms and a watch
 * period in ms: with a period, one document per line is printed every period (errors included)
 * until standard input is closed. Run from
 * source with Kafka 4.4's jars: {@code java -cp '.kafka/lib-44/*' DescribeStreamsGroup.java HOST:PORT
 * GROUP}. On failure prints {@code {"error": {"type", "message"}}} and exits with status 1.
 */
public final class DescribeStreamsGroup {

    private static final ObjectMapper JSON = new ObjectMapper();

    private DescribeStreamsGroup() { }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: DescribeStreamsGroup BOOTSTRAP GROUP [TIMEOUT_MS]");
            System.exit(64);
        }
        int timeout = args.length > 2 ? Integer.parseInt(args[2]) : 30000;
        long watch = args.length > 3 ? Long.parseLong(args[3]) : 0;
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeout);
        int status = 0;
        try (Admin admin = Admin.create(props)) {
            if (watch <= 0) {
                ObjectNode out = once(admin, args[1], timeout);
                status = out.has("error") ? 1 : 0;
                System.out.println(JSON.writeValueAsString(out));
            } else {
                Thread stdin = new Thread(() -> {
                    try {
                        while (System.in.read() >= 0) {
                            // drain until closed
                        }
                    } catch (java.io.IOException e) {
                        // closed
                    }
                });
                stdin.setDaemon(true);
                stdin.start();
                while (stdin.isAlive()) {
                    System.out.println(JSON.writeValueAsString(once(admin, args[1], timeout)));
                    System.out.flush();
                    stdin.join(watch);
                }
            }
        }
        System.exit(status);
    }

    private static ObjectNode once(Admin admin, String group, int timeout) throws Exception {
        try {
            return describe(admin, group, timeout);
        } catch (ExecutionException e) {
            return error(e.getCause() == null ? e : e.getCause());
        } catch (RuntimeException e) {
            return error(e);
        }
    }

    private static ObjectNode error(Throwable e) {
        ObjectNode out = JSON.createObjectNode();
        ObjectNode err = out.putObject("error");
        err.put("type", e.getClass().getSimpleName());
        err.put("message", String.valueOf(e.getMessage()));
        return out;
    }

    private static ObjectNode describe(Admin admin, String group, int timeout) throws Exception {
        StreamsGroupDescription d = admin.describeStreamsGroups(List.of(group)).all()
            .get(timeout, TimeUnit.MILLISECONDS).get(group);
        long observed = System.currentTimeMillis();
        ObjectNode out = JSON.createObjectNode();
        out.put("kafka_version", AppInfoParser.getVersion());
        out.put("observed_at_ms", observed);
        out.put("group_id", d.groupId());
        out.put("state", String.valueOf(d.groupState()));
        out.put("group_epoch", d.groupEpoch());
        out.put("target_assignment_epoch", d.targetAssignmentEpoch());
        out.put("topology_epoch", d.topologyEpoch());
        out.put("assignor", d.assignorName().orElse(null));
        out.put("coordinator", d.coordinator() == null ? -1 : d.coordinator().id());

        Set<String> topics = new TreeSet<>();
        ArrayNode subs = out.putArray("subtopologies");
        for (StreamsGroupSubtopologyDescription s : d.subtopologies()) {
            ObjectNode sub = subs.addObject();
            sub.put("id", s.subtopologyId());
            ArrayNode sources = sub.putArray("source_topics");
            s.sourceTopics().forEach(sources::add);
            topics.addAll(s.sourceTopics());
            ArrayNode sinks = sub.putArray("repartition_sink_topics");
            s.repartitionSinkTopics().forEach(sinks::add);
            ObjectNode repartition = sub.putObject("repartition_source_topics");
            new TreeMap<>(s.repartitionSourceTopics()).forEach(
                (t, info) -> repartition.put(t, info.partitions()));
            topics.addAll(s.repartitionSourceTopics().keySet());
            ObjectNode changelogs = sub.putObject("state_changelog_topics");
            new TreeMap<>(s.stateChangelogTopics()).forEach(
                (t, info) -> changelogs.put(t, info.partitions()));
        }
        ObjectNode partitions = out.putObject("topic_partitions");
        if (!topics.isEmpty()) {
            Map<String, TopicDescription> described = admin.describeTopics(topics)
                .allTopicNames().get(timeout, TimeUnit.MILLISECONDS);
            for (String t : topics) {
                partitions.put(t, described.get(t).partitions().size());
            }
        }

        ObjectNode configs = out.putObject("configs");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        Config config = admin.describeConfigs(List.of(resource)).all()
            .get(timeout, TimeUnit.MILLISECONDS).get(resource);
        TreeMap<String, String> sorted = new TreeMap<>();
        for (ConfigEntry entry : config.entries()) {
            sorted.put(entry.name(), entry.value());
        }
        sorted.forEach(configs::put);

        ArrayNode members = out.putArray("members");
        for (StreamsGroupMemberDescription m : d.members()) {
            ObjectNode member = members.addObject();
            member.put("member_id", m.memberId());
            member.put("member_epoch", m.memberEpoch());
            member.put("process_id", m.processId());
            member.put("client_id", m.clientId());
            member.put("client_host", m.clientHost());
            member.put("instance_id", m.instanceId().orElse(null));
            member.put("rack_id", m.rackId().orElse(null));
            member.put("topology_epoch", m.topologyEpoch());
            member.put("is_classic", m.isClassic());
            member.put("user_endpoint", m.userEndpoint().map(e -> e.host() + ":" + e.port())
                .orElse(null));
            ObjectNode tags = member.putObject("client_tags");
            new TreeMap<>(m.clientTags()).forEach(tags::put);
            offsets(member.putArray("task_offsets"), m.taskOffsets());
            offsets(member.putArray("task_end_offsets"), m.taskEndOffsets());
            assignment(member.putObject("assignment"), m.assignment());
            assignment(member.putObject("target_assignment"), m.targetAssignment());
        }
        return out;
    }

    private static void offsets(ArrayNode out, List<StreamsGroupMemberDescription.TaskOffset> in) {
        for (StreamsGroupMemberDescription.TaskOffset o : in) {
            out.addArray().add(o.subtopologyId()).add(o.partition()).add(o.offset());
        }
    }

    private static void assignment(ObjectNode out, StreamsGroupMemberAssignment a) {
        tasks(out.putObject("active"), a.activeTasks());
        tasks(out.putObject("standby"), a.standbyTasks());
        tasks(out.putObject("warmup"), a.warmupTasks());
    }

    private static void tasks(ObjectNode out, Collection<StreamsGroupMemberAssignment.TaskIds> in) {
        for (StreamsGroupMemberAssignment.TaskIds t : in) {
            ArrayNode ps = out.putArray(t.subtopologyId());
            new ArrayList<>(new TreeSet<>(t.partitions())).forEach(ps::add);
        }
    }
}
