package burstbench.bridge.loops;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.javadsl.Behaviors;
import burstbench.bridge.api.Settings;
import burstbench.bridge.shared.Body;
import burstbench.bridge.shared.Cli;
import burstbench.bridge.shared.EpochClock;
import burstbench.bridge.shared.Jms;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Session;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.apache.activemq.ActiveMQMessageProducer;
import org.apache.activemq.AsyncCallback;

/**
 * Minimal send loop (baseline for the contract producer): Send URL QUEUE COUNT [SIZE [SKIP]]. As
 * ContractProducer: the same connection factory and session, a non-persistent producer without
 * message timestamps, one sender actor on the blocking dispatcher told one message at a time by
 * the guardian, the same body and six string properties, the last message sent with an
 * AsyncCallback and waited for. Prints {"count", "first_ns", "mark_ns" (message SKIP handed to
 * send), "last_ns" (the broker confirmed the last), "every", "at_ns" (when messages 0, EVERY,
 * 2 EVERY... were handed to send)}.
 */
public final class Send {
  private Send() {}

  private record Go(long seq, boolean last) {}

  static final int EVERY = 1000;

  /**
   * Written in the sender's thread (messages 0, SKIP and each EVERY-th), read by main at the end:
   * {@code at} up to the index last written to {@code atCount}, a volatile write after it.
   */
  private static final class Times {
    volatile long first;
    volatile long mark;
    volatile int atCount;
    final long[] at;

    Times(long n) {
      at = new long[(int) ((n + EVERY - 1) / EVERY)];
    }
  }

  public static void main(String[] a) throws Exception {
    Cli.quietLogs();
    String url = a[0];
    long n = Long.parseLong(a[2]);
    int size = a.length > 3 ? Integer.parseInt(a[3]) : 6;
    long skip = a.length > 4 ? Long.parseLong(a[4]) : 0;
    Connection c = Jms.connect(Jms.factory(url, null, null), Duration.ofSeconds(30));
    Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
    ActiveMQMessageProducer p = (ActiveMQMessageProducer) s.createProducer(s.createQueue(a[1]));
    p.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
    p.setDisableMessageTimestamp(true);
    CompletableFuture<Long> confirmed = new CompletableFuture<>();
    Times t = new Times(n);
    Behavior<Go> sender = Behaviors.setup(ctx -> {
      byte[] body = Body.of(0, size);
      CRC32 crc = new CRC32();
      return Behaviors.receiveMessage(g -> {
        long now = EpochClock.nowNs();
        if (g.seq() == 0) {
          t.first = now;
        }
        if (g.seq() == skip) {
          t.mark = now;
        }
        if (g.seq() % EVERY == 0) {
          int k = (int) (g.seq() / EVERY);
          t.at[k] = now;
          t.atCount = k + 1;
        }
        try {
          send(s, p, g, body, crc, now, confirmed);
        } catch (JMSException | RuntimeException e) {
          Cli.fail(1, "send failed: " + Jms.describe(e));
        }
        return Behaviors.same();
      });
    });
    ActorSystem<Void> system = ActorSystem.create(Behaviors.<Void>setup(ctx -> {
      ActorRef<Go> to = ctx.spawn(sender, "sender",
          DispatcherSelector.fromConfig(Settings.BLOCKING_DISPATCHER));
      for (long i = 0; i < n; i++) {
        to.tell(new Go(i, i == n - 1));
      }
      return Behaviors.empty();
    }), "send-loop", Cli.config());
    long last = confirmed.get(600, TimeUnit.SECONDS);
    StringBuilder ats = new StringBuilder();
    for (int k = 0, m = t.atCount; k < m; k++) {
      ats.append(k > 0 ? "," : "").append(t.at[k]);
    }
    System.out.printf("{\"count\":%d,\"first_ns\":%d,\"mark_ns\":%d,\"last_ns\":%d,\"every\":%d,"
        + "\"at_ns\":[%s]}%n", n, t.first, t.mark, last, EVERY, ats);
    System.out.flush();
    Jms.closeQuietly(c);
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(5, TimeUnit.SECONDS);
    System.exit(0);
  }

  /** One message as the contract producer builds it; the last with the broker's receipt. */
  private static void send(Session s, ActiveMQMessageProducer p, Go g, byte[] body, CRC32 crc,
      long now, CompletableFuture<Long> confirmed) throws JMSException {
    BytesMessage m = s.createBytesMessage();
    System.arraycopy(Body.counter(g.seq()), 0, body, 0, Math.min(6, body.length));
    m.writeBytes(body);
    m.setStringProperty("bb_producer", "loop");
    m.setStringProperty("bb_seq", Long.toString(g.seq()));
    m.setStringProperty("bb_burst", "0");
    m.setStringProperty("bb_sent_ns", Long.toString(now));
    m.setStringProperty("bb_nonce", "loop");
    m.setStringProperty("bb_crc32", Body.hex8(Body.crc32(crc, body, 0, body.length)));
    if (!g.last()) {
      p.send(m);
    } else {   // with the broker's receipt: then all are in
      p.send(m, new AsyncCallback() {
        @Override
        public void onSuccess() {
          confirmed.complete(EpochClock.nowNs());
        }

        @Override
        public void onException(JMSException e) {
          confirmed.completeExceptionally(e);
        }
      });
    }
  }
}
