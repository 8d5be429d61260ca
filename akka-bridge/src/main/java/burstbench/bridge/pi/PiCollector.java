package burstbench.bridge.pi;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

/** Adds up the chunk sums; after the expected number it tells the creator the total. */
final class PiCollector extends AbstractBehavior<PiCollector.Command> {

  sealed interface Command {}

  record Sum(double value) implements Command {}

  static Behavior<Command> create(long expected, ActorRef<PiCreator.Command> creator) {
    return Behaviors.setup(ctx -> new PiCollector(ctx, expected, creator));
  }

  private final long expected;
  private final ActorRef<PiCreator.Command> creator;
  private long received;
  private double pi;

  private PiCollector(ActorContext<Command> context, long expected, ActorRef<PiCreator.Command> creator) {
    super(context);
    this.expected = expected;
    this.creator = creator;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(Sum.class, this::onSum).build();
  }

  private Behavior<Command> onSum(Sum s) {
    pi += s.value();
    if (++received == expected) {
      creator.tell(new PiCreator.Collected(pi, received));
    }
    return this;
  }
}
