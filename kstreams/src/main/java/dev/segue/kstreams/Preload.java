package dev.segue.kstreams;

/**
 * Loads RocksDB's native library when the JVM starts, on a thread of its own.
 *
 * <p>Kafka Streams loads it when the instance opens its first store: a new instance's
 * first standby or learner, on the stream thread, in the middle of a rebalance. RocksJava
 * unpacks the library from its jar to a temporary file first, which took 2.4 s on the
 * benchmark's loaded 2-core machine (docs/benchmarks.md); meanwhile the stream thread does
 * not rejoin the group, so every other member's tasks wait in the rebalance with it.
 * Loading it early costs the same once, before the instance holds anyone up. RocksJava's
 * own loader is idempotent and safe to race: whoever comes second waits for the first.
 * Nothing of the app changes. An app without RocksDB (in-memory stores only) is left
 * alone, and so is one whose own class loader holds it (a jar nested in a jar): Kafka
 * Streams then loads it as before.
 */
final class Preload {
  static final String ROCKSDB = "org.rocksdb.RocksDB";

  private Preload() {}

  /** Starts the load in the background (a daemon thread: it never holds the JVM open). */
  static Thread start(ClassLoader loader) {
    Thread thread = new Thread(() -> System.err.println("segue agent: " + rocksdb(loader)),
        "segue-preload");
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  /** What happened, in words for the log. */
  static String rocksdb(ClassLoader loader) {
    long started = System.nanoTime();
    try {
      Class<?> rocksdb = Class.forName(ROCKSDB, true, loader);
      rocksdb.getMethod("loadLibrary").invoke(null);
    } catch (ClassNotFoundException e) {
      return "RocksDB is not on the class path: nothing to preload";
    } catch (ReflectiveOperationException | LinkageError e) {
      // Kafka Streams will try again itself when it opens a store, and say what fails then
      return "RocksDB's native library was not preloaded: " + e;
    }
    long ms = (System.nanoTime() - started) / 1_000_000;
    return "RocksDB's native library preloaded in " + ms + " ms";
  }
}
