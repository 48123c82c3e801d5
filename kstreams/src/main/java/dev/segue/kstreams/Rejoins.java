package dev.segue.kstreams;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;

/**
 * When the operator asks the group to rebalance now: the generation of the latest
 * assignment document that says so ({@code kafka_streams.rejoin}), which {@link
 * DocumentWatch} sets, and the main consumers {@link SegueClientSupplier} wraps, each of
 * which calls {@link Consumer#enforceRebalance(String)} once per ask, at its next poll,
 * on its own stream thread (a consumer is not safe to touch from another). Every member
 * is asked at once: one member's rejoin reaches the others only at their next heartbeat,
 * and those that rejoined first commit nothing meanwhile.
 */
final class Rejoins {
  static final long NONE = -1;
  private static final AtomicLong ASKED = new AtomicLong(NONE);

  private Rejoins() {}

  /** The operator asks for a rebalance for {@code generation} (a later one wins). */
  static void ask(long generation) {
    ASKED.accumulateAndGet(generation, Math::max);
  }

  static long asked() {
    return ASKED.get();
  }

  /**
   * {@code real}, rejoining its group at the first poll after each new ask; an ask made
   * before its first poll is not acted on (a starting consumer joins anyway).
   */
  @SuppressWarnings("unchecked")
  static <K, V> Consumer<K, V> rejoining(Consumer<K, V> real, LongSupplier asked) {
    long[] done = {Long.MIN_VALUE};
    return (Consumer<K, V>) Proxy.newProxyInstance(
        Consumer.class.getClassLoader(), new Class<?>[] {Consumer.class}, (proxy, method, args) -> {
          if (method.getName().equals("poll")) {
            long now = asked.getAsLong();
            if (done[0] == Long.MIN_VALUE) {
              done[0] = now;
            } else if (now > done[0]) {
              done[0] = now;
              real.enforceRebalance("Segue asked for a rebalance for generation " + now);
            }
          }
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }
}
