package burstbench.bridge.pi;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.Routers;
import burstbench.bridge.api.Api;

/**
 * One Pi run: creates the collector and a round-robin pool of workers, emits one work message per
 * chunk, and replies with the result once the collector has every sum. The timed span runs from
 * this actor's setup (components created) to the collector's last sum.
 */
final class PiCreator extends AbstractBehavior<PiCreator.Command> {

  sealed interface Command {}

  private record Emit() implements Command {}

  record Collected(double pi, long messages) implements Command {}

  static Behavior<Command> create(Api.PiSpec spec, ActorRef<Api.PiResult> replyTo) {
    return Behaviors.setup(ctx -> new PiCreator(ctx, spec, replyTo));
  }

  private final Api.PiSpec spec;
  private final ActorRef<Api.PiResult> replyTo;
  private final long t0;
  private final ActorRef<PiWorker.Command> workers;

  private PiCreator(ActorContext<Command> context, Api.PiSpec spec, ActorRef<Api.PiResult> replyTo) {
    super(context);
    this.t0 = System.nanoTime();
    this.spec = spec;
    this.replyTo = replyTo;
    ActorRef<PiCollector.Command> collector =
        context.spawn(PiCollector.create(spec.messages(), context.getSelf()), "collector");
    this.workers = context.spawn(
        Routers.pool(spec.workers(), PiWorker.create(collector)).withRoundRobinRouting(), "workers");
    context.getSelf().tell(new Emit());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Emit.class, this::onEmit)
        .onMessage(Collected.class, this::onCollected)
        .build();
  }

  private Behavior<Command> onEmit(Emit e) {
    long elements = spec.elements();
    for (long i = 0; i < spec.messages(); i++) {
      workers.tell(new PiWorker.Work(i * elements, elements));
    }
    return this;
  }

  private Behavior<Command> onCollected(Collected c) {
    double seconds = (System.nanoTime() - t0) / 1e9;
    double exact = PiActors.exact(spec.messages() * spec.elements());
    replyTo.tell(new Api.PiResult(c.pi(), exact, Math.abs(c.pi() - exact), Math.abs(exact - Math.PI),
        seconds, spec.workers(), spec.messages(), spec.elements()));
    return Behaviors.stopped();
  }
}
