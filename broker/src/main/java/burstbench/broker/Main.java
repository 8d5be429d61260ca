package burstbench.broker;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.apache.activemq.ActiveMQConnectionMetaData;
import org.apache.activemq.broker.BrokerFactory;
import org.apache.activemq.broker.BrokerService;
import org.apache.activemq.broker.ConnectionContext;
import org.apache.activemq.broker.TransportConnector;
import org.apache.activemq.broker.region.Destination;
import org.apache.activemq.broker.region.DestinationFilter;
import org.apache.activemq.broker.region.DestinationStatistics;
import org.apache.activemq.broker.region.Queue;
import org.apache.activemq.broker.region.Subscription;
import org.apache.activemq.command.ActiveMQDestination;
import org.apache.activemq.command.ActiveMQQueue;
import org.apache.activemq.command.ConsumerInfo;
import org.apache.activemq.network.NetworkBridge;
import org.apache.activemq.network.NetworkConnector;

import burstbench.broker.protocol.Lines;

import static burstbench.broker.protocol.Lines.epochNanos;
import static burstbench.broker.protocol.Lines.json;
import static burstbench.broker.protocol.Lines.openFiles;
import static burstbench.broker.protocol.Lines.rootMessage;
import static burstbench.broker.protocol.Lines.say;

/**
 * Runs one ActiveMQ Classic broker from an ordinary activemq.xml (xbean), the same file the
 * official distribution would read.
 *
 * <p>Prints exactly one JSON line on stdout once the broker has started and every transport
 * connector is bound: {@code {"event":"ready","broker":NAME,"version":V,"connectors":{...}}}.
 * Everything else goes to stderr. SIGTERM stops the broker cleanly. With {@code --watch-stdin}
 * the broker also stops when its standard input reaches end of file, so a parent that dies
 * (even by SIGKILL) takes its broker with it, and each line {@code stats} it reads is answered
 * with one line {@code {"event":"stats",...}}: every queue's own counters (enqueued, dequeued,
 * dispatched, in flight, expired, size, consumers, producers) and every network bridge's
 * (enqueued, dequeued), read in the broker's process: the harness's second witness beside the
 * clients' records; ActiveMQ's own queues (the DLQ), every queue consumer (its connection, its
 * prefetch, what it holds unacknowledged) and the store's journal files beside them. A line
 * {@code hold Q1 Q2...} holds the named queues' dispatch until each has a consumer ({@link
 * #hold}).
 *
 * <p>{@code BURSTBENCH_KAHADB_LOG=DEBUG} (or {@code TRACE}) makes KahaDB's MessageDatabase log
 * its checkpoints and which journal files it removes, or keeps and why (log4j2.properties).
 *
 * <p>Usage: {@code Main [--watch-stdin] [--check] PATH/activemq.xml}. {@code --check} loads and
 * validates the file without starting anything (exit 0 when the file is accepted).
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    boolean watchStdin = false;
    boolean checkOnly = false;
    List<String> rest = new ArrayList<>();
    for (String a : args) {
      switch (a) {
        case "--watch-stdin" -> watchStdin = true;
        case "--check" -> checkOnly = true;
        case "--version" -> {
          System.out.println("{\"broker\":\"ActiveMQ Classic\",\"version\":\""
              + ActiveMQConnectionMetaData.PROVIDER_VERSION + "\",\"java\":\""
              + System.getProperty("java.version") + "\"}");
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
      usage("expected exactly one activemq.xml path");
    }
    Path config = Path.of(rest.get(0)).toAbsolutePath();
    if (!Files.isReadable(config)) {
      usage("cannot read " + config);
    }

    BrokerService broker;
    try {
      // xbean would otherwise start the broker while loading the file; --check must not
      BrokerFactory.setStartDefault(false);
      // file:/PATH as the distribution's bin/activemq gives it: Spring 7 (ActiveMQ 6.3)
      // refuses file:///PATH, a URL with an authority, as a "remote-file"
      String file = config.toUri().toString().replaceFirst("^file:///", "file:/");
      broker = BrokerFactory.createBroker(new URI("xbean:" + file), false);
    } catch (Exception e) {
      System.err.println("error: " + config + " was not accepted: " + rootMessage(e));
      System.exit(3);
      return;
    }
    if (checkOnly) {
      System.out.println("{\"event\":\"checked\",\"broker\":\"" + broker.getBrokerName() + "\"}");
      System.exit(0);
    }

    CountDownLatch stopped = new CountDownLatch(1);
    BrokerService b = broker;
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        b.stop();
        b.waitUntilStopped();
      } catch (Exception e) {
        System.err.println("error while stopping: " + e);
      }
      stopped.countDown();
    }, "burstbench-broker-shutdown"));

    try {
      broker.start();
      if (!broker.waitUntilStarted()) {
        throw new IllegalStateException("broker did not start");
      }
    } catch (Exception e) {
      System.err.println("error: broker " + broker.getBrokerName() + " failed to start: " + rootMessage(e));
      System.exit(4);
      return;
    }

    StringBuilder ready = new StringBuilder();
    ready.append("{\"event\":\"ready\",\"broker\":\"").append(broker.getBrokerName())
        .append("\",\"version\":\"").append(ActiveMQConnectionMetaData.PROVIDER_VERSION)
        .append("\",\"pid\":").append(ProcessHandle.current().pid())
        .append(",\"connectors\":{");
    boolean first = true;
    for (TransportConnector c : broker.getTransportConnectors()) {
      if (!first) {
        ready.append(',');
      }
      first = false;
      ready.append('"').append(c.getName()).append("\":\"").append(c.getPublishableConnectString()).append('"');
    }
    ready.append("}}");
    System.out.println(ready);
    System.out.flush();

    if (!broker.getNetworkConnectors().isEmpty()) {
      Lines.watchBridges(broker.getBrokerName(),
          () -> !broker.isStopped() && !broker.isStopping(), () -> activeBridges(broker));
    }

    if (watchStdin) {
      Lines.watchStdin(() -> stats(broker), names -> hold(broker, names));
    }
    stopped.await();
  }

  /**
   * {@code hold Q1 Q2...}: pauses dispatch on the named queues (answering {@code
   * {"event":"held",...}}, or with an {@code "error"} when one does not exist), then resumes
   * them all at once when every one has a consumer, or after {@code HOLD_S} seconds, and
   * prints {@code {"event":"released","subscribed":true|false,"held_ms":N,...}}. The perf
   * harness's one-CPU receive rounds hold the loop's queue and the client's so that their two
   * consumers, subscribing at different times (each boots in turn on the one CPU), start
   * draining their backlogs together.
   */
  static void hold(BrokerService broker, List<String> names) {
    List<Queue> queues = new ArrayList<>();
    StringBuilder list = new StringBuilder("[");
    for (String n : names) {
      Destination d;
      try {
        d = broker.getRegionBroker().getDestinationMap().get(new ActiveMQQueue(n));
      } catch (Exception e) {
        d = null;
      }
      while (d instanceof DestinationFilter f) {
        d = f.getNext();
      }
      if (!(d instanceof Queue q)) {
        say("{\"event\":\"held\",\"error\":\"no queue " + json(n) + "\"}");
        return;
      }
      queues.add(q);
      list.append(list.length() > 1 ? "," : "").append('"').append(json(n)).append('"');
    }
    String named = list.append(']').toString();
    queues.forEach(Queue::pauseDispatch);
    say("{\"event\":\"held\",\"queues\":" + named + "}");
    Thread t = new Thread(() -> {
      long start = System.nanoTime();
      long deadline = start + HOLD_S * 1_000_000_000L;
      while (queues.stream().anyMatch(q -> q.getConsumers().isEmpty())
          && System.nanoTime() < deadline) {
        try {
          Thread.sleep(2);
        } catch (InterruptedException e) {
          break;
        }
      }
      boolean all = queues.stream().noneMatch(q -> q.getConsumers().isEmpty());
      queues.forEach(Queue::resumeDispatch);
      say("{\"event\":\"released\",\"queues\":" + named + ",\"subscribed\":" + all
          + ",\"held_ms\":" + (System.nanoTime() - start) / 1_000_000 + ",\"t_ns\":"
          + epochNanos() + "}");
    }, "burstbench-hold");
    t.setDaemon(true);
    t.start();
  }

  /** How long {@code hold} waits for the queues' consumers before it lets them go anyway. */
  static final long HOLD_S = 300;

  /** Bridges this broker's own network connectors hold now. */
  private static int activeBridges(BrokerService broker) {
    int active = 0;
    for (NetworkConnector nc : broker.getNetworkConnectors()) {
      active += nc.activeBridges().size();
    }
    return active;
  }

  /** Every queue's, consumer's and network bridge's counters, as one JSON line. */
  static String stats(BrokerService broker) {
    StringBuilder out = new StringBuilder();
    out.append("{\"event\":\"stats\",\"broker\":\"").append(json(broker.getBrokerName()))
        .append("\",\"t_ns\":").append(epochNanos()).append(",\"queues\":{");
    // the bench's queues under "queues"; ActiveMQ's own (ActiveMQ.DLQ: messages a consumer
    // poison-acknowledged or that ran out of redeliveries) under "system_queues": persistent
    // messages nobody consumes there keep KahaDB's journal files (docs/findings-faults.md#soak-store-growth)
    StringBuilder system = new StringBuilder();
    StringBuilder subs = new StringBuilder();
    try {
      for (var e : broker.getRegionBroker().getDestinationMap().entrySet()) {
        ActiveMQDestination d = e.getKey();
        if (!d.isQueue()) {
          continue;
        }
        boolean own = d.getPhysicalName().startsWith("ActiveMQ.");
        StringBuilder to = own ? system : out;
        Destination dest = e.getValue();
        DestinationStatistics st = dest.getDestinationStatistics();
        to.append(to.length() == 0 || to.charAt(to.length() - 1) == '{' ? "" : ",")
            .append('"').append(json(d.getPhysicalName())).append("\":{")
            .append("\"enqueued\":").append(st.getEnqueues().getCount())
            .append(",\"dequeued\":").append(st.getDequeues().getCount())
            .append(",\"dispatched\":").append(st.getDispatched().getCount())
            .append(",\"inflight\":").append(st.getInflight().getCount())
            .append(",\"expired\":").append(st.getExpired().getCount())
            .append(",\"size\":").append(st.getMessages().getCount())
            .append(",\"consumers\":").append(st.getConsumers().getCount())
            .append(",\"producers\":").append(st.getProducers().getCount())
            .append('}');
        if (!own) {
          for (Subscription s : dest.getConsumers()) {
            subscription(subs, d, s);
          }
        }
      }
    } catch (Exception e) {
      return "{\"event\":\"stats\",\"broker\":\"" + json(broker.getBrokerName())
          + "\",\"error\":\"" + json(rootMessage(e)) + "\"}";
    }
    out.append("},\"system_queues\":{").append(system)
        .append("},\"subscriptions\":[").append(subs).append(']');
    out.append(",\"journal_files\":").append(journalFiles(broker));
    boolean first = true;
    out.append(",\"bridges\":[");
    for (NetworkConnector nc : broker.getNetworkConnectors()) {
      for (NetworkBridge b : nc.activeBridges()) {
        out.append(first ? "" : ",").append("{\"connector\":\"").append(json(nc.getName()))
            .append("\",\"remote\":\"").append(json(String.valueOf(b.getRemoteBrokerName())))
            .append("\",\"enqueued\":").append(b.getEnqueueCounter())
            .append(",\"dequeued\":").append(b.getDequeueCounter()).append('}');
        first = false;
      }
    }
    out.append("]");
    // the broker's own resources, for charts over time (a leak shows as a slope): system
    // usage as ActiveMQ accounts it, the JVM's heap, and open file descriptors
    var su = broker.getSystemUsage();
    Runtime rt = Runtime.getRuntime();
    out.append(",\"usage\":{\"store_pct\":").append(su.getStoreUsage().getPercentUsage())
        .append(",\"store_bytes\":").append(su.getStoreUsage().getUsage())
        .append(",\"store_limit\":").append(su.getStoreUsage().getLimit())
        .append(",\"memory_pct\":").append(su.getMemoryUsage().getPercentUsage())
        .append(",\"temp_pct\":").append(su.getTempUsage().getPercentUsage())
        .append("},\"heap_used\":").append(rt.totalMemory() - rt.freeMemory())
        .append(",\"heap_max\":").append(rt.maxMemory())
        .append(",\"open_files\":").append(openFiles());
    return out.append("}").toString();
  }

  /**
   * One consumer of a queue: whose connection it is, what it may hold (prefetch) and what it
   * holds (dispatched, not yet acknowledged): a consumer whose connection no client reads
   * keeps its prefetch unacknowledged, and their journal file with them.
   */
  private static void subscription(StringBuilder out, ActiveMQDestination d, Subscription s) {
    ConsumerInfo ci = s.getConsumerInfo();
    ConnectionContext cx = s.getContext();
    String remote = cx == null || cx.getConnection() == null ? ""
        : cx.getConnection().getRemoteAddress();
    out.append(out.length() == 0 ? "" : ",").append("{\"queue\":\"")
        .append(json(d.getPhysicalName())).append("\",\"consumer\":\"")
        .append(json(String.valueOf(ci.getConsumerId()))).append("\",\"remote\":\"")
        .append(json(String.valueOf(remote))).append("\",\"network\":")
        .append(ci.isNetworkSubscription()).append(",\"prefetch\":").append(s.getPrefetchSize())
        .append(",\"dispatched\":").append(s.getDispatchedCounter())
        .append(",\"dequeued\":").append(s.getDequeueCounter())
        .append(",\"holding\":").append(s.getDispatchedQueueSize()).append('}');
  }

  /**
   * The store's journal files ({@code db-N.log}, KahaDB) as {@code [[N, bytes], ...]}, or
   * {@code []}: which files the store keeps, next to what it holds.
   */
  private static String journalFiles(BrokerService broker) {
    StringBuilder out = new StringBuilder("[");
    try {
      java.io.File dir = broker.getPersistenceAdapter().getDirectory();
      java.io.File[] logs = dir == null ? null
          : dir.listFiles((x, n) -> n.matches("db-\\d+\\.log"));
      if (logs != null) {
        java.util.Arrays.sort(logs, java.util.Comparator.comparingInt(
            (java.io.File f) -> Integer.parseInt(f.getName().replaceAll("\\D", ""))));
        for (java.io.File f : logs) {
          out.append(out.length() == 1 ? "" : ",").append('[')
              .append(f.getName().replaceAll("\\D", "")).append(',').append(f.length()).append(']');
        }
      }
    } catch (Exception e) {
      // no persistence adapter (non-persistent broker) or no directory: no files
    }
    return out.append(']').toString();
  }

  private static void usage(String why) {
    System.err.println("error: " + why + " (usage: Main [--watch-stdin] [--check] PATH/activemq.xml)");
    System.exit(2);
  }
}
