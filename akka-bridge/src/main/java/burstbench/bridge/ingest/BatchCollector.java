package burstbench.bridge.ingest;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import burstbench.bridge.api.Api;
import burstbench.bridge.api.Stats;
import burstbench.bridge.shared.EpochClock;
import java.util.Arrays;
import java.util.Map;

/** Collects one ingest batch in order, optionally has it relayed, then answers and stops. */
final class BatchCollector extends AbstractBehavior<BatchCollector.Command> {

  sealed interface Command {}

  record Processed(int index, String id, byte[] body, Map<String, String> headers,
      long processedNs) implements Command {}

  record Relayed(long count, long firstNs, long lastNs) implements Command {}

  record RelayFailed(String error) implements Command {}

  static Behavior<Command> create(int expected, ActorRef<JmsRelay.Command> relay,
      String queue, ActorRef<Ingest.Reply> replyTo, ActorRef<Stats.Command> stats) {
    return Behaviors.setup(ctx -> new BatchCollector(ctx, expected, relay, queue, replyTo, stats));
  }

  private final ActorRef<JmsRelay.Command> relay;
  private final String queue;
  private final ActorRef<Ingest.Reply> replyTo;
  private final ActorRef<Stats.Command> stats;
  private final Processed[] items;
  private final long startNs = EpochClock.nowNs();
  private int count;
  private long bytes;
  private long firstNs = Long.MAX_VALUE;
  private long lastNs;

  private BatchCollector(ActorContext<Command> context, int expected, ActorRef<JmsRelay.Command> relay,
      String queue, ActorRef<Ingest.Reply> replyTo, ActorRef<Stats.Command> stats) {
    super(context);
    this.relay = relay;
    this.queue = queue;
    this.replyTo = replyTo;
    this.stats = stats;
    this.items = new Processed[expected];
    if (expected == 0) {
      context.getSelf().tell(new Relayed(0, 0, 0));
    }
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Processed.class, this::onProcessed)
        .onMessage(Relayed.class, this::onRelayed)
        .onMessage(RelayFailed.class, this::onRelayFailed)
        .build();
  }

  private Behavior<Command> onProcessed(Processed p) {
    items[p.index()] = p;
    bytes += p.body().length;
    firstNs = Math.min(firstNs, p.processedNs());
    lastNs = Math.max(lastNs, p.processedNs());
    if (++count < items.length) {
      return this;
    }
    if (relay == null) {
      return answer(0, null);
    }
    relay.tell(new JmsRelay.RelayBatch(queue, Arrays.asList(items), getContext().getSelf()));
    return this;
  }

  private Behavior<Command> onRelayed(Relayed r) {
    if (r.count() > 0) {
      lastNs = Math.max(lastNs, r.lastNs());
    }
    return answer(r.count(), relay == null ? null : queue);
  }

  private Behavior<Command> answer(long relayed, String destination) {
    long first = count == 0 ? startNs : firstNs;
    long last = count == 0 ? startNs : lastNs;
    stats.tell(new Stats.Ingested(count, relayed));
    replyTo.tell(new Ingest.Accepted(new Api.IngestResult(count, relayed, destination, bytes,
        first, last, Math.max(0, last - startNs) / 1e9)));
    return Behaviors.stopped();
  }

  private Behavior<Command> onRelayFailed(RelayFailed f) {
    replyTo.tell(new Ingest.Failed(f.error()));
    return Behaviors.stopped();
  }
}
