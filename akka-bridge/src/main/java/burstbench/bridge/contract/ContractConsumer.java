package burstbench.bridge.contract;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.AskPattern;
import burstbench.bridge.shared.Body;
import burstbench.bridge.shared.Cli;
import burstbench.bridge.shared.EpochClock;
import burstbench.bridge.shared.Jms;
import burstbench.bridge.shared.Out;
import burstbench.bridge.shared.Signals;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageFormatException;
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
import java.util.zip.CRC32;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQSession;

/**
 * burstbench contract consumer (clients/contract.md) built on actors: one JMS session and
 * listener per destination on one OpenWire connection; each listener takes the receive time,
 * reads the properties and the body (computing its CRC-32 over every byte), acknowledges per
 * --ack/--tx-batch, and feeds a round-robin pool of {@link ConsumerWorker}s whose
 * {@link ConsumerCollector} records every bench message.
 */
public final class ContractConsumer {
  private ContractConsumer() {}

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
    private final CRC32 crc = new CRC32();
    private byte[] buf = new byte[64];

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
        long head = 0;
        int len = 0;
        int bodyCrc = 0;   // CRC-32 of no bytes
        if (m instanceof BytesMessage bm) {
          int want = (int) bm.getBodyLength();
          if (buf.length < want) {
            buf = new byte[(int) Math.max(want, Math.min(Integer.MAX_VALUE - 8, 2L * buf.length))];
          }
          len = want == 0 ? 0 : Math.max(0, bm.readBytes(buf, want));
          head = Body.head(buf, len);
          bodyCrc = Body.crc32(crc, buf, 0, len);
        } else if (m instanceof TextMessage tm && tm.getText() != null) {
          byte[] b = tm.getText().getBytes(StandardCharsets.UTF_8);
          len = b.length;
          head = Body.head(b, len);
          bodyCrc = Body.crc32(crc, b, 0, len);
        }
        handedOff.incrementAndGet();
        pool.tell(new ConsumerWorker.Raw(
            prop(m, "bb_producer"), prop(m, "bb_seq"), prop(m, "bb_burst"), prop(m, "bb_sent_ns"),
            prop(m, "bb_nonce"), prop(m, "bb_crc32"),
            head, len, bodyCrc, m.getJMSRedelivered(), dest, recvNs));
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

    /** A string property, or null when absent or of a type that is no string (a byte array). */
    private static String prop(Message m, String name) throws JMSException {
      try {
        return m.getStringProperty(name);
      } catch (MessageFormatException e) {
        return null;
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
    Out.line("{\"event\":\"ready\",\"id\":\"" + a.id + "\",\"role\":\"consumer\","
        + Jms.nodelayJson(connection, a.url) + "}");
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
      w.write("#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest"
          + "\tnonce\tcrc32_header\tcrc32_body\n");
      String[] nonces = new String[s.nonces().size()];
      for (int k = 0; k < nonces.length; k++) {
        nonces[k] = field(s.nonces().get(k));
      }
      StringBuilder sb = new StringBuilder(160);
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
            .append(a.destinations.get((int) ((f >>> 2) & 0x3FFFF))).append('\t')
            .append(s.nonce()[i] < 0 ? "-" : nonces[s.nonce()[i]]).append('\t');
        long h = s.crcHeader().get(i);
        if (h >= 0) {
          Body.hex8((int) h, sb);
        } else if (h == ConsumerCollector.CRC_RAW) {
          sb.append(field(s.rawCrc().get(i)));
        } else {
          sb.append('-');
        }
        sb.append('\t');
        Body.hex8((int) s.crcBody().get(i), sb).append('\n');
        w.write(sb.toString());
      }
    }
  }

  /** A received string as one TSV field: control characters (tab, newline) become '?'. */
  static String field(String v) {
    StringBuilder b = null;
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        if (b == null) {
          b = new StringBuilder(v.substring(0, i));
        }
        b.append('?');
      } else if (b != null) {
        b.append(c);
      }
    }
    return b == null ? v : b.toString();
  }
}
