package fleet.follower;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.UUID;

/**
 * Finds an application's plan in the output tables (docs/tables.md) without ever reading a run being written.
 *
 * <p>The job writes {@code assignment_results}, {@code assignments} and {@code client_assignments} first and the
 * {@code runs} row last; a rerun of a run id first deletes its {@code runs} row. So: read {@code runs}, take the
 * newest COMPLETE runs (by planned_at, then completed_at, then run_id), and for each read the application's
 * {@code assignment_results} row of that run (one partition, one application) until one says {@code OK}; read
 * that run's {@code client_assignments} and {@code assignments} rows of the application; then read {@code runs}
 * again: the run must still be COMPLETE with the same completed_at, or a rerun replaced rows while they were
 * being read and the whole lookup is repeated (at most {@value #ATTEMPTS} times, then an error).
 */
final class PlanReader {

    static final int ATTEMPTS = 3;
    /** How many of the newest complete runs are looked at for an OK result of the application. */
    static final int MAX_RUNS_SCANNED = 20;

    private static final List<String> RUN_COLUMNS =
        List.of("run_id", "planned_at", "status", "completed_at", "input_versions");

    private final PlanTables tables;

    PlanReader(PlanTables tables) {
        this.tables = tables;
    }

    record Run(String runId, long plannedAtMs, long completedAtMs, Map<String, Long> inputVersions) {
    }

    List<Run> completeRuns() throws Exception {
        List<Run> runs = new ArrayList<>();
        for (Map<String, Object> row : tables.rows("runs", null, null, RUN_COLUMNS)) {
            if (!"COMPLETE".equals(row.get("status")) || row.get("run_id") == null || row.get("planned_at") == null) {
                continue;
            }
            Long completed = (Long) row.get("completed_at");
            @SuppressWarnings("unchecked")
            Map<String, Long> versions = (Map<String, Long>) row.get("input_versions");
            runs.add(new Run((String) row.get("run_id"), (Long) row.get("planned_at"),
                completed == null ? Long.MIN_VALUE : completed, versions == null ? Map.of() : versions));
        }
        runs.sort(Comparator.comparingLong(Run::plannedAtMs).thenComparingLong(Run::completedAtMs)
            .thenComparing(Run::runId).reversed());
        return runs;
    }

    Optional<Plan> latestPlan(String appId) throws Exception {
        for (int attempt = 1; ; attempt++) {
            Optional<Run> chosen = Optional.empty();
            for (Run run : completeRuns().stream().limit(MAX_RUNS_SCANNED).toList()) {
                List<Map<String, Object>> results =
                    tables.rows("assignment_results", run.runId(), appId, List.of("run_id", "app_id", "status"));
                if (results.stream().anyMatch(r -> "OK".equals(r.get("status")))) {
                    chosen = Optional.of(run);
                    break;
                }
            }
            if (chosen.isEmpty()) {
                return Optional.empty();
            }
            Run run = chosen.get();
            List<Map<String, Object>> clientRows = tables.rows("client_assignments", run.runId(), appId,
                List.of("run_id", "app_id", "process_id", "active_tasks", "standby_tasks",
                    "followup_rebalance_deadline"));
            List<Map<String, Object>> taskRows = tables.rows("assignments", run.runId(), appId,
                List.of("run_id", "app_id", "process_id", "task_id", "task_type", "is_warmup"));
            boolean unchanged = completeRuns().stream().anyMatch(r -> r.runId().equals(run.runId())
                && r.completedAtMs() == run.completedAtMs());
            if (unchanged) {
                OptionalLong inputsAt = tables.inputsAt(appId, run.inputVersions());
                return Optional.of(assemble(run, inputsAt, clientRows, taskRows));
            }
            if (attempt >= ATTEMPTS) {
                throw new IllegalStateException("run " + run.runId() + " was rewritten while being read ("
                    + ATTEMPTS + " attempts)");
            }
        }
    }

    @SuppressWarnings("unchecked")
    static Plan assemble(Run run, OptionalLong inputsAt, List<Map<String, Object>> clientRows,
                         List<Map<String, Object>> taskRows) {
        if (clientRows.isEmpty()) {
            throw new IllegalStateException("run " + run.runId() + " has an OK result but no client_assignments rows");
        }
        Map<UUID, String> spelling = new HashMap<>();
        Map<UUID, TreeSet<String>[]> fromTasks = new HashMap<>();
        for (Map<String, Object> row : taskRows) {
            String text = Objects.requireNonNull((String) row.get("process_id"), "assignments.process_id");
            UUID pid = Plan.parseProcessId(text);
            TreeSet<String>[] sets = fromTasks.computeIfAbsent(pid,
                k -> new TreeSet[] {new TreeSet<>(), new TreeSet<>(), new TreeSet<>()});
            String task = Objects.requireNonNull((String) row.get("task_id"), "assignments.task_id");
            String type = String.valueOf(row.get("task_type"));
            switch (type) {
                case "ACTIVE" -> sets[0].add(task);
                case "STANDBY" -> {
                    sets[1].add(task);
                    if (Boolean.TRUE.equals(row.get("is_warmup"))) {
                        sets[2].add(task);
                    }
                }
                default -> throw new IllegalStateException("assignments.task_type " + type + " for " + task);
            }
        }
        Map<UUID, Plan.Client> clients = new HashMap<>();
        for (Map<String, Object> row : clientRows) {
            String text = Objects.requireNonNull((String) row.get("process_id"), "client_assignments.process_id");
            UUID pid = Plan.parseProcessId(text);
            if (spelling.put(pid, text) != null) {
                throw new IllegalStateException("client " + text + " listed twice in client_assignments");
            }
            TreeSet<String> active = new TreeSet<>(listOf(row.get("active_tasks")));
            TreeSet<String> standby = new TreeSet<>(listOf(row.get("standby_tasks")));
            TreeSet<String>[] sets = fromTasks.getOrDefault(pid,
                new TreeSet[] {new TreeSet<>(), new TreeSet<>(), new TreeSet<>()});
            if (!active.equals(sets[0]) || !standby.equals(sets[1])) {
                throw new IllegalStateException("client " + text + ": client_assignments and assignments disagree");
            }
            Long deadline = (Long) row.get("followup_rebalance_deadline");
            clients.put(pid, new Plan.Client(text, active, standby, sets[2],
                deadline == null ? OptionalLong.empty() : OptionalLong.of(deadline)));
        }
        if (!clients.keySet().containsAll(fromTasks.keySet())) {
            throw new IllegalStateException("assignments name a client without a client_assignments row");
        }
        return new Plan(run.runId(), run.plannedAtMs(), run.completedAtMs(), inputsAt, clients);
    }

    private static List<String> listOf(Object value) {
        if (value == null) {
            return List.of();
        }
        @SuppressWarnings("unchecked")
        List<String> list = (List<String>) value;
        return list;
    }
}
