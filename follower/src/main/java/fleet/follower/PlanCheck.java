package fleet.follower;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.AssignmentError;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;

/**
 * Whether a plan may be followed for the live {@link ApplicationState}, and the assignment to return if so.
 * The checks, in order (the first that fails is the reason given):
 * <ol>
 * <li>age: {@code now - planned_at <= max.plan.age.ms}, and planned_at not more than that in the future;</li>
 * <li>inputs: {@code now - inputs time <= max.input.staleness.ms}, the inputs' time being their collection
 * time when the source knows it ({@link Plan#inputsAtMs()}), else planned_at;</li>
 * <li>members: the plan's process ids are exactly the live ones;</li>
 * <li>tasks: every task of the plan is in the live topology, and every live task is active in the plan;</li>
 * <li>Kafka's own {@link TaskAssignmentUtils#validateTaskAssignment} returns NONE;</li>
 * <li>restoration (only when a stateful task's planned active is not its previous active owner): the lags
 * are fetched, and a planned active on a client that is not caught up (lag unknown or above
 * {@code acceptable.recovery.lag}) while another client is caught up stays with a caught-up client (its
 * previous active owner if caught up, else the least lagging, then the smallest process id); the planned
 * client gets the task as a warmup (standby) while the plan's warmups plus these stay within
 * {@code max.warmup.replicas}, and a probing rebalance is requested on it at now + probing.rebalance.interval.ms.
 * The plan's own warmups are kept as standbys, as Kafka's HighAvailabilityTaskAssignor does.</li>
 * </ol>
 * Follow-up rebalances: a client's planned deadline is kept when it is still ahead; a deadline already passed
 * is re-derived as now + (deadline - planned_at), the delay the plan asked for, so that an old plan does not
 * cause an immediate rebalance at every rebalance.
 */
final class PlanCheck {

    static final long UNKNOWN_LAG = -3L;
    static final long RUNNING_ACTIVE = -2L;

    record Outcome(TaskAssignment assignment, String summary, String reason) {
        boolean followed() {
            return assignment != null;
        }

        static Outcome fallBack(String reason) {
            return new Outcome(null, null, reason);
        }
    }

    private PlanCheck() {
    }

    static Outcome check(Plan plan, ApplicationState state, long nowMs, long maxPlanAgeMs, long maxInputStalenessMs) {
        String run = "run " + plan.runId();
        long age = nowMs - plan.plannedAtMs();
        if (age > maxPlanAgeMs) {
            return Outcome.fallBack(run + " was planned " + age + " ms ago (" + FollowerConfig.MAX_PLAN_AGE_MS
                + " = " + maxPlanAgeMs + ")");
        }
        if (-age > maxPlanAgeMs) {
            return Outcome.fallBack(run + " is planned " + -age + " ms in the future (clock skew beyond "
                + FollowerConfig.MAX_PLAN_AGE_MS + " = " + maxPlanAgeMs + ")");
        }
        long inputsAt = plan.inputsAtMs().orElse(plan.plannedAtMs());
        String inputsWhat = plan.inputsAtMs().isPresent() ? "collected" : "planned (collection time unknown)";
        if (nowMs - inputsAt > maxInputStalenessMs) {
            return Outcome.fallBack(run + "'s inputs were " + inputsWhat + " " + (nowMs - inputsAt) + " ms ago ("
                + FollowerConfig.MAX_INPUT_STALENESS_MS + " = " + maxInputStalenessMs + ")");
        }

        Map<ProcessId, KafkaStreamsState> live = state.kafkaStreamsStates(false);
        Map<ProcessId, Plan.Client> planned = new TreeMap<>();
        plan.clients().forEach((uuid, client) -> planned.put(new ProcessId(uuid), client));
        if (!planned.keySet().equals(live.keySet())) {
            Set<ProcessId> notPlanned = new TreeSet<>(live.keySet());
            notPlanned.removeAll(planned.keySet());
            Set<ProcessId> gone = new TreeSet<>(planned.keySet());
            gone.removeAll(live.keySet());
            return Outcome.fallBack(run + " was planned for other members: live but not planned " + notPlanned
                + ", planned but not live " + gone);
        }

        Map<TaskId, ProcessId> activeOwner = new HashMap<>();
        Map<ProcessId, Map<TaskId, AssignedTask.Type>> tasks = new TreeMap<>();
        Set<TaskId> unknown = new TreeSet<>();
        Set<TaskId> planWarmups = new HashSet<>();
        for (Map.Entry<ProcessId, Plan.Client> entry : planned.entrySet()) {
            Map<TaskId, AssignedTask.Type> mine = new TreeMap<>();
            for (String text : entry.getValue().active()) {
                TaskId task = TaskId.parse(text);
                mine.put(task, AssignedTask.Type.ACTIVE);
                activeOwner.putIfAbsent(task, entry.getKey());
                if (!state.allTasks().containsKey(task)) {
                    unknown.add(task);
                }
            }
            for (String text : entry.getValue().standby()) {
                TaskId task = TaskId.parse(text);
                mine.putIfAbsent(task, AssignedTask.Type.STANDBY);
                if (!state.allTasks().containsKey(task)) {
                    unknown.add(task);
                }
            }
            entry.getValue().warmup().forEach(text -> planWarmups.add(TaskId.parse(text)));
            tasks.put(entry.getKey(), mine);
        }
        Set<TaskId> unassigned = new TreeSet<>(state.allTasks().keySet());
        unassigned.removeAll(activeOwner.keySet());
        if (!unknown.isEmpty() || !unassigned.isEmpty()) {
            return Outcome.fallBack(run + " was planned for another topology: planned tasks not live " + unknown
                + ", live tasks without a planned active " + unassigned);
        }
        AssignmentError error = TaskAssignmentUtils.validateTaskAssignment(state, assignment(tasks, Map.of()));
        if (error != AssignmentError.NONE) {
            return Outcome.fallBack(run + " fails Kafka's validation: " + error);
        }

        AssignmentConfigs configs = state.assignmentConfigs();
        Map<ProcessId, Instant> deadlines = new HashMap<>();
        List<String> kept = new ArrayList<>();
        if (movesStatefulActive(state, live, activeOwner)) {
            Map<ProcessId, KafkaStreamsState> withLags = state.kafkaStreamsStates(true);
            Map<ProcessId, Map<TaskId, Long>> lags = new HashMap<>();
            withLags.forEach((pid, client) -> lags.put(pid, client.statefulTasksToLagSums()));
            int warmups = planWarmups.size();
            for (Map.Entry<TaskId, ProcessId> entry : new TreeMap<>(activeOwner).entrySet()) {
                TaskId task = entry.getKey();
                ProcessId target = entry.getValue();
                if (!state.allTasks().get(task).isStateful() || caughtUp(lags.get(target), task, configs)) {
                    continue;
                }
                ProcessId holder = caughtUpHolder(withLags, lags, task, configs);
                if (holder == null) {
                    continue; // nobody has the state: restoring is unavoidable wherever it goes
                }
                tasks.get(target).remove(task);
                tasks.get(holder).put(task, AssignedTask.Type.ACTIVE);
                String note = task + " stays on " + holder;
                if (warmups < configs.maxWarmupReplicas()) {
                    tasks.get(target).put(task, AssignedTask.Type.STANDBY);
                    warmups++;
                    note += " (warmup on " + target + ")";
                    deadlines.merge(target, Instant.ofEpochMilli(saturatedAdd(nowMs,
                        configs.probingRebalanceIntervalMs())), (a, b) -> a.isBefore(b) ? a : b);
                }
                kept.add(note);
            }
        }

        for (Map.Entry<ProcessId, Plan.Client> entry : planned.entrySet()) {
            if (entry.getValue().followupDeadlineMs().isEmpty()) {
                continue;
            }
            long deadline = entry.getValue().followupDeadlineMs().getAsLong();
            if (deadline <= nowMs) {
                long delay = deadline - plan.plannedAtMs();
                deadline = saturatedAdd(nowMs, delay > 0 ? delay : configs.probingRebalanceIntervalMs());
            }
            deadlines.merge(entry.getKey(), Instant.ofEpochMilli(deadline), (a, b) -> a.isBefore(b) ? a : b);
        }
        TaskAssignment result = assignment(tasks, deadlines);
        error = TaskAssignmentUtils.validateTaskAssignment(state, result);
        if (error != AssignmentError.NONE) {
            return Outcome.fallBack(run + " fails Kafka's validation after keeping caught-up actives: " + error);
        }
        String summary = run + " (planned " + age + " ms ago, inputs " + inputsWhat + " " + (nowMs - inputsAt)
            + " ms ago): " + planned.size() + " clients, "
            + activeOwner.size() + " tasks, " + planWarmups.size() + " planned warmups"
            + (deadlines.isEmpty() ? "" : ", follow-up rebalance at " + deadlines.values().stream().min(Instant::compareTo).get())
            + (kept.isEmpty() ? "" : "; actives kept on caught-up clients: " + String.join(", ", kept));
        return new Outcome(result, summary, null);
    }

    private static boolean movesStatefulActive(ApplicationState state, Map<ProcessId, KafkaStreamsState> live,
                                               Map<TaskId, ProcessId> activeOwner) {
        for (Map.Entry<TaskId, ProcessId> entry : activeOwner.entrySet()) {
            if (state.allTasks().get(entry.getKey()).isStateful()
                && !live.get(entry.getValue()).previousActiveTasks().contains(entry.getKey())) {
                return true;
            }
        }
        return false;
    }

    /** Kafka's notion: a running active (-2) or a known lag within acceptable.recovery.lag. No lag entry means
     * the task has no changelog: nothing to restore. */
    static boolean caughtUp(Map<TaskId, Long> lags, TaskId task, AssignmentConfigs configs) {
        Long lag = lags.get(task);
        if (lag == null) {
            return true;
        }
        return lag == RUNNING_ACTIVE || (lag != UNKNOWN_LAG && lag >= 0 && lag <= configs.acceptableRecoveryLag());
    }

    private static ProcessId caughtUpHolder(Map<ProcessId, KafkaStreamsState> clients,
                                            Map<ProcessId, Map<TaskId, Long>> lags, TaskId task,
                                            AssignmentConfigs configs) {
        ProcessId best = null;
        long bestLag = Long.MAX_VALUE;
        for (Map.Entry<ProcessId, Map<TaskId, Long>> entry : new TreeMap<>(lags).entrySet()) {
            Long lag = entry.getValue().get(task);
            if (lag == null || !caughtUp(entry.getValue(), task, configs)) {
                continue;
            }
            if (clients.get(entry.getKey()).previousActiveTasks().contains(task)) {
                return entry.getKey();
            }
            long rank = lag == RUNNING_ACTIVE ? -1 : lag;
            if (rank < bestLag) {
                best = entry.getKey();
                bestLag = rank;
            }
        }
        return best;
    }

    private static TaskAssignment assignment(Map<ProcessId, Map<TaskId, AssignedTask.Type>> tasks,
                                             Map<ProcessId, Instant> deadlines) {
        List<KafkaStreamsAssignment> out = new ArrayList<>();
        tasks.forEach((pid, mine) -> {
            Set<AssignedTask> assigned = new HashSet<>();
            mine.forEach((task, type) -> assigned.add(new AssignedTask(task, type)));
            KafkaStreamsAssignment one = KafkaStreamsAssignment.of(pid, assigned);
            Instant deadline = deadlines.get(pid);
            out.add(deadline == null ? one : one.withFollowupRebalance(deadline));
        });
        return new TaskAssignment(out);
    }

    static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }
}
