package fleet.follower;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Row access to the fleet job's output tables, the one thing {@link PlanReader} needs from storage.
 * Values come back as Java objects: {@code string} as String, {@code int} as Integer, {@code bigint} as Long,
 * {@code boolean} as Boolean, {@code timestamp} as Long epoch milliseconds, {@code array<string>} as
 * List&lt;String&gt;, {@code map<string,bigint>} as Map&lt;String, Long&gt;; null stays null.
 */
interface PlanTables {

    /**
     * The rows of one output table, only the given columns. {@code runId} non-null: only that run's partition
     * (run_id is every output table's partition column, so nothing else is read); {@code appId} non-null:
     * only that application's rows.
     */
    List<Map<String, Object>> rows(String table, String runId, String appId, List<String> columns) throws Exception;

    /** When the inputs a run read were collected, when this source can tell; empty otherwise. */
    default OptionalLong inputsAt(String appId, Map<String, Long> inputVersions) throws Exception {
        return OptionalLong.empty();
    }
}
