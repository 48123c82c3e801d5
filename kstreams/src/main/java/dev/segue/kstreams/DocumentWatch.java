package dev.segue.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One thread per JVM that watches the app's assignment document and passes the operator's
 * asks for a rebalance on to {@link Rejoins}: a document whose {@code kafka_streams.rejoin}
 * is set, of a generation later than any seen when the watch began (a starting instance
 * joins anyway) or asked before. Started by {@link SegueClientSupplier} with the first
 * main consumer; without it, or outside a pod Segue manages, nothing asks and the group
 * rebalances at the follow-ups the answers set, as before. A broken watch is read again a
 * second later and said once until it works again; a document that cannot be read is
 * passed over (the assignor falls back on it at the next rebalance, and says so); neither
 * ever stops the app.
 */
final class DocumentWatch {
  static final long RETRY_MS = 1000;
  private static final AtomicBoolean STARTED = new AtomicBoolean();

  private final String pod;
  private long floor = Rejoins.NONE;
  private boolean begun;
  private boolean unreadable;

  DocumentWatch() {
    this(null);
  }

  DocumentWatch(String pod) {
    this.pod = pod;
  }

  static void startOnce(Map<String, String> env) {
    if (!STARTED.compareAndSet(false, true)) {
      return;
    }
    Optional<ConfigMapChannel> channel;
    try {
      channel = ConfigMapChannel.of(env);
    } catch (RuntimeException e) {  // the pod's CA unreadable: the app runs on without it
      System.err.println("segue: no rebalance on the operator's call: " + e.getMessage());
      return;
    }
    if (channel.isEmpty()) {
      System.err.println("segue: not in a pod Segue manages: no rebalance on the operator's call");
      return;
    }
    Thread thread = new Thread(
        () -> new DocumentWatch(env.get(ConfigMapChannel.ENV_POD_NAME)).run(channel.get()), "segue-document-watch");
    thread.setDaemon(true);
    thread.start();
  }

  private void run(ConfigMapChannel channel) {
    boolean failing = false;
    while (!Thread.currentThread().isInterrupted()) {
      try {
        channel.watch(this::seen);
        failing = false;
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {  // the API server away, a rotated token: read again soon
        if (!failing) {
          System.err.println("segue: watching the assignment document failed, retrying: " + e);
        }
        failing = true;
        try {
          Thread.sleep(RETRY_MS);
        } catch (InterruptedException stop) {
          return;
        }
      }
    }
  }

  /** A document read: the first one sets the floor, a later one may ask. */
  void seen(byte[] gzipped) {
    JsonNode document;
    try {
      document = Answers.decode(gzipped);
    } catch (RuntimeException e) {  // not gzipped JSON: reading it again would not help
      if (!unreadable) {
        System.err.println("segue: an assignment document could not be read, passed over: " + e);
      }
      unreadable = true;
      return;
    }
    unreadable = false;
    if (!begun) {  // what the group was asked before this instance watched is not its own
      begun = true;
      floor = document.path("generation").asLong(Rejoins.NONE);
      return;
    }
    long asks = asks(document, pod);
    if (asks > floor) {
      Rejoins.ask(asks);
    }
  }

  /**
   * The generation a document asks {@code pod} to rejoin for, or {@link Rejoins#NONE}: not a
   * pod the document names {@code leaving}, whose instance is about to close and leave the
   * group (a rejoin would make Kafka Streams hold its shutdown until that rebalance ended,
   * and every other member with it: seen 3 s in a 6 -> 3).
   */
  static long asks(JsonNode document, String pod) {
    JsonNode answer = document.path("kafka_streams");
    if (!answer.path("rejoin").asBoolean(false)) {
      return Rejoins.NONE;
    }
    for (JsonNode leaving : answer.path("leaving")) {
      if (leaving.asText().equals(pod)) {
        return Rejoins.NONE;
      }
    }
    return document.path("generation").asLong(Rejoins.NONE);
  }
}
