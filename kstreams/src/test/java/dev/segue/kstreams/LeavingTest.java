package dev.segue.kstreams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.Test;

/** A main consumer that Segue's supplier makes leaves its group when it is closed. */
class LeavingTest {
  private static final String CLOSE_OPTIONS = "org.apache.kafka.clients.consumer.CloseOptions";

  /** A consumer that records each call as its name and its arguments. */
  @SuppressWarnings("unchecked")
  static Consumer<byte[], byte[]> recording(List<Object[]> calls) {
    return (Consumer<byte[], byte[]>) Proxy.newProxyInstance(
        Consumer.class.getClassLoader(), new Class<?>[] {Consumer.class}, (proxy, method, args) -> {
          calls.add(new Object[] {method.getName(), args});
          return null;
        });
  }

  static Map<String, Object> config(String instance) {
    return instance == null
        ? Map.of(ConsumerConfig.GROUP_ID_CONFIG, "app")
        : Map.of(ConsumerConfig.GROUP_ID_CONFIG, "app", ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instance);
  }

  @Test
  void theConsumerIsMadeToLeaveOnCloseWithEveryOtherSettingKept() {
    Map<String, Object> given = Map.of("bootstrap.servers", "b:9092", Leaving.LEAVE_GROUP_ON_CLOSE, false);
    Map<String, Object> made = Leaving.leavingConfig(given);
    assertEquals(true, made.get(Leaving.LEAVE_GROUP_ON_CLOSE));
    assertEquals("b:9092", made.get("bootstrap.servers"));
    assertEquals(false, given.get(Leaving.LEAVE_GROUP_ON_CLOSE));  // the original is left as it is
  }

  @Test
  void aStaticMemberIsRemovedByItsInstanceIdOnceClosedAndADynamicOneLeavesByItself() {
    List<Object[]> calls = new ArrayList<>();
    List<String> removed = new ArrayList<>();
    Leaving.Remover remover = (group, instance) -> {
      assertEquals("close", calls.get(calls.size() - 1)[0]);  // after the consumer closed
      removed.add(group + "/" + instance);
    };
    Leaving.leaving(recording(calls), config("pod-1-1"), remover).close();
    Leaving.leaving(recording(calls), config("pod-1-2"), remover).close(Duration.ofSeconds(1));
    Leaving.leaving(recording(calls), config(null), remover).close();
    assertEquals(List.of("app/pod-1-1", "app/pod-1-2"), removed);
    assertEquals(3, calls.size());
    // every other call goes to the consumer as it is, and removes nobody
    Leaving.leaving(recording(calls), config("pod-1-3"), remover).commitSync();
    assertEquals("commitSync", calls.get(3)[0]);
    assertEquals(2, removed.size());
  }

  @Test
  void aRemovalThatFailsLeavesTheCloseAsItWas() {
    List<Object[]> calls = new ArrayList<>();
    Leaving.leaving(recording(calls), config("pod-2-1"), (group, instance) -> {
      throw new IllegalStateException("coordinator not available");
    }).close();
    assertEquals(1, calls.size());
  }

  /**
   * From Kafka 4.1 Kafka Streams closes a main consumer with {@code CloseOptions} saying
   * {@code REMAIN_IN_GROUP}: the consumer is given {@code LEAVE_GROUP} instead, with the
   * same timeout, which a static member obeys too. Before 4.1 there is no such class, and
   * Kafka Streams calls {@code close()} (the other test).
   */
  @Test
  void closeOptionsThatSayRemainInGroupAreToldToLeave() throws Exception {
    String kafka = VersionTest.expected();
    String[] version = kafka.split("\\.");
    boolean has = Integer.parseInt(version[0]) * 100 + Integer.parseInt(version[1]) >= 401;
    Class<?> options;
    try {
      options = Class.forName(CLOSE_OPTIONS);
    } catch (ClassNotFoundException e) {
      assertFalse(has, "Kafka " + kafka + " has no " + CLOSE_OPTIONS);
      return;
    }
    assertTrue(has, "Kafka " + kafka + " has " + CLOSE_OPTIONS);
    Class<?> operation = Class.forName(CLOSE_OPTIONS + "$GroupMembershipOperation");
    Object remain = operation.getField("REMAIN_IN_GROUP").get(null);
    Object given = options.getMethod("groupMembershipOperation", operation).invoke(null, remain);
    options.getMethod("withTimeout", Duration.class).invoke(given, Duration.ofSeconds(7));
    List<Object[]> calls = new ArrayList<>();
    List<String> removed = new ArrayList<>();
    Consumer<byte[], byte[]> consumer =
        Leaving.leaving(recording(calls), config("pod-3-1"), (g, i) -> removed.add(i));
    Method close = Consumer.class.getMethod("close", options);
    close.invoke(consumer, given);
    Object passed = ((Object[]) calls.get(0)[1])[0];
    assertEquals("LEAVE_GROUP", options.getMethod("groupMembershipOperation").invoke(passed).toString());
    assertEquals(Optional.of(Duration.ofSeconds(7)), options.getMethod("timeout").invoke(passed));
    assertEquals(List.of(), removed);  // LEAVE_GROUP makes a static member leave by itself
  }
}
