package dev.segue.kstreams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The Java half of tests/protocol/test_kstreams.py: the same fixtures, the same verdicts. */
class ContractTest {
  @Test
  void theReportOfAnApplicationStateIsTheFixture() throws Exception {
    JsonNode fixture = Fixtures.json("report.json");
    ApplicationState state = Fixtures.state(fixture);
    ObjectNode report = Reports.report("wc", fixture.path("id").asText(),
        fixture.path("reported_at_ms").asLong(), state);
    // the same JSON (the tree compares number node types; the text does not)
    assertEquals(fixture, Answers.decode(Reports.encode(report)));
    JsonNode back = Answers.decode(Reports.encode(report));
    assertEquals(fixture, back);
  }

  @Test
  void theAnswerFixtureIsAcceptedAndMapsToTheExpectedAssignment() {
    JsonNode report = Fixtures.json("report.json");
    JsonNode answer = Fixtures.json("answer.json");
    assertEquals(java.util.List.of(), Answers.check(report, answer));
    Set<ProcessId> clients = Fixtures.state(report).kafkaStreamsStates(false).keySet();
    Map<ProcessId, KafkaStreamsAssignment> mapped =
        Answers.map(clients, answer, report, 0);
    JsonNode expected = Fixtures.json("mapped.json");
    assertEquals(expected.size(), mapped.size());
    expected.properties().forEach(e -> {
      KafkaStreamsAssignment got = mapped.get(Answers.processId(e.getKey()));
      assertEquals(ids(e.getValue().path("active")), of(got, AssignedTask.Type.ACTIVE), e.getKey());
      assertEquals(ids(e.getValue().path("standby")), of(got, AssignedTask.Type.STANDBY), e.getKey());
      assertEquals(e.getValue().path("followup_at_ms").asLong(),
          got.followupRebalanceDeadline().orElseThrow().toEpochMilli());
    });
  }

  @Test
  void aClientTheAnswerDoesNotMapGetsNothing() {
    JsonNode report = Fixtures.json("report.json");
    ObjectNode answer = (ObjectNode) Fixtures.json("answer.json");
    ProcessId stranger = Answers.processId("00000000-0000-0000-0000-0000000000ff");
    Set<ProcessId> clients = new TreeSet<>(Fixtures.state(report).kafkaStreamsStates(false).keySet());
    clients.add(stranger);
    Map<ProcessId, KafkaStreamsAssignment> mapped =
        Answers.map(clients, answer, report, 0);
    assertTrue(mapped.get(stranger).tasks().isEmpty());
  }

  static Stream<JsonNode> cases(String fixture) {
    Iterable<JsonNode> cases = Fixtures.json(fixture);
    return java.util.stream.StreamSupport.stream(cases.spliterator(), false);
  }

  static Stream<JsonNode> refused() {
    return cases("refused.json");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refused")
  void eachRefusedAnswerIsRefusedNamingWhy(JsonNode refusal) {
    JsonNode report = Fixtures.json("report.json");
    ObjectNode answer = (ObjectNode) Fixtures.json("answer.json");
    ObjectNode members = (ObjectNode) answer.path("members");
    refusal.path("members").properties().forEach(e -> members.set(e.getKey(), e.getValue()));
    ObjectNode ks = (ObjectNode) answer.path("kafka_streams");
    refusal.path("clients").properties()
        .forEach(e -> ((ObjectNode) ks.path("clients")).set(e.getKey(), e.getValue()));
    if (refusal.has("answers")) {
      ks.set("answers", refusal.path("answers"));
    }
    String error = refusal.path("error").asText();
    assertTrue(Answers.check(report, answer).contains(error),
        () -> "expected " + error + " in " + Answers.check(report, answer));
  }

  static Stream<Arguments> takenUp() {
    return Stream.concat(
        cases("next.json").map(c -> Arguments.of("next", c)),
        cases("newer.json").map(c -> Arguments.of("newer", c)));
  }

  /** tests/protocol/test_kstreams.py's test_an_answer_for_an_earlier_report_is_taken_up_... */
  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("takenUp")
  void anAnswerForAnEarlierReportIsTakenUpOnlyByItsRule(String rule, JsonNode c) {
    ObjectNode report = (ObjectNode) Fixtures.json("report.json");
    report.set("last_applied", c.path("last_applied"));
    report.put("takes_newer", c.path("takes_newer").asBoolean(true));
    ObjectNode answer = (ObjectNode) Fixtures.json("answer.json");
    c.path("members").properties().forEach(
        e -> ((ObjectNode) answer.path("members")).set(e.getKey(), e.getValue()));
    ObjectNode ks = (ObjectNode) answer.path("kafka_streams");
    ks.put("answers", "7f3c2a10-0000");
    ks.set("then_followup_after_ms", c.path("then_followup_after_ms"));
    ((ObjectNode) ks.path("clients")).remove(c.path("unmap").asText(""));
    java.util.List<String> errors = Answers.check(report, answer);
    if (c.has("error")) {
      assertTrue(errors.contains(c.path("error").asText()), errors::toString);
      assertTrue(!Answers.answersNewer(report, answer) && !Answers.answersNext(report, answer));
      return;
    }
    assertEquals(java.util.List.of(), errors);
    assertEquals(rule.equals("next"), Answers.answersNext(report, answer));
    assertEquals(rule.equals("newer"), Answers.answersNewer(report, answer));
    Set<ProcessId> clients = Fixtures.state(report).kafkaStreamsStates(false).keySet();
    long now = c.path("now_ms").asLong(1795640001000L);
    for (KafkaStreamsAssignment a : Answers.map(clients, answer, report, now).values()) {
      assertEquals(c.path("followup_at_ms").asLong(),
          a.followupRebalanceDeadline().orElseThrow().toEpochMilli());
    }
  }

  @Test
  void theAppliedRecordsAreTheFixturesThePythonSideDecodes() throws Exception {
    JsonNode fixture = Fixtures.json("applied.json");
    JsonNode answered = fixture.path("generation");
    assertEquals(answered, Reports.JSON.readTree(SegueTaskAssignor.applied(
        answered.path("report").asText(), answered.path("generation").asLong())));
    JsonNode fellBack = fixture.path("fallback");
    assertEquals(fellBack, Reports.JSON.readTree(SegueTaskAssignor.fellBack(
        fellBack.path("report").asText(), fellBack.path("fallback").asText())));
  }

  @Test
  void theNamesAreTheProtocolsOwn() {
    JsonNode names = Fixtures.json("names.json");
    assertEquals(names.path("report_key").asText(), ConfigMapChannel.REPORT_KEY);
    assertEquals(names.path("report_id_key").asText(), ConfigMapChannel.REPORT_ID_KEY);
    assertEquals(names.path("applied_key").asText(), ConfigMapChannel.APPLIED_KEY);
    assertEquals(names.path("document_key").asText(), ConfigMapChannel.DOCUMENT_KEY);
    assertEquals(names.path("group_configmap").asText(), ConfigMapChannel.groupConfigMap("wc"));
    assertEquals(names.path("assignment_configmap").asText(),
        ConfigMapChannel.assignmentConfigMap("wc"));
    assertEquals(names.path("env_streamapp").asText(), ConfigMapChannel.ENV_STREAMAPP);
    assertEquals(names.path("env_pod_namespace").asText(), ConfigMapChannel.ENV_POD_NAMESPACE);
    assertEquals(names.path("env_pod_name").asText(), ConfigMapChannel.ENV_POD_NAME);
    assertEquals(names.path("metric_consumer_client").asText(), Endpoint.CONSUMER_CLIENT);
    assertEquals(names.path("metric_restore_lag").asText(), Endpoint.RESTORE_LAG);
    assertEquals(names.path("metric_fallbacks").asText() + "_total", Endpoint.FALLBACKS);
    assertEquals(names.path("env_metrics_port").asText(), Agent.ENV_METRICS_PORT);
    assertEquals(names.path("env_pod_ip").asText(), Agent.ENV_POD_IP);
    assertEquals(names.path("metrics_path").asText(), Endpoint.METRICS_PATH);
    assertEquals(names.path("health_path").asText(), Endpoint.HEALTH_PATH);
    assertEquals(names.path("task_assignor_class").asText(), SegueTaskAssignor.class.getName());
    assertEquals(names.path("client_supplier_class").asText(),
        SegueClientSupplier.class.getName());
  }

  private static Set<String> ids(JsonNode list) {
    Set<String> out = new TreeSet<>();
    list.forEach(x -> out.add(x.asText()));
    return out;
  }

  private static Set<String> of(KafkaStreamsAssignment a, AssignedTask.Type type) {
    Set<String> out = new TreeSet<>();
    a.tasks().values().stream().filter(t -> t.type() == type).forEach(t -> out.add(t.id().toString()));
    return out;
  }
}
