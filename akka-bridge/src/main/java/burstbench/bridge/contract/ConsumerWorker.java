package burstbench.bridge.contract;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;

/**
 * A routee of {@link ContractConsumer}'s pool: hands each delivery (a record, or word of a
 * foreign message) to the {@link ConsumerCollector}, as the bridge's receive loop
 * ({@code loops.Recv}) hands on what its listener read. The listener has read and checked the
 * message already, while JMS's decoded properties were fresh in the cache: parsed here, one
 * actor hop later, they cost about half a microsecond a message more at 1 KiB on one CPU
 * (docs/perf.md).
 */
final class ConsumerWorker {
  private ConsumerWorker() {}

  static Behavior<ConsumerCollector.Delivery> create(ActorRef<ConsumerCollector.Command> collector) {
    return Behaviors.receiveMessage(d -> {
      collector.tell(d);
      return Behaviors.same();
    });
  }
}
