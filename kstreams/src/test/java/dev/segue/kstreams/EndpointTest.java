package dev.segue.kstreams;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.management.ManagementFactory;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The agent's health answer: a Kafka Streams client in ERROR fails it, as Kafka's
 * JmxReporter shows the client's {@code state} gauge (a DynamicMBean attribute). */
class EndpointTest {
  private final MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
  private ObjectName registered;

  /** What Kafka's JmxReporter registers: one attribute per metric, named for it. */
  private static final class Client implements DynamicMBean {
    private final String state;

    Client(String state) {
      this.state = state;
    }

    @Override
    public Object getAttribute(String attribute) throws AttributeNotFoundException {
      if (!attribute.equals("state")) {
        throw new AttributeNotFoundException(attribute);
      }
      return state;
    }

    @Override
    public void setAttribute(Attribute attribute) {}

    @Override
    public AttributeList getAttributes(String[] attributes) {
      return new AttributeList();
    }

    @Override
    public AttributeList setAttributes(AttributeList attributes) {
      return attributes;
    }

    @Override
    public Object invoke(String action, Object[] params, String[] signature) {
      return null;
    }

    @Override
    public MBeanInfo getMBeanInfo() {
      return new MBeanInfo(Client.class.getName(), "", null, null, null, null);
    }
  }

  private void client(String state) throws Exception {
    registered = new ObjectName("kafka.streams:type=stream-metrics,client-id=wc-1");
    jmx.registerMBean(new Client(state), registered);
  }

  @AfterEach
  void unregister() throws Exception {
    if (registered != null && jmx.isRegistered(registered)) {
      jmx.unregisterMBean(registered);
    }
  }

  @Test
  void noClientYetIsHealthy() {
    assertEquals("", Endpoint.failedClients(jmx));
  }

  @Test
  void aRunningClientIsHealthy() throws Exception {
    client("RUNNING");
    assertEquals("", Endpoint.failedClients(jmx));
  }

  @Test
  void aClientInErrorIsNamed() throws Exception {
    client("ERROR");
    assertEquals("kafka streams client wc-1 is ERROR", Endpoint.failedClients(jmx));
  }
}
