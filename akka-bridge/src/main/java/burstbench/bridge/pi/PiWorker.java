package burstbench.bridge.pi;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

/** Computes one chunk of the Leibniz series per message and tells the collector its sum. */
final class PiWorker extends AbstractBehavior<PiWorker.Command> {

  sealed interface Command {}

  /** Terms {@code start .. start+elements-1}. */
  record Work(long start, long elements) implements Command {}

  static Behavior<Command> create(ActorRef<PiCollector.Command> collector) {
    return Behaviors.setup(ctx -> new PiWorker(ctx, collector));
  }

  private final ActorRef<PiCollector.Command> collector;

  private PiWorker(ActorContext<Command> context, ActorRef<PiCollector.Command> collector) {
    super(context);
    this.collector = collector;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(Work.class, this::onWork).build();
  }

  private Behavior<Command> onWork(Work w) {
    collector.tell(new PiCollector.Sum(PiActors.chunk(w.start(), w.elements())));
    return this;
  }
}
