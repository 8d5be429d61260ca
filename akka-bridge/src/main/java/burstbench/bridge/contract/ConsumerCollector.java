package burstbench.bridge.contract;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.Routers;
import akka.actor.typed.javadsl.TimerScheduler;
import burstbench.bridge.shared.EpochClock;
import burstbench.bridge.shared.LongArray;
import burstbench.bridge.shared.Out;
import burstbench.clients.Names;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The guardian and collector of {@link ContractConsumer}: spawns the worker pool, keeps every
 * record in memory (columns), prints {@code tick} once a second, signals the stop once
 * --count x --bursts records are in (without --gate), and answers a drain with everything.
 */
final class ConsumerCollector extends AbstractBehavior<ConsumerCollector.Command> {

  sealed interface Command {}

  /** bb_crc32 absent, or not 8 lowercase hex digits (then kept as received in {@code crcRaw}). */
  static final long CRC_ABSENT = -1L;
  static final long CRC_RAW = -2L;

  /**
   * One bench message. {@code nonce}: bb_nonce or null; {@code crcHeader}: bb_crc32's value
   * (0..2^32-1), {@link #CRC_ABSENT} or {@link #CRC_RAW}; {@code crcBody}: the CRC-32 of the
   * body as received.
   */
  record Record(String producer, long seq, long burst, long sentNs, long recvNs, int bytes,
      boolean bodyOk, boolean redelivered, int dest, String nonce, long crcHeader, String crcRaw,
      int crcBody) implements Command {}

  enum Foreign implements Command { INSTANCE }

  /** Reply once {@code handedOff} messages have been processed. */
  record Drain(long handedOff, ActorRef<Snapshot> replyTo) implements Command {}

  /** The consumer printed {@code ready}: ticks may follow. */
  enum Started implements Command { INSTANCE }

  private enum Tick implements Command { INSTANCE }

  record Snapshot(List<String> producers, int[] producer, LongArray seq, LongArray burst,
      LongArray sentNs, LongArray recvNs, LongArray bytesFlags, List<String> nonces, int[] nonce,
      LongArray crcHeader, Map<Integer, String> rawCrc, LongArray crcBody, long received,
      long foreign, long redelivered) {}

  static Behavior<Command> create(String id, long target, int workers,
      CompletableFuture<ActorRef<ConsumerWorker.Command>> pool, CompletableFuture<String> stop) {
    return Behaviors.withTimers(timers -> Behaviors.setup(
        ctx -> new ConsumerCollector(ctx, timers, id, target, workers, pool, stop)));
  }

  private final String id;
  private final long target;
  private final CompletableFuture<String> stop;
  private final Names producers = new Names();
  private int[] producer;
  private final LongArray seq;
  private final LongArray burst;
  private final LongArray sentNs;
  private final LongArray recvNs;
  /** bytes << 20 | dest << 2 | redelivered << 1 | bodyOk. */
  private final LongArray bytesFlags;
  private final Names nonces = new Names();
  /** Per record: index into {@link #nonces}, -1 when bb_nonce was absent. */
  private int[] nonce;
  private final LongArray crcHeader;
  private final Map<Integer, String> rawCrc = new HashMap<>();
  private final LongArray crcBody;
  private long received;
  private long foreign;
  private long redelivered;
  private Drain drain;
  private boolean started;

  private ConsumerCollector(ActorContext<Command> context, TimerScheduler<Command> timers, String id,
      long target, int workers, CompletableFuture<ActorRef<ConsumerWorker.Command>> pool,
      CompletableFuture<String> stop) {
    super(context);
    this.id = id;
    this.target = target;
    this.stop = stop;
    // the records sized once for the messages expected (at most 2^20; 2^16 under a gate), as
    // the JMS consumer sizes its own, not grown and copied while messages arrive
    int cap = (int) Math.min(target > 0 ? target : 1 << 16, 1 << 20);
    producer = new int[cap];
    nonce = new int[cap];
    seq = new LongArray(cap);
    burst = new LongArray(cap);
    sentNs = new LongArray(cap);
    recvNs = new LongArray(cap);
    bytesFlags = new LongArray(cap);
    crcHeader = new LongArray(cap);
    crcBody = new LongArray(cap);
    pool.complete(context.spawn(
        Routers.pool(workers, ConsumerWorker.create(context.getSelf())).withRoundRobinRouting(),
        "workers"));
    timers.startTimerAtFixedRate(Tick.INSTANCE, Duration.ofSeconds(1));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Record.class, this::onRecord)
        .onMessageEquals(Foreign.INSTANCE, this::onForeign)
        .onMessage(Drain.class, this::onDrain)
        .onMessageEquals(Started.INSTANCE, () -> {
          started = true;
          return this;
        })
        .onMessageEquals(Tick.INSTANCE, this::onTick)
        .build();
  }

  private Behavior<Command> onRecord(Record r) {
    int n = seq.size();
    if (n == producer.length) {
      producer = java.util.Arrays.copyOf(producer, n * 2);
    }
    producer[n] = producers.of(r.producer());
    if (n == nonce.length) {
      nonce = java.util.Arrays.copyOf(nonce, n * 2);
    }
    nonce[n] = r.nonce() == null ? -1 : nonces.of(r.nonce());
    crcHeader.add(r.crcHeader());
    if (r.crcHeader() == CRC_RAW) {
      rawCrc.put(n, r.crcRaw());
    }
    crcBody.add(r.crcBody() & 0xFFFFFFFFL);
    seq.add(r.seq());
    burst.add(r.burst());
    sentNs.add(r.sentNs());
    recvNs.add(r.recvNs());
    bytesFlags.add(((long) r.bytes() << 20) | ((long) r.dest() << 2)
        | (r.redelivered() ? 2 : 0) | (r.bodyOk() ? 1 : 0));
    received++;
    if (r.redelivered()) {
      redelivered++;
    }
    if (target > 0 && received >= target) {
      stop.complete("count reached");
    }
    return checkDrain();
  }

  private Behavior<Command> onForeign() {
    foreign++;
    return checkDrain();
  }

  private Behavior<Command> onDrain(Drain d) {
    drain = d;
    return checkDrain();
  }

  private Behavior<Command> onTick() {
    if (started && drain == null) {
      Out.line("{\"event\":\"tick\",\"id\":\"" + id + "\",\"t_ns\":" + EpochClock.nowNs()
          + ",\"received\":" + received + "}");
    }
    return this;
  }

  private Behavior<Command> checkDrain() {
    if (drain != null && received + foreign >= drain.handedOff()) {
      drain.replyTo().tell(new Snapshot(producers.names, producer, seq, burst, sentNs, recvNs,
          bytesFlags, nonces.names, nonce, crcHeader, rawCrc, crcBody, received, foreign, redelivered));
      drain = null;
      return Behaviors.stopped();
    }
    return this;
  }
}
