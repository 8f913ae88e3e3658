package fleet.oracle;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.InternalTopicManager;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * Builds what Kafka's leader hands to a legacy (ClientState-based) assignor: one ClientState per client and a
 * RackAwareTaskAssignor fed with cluster metadata that carries the scenario's partition racks.
 */
final class LegacyInputs {

    private static final StreamsConfig STREAMS_CONFIG = streamsConfig();

    private LegacyInputs() {
    }

    private static StreamsConfig streamsConfig() {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "kafka-oracle");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        return new StreamsConfig(props);
    }

    static AssignmentConfigs assignmentConfigs(final Scenario s) {
        return new AssignmentConfigs(s.acceptableRecoveryLag, s.maxWarmupReplicas, s.numStandbyReplicas,
            s.probingRebalanceIntervalMs, s.rackAwareAssignmentTags,
            s.trafficCost == null ? OptionalInt.empty() : OptionalInt.of(s.trafficCost),
            s.nonOverlapCost == null ? OptionalInt.empty() : OptionalInt.of(s.nonOverlapCost),
            s.strategy);
    }

    /** Fresh client states (the assignors mutate them), in a HashMap as the leader builds it. */
    static Map<ProcessId, ClientState> clientStates(final Scenario s) {
        final Map<ProcessId, ClientState> states = new HashMap<>();
        for (final Scenario.Client c : s.clients) {
            // The lag map is exactly the scenario's lags for every task with a changelog, which is what
            // ClientState.computeTaskLags produces from offset sums and end-offset sums.
            states.put(c.processId, new ClientState(c.prevActive, c.prevStandby, new HashMap<>(c.lags),
                c.tags, c.consumers.size(), c.processId));
        }
        return states;
    }

    /** All tasks, added one by one in TaskId order to a HashSet (the legacy sticky assignor iterates it). */
    static Set<TaskId> allTaskIds(final Scenario s) {
        final Set<TaskId> all = new HashSet<>();
        for (final TaskId id : s.tasks.keySet()) {
            all.add(id);
        }
        return all;
    }

    /**
     * The tasks with a changelog, collected by walking {@link #allTaskIds} in its hash order into a new HashSet.
     * The legacy sticky assignor places standbys in this set's iteration order; building it this way
     * reproduces Kafka's answers in shared/scenarios/kafka/ for FallbackPriorTaskAssignor (example-007
     * needs it).
     */
    static Set<TaskId> statefulTaskIds(final Scenario s, final Set<TaskId> allTaskIds) {
        final Set<TaskId> changelogTasks = s.changelogTaskIds();
        final Set<TaskId> stateful = new HashSet<>();
        for (final TaskId id : allTaskIds) {
            if (changelogTasks.contains(id)) {
                stateful.add(id);
            }
        }
        return stateful;
    }

    /** A fresh RackAwareTaskAssignor (it caches its enablement decision, so one per assignor call). */
    static RackAwareTaskAssignor rackAwareTaskAssignor(final Scenario s, final AssignmentConfigs configs) {
        final Map<String, Node> nodesByRack = new TreeMap<>();
        final Node noRackNode = new Node(0, "broker-0", 9092);
        final List<Node> nodes = new ArrayList<>();
        nodes.add(noRackNode);
        for (final Scenario.Task t : s.tasks.values()) {
            for (final Scenario.Partition p : t.partitions) {
                for (final String rack : p.racks) {
                    nodesByRack.computeIfAbsent(rack, r -> {
                        final Node n = new Node(nodes.size(), "broker-" + nodes.size(), 9092, r);
                        nodes.add(n);
                        return n;
                    });
                }
            }
        }
        final Map<TaskId, Set<TopicPartition>> sourcePartitions = new HashMap<>();
        final Map<TaskId, Set<TopicPartition>> changelogPartitions = new HashMap<>();
        final Map<Subtopology, Set<TaskId>> tasksForSubtopology = new HashMap<>();
        final Map<TopicPartition, PartitionInfo> sourceInfos = new HashMap<>();
        final Map<String, Map<Integer, TopicPartitionInfo>> changelogInfos = new HashMap<>();
        for (final Scenario.Task t : s.tasks.values()) {
            final Set<TopicPartition> src = new HashSet<>();
            final Set<TopicPartition> chg = new HashSet<>();
            for (final Scenario.Partition p : t.partitions) {
                final TopicPartition tp = new TopicPartition(p.topic, p.partition);
                final List<Node> replicas = new ArrayList<>();
                for (final String rack : p.racks) {
                    replicas.add(nodesByRack.get(rack));
                }
                if (replicas.isEmpty()) {
                    // Unknown racks: a replica on a broker without a rack, which disables the optimizer.
                    replicas.add(noRackNode);
                }
                if (p.source) {
                    src.add(tp);
                    final Node[] arr = replicas.toArray(new Node[0]);
                    sourceInfos.put(tp, new PartitionInfo(p.topic, p.partition, arr[0], arr, arr));
                }
                if (p.changelog) {
                    chg.add(tp);
                    changelogInfos.computeIfAbsent(p.topic, k -> new TreeMap<>()).put(p.partition,
                        new TopicPartitionInfo(p.partition, replicas.get(0), replicas, replicas));
                }
            }
            sourcePartitions.put(t.id, src);
            if (!chg.isEmpty()) {
                changelogPartitions.put(t.id, chg);
            }
            tasksForSubtopology.computeIfAbsent(new Subtopology(t.id.subtopology(), t.id.topologyName()),
                k -> new HashSet<>()).add(t.id);
        }
        final Cluster cluster = new Cluster("oracle-cluster", nodes, new ArrayList<>(sourceInfos.values()),
            Collections.emptySet(), Collections.emptySet());
        final Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer = new HashMap<>();
        for (final Scenario.Client c : s.clients) {
            final Map<String, Optional<String>> byConsumer = new HashMap<>();
            for (final String consumer : c.consumers) {
                byConsumer.put(consumer, Optional.ofNullable(c.rack));
            }
            racksForProcessConsumer.put(c.processId, byConsumer);
        }
        return new RackAwareTaskAssignor(cluster, sourcePartitions, changelogPartitions, tasksForSubtopology,
            racksForProcessConsumer, new ScenarioTopicManager(changelogInfos), configs, Time.SYSTEM);
    }

    /** Answers the "describe changelog topics" call of the rack-aware assignor from the scenario. */
    private static final class ScenarioTopicManager extends InternalTopicManager {
        private final Map<String, Map<Integer, TopicPartitionInfo>> changelogInfos;

        ScenarioTopicManager(final Map<String, Map<Integer, TopicPartitionInfo>> changelogInfos) {
            super(Time.SYSTEM, null, STREAMS_CONFIG);
            this.changelogInfos = changelogInfos;
        }

        @Override
        public Map<String, List<TopicPartitionInfo>> getTopicPartitionInfo(final Set<String> topics) {
            final Map<String, List<TopicPartitionInfo>> result = new HashMap<>();
            for (final String topic : topics) {
                final Map<Integer, TopicPartitionInfo> infos = changelogInfos.get(topic);
                if (infos != null) {
                    result.put(topic, new ArrayList<>(infos.values()));
                }
            }
            return result;
        }
    }
}
