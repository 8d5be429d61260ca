package burstbench.bridge.bursts;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import burstbench.bridge.api.Api;
import burstbench.bridge.api.Settings;
import burstbench.bridge.api.Stats;

/** Starts one {@link BurstRun} per POST /bursts (on the blocking dispatcher: it may talk JMS). */
public final class Bursts extends AbstractBehavior<Bursts.Command> {

  public sealed interface Command {}

  public record Run(Api.BurstSpec spec, ActorRef<BurstRun.Reply> replyTo) implements Command {}

  public static Behavior<Command> create(Settings settings, ActorRef<Stats.Command> stats) {
    return Behaviors.setup(ctx -> new Bursts(ctx, settings, stats));
  }

  private final Settings settings;
  private final ActorRef<Stats.Command> stats;
  private long runs;

  private Bursts(ActorContext<Command> context, Settings settings, ActorRef<Stats.Command> stats) {
    super(context);
    this.settings = settings;
    this.stats = stats;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(Run.class, this::onRun).build();
  }

  private Behavior<Command> onRun(Run r) {
    getContext().spawn(BurstRun.create(r.spec(), settings, stats, r.replyTo()), "burst-" + (++runs),
        DispatcherSelector.fromConfig(Settings.BLOCKING_DISPATCHER));
    return this;
  }
}
