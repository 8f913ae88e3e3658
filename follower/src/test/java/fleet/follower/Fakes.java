package fleet.follower;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.state.HostInfo;

/** Hand-built KIP-924 application states and plans for the tests. */
final class Fakes {

    static final long T0 = 1_767_225_600_000L; // 2026-01-01T00:00:00Z
    static final String[] PIDS = {
        "11111111-1111-4111-8111-111111111111",
        "22222222-2222-4222-8222-222222222222",
        "33333333-3333-4333-8333-333333333333",
    };

    private Fakes() {
    }

    static ProcessId pid(int i) {
        return new ProcessId(UUID.fromString(PIDS[i]));
    }

    static TaskId task(String text) {
        return TaskId.parse(text);
    }

    static SortedSet<TaskId> tasks(String... texts) {
        TreeSet<TaskId> out = new TreeSet<>();
        for (String t : texts) {
            out.add(task(t));
        }
        return out;
    }

    record Info(TaskId id, boolean isStateful, Set<String> stateStoreNames, Set<TaskTopicPartition> topicPartitions)
        implements TaskInfo {
    }

    static final class Client implements KafkaStreamsState {
        final ProcessId processId;
        SortedSet<TaskId> prevActive = new TreeSet<>();
        SortedSet<TaskId> prevStandby = new TreeSet<>();
        final Map<TaskId, Long> lags = new HashMap<>();
        boolean lagsComputed;

        Client(ProcessId processId) {
            this.processId = processId;
        }

        @Override
        public ProcessId processId() {
            return processId;
        }

        @Override
        public int numProcessingThreads() {
            return 1;
        }

        @Override
        public SortedSet<String> consumerClientIds() {
            return new TreeSet<>(List.of("consumer-" + processId));
        }

        @Override
        public SortedSet<TaskId> previousActiveTasks() {
            return prevActive;
        }

        @Override
        public SortedSet<TaskId> previousStandbyTasks() {
            return prevStandby;
        }

        @Override
        public long lagFor(TaskId task) {
            return statefulTasksToLagSums().get(task);
        }

        @Override
        public SortedSet<TaskId> prevTasksByLag(String consumerClientId) {
            return new TreeSet<>(prevActive);
        }

        @Override
        public Map<TaskId, Long> statefulTasksToLagSums() {
            if (!lagsComputed) {
                throw new UnsupportedOperationException("lags not requested");
            }
            return lags;
        }

        @Override
        public Optional<HostInfo> hostInfo() {
            return Optional.empty();
        }

        @Override
        public Map<String, String> clientTags() {
            return Map.of();
        }

        @Override
        public Optional<String> rackId() {
            return Optional.empty();
        }
    }

    /** Tasks 0_0..0_3 stateless and 1_0, 1_1 stateful (changelogged), clients 0..n-1. */
    static final class App implements ApplicationState {
        final Map<TaskId, TaskInfo> tasks = new TreeMap<>();
        final Map<ProcessId, Client> clients = new TreeMap<>();
        final AtomicInteger lagFetches = new AtomicInteger();
        long acceptableRecoveryLag = 10_000;
        int maxWarmups = 2;
        RuntimeException lagFailure;

        App(int clientCount) {
            for (int p = 0; p < 4; p++) {
                tasks.put(new TaskId(0, p), new Info(new TaskId(0, p), false, Set.of(), Set.of()));
            }
            for (int p = 0; p < 2; p++) {
                tasks.put(new TaskId(1, p), new Info(new TaskId(1, p), true, Set.of("store"), Set.of()));
            }
            for (int i = 0; i < clientCount; i++) {
                clients.put(pid(i), new Client(pid(i)));
            }
        }

        Client client(int i) {
            return clients.get(pid(i));
        }

        @Override
        public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(boolean computeTaskLags) {
            if (computeTaskLags) {
                lagFetches.incrementAndGet();
                if (lagFailure != null) {
                    throw lagFailure;
                }
                clients.values().forEach(c -> c.lagsComputed = true);
            }
            return new TreeMap<>(clients);
        }

        @Override
        public AssignmentConfigs assignmentConfigs() {
            return new AssignmentConfigs(acceptableRecoveryLag, maxWarmups, 1, 600_000L, List.of(),
                OptionalInt.empty(), OptionalInt.empty(), "none");
        }

        @Override
        public Map<TaskId, TaskInfo> allTasks() {
            return tasks;
        }
    }

    /** A plan builder: client i gets active/standby task lists. */
    static final class PlanBuilder {
        String runId = "r1";
        long plannedAt = T0;
        OptionalLong inputsAt = OptionalLong.empty();
        final List<Plan.Client> clients = new ArrayList<>();

        PlanBuilder client(int i, List<String> active, List<String> standby, List<String> warmup, Long deadline) {
            clients.add(new Plan.Client(PIDS[i], new TreeSet<>(active), new TreeSet<>(standby), new TreeSet<>(warmup),
                deadline == null ? OptionalLong.empty() : OptionalLong.of(deadline)));
            return this;
        }

        Plan build() {
            Map<UUID, Plan.Client> map = new HashMap<>();
            clients.forEach(c -> map.put(Plan.parseProcessId(c.processIdText()), c));
            return new Plan(runId, plannedAt, plannedAt + 1_000, inputsAt, map);
        }
    }

    /** The plan the tests follow by default: balanced, the stateful actives on their previous owners. */
    static PlanBuilder standardPlan() {
        return new PlanBuilder()
            .client(0, List.of("0_0", "1_0"), List.of("1_1"), List.of(), null)
            .client(1, List.of("0_1", "1_1"), List.of("1_0"), List.of(), null)
            .client(2, List.of("0_2", "0_3"), List.of(), List.of(), null);
    }

    /** Live state matching standardPlan's previous owners: client 0 ran 1_0, client 1 ran 1_1. */
    static App standardApp() {
        App app = new App(3);
        app.client(0).prevActive = tasks("0_0", "1_0");
        app.client(0).prevStandby = tasks("1_1");
        app.client(1).prevActive = tasks("0_1", "1_1");
        app.client(1).prevStandby = tasks("1_0");
        app.client(2).prevActive = tasks("0_2", "0_3");
        app.client(0).lags.putAll(Map.of(task("1_0"), -2L, task("1_1"), 0L));
        app.client(1).lags.putAll(Map.of(task("1_0"), 0L, task("1_1"), -2L));
        app.client(2).lags.putAll(Map.of(task("1_0"), 50_000L, task("1_1"), 50_000L));
        return app;
    }
}
