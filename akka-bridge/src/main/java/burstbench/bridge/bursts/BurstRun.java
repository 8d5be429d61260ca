package burstbench.bridge.bursts;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.PostStop;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.Routers;
import burstbench.bridge.api.Api;
import burstbench.bridge.api.Settings;
import burstbench.bridge.api.Stats;
import burstbench.bridge.shared.Body;
import burstbench.bridge.shared.EpochClock;
import burstbench.bridge.shared.Jms;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageListener;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.activemq.ActiveMQConnection;
import org.apache.activemq.command.ActiveMQQueue;

/**
 * The creator of one POST /bursts run. It emits each burst, one message at a time, either into a
 * round-robin pool of {@link BurstWorker}s (route actors) or to a {@link JmsBurstProducer} whose
 * queue is drained by {@code workers} JMS consumers inside the bridge (route broker); both end in
 * a {@link BurstCollector}. Bursts run back to back; the reply carries per-burst figures and the
 * run's accounting.
 */
public final class BurstRun extends AbstractBehavior<BurstRun.Command> {

  sealed interface Command {}

  private enum NextBurst implements Command { INSTANCE }

  /** From the collector: burst complete, or idle for burst-idle-timeout (then some are lost). */
  record BurstReceived(int burst, long received, long duplicates, long badBodies,
      long lastRecvNs, boolean complete, long foreign) implements Command {}

  /** From the JMS producer: the broker confirmed the burst's last message. */
  record BurstSent(int burst, long sent, long firstNs, long lastNs) implements Command {}

  record SendFailed(String error) implements Command {}

  public sealed interface Reply {}

  public record Done(Api.BurstsResult result) implements Reply {}

  public record Failed(String error) implements Reply {}

  static Behavior<Command> create(Api.BurstSpec spec, Settings settings,
      ActorRef<Stats.Command> stats, ActorRef<Reply> replyTo) {
    return Behaviors.setup(ctx -> {
      String runId = "akka-bridge-" + UUID.randomUUID().toString().substring(0, 13);
      if (spec.route() == Api.BurstRoute.ACTORS) {
        return new BurstRun(ctx, spec, settings, stats, replyTo, runId, null);
      }
      Connection connection = null;
      try {
        connection = Jms.connect(Jms.factory(spec.brokerUrl(), null, null),
            settings.brokerConnectTimeout());
        return new BurstRun(ctx, spec, settings, stats, replyTo, runId, connection);
      } catch (Jms.ConnectException | IllegalArgumentException | JMSException e) {
        Jms.closeQuietly(connection);
        replyTo.tell(new Failed(e instanceof JMSException j ? "broker: " + Jms.describe(j) : e.getMessage()));
        return Behaviors.stopped();
      }
    });
  }

  private final Api.BurstSpec spec;
  private final ActorRef<Stats.Command> stats;
  private final ActorRef<Reply> replyTo;
  private final String runId;
  private final ActorRef<BurstCollector.Command> collector;
  private final Consumer<BurstMessage> emit;
  private final Connection connection;
  private final List<MessageConsumer> consumers = new ArrayList<>();
  private final Queue queue;
  private final boolean temporaryName;
  private final BurstSent[] sent;
  private final BurstReceived[] received;
  private int nextBurst;
  private boolean closed;

  private BurstRun(ActorContext<Command> context, Api.BurstSpec spec, Settings settings,
      ActorRef<Stats.Command> stats, ActorRef<Reply> replyTo, String runId, Connection connection)
      throws JMSException {
    super(context);
    this.spec = spec;
    this.stats = stats;
    this.replyTo = replyTo;
    this.runId = runId;
    this.connection = connection;
    this.sent = new BurstSent[spec.bursts()];
    this.received = new BurstReceived[spec.bursts()];
    this.collector = context.spawn(BurstCollector.create(spec.count(), spec.bursts(),
        settings.burstIdleTimeout(), context.getSelf()), "collector");
    if (connection == null) {
      this.queue = null;
      this.temporaryName = false;
      ActorRef<BurstWorker.Command> pool = context.spawn(
          Routers.pool(spec.workers(), BurstWorker.create(collector)).withRoundRobinRouting(),
          "workers");
      this.emit = m -> pool.tell(new BurstWorker.Deliver(m));
    } else {
      this.temporaryName = spec.destination() == null;
      String name = temporaryName ? "akka.bursts." + runId : spec.destination();
      try {
        Session s0 = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        this.queue = s0.createQueue(name);
        s0.close();
        for (int i = 0; i < spec.workers(); i++) {
          Session s = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
          MessageConsumer c = s.createConsumer(queue);
          c.setMessageListener(new Listener(runId, collector));
          consumers.add(c);
        }
      } catch (JMSException e) {
        Jms.closeQuietly(connection);
        throw e;
      }
      ActorRef<JmsBurstProducer.Command> producer = context.spawn(
          JmsBurstProducer.create(connection, queue, spec.persistent(), context.getSelf()),
          "producer", DispatcherSelector.fromConfig(Settings.BLOCKING_DISPATCHER));
      this.emit = m -> producer.tell(new JmsBurstProducer.Send(m));
    }
    context.getSelf().tell(NextBurst.INSTANCE);
  }

  /** A JMS consumer inside the bridge: hands each message of this run to the collector. */
  private static final class Listener implements MessageListener {
    private final String runId;
    private final ActorRef<BurstCollector.Command> collector;

    Listener(String runId, ActorRef<BurstCollector.Command> collector) {
      this.runId = runId;
      this.collector = collector;
    }

    @Override
    public void onMessage(Message m) {
      try {
        if (!runId.equals(m.getStringProperty("bb_producer"))) {
          collector.tell(new BurstCollector.Foreign());
          return;
        }
        long seq = Long.parseLong(m.getStringProperty("bb_seq"));
        int burst = Integer.parseInt(m.getStringProperty("bb_burst"));
        boolean ok = false;
        if (m instanceof BytesMessage bm) {
          int len = (int) bm.getBodyLength();
          byte[] head = new byte[Math.min(6, len)];
          bm.readBytes(head);
          ok = Body.ok(head, len, seq);
        }
        collector.tell(new BurstCollector.Received(seq, burst, ok));
      } catch (JMSException | RuntimeException e) {
        collector.tell(new BurstCollector.Foreign());
      }
    }
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessageEquals(NextBurst.INSTANCE, this::onNextBurst)
        .onMessage(BurstReceived.class, this::onBurstReceived)
        .onMessage(BurstSent.class, this::onBurstSent)
        .onMessage(SendFailed.class, this::onSendFailed)
        .onSignal(PostStop.class, s -> {
          close();
          return this;
        })
        .build();
  }

  private Behavior<Command> onNextBurst() {
    int b = nextBurst++;
    collector.tell(new BurstCollector.Expect(b));
    int count = spec.count();
    int size = spec.size();
    long base = (long) b * count;
    long first = 0;
    long last = 0;
    for (int i = 0; i < count; i++) {
      long seq = base + i;
      long now = EpochClock.nowNs();
      if (i == 0) {
        first = now;
      }
      last = now;
      emit.accept(new BurstMessage(runId, seq, b, now, Body.of(seq, size), i == count - 1));
    }
    if (connection == null) {
      sent[b] = new BurstSent(b, count, first, last);
    }
    return this;
  }

  private Behavior<Command> onBurstReceived(BurstReceived r) {
    received[r.burst()] = r;
    return advance(r.burst());
  }

  private Behavior<Command> onBurstSent(BurstSent s) {
    sent[s.burst()] = s;
    return advance(s.burst());
  }

  private Behavior<Command> advance(int b) {
    if (sent[b] == null || received[b] == null) {
      return this;
    }
    if (b + 1 < spec.bursts()) {
      getContext().getSelf().tell(NextBurst.INSTANCE);
      return this;
    }
    return finish();
  }

  private Behavior<Command> finish() {
    List<Api.BurstStats> per = new ArrayList<>();
    long totalSent = 0;
    long totalReceived = 0;
    long totalDuplicates = 0;
    long foreign = 0;
    for (int b = 0; b < spec.bursts(); b++) {
      BurstSent s = sent[b];
      BurstReceived r = received[b];
      double seconds = r.received() > 0 ? Math.max(0, r.lastRecvNs() - s.firstNs()) / 1e9 : 0.0;
      double rate = seconds > 0 ? r.received() / seconds : 0.0;
      per.add(new Api.BurstStats(b, s.sent(), r.received(), r.duplicates(), r.badBodies(),
          r.complete(), s.firstNs(), r.lastRecvNs(), seconds, rate));
      totalSent += s.sent();
      totalReceived += r.received();
      totalDuplicates += r.duplicates();
      foreign = Math.max(foreign, r.foreign());
    }
    long lost = Math.max(0, totalSent - totalReceived);
    close();
    stats.tell(new Stats.BurstRecorded(totalSent, totalReceived, lost, totalDuplicates));
    replyTo.tell(new Done(new Api.BurstsResult(
        spec.route().name().toLowerCase(java.util.Locale.ROOT), spec.count(), spec.size(),
        spec.workers(), queue == null ? null : queueName(), per,
        new Api.Accounting(totalSent, totalReceived, lost, totalDuplicates), foreign)));
    return Behaviors.stopped();
  }

  private String queueName() {
    try {
      return queue.getQueueName();
    } catch (JMSException e) {
      return null;
    }
  }

  private Behavior<Command> onSendFailed(SendFailed f) {
    close();
    replyTo.tell(new Failed(f.error()));
    return Behaviors.stopped();
  }

  private void close() {
    if (closed || connection == null) {
      closed = true;
      return;
    }
    closed = true;
    for (MessageConsumer c : consumers) {
      try {
        c.close();
      } catch (JMSException ignored) {
        // best effort
      }
    }
    if (temporaryName) {
      try {
        ((ActiveMQConnection) connection).destroyDestination((ActiveMQQueue) queue);
      } catch (JMSException ignored) {
        // a queue left behind is harmless
      }
    }
    Jms.closeQuietly(connection);
  }
}
