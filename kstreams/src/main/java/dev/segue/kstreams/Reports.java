package dev.segue.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.GZIPOutputStream;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;

/**
 * The group report (segue.protocol.kstreams.GroupReport): what the leader sees at a
 * rebalance, written as the operator reads it. It only copies what Kafka Streams'
 * ApplicationState says; it judges nothing.
 */
final class Reports {
  static final ObjectMapper JSON =
      new ObjectMapper().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

  private Reports() {}

  static ObjectNode report(
      String applicationId, String id, long nowMs, ApplicationState state) {
    return report(applicationId, id, nowMs, state, null);
  }

  /**
   * {@code lastApplied}: what this process's plugin last returned of Segue's (the applied
   * record: report and generation), null if nothing since it started or a fallback since
   * (segue.protocol.kstreams.GroupReport.last_applied).
   */
  static ObjectNode report(
      String applicationId, String id, long nowMs, ApplicationState state, JsonNode lastApplied) {
    ObjectNode root = JSON.createObjectNode();
    root.put("version", 1);
    root.put("application_id", applicationId);
    root.put("id", id);
    root.put("reported_at_ms", nowMs);
    if (lastApplied == null) {
      root.putNull("last_applied");
    } else {
      root.set("last_applied", lastApplied);
    }
    root.put("takes_newer", true);  // Answers.answersNewer
    root.set("configs", configs(state.assignmentConfigs()));
    ArrayNode clients = root.putArray("clients");
    Map<ProcessId, KafkaStreamsState> states = new TreeMap<>(state.kafkaStreamsStates(true));
    for (KafkaStreamsState client : states.values()) {
      clients.add(client(client));
    }
    ArrayNode tasks = root.putArray("tasks");
    Map<TaskId, TaskInfo> all = new TreeMap<>(state.allTasks());
    for (TaskInfo task : all.values()) {
      tasks.add(task(task));
    }
    return root;
  }

  private static ObjectNode configs(AssignmentConfigs configs) {
    ObjectNode out = JSON.createObjectNode();
    out.put("acceptable_recovery_lag", configs.acceptableRecoveryLag());
    out.put("max_warmup_replicas", configs.maxWarmupReplicas());
    out.put("num_standby_replicas", configs.numStandbyReplicas());
    out.put("probing_rebalance_interval_ms", configs.probingRebalanceIntervalMs());
    return out;
  }

  private static ObjectNode client(KafkaStreamsState client) {
    ObjectNode out = JSON.createObjectNode();
    out.put("process_id", client.processId().id().toString());
    ArrayNode ids = out.putArray("consumer_client_ids");
    client.consumerClientIds().forEach(ids::add);
    out.put("threads", Math.max(1, client.numProcessingThreads()));
    ArrayNode active = out.putArray("previous_active");
    client.previousActiveTasks().forEach(t -> active.add(t.toString()));
    ArrayNode standby = out.putArray("previous_standby");
    client.previousStandbyTasks().forEach(t -> standby.add(t.toString()));
    ObjectNode lags = out.putObject("lags");
    new TreeMap<>(client.statefulTasksToLagSums())
        .forEach((task, lag) -> lags.put(task.toString(), Math.max(0L, lag)));
    if (client.hostInfo().isPresent()) {
      out.put("host", client.hostInfo().get().host() + ":" + client.hostInfo().get().port());
    } else {
      out.putNull("host");
    }
    if (client.rackId().isPresent()) {
      out.put("rack", client.rackId().get());
    } else {
      out.putNull("rack");
    }
    return out;
  }

  private static ObjectNode task(TaskInfo task) {
    ObjectNode out = JSON.createObjectNode();
    out.put("id", task.id().toString());
    out.put("stateful", task.isStateful());
    ArrayNode stores = out.putArray("stores");
    new java.util.TreeSet<>(task.stateStoreNames()).forEach(stores::add);
    ArrayNode sources = out.putArray("sources");
    ArrayNode changelogs = out.putArray("changelogs");
    task.topicPartitions().stream()
        .sorted(Comparator.comparing((TaskTopicPartition p) -> p.topicPartition().topic())
            .thenComparingInt(p -> p.topicPartition().partition()))
        .forEach(p -> {
          if (p.isSource()) {
            sources.add(pair(p.topicPartition()));
          }
          if (p.isChangelog()) {
            changelogs.add(pair(p.topicPartition()));
          }
        });
    return out;
  }

  private static ArrayNode pair(TopicPartition tp) {
    ArrayNode out = JSON.createArrayNode();
    out.add(tp.topic());
    out.add(tp.partition());
    return out;
  }

  /** Gzipped compact JSON with sorted keys, as segue.protocol.kstreams.encode_report. */
  static byte[] encode(ObjectNode report) {
    try {
      Object sorted = JSON.treeToValue(report, Object.class);
      byte[] text = JSON.writeValueAsBytes(sorted);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
        gz.write(text);
      }
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
