package dev.segue.kstreams;

import java.lang.instrument.Instrumentation;
import java.util.Map;

/**
 * The Java agent the operator injects into a Kafka Streams pod
 * ({@code JAVA_TOOL_OPTIONS=-javaagent:<this jar>}): it puts the plugin on the app's
 * classpath (an agent jar is on it), so the app needs only its task.assignor.class line
 * (and, optionally, its default.client.supplier line: {@link SegueClientSupplier}),
 * starts {@link Endpoint}, which tells the operator what this instance is and how far
 * its copies are, and {@link Preload}, so that a new instance's first store does not hold
 * a rebalance up. It reads, it never changes the app.
 */
public final class Agent {
  static final String ENV_METRICS_PORT = "SEGUE_METRICS_PORT";
  // The pod's own address (downward API): pods may share a host's network, as under the
  // local stack's pod runner, so the endpoint listens where the operator scrapes this pod.
  static final String ENV_POD_IP = "POD_IP";

  private Agent() {}

  public static void premain(String args, Instrumentation instrumentation) {
    Preload.start(ClassLoader.getSystemClassLoader());
    start(System.getenv());
  }

  public static void agentmain(String args, Instrumentation instrumentation) {
    start(System.getenv());
  }

  static void start(Map<String, String> env) {
    String port = env.get(ENV_METRICS_PORT);
    if (port == null) {
      System.err.println("segue agent: " + ENV_METRICS_PORT + " is not set: no endpoint");
      return;
    }
    try {
      String host = env.getOrDefault(ENV_POD_IP, "").trim();
      Endpoint.start(host.isEmpty() ? null : host, Integer.parseInt(port.trim()));
    } catch (Exception e) {  // the app runs on without it; the operator sees no metrics
      System.err.println("segue agent: the endpoint on port " + port + " did not start: " + e);
    }
  }
}
