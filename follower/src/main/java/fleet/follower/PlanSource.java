package fleet.follower;

import java.util.Map;
import java.util.Optional;

/**
 * Where the follower finds plans. The default, {@link DeltaPlanSource}, reads the fleet job's Delta output
 * tables under {@code fleet.assignor.plan.path}; a deployment that reads them through a catalog implements
 * this interface and names its class in {@code fleet.assignor.plan.source.class} (it needs a public no-arg
 * constructor and receives every Streams config in {@link #configure}).
 *
 * <p>The contract: return the plan of the newest run marked {@code COMPLETE} in {@code runs} whose
 * {@code assignment_results} row for the application has status {@code OK}, read only from runs marked
 * complete (never a run being written), or empty when there is none. Throwing is allowed: the assignor
 * falls back and logs the message.
 */
public interface PlanSource extends AutoCloseable {

    void configure(Map<String, ?> configs);

    Optional<Plan> latestPlan(String appId) throws Exception;

    /** Where plans come from, for log lines (a path, a catalog name). */
    String describe();

    @Override
    default void close() {
    }
}
