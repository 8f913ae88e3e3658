package fleet.follower;

import static fleet.follower.Fakes.PIDS;
import static fleet.follower.Fakes.T0;
import static fleet.follower.Fakes.pid;
import static fleet.follower.Fakes.standardApp;
import static fleet.follower.Fakes.standardPlan;
import static fleet.follower.Fakes.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.streams.errors.TaskAssignmentException;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.junit.jupiter.api.Test;

class PlanFollowingAssignorTest {

    static final long NOW = T0 + 60_000;

    /** Records its calls and returns an empty-looking but recognisable assignment. */
    static final class RecordingFallback implements TaskAssignor {
        int calls;
        final TaskAssignment answer = new TaskAssignment(List.of());

        @Override
        public TaskAssignment assign(ApplicationState applicationState) {
            calls++;
            return answer;
        }
    }

    static class FixedSource implements PlanSource {
        Optional<Plan> plan;
        Exception failure;

        FixedSource(Plan plan) {
            this.plan = Optional.ofNullable(plan);
        }

        @Override
        public void configure(Map<String, ?> configs) {
        }

        @Override
        public Optional<Plan> latestPlan(String appId) throws Exception {
            if (failure != null) {
                throw failure;
            }
            return plan;
        }

        @Override
        public String describe() {
            return "fixed";
        }
    }

    final RecordingFallback fallback = new RecordingFallback();

    PlanFollowingAssignor assignor(Plan plan, Map<String, Object> extra) {
        return assignor(new FixedSource(plan), extra);
    }

    PlanFollowingAssignor assignor(PlanSource source, Map<String, Object> extra) {
        PlanFollowingAssignor assignor = new PlanFollowingAssignor(source, fallback,
            Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC));
        Map<String, Object> configs = new HashMap<>(Map.of("application.id", "app-a"));
        configs.putAll(extra);
        assignor.configure(configs);
        return assignor;
    }

    /** client index -> [actives, standbys] as task-id strings, and deadlines. */
    static Map<ProcessId, List<TreeSet<String>>> byClient(TaskAssignor.TaskAssignment assignment) {
        Map<ProcessId, List<TreeSet<String>>> out = new TreeMap<>();
        for (KafkaStreamsAssignment one : assignment.assignment()) {
            TreeSet<String> active = new TreeSet<>();
            TreeSet<String> standby = new TreeSet<>();
            one.tasks().values().forEach(t -> (t.type() == AssignedTask.Type.ACTIVE ? active : standby)
                .add(t.id().toString()));
            out.put(one.processId(), List.of(active, standby));
        }
        return out;
    }

    static Map<ProcessId, Instant> deadlines(TaskAssignor.TaskAssignment assignment) {
        Map<ProcessId, Instant> out = new TreeMap<>();
        assignment.assignment().forEach(a -> a.followupRebalanceDeadline().ifPresent(d -> out.put(a.processId(), d)));
        return out;
    }

    static List<TreeSet<String>> sets(List<String> active, List<String> standby) {
        return List.of(new TreeSet<>(active), new TreeSet<>(standby));
    }

    @Test
    void followsAValidPlanExactlyWithoutFetchingLags() {
        Fakes.App app = standardApp();
        PlanFollowingAssignor assignor = assignor(standardPlan().build(), Map.of());
        TaskAssignor.TaskAssignment result = assignor.assign(app);
        assertEquals(0, fallback.calls);
        assertEquals(Map.of(
            pid(0), sets(List.of("0_0", "1_0"), List.of("1_1")),
            pid(1), sets(List.of("0_1", "1_1"), List.of("1_0")),
            pid(2), sets(List.of("0_2", "0_3"), List.of())), byClient(result));
        assertEquals(TaskAssignor.AssignmentError.NONE, TaskAssignmentUtils.validateTaskAssignment(app, result));
        assertEquals(0, app.lagFetches.get(), "no stateful active moves: no end-offset fetch");
        assertTrue(deadlines(result).isEmpty());
        assertTrue(assignor.lastDecision().startsWith("following run r1 (planned 60000 ms ago, inputs planned "
            + "(collection time unknown) 60000 ms ago): 3 clients, 6 tasks"), assignor.lastDecision());
    }

    @Test
    void planOlderThanMaxAgeFallsBack() {
        PlanFollowingAssignor assignor = assignor(standardPlan().build(), Map.of("fleet.assignor.max.plan.age.ms", "59999"));
        assertSame(fallback.answer, assignor.assign(standardApp()));
        assertEquals(1, fallback.calls);
        assertTrue(assignor.lastDecision().contains("run r1 was planned 60000 ms ago (fleet.assignor.max.plan.age.ms = 59999)"),
            assignor.lastDecision());
    }

    @Test
    void planAtExactlyMaxAgeIsFollowed() {
        PlanFollowingAssignor assignor = assignor(standardPlan().build(), Map.of("fleet.assignor.max.plan.age.ms", 60000L));
        assignor.assign(standardApp());
        assertEquals(0, fallback.calls);
    }

    @Test
    void planFromTheFarFutureFallsBack() {
        Fakes.PlanBuilder plan = standardPlan();
        plan.plannedAt = NOW + 7_200_000L;
        PlanFollowingAssignor assignor = assignor(plan.build(), Map.of());
        assignor.assign(standardApp());
        assertEquals(1, fallback.calls);
        assertTrue(assignor.lastDecision().contains("in the future"), assignor.lastDecision());
    }

    @Test
    void staleInputsFallBackUsingTheCollectionTimeWhenKnown() {
        Fakes.PlanBuilder plan = standardPlan();
        plan.inputsAt = OptionalLong.of(NOW - 600_001L);
        PlanFollowingAssignor assignor = assignor(plan.build(), Map.of("fleet.assignor.max.input.staleness.ms", "600000"));
        assignor.assign(standardApp());
        assertEquals(1, fallback.calls);
        assertTrue(assignor.lastDecision().contains("inputs were collected 600001 ms ago"), assignor.lastDecision());

        plan.inputsAt = OptionalLong.of(NOW - 600_000L);
        assignor = assignor(plan.build(), Map.of("fleet.assignor.max.input.staleness.ms", "600000"));
        assignor.assign(standardApp());
        assertEquals(1, fallback.calls, "at the bound: followed");
        assertTrue(assignor.lastDecision().contains("inputs collected 600000 ms ago"), assignor.lastDecision());
    }

    @Test
    void withoutACollectionTimeThePlanningInstantBoundsTheInputs() {
        PlanFollowingAssignor assignor = assignor(standardPlan().build(),
            Map.of("fleet.assignor.max.input.staleness.ms", "30000"));
        assignor.assign(standardApp());
        assertEquals(1, fallback.calls);
        assertTrue(assignor.lastDecision().contains("inputs were planned (collection time unknown) 60000 ms ago"),
            assignor.lastDecision());
    }

    @Test
    void aMemberAddedSinceThePlanFallsBackNamingIt() {
        Fakes.App app = standardApp();
        Fakes.App bigger = new Fakes.App(3);
        bigger.clients.putAll(app.clients);
        ProcessId extra = new ProcessId(java.util.UUID.fromString("44444444-4444-4444-8444-444444444444"));
        bigger.clients.put(extra, new Fakes.Client(extra));
        PlanFollowingAssignor assignor = assignor(standardPlan().build(), Map.of());
        assignor.assign(bigger);
        assertEquals(1, fallback.calls);
        assertTrue(assignor.lastDecision().contains("planned for other members: live but not planned [" + extra
            + "], planned but not live []"), assignor.lastDecision());
    }

    @Test
    void aMemberGoneSinceThePlanFallsBack() {
        Fakes.App app = standardApp();
        app.clients.remove(pid(2));
        PlanFollowingAssignor assignor = assignor(standardPlan().build(), Map.of());
        assignor.assign(app);
        assertEquals(1, fallback.calls);
        assertTrue(assignor.lastDecision().contains("planned but not live [" + pid(2) + "]"), assignor.lastDecision());
    }

    @Test
    void aTaskWithoutPlannedActiveOrAnUnknownTaskFallsBack() {
        Plan missing = new Fakes.PlanBuilder()
            .client(0, List.of("0_0", "1_0"), List.of("1_1"), List.of(), null)
            .client(1, List.of("0_1", "1_1"), List.of("1_0"), List.of(), null)
            .client(2, List.of("0_2"), List.of(), List.of(), null).build();
        PlanFollowingAssignor assignor = assignor(missing, Map.of());
        assignor.assign(standardApp());
        assertTrue(assignor.lastDecision().contains("live tasks without a planned active [0_3]"), assignor.lastDecision());

        Plan unknown = new Fakes.PlanBuilder()
            .client(0, List.of("0_0", "1_0"), List.of("1_1"), List.of(), null)
            .client(1, List.of("0_1", "1_1"), List.of("1_0"), List.of(), null)
            .client(2, List.of("0_2", "0_3", "2_0"), List.of(), List.of(), null).build();
        assignor = assignor(unknown, Map.of());
        assignor.assign(standardApp());
        assertTrue(assignor.lastDecision().contains("planned tasks not live [2_0]"), assignor.lastDecision());
        assertEquals(2, fallback.calls);
    }

    @Test
    void kafkasValidationDecides() {
        Plan standbyOfStateless = new Fakes.PlanBuilder()
            .client(0, List.of("0_0", "1_0"), List.of("1_1", "0_1"), List.of(), null)
            .client(1, List.of("0_1", "1_1"), List.of("1_0"), List.of(), null)
            .client(2, List.of("0_2", "0_3"), List.of(), List.of(), null).build();
        PlanFollowingAssignor assignor = assignor(standbyOfStateless, Map.of());
        assignor.assign(standardApp());
        assertTrue(assignor.lastDecision().contains("fails Kafka's validation: INVALID_STANDBY_TASK"),
            assignor.lastDecision());

        Plan twiceActive = new Fakes.PlanBuilder()
            .client(0, List.of("0_0", "1_0"), List.of("1_1"), List.of(), null)
            .client(1, List.of("0_1", "1_1", "0_0"), List.of("1_0"), List.of(), null)
            .client(2, List.of("0_2", "0_3"), List.of(), List.of(), null).build();
        assignor = assignor(twiceActive, Map.of());
        assignor.assign(standardApp());
        assertTrue(assignor.lastDecision().contains("fails Kafka's validation: ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES"),
            assignor.lastDecision());
        assertEquals(2, fallback.calls);
    }

    @Test
    void noPlanFallsBack() {
        PlanFollowingAssignor assignor = assignor((Plan) null, Map.of());
        assertSame(fallback.answer, assignor.assign(standardApp()));
        assertEquals("falling back to " + RecordingFallback.class.getName()
            + ": no complete run in fixed has an OK plan for app-a", assignor.lastDecision());
    }

    @Test
    void aFailingSourceNeverThrowsOutOfAssign() {
        FixedSource source = new FixedSource(null);
        source.failure = new java.io.IOException("disk on fire\nsecond line");
        PlanFollowingAssignor assignor = assignor(source, Map.of());
        assertSame(fallback.answer, assignor.assign(standardApp()));
        assertTrue(assignor.lastDecision().endsWith("reading or checking the plan failed: IOException: disk on fire second line"),
            assignor.lastDecision());

        source.failure = null;
        source.plan = Optional.of(standardPlan().build());
        Fakes.App app = standardApp();
        app.client(2).prevActive = Fakes.tasks("0_2", "0_3");
        app.lagFailure = new TaskAssignmentException("end offsets timed out");
        Plan moving = new Fakes.PlanBuilder()
            .client(0, List.of("0_0", "0_1"), List.of("1_1"), List.of(), null)
            .client(1, List.of("1_1"), List.of("1_0"), List.of(), null)
            .client(2, List.of("1_0", "0_2", "0_3"), List.of(), List.of(), null).build();
        source.plan = Optional.of(moving);
        assignor.assign(app);
        assertTrue(assignor.lastDecision().contains("TaskAssignmentException: end offsets timed out"),
            assignor.lastDecision());
        assertEquals(2, fallback.calls);
    }

    /** 1_0 planned onto client 2, which lags 50,000 (> acceptable.recovery.lag) while client 0 runs it. */
    static Plan movingStatefulToLaggingClient(List<String> warmupsOnClient1) {
        return new Fakes.PlanBuilder()
            .client(0, List.of("0_0", "0_1"), List.of("1_1"), List.of(), null)
            .client(1, List.of("1_1"), List.of("1_0"), warmupsOnClient1, null)
            .client(2, List.of("1_0", "0_2", "0_3"), List.of(), List.of(), null).build();
    }

    @Test
    void aPlannedActiveOnALaggingClientStaysWithTheCaughtUpOwnerAndWarmsUp() {
        Fakes.App app = standardApp();
        PlanFollowingAssignor assignor = assignor(movingStatefulToLaggingClient(List.of()), Map.of());
        TaskAssignor.TaskAssignment result = assignor.assign(app);
        assertEquals(0, fallback.calls);
        assertEquals(1, app.lagFetches.get());
        assertEquals(Map.of(
            pid(0), sets(List.of("0_0", "0_1", "1_0"), List.of("1_1")),
            pid(1), sets(List.of("1_1"), List.of("1_0")),
            pid(2), sets(List.of("0_2", "0_3"), List.of("1_0"))), byClient(result));
        assertEquals(Map.of(pid(2), Instant.ofEpochMilli(NOW + 600_000)), deadlines(result));
        assertEquals(TaskAssignor.AssignmentError.NONE, TaskAssignmentUtils.validateTaskAssignment(app, result));
        assertTrue(assignor.lastDecision().contains("actives kept on caught-up clients: 1_0 stays on " + pid(0)
            + " (warmup on " + pid(2) + ")"), assignor.lastDecision());
    }

    @Test
    void aPlannedActiveWithinTheAcceptableLagMoves() {
        Fakes.App app = standardApp();
        app.client(2).lags.put(task("1_0"), 10_000L);
        TaskAssignor.TaskAssignment result = assignor(movingStatefulToLaggingClient(List.of()), Map.of()).assign(app);
        assertEquals(sets(List.of("0_2", "0_3", "1_0"), List.of()), byClient(result).get(pid(2)));
        assertTrue(deadlines(result).isEmpty());
    }

    @Test
    void whenNoClientIsCaughtUpThePlanStands() {
        Fakes.App app = standardApp();
        app.client(0).lags.put(task("1_0"), 20_000L);
        app.client(1).lags.put(task("1_0"), -3L);
        TaskAssignor.TaskAssignment result = assignor(movingStatefulToLaggingClient(List.of()), Map.of()).assign(app);
        assertEquals(sets(List.of("0_2", "0_3", "1_0"), List.of()), byClient(result).get(pid(2)));
    }

    @Test
    void aCaughtUpStandbyHolderTakesOverWhenThePreviousOwnerIsGone() {
        Fakes.App app = standardApp();
        app.client(0).lags.put(task("1_0"), 90_000L); // the previous owner lost its state
        PlanFollowingAssignor assignor = assignor(movingStatefulToLaggingClient(List.of()), Map.of());
        TaskAssignor.TaskAssignment result = assignor.assign(app);
        // client 1 holds 1_0 as a caught-up standby (lag 0): it becomes active there, client 2 warms up.
        assertEquals(sets(List.of("1_0", "1_1"), List.of()), byClient(result).get(pid(1)));
        assertEquals(sets(List.of("0_2", "0_3"), List.of("1_0")), byClient(result).get(pid(2)));
    }

    @Test
    void warmupsStayWithinMaxWarmupReplicasCountingThePlansOwn() {
        Fakes.App app = standardApp();
        app.maxWarmups = 1;
        // the plan already spends the one warmup (client 1's standby of 1_0 is flagged a warmup)
        PlanFollowingAssignor assignor = assignor(movingStatefulToLaggingClient(List.of("1_0")), Map.of());
        TaskAssignor.TaskAssignment result = assignor.assign(app);
        assertEquals(sets(List.of("0_0", "0_1", "1_0"), List.of("1_1")), byClient(result).get(pid(0)));
        assertEquals(sets(List.of("0_2", "0_3"), List.of()), byClient(result).get(pid(2)));
        assertTrue(deadlines(result).isEmpty());
    }

    @Test
    void aPlannedFollowupDeadlineIsKeptOrReDerivedWhenPast() {
        Plan ahead = new Fakes.PlanBuilder()
            .client(0, List.of("0_0", "1_0"), List.of("1_1"), List.of(), T0 + 600_000L)
            .client(1, List.of("0_1", "1_1"), List.of("1_0"), List.of(), null)
            .client(2, List.of("0_2", "0_3"), List.of(), List.of(), null).build();
        assertEquals(Map.of(pid(0), Instant.ofEpochMilli(T0 + 600_000L)),
            deadlines(assignor(ahead, Map.of()).assign(standardApp())));

        Plan past = new Fakes.PlanBuilder()
            .client(0, List.of("0_0", "1_0"), List.of("1_1"), List.of(), T0 + 30_000L)
            .client(1, List.of("0_1", "1_1"), List.of("1_0"), List.of(), null)
            .client(2, List.of("0_2", "0_3"), List.of(), List.of(), null).build();
        assertEquals(Map.of(pid(0), Instant.ofEpochMilli(NOW + 30_000L)),
            deadlines(assignor(past, Map.of()).assign(standardApp())));
    }

    @Test
    void processIdsMatchWhateverTheTablesSpelling() {
        Fakes.PlanBuilder plan = new Fakes.PlanBuilder();
        plan.clients.add(new Plan.Client("{" + PIDS[0].toUpperCase() + "}", new TreeSet<>(List.of("0_0", "1_0")),
            new TreeSet<>(List.of("1_1")), new TreeSet<>(), OptionalLong.empty()));
        plan.clients.add(new Plan.Client("urn:uuid:" + PIDS[1], new TreeSet<>(List.of("0_1", "1_1")),
            new TreeSet<>(List.of("1_0")), new TreeSet<>(), OptionalLong.empty()));
        plan.clients.add(new Plan.Client(PIDS[2].replace("-", ""), new TreeSet<>(List.of("0_2", "0_3")),
            new TreeSet<>(), new TreeSet<>(), OptionalLong.empty()));
        assignor(plan.build(), Map.of()).assign(standardApp());
        assertEquals(0, fallback.calls);
    }

    @Test
    void unconfiguredFallsBackToKafkasStickyAssignorWithAValidAssignment() {
        PlanFollowingAssignor assignor = new PlanFollowingAssignor();
        assignor.configure(Map.of("application.id", "app-a"));
        Fakes.App app = standardApp();
        TaskAssignor.TaskAssignment result = assignor.assign(app);
        assertTrue(assignor.lastDecision().startsWith("falling back to "
            + "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor: "
            + "the plan source cannot be set up: IllegalArgumentException: fleet.assignor.plan.path is not set"),
            assignor.lastDecision());
        assertEquals(TaskAssignor.AssignmentError.NONE, TaskAssignmentUtils.validateTaskAssignment(app, result));
        List<String> actives = new ArrayList<>();
        byClient(result).values().forEach(s -> actives.addAll(s.get(0)));
        assertEquals(6, actives.size());
    }

    @Test
    void aBadLimitIsReportedAtEveryRebalance() {
        PlanFollowingAssignor assignor = assignor(standardPlan().build(), Map.of("fleet.assignor.max.plan.age.ms", "soon"));
        assignor.assign(standardApp());
        assertEquals(1, fallback.calls);
        assertTrue(assignor.lastDecision().endsWith(
            "fleet.assignor.max.plan.age.ms must be a number of milliseconds, got soon"), assignor.lastDecision());
    }

    @Test
    void theApplicationIdConfigOverridesStreamsOwn() {
        List<String> asked = new ArrayList<>();
        FixedSource source = new FixedSource(standardPlan().build()) {
            @Override
            public Optional<Plan> latestPlan(String appId) throws Exception {
                asked.add(appId);
                return super.latestPlan(appId);
            }
        };
        assignor(source, Map.of("fleet.assignor.application.id", "other-app")).assign(standardApp());
        assignor(source, Map.of()).assign(standardApp());
        assertEquals(List.of("other-app", "app-a"), asked);
        assertNull(source.failure);
    }

    @Test
    void aRecheckIntervalAsksForAFollowupRebalanceUnlessAnEarlierOneIsPlanned() {
        TaskAssignor.TaskAssignment followed = assignor(standardPlan().build(),
            Map.of("fleet.assignor.recheck.interval.ms", "300000")).assign(standardApp());
        assertEquals(Map.of(pid(0), Instant.ofEpochMilli(NOW + 300_000)), deadlines(followed));

        Plan earlier = new Fakes.PlanBuilder()
            .client(0, List.of("0_0", "1_0"), List.of("1_1"), List.of(), null)
            .client(1, List.of("0_1", "1_1"), List.of("1_0"), List.of(), NOW + 1_000L)
            .client(2, List.of("0_2", "0_3"), List.of(), List.of(), null).build();
        assertEquals(Map.of(pid(1), Instant.ofEpochMilli(NOW + 1_000L)),
            deadlines(assignor(earlier, Map.of("fleet.assignor.recheck.interval.ms", "300000")).assign(standardApp())));

        // the fallback's answer gets the recheck too, so a plan written later is picked up
        TaskAssignor.TaskAssignment answer = new TaskAssignor.TaskAssignment(List.of(
            KafkaStreamsAssignment.of(pid(1), java.util.Set.of()), KafkaStreamsAssignment.of(pid(0), java.util.Set.of())));
        PlanFollowingAssignor assignor = new PlanFollowingAssignor(new FixedSource(null), state -> answer,
            Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC));
        assignor.configure(Map.of("application.id", "app-a", "fleet.assignor.recheck.interval.ms", 60000));
        assertEquals(Map.of(pid(0), Instant.ofEpochMilli(NOW + 60_000)), deadlines(assignor.assign(standardApp())));

        assertTrue(deadlines(assignor(standardPlan().build(), Map.of()).assign(standardApp())).isEmpty(),
            "off by default");
    }

    @Test
    void aFallbackThatCannotBeMadeIsAStartupError() {
        PlanFollowingAssignor assignor = new PlanFollowingAssignor();
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> assignor.configure(Map.of("application.id", "app-a", "fleet.assignor.fallback.class", "no.such.Assignor",
                "fleet.assignor.plan.path", "/nowhere")));
        assertTrue(e.getMessage().startsWith("cannot instantiate no.such.Assignor as TaskAssignor: ClassNotFoundException"),
            e.getMessage());
    }
}
