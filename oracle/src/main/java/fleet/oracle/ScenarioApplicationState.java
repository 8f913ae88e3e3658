package fleet.oracle;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.state.HostInfo;

import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/** The KIP-924 view of a scenario, as Kafka's leader would present it to a TaskAssignor. */
final class ScenarioApplicationState implements ApplicationState {

    private final AssignmentConfigs configs;
    private final Map<ProcessId, KafkaStreamsState> states;
    private final Map<TaskId, TaskInfo> tasks;

    ScenarioApplicationState(final Scenario s) {
        configs = LegacyInputs.assignmentConfigs(s);
        // Kafka keeps both in hash maps; ours are keyed by the same classes, so their iteration order is the same.
        states = new HashMap<>();
        for (final Scenario.Client c : s.clients) {
            states.put(c.processId, new ClientView(c));
        }
        tasks = new HashMap<>();
        for (final Scenario.Task t : s.tasks.values()) {
            tasks.put(t.id, new Info(t));
        }
    }

    @Override
    public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(final boolean computeTaskLags) {
        return Collections.unmodifiableMap(states);
    }

    @Override
    public AssignmentConfigs assignmentConfigs() {
        return configs;
    }

    @Override
    public Map<TaskId, TaskInfo> allTasks() {
        return Collections.unmodifiableMap(tasks);
    }

    private static final class Info implements TaskInfo {
        private final Scenario.Task task;
        private final Set<TaskTopicPartition> partitions;

        Info(final Scenario.Task task) {
            this.task = task;
            final Set<TaskTopicPartition> ps = new HashSet<>();
            for (final Scenario.Partition p : task.partitions) {
                ps.add(new Part(p));
            }
            this.partitions = Collections.unmodifiableSet(ps);
        }

        @Override
        public TaskId id() {
            return task.id;
        }

        @Override
        public boolean isStateful() {
            return task.stateful;
        }

        @Override
        public Set<String> stateStoreNames() {
            return Collections.unmodifiableSet(task.stores);
        }

        @Override
        public Set<TaskTopicPartition> topicPartitions() {
            return partitions;
        }
    }

    private static final class Part implements TaskTopicPartition {
        private final TopicPartition tp;
        private final boolean source;
        private final boolean changelog;
        private final Optional<Set<String>> racks;

        Part(final Scenario.Partition p) {
            tp = new TopicPartition(p.topic, p.partition);
            source = p.source;
            changelog = p.changelog;
            racks = p.racks.isEmpty() ? Optional.empty() : Optional.of(Collections.unmodifiableSet(
                new HashSet<>(p.racks)));
        }

        @Override
        public TopicPartition topicPartition() {
            return tp;
        }

        @Override
        public boolean isSource() {
            return source;
        }

        @Override
        public boolean isChangelog() {
            return changelog;
        }

        @Override
        public Optional<Set<String>> rackIds() {
            return racks;
        }

        @Override
        public boolean equals(final Object o) {
            if (!(o instanceof Part)) {
                return false;
            }
            final Part other = (Part) o;
            return tp.equals(other.tp) && source == other.source && changelog == other.changelog;
        }

        @Override
        public int hashCode() {
            return Objects.hash(tp, source, changelog);
        }
    }

    private static final class ClientView implements KafkaStreamsState {
        private final Scenario.Client client;

        ClientView(final Scenario.Client client) {
            this.client = client;
        }

        @Override
        public ProcessId processId() {
            return client.processId;
        }

        @Override
        public int numProcessingThreads() {
            return client.consumers.size();
        }

        @Override
        public SortedSet<String> consumerClientIds() {
            return Collections.unmodifiableSortedSet(new TreeSet<>(client.consumers));
        }

        @Override
        public SortedSet<TaskId> previousActiveTasks() {
            return Collections.unmodifiableSortedSet(client.prevActive);
        }

        @Override
        public SortedSet<TaskId> previousStandbyTasks() {
            return Collections.unmodifiableSortedSet(client.prevStandby);
        }

        @Override
        public long lagFor(final TaskId task) {
            final Long lag = client.lags.get(task);
            if (lag == null) {
                throw new IllegalStateException("No lag for task " + task + " on " + client.processId);
            }
            return lag;
        }

        @Override
        public SortedSet<TaskId> prevTasksByLag(final String consumerClientId) {
            final Comparator<TaskId> byLag = Comparator.<TaskId>comparingLong(client.lags::get)
                .thenComparing(Comparator.naturalOrder());
            final SortedSet<TaskId> result = new TreeSet<>(byLag);
            for (final TaskId t : client.consumerPrevTasks.getOrDefault(consumerClientId, new TreeSet<>())) {
                if (client.lags.containsKey(t)) {
                    result.add(t);
                }
            }
            return result;
        }

        @Override
        public Map<TaskId, Long> statefulTasksToLagSums() {
            return Collections.unmodifiableMap(client.lags);
        }

        @Override
        public Optional<HostInfo> hostInfo() {
            return Optional.empty();
        }

        @Override
        public Map<String, String> clientTags() {
            return Collections.unmodifiableMap(client.tags);
        }

        @Override
        public Optional<String> rackId() {
            return Optional.ofNullable(client.rack);
        }
    }
}
