package burstbench.bridge.contract;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.TimerScheduler;
import burstbench.bridge.api.Settings;
import burstbench.bridge.shared.EpochClock;
import burstbench.bridge.shared.LongArray;
import burstbench.bridge.shared.Out;
import jakarta.jms.Session;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.activemq.ActiveMQMessageProducer;

/**
 * The creator of {@link ContractProducer}: emits each burst message by message to the sender of
 * its destination ({@code LIST[seq mod n]}), prints {@code burst} once every sender confirmed its
 * part, prints {@code tick} once a second, and on stop closes the senders and hands their records
 * to the main thread.
 */
final class ProducerCreator extends AbstractBehavior<ProducerCreator.Command> {

  sealed interface Command {}

  /** Send the next burst (gate "go", or each of --bursts without --gate). */
  enum Go implements Command { INSTANCE }

  /** Finish after the bursts asked for so far (gate "stop" or end of input). */
  enum Stop implements Command { INSTANCE }

  /** Finish now (SIGTERM): unsent messages of a running burst are dropped. */
  enum Abort implements Command { INSTANCE }

  private enum Tick implements Command { INSTANCE }

  record SenderDone(int index, int burst, long sent, long firstNs, long lastNs) implements Command {}

  record SenderFailed(String error) implements Command {}

  record Closed(int index, LongArray seqs, LongArray sentNs) implements Command {}

  /** What the senders sent, per sender in send order. */
  record Records(LongArray[] seqs, LongArray[] sentNs, long sent) {}

  static Behavior<Command> create(ContractArgs args, List<Session> sessions,
      List<ActiveMQMessageProducer> producers, CompletableFuture<Records> result) {
    return Behaviors.withTimers(timers -> Behaviors.setup(
        ctx -> new ProducerCreator(ctx, timers, args, sessions, producers, result)));
  }

  private final ContractArgs args;
  private final CompletableFuture<Records> result;
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final AtomicLong[] sentCounters;   // one a sender, written by it alone
  private final ActorRef<ProducerSender.Command>[] senders;
  private final LongArray[] closedSeqs;
  private final LongArray[] closedNs;
  private int pendingGo;
  private boolean stopRequested;
  private boolean running;
  private boolean closing;
  private int closedCount;
  private int nextBurst;
  private int waiting;
  private long burstSent;
  private long burstFirst;
  private long burstLast;

  @SuppressWarnings("unchecked")
  private ProducerCreator(ActorContext<Command> context, TimerScheduler<Command> timers,
      ContractArgs args, List<Session> sessions, List<ActiveMQMessageProducer> producers,
      CompletableFuture<Records> result) {
    super(context);
    this.args = args;
    this.result = result;
    int n = sessions.size();
    this.senders = new ActorRef[n];
    this.closedSeqs = new LongArray[n];
    this.closedNs = new LongArray[n];
    this.sentCounters = new AtomicLong[n];
    for (int i = 0; i < n; i++) {
      sentCounters[i] = new AtomicLong();
      senders[i] = context.spawn(
          ProducerSender.create(i, sessions.get(i), producers.get(i), args, n, stopping,
              sentCounters[i], context.getSelf()),
          "sender-" + i, DispatcherSelector.fromConfig(Settings.BLOCKING_DISPATCHER));
    }
    timers.startTimerAtFixedRate(Tick.INSTANCE, Duration.ofSeconds(1));
    if (!args.gate) {
      // --bursts back to back, then finish
      pendingGo = args.bursts;
      context.getSelf().tell(Stop.INSTANCE);
    }
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessageEquals(Go.INSTANCE, this::onGo)
        .onMessageEquals(Stop.INSTANCE, this::onStop)
        .onMessageEquals(Abort.INSTANCE, this::onAbort)
        .onMessageEquals(Tick.INSTANCE, this::onTick)
        .onMessage(SenderDone.class, this::onSenderDone)
        .onMessage(SenderFailed.class, this::onSenderFailed)
        .onMessage(Closed.class, this::onClosed)
        .build();
  }

  private Behavior<Command> onGo() {
    if (!closing) {
      pendingGo++;
      next();
    }
    return this;
  }

  private Behavior<Command> onStop() {
    stopRequested = true;
    next();
    return this;
  }

  private Behavior<Command> onAbort() {
    stopping.set(true);
    close();
    return this;
  }

  private Behavior<Command> onTick() {
    if (!closing) {
      Out.line("{\"event\":\"tick\",\"id\":\"" + args.id + "\",\"t_ns\":" + EpochClock.nowNs()
          + ",\"sent\":" + sent() + "}");
    }
    return this;
  }

  private void next() {
    if (running || closing) {
      return;
    }
    if (pendingGo > 0) {
      pendingGo--;
      startBurst();
    } else if (stopRequested) {
      close();
    }
  }

  private void startBurst() {
    int b = nextBurst++;
    running = true;
    burstSent = 0;
    burstFirst = Long.MAX_VALUE;
    burstLast = 0;
    int n = senders.length;
    long count = args.count;
    long base = b * count;
    long end = base + count;
    waiting = (int) Math.min(count, n);
    long start = EpochClock.nowNs();
    for (long seq = base; seq < end; seq++) {
      long intended = args.rate > 0 ? start + (long) ((seq - base) * 1e9 / args.rate) : 0L;
      senders[(int) (seq % n)].tell(new ProducerSender.Send(seq, b, intended, seq >= end - n));
    }
  }

  private Behavior<Command> onSenderDone(SenderDone d) {
    burstSent += d.sent();
    burstFirst = Math.min(burstFirst, d.firstNs());
    burstLast = Math.max(burstLast, d.lastNs());
    if (--waiting == 0 && !closing) {
      Out.line("{\"event\":\"burst\",\"id\":\"" + args.id + "\",\"burst\":" + d.burst() + ",\"sent\":"
          + burstSent + ",\"first_ns\":" + burstFirst + ",\"last_ns\":" + burstLast + "}");
      running = false;
      next();
    }
    return this;
  }

  private Behavior<Command> onSenderFailed(SenderFailed f) {
    stopping.set(true);
    result.completeExceptionally(new IllegalStateException(f.error()));
    return Behaviors.stopped();
  }

  private void close() {
    if (closing) {
      return;
    }
    closing = true;
    for (ActorRef<ProducerSender.Command> s : senders) {
      s.tell(new ProducerSender.Close(getContext().getSelf()));
    }
  }

  private long sent() {
    long n = 0;
    for (AtomicLong c : sentCounters) {
      n += c.get();
    }
    return n;
  }

  private Behavior<Command> onClosed(Closed c) {
    closedSeqs[c.index()] = c.seqs();
    closedNs[c.index()] = c.sentNs();
    if (++closedCount == senders.length) {
      result.complete(new Records(closedSeqs, closedNs, sent()));
      return Behaviors.stopped();
    }
    return this;
  }
}
