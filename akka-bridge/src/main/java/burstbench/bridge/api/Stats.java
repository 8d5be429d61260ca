package burstbench.bridge.api;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import burstbench.bridge.shared.EpochClock;

/** Counters behind GET /stats; every other actor and the routes tell it what happened. */
public final class Stats extends AbstractBehavior<Stats.Command> {

  public sealed interface Command {}

  public record BurstRecorded(long sent, long received, long lost, long duplicates) implements Command {}

  public record Ingested(long accepted, long relayed) implements Command {}

  public record PiComputed(long messages) implements Command {}

  public record Requested(int status) implements Command {}

  public record Get(ActorRef<Snapshot> replyTo) implements Command {}

  public record Snapshot(
      long startedNs, double uptimeSeconds, long requests, long clientErrors, long serverErrors,
      long burstRuns, long burstMessagesSent, long burstMessagesReceived, long burstMessagesLost,
      long burstDuplicates, long ingestBatches, long ingestedMessages, long relayedMessages,
      long piRuns, long piMessages) {}

  public static Behavior<Command> create() {
    return Behaviors.setup(Stats::new);
  }

  private final long startedNs = EpochClock.nowNs();
  private long requests;
  private long clientErrors;
  private long serverErrors;
  private long burstRuns;
  private long burstSent;
  private long burstReceived;
  private long burstLost;
  private long burstDuplicates;
  private long ingestBatches;
  private long ingested;
  private long relayed;
  private long piRuns;
  private long piMessages;

  private Stats(ActorContext<Command> context) {
    super(context);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(BurstRecorded.class, this::onBurstRecorded)
        .onMessage(Ingested.class, this::onIngested)
        .onMessage(PiComputed.class, this::onPiComputed)
        .onMessage(Requested.class, this::onRequested)
        .onMessage(Get.class, this::onGet)
        .build();
  }

  private Behavior<Command> onBurstRecorded(BurstRecorded m) {
    burstRuns++;
    burstSent += m.sent();
    burstReceived += m.received();
    burstLost += m.lost();
    burstDuplicates += m.duplicates();
    return this;
  }

  private Behavior<Command> onIngested(Ingested m) {
    ingestBatches++;
    ingested += m.accepted();
    relayed += m.relayed();
    return this;
  }

  private Behavior<Command> onPiComputed(PiComputed m) {
    piRuns++;
    piMessages += m.messages();
    return this;
  }

  private Behavior<Command> onRequested(Requested m) {
    requests++;
    if (m.status() >= 500) {
      serverErrors++;
    } else if (m.status() >= 400) {
      clientErrors++;
    }
    return this;
  }

  private Behavior<Command> onGet(Get m) {
    m.replyTo().tell(new Snapshot(startedNs, (EpochClock.nowNs() - startedNs) / 1e9, requests,
        clientErrors, serverErrors, burstRuns, burstSent, burstReceived, burstLost, burstDuplicates,
        ingestBatches, ingested, relayed, piRuns, piMessages));
    return this;
  }
}
