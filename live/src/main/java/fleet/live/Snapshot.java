package fleet.live;

import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.DefaultHostResolver;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NetworkClientUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ClassicGroupDescription;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ConsumerProtocolAssignment;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;

/**
 * Reads one snapshot of every Kafka Streams group of a cluster and prints it as one JSON document on stdout
 * (the `fleet-assignor collect` reading side; Python turns it into the six input tables).
 *
 * Read-only: it lists and describes groups, describes topics, the cluster and group configs, and lists end
 * offsets and the groups' committed offsets. Streams groups (KIP-1071) come from
 * Admin#describeStreamsGroups. For classic groups, whose member metadata the Admin API does not return, it
 * sends DescribeGroups itself to the group coordinator (found by Admin#describeClassicGroups) over a Kafka NetworkClient built from the same client properties (so TLS and
 * SASL settings apply), and decodes the bytes with Kafka's own ConsumerProtocol, SubscriptionInfo and
 * AssignmentInfo.
 *
 * Arguments: --bootstrap-servers HOST:PORT[,...] [--admin-config FILE] [--groups REGEX] [--timeout-ms N].
 * One group that cannot be read is reported in its "error"; the others are still read. When the cluster
 * cannot be reached at all it prints one "error: ..." line on stderr and exits with 3. Property values are
 * never printed.
 */
public final class Snapshot {

    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
    static final int EXIT_UNREACHABLE = 3;
    static final int EXIT_USAGE = 2;

    private final Admin admin;
    private final Properties props;
    private final Pattern groups;
    private final long timeoutMs;

    Snapshot(Admin admin, Properties props, Pattern groups, long timeoutMs) {
        this.admin = admin;
        this.props = props;
        this.groups = groups;
        this.timeoutMs = timeoutMs;
    }

    static final class Unreachable extends RuntimeException {
        Unreachable(String message) {
            super(message);
        }
    }

    <T> T await(KafkaFuture<T> future) throws Exception {
        try {
            return future.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
    }

    static String reason(Throwable e) {
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        String message = cause.getMessage();
        return cause.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    ObjectNode collect() throws Exception {
        ObjectNode out = JSON.createObjectNode();
        out.put("started_at_ms", System.currentTimeMillis());
        DescribeClusterResult cluster = admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) timeoutMs));
        String clusterId;
        Collection<Node> nodes;
        try {
            clusterId = await(cluster.clusterId());
            nodes = await(cluster.nodes());
        } catch (Exception e) {
            throw new Unreachable("cannot read the cluster at " + props.getProperty(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG)
                + " within " + timeoutMs + " ms (" + reason(e) + ")");
        }
        out.put("cluster_id", clusterId);
        ArrayNode brokers = out.putArray("brokers");
        nodes.stream().sorted((a, b) -> Integer.compare(a.id(), b.id())).forEach(n -> {
            ObjectNode b = brokers.addObject();
            b.put("id", n.id());
            b.put("rack", n.rack());
        });

        Collection<GroupListing> listings = await(admin.listGroups(new ListGroupsOptions()).all());
        Map<String, ObjectNode> byId = new TreeMap<>();
        List<String> streamsIds = new ArrayList<>();
        List<String> classicIds = new ArrayList<>();
        for (GroupListing listing : listings) {
            if (!groups.matcher(listing.groupId()).matches()) {
                continue;
            }
            ObjectNode g = JSON.createObjectNode();
            g.put("group_id", listing.groupId());
            GroupType type = listing.type().orElse(GroupType.UNKNOWN);
            g.put("type", type.toString().toLowerCase());
            g.put("protocol_type", listing.protocol());
            listing.groupState().ifPresent(s -> g.put("state", s.toString()));
            byId.put(listing.groupId(), g);
            if (type == GroupType.STREAMS) {
                streamsIds.add(listing.groupId());
            } else if (type == GroupType.CLASSIC && ConsumerProtocol.PROTOCOL_TYPE.equals(listing.protocol())) {
                classicIds.add(listing.groupId());
            } else {
                g.put("error", "not a Kafka Streams group (group type " + type + ", protocol type '"
                    + listing.protocol() + "')");
            }
        }
        Set<String> topics = new TreeSet<>();
        Set<String> changelogs = new TreeSet<>();
        readStreamsGroups(streamsIds, byId, topics, changelogs);
        readClassicGroups(classicIds, byId, topics, changelogs);
        readCommittedOffsets(streamsIds, classicIds, byId);

        ObjectNode topicsNode = out.putObject("topics");
        ArrayNode missing = out.putArray("missing_topics");
        Map<String, Integer> partitionCounts = describeTopics(topics, topicsNode, missing);
        out.set("end_offsets", endOffsets(changelogs, partitionCounts));
        ArrayNode groupsNode = out.putArray("groups");
        byId.values().forEach(groupsNode::add);
        out.put("finished_at_ms", System.currentTimeMillis());
        return out;
    }

    // ----------------------------------------------------------------------------------- streams groups

    void readStreamsGroups(List<String> ids, Map<String, ObjectNode> byId, Set<String> topics, Set<String> changelogs)
            throws Exception {
        if (ids.isEmpty()) {
            return;
        }
        Map<String, KafkaFuture<StreamsGroupDescription>> described = admin.describeStreamsGroups(ids).describedGroups();
        Map<ConfigResource, KafkaFuture<Config>> configs = admin.describeConfigs(
            ids.stream().map(id -> new ConfigResource(ConfigResource.Type.GROUP, id)).toList()).values();
        for (String id : ids) {
            ObjectNode g = byId.get(id);
            StreamsGroupDescription d;
            try {
                d = await(described.get(id));
            } catch (Exception e) {
                g.put("error", "cannot describe the streams group (" + reason(e) + ")");
                continue;
            }
            g.put("state", d.groupState().toString());
            g.put("group_epoch", d.groupEpoch());
            g.put("target_assignment_epoch", d.targetAssignmentEpoch());
            g.put("topology_epoch", d.topologyEpoch());
            g.put("assignor_name", d.assignorName().orElse(null));
            if (d.coordinator() != null) {
                g.put("coordinator", d.coordinator().id());
            }
            ObjectNode configNode = g.putObject("configs");
            try {
                Config config = await(configs.get(new ConfigResource(ConfigResource.Type.GROUP, id)));
                for (ConfigEntry entry : config.entries()) {
                    if (!entry.name().startsWith("streams.") || entry.isSensitive()) {
                        continue;
                    }
                    ObjectNode c = configNode.putObject(entry.name());
                    c.put("value", entry.value());
                    c.put("source", entry.source().toString());
                    c.put("default", entry.isDefault()
                        || entry.source() == ConfigEntry.ConfigSource.DEFAULT_CONFIG);
                }
            } catch (Exception e) {
                g.put("configs_error", "cannot describe the group configs (" + reason(e) + ")");
            }
            ArrayNode subs = g.putArray("subtopologies");
            d.subtopologies().stream().sorted((a, b) -> a.subtopologyId().compareTo(b.subtopologyId()))
                .forEach(s -> {
                    ObjectNode n = subs.addObject();
                    n.put("id", s.subtopologyId());
                    ArrayNode src = n.putArray("source_topics");
                    s.sourceTopics().stream().sorted().forEach(src::add);
                    ArrayNode sink = n.putArray("repartition_sink_topics");
                    s.repartitionSinkTopics().stream().sorted().forEach(sink::add);
                    n.set("repartition_source_topics", topicInfos(s.repartitionSourceTopics()));
                    n.set("changelog_topics", topicInfos(s.stateChangelogTopics()));
                    topics.addAll(s.sourceTopics());
                    topics.addAll(s.repartitionSourceTopics().keySet());
                    topics.addAll(s.stateChangelogTopics().keySet());
                    changelogs.addAll(s.stateChangelogTopics().keySet());
                });
            ArrayNode members = g.putArray("members");
            d.members().stream().sorted((a, b) -> a.memberId().compareTo(b.memberId()))
                .forEach(m -> members.add(streamsMember(m)));
        }
    }

    static ObjectNode topicInfos(Map<String, StreamsGroupSubtopologyDescription.TopicInfo> infos) {
        ObjectNode n = JSON.createObjectNode();
        new TreeMap<>(infos).forEach((name, info) -> n.put(name, info.partitions()));
        return n;
    }

    static ObjectNode streamsMember(StreamsGroupMemberDescription m) {
        ObjectNode n = JSON.createObjectNode();
        n.put("member_id", m.memberId());
        n.put("member_epoch", m.memberEpoch());
        n.put("instance_id", m.instanceId().orElse(null));
        n.put("rack", m.rackId().orElse(null));
        n.put("client_id", m.clientId());
        n.put("client_host", m.clientHost());
        n.put("topology_epoch", m.topologyEpoch());
        n.put("process_id", m.processId());
        n.put("user_endpoint", m.userEndpoint().map(e -> e.host() + ":" + e.port()).orElse(null));
        ObjectNode tags = n.putObject("client_tags");
        new TreeMap<>(m.clientTags()).forEach(tags::put);
        n.set("task_offsets", taskOffsets(m.taskOffsets()));
        n.set("task_end_offsets", taskOffsets(m.taskEndOffsets()));
        n.set("assignment", streamsAssignment(m.assignment()));
        n.set("target_assignment", streamsAssignment(m.targetAssignment()));
        n.put("is_classic", m.isClassic());
        return n;
    }

    static ObjectNode taskOffsets(List<StreamsGroupMemberDescription.TaskOffset> offsets) {
        ObjectNode n = JSON.createObjectNode();
        for (StreamsGroupMemberDescription.TaskOffset o : offsets) {
            n.put(o.subtopologyId() + "_" + o.partition(), o.offset());
        }
        return n;
    }

    static ObjectNode streamsAssignment(StreamsGroupMemberAssignment a) {
        ObjectNode n = JSON.createObjectNode();
        n.set("active", taskIds(a == null ? List.of() : a.activeTasks()));
        n.set("standby", taskIds(a == null ? List.of() : a.standbyTasks()));
        n.set("warmup", taskIds(a == null ? List.of() : a.warmupTasks()));
        return n;
    }

    static ArrayNode taskIds(List<StreamsGroupMemberAssignment.TaskIds> ids) {
        Set<String> out = new TreeSet<>();
        for (StreamsGroupMemberAssignment.TaskIds t : ids) {
            for (Integer p : t.partitions()) {
                out.add(t.subtopologyId() + "_" + p);
            }
        }
        ArrayNode n = JSON.createArrayNode();
        out.forEach(n::add);
        return n;
    }

    // ----------------------------------------------------------------------------------- classic groups

    void readClassicGroups(List<String> ids, Map<String, ObjectNode> byId, Set<String> topics, Set<String> changelogs)
            throws Exception {
        if (ids.isEmpty()) {
            return;
        }
        Map<String, KafkaFuture<ClassicGroupDescription>> described = admin.describeClassicGroups(ids).describedGroups();
        Map<Node, List<String>> byCoordinator = new HashMap<>();
        for (String id : ids) {
            try {
                ClassicGroupDescription d = await(described.get(id));
                byId.get(id).put("state", d.state().toString());
                byCoordinator.computeIfAbsent(d.coordinator(), k -> new ArrayList<>()).add(id);
            } catch (Exception e) {
                byId.get(id).put("error", "cannot describe the classic group (" + reason(e) + ")");
            }
        }
        if (byCoordinator.isEmpty()) {
            return;
        }
        Set<String> allTopics = await(admin.listTopics(new ListTopicsOptions().listInternal(false)).names());
        for (Map.Entry<Node, List<String>> entry : byCoordinator.entrySet()) {
            List<DescribeGroupsResponseData.DescribedGroup> raw;
            try {
                raw = describeGroupsRaw(entry.getKey(), entry.getValue());
            } catch (Exception e) {
                for (String id : entry.getValue()) {
                    byId.get(id).put("error", "cannot read the members' metadata from the coordinator ("
                        + reason(e) + ")");
                }
                continue;
            }
            for (DescribeGroupsResponseData.DescribedGroup group : raw) {
                ObjectNode g = byId.get(group.groupId());
                if (g == null) {
                    continue;
                }
                if (group.errorCode() != Errors.NONE.code()) {
                    g.put("error", "DescribeGroups failed (" + Errors.forCode(group.errorCode()).name() + ")");
                    continue;
                }
                g.put("state", group.groupState());
                g.put("protocol_type", group.protocolType());
                g.put("protocol", group.protocolData());
                g.put("coordinator", entry.getKey().id());
                ArrayNode members = g.putArray("members");
                group.members().stream().sorted((a, b) -> a.memberId().compareTo(b.memberId()))
                    .forEach(m -> members.add(classicMember(m, topics)));
                // Changelog topics are named "<application.id>-<store>-changelog" (Kafka Streams' naming);
                // a classic group's member metadata does not say which subtopology owns which store.
                ArrayNode candidates = g.putArray("changelog_topics");
                String prefix = group.groupId() + "-";
                allTopics.stream().filter(t -> t.startsWith(prefix) && t.endsWith("-changelog")).sorted()
                    .forEach(t -> {
                        candidates.add(t);
                        topics.add(t);
                        changelogs.add(t);
                    });
            }
        }
    }

    List<DescribeGroupsResponseData.DescribedGroup> describeGroupsRaw(Node coordinator, List<String> ids)
            throws Exception {
        Map<String, Object> config = new HashMap<>();
        props.forEach((k, v) -> config.put(String.valueOf(k), v));
        AdminClientConfig adminConfig = new AdminClientConfig(config);
        Time time = Time.SYSTEM;
        Metrics metrics = new Metrics(time);
        NetworkClient client = null;
        try {
            client = ClientUtils.createNetworkClient(adminConfig,
                adminConfig.getList(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG), "fleet-snapshot", metrics,
                "fleet-snapshot-describe-groups", new LogContext("[fleet-snapshot] "), new ApiVersions(), time, 1,
                (int) timeoutMs, null, new ManualMetadataUpdater(List.of(coordinator)),
                new DefaultHostResolver(), null, null);
            if (!NetworkClientUtils.awaitReady(client, coordinator, time, timeoutMs)) {
                throw new IllegalStateException("coordinator " + coordinator.idString() + " not ready within "
                    + timeoutMs + " ms");
            }
            ClientRequest request = client.newClientRequest(coordinator.idString(),
                new DescribeGroupsRequest.Builder(new DescribeGroupsRequestData().setGroups(ids)),
                time.milliseconds(), true);
            ClientResponse response = NetworkClientUtils.sendAndReceive(client, request, time);
            if (response.responseBody() == null) {
                throw new IllegalStateException("no DescribeGroups response from the coordinator");
            }
            return ((DescribeGroupsResponse) response.responseBody()).data().groups();
        } finally {
            if (client != null) {
                client.close();
            }
            metrics.close();
        }
    }

    static ObjectNode classicMember(DescribeGroupsResponseData.DescribedGroupMember m, Set<String> topics) {
        ObjectNode n = JSON.createObjectNode();
        n.put("member_id", m.memberId());
        n.put("group_instance_id", m.groupInstanceId());
        n.put("client_id", m.clientId());
        n.put("client_host", m.clientHost());
        byte[] metadata = m.memberMetadata();
        if (metadata != null && metadata.length > 0) {
            try {
                ConsumerProtocolSubscription sub =
                    ConsumerProtocol.deserializeConsumerProtocolSubscription(ByteBuffer.wrap(metadata));
                ObjectNode s = n.putObject("subscription");
                ArrayNode subTopics = s.putArray("topics");
                sub.topics().stream().sorted().forEach(subTopics::add);
                topics.addAll(sub.topics());
                s.put("rack", sub.rackId());
                s.put("generation", sub.generationId());
                ArrayNode owned = s.putArray("owned_partitions");
                sub.ownedPartitions().forEach(tp -> tp.partitions().forEach(p -> {
                    ObjectNode o = owned.addObject();
                    o.put("topic", tp.topic());
                    o.put("partition", p);
                }));
                if (sub.userData() != null) {
                    n.set("streams_subscription", streamsSubscription(SubscriptionInfo.decode(sub.userData())));
                }
            } catch (Exception e) {
                n.put("metadata_error", "member metadata is not a Kafka Streams subscription (" + reason(e) + ")");
            }
        }
        byte[] assignment = m.memberAssignment();
        if (assignment != null && assignment.length > 0) {
            try {
                ConsumerProtocolAssignment a =
                    ConsumerProtocol.deserializeConsumerProtocolAssignment(ByteBuffer.wrap(assignment));
                ObjectNode an = n.putObject("assignment");
                ArrayNode parts = an.putArray("partitions");
                List<TopicPartition> assigned = new ArrayList<>();
                a.assignedPartitions().forEach(tp -> tp.partitions().forEach(p ->
                    assigned.add(new TopicPartition(tp.topic(), p))));
                // Streams lists its active tasks in the order of the assigned partitions sorted by topic and
                // partition (the order its assignor encodes and its onAssignment decodes).
                assigned.sort((x, y) -> x.topic().equals(y.topic())
                    ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()));
                for (TopicPartition tp : assigned) {
                    ObjectNode o = parts.addObject();
                    o.put("topic", tp.topic());
                    o.put("partition", tp.partition());
                    topics.add(tp.topic());
                }
                if (a.userData() != null && a.userData().remaining() > 0) {
                    n.set("streams_assignment", streamsAssignmentInfo(AssignmentInfo.decode(a.userData())));
                }
            } catch (Exception e) {
                n.put("assignment_error", "member assignment is not a Kafka Streams assignment (" + reason(e) + ")");
            }
        }
        return n;
    }

    static ObjectNode streamsSubscription(SubscriptionInfo info) {
        ObjectNode n = JSON.createObjectNode();
        n.put("version", info.version());
        n.put("latest_supported_version", info.latestSupportedVersion());
        n.put("error_code", info.errorCode());
        n.put("process_id", info.processId() == null ? null : info.processId().toString());
        n.put("user_endpoint", info.userEndPoint());
        ObjectNode tags = n.putObject("client_tags");
        new TreeMap<>(info.clientTags()).forEach(tags::put);
        ObjectNode sums = n.putObject("task_offset_sums");
        new TreeMap<>(info.taskOffsetSums()).forEach((task, sum) -> sums.put(task.toString(), sum));
        n.set("prev_tasks", sortedTasks(info.prevTasks()));
        n.set("standby_tasks", sortedTasks(info.standbyTasks()));
        return n;
    }

    static ArrayNode sortedTasks(Collection<TaskId> tasks) {
        ArrayNode n = JSON.createArrayNode();
        new TreeSet<>(tasks).forEach(t -> n.add(t.toString()));
        return n;
    }

    static ObjectNode streamsAssignmentInfo(AssignmentInfo info) {
        ObjectNode n = JSON.createObjectNode();
        n.put("version", info.version());
        n.put("error_code", info.errCode());
        n.put("next_rebalance_ms", info.nextRebalanceMs());
        ArrayNode active = n.putArray("active_tasks");
        info.activeTasks().forEach(t -> active.add(t.toString()));
        ObjectNode standby = n.putObject("standby_tasks");
        new TreeMap<>(info.standbyTasks()).forEach((task, parts) -> {
            ArrayNode a = standby.putArray(task.toString());
            parts.stream().sorted((x, y) -> x.toString().compareTo(y.toString())).forEach(tp -> {
                ObjectNode o = a.addObject();
                o.put("topic", tp.topic());
                o.put("partition", tp.partition());
            });
        });
        return n;
    }

    // ---------------------------------------------------------------------------------- committed offsets

    /**
     * Each readable group's committed offsets ("committed_offsets": topic -> partition -> offset), all its
     * partitions: the end offsets of a source topic used as a changelog are these (Kafka Streams' assignor
     * computes such lags from the committed offsets too). Streams groups: Admin#listStreamsGroupOffsets;
     * classic groups: Admin#listConsumerGroupOffsets.
     */
    void readCommittedOffsets(List<String> streamsIds, List<String> classicIds, Map<String, ObjectNode> byId) {
        List<String> streams = streamsIds.stream().filter(id -> !byId.get(id).has("error")).toList();
        List<String> classic = classicIds.stream().filter(id -> !byId.get(id).has("error")).toList();
        Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> futures = new HashMap<>();
        if (!streams.isEmpty()) {
            Map<String, ListStreamsGroupOffsetsSpec> specs = new HashMap<>();
            streams.forEach(id -> specs.put(id, new ListStreamsGroupOffsetsSpec()));
            var result = admin.listStreamsGroupOffsets(specs);
            streams.forEach(id -> futures.put(id, result.partitionsToOffsetAndMetadata(id)));
        }
        if (!classic.isEmpty()) {
            Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
            classic.forEach(id -> specs.put(id, new ListConsumerGroupOffsetsSpec()));
            var result = admin.listConsumerGroupOffsets(specs);
            classic.forEach(id -> futures.put(id, result.partitionsToOffsetAndMetadata(id)));
        }
        for (Map.Entry<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> entry
                : new TreeMap<>(futures).entrySet()) {
            ObjectNode g = byId.get(entry.getKey());
            try {
                Map<TopicPartition, OffsetAndMetadata> offsets = await(entry.getValue());
                ObjectNode out = g.putObject("committed_offsets");
                Map<String, Map<Integer, Long>> sorted = new TreeMap<>();
                offsets.forEach((tp, om) -> {
                    if (om != null) {
                        sorted.computeIfAbsent(tp.topic(), k -> new TreeMap<>()).put(tp.partition(), om.offset());
                    }
                });
                sorted.forEach((topic, parts) -> {
                    ObjectNode t = out.putObject(topic);
                    parts.forEach((p, o) -> t.put(Integer.toString(p), o));
                });
            } catch (Exception e) {
                g.put("committed_offsets_error", "cannot list the group's committed offsets (" + reason(e) + ")");
            }
        }
    }

    // -------------------------------------------------------------------------------- topics and offsets

    Map<String, Integer> describeTopics(Set<String> names, ObjectNode out, ArrayNode missing) throws Exception {
        Map<String, Integer> counts = new HashMap<>();
        if (names.isEmpty()) {
            return counts;
        }
        Map<String, KafkaFuture<TopicDescription>> described = admin.describeTopics(names).topicNameValues();
        for (String name : names) {
            try {
                TopicDescription d = await(described.get(name));
                ArrayNode parts = out.putObject(name).putArray("partitions");
                for (TopicPartitionInfo p : d.partitions()) {
                    ObjectNode o = parts.addObject();
                    o.put("partition", p.partition());
                    ArrayNode replicas = o.putArray("replicas");
                    p.replicas().forEach(r -> replicas.add(r.id()));
                }
                counts.put(name, d.partitions().size());
            } catch (Exception e) {
                ObjectNode m = missing.addObject();
                m.put("topic", name);
                m.put("reason", reason(e));
            }
        }
        return counts;
    }

    ObjectNode endOffsets(Set<String> changelogs, Map<String, Integer> partitionCounts) {
        ObjectNode out = JSON.createObjectNode();
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (String topic : changelogs) {
            for (int p = 0; p < partitionCounts.getOrDefault(topic, 0); p++) {
                request.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
        }
        if (request.isEmpty()) {
            return out;
        }
        ListOffsetsResult result = admin.listOffsets(request);
        List<TopicPartition> sorted = new ArrayList<>(request.keySet());
        sorted.sort((x, y) -> x.topic().equals(y.topic())
            ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()));
        for (TopicPartition tp : sorted) {
            try {
                long offset = await(result.partitionResult(tp)).offset();
                ObjectNode t = out.has(tp.topic()) ? (ObjectNode) out.get(tp.topic()) : out.putObject(tp.topic());
                t.put(Integer.toString(tp.partition()), offset);
            } catch (Exception e) {
                // No row: the collector's tables then say these end offsets could not be fetched.
            }
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------- main

    public static void main(String[] argv) {
        Map<String, String> args;
        try {
            args = DemoApp.parse(argv);
            DemoApp.required(args, "bootstrap-servers");
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(EXIT_USAGE);
            return;
        }
        Properties props = new Properties();
        if (args.containsKey("admin-config")) {
            try (InputStream in = new FileInputStream(args.get("admin-config"))) {
                props.load(in);
            } catch (Exception e) {
                System.err.println("error: cannot read --admin-config " + args.get("admin-config") + ": " + reason(e));
                System.exit(EXIT_USAGE);
                return;
            }
        }
        long timeoutMs = Long.parseLong(args.getOrDefault("timeout-ms", "30000"));
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap-servers"));
        props.putIfAbsent(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Long.toString(timeoutMs));
        props.putIfAbsent(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(timeoutMs));
        props.putIfAbsent(AdminClientConfig.CLIENT_ID_CONFIG, "fleet-assignor-collect");
        Pattern pattern = Pattern.compile(args.getOrDefault("groups", ".*"));
        int exit = 0;
        Admin admin = Admin.create(props);
        try {
            ObjectNode out = new Snapshot(admin, props, pattern, timeoutMs).collect();
            System.out.println(JSON.writeValueAsString(out));
            System.out.flush();
        } catch (Unreachable e) {
            System.err.println("error: " + e.getMessage());
            exit = EXIT_UNREACHABLE;
        } catch (Exception e) {
            System.err.println("error: snapshot failed: " + reason(e));
            exit = 1;
        } finally {
            admin.close(java.time.Duration.ofSeconds(5));
        }
        System.exit(exit);
    }
}
