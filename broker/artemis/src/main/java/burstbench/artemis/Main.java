package burstbench.artemis;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;

import org.apache.activemq.artemis.api.core.SimpleString;
import org.apache.activemq.artemis.api.core.TransportConfiguration;
import org.apache.activemq.artemis.core.postoffice.Binding;
import org.apache.activemq.artemis.core.postoffice.impl.LocalQueueBinding;
import org.apache.activemq.artemis.core.server.ActiveMQServer;
import org.apache.activemq.artemis.core.server.Queue;
import org.apache.activemq.artemis.core.server.cluster.Bridge;
import org.apache.activemq.artemis.core.server.cluster.ClusterConnection;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;
import org.apache.activemq.artemis.core.server.impl.AddressInfo;
import org.apache.activemq.artemis.spi.core.security.ActiveMQJAASSecurityManager;
import org.apache.activemq.artemis.utils.VersionLoader;

import burstbench.broker.protocol.Lines;

import static burstbench.broker.protocol.Lines.epochNanos;
import static burstbench.broker.protocol.Lines.json;
import static burstbench.broker.protocol.Lines.openFiles;
import static burstbench.broker.protocol.Lines.rootMessage;
import static burstbench.broker.protocol.Lines.say;

/**
 * Runs one ActiveMQ Artemis broker from an ordinary broker.xml, the file the official
 * distribution reads from its instance's {@code etc/}; with {@code --login-config FILE}, users
 * and roles come from JAAS's PropertiesLoginModule as in the distribution (login.config beside
 * artemis-users.properties and artemis-roles.properties).
 *
 * <p>It speaks to the harness as the Classic launcher ({@code burstbench.broker.Main}) does, so
 * the accounting and the second witness work unchanged: one JSON line {@code
 * {"event":"ready",...}} on stdout once every acceptor is bound, everything else on stderr;
 * SIGTERM stops the broker; with {@code --watch-stdin} end of file on stdin stops it too, a line
 * {@code stats} is answered with the run's queues' counters in the Classic launcher's names
 * (enqueued = messages added, dequeued = acknowledged, inflight = delivering, size = message
 * count), the addresses' routed and unrouted counts beside them, and {@code hold Q1 Q2...}
 * pauses the named queues until each has a consumer.
 *
 * <p>Usage: {@code Main [--watch-stdin] [--check] [--login-config FILE] PATH/broker.xml}.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    boolean watchStdin = false;
    boolean checkOnly = false;
    String loginConfig = null;
    List<String> rest = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "--watch-stdin" -> watchStdin = true;
        case "--check" -> checkOnly = true;
        case "--login-config" -> {
          if (i + 1 >= args.length) {
            usage("--login-config needs a file");
          }
          loginConfig = args[++i];
        }
        case "--version" -> {
          System.out.println("{\"broker\":\"ActiveMQ Artemis\",\"version\":\"" + version()
              + "\",\"java\":\"" + System.getProperty("java.version") + "\"}");
          return;
        }
        default -> {
          if (a.startsWith("--")) {
            usage("unknown option " + a);
          }
          rest.add(a);
        }
      }
    }
    if (rest.size() != 1) {
      usage("expected exactly one broker.xml path");
    }
    Path config = Path.of(rest.get(0)).toAbsolutePath();
    if (!Files.isReadable(config)) {
      usage("cannot read " + config);
    }
    EmbeddedActiveMQ embedded = new EmbeddedActiveMQ();
    embedded.setConfigResourcePath(config.toUri().toString());
    if (loginConfig != null) {
      Path login = Path.of(loginConfig).toAbsolutePath();
      if (!Files.isReadable(login)) {
        usage("cannot read " + login);
      }
      System.setProperty("java.security.auth.login.config", login.toString());
      embedded.setSecurityManager(new ActiveMQJAASSecurityManager("activemq"));
    }
    if (checkOnly) {
      try {
        embedded.createActiveMQServer();
      } catch (Exception e) {
        System.err.println("error: " + config + " was not accepted: " + rootMessage(e));
        System.exit(3);
      }
      System.out.println("{\"event\":\"checked\",\"broker\":\""
          + json(embedded.getConfiguration().getName()) + "\"}");
      System.exit(0);
    }

    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        embedded.stop();
      } catch (Exception e) {
        System.err.println("error while stopping: " + e);
      }
      stopped.countDown();
    }, "burstbench-broker-shutdown"));

    ActiveMQServer server;
    try {
      embedded.start();
      server = embedded.getActiveMQServer();
      if (!server.waitForActivation(60, java.util.concurrent.TimeUnit.SECONDS)
          || !server.isStarted()) {
        throw new IllegalStateException("broker did not start");
      }
    } catch (Exception e) {
      System.err.println("error: broker failed to start: " + rootMessage(e));
      System.exit(4);
      return;
    }

    StringBuilder ready = new StringBuilder();
    String name = server.getConfiguration().getName();
    ready.append("{\"event\":\"ready\",\"broker\":\"").append(json(name))
        .append("\",\"product\":\"ActiveMQ Artemis\",\"version\":\"").append(version())
        .append("\",\"pid\":").append(ProcessHandle.current().pid())
        .append(",\"connectors\":{");
    boolean first = true;
    for (TransportConfiguration t : server.getConfiguration().getAcceptorConfigurations()) {
      ready.append(first ? "" : ",").append('"').append(json(t.getName())).append("\":\"")
          .append(json(t.getParams().getOrDefault("host", "") + ":"
              + t.getParams().getOrDefault("port", ""))).append('"');
      first = false;
    }
    ready.append("}}");
    say(ready.toString());

    if (!server.getClusterManager().getClusterConnections().isEmpty()) {
      ActiveMQServer s = server;
      Lines.watchBridges(name, s::isStarted, () -> connectedBridges(s));
    }

    if (watchStdin) {
      ActiveMQServer s = server;
      Lines.watchStdin(() -> stats(s), names -> hold(s, names));
    }
    stopped.await();
  }

  static String version() {
    return VersionLoader.getVersion().getFullVersion();
  }

  /** A queue of the run: not Artemis's own (activemq.*, $sys.*) nor the DLQ and ExpiryQueue. */
  static boolean own(SimpleString address) {
    String a = address.toString();
    return a.startsWith("activemq.") || a.startsWith("$") || a.equals("DLQ")
        || a.equals("ExpiryQueue");
  }

  /**
   * Every queue's counters in the Classic launcher's names, keyed by its address (a queue named
   * as its address, the anycast case) or {@code address -> queue} (a subscription's queue on a
   * multicast address), and every address's routed and unrouted counts: where messages were
   * copied or dropped.
   */
  static String stats(ActiveMQServer server) {
    Map<String, Queue> queues = new TreeMap<>();
    Map<String, Queue> system = new TreeMap<>();
    try {
      server.getPostOffice().getAllBindings().forEach((Binding b) -> {
        if (b instanceof LocalQueueBinding lb) {
          Queue q = lb.getQueue();
          if (q.isInternalQueue()) {
            return;
          }
          String addr = q.getAddress().toString();
          String key = q.getName().equals(q.getAddress()) ? addr : addr + " -> " + q.getName();
          (own(q.getAddress()) ? system : queues).put(key, q);
        }
      });
    } catch (Exception e) {
      return "{\"event\":\"stats\",\"error\":\"" + json(rootMessage(e)) + "\"}";
    }
    StringBuilder out = new StringBuilder();
    out.append("{\"event\":\"stats\",\"broker\":\"")
        .append(json(server.getConfiguration().getName())).append("\",\"t_ns\":")
        .append(epochNanos()).append(",\"queues\":{");
    counters(out, queues);
    out.append("},\"system_queues\":{");
    counters(out, system);
    out.append("},\"addresses\":{");
    boolean first = true;
    for (SimpleString a : server.getPostOffice().getAddresses().stream()
        .sorted(Comparator.comparing(SimpleString::toString)).toList()) {
      AddressInfo info = server.getPostOffice().getAddressInfo(a);
      if (info == null || info.isInternal() || own(a)) {
        continue;
      }
      out.append(first ? "" : ",").append('"').append(json(a.toString())).append("\":{")
          .append("\"routing\":\"").append(info.getRoutingTypes().toString().toLowerCase()
              .replaceAll("[\\[\\] ]", "")).append('"')
          .append(",\"routed\":").append(info.getRoutedMessageCount())
          .append(",\"unrouted\":").append(info.getUnRoutedMessageCount())
          .append(",\"queues\":").append(queues.keySet().stream()
              .filter(k -> k.equals(a.toString()) || k.startsWith(a + " -> ")).count())
          .append('}');
      first = false;
    }
    Runtime rt = Runtime.getRuntime();
    out.append("},\"subscriptions\":[],\"journal_files\":[],\"bridges\":[");
    first = true;
    for (ClusterConnection cc : server.getClusterManager().getClusterConnections()) {
      for (Bridge b : cc.getBridges()) {
        // a cluster bridge takes what its store-and-forward queue holds to another node
        out.append(first ? "" : ",").append("{\"connector\":\"")
            .append(json(cc.getName().toString()))
            .append("\",\"remote\":\"").append(json(b.getName().toString()))
            .append("\",\"connected\":").append(b.isConnected())
            .append(",\"enqueued\":").append(b.getQueue().getMessagesAdded())
            .append(",\"dequeued\":").append(b.getMetrics().getMessagesAcknowledged())
            .append(",\"holding\":").append(b.getQueue().getMessageCount()).append('}');
        first = false;
      }
    }
    out.append("]")
        .append(",\"usage\":{\"memory_bytes\":")
        .append(server.getPagingManager().getGlobalSize())
        .append("},\"connections\":").append(server.getConnectionCount())
        .append(",\"heap_used\":").append(rt.totalMemory() - rt.freeMemory())
        .append(",\"heap_max\":").append(rt.maxMemory())
        .append(",\"open_files\":").append(openFiles());
    return out.append('}').toString();
  }

  private static void counters(StringBuilder out, Map<String, Queue> queues) {
    boolean first = true;
    for (var e : queues.entrySet()) {
      Queue q = e.getValue();
      long acked = q.getMessagesAcknowledged();
      int delivering = q.getDeliveringCount();
      out.append(first ? "" : ",").append('"').append(json(e.getKey())).append("\":{")
          .append("\"enqueued\":").append(q.getMessagesAdded())
          .append(",\"dequeued\":").append(acked)
          .append(",\"dispatched\":").append(acked + delivering)
          .append(",\"inflight\":").append(delivering)
          .append(",\"expired\":").append(q.getMessagesExpired())
          .append(",\"killed\":").append(q.getMessagesKilled())
          .append(",\"size\":").append(q.getMessageCount())
          .append(",\"consumers\":").append(q.getConsumerCount())
          .append(",\"producers\":0")
          .append(",\"routing\":\"").append(q.getRoutingType().toString().toLowerCase())
          .append("\"}");
      first = false;
    }
  }

  /**
   * {@code hold Q1 Q2...}: pauses the named queues (answering {@code {"event":"held",...}}, or
   * with an {@code "error"} when one does not exist), then resumes them all at once when every
   * one has a consumer, or after {@code HOLD_S} seconds ({@code {"event":"released",...}}).
   */
  static void hold(ActiveMQServer server, List<String> names) {
    List<Queue> queues = new ArrayList<>();
    StringBuilder list = new StringBuilder("[");
    for (String n : names) {
      Queue q = server.locateQueue(SimpleString.of(n));
      if (q == null) {
        say("{\"event\":\"held\",\"error\":\"no queue " + json(n) + "\"}");
        return;
      }
      queues.add(q);
      list.append(list.length() > 1 ? "," : "").append('"').append(json(n)).append('"');
    }
    String named = list.append(']').toString();
    queues.forEach(Queue::pause);
    say("{\"event\":\"held\",\"queues\":" + named + "}");
    Thread t = new Thread(() -> {
      long start = System.nanoTime();
      long deadline = start + HOLD_S * 1_000_000_000L;
      while (queues.stream().anyMatch(q -> q.getConsumerCount() == 0)
          && System.nanoTime() < deadline) {
        try {
          Thread.sleep(2);
        } catch (InterruptedException e) {
          break;
        }
      }
      boolean all = queues.stream().noneMatch(q -> q.getConsumerCount() == 0);
      queues.forEach(Queue::resume);
      say("{\"event\":\"released\",\"queues\":" + named + ",\"subscribed\":" + all
          + ",\"held_ms\":" + (System.nanoTime() - start) / 1_000_000 + ",\"t_ns\":"
          + epochNanos() + "}");
    }, "burstbench-hold");
    t.setDaemon(true);
    t.start();
  }

  static final long HOLD_S = 300;

  /** Cluster bridges connected now: one to each node this node's cluster connection reaches. */
  private static int connectedBridges(ActiveMQServer server) {
    int active = 0;
    for (ClusterConnection cc : server.getClusterManager().getClusterConnections()) {
      for (Bridge b : cc.getBridges()) {
        active += b.isConnected() ? 1 : 0;
      }
    }
    return active;
  }

  private static void usage(String why) {
    System.err.println("error: " + why
        + " (usage: Main [--watch-stdin] [--check] [--login-config FILE] PATH/broker.xml)");
    System.exit(2);
  }
}
