package burstbench.bridge.ingest;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.Routers;
import burstbench.bridge.api.Api;
import burstbench.bridge.api.Settings;
import burstbench.bridge.api.Stats;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The POST /messages pipeline: each batch's messages go through a shared round-robin pool of
 * {@link IngestWorker}s into a per-batch {@link BatchCollector}, which answers, after relaying the
 * batch to a broker queue through a {@link JmsRelay} (one per broker url) when asked to.
 */
public final class Ingest extends AbstractBehavior<Ingest.Command> {

  public sealed interface Command {}

  /** {@code relayQueue} and {@code brokerUrl} are null when nothing is relayed. */
  public record Batch(List<Api.IngestMessage> messages, String relayQueue, String brokerUrl,
      ActorRef<Reply> replyTo) implements Command {}

  public sealed interface Reply {}

  public record Accepted(Api.IngestResult result) implements Reply {}

  public record Failed(String error) implements Reply {}

  public static Behavior<Command> create(Settings settings, ActorRef<Stats.Command> stats) {
    return Behaviors.setup(ctx -> new Ingest(ctx, settings, stats));
  }

  private final Settings settings;
  private final ActorRef<Stats.Command> stats;
  private final ActorRef<IngestWorker.Command> workers;
  private final Map<String, ActorRef<JmsRelay.Command>> relays = new HashMap<>();
  private long batches;

  private Ingest(ActorContext<Command> context, Settings settings, ActorRef<Stats.Command> stats) {
    super(context);
    this.settings = settings;
    this.stats = stats;
    this.workers = context.spawn(
        Routers.pool(Math.max(1, settings.ingestWorkers()), IngestWorker.create())
            .withRoundRobinRouting(),
        "workers");
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(Batch.class, this::onBatch).build();
  }

  private Behavior<Command> onBatch(Batch b) {
    long n = ++batches;
    ActorRef<JmsRelay.Command> relay = null;
    if (b.relayQueue() != null) {
      relay = relays.computeIfAbsent(b.brokerUrl(), url -> getContext().spawn(
          JmsRelay.create(url, settings), "relay-" + (relays.size() + 1),
          DispatcherSelector.fromConfig(Settings.BLOCKING_DISPATCHER)));
    }
    List<Api.IngestMessage> msgs = b.messages();
    ActorRef<BatchCollector.Command> collector = getContext().spawn(
        BatchCollector.create(msgs.size(), relay, b.relayQueue(), b.replyTo(), stats), "batch-" + n);
    for (int i = 0; i < msgs.size(); i++) {
      workers.tell(new IngestWorker.Process(i, msgs.get(i), collector));
    }
    return this;
  }
}
