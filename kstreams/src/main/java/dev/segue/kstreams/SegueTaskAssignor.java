package dev.segue.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka Streams' task assignor for a StreamApp with {@code runtime: kafka-streams}:
 * {@code task.assignor.class=dev.segue.kstreams.SegueTaskAssignor}.
 *
 * <p>It decides nothing. At each rebalance it reports the group (Reports) through the
 * channel, waits a bounded time for the operator's answer to that report, checks it
 * (Answers.check) and maps it (Answers.map). Without a usable answer in time it falls back
 * to Kafka Streams' own public StickyTaskAssignor, which keeps every task where it runs and
 * places only the tasks of clients that are gone (docs/kafka-streams.md, "When Segue is not
 * there"), says so once per episode in the log, and counts it (fallbacks()).
 */
public final class SegueTaskAssignor implements TaskAssignor {
  static final String WAIT_CONFIG = "segue.answer.wait.ms";
  static final long DEFAULT_WAIT_MS = 5_000;
  static final long POLL_MS = 100;

  private static final Logger log = LoggerFactory.getLogger(SegueTaskAssignor.class);
  private static final AtomicLong FALLBACKS = new AtomicLong();
  // Kafka Streams makes a new assignor for every rebalance: what must outlive one is static
  private static final AtomicBoolean FALLING_BACK = new AtomicBoolean();
  private static final AtomicBoolean SAID_OUTSIDE = new AtomicBoolean();

  private Optional<Channel> channel = Optional.empty();
  private String applicationId = "";
  private long waitMs = DEFAULT_WAIT_MS;
  private Clock clock = Clock.systemUTC();

  public SegueTaskAssignor() {}

  SegueTaskAssignor(Channel channel, String applicationId, long waitMs, Clock clock) {
    this.channel = Optional.of(channel);
    this.applicationId = applicationId;
    this.waitMs = waitMs;
    this.clock = clock;
  }

  @Override
  public void configure(Map<String, ?> configs) {
    Object id = configs.get("application.id");
    applicationId = id == null ? "" : id.toString();
    Object wait = configs.get(WAIT_CONFIG);
    if (wait != null) {
      try {
        waitMs = Long.parseLong(wait.toString().trim());
      } catch (NumberFormatException e) {
        throw new ConfigException(WAIT_CONFIG, wait, "must be a whole number of milliseconds");
      }
    }
    channel = ConfigMapChannel.fromEnvironment(System.getenv());
    if (channel.isEmpty() && !SAID_OUTSIDE.getAndSet(true)) {
      log.warn("not in a pod Segue manages (no SEGUE_STREAMAPP, POD_NAMESPACE or API server):"
          + " Kafka Streams' StickyTaskAssignor places every task");
    }
  }

  /** Rebalances answered by Kafka Streams' own assignor since the process started. */
  public static long fallbacks() {
    return FALLBACKS.get();
  }

  @Override
  public TaskAssignment assign(ApplicationState state) {
    String why;
    if (channel.isEmpty()) {
      why = "no channel to the operator";
    } else {
      try {
        return new TaskAssignment(answered(channel.get(), state).values());
      } catch (Refused e) {
        why = e.getMessage();
      } catch (Exception e) {  // whatever failed, the app must get an assignment
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        why = e.toString();
      }
    }
    FALLBACKS.incrementAndGet();
    if (!FALLING_BACK.getAndSet(true)) {
      log.warn("Segue's answer is not usable ({}): Kafka Streams' StickyTaskAssignor places"
          + " the tasks until it is", why);
    }
    return new StickyTaskAssignor().assign(state);
  }

  private Map<ProcessId, KafkaStreamsAssignment> answered(Channel to, ApplicationState state)
      throws Exception {
    String id = UUID.randomUUID().toString();
    ObjectNode report = Reports.report(applicationId, id, clock.millis(), state);
    to.report(id, Reports.encode(report));
    long deadline = clock.millis() + waitMs;
    List<String> errors = List.of("no assignment document");
    while (true) {
      Optional<byte[]> blob = to.document();
      if (blob.isPresent()) {
        JsonNode document = Answers.decode(blob.get());
        errors = Answers.check(report, document);
        if (errors.isEmpty()) {
          if (FALLING_BACK.getAndSet(false)) {
            log.info("Segue answers again: it places the tasks from generation {}",
                document.path("generation").asLong());
          }
          return Answers.map(state.kafkaStreamsStates(false).keySet(), document);
        }
        if (!errors.get(0).startsWith("it answers report")) {
          throw new Refused("the answer to report " + id + " is refused: "
              + String.join("; ", errors));
        }
      }
      if (clock.millis() >= deadline) {
        throw new Refused("no answer to report " + id + " within " + waitMs + " ms ("
            + errors.get(0) + ")");
      }
      Thread.sleep(POLL_MS);
    }
  }

  static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message);
    }
  }
}
