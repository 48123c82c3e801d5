package dev.segue.kstreams;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin's writes into the group ConfigMap (reports and applied records), one after the
 * other on one thread of the process: a report must never overtake the one before it. A
 * rebalance waits for its own writes ({@link #report}, {@link #applied}), except where
 * nothing waits on them (a revoking answer taken up again: {@link #later}).
 */
final class Writes {
  private static final Logger log = LoggerFactory.getLogger(Writes.class);
  private static final AtomicBoolean APPLIED_FAILING = new AtomicBoolean();
  private static final AtomicBoolean REPORT_FAILING = new AtomicBoolean();
  private static final ExecutorService WRITES = Executors.newSingleThreadExecutor(r -> {
    Thread thread = new Thread(r, "segue-group-writes");
    thread.setDaemon(true);
    return thread;
  });

  private Writes() {}

  /** Writes report {@code id} after every write queued before it; its failure is the caller's. */
  static void report(Channel to, String id, byte[] gzipped) throws Exception {
    inOrder(() -> {
      to.report(id, gzipped);
      return null;
    });
  }

  /**
   * Writes the applied record after every write queued before it. A failure costs the
   * rebalance one bounded call and a warning once per episode, never the assignment: the
   * next report tells the operator anyway.
   */
  static void applied(Channel to, String json) {
    try {
      inOrder(() -> {
        record(to, json);
        return null;
      });
    } catch (Exception e) {  // record() keeps its own failures: only an interrupt is left
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Queues report {@code id} and then its applied record, and returns at once. */
  static void later(Channel to, String id, byte[] gzipped, String applied) {
    WRITES.submit(() -> {
      try {
        to.report(id, gzipped);
        REPORT_FAILING.set(false);
      } catch (Exception e) {
        if (!REPORT_FAILING.getAndSet(true)) {
          log.warn("could not write report {} into the group ConfigMap ({}): the operator"
              + " sees the group again at the next rebalance", id, e.toString());
        }
      }
      record(to, applied);
    });
  }

  /** Waits until every write queued so far is done (the tests read what was written). */
  static void await() throws Exception {
    inOrder(() -> null);
  }

  private static void record(Channel to, String json) {
    try {
      to.applied(json);
      APPLIED_FAILING.set(false);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      if (!APPLIED_FAILING.getAndSet(true)) {
        log.warn("could not write what the plugin applied into the group ConfigMap ({}):"
            + " the operator knows the group's placement only from the next report", e.toString());
      }
    }
  }

  private static void inOrder(Callable<Void> write) throws Exception {
    try {
      WRITES.submit(write).get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw e;
    }
  }
}
