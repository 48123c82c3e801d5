package dev.segue.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.zip.GZIPInputStream;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.ProcessId;

/**
 * The operator's answer: an assignment document (segue.protocol.document) whose
 * kafka_streams part says which client is which member. {@link #check} refuses an answer
 * for the reasons segue.protocol.kstreams_answer.check_answer gives, in the same words (the
 * fixtures in tests/contracts/kstreams hold both sides to it); {@link #map} turns an
 * accepted one into Kafka Streams' assignment: a learner is a standby (a warm-up).
 */
final class Answers {
  static final List<String> ROLES = List.of("active", "standby", "learning");

  private Answers() {}

  /** The document in the assignment ConfigMap's gzipped JSON. */
  static JsonNode decode(byte[] gzipped) {
    try (GZIPInputStream in = new GZIPInputStream(new java.io.ByteArrayInputStream(gzipped))) {
      return Reports.JSON.readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The revoking answer also answers the next report, once: the one by the leader that
   * returned this generation for the report it answers, with exactly the clients it maps
   * (segue.protocol.kstreams_answer.answers_next, where the why is written down).
   */
  static boolean answersNext(JsonNode report, JsonNode document) {
    JsonNode answer = document.path("kafka_streams");
    JsonNode applied = report.path("last_applied");
    if (!answer.path("then_followup_after_ms").isIntegralNumber() || !applied.isObject()) {
      return false;
    }
    boolean itsOwn = applied.path("report").asText().equals(answer.path("answers").asText());
    return (itsOwn || applied.path("newer").asBoolean(false))
        && applied.path("generation").isIntegralNumber()
        && applied.path("generation").asLong() == document.path("generation").asLong()
        && mapsEveryClient(report, answer);
  }

  /**
   * A revoking answer decided since the generation the leader took up last, for the same
   * report, also answers this one: taken up at once, with the follow-up {@link #map} gives
   * it, and marked {@code newer} in the applied record
   * (segue.protocol.kstreams_answer.answers_newer, where the why is written down).
   */
  static boolean answersNewer(JsonNode report, JsonNode document) {
    JsonNode answer = document.path("kafka_streams");
    JsonNode applied = report.path("last_applied");
    if (!report.path("takes_newer").asBoolean(false)
        || !answer.path("then_followup_after_ms").isIntegralNumber() || !applied.isObject()
        || !applied.path("generation").isIntegralNumber()) {
      return false;
    }
    return applied.path("report").asText().equals(answer.path("answers").asText())
        && applied.path("generation").asLong() < document.path("generation").asLong()
        && mapsEveryClient(report, answer);
  }

  /**
   * The report's clients are exactly the ones the answer maps: a joiner or a departure is
   * the operator's to place (segue.protocol.kstreams_answer.maps_every_client).
   */
  static boolean mapsEveryClient(JsonNode report, JsonNode answer) {
    Set<String> clients = new HashSet<>();
    report.path("clients").forEach(c -> clients.add(c.path("process_id").asText()));
    return clients.equals(sorted(answer.path("clients")).keySet());
  }

  /** Why the answer must not be used for this report (empty: it may be). */
  static List<String> check(JsonNode report, JsonNode document) {
    List<String> errors = new ArrayList<>();
    JsonNode answer = document.path("kafka_streams");
    if (!answer.isObject()) {
      errors.add("the document has no kafka_streams answer");
      return errors;
    }
    String answers = answer.path("answers").asText();
    String id = report.path("id").asText();
    if (!answers.equals(id) && !answersNext(report, document)
        && !answersNewer(report, document)) {
      errors.add("it answers report " + answers + ", not " + id);
    }
    JsonNode members = document.path("members");
    Map<String, String> mapped = new HashMap<>();
    for (Map.Entry<String, String> e : sorted(answer.path("clients")).entrySet()) {
      if (!members.has(e.getValue())) {
        errors.add("client " + e.getKey() + " is mapped to " + e.getValue()
            + ", which the document does not list");
      } else if (mapped.containsKey(e.getValue())) {
        errors.add("clients " + mapped.get(e.getValue()) + " and " + e.getKey()
            + " are both mapped to " + e.getValue());
      } else {
        mapped.put(e.getValue(), e.getKey());
      }
    }
    Map<String, Boolean> stateful = new LinkedHashMap<>();
    report.path("tasks").forEach(t -> stateful.put(t.path("id").asText(), t.path("stateful").asBoolean()));
    Map<String, String> owner = new HashMap<>();
    for (String member : new TreeMap<>(fields(members)).keySet()) {
      Set<String> seen = new HashSet<>();
      for (String role : ROLES) {
        for (JsonNode node : members.path(member).path(role)) {
          String task = node.asText();
          if (!seen.add(task)) {
            errors.add("task " + task + " is in two roles on " + member);
          }
          if (!stateful.containsKey(task)) {
            errors.add("task " + task + " (on " + member + ") is not a task of the group");
          } else if (role.equals("active") && owner.containsKey(task)) {
            errors.add("task " + task + " is active on two members: " + owner.get(task)
                + " and " + member);
          } else if (role.equals("active")) {
            owner.put(task, member);
          } else if (!stateful.get(task)) {
            errors.add("task " + task + " is stateless: it can have no standby (on " + member + ")");
          }
        }
      }
    }
    for (String task : stateful.keySet()) {
      if (!owner.containsKey(task)) {
        errors.add("task " + task + " has no active member");
      }
    }
    // a task on a member no client of this report is would run nowhere
    for (String member : new java.util.TreeSet<>(owner.values())) {
      if (!mapped.containsKey(member)) {
        errors.add(member + " holds active tasks but no client of this report is mapped to it");
      }
    }
    return errors;
  }

  /**
   * Each client's tasks in an answer accepted for {@code report}; a client the answer does
   * not map (one that joined after the operator decided) gets none, and every client the
   * follow-up rebalance: the answer's own (also a newer one's, {@link #answersNewer}, while
   * it still {@link #revokes} a task), or then_followup_after_ms from {@code nowMs} for the
   * report after the one it answers (segue.protocol.kstreams_answer.followup_for).
   */
  static Map<ProcessId, KafkaStreamsAssignment> map(
      Set<ProcessId> clients, JsonNode document, JsonNode report, long nowMs) {
    JsonNode answer = document.path("kafka_streams");
    Map<String, String> memberOf = sorted(answer.path("clients"));
    JsonNode followup = answer.path("followup_at_ms");
    boolean own = answer.path("answers").asText().equals(report.path("id").asText());
    if (!own && !(answersNewer(report, document) && revokes(report, document))) {
      JsonNode after = answer.path("then_followup_after_ms");
      followup = after.isIntegralNumber()
          ? Reports.JSON.getNodeFactory().numberNode(nowMs + after.asLong()) : after;
    }
    Map<ProcessId, KafkaStreamsAssignment> out = new TreeMap<>();
    for (ProcessId client : clients) {
      Set<AssignedTask> tasks = new HashSet<>();
      String member = memberOf.get(client.id().toString());
      JsonNode roles = member == null ? null : document.path("members").path(member);
      if (roles != null) {
        for (String role : ROLES) {
          AssignedTask.Type type =
              role.equals("active") ? AssignedTask.Type.ACTIVE : AssignedTask.Type.STANDBY;
          for (JsonNode task : roles.path(role)) {
            tasks.add(new AssignedTask(TaskId.parse(task.asText()), type));
          }
        }
      }
      KafkaStreamsAssignment assignment = KafkaStreamsAssignment.of(client, tasks);
      if (followup.isIntegralNumber()) {
        assignment = assignment.withFollowupRebalance(Instant.ofEpochMilli(followup.asLong()));
      }
      out.put(client, assignment);
    }
    return out;
  }

  /**
   * Some client of the answer is given an active task another client of {@code report}
   * still owns (segue.protocol.kstreams_answer.revokes).
   */
  static boolean revokes(JsonNode report, JsonNode document) {
    Map<String, String> owner = new HashMap<>();
    report.path("clients").forEach(c -> c.path("previous_active").forEach(
        t -> owner.put(t.asText(), c.path("process_id").asText())));
    for (Map.Entry<String, String> e : sorted(document.path("kafka_streams").path("clients"))
        .entrySet()) {
      for (JsonNode task : document.path("members").path(e.getValue()).path("active")) {
        if (!owner.getOrDefault(task.asText(), e.getKey()).equals(e.getKey())) {
          return true;
        }
      }
    }
    return false;
  }

  static ProcessId processId(String text) {
    return new ProcessId(UUID.fromString(text));
  }

  private static Map<String, String> sorted(JsonNode object) {
    Map<String, String> out = new TreeMap<>();
    object.properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  private static Map<String, JsonNode> fields(JsonNode object) {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    object.properties().forEach(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }
}
