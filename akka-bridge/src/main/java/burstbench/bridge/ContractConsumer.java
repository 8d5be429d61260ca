package burstbench.bridge;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.AskPattern;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageListener;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQSession;

/**
 * burstbench contract consumer (clients/contract.md) built on actors: one JMS session and
 * listener per destination on one OpenWire connection; each listener takes the receive time,
 * acknowledges per --ack/--tx-batch, and feeds a round-robin pool of {@link ConsumerWorker}s
 * whose {@link ConsumerCollector} records every bench message.
 */
public final class ContractConsumer {
  private ContractConsumer() {}

  private static final byte[] EMPTY = new byte[0];

  /** One destination's listener; runs on that session's delivery thread only. */
  private static final class Listener implements MessageListener {
    private final Session session;
    private final int dest;
    private final ContractArgs args;
    private final ActorRef<ConsumerWorker.Command> pool;
    private final AtomicLong handedOff;
    private final int ackEvery;
    private long n;
    private Message unacked;

    Listener(Session session, int dest, ContractArgs args, ActorRef<ConsumerWorker.Command> pool,
        AtomicLong handedOff) {
      this.session = session;
      this.dest = dest;
      this.args = args;
      this.pool = pool;
      this.handedOff = handedOff;
      this.ackEvery = Math.max(1, (args.prefetch + 1) / 2);
    }

    @Override
    public void onMessage(Message m) {
      long recvNs = EpochClock.nowNs();
      try {
        byte[] head = EMPTY;
        int len = 0;
        if (m instanceof BytesMessage bm) {
          len = (int) bm.getBodyLength();
          head = new byte[Math.min(6, len)];
          bm.readBytes(head);
        } else if (m instanceof TextMessage tm && tm.getText() != null) {
          byte[] b = tm.getText().getBytes(StandardCharsets.UTF_8);
          len = b.length;
          head = java.util.Arrays.copyOf(b, Math.min(6, len));
        }
        handedOff.incrementAndGet();
        pool.tell(new ConsumerWorker.Raw(
            m.getStringProperty("bb_producer"), m.getStringProperty("bb_seq"),
            m.getStringProperty("bb_burst"), m.getStringProperty("bb_sent_ns"),
            head, len, m.getJMSRedelivered(), dest, recvNs));
        n++;
        if (args.txBatch > 0) {
          if (n % args.txBatch == 0) {
            session.commit();
          }
        } else {
          switch (args.ack) {
            case "client" -> {
              unacked = m;
              if (n % ackEvery == 0) {
                m.acknowledge();
                unacked = null;
              }
            }
            case "client-individual" -> m.acknowledge();
            default -> { }
          }
        }
      } catch (JMSException | RuntimeException e) {
        Cli.fail(1, "receive failed: " + Jms.describe(e));
      }
    }

    /** After delivery stopped: acknowledge or commit what this session holds. */
    void finish() throws JMSException {
      if (args.txBatch > 0) {
        session.commit();
      } else if (unacked != null) {
        unacked.acknowledge();
        unacked = null;
      }
    }
  }

  public static void main(String[] argv) throws Exception {
    Cli.quietLogs();
    ContractArgs a = ContractArgs.parseOrExit(argv, ContractArgs.Role.CONSUMER);
    ActiveMQConnectionFactory factory = a.factoryOrExit();
    factory.getPrefetchPolicy().setQueuePrefetch(a.prefetch);
    Connection connection;
    try {
      connection = Jms.connect(factory, Duration.ofMillis((long) (a.connectTimeout * 1000)));
    } catch (Jms.ConnectException e) {
      Cli.fail(3, e.getMessage());
      return;
    }
    boolean[] closing = {false};
    connection.setExceptionListener(e -> {
      if (!closing[0]) {
        Cli.fail(1, "connection to " + a.url + " failed: " + Jms.describe(e));
      }
    });

    long target = a.gate ? 0 : a.count * a.bursts;
    CompletableFuture<String> stop = new CompletableFuture<>();
    CompletableFuture<ActorRef<ConsumerWorker.Command>> poolRef = new CompletableFuture<>();
    ActorSystem<ConsumerCollector.Command> system = ActorSystem.create(
        ConsumerCollector.create(a.id, target, a.workers, poolRef, stop), "consumer", Cli.config());
    ActorRef<ConsumerWorker.Command> pool = poolRef.get(30, TimeUnit.SECONDS);
    Signals.onTerm(() -> stop.complete("signal"));

    int ackMode = switch (a.ack) {
      case "client" -> Session.CLIENT_ACKNOWLEDGE;
      case "client-individual" -> ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE;
      case "dups-ok" -> Session.DUPS_OK_ACKNOWLEDGE;
      default -> Session.AUTO_ACKNOWLEDGE;
    };
    AtomicLong handedOff = new AtomicLong();
    List<Listener> listeners = new ArrayList<>();
    List<MessageConsumer> consumers = new ArrayList<>();
    try {
      for (int i = 0; i < a.destinations.size(); i++) {
        Session s = a.txBatch > 0
            ? connection.createSession(true, Session.SESSION_TRANSACTED)
            : connection.createSession(false, ackMode);
        MessageConsumer c = s.createConsumer(s.createQueue(a.destinations.get(i)));
        Listener l = new Listener(s, i, a, pool, handedOff);
        c.setMessageListener(l);
        listeners.add(l);
        consumers.add(c);
      }
    } catch (JMSException e) {
      Cli.fail(1, "could not subscribe at " + a.url + ": " + Jms.describe(e));
      return;
    }
    Out.line("{\"event\":\"ready\",\"id\":\"" + a.id + "\",\"role\":\"consumer\"}");
    system.tell(ConsumerCollector.Started.INSTANCE);
    if (a.gate) {
      Thread gate = new Thread(() -> {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
          String line;
          while ((line = in.readLine()) != null && !line.trim().equals("stop")) {
            // consumers take no other command
          }
        } catch (IOException ignored) {
          // end of input
        }
        stop.complete("gate");
      }, "gate");
      gate.setDaemon(true);
      gate.start();
    }

    stop.get();
    // stop delivery (waits for running listeners), settle acknowledgements, then drain the actors
    closing[0] = true;
    try {
      connection.stop();
      for (Listener l : listeners) {
        l.finish();
      }
    } catch (JMSException e) {
      Cli.fail(1, "could not acknowledge at " + a.url + ": " + Jms.describe(e));
    }
    ConsumerCollector.Snapshot snap = AskPattern.<ConsumerCollector.Command, ConsumerCollector.Snapshot>ask(
            system, replyTo -> new ConsumerCollector.Drain(handedOff.get(), replyTo),
            Duration.ofMinutes(5), system.scheduler())
        .toCompletableFuture().get();
    Jms.closeQuietly(connection);
    if (a.records != null) {
      try {
        writeRecords(Path.of(a.records), a, snap);
      } catch (IOException e) {
        Cli.fail(1, "could not write records to " + a.records + ": " + e.getMessage());
      }
    }
    Out.line("{\"event\":\"done\",\"id\":\"" + a.id + "\",\"received\":" + snap.received()
        + ",\"foreign\":" + snap.foreign() + ",\"redelivered\":" + snap.redelivered() + "}");
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception ignored) {
      // exiting anyway
    }
    System.exit(0);
  }

  static void writeRecords(Path path, ContractArgs a, ConsumerCollector.Snapshot s) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(path, StandardCharsets.UTF_8)) {
      w.write("#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest\n");
      StringBuilder sb = new StringBuilder(128);
      int n = s.seq().size();
      for (int i = 0; i < n; i++) {
        long f = s.bytesFlags().get(i);
        sb.setLength(0);
        sb.append(s.producers().get(s.producer()[i])).append('\t')
            .append(s.seq().get(i)).append('\t')
            .append(s.burst().get(i)).append('\t')
            .append(s.sentNs().get(i)).append('\t')
            .append(s.recvNs().get(i)).append('\t')
            .append(f >>> 20).append('\t')
            .append(f & 1).append('\t')
            .append((f >>> 1) & 1).append('\t')
            .append(a.destinations.get((int) ((f >>> 2) & 0x3FFFF))).append('\n');
        w.write(sb.toString());
      }
    }
  }
}
