package burstbench.bridge.contract;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import burstbench.bridge.shared.Body;

/**
 * A routee of {@link ContractConsumer}'s pool: parses the four contract properties (a message
 * without them, or whose values do not parse, is foreign), checks the body's counter and hands
 * the record (with bb_nonce and bb_crc32 as received, and the body's CRC-32 the listener
 * computed) to the collector.
 */
final class ConsumerWorker extends AbstractBehavior<ConsumerWorker.Command> {

  sealed interface Command {}

  /**
   * What the JMS listener took from one message, unparsed; {@code head}: the body's first bytes
   * as {@link Body#head} packs them.
   */
  record Raw(String producer, String seq, String burst, String sentNs, String nonce,
      String crcHeader, long head, int bytes, int crcBody, boolean redelivered, int dest, long recvNs)
      implements Command {}

  static Behavior<Command> create(ActorRef<ConsumerCollector.Command> collector) {
    return Behaviors.setup(ctx -> new ConsumerWorker(ctx, collector));
  }

  private final ActorRef<ConsumerCollector.Command> collector;

  private ConsumerWorker(ActorContext<Command> context, ActorRef<ConsumerCollector.Command> collector) {
    super(context);
    this.collector = collector;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(Raw.class, this::onRaw).build();
  }

  private Behavior<Command> onRaw(Raw r) {
    if (r.producer() == null || r.producer().isEmpty() || r.seq() == null || r.burst() == null
        || r.sentNs() == null) {
      collector.tell(ConsumerCollector.Foreign.INSTANCE);
      return this;
    }
    long seq;
    long burst;
    long sent;
    try {
      seq = Long.parseLong(r.seq().trim());
      burst = Long.parseLong(r.burst().trim());
      sent = Long.parseLong(r.sentNs().trim());
    } catch (NumberFormatException e) {
      collector.tell(ConsumerCollector.Foreign.INSTANCE);
      return this;
    }
    if (seq < 0 || burst < 0) {
      collector.tell(ConsumerCollector.Foreign.INSTANCE);
      return this;
    }
    String crcHeader = r.crcHeader();
    long crcValue = crcHeader == null ? ConsumerCollector.CRC_ABSENT : Body.parseHex8(crcHeader);
    if (crcValue >= 0) {
      crcHeader = null;   // kept as the number
    } else if (crcHeader != null) {
      crcValue = ConsumerCollector.CRC_RAW;   // kept as received
    }
    collector.tell(new ConsumerCollector.Record(r.producer(), seq, burst, sent, r.recvNs(), r.bytes(),
        Body.ok(r.head(), r.bytes(), seq), r.redelivered(), r.dest(), r.nonce(), crcValue, crcHeader,
        r.crcBody()));
    return this;
  }
}
