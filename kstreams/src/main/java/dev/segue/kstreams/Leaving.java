package dev.segue.kstreams;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;

/**
 * A main consumer that leaves its group when it is closed. Kafka Streams closes its main
 * consumers without leaving ({@code internal.leave.group.on.close=false} up to 4.0,
 * {@code CloseOptions} {@code REMAIN_IN_GROUP} from 4.1), so that a bounced instance can
 * come back without a rebalance. In a Segue pod an instance closes because its pod goes
 * away (a scale-down, a rolling change), and the gone member would stay in the group
 * until its session ran out ({@code session.timeout.ms}, 45 s by default): every
 * rebalance meanwhile waits for it, and under exactly-once the live members commit
 * nothing and are fenced when their transactions time out. Public APIs only:
 *
 * <ul>
 *   <li>up to 4.0, the consumer is made with {@code internal.leave.group.on.close=true},
 *       so a dynamic member leaves on {@code close()}, and a static one ({@code
 *       group.instance.id}, which never leaves on close there) is removed by its instance id
 *       through {@link Admin#removeMembersFromConsumerGroup} once closed;
 *   <li>from 4.1, {@code close(CloseOptions)} is given {@code LEAVE_GROUP}, which a static
 *       member obeys too.
 * </ul>
 *
 * A killed instance closes nothing: its member still waits out its session.
 */
final class Leaving {
  static final String LEAVE_GROUP_ON_CLOSE = "internal.leave.group.on.close";
  private static final String CLOSE_OPTIONS = "org.apache.kafka.clients.consumer.CloseOptions";
  private static final Duration REMOVE_BOUND = Duration.ofSeconds(5);

  /** Removes a static member from its group once its consumer is closed. */
  interface Remover {
    void remove(String group, String instanceId) throws Exception;
  }

  private Leaving() {}

  /** {@code config} with the setting that makes a dynamic member leave on close. */
  static Map<String, Object> leavingConfig(Map<String, Object> config) {
    Map<String, Object> out = new HashMap<>(config);
    out.put(LEAVE_GROUP_ON_CLOSE, true);
    return out;
  }

  /** {@code real}, leaving its group on close (made from {@link #leavingConfig}). */
  @SuppressWarnings("unchecked")
  static <K, V> Consumer<K, V> leaving(
      Consumer<K, V> real, Map<String, Object> config, Remover remover) {
    Object group = config.get(ConsumerConfig.GROUP_ID_CONFIG);
    Object instance = config.get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
    return (Consumer<K, V>) Proxy.newProxyInstance(
        Consumer.class.getClassLoader(), new Class<?>[] {Consumer.class}, (proxy, method, args) -> {
          boolean close = method.getName().equals("close");
          Object[] given = args;
          if (close && args != null && args.length == 1 && isCloseOptions(args[0])) {
            given = new Object[] {leaveGroup(args[0])};
          }
          Object result;
          try {
            result = method.invoke(real, given);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          if (close && given == args && group != null && instance != null) {
            removeStatic(remover, group.toString(), instance.toString());
          }
          return result;
        });
  }

  /** The remover Kafka Streams itself uses for a static thread it removes. */
  static Remover admin(Map<String, Object> config) {
    return (group, instanceId) -> {
      Map<String, Object> admin = new HashMap<>();
      Set<String> known = AdminClientConfig.configNames();
      config.forEach((key, value) -> {
        if (known.contains(key)) {
          admin.put(key, value);
        }
      });
      admin.put(AdminClientConfig.CLIENT_ID_CONFIG, instanceId + "-segue-leave");
      try (Admin client = Admin.create(admin)) {
        client
            .removeMembersFromConsumerGroup(
                group,
                new RemoveMembersFromConsumerGroupOptions(Set.of(new MemberToRemove(instanceId))))
            .all()
            .get(REMOVE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
      }
    };
  }

  private static void removeStatic(Remover remover, String group, String instanceId) {
    try {
      remover.remove(group, instanceId);
      System.err.println("segue: static member " + instanceId + " left group " + group);
    } catch (Exception e) {  // its session ends it instead, as without Segue
      System.err.println(
          "segue: static member " + instanceId + " could not leave group " + group + ": " + e);
    }
  }

  static boolean isCloseOptions(Object arg) {
    return arg != null && arg.getClass().getName().equals(CLOSE_OPTIONS);
  }

  /** {@code options} (a 4.1+ {@code CloseOptions}) with {@code LEAVE_GROUP}, timeout kept. */
  static Object leaveGroup(Object options) throws ReflectiveOperationException {
    Class<?> operation = Class.forName(CLOSE_OPTIONS + "$GroupMembershipOperation");
    Object leave = operation.getField("LEAVE_GROUP").get(null);
    Method with = options.getClass().getMethod("withGroupMembershipOperation", operation);
    return with.invoke(options, leave);
  }
}
