package dev.segue.kstreams;

import java.io.IOException;
import java.util.Optional;

/**
 * How the plugin and the operator talk: the group report goes out, the assignment
 * document comes back. {@link ConfigMapChannel} is the real one (the app's own two
 * ConfigMaps through the API server, docs/kafka-streams.md "Channel").
 */
interface Channel {
  /** Publish the gzipped report of rebalance {@code id}. */
  void report(String id, byte[] gzipped) throws IOException, InterruptedException;

  /** The gzipped assignment document published now, if any. */
  Optional<byte[]> document() throws IOException, InterruptedException;

  /**
   * Publish what the plugin returned for the last report (segue.protocol.kstreams.Applied):
   * Kafka Streams runs a document only from the rebalance that maps it, so this is how the
   * operator learns which generation the group runs, or that it fell back. One bounded call.
   */
  void applied(String json) throws IOException, InterruptedException;
}
