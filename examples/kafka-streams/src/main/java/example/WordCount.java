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
 * knows Segue.
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
    props.putIfAbsent("default.key.serde", Serdes.StringSerde.class.getName());
    props.putIfAbsent("default.value.serde", Serdes.StringSerde.class.getName());

    StreamsBuilder builder = new StreamsBuilder();
    builder.<String, String>stream(input)
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
}
