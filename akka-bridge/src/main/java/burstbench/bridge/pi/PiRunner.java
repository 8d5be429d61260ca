package burstbench.bridge.pi;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import burstbench.bridge.api.Api;

/** Starts one {@link PiCreator} per request. */
public final class PiRunner extends AbstractBehavior<PiRunner.Command> {

  public sealed interface Command {}

  public record Run(Api.PiSpec spec, ActorRef<Api.PiResult> replyTo) implements Command {}

  public static Behavior<Command> create() {
    return Behaviors.setup(PiRunner::new);
  }

  private long runs;

  private PiRunner(ActorContext<Command> context) {
    super(context);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(Run.class, this::onRun).build();
  }

  private Behavior<Command> onRun(Run r) {
    getContext().spawn(PiCreator.create(r.spec(), r.replyTo()), "pi-" + (++runs));
    return this;
  }
}
