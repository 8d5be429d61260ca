package burstbench.bridge.ingest;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import burstbench.bridge.api.Api;
import burstbench.bridge.shared.EpochClock;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** A routee of the ingest pipeline: turns one ingested line into the bytes and headers to relay. */
final class IngestWorker extends AbstractBehavior<IngestWorker.Command> {

  sealed interface Command {}

  record Process(int index, Api.IngestMessage message,
      ActorRef<BatchCollector.Command> collector) implements Command {}

  static Behavior<Command> create() {
    return Behaviors.setup(IngestWorker::new);
  }

  private IngestWorker(ActorContext<Command> context) {
    super(context);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(Process.class, this::onProcess).build();
  }

  private Behavior<Command> onProcess(Process p) {
    Api.IngestMessage m = p.message();
    byte[] body = m.body().getBytes(StandardCharsets.UTF_8);
    Map<String, String> headers = m.headers() == null ? Map.of() : m.headers();
    p.collector().tell(new BatchCollector.Processed(p.index(), m.id(), body, headers, EpochClock.nowNs()));
    return this;
  }
}
