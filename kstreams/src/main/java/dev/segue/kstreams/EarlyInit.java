package dev.segue.kstreams;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * A transactional producer that gets its producer id as soon as it is made, on a thread of
 * its own. Under exactly-once, Kafka Streams calls {@link Producer#initTransactions()} when
 * a stream thread initialises its first active task, so an instance that had none (a new
 * pod, whose first active task comes in a handover) made that round trip to the
 * transaction coordinator inside the moved task's pause: 0.11-0.20 s on the bench
 * (docs/benchmarks.md). Kafka Streams' own call then waits for the early one and returns;
 * if the early one failed, the call is made again as Kafka Streams made it (a timed-out
 * init resumes where it stopped, as KafkaProducer allows), so Kafka Streams sees and
 * handles any error as before. Fencing is the transactional id's, unchanged (a new
 * incarnation fences its previous one, only sooner). Made by {@link SegueClientSupplier};
 * a producer without a transactional id is left as it is.
 */
final class EarlyInit {
  private EarlyInit() {}

  @SuppressWarnings("unchecked")
  static Producer<byte[], byte[]> initialising(
      Producer<byte[], byte[]> real, Map<String, Object> config) {
    if (config.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG) == null) {
      return real;
    }
    FutureTask<Void> early = new FutureTask<>(real::initTransactions, null);
    Thread thread = new Thread(early, "segue-producer-init");
    thread.setDaemon(true);
    thread.start();
    return (Producer<byte[], byte[]>) Proxy.newProxyInstance(
        Producer.class.getClassLoader(), new Class<?>[] {Producer.class}, (proxy, method, args) -> {
          if (method.getName().equals("initTransactions") && isPlain(args)) {
            try {
              early.get();
              return null;
            } catch (ExecutionException failed) {
              // made again below: Kafka Streams gets the error, or the init resumed
            }
          }
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  /** {@code initTransactions()} or {@code initTransactions(false)}: not a two-phase one. */
  private static boolean isPlain(Object[] args) {
    return args == null || args.length == 0 || Boolean.FALSE.equals(args[0]);
  }
}
