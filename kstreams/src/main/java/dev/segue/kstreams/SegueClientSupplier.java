package dev.segue.kstreams;

import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaClientSupplier;

/**
 * The app's Kafka clients as Kafka Streams makes them by default, with three additions: each
 * stream thread's main consumer rejoins its group when the operator asks ({@link
 * Rejoins}), so that a decision taken while the group is settled (a scale-down, a learner
 * caught up sooner than expected) is taken up at once instead of at the next follow-up
 * rebalance; it leaves its group when it is closed ({@link Leaving}), so that no rebalance
 * waits out the session of an instance whose pod went away; and an exactly-once producer
 * gets its producer id when it is made, not in the pause of a new instance's first handover
 * ({@link EarlyInit}). The app's second config line:
 * {@code default.client.supplier=dev.segue.kstreams.SegueClientSupplier}. Public APIs
 * only ({@link KafkaClientSupplier}, {@link Consumer#enforceRebalance(String)}, {@link
 * Producer#initTransactions()}, {@link Admin#removeMembersFromConsumerGroup}); the clients
 * are wrapped through their interfaces, so one class serves every Kafka Streams version the
 * plugin supports.
 */
public final class SegueClientSupplier implements KafkaClientSupplier {
  @Override
  public Admin getAdmin(Map<String, Object> config) {
    return Admin.create(config);
  }

  @Override
  public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
    return EarlyInit.initialising(
        new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer()), config);
  }

  @Override
  public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
    DocumentWatch.startOnce(System.getenv());
    Map<String, Object> leaving = Leaving.leavingConfig(config);
    return Rejoins.rejoining(
        Leaving.leaving(plain(leaving), leaving, Leaving.admin(leaving)), Rejoins::asked);
  }

  @Override
  public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
    return plain(config);
  }

  @Override
  public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
    return plain(config);
  }

  private static Consumer<byte[], byte[]> plain(Map<String, Object> config) {
    return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }
}
