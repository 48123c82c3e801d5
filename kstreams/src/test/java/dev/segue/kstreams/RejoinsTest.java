package dev.segue.kstreams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPOutputStream;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.junit.jupiter.api.Test;

/** The operator's ask for a rebalance, from the document to the consumers' rejoins. */
class RejoinsTest {
  /** A consumer that records the calls it gets; poll returns no records. */
  @SuppressWarnings("unchecked")
  static Consumer<byte[], byte[]> recording(List<String> calls) {
    return (Consumer<byte[], byte[]>) Proxy.newProxyInstance(
        Consumer.class.getClassLoader(), new Class<?>[] {Consumer.class}, (proxy, method, args) -> {
          calls.add(method.getName() + (args == null ? "" : "(" + args[0] + ")"));
          return method.getName().equals("poll") ? ConsumerRecords.empty() : null;
        });
  }

  @Test
  void aConsumerRejoinsOnceAtItsNextPollAfterEachNewAsk() {
    List<String> calls = new ArrayList<>();
    AtomicLong asked = new AtomicLong(3);  // asked before its first poll: not its own
    Consumer<byte[], byte[]> consumer = Rejoins.rejoining(recording(calls), asked::get);
    consumer.poll(Duration.ZERO);
    consumer.poll(Duration.ZERO);
    assertEquals(List.of("poll(PT0S)", "poll(PT0S)"), calls);
    asked.set(5);
    consumer.poll(Duration.ZERO);
    consumer.poll(Duration.ZERO);
    assertEquals("enforceRebalance(Segue asked for a rebalance for generation 5)", calls.get(2));
    assertEquals(List.of("poll(PT0S)", "poll(PT0S)"), calls.subList(3, 5));
    // every other call goes to the consumer as it is
    consumer.commitSync();
    assertEquals("commitSync", calls.get(5));
    assertSame(ConsumerRecords.empty(), consumer.poll(Duration.ZERO));
  }

  @Test
  void aDocumentAsksOnlyForALaterGenerationThanTheWatchBeganWith() throws Exception {
    DocumentWatch watch = new DocumentWatch();
    long before = Rejoins.asked();
    long base = Math.max(before, 0) + 100;
    watch.seen(document(base, true));  // asked before this instance watched: not acted on
    assertEquals(before, Rejoins.asked());
    watch.seen(document(base + 1, false));
    assertEquals(before, Rejoins.asked());
    watch.seen(document(base + 2, true));
    assertEquals(base + 2, Rejoins.asked());
    watch.seen(document(base + 1, true));  // an older ask changes nothing
    assertEquals(base + 2, Rejoins.asked());
  }

  @Test
  void aPodTheDocumentNamesLeavingDoesNotRejoinTheOthersDo() throws Exception {
    DocumentWatch leaver = new DocumentWatch("wc-2");
    DocumentWatch stayer = new DocumentWatch("wc-0");
    long base = Math.max(Rejoins.asked(), 0) + 2000;
    leaver.seen(document(base, false));
    stayer.seen(document(base, false));
    ObjectNode leaving = (ObjectNode) Fixtures.json("answer.json");
    leaving.put("generation", base + 1);
    ((ObjectNode) leaving.path("kafka_streams")).put("rejoin", true);
    ((ObjectNode) leaving.path("kafka_streams")).putArray("leaving").add("wc-2");
    leaver.seen(gzipped(leaving));
    assertTrue(Rejoins.asked() < base + 1);  // no ask from the leaver
    stayer.seen(gzipped(leaving));
    assertEquals(base + 1, Rejoins.asked());
  }

  @Test
  void aDocumentThatCannotBeReadIsPassedOverAndTheWatchGoesOn() throws Exception {
    DocumentWatch watch = new DocumentWatch();
    long base = Math.max(Rejoins.asked(), 0) + 1000;
    watch.seen(document(base, false));
    watch.seen("not gzipped".getBytes(StandardCharsets.UTF_8));  // would throw, not passed over
    watch.seen(document(base + 1, true));
    assertEquals(base + 1, Rejoins.asked());
  }

  static byte[] document(long generation, boolean rejoin) throws Exception {
    ObjectNode document = (ObjectNode) Fixtures.json("answer.json");
    document.put("generation", generation);
    ((ObjectNode) document.path("kafka_streams")).put("rejoin", rejoin);
    return gzipped(document);
  }

  static byte[] gzipped(ObjectNode document) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
      gz.write(Reports.JSON.writeValueAsString(document).getBytes(StandardCharsets.UTF_8));
    }
    assertTrue(bytes.size() > 0);
    return bytes.toByteArray();
  }
}
