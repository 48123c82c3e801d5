package example;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * WordCount as any Kafka Streams team writes it: its configuration comes from a properties
 * file (args[0]), topics from the "input.topic" and "output.topic" entries. Nothing here
 * knows Segue. "line.cost.ms" (0 unless set) makes each input line cost that much time, as
 * a heavier app's processing would: how the tests give an autoscaler a known capacity.
 */
public final class WordCount {
  private WordCount() {}

  public static void main(String[] args) throws IOException, InterruptedException {
    if (args.length != 1) {
      System.err.println("usage: WordCount <streams.properties>");
      System.exit(2);
    }
    Properties props = new Properties();
    try (InputStream in = new FileInputStream(args[0])) {
      props.load(in);
    }
    String input = props.getProperty("input.topic", "text");
    String output = props.getProperty("output.topic", "counts");
    long cost = Long.parseLong(props.getProperty("line.cost.ms", "0"));
    props.putIfAbsent("default.key.serde", Serdes.StringSerde.class.getName());
    props.putIfAbsent("default.value.serde", Serdes.StringSerde.class.getName());

    StreamsBuilder builder = new StreamsBuilder();
    builder.<String, String>stream(input)
        .peek((key, line) -> work(cost))
        .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
        .filter((key, word) -> !word.isEmpty())
        .groupBy((key, word) -> word)
        .count(Materialized.as("counts"))
        .toStream()
        .mapValues(String::valueOf)
        .to(output, Produced.with(Serdes.String(), Serdes.String()));

    KafkaStreams streams = new KafkaStreams(builder.build(), props);
    CountDownLatch done = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      streams.close();
      done.countDown();
    }));
    streams.start();
    done.await();
  }

  private static void work(long millis) {
    if (millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
