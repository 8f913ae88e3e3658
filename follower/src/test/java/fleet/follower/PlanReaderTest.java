package fleet.follower;

import static fleet.follower.Fakes.PIDS;
import static fleet.follower.Fakes.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;

import org.junit.jupiter.api.Test;

/** The run choice and the never-half-written guarantee, on in-memory tables (Delta itself: DeltaPlanSourceTest). */
class PlanReaderTest {

    /** In-memory output tables; `onRunsRead` may change them between reads (a concurrent writer). */
    static final class Tables implements PlanTables {
        final Map<String, List<Map<String, Object>>> rows = new HashMap<>();
        final List<String> reads = new ArrayList<>();
        Runnable onRunsRead = () -> { };

        Tables() {
            for (String t : List.of("runs", "assignment_results", "client_assignments", "assignments")) {
                rows.put(t, new ArrayList<>());
            }
        }

        @Override
        public List<Map<String, Object>> rows(String table, String runId, String appId, List<String> columns) {
            reads.add(table + (runId == null ? "" : "/" + runId));
            List<Map<String, Object>> out = new ArrayList<>();
            for (Map<String, Object> row : rows.get(table)) {
                if ((runId == null || runId.equals(row.get("run_id"))) && (appId == null || appId.equals(row.get("app_id")))) {
                    out.add(new HashMap<>(row));
                }
            }
            if (table.equals("runs")) {
                onRunsRead.run();
            }
            return out;
        }

        void run(String runId, long plannedAt, long completedAt, String status) {
            rows.get("runs").removeIf(r -> r.get("run_id").equals(runId));
            Map<String, Object> row = new HashMap<>();
            row.put("run_id", runId);
            row.put("planned_at", plannedAt);
            row.put("completed_at", completedAt);
            row.put("status", status);
            row.put("input_versions", Map.of("client_subscriptions", 3L));
            rows.get("runs").add(row);
        }

        /** One application's rows of one run: client 0 runs `task` active (optionally a warmup on client 1). */
        void plan(String runId, String appId, String status, String task, boolean warmup) {
            rows.get("assignment_results").add(new HashMap<>(Map.of("run_id", runId, "app_id", appId, "status", status)));
            if (!status.equals("OK")) {
                return;
            }
            Map<String, Object> c0 = new HashMap<>(Map.of("run_id", runId, "app_id", appId, "process_id", PIDS[0],
                "active_tasks", List.of(task), "standby_tasks", List.of()));
            c0.put("followup_rebalance_deadline", warmup ? T0 + 600_000L : null);
            Map<String, Object> c1 = new HashMap<>(Map.of("run_id", runId, "app_id", appId, "process_id", PIDS[1],
                "active_tasks", List.of(), "standby_tasks", warmup ? List.of(task) : List.of()));
            c1.put("followup_rebalance_deadline", null);
            rows.get("client_assignments").addAll(List.of(c0, c1));
            rows.get("assignments").add(new HashMap<>(Map.of("run_id", runId, "app_id", appId, "process_id", PIDS[0],
                "task_id", task, "task_type", "ACTIVE", "is_warmup", false)));
            if (warmup) {
                rows.get("assignments").add(new HashMap<>(Map.of("run_id", runId, "app_id", appId,
                    "process_id", PIDS[1], "task_id", task, "task_type", "STANDBY", "is_warmup", true)));
            }
        }

        void dropRun(String runId) {
            rows.values().forEach(list -> list.removeIf(r -> runId.equals(r.get("run_id"))));
        }
    }

    static String activeOfClient0(Optional<Plan> plan) {
        return plan.orElseThrow().clients().get(UUID.fromString(PIDS[0])).active().first();
    }

    @Test
    void theNewestCompleteRunWithAnOkResultForTheApplicationWins() throws Exception {
        Tables t = new Tables();
        t.run("r1", T0, T0 + 10, "COMPLETE");
        t.plan("r1", "app-a", "OK", "0_1", true);
        t.run("r2", T0 + 1000, T0 + 1010, "COMPLETE");
        t.plan("r2", "app-a", "INVALID_INPUT", "0_2", false);
        t.plan("r2", "app-b", "OK", "0_2", false);
        t.run("r0", T0 - 1000, T0 - 990, "COMPLETE");
        t.plan("r0", "app-a", "OK", "0_0", false);
        // r3 is newer and OK for app-a, but its runs row is not there yet: being written.
        t.plan("r3", "app-a", "OK", "0_3", false);
        Optional<Plan> plan = new PlanReader(t).latestPlan("app-a");
        assertEquals("r1", plan.orElseThrow().runId());
        assertEquals(List.of("runs", "assignment_results/r2", "assignment_results/r1", "client_assignments/r1",
            "assignments/r1", "runs"), t.reads, "only the chosen run's rows of the plan are read");
        assertEquals("0_1", activeOfClient0(plan));
        Plan.Client c1 = plan.get().clients().get(UUID.fromString(PIDS[1]));
        assertEquals(List.of("0_1"), List.copyOf(c1.warmup()));
        assertEquals(OptionalLong.of(T0 + 600_000L), plan.get().clients().get(UUID.fromString(PIDS[0])).followupDeadlineMs());
        assertEquals("r2", new PlanReader(t).latestPlan("app-b").orElseThrow().runId());
        assertEquals(Optional.empty(), new PlanReader(t).latestPlan("app-c"));
    }

    @Test
    void aRunNotMarkedCompleteIsIgnored() throws Exception {
        Tables t = new Tables();
        t.run("r1", T0, T0 + 10, "COMPLETE");
        t.plan("r1", "app-a", "OK", "0_1", false);
        t.run("r2", T0 + 1000, T0 + 1010, "RUNNING");
        t.plan("r2", "app-a", "OK", "0_2", false);
        assertEquals("r1", new PlanReader(t).latestPlan("app-a").orElseThrow().runId());
    }

    @Test
    void aRerunReplacingTheChosenRunWhileItIsReadIsReadAgain() throws Exception {
        Tables t = new Tables();
        t.run("r1", T0, T0 + 10, "COMPLETE");
        t.plan("r1", "app-a", "OK", "0_1", false);
        int[] runsReads = {0};
        t.onRunsRead = () -> {
            if (++runsReads[0] == 1) {
                // after the first runs read, a rerun of r1 replaces its rows and completes again
                t.dropRun("r1");
                t.plan("r1", "app-a", "OK", "0_7", false);
                t.run("r1", T0, T0 + 20, "COMPLETE");
            }
        };
        Optional<Plan> plan = new PlanReader(t).latestPlan("app-a");
        assertEquals("0_7", activeOfClient0(plan));
        assertEquals(T0 + 20, plan.get().completedAtMs());
        assertEquals(4, runsReads[0], "two lookups, each reading runs before and after");
    }

    @Test
    void aRerunInProgressHidesTheRunAndAnOlderCompleteRunIsTaken() throws Exception {
        Tables t = new Tables();
        t.run("r0", T0 - 1000, T0 - 990, "COMPLETE");
        t.plan("r0", "app-a", "OK", "0_0", false);
        t.run("r1", T0, T0 + 10, "COMPLETE");
        t.plan("r1", "app-a", "OK", "0_1", false);
        int[] runsReads = {0};
        t.onRunsRead = () -> {
            if (++runsReads[0] == 1) {
                // a rerun of r1 starts: its runs row is deleted, its results half rewritten
                t.rows.get("runs").removeIf(r -> r.get("run_id").equals("r1"));
                t.rows.get("assignments").removeIf(r -> r.get("run_id").equals("r1"));
            }
        };
        assertEquals("r0", new PlanReader(t).latestPlan("app-a").orElseThrow().runId());
    }

    @Test
    void aRunRewrittenAtEveryReadIsAnErrorNotAMixture() {
        Tables t = new Tables();
        t.run("r1", T0, T0 + 10, "COMPLETE");
        t.plan("r1", "app-a", "OK", "0_1", false);
        long[] completed = {T0 + 10};
        t.onRunsRead = () -> t.run("r1", T0, ++completed[0], "COMPLETE");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> new PlanReader(t).latestPlan("app-a"));
        assertEquals("run r1 was rewritten while being read (3 attempts)", e.getMessage());
    }

    @Test
    void tablesThatDisagreeAreAnError() {
        Tables t = new Tables();
        t.run("r1", T0, T0 + 10, "COMPLETE");
        t.plan("r1", "app-a", "OK", "0_1", false);
        t.rows.get("assignments").add(new HashMap<>(Map.of("run_id", "r1", "app_id", "app-a", "process_id", PIDS[1],
            "task_id", "0_5", "task_type", "ACTIVE", "is_warmup", false)));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> new PlanReader(t).latestPlan("app-a"));
        assertEquals("client " + PIDS[1] + ": client_assignments and assignments disagree", e.getMessage());
    }
}
