package dev.segue.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The shared fixtures (tests/contracts/kstreams, parsed by the Python side's tests too),
 * and an ApplicationState built from a group report: the public KIP-924 interfaces,
 * implemented over plain data, as Kafka Streams hands them to an assignor.
 */
final class Fixtures {
  private Fixtures() {}

  static JsonNode json(String name) {
    Path dir = Path.of(System.getProperty("segue.contracts", "../tests/contracts/kstreams"));
    try {
      return Reports.JSON.readTree(Files.readString(dir.resolve(name)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static ApplicationState state(JsonNode report) {
    Map<ProcessId, KafkaStreamsState> clients = new TreeMap<>();
    for (JsonNode c : report.path("clients")) {
      ProcessId id = Answers.processId(c.path("process_id").asText());
      clients.put(id, new Client(id, c));
    }
    Map<TaskId, TaskInfo> tasks = new TreeMap<>();
    for (JsonNode t : report.path("tasks")) {
      TaskId id = TaskId.parse(t.path("id").asText());
      tasks.put(id, new Task(id, t));
    }
    JsonNode cfg = report.path("configs");
    AssignmentConfigs configs = new AssignmentConfigs(
        cfg.path("acceptable_recovery_lag").asLong(),
        cfg.path("max_warmup_replicas").asInt(),
        cfg.path("num_standby_replicas").asInt(),
        cfg.path("probing_rebalance_interval_ms").asLong(),
        List.of());
    return new ApplicationState() {
      @Override
      public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(boolean computeTaskLags) {
        return clients;
      }

      @Override
      public AssignmentConfigs assignmentConfigs() {
        return configs;
      }

      @Override
      public Map<TaskId, TaskInfo> allTasks() {
        return tasks;
      }
    };
  }

  static SortedSet<TaskId> tasks(JsonNode ids) {
    SortedSet<TaskId> out = new TreeSet<>();
    ids.forEach(t -> out.add(TaskId.parse(t.asText())));
    return out;
  }

  private record Client(ProcessId processId, JsonNode c) implements KafkaStreamsState {
    @Override
    public int numProcessingThreads() {
      return c.path("threads").asInt(1);
    }

    @Override
    public SortedSet<String> consumerClientIds() {
      SortedSet<String> out = new TreeSet<>();
      c.path("consumer_client_ids").forEach(x -> out.add(x.asText()));
      return out;
    }

    @Override
    public SortedSet<TaskId> previousActiveTasks() {
      return tasks(c.path("previous_active"));
    }

    @Override
    public SortedSet<TaskId> previousStandbyTasks() {
      return tasks(c.path("previous_standby"));
    }

    @Override
    public long lagFor(TaskId task) {
      return c.path("lags").path(task.toString()).asLong();
    }

    @Override
    public SortedSet<TaskId> prevTasksByLag(String consumerClientId) {
      return new TreeSet<>();
    }

    @Override
    public Map<TaskId, Long> statefulTasksToLagSums() {
      Map<TaskId, Long> out = new HashMap<>();
      c.path("lags").properties().forEach(e -> out.put(TaskId.parse(e.getKey()), e.getValue().asLong()));
      return out;
    }

    @Override
    public Optional<HostInfo> hostInfo() {
      String host = c.path("host").asText("");
      if (host.isEmpty() || c.path("host").isNull()) {
        return Optional.empty();
      }
      String[] parts = host.split(":");
      return Optional.of(new HostInfo(parts[0], Integer.parseInt(parts[1])));
    }

    @Override
    public Map<String, String> clientTags() {
      return Map.of();
    }

    @Override
    public Optional<String> rackId() {
      return c.path("rack").isNull() ? Optional.empty() : Optional.of(c.path("rack").asText());
    }
  }

  private record Task(TaskId id, JsonNode t) implements TaskInfo {
    @Override
    public boolean isStateful() {
      return t.path("stateful").asBoolean();
    }

    @Override
    public Set<String> stateStoreNames() {
      Set<String> out = new HashSet<>();
      t.path("stores").forEach(s -> out.add(s.asText()));
      return out;
    }

    @Override
    public Set<TaskTopicPartition> topicPartitions() {
      Set<TaskTopicPartition> out = new HashSet<>();
      t.path("sources").forEach(p -> out.add(partition(p, true, false)));
      t.path("changelogs").forEach(p -> out.add(partition(p, false, true)));
      return out;
    }
  }

  private static TaskTopicPartition partition(JsonNode pair, boolean source, boolean changelog) {
    TopicPartition tp = new TopicPartition(pair.get(0).asText(), pair.get(1).asInt());
    return new TaskTopicPartition() {
      @Override
      public TopicPartition topicPartition() {
        return tp;
      }

      @Override
      public boolean isSource() {
        return source;
      }

      @Override
      public boolean isChangelog() {
        return changelog;
      }

      @Override
      public Optional<Set<String>> rackIds() {
        return Optional.empty();
      }
    };
  }
}
