package fleet.live;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.StreamsAssignmentProtocolVersions;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;

/**
 * Benchmark only: many small classic groups whose members look like Kafka Streams clients on the wire, for
 * timing `collect` on a cluster with many applications without running thousands of KafkaStreams instances.
 *
 * Each application "<prefix><i>" has a source topic "<prefix><i>.in" and a changelog
 * "<prefix><i>-store-changelog" (P partitions each) and M members. A member is a plain KafkaConsumer whose
 * assignor is named "stream" (Streams' protocol name) and sends Kafka's own SubscriptionInfo (process id,
 * endpoint, client tags); the leader assigns task 0_p to member p % M and its standby to the next member,
 * encoded with Kafka's own AssignmentInfo. Partitions are paused once assigned (nothing is fetched).
 *
 * Arguments: --bootstrap HOST:PORT [--apps N] [--members M] [--partitions P] [--prefix bench-].
 * Prints {"event":"started"} once every consumer thread runs; end of stdin (or "quit") closes them all.
 */
public final class FakeFleet {

    /** The leader's and every member's assignor; one instance per consumer (Configurable gets its identity). */
    public static final class StreamsLikeAssignor implements ConsumerPartitionAssignor, Configurable {
        private ProcessId processId;
        private String rack;
        private String endpoint;
        private String source;

        @Override
        public void configure(Map<String, ?> configs) {
            processId = new ProcessId(UUID.fromString((String) configs.get("fake.process.id")));
            rack = (String) configs.get("fake.rack");
            endpoint = (String) configs.get("fake.endpoint");
            source = (String) configs.get("fake.source");
        }

        @Override
        public String name() {
            return "stream";
        }

        @Override
        public ByteBuffer subscriptionUserData(Set<String> topics) {
            int version = StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION;
            return new SubscriptionInfo(version, version, processId, endpoint, Map.of(), (byte) 0, 0,
                Map.of("zone", rack)).encode();
        }

        @Override
        public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
            List<String> members = new ArrayList<>(new TreeSet<>(groupSubscription.groupSubscription().keySet()));
            Integer count = metadata.partitionCountForTopic(source);
            int partitions = count == null ? 0 : count;
            Map<String, List<TopicPartition>> active = new HashMap<>();
            Map<String, Map<TaskId, Set<TopicPartition>>> standby = new HashMap<>();
            for (String m : members) {
                active.put(m, new ArrayList<>());
                standby.put(m, new HashMap<>());
            }
            for (int p = 0; p < partitions; p++) {
                TopicPartition tp = new TopicPartition(source, p);
                active.get(members.get(p % members.size())).add(tp);
                if (members.size() > 1) {
                    standby.get(members.get((p + 1) % members.size())).put(new TaskId(0, p), Set.of(tp));
                }
            }
            int version = StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION;
            Map<String, Assignment> out = new HashMap<>();
            for (String m : members) {
                List<TopicPartition> parts = active.get(m);
                parts.sort((x, y) -> Integer.compare(x.partition(), y.partition()));
                List<TaskId> tasks = new ArrayList<>();
                parts.forEach(tp -> tasks.add(new TaskId(0, tp.partition())));
                ByteBuffer info = new AssignmentInfo(version, version, tasks, standby.get(m), Map.of(), Map.of(), 0)
                    .encode();
                out.put(m, new Assignment(parts, info));
            }
            return new GroupAssignment(out);
        }
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = DemoApp.parse(argv);
        String bootstrap = DemoApp.required(args, "bootstrap");
        int apps = Integer.parseInt(args.getOrDefault("apps", "100"));
        int membersPerApp = Integer.parseInt(args.getOrDefault("members", "10"));
        int partitions = Integer.parseInt(args.getOrDefault("partitions", "10"));
        String prefix = args.getOrDefault("prefix", "bench-");

        Properties adminProps = new Properties();
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(adminProps)) {
            List<NewTopic> topics = new ArrayList<>();
            for (int i = 0; i < apps; i++) {
                topics.add(new NewTopic(prefix + i + ".in", Optional.of(partitions), Optional.empty()));
                topics.add(new NewTopic(prefix + i + "-store-changelog", Optional.of(partitions), Optional.empty()));
            }
            for (var entry : admin.createTopics(topics).values().entrySet()) {
                try {
                    entry.getValue().get();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
        }

        List<KafkaConsumer<byte[], byte[]>> consumers = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        CountDownLatch started = new CountDownLatch(apps * membersPerApp);
        for (int i = 0; i < apps; i++) {
            String app = prefix + i;
            for (int m = 0; m < membersPerApp; m++) {
                Properties props = new Properties();
                props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                props.put(ConsumerConfig.GROUP_ID_CONFIG, app);
                props.put(ConsumerConfig.CLIENT_ID_CONFIG, app + "-" + m + "-StreamThread-1-consumer");
                props.put(ConsumerConfig.CLIENT_RACK_CONFIG, "rack-" + (char) ('a' + m % 3));
                props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
                props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, StreamsLikeAssignor.class.getName());
                props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "45000");
                props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "5000");
                props.put("fake.process.id", UUID.nameUUIDFromBytes((app + "/" + m).getBytes(StandardCharsets.UTF_8))
                    .toString());
                props.put("fake.rack", "rack-" + (char) ('a' + m % 3));
                props.put("fake.endpoint", "127.0.0.1:" + (9000 + m));
                props.put("fake.source", app + ".in");
                KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
                consumers.add(consumer);
                Thread thread = new Thread(() -> {
                    consumer.subscribe(List.of(app + ".in"), new ConsumerRebalanceListener() {
                        @Override
                        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        }

                        @Override
                        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                            consumer.pause(partitions);
                        }
                    });
                    started.countDown();
                    try {
                        while (true) {
                            consumer.poll(Duration.ofSeconds(1));
                        }
                    } catch (WakeupException e) {
                        // closing
                    } finally {
                        consumer.close(Duration.ofSeconds(1));
                    }
                }, app + "-" + m);
                thread.setDaemon(true);
                threads.add(thread);
                thread.start();
            }
        }
        started.await();
        DemoApp.emit("{\"event\":\"started\",\"consumers\":" + consumers.size() + "}");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.trim().equals("quit")) {
            // only "quit" or end of input
        }
        consumers.forEach(KafkaConsumer::wakeup);
        for (Thread t : threads) {
            t.join(5000);
        }
        DemoApp.emit("{\"event\":\"quit\"}");
        System.exit(0);
    }
}
