package dev.segue.kstreams;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * What one Kafka Streams instance tells the operator, on its metrics port, read from its
 * own JVM's JMX (Kafka's public client metrics), in Prometheus' text format:
 *
 * <ul>
 *   <li>{@code segue_kstreams_consumer_client{client_id}}: the instance's main consumers,
 *       the ids a group report lists per client, so the operator knows which pod a process
 *       id is;
 *   <li>{@code segue_kstreams_restore_lag{topic,partition}}: the restore consumer's
 *       records-lag per changelog partition it reads (restoring actives, standbys and
 *       warm-ups alike), which the operator maps to tasks with the report's topology;
 *   <li>{@code segue_kstreams_fallbacks_total}: rebalances this process's assignor handed
 *       to Kafka Streams' own (SegueTaskAssignor.fallbacks()).
 * </ul>
 *
 * The names are segue.protocol.reports' (the contract test compares them).
 */
final class Endpoint {
  static final String CONSUMER_CLIENT = "segue_kstreams_consumer_client";
  static final String RESTORE_LAG = "segue_kstreams_restore_lag";
  static final String FALLBACKS = "segue_kstreams_fallbacks_total";
  static final String METRICS_PATH = "/metrics";
  static final String HEALTH_PATH = "/healthz";

  private Endpoint() {}

  /** Listens on {@code host} (every address when null). */
  static HttpServer start(String host, int port) throws IOException {
    InetSocketAddress address =
        host == null ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
    HttpServer server = HttpServer.create(address, 0);
    server.createContext(METRICS_PATH, exchange -> reply(exchange, render()));
    server.createContext(HEALTH_PATH, exchange -> {
      String failed = failedClients(ManagementFactory.getPlatformMBeanServer());
      reply(exchange, failed.isEmpty() ? 200 : 503, failed.isEmpty() ? "ok\n" : failed + "\n");
    });
    server.setExecutor(Executors.newSingleThreadExecutor(r -> {
      Thread thread = new Thread(r, "segue-endpoint");
      thread.setDaemon(true);
      return thread;
    }));
    server.start();
    return server;
  }

  static String render() {
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    StringBuilder out = new StringBuilder();
    out.append("# TYPE ").append(CONSUMER_CLIENT).append(" gauge\n");
    for (String id : mainConsumers(jmx)) {
      out.append(CONSUMER_CLIENT).append("{client_id=\"").append(escape(id)).append("\"} 1\n");
    }
    out.append("# TYPE ").append(RESTORE_LAG).append(" gauge\n");
    restoreLags(jmx).forEach((partition, lag) -> out.append(RESTORE_LAG)
        .append("{topic=\"").append(escape(partition.split("\u0000")[0]))
        .append("\",partition=\"").append(partition.split("\u0000")[1]).append("\"} ")
        .append(lag).append('\n'));
    out.append("# TYPE ").append(FALLBACKS).append(" counter\n");
    out.append(FALLBACKS).append(' ').append(SegueTaskAssignor.fallbacks()).append('\n');
    return out.toString();
  }

  /**
   * Kafka Streams clients of this JVM in ERROR (or on their way there), named with their
   * state; empty when none is. A client in ERROR has stopped its threads for good while the
   * JVM may live on: the probes must see it, so the pod is restarted as a crashed one would
   * be. No client yet (the app is starting) is healthy.
   */
  static String failedClients(MBeanServer jmx) {
    StringBuilder out = new StringBuilder();
    for (ObjectName name : jmx.queryNames(pattern("kafka.streams:type=stream-metrics,*"), null)) {
      try {
        Object state = jmx.getAttribute(name, "state");
        if (state != null && state.toString().contains("ERROR")) {
          out.append(out.length() == 0 ? "" : "; ").append("kafka streams client ")
              .append(name.getKeyProperty("client-id")).append(" is ").append(state);
        }
      } catch (Exception e) {  // closed between the query and the read, or no such gauge
        continue;
      }
    }
    return out.toString();
  }

  /** The main consumers' client ids: Kafka Streams names them {@code <client>-StreamThread-N-consumer}. */
  static Set<String> mainConsumers(MBeanServer jmx) {
    Set<String> out = new TreeSet<>();
    for (ObjectName name : jmx.queryNames(pattern("kafka.consumer:type=consumer-metrics,*"), null)) {
      String id = name.getKeyProperty("client-id");
      if (id != null && id.matches(".*-StreamThread-\\d+-consumer")) {
        out.add(id);
      }
    }
    return out;
  }

  /** records-lag of every partition a restore consumer reads; key: topic NUL partition. */
  static Map<String, Long> restoreLags(MBeanServer jmx) {
    Map<String, Long> out = new TreeMap<>();
    ObjectName query = pattern("kafka.consumer:type=consumer-fetch-manager-metrics,*");
    for (ObjectName name : jmx.queryNames(query, null)) {
      String id = name.getKeyProperty("client-id");
      String topic = name.getKeyProperty("topic");
      String partition = name.getKeyProperty("partition");
      if (id == null || topic == null || partition == null || !id.endsWith("-restore-consumer")) {
        continue;
      }
      try {
        Object lag = jmx.getAttribute(name, "records-lag");
        if (lag instanceof Number number && !Double.isNaN(number.doubleValue())) {
          out.merge(topic + "\u0000" + partition, Math.max(0L, number.longValue()), Math::max);
        }
      } catch (Exception e) {  // the consumer closed between the query and the read
        continue;
      }
    }
    return out;
  }

  private static ObjectName pattern(String text) {
    try {
      return new ObjectName(text);
    } catch (javax.management.MalformedObjectNameException e) {
      throw new IllegalArgumentException(text, e);
    }
  }

  private static String escape(String value) {
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }

  private static void reply(HttpExchange exchange, String body) throws IOException {
    reply(exchange, 200, body);
  }

  private static void reply(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream os = exchange.getResponseBody()) {
      os.write(bytes);
    }
  }
}
