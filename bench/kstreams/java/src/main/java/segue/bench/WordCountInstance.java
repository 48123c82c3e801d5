package segue.bench;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;

/**
 * One instance of seed 003's WordCount under Kafka Streams, reporting what the benchmark
 * driver (bench/kstreams/run.py) measures as JSON lines on stdout:
 *
 * <pre>
 * {"event":"tasks","t":MS,"state":"RUNNING","active":["0_1","1_1"],"standby":["1_2"]}
 * {"event":"restored","t":MS,"kind":"active"|"standby","partition":P,"records":N}
 * </pre>
 *
 * "tasks" is printed whenever the instance's state or task sets change (polled every 50 ms);
 * "restored" for every batch of changelog records loaded into a restoring active task
 * (StateRestoreListener) or a standby/warmup (StandbyUpdateListener). The assignor's own log
 * (slf4j-simple, stderr) says when the probing rebalances stop.
 *
 * Arguments, as key=value: bootstrap, application, input, output, probing-ms, and, each
 * optional: instance (the group.instance.id of static membership; without it the instance
 * is a dynamic member), state-dir, and properties (a properties file read last, whose
 * settings override the ones above: how the Kafka Streams + Segue side sets
 * task.assignor.class and state.dir).
 */
public final class WordCountInstance {
    private WordCountInstance() {}

    static synchronized void emit(String json) {
        System.out.println(json);
        System.out.flush();
    }

    static String tasks(java.util.Set<TaskId> ids) {
        return ids.stream().map(id -> "\"" + id + "\"").sorted().collect(Collectors.joining(","));
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (String a : argv) {
            int eq = a.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("argument " + a + " is not key=value");
            }
            args.put(a.substring(0, eq), a.substring(eq + 1));
        }
        String instance = args.get("instance");
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args.get("application"));
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
        if (args.containsKey("state-dir")) {
            props.put(StreamsConfig.STATE_DIR_CONFIG, args.get("state-dir"));
        }
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, 1);
        props.put(StreamsConfig.PROBING_REBALANCE_INTERVAL_MS_CONFIG, Long.parseLong(args.get("probing-ms")));
        // Every count is emitted, as Segue's WordCount does (no record cache merging updates).
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        // Static membership: Kafka Streams appends the thread's index to this id.
        if (instance != null) {
            props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instance);
        }
        if (args.containsKey("properties")) {
            try (Reader file = Files.newBufferedReader(Path.of(args.get("properties")))) {
                props.load(file);
            }
        }

        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> source = builder.stream(args.get("input"));
        source.flatMapValues(value -> Arrays.stream(value.toLowerCase(Locale.getDefault()).split("\\W+"))
                        .filter(word -> !word.isEmpty()).collect(Collectors.toList()))
                .groupBy((key, value) -> value)
                .count(Materialized.as("counts-store"))
                .toStream()
                .to(args.get("output"), Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        streams.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(TopicPartition tp, String store, long start, long end) {}

            @Override
            public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long n) {
                restored("active", tp, n);
            }

            @Override
            public void onRestoreEnd(TopicPartition tp, String store, long total) {}
        });
        streams.setStandbyUpdateListener(new StandbyUpdateListener() {
            @Override
            public void onUpdateStart(TopicPartition tp, String store, long start) {}

            @Override
            public void onBatchLoaded(TopicPartition tp, String store, TaskId task, long batchEnd,
                                      long batchSize, long currentEnd) {
                restored("standby", tp, batchSize);
            }

            @Override
            public void onUpdateSuspended(TopicPartition tp, String store, long storeOffset,
                                          long currentEnd, SuspendReason reason) {}
        });

        ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor();
        String[] last = {""};
        poller.scheduleAtFixedRate(() -> {
            TreeSet<TaskId> active = new TreeSet<>();
            TreeSet<TaskId> standby = new TreeSet<>();
            for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
                thread.activeTasks().forEach(t -> active.add(t.taskId()));
                thread.standbyTasks().forEach(t -> standby.add(t.taskId()));
            }
            String body = "\"state\":\"" + streams.state() + "\",\"active\":[" + tasks(active)
                    + "],\"standby\":[" + tasks(standby) + "]";
            if (!body.equals(last[0])) {
                last[0] = body;
                emit("{\"event\":\"tasks\",\"t\":" + System.currentTimeMillis() + "," + body + "}");
            }
        }, 0, 50, TimeUnit.MILLISECONDS);

        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            poller.shutdownNow();
            streams.close();
            stop.countDown();
        }));
        streams.start();
        stop.await();
    }

    static void restored(String kind, TopicPartition tp, long records) {
        emit("{\"event\":\"restored\",\"t\":" + System.currentTimeMillis() + ",\"kind\":\"" + kind
                + "\",\"partition\":" + tp.partition() + ",\"records\":" + records + "}");
    }
}
