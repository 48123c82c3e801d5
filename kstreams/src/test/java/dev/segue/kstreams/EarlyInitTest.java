package dev.segue.kstreams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

/** A transactional producer's id, got when it is made; Kafka Streams' own call after it. */
class EarlyInitTest {
  static final Map<String, Object> TRANSACTIONAL =
      Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "app-1");

  /** A producer that records its calls; initTransactions fails the first {@code fails}. */
  @SuppressWarnings("unchecked")
  static Producer<byte[], byte[]> recording(List<String> calls, int fails, CountDownLatch inits) {
    int[] left = {fails};
    return (Producer<byte[], byte[]>) Proxy.newProxyInstance(
        Producer.class.getClassLoader(), new Class<?>[] {Producer.class}, (proxy, method, args) -> {
          calls.add(method.getName());
          if (method.getName().equals("initTransactions")) {
            inits.countDown();
            if (left[0]-- > 0) {
              throw new TimeoutException("no coordinator yet");
            }
          }
          return null;
        });
  }

  @Test
  void theIdIsAskedForAtOnceAndKafkaStreamsCallWaitsForThatOne() throws Exception {
    List<String> calls = new CopyOnWriteArrayList<>();
    CountDownLatch inits = new CountDownLatch(1);
    Producer<byte[], byte[]> producer = EarlyInit.initialising(recording(calls, 0, inits), TRANSACTIONAL);
    assertEquals(true, inits.await(5, TimeUnit.SECONDS));  // nobody called it yet
    producer.initTransactions();  // Kafka Streams' call: no second round trip
    producer.beginTransaction();
    assertEquals(List.of("initTransactions", "beginTransaction"), calls);
  }

  @Test
  void anEarlyInitThatFailedIsMadeAgainByKafkaStreamsCall() throws Exception {
    List<String> calls = new CopyOnWriteArrayList<>();
    CountDownLatch inits = new CountDownLatch(1);
    Producer<byte[], byte[]> producer = EarlyInit.initialising(recording(calls, 1, inits), TRANSACTIONAL);
    assertEquals(true, inits.await(5, TimeUnit.SECONDS));
    producer.initTransactions();  // resumed, as KafkaProducer allows after a timeout
    assertEquals(List.of("initTransactions", "initTransactions"), calls);
    // and an error Kafka Streams' own call gets is its to handle, as before
    List<String> twice = new CopyOnWriteArrayList<>();
    Producer<byte[], byte[]> failing = EarlyInit.initialising(recording(twice, 2, new CountDownLatch(1)), TRANSACTIONAL);
    assertThrows(TimeoutException.class, failing::initTransactions);
  }

  @Test
  void aProducerWithoutATransactionalIdIsLeftAsItIs() {
    List<String> calls = new CopyOnWriteArrayList<>();
    Producer<byte[], byte[]> plain = recording(calls, 0, new CountDownLatch(1));
    assertSame(plain, EarlyInit.initialising(plain, Map.of()));
    assertEquals(List.of(), calls);
  }
}
