package dev.segue.kstreams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.zip.GZIPOutputStream;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.junit.jupiter.api.Test;

/** The assignor against a channel in memory: it maps an answer, and falls back without one. */
class SegueTaskAssignorTest {
  /** Answers each report with {@code answer(reportId)} (empty: nothing); keeps each applied record. */
  static class Memory implements Channel {
    final Function<String, Optional<JsonNode>> answer;
    Optional<byte[]> document = Optional.empty();
    int reports;
    JsonNode lastReport;
    final List<JsonNode> applied = new ArrayList<>();

    Memory(Function<String, Optional<JsonNode>> answer) {
      this.answer = answer;
    }

    @Override
    public void report(String id, byte[] gzipped) {
      reports++;
      lastReport = Answers.decode(gzipped);
      document = answer.apply(id).map(SegueTaskAssignorTest::gzip);
    }

    @Override
    public Optional<byte[]> document() {
      return document;
    }

    @Override
    public void applied(String json) throws IOException {
      applied.add(Reports.JSON.readTree(json));
    }
  }

  static byte[] gzip(JsonNode json) {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
        gz.write(Reports.JSON.writeValueAsBytes(json));
      }
      return out.toByteArray();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static JsonNode answering(String reportId) {
    ObjectNode answer = (ObjectNode) Fixtures.json("answer.json");
    ((ObjectNode) answer.path("kafka_streams")).put("answers", reportId);
    return answer;
  }

  final ApplicationState state = Fixtures.state(Fixtures.json("report.json"));

  @Test
  void theOperatorsAnswerToThisReportIsWhatKafkaStreamsGets() {
    Memory channel = new Memory(id -> Optional.of(answering(id)));
    SegueTaskAssignor assignor = new SegueTaskAssignor(channel, "wc", 1_000, Clock.systemUTC());
    long before = SegueTaskAssignor.fallbacks();
    TaskAssignment result = assignor.assign(state);
    assertEquals(before, SegueTaskAssignor.fallbacks());
    assertEquals(1, channel.reports);
    assertEquals(6, channel.lastReport.path("tasks").size());
    Map<String, String> active = actives(result);
    assertEquals("00000000-0000-0000-0000-00000000000c", active.get("0_1"));
    assertEquals("00000000-0000-0000-0000-00000000000a", active.get("1_1"));
    String report = channel.lastReport.path("id").asText();
    assertEquals(List.of(Reports.JSON.createObjectNode().put("report", report).put("generation", 4)),
        channel.applied);
  }

  @Test
  void aRevokingAnswerIsTakenUpAgainAtOnceForTheNextReportAndOnlyThatOne() throws Exception {
    long then = 15_000;
    JsonNode[] first = {null};
    Memory channel = new Memory(id -> {  // answers the first report only; stays published
      if (first[0] == null) {
        ObjectNode answer = (ObjectNode) answering(id);
        ((ObjectNode) answer.path("kafka_streams")).put("then_followup_after_ms", then);
        first[0] = answer;
      }
      return Optional.of(first[0]);
    });
    long before = SegueTaskAssignor.fallbacks();
    new SegueTaskAssignor(channel, "wc", 2_000, Clock.systemUTC()).assign(state);
    String answered = channel.lastReport.path("id").asText();

    long began = System.nanoTime();
    long from = System.currentTimeMillis();
    TaskAssignment again = new SegueTaskAssignor(channel, "wc", 2_000, Clock.systemUTC())
        .assign(state);
    long to = System.currentTimeMillis();
    Writes.await();  // the report and the record, written after the return
    assertTrue((System.nanoTime() - began) / 1_000_000 < 1_000, "the next report waits for nothing");
    assertEquals(before, SegueTaskAssignor.fallbacks());
    assertEquals(Reports.JSON.createObjectNode().put("report", answered).put("generation", 4),
        channel.lastReport.path("last_applied"));
    assertEquals(Reports.JSON.createObjectNode().put("report", channel.lastReport.path("id")
        .asText()).put("generation", 4), channel.applied.get(channel.applied.size() - 1));
    assertEquals("00000000-0000-0000-0000-00000000000c", actives(again).get("0_1"));
    for (KafkaStreamsAssignment a : again.assignment()) {  // counted from this rebalance
      long at = a.followupRebalanceDeadline().orElseThrow().toEpochMilli();
      assertTrue(at >= from + then && at <= to + then, a.toString());
    }

    new SegueTaskAssignor(channel, "wc", 300, Clock.systemUTC()).assign(state);
    assertEquals(before + 1, SegueTaskAssignor.fallbacks(), "the report after that waits");
  }

  @Test
  void aNewerRevokingAnswerForTheSameReportIsTakenUpAtOnceThenOnceAgain() throws Exception {
    long then = 15_000;
    long past = System.currentTimeMillis() - 100;  // the operator's "rejoin now", reckoned before
    JsonNode[] published = {null};
    Memory channel = new Memory(id -> {  // answers the first report; then decides once more
      if (published[0] == null) {
        published[0] = answering(id);
      } else if (published[0].path("generation").asLong() == 4) {
        ObjectNode newer = (ObjectNode) published[0].deepCopy();
        newer.put("generation", 5);
        ((ObjectNode) newer.path("kafka_streams")).put("then_followup_after_ms", then)
            .put("followup_at_ms", past);
        published[0] = newer;
      }
      return Optional.of(published[0]);
    });
    long before = SegueTaskAssignor.fallbacks();
    new SegueTaskAssignor(channel, "wc", 2_000, Clock.systemUTC()).assign(state);
    String first = channel.lastReport.path("id").asText();
    channel.document = channel.answer.apply("decided between two rebalances").map(
        SegueTaskAssignorTest::gzip);

    long began = System.nanoTime();
    TaskAssignment newer = new SegueTaskAssignor(channel, "wc", 2_000, Clock.systemUTC())
        .assign(state);
    Writes.await();
    assertTrue((System.nanoTime() - began) / 1_000_000 < 1_000, "a newer answer waits for nothing");
    assertEquals(before, SegueTaskAssignor.fallbacks());
    String second = channel.lastReport.path("id").asText();
    assertEquals(Reports.JSON.createObjectNode().put("report", first).put("generation", 4),
        channel.lastReport.path("last_applied"));
    assertEquals(Reports.JSON.createObjectNode().put("report", second).put("generation", 5)
        .put("newer", true), channel.applied.get(channel.applied.size() - 1));
    for (KafkaStreamsAssignment a : newer.assignment()) {  // its own follow-up: at once
      assertEquals(past, a.followupRebalanceDeadline().orElseThrow().toEpochMilli());
    }

    long from = System.currentTimeMillis();
    TaskAssignment again = new SegueTaskAssignor(channel, "wc", 2_000, Clock.systemUTC())
        .assign(state);
    long to = System.currentTimeMillis();
    Writes.await();
    assertEquals(before, SegueTaskAssignor.fallbacks(), "the handover's second rebalance");
    assertEquals(Reports.JSON.createObjectNode().put("report", channel.lastReport.path("id")
        .asText()).put("generation", 5), channel.applied.get(channel.applied.size() - 1));
    for (KafkaStreamsAssignment a : again.assignment()) {
      long at = a.followupRebalanceDeadline().orElseThrow().toEpochMilli();
      assertTrue(at >= from + then && at <= to + then, a.toString());
    }

    new SegueTaskAssignor(channel, "wc", 300, Clock.systemUTC()).assign(state);
    assertEquals(before + 1, SegueTaskAssignor.fallbacks(), "the report after that waits");
  }

  @Test
  void aNewerAnswerPublishedWhileTheLeaderWaitsIsMarkedNewerToo() throws Exception {
    JsonNode[] first = {null};
    Memory channel = new Memory(id -> {  // the second report is answered by a newer one
      if (first[0] == null) {
        first[0] = answering(id);
        return Optional.of(first[0]);
      }
      ObjectNode newer = (ObjectNode) first[0].deepCopy();
      newer.put("generation", 5);
      ((ObjectNode) newer.path("kafka_streams")).put("then_followup_after_ms", 15_000);
      return Optional.of(newer);
    });
    long before = SegueTaskAssignor.fallbacks();
    new SegueTaskAssignor(channel, "wc", 2_000, Clock.systemUTC()).assign(state);
    new SegueTaskAssignor(channel, "wc", 2_000, Clock.systemUTC()).assign(state);
    Writes.await();
    assertEquals(before, SegueTaskAssignor.fallbacks());
    assertEquals(2, channel.reports, "the first read found nothing to take up: it reported");
    assertEquals(Reports.JSON.createObjectNode().put("report", channel.lastReport.path("id")
        .asText()).put("generation", 5).put("newer", true),
        channel.applied.get(channel.applied.size() - 1));
  }

  @Test
  void noAnswerInTimeFallsBackToKafkaStreamsOwnAssignorWithEveryTaskPlaced() {
    Memory channel = new Memory(id -> Optional.empty());
    SegueTaskAssignor assignor = new SegueTaskAssignor(channel, "wc", 300, Clock.systemUTC());
    long before = SegueTaskAssignor.fallbacks();
    long began = System.nanoTime();
    TaskAssignment result = assignor.assign(state);
    long tookMs = (System.nanoTime() - began) / 1_000_000;
    assertTrue(tookMs >= 300 && tookMs < 5_000, "waited " + tookMs + " ms");
    assertEquals(before + 1, SegueTaskAssignor.fallbacks());
    assertEquals(state.allTasks().keySet().size(), actives(result).size());
    String report = channel.lastReport.path("id").asText();
    assertEquals(1, channel.applied.size());
    assertEquals(report, channel.applied.get(0).path("report").asText());
    assertEquals(List.of("report", "fallback"), fields(channel.applied.get(0)));
    assertTrue(channel.applied.get(0).path("fallback").asText()
        .startsWith("no answer to report " + report + " within 300 ms"), channel.applied.toString());
  }

  /** An answer refused at once, so that a fixed clock does not wait forever. */
  static Memory refusing() {
    return new Memory(id -> {
      ObjectNode answer = (ObjectNode) answering(id);
      ((ObjectNode) answer.path("members").path("wc-1")).putArray("active").add("0_0");
      return Optional.of(answer);
    });
  }

  @Test
  void aFallbackAsksEveryClientForARebalanceAfterTheRetryInterval() {
    Instant now = Instant.ofEpochMilli(1_795_640_000_000L);
    Clock clock = Clock.fixed(now, ZoneOffset.UTC);
    TaskAssignment result = new SegueTaskAssignor(refusing(), "wc", 1_000, 7_000, clock)
        .assign(state);
    assertEquals(3, result.assignment().size());
    for (KafkaStreamsAssignment a : result.assignment()) {
      assertEquals(Optional.of(now.plusMillis(7_000)), a.followupRebalanceDeadline(), a.toString());
    }
    TaskAssignment never = new SegueTaskAssignor(refusing(), "wc", 1_000, 0, clock).assign(state);
    never.assignment().forEach(a -> assertEquals(Optional.empty(), a.followupRebalanceDeadline()));
  }

  @Test
  void aRecordThatCannotBeWrittenCostsTheAssignmentNothing() {
    Memory failing = new Memory(id -> Optional.of(answering(id))) {
      @Override
      public void applied(String json) throws IOException {
        throw new IOException("HTTP 403");
      }
    };
    long before = SegueTaskAssignor.fallbacks();
    TaskAssignment result = new SegueTaskAssignor(failing, "wc", 1_000, Clock.systemUTC())
        .assign(state);
    assertEquals(before, SegueTaskAssignor.fallbacks());
    assertEquals("00000000-0000-0000-0000-00000000000c", actives(result).get("0_1"));
  }

  @Test
  void aStaleAnswerIsWaitedOutAndARefusedOneFallsBackAtOnce() {
    Memory stale = new Memory(id -> Optional.of(answering("an-earlier-report")));
    long before = SegueTaskAssignor.fallbacks();
    new SegueTaskAssignor(stale, "wc", 200, Clock.systemUTC()).assign(state);
    assertEquals(before + 1, SegueTaskAssignor.fallbacks());

    Memory twice = refusing();
    long began = System.nanoTime();
    TaskAssignment result = new SegueTaskAssignor(twice, "wc", 60_000, Clock.systemUTC())
        .assign(state);
    assertTrue((System.nanoTime() - began) / 1_000_000 < 10_000, "a refusal does not wait");
    assertEquals(before + 2, SegueTaskAssignor.fallbacks());
    assertEquals(6, actives(result).size());
  }

  @Test
  void aWaitThatIsNotANumberIsRefusedNamingTheSetting() {
    org.apache.kafka.common.config.ConfigException refused = org.junit.jupiter.api.Assertions
        .assertThrows(org.apache.kafka.common.config.ConfigException.class,
            () -> new SegueTaskAssignor().configure(Map.of("segue.answer.wait.ms", "5s")));
    assertTrue(refused.getMessage().contains("segue.answer.wait.ms"), refused.getMessage());
    assertTrue(refused.getMessage().contains("5s"), refused.getMessage());
  }

  @Test
  void aRetryThatIsNotAWholeNumberIsRefusedNamingTheSetting() {
    for (String bad : List.of("10s", "-1", "1.5")) {
      ConfigException refused = assertThrows(ConfigException.class,
          () -> new SegueTaskAssignor().configure(Map.of("segue.fallback.retry.ms", bad)));
      assertTrue(refused.getMessage().contains("segue.fallback.retry.ms"), refused.getMessage());
      assertTrue(refused.getMessage().contains(bad), refused.getMessage());
    }
  }

  static List<String> fields(JsonNode object) {
    List<String> out = new ArrayList<>();
    object.properties().forEach(e -> out.add(e.getKey()));
    return out;
  }

  static Map<String, String> actives(TaskAssignment result) {
    Map<String, String> out = new HashMap<>();
    for (KafkaStreamsAssignment a : result.assignment()) {
      for (AssignedTask t : a.tasks().values()) {
        if (t.type() == AssignedTask.Type.ACTIVE) {
          TaskId id = t.id();
          String was = out.put(id.toString(), a.processId().id().toString());
          assertEquals(null, was, "task " + id + " active twice");
        }
      }
    }
    return out;
  }
}
