package fleet.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils.RackAwareOptimizationParams;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.FallbackPriorTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.LegacyTaskAssignor;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Differential oracle: reads one scenario JSON per stdin line (plus "mode", optional "repeat", "warmup",
 * "warmup_ms" and "now_ms"), runs Kafka's own assignor for that mode, and prints one result JSON per line in
 * our result shape, with in-JVM timings of the assignor call (the first call, then after up to "warmup"
 * untimed calls within "warmup_ms", the median of "repeat" warm calls).
 */
public final class KafkaOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private KafkaOracle() {
    }

    /** What one assignor call produced, per client, in Kafka's terms. */
    private static final class Outcome {
        final SortedMap<ProcessId, SortedSet<TaskId>> active = new TreeMap<>();
        final SortedMap<ProcessId, SortedSet<TaskId>> standby = new TreeMap<>();
        final SortedMap<ProcessId, Long> deadlines = new TreeMap<>();
        /** Per client, per consumer (broker member): actives and standbys; only the streams protocol says. */
        final SortedMap<ProcessId, SortedMap<String, List<SortedSet<TaskId>>>> consumers = new TreeMap<>();
        String assignor;
        boolean probing;
        String validationError;
        double elapsedMs;
        /** CPU time of the calling thread in the assignor call, where measured (NaN elsewhere). */
        double cpuMs = Double.NaN;
        ObjectNode rackCost;
    }

    public static void main(final String[] args) throws IOException {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        final PrintWriter out = new PrintWriter(new BufferedWriter(
            new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            out.println(MAPPER.writeValueAsString(handle(line)));
            out.flush();
        }
    }

    private static ObjectNode handle(final String line) {
        final ObjectNode result = MAPPER.createObjectNode();
        result.put("kafka_version", AppInfoParser.getVersion());
        try {
            final JsonNode request = MAPPER.readTree(line);
            final String mode = request.path("mode").asText("high_availability");
            final int repeat = Math.max(0, request.path("repeat").asInt(0));
            final long nowMs = request.path("now_ms").asLong(0L);
            final Scenario scenario = Scenario.parse(request);
            result.put("app_id", scenario.appId);
            result.put("mode", mode);
            if ("streams_sticky".equals(mode)) {
                // The broker-side assignor comes from kafka-group-coordinator, a release of its own here.
                result.put("kafka_version", coordinatorVersion());
            }
            final Outcome first = run(mode, scenario, nowMs);
            // Untimed calls until the JIT has compiled the assignor's paths: up to "warmup" calls, stopped
            // once they have taken "warmup_ms" (a few timed calls after a fresh start still run
            // interpreted or half-compiled code, several times slower than the steady state).
            final int warmupMax = Math.max(0, request.path("warmup").asInt(0));
            final long warmupBudgetNs = Math.max(0L, request.path("warmup_ms").asLong(0L)) * 1_000_000L;
            final long warmupStart = System.nanoTime();
            int warmupCalls = 0;
            while (warmupCalls < warmupMax
                    && (warmupBudgetNs == 0L || System.nanoTime() - warmupStart < warmupBudgetNs)) {
                run(mode, scenario, nowMs);
                warmupCalls++;
            }
            final double[] warm = new double[repeat];
            final double[] warmCpu = new double[repeat];
            for (int i = 0; i < repeat; i++) {
                final Outcome again = run(mode, scenario, nowMs);
                warm[i] = again.elapsedMs;
                warmCpu[i] = again.cpuMs;
            }
            write(result, scenario, first);
            final ObjectNode timing = result.putObject("timing");
            timing.put("first_ms", first.elapsedMs);
            if (repeat > 0) {
                timing.put("warm_median_ms", median(warm));
            } else {
                timing.putNull("warm_median_ms");
            }
            if (!Double.isNaN(first.cpuMs)) {
                // On a shared machine the wall clock mostly measures the scheduler; CPU time does not.
                timing.put("first_cpu_ms", first.cpuMs);
                if (repeat > 0) {
                    timing.put("warm_median_cpu_ms", median(warmCpu));
                }
            }
            timing.put("repeat", repeat);
            timing.put("warmup_calls", warmupCalls);
            result.put("status", "OK");
            result.putNull("exception");
        } catch (final Exception | StackOverflowError e) {
            final StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            result.put("status", "EXCEPTION");
            result.put("exception", e.getClass().getName() + ": " + e.getMessage());
            result.put("trace", trace.toString());
        }
        return result;
    }

    private static double median(final double[] values) {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    }

    /** The kafka-group-coordinator release on the classpath, read from its jar's file name. */
    private static String coordinatorVersion() {
        final String jar = org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor.class
            .getProtectionDomain().getCodeSource().getLocation().getPath();
        final java.util.regex.Matcher m =
            java.util.regex.Pattern.compile("kafka-group-coordinator-([^/]+)\\.jar$").matcher(jar);
        return m.find() ? m.group(1) : "?";
    }

    private static Outcome run(final String mode, final Scenario s, final long nowMs) {
        switch (mode) {
            case "high_availability":
                // Kafka replaces the HA assignor by the fallback when end offsets could not be fetched.
                return s.lagsComputed
                    ? runLegacy(new HighAvailabilityTaskAssignor(), "high_availability", s, nowMs)
                    : runLegacy(new FallbackPriorTaskAssignor(), "fallback_prior", s, nowMs);
            case "fallback_prior":
                return runLegacy(new FallbackPriorTaskAssignor(), "fallback_prior", s, nowMs);
            case "sticky":
                return runSticky(s);
            case "streams_sticky":
                return runStreamsSticky(s);
            case "optimize_rack_active":
                return runOptimizer(s, AssignedTask.Type.ACTIVE);
            case "optimize_rack_standby":
                return runOptimizer(s, AssignedTask.Type.STANDBY);
            default:
                throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    private static Outcome runLegacy(final LegacyTaskAssignor assignor, final String name, final Scenario s,
                                     final long nowMs) {
        final AssignmentConfigs configs = LegacyInputs.assignmentConfigs(s);
        final Map<ProcessId, ClientState> states = LegacyInputs.clientStates(s);
        final Set<TaskId> allTasks = LegacyInputs.allTaskIds(s);
        final Set<TaskId> statefulTasks = LegacyInputs.statefulTaskIds(s, allTasks);
        final long start = System.nanoTime();
        // Building the rack-aware helper is part of Kafka's own assignment work, so it is timed too.
        final boolean probing = assignor.assign(states, allTasks, statefulTasks,
            LegacyInputs.rackAwareTaskAssignor(s, configs), configs);
        final Outcome o = new Outcome();
        o.elapsedMs = (System.nanoTime() - start) / 1e6;
        o.assignor = name;
        o.probing = probing;
        for (final Map.Entry<ProcessId, ClientState> e : states.entrySet()) {
            o.active.put(e.getKey(), new TreeSet<>(e.getValue().activeTasks()));
            o.standby.put(e.getKey(), new TreeSet<>(e.getValue().standbyTasks()));
        }
        if (probing && !o.active.isEmpty()) {
            // Kafka puts the probing deadline on the leader's client; the planner has no leader and uses the
            // smallest process id (POLICY.md 4).
            o.deadlines.put(o.active.firstKey(), nowMs + s.probingRebalanceIntervalMs);
        }
        o.validationError = validate(s, o).name();
        return o;
    }

    private static Outcome runSticky(final Scenario s) {
        final ScenarioApplicationState state = new ScenarioApplicationState(s);
        final long start = System.nanoTime();
        final TaskAssignment assignment = new StickyTaskAssignor().assign(state);
        final Outcome o = new Outcome();
        o.elapsedMs = (System.nanoTime() - start) / 1e6;
        o.assignor = "sticky";
        for (final KafkaStreamsAssignment a : assignment.assignment()) {
            collect(o, a);
            a.followupRebalanceDeadline().ifPresent(d -> o.deadlines.put(a.processId(), d.toEpochMilli()));
        }
        o.probing = !o.deadlines.isEmpty();
        o.validationError = TaskAssignmentUtils.validateTaskAssignment(state, assignment).name();
        return o;
    }

    /** The broker-side StickyTaskAssignor of the streams protocol (kafka-group-coordinator, KIP-1071). */
    private static Outcome runStreamsSticky(final Scenario s) {
        final GroupSpecImpl spec = StreamsStickyInputs.groupSpec(s);
        final TopologyDescriber topology = StreamsStickyInputs.topology(s);
        final java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        final long startCpu = threads.getCurrentThreadCpuTime();
        final long start = System.nanoTime();
        final GroupAssignment assignment =
            new org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor().assign(spec, topology);
        final Outcome o = new Outcome();
        o.elapsedMs = (System.nanoTime() - start) / 1e6;
        o.cpuMs = (threads.getCurrentThreadCpuTime() - startCpu) / 1e6;
        o.assignor = "streams_sticky";
        for (final Scenario.Client c : s.clients) {
            final SortedSet<TaskId> act = o.active.computeIfAbsent(c.processId, k -> new TreeSet<>());
            final SortedSet<TaskId> stb = o.standby.computeIfAbsent(c.processId, k -> new TreeSet<>());
            final SortedMap<String, List<SortedSet<TaskId>>> split =
                o.consumers.computeIfAbsent(c.processId, k -> new TreeMap<>());
            for (final String consumer : c.consumers) {
                final MemberAssignment m = assignment.members().get(consumer);
                final SortedSet<TaskId> memberActive = taskIds(m.activeTasks());
                final SortedSet<TaskId> memberStandby = taskIds(m.standbyTasks());
                act.addAll(memberActive);
                stb.addAll(memberStandby);
                split.put(consumer, List.of(memberActive, memberStandby));
            }
        }
        o.validationError = validate(s, o).name();
        return o;
    }

    private static SortedSet<TaskId> taskIds(final Map<String, Set<Integer>> bySubtopology) {
        final SortedSet<TaskId> ids = new TreeSet<>();
        bySubtopology.forEach((sub, partitions) ->
            partitions.forEach(p -> ids.add(new TaskId(Integer.parseInt(sub), p))));
        return ids;
    }

    private static Outcome runOptimizer(final Scenario s, final AssignedTask.Type type) {
        final ScenarioApplicationState state = new ScenarioApplicationState(s);
        final Map<ProcessId, KafkaStreamsAssignment> assignments = TaskAssignmentUtils.identityAssignment(state);
        final Outcome before = new Outcome();
        assignments.values().forEach(a -> collect(before, a));
        final long start = System.nanoTime();
        if (type == AssignedTask.Type.ACTIVE) {
            TaskAssignmentUtils.optimizeRackAwareActiveTasks(RackAwareOptimizationParams.of(state), assignments);
        } else {
            TaskAssignmentUtils.optimizeRackAwareStandbyTasks(RackAwareOptimizationParams.of(state), assignments);
        }
        final Outcome o = new Outcome();
        o.elapsedMs = (System.nanoTime() - start) / 1e6;
        o.assignor = type == AssignedTask.Type.ACTIVE ? "optimize_rack_active" : "optimize_rack_standby";
        assignments.values().forEach(a -> collect(o, a));
        o.validationError = TaskAssignmentUtils.validateTaskAssignment(state,
            new TaskAssignment(assignments.values())).name();
        o.rackCost = rackCost(s, type, before, o);
        return o;
    }

    private static void collect(final Outcome o, final KafkaStreamsAssignment a) {
        final SortedSet<TaskId> act = o.active.computeIfAbsent(a.processId(), k -> new TreeSet<>());
        final SortedSet<TaskId> stb = o.standby.computeIfAbsent(a.processId(), k -> new TreeSet<>());
        for (final AssignedTask t : a.tasks().values()) {
            (t.type() == AssignedTask.Type.ACTIVE ? act : stb).add(t.id());
        }
    }

    private static org.apache.kafka.streams.processor.assignment.TaskAssignor.AssignmentError validate(
        final Scenario s, final Outcome o) {
        final List<KafkaStreamsAssignment> list = new ArrayList<>();
        for (final ProcessId pid : o.active.keySet()) {
            final Set<AssignedTask> tasks = new HashSet<>();
            o.active.get(pid).forEach(t -> tasks.add(new AssignedTask(t, AssignedTask.Type.ACTIVE)));
            o.standby.get(pid).forEach(t -> tasks.add(new AssignedTask(t, AssignedTask.Type.STANDBY)));
            list.add(KafkaStreamsAssignment.of(pid, tasks));
        }
        return TaskAssignmentUtils.validateTaskAssignment(new ScenarioApplicationState(s), new TaskAssignment(list));
    }

    /**
     * Cross-rack partition counts of scenario.md's optimize-rack result: for actives every partition of the
     * task, for standbys its changelog partitions, that has no replica on the client's rack; null when a client
     * holding a counted task has no rack or a counted partition has no racks.
     */
    private static ObjectNode rackCost(final Scenario s, final AssignedTask.Type type, final Outcome before,
                                       final Outcome after) {
        final boolean active = type == AssignedTask.Type.ACTIVE;
        final ObjectNode cost = MAPPER.createObjectNode();
        cost.put("task_type", type.name());
        putNullable(cost, "traffic_cost", s.trafficCost);
        putNullable(cost, "non_overlap_cost", s.nonOverlapCost);
        putNullable(cost, "cross_rack_partitions_before", crossRack(s, active ? before.active : before.standby,
            active));
        putNullable(cost, "cross_rack_partitions_after", crossRack(s, active ? after.active : after.standby,
            active));
        int moved = 0;
        final SortedMap<ProcessId, SortedSet<TaskId>> b = active ? before.active : before.standby;
        final SortedMap<ProcessId, SortedSet<TaskId>> a = active ? after.active : after.standby;
        for (final Map.Entry<ProcessId, SortedSet<TaskId>> e : a.entrySet()) {
            for (final TaskId t : e.getValue()) {
                if (!b.getOrDefault(e.getKey(), new TreeSet<>()).contains(t)) {
                    moved++;
                }
            }
        }
        cost.put("tasks_moved", moved);
        return cost;
    }

    private static Integer crossRack(final Scenario s, final SortedMap<ProcessId, SortedSet<TaskId>> held,
                                     final boolean active) {
        final Map<ProcessId, String> racks = new TreeMap<>();
        s.clients.forEach(c -> racks.put(c.processId, c.rack));
        int count = 0;
        for (final Map.Entry<ProcessId, SortedSet<TaskId>> e : held.entrySet()) {
            final String rack = racks.get(e.getKey());
            for (final TaskId t : e.getValue()) {
                for (final Scenario.Partition p : s.tasks.get(t).partitions) {
                    if (!active && !p.changelog) {
                        continue;
                    }
                    if (rack == null || p.racks.isEmpty()) {
                        return null;
                    }
                    if (!p.racks.contains(rack)) {
                        count++;
                    }
                }
            }
        }
        return count;
    }

    private static void putNullable(final ObjectNode node, final String key, final Integer value) {
        if (value == null) {
            node.putNull(key);
        } else {
            node.put(key, value);
        }
    }

    private static void write(final ObjectNode result, final Scenario s, final Outcome o) {
        result.put("assignor", o.assignor);
        final ArrayNode clients = result.putArray("assignment");
        final List<ProcessId> pids = new ArrayList<>();
        s.clients.forEach(c -> pids.add(c.processId));
        // For people: sorted by process id as text (scenario.md); every comparison keys on process_id.
        pids.sort(Comparator.comparing(ProcessId::toString));
        final Set<TaskId> placed = new TreeSet<>();
        for (final ProcessId pid : pids) {
            final ObjectNode c = clients.addObject();
            c.put("process_id", pid.toString());
            final ArrayNode act = c.putArray("active");
            o.active.getOrDefault(pid, new TreeSet<>()).forEach(t -> act.add(t.toString()));
            placed.addAll(o.active.getOrDefault(pid, new TreeSet<>()));
            final ArrayNode stb = c.putArray("standby");
            o.standby.getOrDefault(pid, new TreeSet<>()).forEach(t -> stb.add(t.toString()));
            // Kafka does not tell warmups from standbys: its standby lists include them.
            c.putNull("warmup");
            if (o.consumers.containsKey(pid)) {
                final ObjectNode split = c.putObject("consumers");
                o.consumers.get(pid).forEach((consumer, tasks) -> {
                    final ObjectNode m = split.putObject(consumer);
                    final ArrayNode ma = m.putArray("active");
                    tasks.get(0).forEach(t -> ma.add(t.toString()));
                    final ArrayNode ms = m.putArray("standby");
                    tasks.get(1).forEach(t -> ms.add(t.toString()));
                });
            }
            if (o.deadlines.containsKey(pid)) {
                c.put("followup_rebalance_deadline_ms", o.deadlines.get(pid));
            } else {
                c.putNull("followup_rebalance_deadline_ms");
            }
        }
        result.put("probing_rebalance", o.probing);
        result.put("error", o.validationError);
        final ArrayNode unassigned = result.putArray("unassigned");
        s.tasks.keySet().stream().filter(t -> !placed.contains(t)).forEach(t -> unassigned.add(t.toString()));
        if (o.rackCost != null) {
            result.set("rack_cost", o.rackCost);
        }
    }
}
