package fleet.follower;

import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.SortedSet;
import java.util.UUID;

/**
 * One application's assignment in one complete run of the fleet job, as read from the output tables.
 *
 * @param runId       the run ({@code runs.run_id})
 * @param plannedAtMs the run's planning instant ({@code runs.planned_at}), epoch ms
 * @param completedAtMs when the run's {@code runs} row was written, epoch ms
 * @param inputsAtMs  when the inputs the run planned from were collected, epoch ms, when known (see
 *                    {@link PlanSource}); empty means unknown, and the planning instant stands in for it
 * @param clients     every client of the application in the plan, by process id
 */
public record Plan(String runId, long plannedAtMs, long completedAtMs, OptionalLong inputsAtMs,
                   Map<UUID, Client> clients) {

    public Plan {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(inputsAtMs, "inputsAtMs");
        clients = Map.copyOf(clients);
    }

    /**
     * One client (KafkaStreams instance) of the plan: task ids as the tables spell them ({@code 0_3}), the
     * warmups being a subset of the standbys ({@code assignments.is_warmup}).
     *
     * @param processIdText       the process id as written in the tables
     * @param followupDeadlineMs  {@code client_assignments.followup_rebalance_deadline}, epoch ms, if any
     */
    public record Client(String processIdText, SortedSet<String> active, SortedSet<String> standby,
                         SortedSet<String> warmup, OptionalLong followupDeadlineMs) {
        public Client {
            active = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(active));
            standby = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(standby));
            warmup = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(warmup));
            Objects.requireNonNull(followupDeadlineMs, "followupDeadlineMs");
        }
    }

    /** A process id as the fleet tables may spell it (any text Python's uuid.UUID reads) as a UUID. */
    public static UUID parseProcessId(String text) {
        String s = text.trim().toLowerCase(java.util.Locale.ROOT);
        if (s.startsWith("urn:uuid:")) {
            s = s.substring("urn:uuid:".length());
        }
        if (s.startsWith("{") && s.endsWith("}")) {
            s = s.substring(1, s.length() - 1);
        }
        s = s.replace("-", "");
        if (!s.matches("[0-9a-f]{32}")) {
            throw new IllegalArgumentException("not a process id (UUID): " + text);
        }
        return new UUID(Long.parseUnsignedLong(s.substring(0, 16), 16), Long.parseUnsignedLong(s.substring(16), 16));
    }
}
