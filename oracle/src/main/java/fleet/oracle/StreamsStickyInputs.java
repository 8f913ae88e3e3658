package fleet.oracle;

import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.AssignmentConfigsImpl;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.MemberMetadataAndStateImpl;
import org.apache.kafka.streams.processor.TaskId;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A scenario as the input of the broker-side StickyTaskAssignor (Kafka 4.4.0, KIP-1071): one group member per
 * consumer, the members of a client sharing its process id, and a topology describer over the scenario's
 * tasks. The mapping is docs/streams-protocol.md's, written here independently of the Python one so that the
 * differential test checks both:
 *
 * <ul>
 *   <li>members are put into a {@code HashMap} (as the coordinator's TargetAssignmentBuilder does) clients in
 *       process id order, each client's consumers by id;</li>
 *   <li>a member's previous actives and standbys are its consumer's history split by the client's lists; a
 *       client whose consumers carry no history gives its whole previous assignment to its first consumer;</li>
 *   <li>a member reports an offset sum for each changelogged task it owned: -2 and -3 as the lag says, else the
 *       task's end-offset sum (largest non-negative lag of any client) minus its lag;</li>
 *   <li>a subtopology is stateful when one of its tasks has a changelog; it has max partition + 1 tasks.</li>
 * </ul>
 */
final class StreamsStickyInputs {

    private StreamsStickyInputs() {
    }

    static String subtopologyId(final TaskId task) {
        if (task.topologyName() != null) {
            throw new IllegalArgumentException("task " + task + ": the streams protocol has no named topologies");
        }
        return Integer.toString(task.subtopology());
    }

    static List<Scenario.Client> clientsInOrder(final Scenario s) {
        final List<Scenario.Client> clients = new ArrayList<>(s.clients);
        clients.sort(Comparator.comparing(c -> c.processId));
        return clients;
    }

    static GroupSpecImpl groupSpec(final Scenario s) {
        final Map<TaskId, Long> ends = new HashMap<>();
        for (final Scenario.Client c : s.clients) {
            c.lags.forEach((task, lag) -> {
                if (lag >= 0) {
                    ends.merge(task, lag, Math::max);
                }
            });
        }
        final Map<String, MemberMetadataAndStateImpl> members = new HashMap<>();
        for (final Scenario.Client c : clientsInOrder(s)) {
            final List<String> consumers = new ArrayList<>(c.consumers);
            consumers.sort(Comparator.naturalOrder());
            final boolean noHistory = c.consumerPrevTasks.values().stream().allMatch(Set::isEmpty);
            for (final String consumer : consumers) {
                final SortedSet<TaskId> owned = new TreeSet<>();
                if (noHistory) {
                    if (consumer.equals(consumers.get(0))) {
                        owned.addAll(c.prevActive);
                        owned.addAll(c.prevStandby);
                    }
                } else {
                    owned.addAll(c.consumerPrevTasks.getOrDefault(consumer, new TreeSet<>()));
                }
                members.put(consumer, member(c, owned, ends));
            }
        }
        return new GroupSpecImpl(members, new AssignmentConfigsImpl(s.numStandbyReplicas, List.of()));
    }

    private static MemberMetadataAndStateImpl member(final Scenario.Client c, final Set<TaskId> owned,
                                                     final Map<TaskId, Long> ends) {
        final Map<String, Set<Integer>> active = new HashMap<>();
        final Map<String, Set<Integer>> standby = new HashMap<>();
        final Map<String, Map<Integer, Long>> offsets = new HashMap<>();
        for (final TaskId task : owned) {
            final String sub = subtopologyId(task);
            if (c.prevActive.contains(task)) {
                active.computeIfAbsent(sub, k -> new HashSet<>()).add(task.partition());
            } else if (c.prevStandby.contains(task)) {
                standby.computeIfAbsent(sub, k -> new HashSet<>()).add(task.partition());
            }
            final Long lag = c.lags.get(task);
            if (lag != null) {
                final long offset = lag < 0 ? lag : ends.getOrDefault(task, 0L) - lag;
                offsets.computeIfAbsent(sub, k -> new HashMap<>()).put(task.partition(), offset);
            }
        }
        return new MemberMetadataAndStateImpl(Optional.empty(), Optional.empty(), c.processId.id().toString(),
            Map.of(), active, standby, Map.of(), offsets, Map.of());
    }

    static TopologyDescriber topology(final Scenario s) {
        final SortedMap<String, Integer> partitions = new TreeMap<>();
        final Set<String> stateful = new HashSet<>();
        for (final Scenario.Task t : s.tasks.values()) {
            final String sub = subtopologyId(t.id);
            partitions.merge(sub, t.id.partition() + 1, Math::max);
            if (t.hasChangelog()) {
                stateful.add(sub);
            }
        }
        final List<String> subtopologies = new ArrayList<>(partitions.keySet());
        return new TopologyDescriber() {
            @Override
            public List<String> subtopologies() {
                return subtopologies;
            }

            @Override
            public int maxNumInputPartitions(final String subtopologyId) {
                final Integer n = partitions.get(subtopologyId);
                if (n == null) {
                    throw new NoSuchElementException(subtopologyId);
                }
                return n;
            }

            @Override
            public boolean isStateful(final String subtopologyId) {
                return stateful.contains(subtopologyId);
            }
        };
    }
}
