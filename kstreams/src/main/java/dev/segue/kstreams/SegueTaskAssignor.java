package dev.segue.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
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
 * there"), says so once per episode in the log, counts it (fallbacks()), and asks for a
 * follow-up rebalance after {@code segue.fallback.retry.ms} so that Segue is asked again
 * without waiting for the group's membership to change. Either way it then writes what it
 * returned (the "applied" record) beside the report: the operator cannot otherwise tell
 * which generation the group runs.
 */
public final class SegueTaskAssignor implements TaskAssignor {
  static final String WAIT_CONFIG = "segue.answer.wait.ms";
  static final long DEFAULT_WAIT_MS = 5_000;
  static final String RETRY_CONFIG = "segue.fallback.retry.ms";
  static final long DEFAULT_RETRY_MS = 10_000;
  // Under exactly-once no member of the group commits while the leader waits, and the
  // operator answers in about 0.1 s: the document is read every 20 ms for the first
  // second (one GET of one ConfigMap each), every 100 ms after that.
  static final long FAST_POLL_MS = 20;
  static final long FAST_FOR_MS = 1_000;
  static final long POLL_MS = 100;

  private static final Logger log = LoggerFactory.getLogger(SegueTaskAssignor.class);
  private static final AtomicLong FALLBACKS = new AtomicLong();
  // Kafka Streams makes a new assignor for every rebalance: what must outlive one is static
  private static final AtomicBoolean FALLING_BACK = new AtomicBoolean();
  private static final AtomicBoolean SAID_OUTSIDE = new AtomicBoolean();
  // The applied record of what this process last returned of Segue's, for the next
  // report (its last_applied); null after a fallback
  private static final AtomicReference<JsonNode> LAST = new AtomicReference<>();

  private Optional<Channel> channel = Optional.empty();
  private String applicationId = "";
  private long waitMs = DEFAULT_WAIT_MS;
  private long retryMs = DEFAULT_RETRY_MS;
  private Clock clock = Clock.systemUTC();

  public SegueTaskAssignor() {}

  SegueTaskAssignor(Channel channel, String applicationId, long waitMs, Clock clock) {
    this(channel, applicationId, waitMs, DEFAULT_RETRY_MS, clock);
  }

  SegueTaskAssignor(
      Channel channel, String applicationId, long waitMs, long retryMs, Clock clock) {
    this.channel = Optional.of(channel);
    this.applicationId = applicationId;
    this.waitMs = waitMs;
    this.retryMs = retryMs;
    this.clock = clock;
  }

  @Override
  public void configure(Map<String, ?> configs) {
    Object id = configs.get("application.id");
    applicationId = id == null ? "" : id.toString();
    waitMs = millis(configs, WAIT_CONFIG, DEFAULT_WAIT_MS);
    retryMs = millis(configs, RETRY_CONFIG, DEFAULT_RETRY_MS);
    channel = ConfigMapChannel.fromEnvironment(System.getenv());
    if (channel.isEmpty() && !SAID_OUTSIDE.getAndSet(true)) {
      log.warn("not in a pod Segue manages (no SEGUE_STREAMAPP, POD_NAMESPACE or API server):"
          + " Kafka Streams' StickyTaskAssignor places every task");
    }
  }

  /** A setting in milliseconds, 0 or more: a typo must stop the app, not mean the default. */
  static long millis(Map<String, ?> configs, String name, long otherwise) {
    Object value = configs.get(name);
    if (value == null) {
      return otherwise;
    }
    long ms;
    try {
      ms = Long.parseLong(value.toString().trim());
    } catch (NumberFormatException e) {
      ms = -1;
    }
    if (ms < 0) {
      throw new ConfigException(name, value, "must be a whole number of milliseconds, 0 or more");
    }
    return ms;
  }

  /** Rebalances answered by Kafka Streams' own assignor since the process started. */
  public static long fallbacks() {
    return FALLBACKS.get();
  }

  @Override
  public TaskAssignment assign(ApplicationState state) {
    if (channel.isEmpty()) {
      // nobody to ask again, nor to tell: a follow-up would only fall back once more
      return fallBack(state, "no channel to the operator");
    }
    Channel to = channel.get();
    String id = UUID.randomUUID().toString();
    Answer answer = null;
    String why = "";
    try {
      answer = answered(to, id, state);
    } catch (Refused e) {
      why = e.getMessage();
    } catch (Exception e) {  // whatever failed, the app must get an assignment
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      why = e.toString();
    }
    if (answer != null) {
      ObjectNode applied = appliedRecord(id, answer.generation());
      if (answer.newer()) {
        applied.put("newer", true);
      }
      LAST.set(applied);
      String record = applied.toString();
      if (answer.report() == null) {
        Writes.applied(to, record);
      } else {  // taken up again: nothing waits on its report, nor on this
        Writes.later(to, id, answer.report(), record);
      }
      return new TaskAssignment(answer.assignment().values());
    }
    LAST.set(null);
    TaskAssignment sticky = retried(fallBack(state, why));
    Writes.applied(to, fellBack(id, why));
    return sticky;
  }

  private static TaskAssignment fallBack(ApplicationState state, String why) {
    FALLBACKS.incrementAndGet();
    if (!FALLING_BACK.getAndSet(true)) {
      log.warn("Segue's answer is not usable ({}): Kafka Streams' StickyTaskAssignor places"
          + " the tasks until it is", why);
    }
    return new StickyTaskAssignor().assign(state);
  }

  /**
   * Every client asks for a rebalance at now + retryMs (0: never), or earlier if the
   * fallback's own assignment asks for that: Sticky's placement would otherwise stay until
   * the group's membership changes, however soon the operator is back.
   */
  private TaskAssignment retried(TaskAssignment sticky) {
    if (retryMs == 0) {
      return sticky;
    }
    Instant at = clock.instant().plusMillis(retryMs);
    List<KafkaStreamsAssignment> out = new ArrayList<>();
    for (KafkaStreamsAssignment a : sticky.assignment()) {
      boolean sooner = a.followupRebalanceDeadline().filter(d -> d.isBefore(at)).isPresent();
      out.add(sooner ? a : a.withFollowupRebalance(at));
    }
    return new TaskAssignment(out);
  }

  /** The applied record for Segue's answer (segue.protocol.kstreams.Applied). */
  static String applied(String report, long generation) {
    return appliedRecord(report, generation).toString();
  }

  private static ObjectNode appliedRecord(String report, long generation) {
    ObjectNode record = Reports.JSON.createObjectNode();
    record.put("report", report);
    record.put("generation", generation);
    return record;
  }

  /** The applied record for a fallback: why, in the words the log uses. */
  static String fellBack(String report, String why) {
    ObjectNode record = Reports.JSON.createObjectNode();
    record.put("report", report);
    record.put("fallback", why);
    return record.toString();
  }

  private Answer answered(Channel to, String id, ApplicationState state) throws Exception {
    JsonNode last = LAST.get();
    ObjectNode report = Reports.report(
        applicationId, id, clock.millis(), state, last);
    Answer again = last == null ? null : takenUp(to, id, report, state);
    if (again != null) {
      return again;
    }
    Writes.report(to, id, Reports.encode(report));
    long asked = clock.millis();
    long deadline = asked + waitMs;
    List<String> errors = List.of("no assignment document");
    while (true) {
      Optional<byte[]> blob = to.document();
      if (blob.isPresent()) {
        JsonNode document = Answers.decode(blob.get());
        errors = Answers.check(report, document);
        if (errors.isEmpty()) {
          long generation = document.path("generation").asLong();
          if (FALLING_BACK.getAndSet(false)) {
            log.info("Segue answers again: it places the tasks from generation {}", generation);
          }
          // one published meanwhile may be a newer one (Answers.answersNewer): say so
          boolean newer = !document.path("kafka_streams").path("answers").asText().equals(id)
              && Answers.answersNewer(report, document);
          return new Answer(
              Answers.map(state.kafkaStreamsStates(false).keySet(), document, report, clock.millis()),
              generation, null, newer);
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
      Thread.sleep(clock.millis() - asked < FAST_FOR_MS ? FAST_POLL_MS : POLL_MS);
    }
  }

  /**
   * The revoking answer this process returned last, taken up again for this report
   * (Answers.answersNext: the rebalance where the new owner gets the task), or a revoking
   * one the operator decided since for the same report (Answers.answersNewer: the
   * rebalance that starts a handover the operator decided between two), null if neither.
   * The operator leaves such a report unanswered, so nothing waits on it: one read of the
   * document, and the report and the applied record are written after the assignment is
   * returned, in order.
   */
  private Answer takenUp(Channel to, String id, ObjectNode report, ApplicationState state)
      throws Exception {
    Optional<byte[]> blob = to.document();
    if (blob.isEmpty()) {
      return null;
    }
    JsonNode document = Answers.decode(blob.get());
    boolean newer = Answers.answersNewer(report, document);
    if (!(newer || Answers.answersNext(report, document))
        || !Answers.check(report, document).isEmpty()) {
      return null;
    }
    return new Answer(
        Answers.map(state.kafkaStreamsStates(false).keySet(), document, report, clock.millis()),
        document.path("generation").asLong(), Reports.encode(report), newer);
  }

  /**
   * A checked, mapped answer and the generation of the document it came from;
   * {@code report}: the report still to write after returning (a revoking answer taken up
   * again or newer), null when it was written before the answer was read; {@code newer}:
   * taken up as Answers.answersNewer.
   */
  private record Answer(
      Map<ProcessId, KafkaStreamsAssignment> assignment, long generation, byte[] report,
      boolean newer) {}

  static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message);
    }
  }
}
