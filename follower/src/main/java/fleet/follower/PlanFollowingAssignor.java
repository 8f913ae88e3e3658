package fleet.follower;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A KIP-924 {@link TaskAssignor} that follows the fleet job's plan for this application: configure a
 * classic-protocol Kafka Streams application with
 * {@code task.assignor.class=fleet.follower.PlanFollowingAssignor} and {@code fleet.assignor.plan.path=...}
 * (the other configs: {@link FollowerConfig}).
 *
 * <p>At each rebalance it asks the {@link PlanSource} for the newest complete run with an OK plan for the
 * application, checks it against the live state ({@link PlanCheck}) and returns it; otherwise, or when
 * reading or checking fails in any way, it returns what the fallback assignor returns and logs one WARN line
 * {@code fleet plan follower: <app>: falling back to <class>: <why>}. Following logs one INFO line
 * {@code fleet plan follower: <app>: following run <id> ...}. Nothing thrown by reading or checking leaves
 * {@link #assign}; the fallback's own exceptions (Kafka's assignor asking for a retry) are Kafka's to handle.
 */
public class PlanFollowingAssignor implements TaskAssignor {

    static final String LOG_PREFIX = "fleet plan follower: ";
    private static final Logger LOG = LoggerFactory.getLogger(PlanFollowingAssignor.class);

    private String appId;
    private long maxPlanAgeMs = FollowerConfig.DEFAULT_MAX_PLAN_AGE_MS;
    private long maxInputStalenessMs = FollowerConfig.DEFAULT_MAX_INPUT_STALENESS_MS;
    private long recheckIntervalMs;
    private TaskAssignor fallback;
    private PlanSource source;
    private String configError;
    private Clock clock = Clock.systemUTC();
    private volatile String lastDecision;

    public PlanFollowingAssignor() {
    }

    /** For tests: an explicit source, fallback and clock; {@link #configure} is then only for the limits. */
    PlanFollowingAssignor(PlanSource source, TaskAssignor fallback, Clock clock) {
        this.source = source;
        this.fallback = fallback;
        this.clock = clock;
    }

    @Override
    public void configure(Map<String, ?> configs) {
        try {
            appId = FollowerConfig.string(configs, FollowerConfig.APPLICATION_ID,
                FollowerConfig.string(configs, StreamsConfig.APPLICATION_ID_CONFIG, null));
            maxPlanAgeMs = FollowerConfig.millis(configs, FollowerConfig.MAX_PLAN_AGE_MS, maxPlanAgeMs);
            maxInputStalenessMs = FollowerConfig.millis(configs, FollowerConfig.MAX_INPUT_STALENESS_MS,
                maxInputStalenessMs);
            recheckIntervalMs = FollowerConfig.millis(configs, FollowerConfig.RECHECK_INTERVAL_MS, 0L);
        } catch (RuntimeException e) {
            configError = e.getMessage();
        }
        if (fallback == null) {
            String name = FollowerConfig.string(configs, FollowerConfig.FALLBACK_CLASS,
                FollowerConfig.DEFAULT_FALLBACK_CLASS);
            // A fallback that cannot be made is a configuration error Streams should report at startup.
            fallback = newInstance(name, TaskAssignor.class);
            fallback.configure(configs);
        }
        if (source == null) {
            try {
                String name = FollowerConfig.string(configs, FollowerConfig.PLAN_SOURCE_CLASS,
                    DeltaPlanSource.class.getName());
                PlanSource made = newInstance(name, PlanSource.class);
                made.configure(configs);
                source = made;
            } catch (RuntimeException | LinkageError e) {
                configError = "the plan source cannot be set up: " + oneLine(e);
            }
        }
        if (appId == null && configError == null) {
            configError = "no application id (" + FollowerConfig.APPLICATION_ID + " or application.id)";
        }
        if (configError != null) {
            LOG.warn(LOG_PREFIX + "{}: will fall back at every rebalance: {}", appId, configError);
        }
    }

    private static <T> T newInstance(String className, Class<T> type) {
        try {
            Class<?> c = Class.forName(className, true, Thread.currentThread().getContextClassLoader() != null
                ? Thread.currentThread().getContextClassLoader() : PlanFollowingAssignor.class.getClassLoader());
            return type.cast(c.getDeclaredConstructor().newInstance());
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException("cannot instantiate " + className + " as " + type.getSimpleName()
                + ": " + oneLine(e), e);
        }
    }

    @Override
    public TaskAssignment assign(ApplicationState applicationState) {
        String why;
        try {
            why = configError;
            if (why == null) {
                Optional<Plan> plan = source.latestPlan(appId);
                if (plan.isEmpty()) {
                    why = "no complete run in " + source.describe() + " has an OK plan for " + appId;
                } else {
                    PlanCheck.Outcome outcome = PlanCheck.check(plan.get(), applicationState, clock.millis(),
                        maxPlanAgeMs, maxInputStalenessMs);
                    if (outcome.followed()) {
                        lastDecision = "following " + outcome.summary();
                        LOG.info(LOG_PREFIX + "{}: {}", appId, lastDecision);
                        return withRecheck(outcome.assignment());
                    }
                    why = outcome.reason();
                }
            }
        } catch (Throwable e) { // never out of assign: anything unexpected is a reason to fall back
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            why = "reading or checking the plan failed: " + oneLine(e);
        }
        lastDecision = "falling back to " + fallback.getClass().getName() + ": " + why;
        LOG.warn(LOG_PREFIX + "{}: {}", appId, lastDecision);
        return withRecheck(fallback.assign(applicationState));
    }

    /**
     * With {@code fleet.assignor.recheck.interval.ms} above 0: the client with the smallest process id is asked to
     * rebalance again at now + the interval, unless some client already rebalances earlier, so the next plan is
     * read without waiting for a membership change.
     */
    TaskAssignment withRecheck(TaskAssignment assignment) {
        if (recheckIntervalMs <= 0 || assignment == null || assignment.assignment().isEmpty()) {
            return assignment;
        }
        try {
            Instant at = Instant.ofEpochMilli(PlanCheck.saturatedAdd(clock.millis(), recheckIntervalMs));
            boolean earlier = assignment.assignment().stream().anyMatch(a -> a.followupRebalanceDeadline()
                .map(d -> !d.isAfter(at)).orElse(false));
            if (earlier) {
                return assignment;
            }
            KafkaStreamsAssignment first = assignment.assignment().stream()
                .min(Comparator.comparing(KafkaStreamsAssignment::processId)).orElseThrow();
            List<KafkaStreamsAssignment> out = new ArrayList<>();
            for (KafkaStreamsAssignment one : assignment.assignment()) {
                out.add(one == first ? one.withFollowupRebalance(at) : one);
            }
            return new TaskAssignment(out);
        } catch (RuntimeException e) {
            LOG.warn(LOG_PREFIX + "{}: no recheck rebalance requested: {}", appId, oneLine(e));
            return assignment;
        }
    }

    @Override
    public void onAssignmentComputed(GroupAssignment assignment, GroupSubscription subscription, AssignmentError error) {
        fallback.onAssignmentComputed(assignment, subscription, error);
    }

    /** The last rebalance's one-line decision (for tests and metrics). */
    public String lastDecision() {
        return lastDecision;
    }

    static String oneLine(Throwable e) {
        StringBuilder out = new StringBuilder(e.getClass().getSimpleName());
        if (e.getMessage() != null) {
            out.append(": ").append(e.getMessage().replaceAll("\\s+", " "));
        }
        Throwable cause = e.getCause();
        if (cause != null && cause != e && cause.getMessage() != null) {
            out.append(" (caused by ").append(cause.getClass().getSimpleName()).append(": ")
                .append(cause.getMessage().replaceAll("\\s+", " ")).append(")");
        }
        String text = out.toString();
        return text.length() > 500 ? text.substring(0, 500) + "..." : text;
    }
}
