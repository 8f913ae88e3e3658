package fleet.live;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.ThreadMetadata;

/**
 * A small Kafka Streams application for the live tests and `make demo-live`: one JVM hosts several
 * instances (separate KafkaStreams objects, each with its own state directory, client.rack and client tags).
 *
 * Topology (three subtopologies): "<app>.words" re-keyed by value (stateless, writes a repartition topic);
 * the repartitioned words counted into the logged store "counts" (stateful, changelog
 * "<app>-counts-changelog"), results to "<app>.counts"; "<app>.clicks" filtered to "<app>.clicks-out"
 * (stateless, its own source). With --source-table true a fourth: "<app>.profiles" read as a table into the
 * store "profiles" with topology.optimization=all, so the source topic is the store's changelog (no
 * "-changelog" topic), forwarded to "<app>.profiles-out"; the command "hold" makes that forwarding block
 * (the stream thread stops processing and committing, so the committed offsets of "<app>.profiles" stay
 * behind its log end) until "release".
 *
 * --plain-consumers classic,consumer starts, in the same JVM, one plain KafkaConsumer (no Kafka Streams)
 * per listed group protocol, in group "<app>-plain-<protocol>", polling "<app>.words".
 *
 * Arguments: --app-id ID --bootstrap HOST:PORT [--protocol classic|streams] [--instances N]
 * [--racks r1,r2,..] [--standbys N] [--threads N] [--state-dir DIR] [--partitions N] [--produce N]
 * [--rack-aware-tags zone] [--source-table true] [--plain-consumers classic,consumer]
 * [--streams-config FILE]. Instance i gets client.rack = racks[i % len], client.tag.zone = that rack and
 * client.tag.instance = i<i>. --streams-config names a properties file whose entries are added to every
 * instance's Streams configs last (e.g. task.assignor.class and the plan follower's fleet.assignor.*).
 *
 * Prints one JSON line per event on stdout ({"event": "state" | "threads" | "stopped" | "produced" ...});
 * reads commands from stdin: "stop I", "start I" (starts instance I again, with its state directory and so
 * its process id; or a new instance when I is the next index), "produce N", "threads" (prints each instance's consumer client ids),
 * "hold", "release", "quit". End of stdin closes every instance and exits, so the application never
 * outlives its parent.
 */
public final class DemoApp {

    private final Map<String, String> args;
    private final String appId;
    private final String bootstrap;
    private final List<KafkaStreams> instances = new ArrayList<>();
    private final List<String> racks;
    private final List<KafkaConsumer<String, String>> plainConsumers = new ArrayList<>();
    private final List<Thread> plainThreads = new ArrayList<>();
    private static volatile boolean hold;

    private DemoApp(Map<String, String> args) {
        this.args = args;
        this.appId = required(args, "app-id");
        this.bootstrap = required(args, "bootstrap");
        this.racks = List.of(args.getOrDefault("racks", "rack-a").split(","));
    }

    static Map<String, String> parse(String[] argv) {
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i < argv.length; i++) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
                throw new IllegalArgumentException("expected --key value pairs, got " + String.join(" ", argv));
            }
            out.put(argv[i].substring(2), argv[++i]);
        }
        return out;
    }

    static String required(Map<String, String> args, String key) {
        String value = args.get(key);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("missing --" + key);
        }
        return value;
    }

    static synchronized void emit(String json) {
        System.out.println(json);
        System.out.flush();
    }

    static String quote(String s) {
        return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    String words() {
        return appId + ".words";
    }

    String clicks() {
        return appId + ".clicks";
    }

    String profiles() {
        return appId + ".profiles";
    }

    boolean sourceTable() {
        return Boolean.parseBoolean(args.getOrDefault("source-table", "false"));
    }

    static void awaitRelease() {
        while (hold) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    Topology topology(Properties props) {
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> words = builder.stream(words());
        words.groupBy((key, value) -> value, Grouped.with("by-word", Serdes.String(), Serdes.String()))
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts"))
            .toStream()
            .to(appId + ".counts", Produced.with(Serdes.String(), Serdes.Long()));
        builder.<String, String>stream(clicks())
            .filter((key, value) -> value != null && !value.isEmpty())
            .mapValues(value -> value.toUpperCase(Locale.ROOT))
            .to(appId + ".clicks-out");
        if (sourceTable()) {
            // With topology.optimization=all the table's store uses its source topic as changelog.
            builder.table(profiles(), Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("profiles"))
                .toStream()
                .peek((key, value) -> awaitRelease())
                .to(appId + ".profiles-out");
        }
        return builder.build(props);
    }

    Properties adminProps() {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return props;
    }

    void createTopics() throws Exception {
        int partitions = Integer.parseInt(args.getOrDefault("partitions", "4"));
        try (Admin admin = Admin.create(adminProps())) {
            // The broker's default replication factor (so a multi-broker test spreads replicas over racks).
            Optional<Short> rf = Optional.empty();
            List<NewTopic> topics = new ArrayList<>(List.of(
                new NewTopic(words(), Optional.of(partitions), rf),
                new NewTopic(clicks(), Optional.of(Math.max(1, partitions - 1)), rf),
                new NewTopic(appId + ".counts", Optional.of(partitions), rf),
                new NewTopic(appId + ".clicks-out", Optional.of(1), rf)));
            if (sourceTable()) {
                topics.add(new NewTopic(profiles(), Optional.of(partitions), rf));
                topics.add(new NewTopic(appId + ".profiles-out", Optional.of(1), rf));
            }
            for (NewTopic topic : topics) {
                try {
                    admin.createTopics(List.of(topic)).all().get();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
            if (isStreamsProtocol()) {
                // A streams group's standby count is a group config on the broker (KIP-1071).
                ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, appId);
                List<AlterConfigOp> ops = new ArrayList<>();
                ops.add(new AlterConfigOp(new ConfigEntry("streams.num.standby.replicas",
                    args.getOrDefault("standbys", "0")), AlterConfigOp.OpType.SET));
                if (args.containsKey("rack-aware-tags")) {
                    ops.add(new AlterConfigOp(new ConfigEntry("streams.rack.aware.assignment.tags",
                        args.get("rack-aware-tags")), AlterConfigOp.OpType.SET));
                }
                admin.incrementalAlterConfigs(Map.of(group, ops)).all().get();
            }
        }
    }

    boolean isStreamsProtocol() {
        return args.getOrDefault("protocol", "classic").equals("streams");
    }

    void produce(int records) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < records; i++) {
                String key = "k" + i;
                producer.send(new ProducerRecord<>(words(), key, "w" + (i * 7919 % 997)));
                producer.send(new ProducerRecord<>(clicks(), key, (i % 5 == 0) ? "" : "c" + i));
                if (sourceTable()) {
                    producer.send(new ProducerRecord<>(profiles(), "p" + (i % 101), "v" + i));
                }
            }
            producer.flush();
        }
        emit("{\"event\":\"produced\",\"records\":" + records + "}");
    }

    Properties streamsProps(int index) {
        Properties props = new Properties();
        String rack = racks.get(index % racks.size());
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        String stateRoot = args.getOrDefault("state-dir", System.getProperty("java.io.tmpdir") + "/fleet-demo");
        props.put(StreamsConfig.STATE_DIR_CONFIG, new File(stateRoot, appId + "-" + index).getPath());
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args.getOrDefault("threads", "1"));
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "500");
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        // client.rack for the main consumer (classic: its subscription's rack) and for the streams group
        // member (KIP-1071 reads the unprefixed client.rack).
        props.put(ConsumerConfig.CLIENT_RACK_CONFIG, rack);
        props.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.CLIENT_RACK_CONFIG), rack);
        props.put(StreamsConfig.CLIENT_TAG_PREFIX + "zone", rack);
        props.put(StreamsConfig.CLIENT_TAG_PREFIX + "instance", "i" + index);
        props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, "127.0.0.1:" + (7000 + index));
        if (isStreamsProtocol()) {
            props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        } else {
            props.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, args.getOrDefault("standbys", "0"));
            if (args.containsKey("rack-aware-tags")) {
                props.put(StreamsConfig.RACK_AWARE_ASSIGNMENT_TAGS_CONFIG, args.get("rack-aware-tags"));
            }
            // Short session so that a stopped instance leaves the group quickly in the tests.
            props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "10000");
            props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "1000");
        }
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, args.getOrDefault("replication-factor", "-1"));
        if (sourceTable()) {
            props.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, StreamsConfig.OPTIMIZE);
        }
        props.putAll(extraConfigs());
        return props;
    }

    Properties extraConfigs() {
        Properties extra = new Properties();
        String file = args.get("streams-config");
        if (file != null) {
            try (var in = java.nio.file.Files.newBufferedReader(java.nio.file.Path.of(file), StandardCharsets.UTF_8)) {
                extra.load(in);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("cannot read --streams-config " + file, e);
            }
        }
        return extra;
    }

    void start(int index) {
        Properties props = streamsProps(index);
        KafkaStreams streams = new KafkaStreams(topology(props), props);
        streams.setStateListener((newState, oldState) -> emit("{\"event\":\"state\",\"instance\":" + index
            + ",\"state\":" + quote(newState.name()) + "}"));
        streams.start();
        if (index < instances.size()) {
            instances.set(index, streams);
        } else {
            instances.add(streams);
        }
    }

    void printThreads() {
        StringBuilder json = new StringBuilder("{\"event\":\"threads\",\"instances\":[");
        for (int i = 0; i < instances.size(); i++) {
            KafkaStreams streams = instances.get(i);
            if (i > 0) {
                json.append(',');
            }
            if (streams == null) {
                json.append("null");
                continue;
            }
            Set<ThreadMetadata> threads = streams.metadataForLocalThreads();
            json.append("{\"instance\":").append(i).append(",\"state\":").append(quote(streams.state().name()))
                .append(",\"rack\":").append(quote(racks.get(i % racks.size()))).append(",\"threads\":[");
            json.append(threads.stream().sorted((a, b) -> a.threadName().compareTo(b.threadName()))
                .map(t -> "{\"consumer_client_id\":" + quote(t.consumerClientId())
                    + ",\"active\":" + taskList(t.activeTasks().stream().map(m -> m.taskId().toString()))
                    + ",\"standby\":" + taskList(t.standbyTasks().stream().map(m -> m.taskId().toString()))
                    + "}")
                .collect(Collectors.joining(",")));
            json.append("]}");
        }
        emit(json.append("]}").toString());
    }

    static String taskList(java.util.stream.Stream<String> ids) {
        return "[" + ids.sorted().map(DemoApp::quote).collect(Collectors.joining(",")) + "]";
    }

    void stop(int index) {
        KafkaStreams streams = instances.get(index);
        if (streams != null) {
            streams.close(Duration.ofSeconds(20));
            instances.set(index, null);
        }
        emit("{\"event\":\"stopped\",\"instance\":" + index + "}");
    }

    void startPlainConsumer(String protocol) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, appId + "-plain-" + protocol);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props);
        consumer.subscribe(List.of(words()));
        Thread thread = new Thread(() -> {
            try {
                while (true) {
                    consumer.poll(Duration.ofMillis(500));
                }
            } catch (WakeupException e) {
                // closing
            } finally {
                consumer.close(Duration.ofSeconds(5));
            }
        }, "plain-consumer-" + protocol);
        thread.setDaemon(true);
        thread.start();
        plainConsumers.add(consumer);
        plainThreads.add(thread);
    }

    void closeAll() {
        hold = false;
        plainConsumers.forEach(KafkaConsumer::wakeup);
        for (Thread thread : plainThreads) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (int i = 0; i < instances.size(); i++) {
            if (instances.get(i) != null) {
                instances.get(i).close(Duration.ofSeconds(20));
                instances.set(i, null);
            }
        }
    }

    void run() throws Exception {
        createTopics();
        int records = Integer.parseInt(args.getOrDefault("produce", "0"));
        if (records > 0) {
            produce(records);
        }
        int count = Integer.parseInt(args.getOrDefault("instances", "1"));
        for (int i = 0; i < count; i++) {
            start(i);
        }
        for (String protocol : args.getOrDefault("plain-consumers", "").split(",")) {
            if (!protocol.isEmpty()) {
                startPlainConsumer(protocol);
            }
        }
        emit("{\"event\":\"started\",\"instances\":" + count + "}");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            switch (words[0]) {
                case "stop" -> stop(Integer.parseInt(words[1]));
                case "start" -> {
                    int index = Integer.parseInt(words[1]);
                    if (index > instances.size() || (index < instances.size() && instances.get(index) != null)) {
                        emit("{\"event\":\"error\",\"message\":" + quote("cannot start instance " + index) + "}");
                    } else {
                        start(index);
                        emit("{\"event\":\"started-instance\",\"instance\":" + index + "}");
                    }
                }
                case "produce" -> produce(Integer.parseInt(words[1]));
                case "threads" -> printThreads();
                case "hold" -> {
                    hold = true;
                    emit("{\"event\":\"hold\"}");
                }
                case "release" -> {
                    hold = false;
                    emit("{\"event\":\"release\"}");
                }
                case "quit" -> {
                    closeAll();
                    emit("{\"event\":\"quit\"}");
                    return;
                }
                case "" -> { }
                default -> emit("{\"event\":\"error\",\"message\":" + quote("unknown command " + line) + "}");
            }
        }
        closeAll();
    }

    public static void main(String[] argv) throws Exception {
        DemoApp app;
        try {
            app = new DemoApp(parse(argv));
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(2);
            return;
        }
        app.run();
        System.exit(0);
    }
}
