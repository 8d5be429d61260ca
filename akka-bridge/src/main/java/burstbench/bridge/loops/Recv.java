package burstbench.bridge.loops;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Routers;
import burstbench.bridge.shared.Cli;
import burstbench.bridge.shared.EpochClock;
import burstbench.bridge.shared.Jms;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.jms.Session;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * Minimal receive loop (baseline for the contract consumer): Recv URL QUEUE COUNT [SKIP]. As
 * ContractConsumer: the same connection factory, queue prefetch 1000, one AUTO_ACKNOWLEDGE session
 * whose MessageListener reads the six bench properties and the whole body and tells what it read
 * to a round-robin pool of 4 actors, which tell one collector; the collector counts. No records,
 * no parsing, no CRC. Prints {"count", "first_ns", "mark_ns" (message SKIP, counted from 0,
 * arrived), "last_ns", "every", "at_ns" (when messages 0, EVERY, 2 EVERY... arrived)}, arrival
 * being the listener's call, as the consumer's records time it.
 */
public final class Recv {
  private Recv() {}

  static final int EVERY = 1000;

  /** What the listener read of one message. */
  private record Got(String producer, String seq, String burst, String sentNs, String nonce,
      String crc, int bytes, long recvNs) {}

  /** One session's listener: its fields are written in the session's thread only. */
  private static final class Listener implements MessageListener {
    private final long skip;
    private final ActorRef<Got> pool;
    private final long[] at;
    private byte[] buf = new byte[64];
    private long count;
    private long first;
    private long mark;
    private long last;

    Listener(long n, long skip, ActorRef<Got> pool) {
      this.skip = skip;
      this.pool = pool;
      this.at = new long[(int) ((n + EVERY - 1) / EVERY)];
    }

    @Override
    public void onMessage(Message m) {
      long now = EpochClock.nowNs();
      try {
        int len = 0;
        if (m instanceof BytesMessage bm) {
          len = (int) bm.getBodyLength();
          if (buf.length < len) {
            buf = new byte[len];
          }
          bm.readBytes(buf, len);
        }
        pool.tell(new Got(m.getStringProperty("bb_producer"), m.getStringProperty("bb_seq"),
            m.getStringProperty("bb_burst"), m.getStringProperty("bb_sent_ns"),
            m.getStringProperty("bb_nonce"), m.getStringProperty("bb_crc32"), len, now));
      } catch (JMSException e) {
        Cli.fail(1, "receive failed: " + Jms.describe(e));
      }
      if (count == skip) {
        mark = now;
      }
      if (count % EVERY == 0) {
        at[(int) (count / EVERY)] = now;
      }
      if (count++ == 0) {
        first = now;
      }
      last = now;
    }
  }

  public static void main(String[] a) throws Exception {
    Cli.quietLogs();
    String url = a[0];
    long n = Long.parseLong(a[2]);
    long skip = a.length > 3 ? Long.parseLong(a[3]) : 0;
    CompletableFuture<Long> done = new CompletableFuture<>();
    Behavior<Got> collector = Behaviors.setup(ctx -> {
      long[] counted = {0};
      return Behaviors.receiveMessage(g -> {
        if (++counted[0] == n) {
          done.complete(counted[0]);
        }
        return Behaviors.same();
      });
    });
    CompletableFuture<ActorRef<Got>> poolRef = new CompletableFuture<>();
    ActorSystem<Void> system = ActorSystem.create(Behaviors.<Void>setup(ctx -> {
      ActorRef<Got> to = ctx.spawn(collector, "collector");
      Behavior<Got> worker = Behaviors.receiveMessage(g -> {
        to.tell(g);
        return Behaviors.same();
      });
      poolRef.complete(ctx.spawn(Routers.pool(4, worker).withRoundRobinRouting(), "workers"));
      return Behaviors.empty();
    }), "recv-loop", Cli.config());
    ActorRef<Got> pool = poolRef.get(30, TimeUnit.SECONDS);
    ActiveMQConnectionFactory f = Jms.factory(url, null, null);
    f.getPrefetchPolicy().setQueuePrefetch(1000);
    Connection c = Jms.connect(f, Duration.ofSeconds(30));
    Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
    Listener l = new Listener(n, skip, pool);
    s.createConsumer(s.createQueue(a[1])).setMessageListener(l);
    done.get(600, TimeUnit.SECONDS);
    c.stop();   // returns once a listener call in progress has completed
    StringBuilder ats = new StringBuilder();
    for (int i = 0; i < l.at.length; i++) {
      ats.append(i > 0 ? "," : "").append(l.at[i]);
    }
    System.out.printf("{\"count\":%d,\"first_ns\":%d,\"mark_ns\":%d,\"last_ns\":%d,\"every\":%d,"
        + "\"at_ns\":[%s]}%n", l.count, l.first, l.mark, l.last, EVERY, ats);
    System.out.flush();
    Jms.closeQuietly(c);
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(5, TimeUnit.SECONDS);
    System.exit(0);
  }
}
