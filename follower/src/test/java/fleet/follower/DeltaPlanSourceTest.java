package fleet.follower;

import static fleet.follower.Fakes.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Delta Kernel on tables the fleet job wrote (follower/fixtures/make_fixtures.py, run by `make follower` before
 * Maven's tests: runs r1, r2 complete, r3 written but its runs row deleted).
 */
class DeltaPlanSourceTest {

    static Path fixtures;
    static JsonNode expected;

    @BeforeAll
    static void fixtures() throws IOException {
        fixtures = Paths.get(System.getProperty("fixtures.dir", "target/fixtures")).toAbsolutePath();
        Path json = fixtures.resolve("expected.json");
        assertTrue(Files.isRegularFile(json), "no " + json + ": run `make follower` (it writes the fixtures first)");
        expected = new ObjectMapper().readTree(json.toFile());
    }

    static String outputs() {
        return fixtures.resolve("outputs").toString();
    }

    static void assertPlanIsExpected(Plan plan, String app) {
        JsonNode want = expected.get(app);
        assertEquals(want.get("run_id").asText(), plan.runId());
        assertEquals(want.get("client_assignments").size(), plan.clients().size());
        List<String> warmups = new ArrayList<>();
        for (JsonNode row : want.get("client_assignments")) {
            Plan.Client client = plan.clients().get(Plan.parseProcessId(row.get("process_id").asText()));
            assertEquals(row.get("process_id").asText(), client.processIdText());
            assertEquals(strings(row.get("active_tasks")), client.active());
            assertEquals(strings(row.get("standby_tasks")), client.standby());
            JsonNode deadline = row.get("followup_rebalance_deadline_ms");
            assertEquals(deadline.isNull() ? null : deadline.asLong(),
                client.followupDeadlineMs().isPresent() ? client.followupDeadlineMs().getAsLong() : null);
            client.warmup().forEach(t -> warmups.add(client.processIdText() + "/" + t));
        }
        assertEquals(strings(want.get("warmups")), new TreeSet<>(warmups));
    }

    static TreeSet<String> strings(JsonNode array) {
        TreeSet<String> out = new TreeSet<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    @Test
    void theFixtureHasTheRunsTheTestsRelyOn() {
        assertEquals(List.of("r1/app-a/OK", "r1/app-b/OK", "r2/app-a/INVALID_INPUT", "r2/app-b/OK",
            "r3/app-a/OK", "r3/app-b/OK"), List.copyOf(strings(expected.get("statuses"))));
    }

    @Test
    void readsTheNewestCompleteOkPlanOfEachApplicationAsTheJobWroteIt() throws Exception {
        DeltaPlanSource source = new DeltaPlanSource(outputs(), null);
        Plan a = source.latestPlan("app-a").orElseThrow();
        assertPlanIsExpected(a, "app-a"); // r1: r2 is INVALID_INPUT for app-a, r3 is not complete
        assertEquals(T0, a.plannedAtMs());
        assertTrue(a.completedAtMs() > T0, "completed_at is the wall clock of the write");
        assertTrue(a.inputsAtMs().isEmpty());
        assertPlanIsExpected(source.latestPlan("app-b").orElseThrow(), "app-b");
        assertEquals(T0 + 3_600_000L, source.latestPlan("app-b").orElseThrow().plannedAtMs());
        assertEquals(Optional.empty(), source.latestPlan("app-z"));
    }

    @Test
    void readsOnlyTheChosenRunsPartition(@TempDir Path tmp) throws Exception {
        Path copy = copyTree(fixtures.resolve("outputs"), tmp.resolve("outputs"));
        // Make every data file of runs r2 and r3 unreadable: app-a's plan (r1) must still be read.
        for (String table : List.of("assignment_results", "assignments", "client_assignments")) {
            for (String run : List.of("r2", "r3")) {
                try (Stream<Path> files = Files.list(copy.resolve(table).resolve("run_id=" + run))) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".parquet")).toList()) {
                        Files.writeString(f, "not parquet");
                    }
                }
            }
        }
        // app-a's r2 result must be read to skip r2 (it is INVALID_INPUT there): restore that one table's r2.
        copyTree(fixtures.resolve("outputs/assignment_results/run_id=r2"),
            copy.resolve("assignment_results/run_id=r2"));
        assertPlanIsExpected(new DeltaPlanSource(copy.toString(), null).latestPlan("app-a").orElseThrow(), "app-a");
    }

    @Test
    void theInputsTimeComesFromTheInputTablesWhenConfigured() throws Exception {
        DeltaPlanSource source = new DeltaPlanSource(outputs(), fixtures.resolve("inputs").toString());
        Plan a = source.latestPlan("app-a").orElseThrow();
        // the job's test inputs carry no snapshot_at_ms: the commit time of the client_subscriptions version read
        long written = Files.getLastModifiedTime(fixtures.resolve("expected.json")).toMillis();
        assertTrue(a.inputsAtMs().isPresent());
        assertTrue(a.inputsAtMs().getAsLong() > T0 && a.inputsAtMs().getAsLong() <= written,
            "commit time " + a.inputsAtMs());
    }

    PlanFollowingAssignor assignorOn(String planPath, TaskAssignor fallback) {
        PlanFollowingAssignor assignor = new PlanFollowingAssignor(null, fallback,
            Clock.fixed(Instant.ofEpochMilli(T0 + 60_000), ZoneOffset.UTC));
        Map<String, Object> configs = new HashMap<>();
        configs.put("application.id", "app-a");
        configs.put(FollowerConfig.PLAN_PATH, planPath);
        assignor.configure(configs);
        return assignor;
    }

    /** The live state the fixture's app-a was planned for (make_fixtures.py's scenario). */
    static Fakes.App appA() {
        Fakes.App app = Fakes.standardApp();
        app.client(2).prevActive = new TreeSet<>();
        app.client(2).lags.replaceAll((t, lag) -> 500L);
        return app;
    }

    @Test
    void theAssignorFollowsTheFixturePlan() {
        PlanFollowingAssignorTest.RecordingFallback fallback = new PlanFollowingAssignorTest.RecordingFallback();
        PlanFollowingAssignor assignor = assignorOn(outputs(), fallback);
        Fakes.App app = appA();
        TaskAssignor.TaskAssignment result = assignor.assign(app);
        assertEquals(0, fallback.calls, assignor.lastDecision());
        for (JsonNode row : expected.get("app-a").get("client_assignments")) {
            var pid = new org.apache.kafka.streams.processor.assignment.ProcessId(
                UUID.fromString(row.get("process_id").asText()));
            List<TreeSet<String>> got = PlanFollowingAssignorTest.byClient(result).get(pid);
            assertEquals(strings(row.get("active_tasks")), got.get(0));
            assertEquals(strings(row.get("standby_tasks")), got.get(1));
        }
        assertTrue(assignor.lastDecision().startsWith("following run r1 "), assignor.lastDecision());
    }

    @Test
    void unreadableTablesFallBackWithTheReason(@TempDir Path tmp) throws Exception {
        PlanFollowingAssignorTest.RecordingFallback fallback = new PlanFollowingAssignorTest.RecordingFallback();
        PlanFollowingAssignor missing = assignorOn(tmp.resolve("nothing-here").toString(), fallback);
        missing.assign(appA());
        assertTrue(missing.lastDecision().contains("reading or checking the plan failed: TableNotFoundException"),
            missing.lastDecision());

        Path copy = copyTree(fixtures.resolve("outputs"), tmp.resolve("outputs"));
        try (Stream<Path> logs = Files.list(copy.resolve("runs/_delta_log"))) {
            for (Path f : logs.filter(p -> p.toString().endsWith(".json")).toList()) {
                Files.writeString(f, "{ this is not a delta log");
            }
        }
        PlanFollowingAssignor corrupt = assignorOn(copy.toString(), fallback);
        corrupt.assign(appA());
        assertTrue(corrupt.lastDecision().contains("reading or checking the plan failed: "), corrupt.lastDecision());
        assertEquals(2, fallback.calls);
    }

    static Path copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> all = Files.walk(from)) {
            for (Path p : all.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        return to;
    }
}
