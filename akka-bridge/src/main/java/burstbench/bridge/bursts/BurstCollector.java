package burstbench.bridge.bursts;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.TimerScheduler;
import burstbench.bridge.shared.EpochClock;
import java.time.Duration;
import java.util.BitSet;

/**
 * End of a burst run's pipeline: counts distinct and duplicate messages per burst, takes the
 * receive time, and tells the creator when a burst is complete or has gone idle (losses).
 */
final class BurstCollector extends AbstractBehavior<BurstCollector.Command> {

  sealed interface Command {}

  /** The creator starts emitting burst {@code burst}. */
  record Expect(int burst) implements Command {}

  record Received(long seq, int burst, boolean bodyOk) implements Command {}

  /** A message that is not this run's (leftover on a named queue, other producer). */
  record Foreign() implements Command {}

  private enum Tick implements Command { INSTANCE }

  static Behavior<Command> create(
      int count, int bursts, Duration idleTimeout, ActorRef<BurstRun.Command> creator) {
    return Behaviors.withTimers(timers -> Behaviors.setup(
        ctx -> new BurstCollector(ctx, timers, count, bursts, idleTimeout, creator)));
  }

  private final int count;
  private final int bursts;
  private final long idleNs;
  private final ActorRef<BurstRun.Command> creator;
  private final BitSet[] seen;
  private final long[] received;
  private final long[] duplicates;
  private final long[] badBodies;
  private final long[] lastRecvNs;
  private final boolean[] reported;
  private int current = -1;
  private long lastActivity;
  private long foreign;

  private BurstCollector(ActorContext<Command> context, TimerScheduler<Command> timers, int count,
      int bursts, Duration idleTimeout, ActorRef<BurstRun.Command> creator) {
    super(context);
    this.count = count;
    this.bursts = bursts;
    this.idleNs = idleTimeout.toNanos();
    this.creator = creator;
    this.seen = new BitSet[bursts];
    this.received = new long[bursts];
    this.duplicates = new long[bursts];
    this.badBodies = new long[bursts];
    this.lastRecvNs = new long[bursts];
    this.reported = new boolean[bursts];
    timers.startTimerWithFixedDelay(Tick.INSTANCE, Duration.ofMillis(200));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Expect.class, this::onExpect)
        .onMessage(Received.class, this::onReceived)
        .onMessage(Foreign.class, this::onForeign)
        .onMessageEquals(Tick.INSTANCE, this::onTick)
        .build();
  }

  private Behavior<Command> onExpect(Expect e) {
    current = e.burst();
    lastActivity = System.nanoTime();
    return this;
  }

  private Behavior<Command> onReceived(Received r) {
    long now = EpochClock.nowNs();
    int b = r.burst();
    long index = r.seq() - (long) b * count;
    if (b < 0 || b >= bursts || index < 0 || index >= count) {
      foreign++;
      return this;
    }
    BitSet s = seen[b];
    if (s == null) {
      s = seen[b] = new BitSet(count);
    }
    if (s.get((int) index)) {
      duplicates[b]++;
    } else {
      s.set((int) index);
      received[b]++;
      lastRecvNs[b] = now;
      if (!r.bodyOk()) {
        badBodies[b]++;
      }
    }
    lastActivity = System.nanoTime();
    if (received[b] == count) {
      report(b, true);
    }
    return this;
  }

  private Behavior<Command> onForeign(Foreign f) {
    foreign++;
    return this;
  }

  private Behavior<Command> onTick() {
    if (current >= 0 && !reported[current] && System.nanoTime() - lastActivity > idleNs) {
      report(current, false);
    }
    return this;
  }

  private void report(int b, boolean complete) {
    if (!reported[b]) {
      reported[b] = true;
      creator.tell(new BurstRun.BurstReceived(
          b, received[b], duplicates[b], badBodies[b], lastRecvNs[b], complete, foreign));
    }
  }
}
