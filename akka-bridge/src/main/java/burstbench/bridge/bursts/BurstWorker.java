package burstbench.bridge.bursts;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import burstbench.bridge.shared.Body;

/** A routee of the actors route: checks the body's counter and hands the message to the collector. */
final class BurstWorker extends AbstractBehavior<BurstWorker.Command> {

  sealed interface Command {}

  record Deliver(BurstMessage message) implements Command {}

  static Behavior<Command> create(ActorRef<BurstCollector.Command> collector) {
    return Behaviors.setup(ctx -> new BurstWorker(ctx, collector));
  }

  private final ActorRef<BurstCollector.Command> collector;

  private BurstWorker(ActorContext<Command> context, ActorRef<BurstCollector.Command> collector) {
    super(context);
    this.collector = collector;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(Deliver.class, this::onDeliver).build();
  }

  private Behavior<Command> onDeliver(Deliver d) {
    BurstMessage m = d.message();
    collector.tell(new BurstCollector.Received(m.seq(), m.burst(),
        Body.ok(m.body(), m.body().length, m.seq())));
    return this;
  }
}
