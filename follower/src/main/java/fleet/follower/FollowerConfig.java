package fleet.follower;

import java.util.Map;

/**
 * The follower's settings: ordinary Kafka Streams configs (any key of the Streams {@code Properties} reaches
 * {@link org.apache.kafka.streams.processor.assignment.TaskAssignor#configure}).
 *
 * <table>
 * <caption>configs</caption>
 * <tr><td>{@value #PLAN_PATH}</td><td>the fleet job's output path (the directory holding {@code runs},
 * {@code assignment_results}, {@code assignments}, {@code client_assignments}); any Hadoop file system URI</td></tr>
 * <tr><td>{@value #INPUT_PATH}</td><td>optional: the input path the job planned from (what {@code collect} wrote);
 * gives the inputs' collection time for {@value #MAX_INPUT_STALENESS_MS}</td></tr>
 * <tr><td>{@value #APPLICATION_ID}</td><td>the application's rows to follow; default {@code application.id}</td></tr>
 * <tr><td>{@value #MAX_PLAN_AGE_MS}</td><td>now minus the run's {@code planned_at}; default 1 hour</td></tr>
 * <tr><td>{@value #MAX_INPUT_STALENESS_MS}</td><td>now minus the inputs' collection time; default 1 hour</td></tr>
 * <tr><td>{@value #FALLBACK_CLASS}</td><td>a KIP-924 TaskAssignor; default Kafka's
 * {@code org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor}</td></tr>
 * <tr><td>{@value #RECHECK_INTERVAL_MS}</td><td>when above 0, every assignment asks for a follow-up rebalance this
 * long after now (unless an earlier one is asked for), so a new plan takes effect without waiting for a membership
 * change; default 0 (off)</td></tr>
 * <tr><td>{@value #PLAN_SOURCE_CLASS}</td><td>a {@link PlanSource}; default {@link DeltaPlanSource}</td></tr>
 * <tr><td>{@value #HADOOP_PREFIX}*</td><td>Hadoop settings for the Delta reader (credentials, file systems)</td></tr>
 * </table>
 */
public final class FollowerConfig {

    public static final String PREFIX = "fleet.assignor.";
    public static final String PLAN_PATH = PREFIX + "plan.path";
    public static final String INPUT_PATH = PREFIX + "input.path";
    public static final String APPLICATION_ID = PREFIX + "application.id";
    public static final String MAX_PLAN_AGE_MS = PREFIX + "max.plan.age.ms";
    public static final String MAX_INPUT_STALENESS_MS = PREFIX + "max.input.staleness.ms";
    public static final String FALLBACK_CLASS = PREFIX + "fallback.class";
    public static final String PLAN_SOURCE_CLASS = PREFIX + "plan.source.class";
    public static final String RECHECK_INTERVAL_MS = PREFIX + "recheck.interval.ms";
    public static final String HADOOP_PREFIX = PREFIX + "hadoop.";

    public static final long DEFAULT_MAX_PLAN_AGE_MS = 3_600_000L;
    public static final long DEFAULT_MAX_INPUT_STALENESS_MS = 3_600_000L;
    public static final String DEFAULT_FALLBACK_CLASS =
        "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor";

    private FollowerConfig() {
    }

    static String string(Map<String, ?> configs, String key, String fallback) {
        Object value = configs.get(key);
        if (value == null) {
            return fallback;
        }
        if (value instanceof Class<?> c) {
            return c.getName();
        }
        String text = value.toString().trim();
        return text.isEmpty() ? fallback : text;
    }

    /** A non-negative duration in ms; a value that does not parse is an error naming the key. */
    static long millis(Map<String, ?> configs, String key, long fallback) {
        Object value = configs.get(key);
        if (value == null) {
            return fallback;
        }
        long ms;
        if (value instanceof Number n) {
            ms = n.longValue();
        } else {
            try {
                ms = Long.parseLong(value.toString().trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(key + " must be a number of milliseconds, got " + value);
            }
        }
        if (ms < 0) {
            throw new IllegalArgumentException(key + " must not be negative, got " + ms);
        }
        return ms;
    }
}
