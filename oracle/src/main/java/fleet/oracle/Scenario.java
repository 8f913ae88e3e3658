package fleet.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * One application in the scenario format of shared/spec/scenario.md, read into plain immutable-ish holders.
 * Only what Kafka's assignors need is kept; validation is the Python side's job (the oracle trusts its input
 * but tolerates unknown task ids and active/standby overlaps the same way the spec does).
 */
final class Scenario {

    static final class Partition {
        final String topic;
        final int partition;
        final boolean source;
        final boolean changelog;
        /** Racks of all replicas; empty = unknown. */
        final List<String> racks;

        Partition(final String topic, final int partition, final boolean source, final boolean changelog,
                  final List<String> racks) {
            this.topic = topic;
            this.partition = partition;
            this.source = source;
            this.changelog = changelog;
            this.racks = racks;
        }
    }

    static final class Task {
        final TaskId id;
        final boolean stateful;
        final Set<String> stores;
        final List<Partition> partitions;

        Task(final TaskId id, final boolean stateful, final Set<String> stores, final List<Partition> partitions) {
            this.id = id;
            this.stateful = stateful;
            this.stores = stores;
            this.partitions = partitions;
        }

        boolean hasChangelog() {
            return partitions.stream().anyMatch(p -> p.changelog);
        }
    }

    static final class Client {
        final ProcessId processId;
        final List<String> consumers;
        final Map<String, SortedSet<TaskId>> consumerPrevTasks;
        final SortedSet<TaskId> prevActive;
        final SortedSet<TaskId> prevStandby;
        /** Lag of every task with a changelog, after the defaults of scenario.md are applied. */
        final SortedMap<TaskId, Long> lags;
        final String rack;
        final Map<String, String> tags;

        Client(final ProcessId processId, final List<String> consumers,
               final Map<String, SortedSet<TaskId>> consumerPrevTasks, final SortedSet<TaskId> prevActive,
               final SortedSet<TaskId> prevStandby, final SortedMap<TaskId, Long> lags, final String rack,
               final Map<String, String> tags) {
            this.processId = processId;
            this.consumers = consumers;
            this.consumerPrevTasks = consumerPrevTasks;
            this.prevActive = prevActive;
            this.prevStandby = prevStandby;
            this.lags = lags;
            this.rack = rack;
            this.tags = tags;
        }
    }

    final String appId;
    final long acceptableRecoveryLag;
    final int maxWarmupReplicas;
    final int numStandbyReplicas;
    final long probingRebalanceIntervalMs;
    final List<String> rackAwareAssignmentTags;
    final Integer trafficCost;
    final Integer nonOverlapCost;
    final String strategy;
    final boolean lagsComputed;
    final SortedMap<TaskId, Task> tasks;
    /** In the scenario's order (the maps handed to Kafka are built from it). */
    final List<Client> clients;

    private Scenario(final JsonNode root) {
        appId = root.path("app_id").asText("oracle-app");
        final JsonNode configs = root.path("configs");
        acceptableRecoveryLag = configs.path("acceptable_recovery_lag").asLong(10_000L);
        maxWarmupReplicas = configs.path("max_warmup_replicas").asInt(2);
        numStandbyReplicas = configs.path("num_standby_replicas").asInt(0);
        probingRebalanceIntervalMs = configs.path("probing_rebalance_interval_ms").asLong(600_000L);
        final List<String> tagKeys = new ArrayList<>();
        configs.path("rack_aware_assignment_tags").forEach(n -> tagKeys.add(n.asText()));
        rackAwareAssignmentTags = Collections.unmodifiableList(tagKeys);
        trafficCost = optionalInt(configs.path("rack_aware_traffic_cost"));
        nonOverlapCost = optionalInt(configs.path("rack_aware_non_overlap_cost"));
        strategy = configs.path("rack_aware_assignment_strategy").asText("none");
        lagsComputed = root.path("lags_computed").asBoolean(true);
        tasks = readTasks(root.path("tasks"));
        clients = readClients(root.path("clients"));
    }

    static Scenario parse(final JsonNode root) {
        return new Scenario(root);
    }

    private static Integer optionalInt(final JsonNode node) {
        return node.isMissingNode() || node.isNull() ? null : node.asInt();
    }

    private static SortedMap<TaskId, Task> readTasks(final JsonNode tasksNode) {
        final SortedMap<TaskId, Task> result = new TreeMap<>();
        for (final JsonNode t : tasksNode) {
            final TaskId id = TaskId.parse(t.path("id").asText());
            final Set<String> stores = new TreeSet<>();
            t.path("stores").forEach(s -> stores.add(s.asText()));
            final List<Partition> partitions = new ArrayList<>();
            for (final JsonNode p : t.path("partitions")) {
                final List<String> racks = new ArrayList<>();
                p.path("racks").forEach(r -> racks.add(r.asText()));
                partitions.add(new Partition(p.path("topic").asText(), p.path("partition").asInt(),
                    p.path("source").asBoolean(false), p.path("changelog").asBoolean(false), racks));
            }
            final boolean stateful = t.has("stateful") ? t.path("stateful").asBoolean() : !stores.isEmpty();
            result.put(id, new Task(id, stateful, stores, partitions));
        }
        return result;
    }

    private SortedSet<TaskId> knownTasks(final JsonNode ids) {
        final SortedSet<TaskId> result = new TreeSet<>();
        for (final JsonNode n : ids) {
            final TaskId id = TaskId.parse(n.asText());
            if (tasks.containsKey(id)) {
                result.add(id);
            }
        }
        return result;
    }

    private List<Client> readClients(final JsonNode clientsNode) {
        // First pass: the raw per-client data.
        final List<JsonNode> nodes = new ArrayList<>();
        clientsNode.forEach(nodes::add);
        final Map<TaskId, Long> endOffsetSums = endOffsetSums(nodes);
        final List<Client> result = new ArrayList<>();
        for (final JsonNode c : nodes) {
            final String pidText = c.path("process_id").asText();
            final ProcessId pid = new ProcessId(UUID.fromString(pidText));
            final SortedSet<TaskId> prevActive = knownTasks(c.path("prev_active"));
            final SortedSet<TaskId> prevStandby = knownTasks(c.path("prev_standby"));
            final List<String> consumers = new ArrayList<>();
            final Map<String, SortedSet<TaskId>> consumerPrev = new LinkedHashMap<>();
            for (final JsonNode consumer : c.path("consumers")) {
                if (consumer.isTextual()) {
                    consumers.add(consumer.asText());
                    consumerPrev.put(consumer.asText(), new TreeSet<>());
                } else {
                    final String id = consumer.path("id").asText();
                    final SortedSet<TaskId> active = knownTasks(consumer.path("prev_active"));
                    final SortedSet<TaskId> standby = knownTasks(consumer.path("prev_standby"));
                    prevActive.addAll(active);
                    prevStandby.addAll(standby);
                    final SortedSet<TaskId> all = new TreeSet<>(active);
                    all.addAll(standby);
                    consumers.add(id);
                    consumerPrev.put(id, all);
                }
            }
            if (consumers.isEmpty()) {
                final int threads = c.path("threads").asInt(1);
                for (int i = 1; i <= threads; i++) {
                    consumers.add(pidText + "-" + i);
                    consumerPrev.put(pidText + "-" + i, new TreeSet<>());
                }
            }
            // A task listed both ways is kept as active (scenario.md, tolerated input).
            prevStandby.removeAll(prevActive);
            final SortedMap<TaskId, Long> lags = clientLags(c.path("lags"), prevActive, endOffsetSums);
            final String rack = c.path("rack").isTextual() && !c.path("rack").asText().isEmpty()
                ? c.path("rack").asText() : null;
            final Map<String, String> tags = new HashMap<>();
            c.path("tags").fields().forEachRemaining(e -> tags.put(e.getKey(), e.getValue().asText()));
            result.add(new Client(pid, consumers, consumerPrev, prevActive, prevStandby, lags, rack, tags));
        }
        return result;
    }

    /** The end-offset sum of a task: the largest non-negative lag any client reports for it (0 when none). */
    private Map<TaskId, Long> endOffsetSums(final List<JsonNode> clientNodes) {
        final Map<TaskId, Long> result = new HashMap<>();
        for (final JsonNode c : clientNodes) {
            c.path("lags").fields().forEachRemaining(e -> {
                final TaskId id = TaskId.parse(e.getKey());
                final long lag = e.getValue().asLong();
                if (tasks.containsKey(id) && lag >= 0) {
                    result.merge(id, lag, Math::max);
                }
            });
        }
        return result;
    }

    private SortedMap<TaskId, Long> clientLags(final JsonNode lagsNode, final Set<TaskId> prevActive,
                                               final Map<TaskId, Long> endOffsetSums) {
        final SortedMap<TaskId, Long> lags = new TreeMap<>();
        for (final Task task : tasks.values()) {
            if (!task.hasChangelog()) {
                continue;
            }
            final String key = task.id.toString();
            final Long reported = lagsNode.has(key) ? lagsNode.get(key).asLong() : null;
            final boolean running = reported != null ? reported == -2L : prevActive.contains(task.id);
            final long lag;
            if (!lagsComputed) {
                // End offsets unknown: Kafka yields -3 for everything except running actives.
                lag = running ? -2L : -3L;
            } else if (reported != null) {
                lag = reported;
            } else {
                lag = running ? -2L : endOffsetSums.getOrDefault(task.id, 0L);
            }
            lags.put(task.id, lag);
        }
        return lags;
    }

    Set<TaskId> changelogTaskIds() {
        final Set<TaskId> result = new TreeSet<>();
        tasks.values().stream().filter(Task::hasChangelog).forEach(t -> result.add(t.id));
        return result;
    }
}
