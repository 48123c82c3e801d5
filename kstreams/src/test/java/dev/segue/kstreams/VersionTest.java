package dev.segue.kstreams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.junit.jupiter.api.Test;

/**
 * The Kafka jars these tests run on are the version the build says it tests (surefire passes
 * {@code expected.kafka.version}, the pom's {@code kafka.version}): `make kstreams` runs the
 * suite on 3.8 and again on the newest, and neither run can silently test another version.
 * The versions are read from the properties each jar carries (what AppInfoParser reads; the
 * class itself moved to an internals package in 4.4, so the tests do not use it).
 */
class VersionTest {
  static String expected() {
    String expected = System.getProperty("expected.kafka.version");
    assertNotNull(expected, "expected.kafka.version is not set (surefire sets it from kafka.version)");
    return expected;
  }

  /** The version in {@code resource} of the jar that holds {@code inJar}, logged with the jar. */
  static String version(Class<?> inJar, String resource) throws IOException {
    Properties props = new Properties();
    try (InputStream in = inJar.getResourceAsStream(resource)) {
      assertNotNull(in, resource + " not found");
      props.load(in);
    }
    String jar = inJar.getProtectionDomain().getCodeSource().getLocation().getPath();
    System.out.println(resource + ": " + props.getProperty("version") + " (" + jar + ")");
    return props.getProperty("version");
  }

  @Test
  void kafkaClientsIsTheVersionUnderTest() throws IOException {
    assertEquals(expected(), version(TopicPartition.class, "/kafka/kafka-version.properties"));
  }

  @Test
  void kafkaStreamsIsTheVersionUnderTest() throws IOException {
    assertEquals(expected(), version(TaskAssignor.class, "/kafka/kafka-streams-version.properties"));
  }
}
