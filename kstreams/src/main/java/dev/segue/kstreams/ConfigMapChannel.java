package dev.segue.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The app's two ConfigMaps through the API server, with the pod's own ServiceAccount
 * token: it may update {@code <app>-group} and read {@code <app>-assignment}, nothing
 * else (the operator's Role for the app says so by resourceNames). Paths and names are
 * segue.protocol's (names.py, kstreams.py, document.py); the token is re-read on every
 * call, as the kubelet rotates it. Under the test suite's pod runner the pod's files
 * are under SEGUE_POD_ROOT (segue.podenv), as for the Python worker.
 */
final class ConfigMapChannel implements Channel {
  static final String SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
  static final String REPORT_KEY = "group.json.gz";
  static final String REPORT_ID_KEY = "report";
  static final String APPLIED_KEY = "applied";
  static final String DOCUMENT_KEY = "assignment.json.gz";
  static final String ENV_STREAMAPP = "SEGUE_STREAMAPP";
  static final String ENV_POD_NAMESPACE = "POD_NAMESPACE";
  /** The downward API's pod name: the member this instance is. */
  static final String ENV_POD_NAME = "POD_NAME";
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(3);
  // The server ends each watch after this, and the next one lists again (as the Python
  // worker's watch does). A connection that dies silently holds its watch (HttpClient has
  // no read timeout on a streamed body): that pod then rejoins when the others' rejoin
  // reaches it at a heartbeat.
  static final int WATCH_SECONDS = 60;

  static String groupConfigMap(String app) {
    return app + "-group";
  }

  static String assignmentConfigMap(String app) {
    return app + "-assignment";
  }

  private final HttpClient http;
  private final URI base;
  private final String namespace;
  private final String app;
  private final Path token;

  private ConfigMapChannel(HttpClient http, URI base, String namespace, String app, Path token) {
    this.http = http;
    this.base = base;
    this.namespace = namespace;
    this.app = app;
    this.token = token;
  }

  /** From the pod's environment; empty when not in a pod Segue manages. */
  static Optional<Channel> fromEnvironment(Map<String, String> env) {
    return of(env).map(channel -> channel);
  }

  /** The same, for what only this channel does ({@link #watch}). */
  static Optional<ConfigMapChannel> of(Map<String, String> env) {
    String host = env.get("KUBERNETES_SERVICE_HOST");
    String port = env.getOrDefault("KUBERNETES_SERVICE_PORT", "443");
    String app = env.get(ENV_STREAMAPP);
    String namespace = env.get(ENV_POD_NAMESPACE);
    if (host == null || app == null || namespace == null) {
      return Optional.empty();
    }
    String root = env.getOrDefault("SEGUE_POD_ROOT", "");
    Path dir = Path.of(root + SA_DIR);
    try {
      HttpClient http = HttpClient.newBuilder()
          .connectTimeout(CALL_TIMEOUT)
          .sslContext(trusting(dir.resolve("ca.crt")))
          .build();
      String hostPart = host.contains(":") ? "[" + host + "]" : host;
      URI base = URI.create("https://" + hostPart + ":" + port);
      return Optional.of(new ConfigMapChannel(http, base, namespace, app, dir.resolve("token")));
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("the pod's ServiceAccount CA in " + dir + ": " + e, e);
    }
  }

  @Override
  public void report(String id, byte[] gzipped) throws IOException, InterruptedException {
    ObjectNode patch = Reports.JSON.createObjectNode();
    patch.putObject("data").put(REPORT_ID_KEY, id);
    patch.putObject("binaryData").put(REPORT_KEY, Base64.getEncoder().encodeToString(gzipped));
    patchGroup(patch);
  }

  @Override
  public void applied(String json) throws IOException, InterruptedException {
    ObjectNode patch = Reports.JSON.createObjectNode();
    patch.putObject("data").put(APPLIED_KEY, json);
    patchGroup(patch);
  }

  /** A JSON merge patch of the group ConfigMap: it sets only the keys it names. */
  private void patchGroup(ObjectNode patch) throws IOException, InterruptedException {
    String body = Reports.JSON.writeValueAsString(patch);
    HttpRequest request = request(configMaps() + "/" + groupConfigMap(app))
        .timeout(CALL_TIMEOUT)
        .header("Content-Type", "application/merge-patch+json")
        .method("PATCH", HttpRequest.BodyPublishers.ofString(body))
        .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() / 100 != 2) {
      throw new IOException("updating ConfigMap " + namespace + "/" + groupConfigMap(app) + ": HTTP "
          + response.statusCode() + " " + response.body());
    }
  }

  @Override
  public Optional<byte[]> document() throws IOException, InterruptedException {
    HttpRequest request =
        request(configMaps() + "/" + assignmentConfigMap(app)).timeout(CALL_TIMEOUT).GET().build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() == 404) {
      return Optional.empty();
    }
    if (response.statusCode() / 100 != 2) {
      throw new IOException("reading ConfigMap " + namespace + "/" + assignmentConfigMap(app) + ": HTTP "
          + response.statusCode());
    }
    return documentOf(Reports.JSON.readTree(response.body()));
  }

  /** What {@link #watch} calls with each assignment document it sees. */
  interface Documents {
    void seen(byte[] gzipped);
  }

  /**
   * Lists the assignment ConfigMap, then watches it from that list, as the Python worker
   * does (the Role allows list and watch on it by name, with this field selector):
   * {@code each} gets the document now, if there is one, and every later one, until the
   * server ends the watch or it breaks; the caller calls again. A watch, not a poll: one
   * connection per pod, whatever the app's size.
   */
  void watch(Documents each) throws IOException, InterruptedException {
    String list = configMaps() + "?fieldSelector=metadata.name%3D" + assignmentConfigMap(app);
    HttpRequest read = request(list).timeout(CALL_TIMEOUT).GET().build();
    HttpResponse<String> now = http.send(read, HttpResponse.BodyHandlers.ofString());
    if (now.statusCode() / 100 != 2) {
      throw new IOException("listing ConfigMap " + namespace + "/" + assignmentConfigMap(app)
          + ": HTTP " + now.statusCode());
    }
    JsonNode listed = Reports.JSON.readTree(now.body());
    listed.path("items").forEach(item -> documentOf(item).ifPresent(each::seen));
    String version = listed.path("metadata").path("resourceVersion").asText();
    HttpRequest watch = request(list + "&watch=true&timeoutSeconds=" + WATCH_SECONDS
            + "&resourceVersion=" + version)
        .GET()  // no timeout: it would end the streamed watch after CALL_TIMEOUT
        .build();
    HttpResponse<Stream<String>> events = http.send(watch, HttpResponse.BodyHandlers.ofLines());
    if (events.statusCode() / 100 != 2) {
      throw new IOException("watching ConfigMap " + namespace + "/" + assignmentConfigMap(app)
          + ": HTTP " + events.statusCode());
    }
    try (Stream<String> lines = events.body()) {
      for (String line : (Iterable<String>) lines::iterator) {
        JsonNode event = Reports.JSON.readTree(line);
        String type = event.path("type").asText();
        if (type.equals("ERROR")) {  // e.g. 410 Gone: the version is too old; list again
          return;
        }
        if (type.equals("ADDED") || type.equals("MODIFIED")) {
          documentOf(event.path("object")).ifPresent(each::seen);
        }
      }
    }
  }

  private static Optional<byte[]> documentOf(JsonNode configMap) {
    String encoded = configMap.path("binaryData").path(DOCUMENT_KEY).asText("");
    return encoded.isEmpty() ? Optional.empty() : Optional.of(Base64.getDecoder().decode(encoded));
  }

  private String configMaps() {
    return "/api/v1/namespaces/" + namespace + "/configmaps";
  }

  /** A call to {@code path} as the pod's ServiceAccount, its token read now. */
  private HttpRequest.Builder request(String path) throws IOException {
    return HttpRequest.newBuilder(base.resolve(path))
        .header("Authorization", "Bearer " + Files.readString(token).trim())
        .header("Accept", "application/json");
  }

  private static SSLContext trusting(Path caFile) throws IOException, GeneralSecurityException {
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    int i = 0;
    CertificateFactory factory = CertificateFactory.getInstance("X.509");
    for (Certificate cert :
        factory.generateCertificates(new ByteArrayInputStream(Files.readAllBytes(caFile)))) {
      store.setCertificateEntry("ca-" + i++, cert);
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(store);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }
}
