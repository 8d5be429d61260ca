package burstbench.bridge.contract;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import burstbench.bridge.shared.Body;
import burstbench.bridge.shared.EpochClock;
import burstbench.bridge.shared.Jms;
import burstbench.bridge.shared.LongArray;
import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.Session;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32;
import org.apache.activemq.ActiveMQMessageProducer;
import org.apache.activemq.AsyncCallback;

/**
 * One destination's JMS sender of {@link ContractProducer} (blocking dispatcher; owns one session).
 * Paces to the intended send time under --rate, stamps the contract properties (the four bench
 * headers, the run's bb_nonce and the body's bb_crc32), commits every
 * --tx-batch messages, and confirms the last message of each burst before telling the creator.
 */
final class ProducerSender extends AbstractBehavior<ProducerSender.Command> {

  sealed interface Command {}

  /** {@code intendedNs} is 0 without --rate; {@code last} = this sender's last of the burst. */
  record Send(long seq, int burst, long intendedNs, boolean last) implements Command {}

  record Close(ActorRef<ProducerCreator.Command> replyTo) implements Command {}

  static Behavior<Command> create(int index, Session session, ActiveMQMessageProducer producer,
      ContractArgs args, int senders, AtomicBoolean stopping, AtomicLong sentCounter,
      ActorRef<ProducerCreator.Command> creator) {
    return Behaviors.setup(ctx -> new ProducerSender(ctx, index, session, producer, args,
        recordCapacity(args, senders), stopping, sentCounter, creator));
  }

  /**
   * This sender's share of the messages asked for (--count x --bursts over the senders), at most
   * 2^20: its records are allocated once, not grown and copied while it sends (as the JMS
   * producer sizes its own).
   */
  static int recordCapacity(ContractArgs args, int senders) {
    return (int) Math.min(1 << 20, (args.count * args.bursts + senders - 1) / senders);
  }

  private final int index;
  private final Session session;
  private final ActiveMQMessageProducer producer;
  private final ContractArgs args;
  private final AtomicBoolean stopping;
  private final AtomicLong sentCounter;
  private final ActorRef<ProducerCreator.Command> creator;
  private final LongArray seqs;
  private final LongArray sentNs;
  private final byte[] template;
  private final CRC32 crc = new CRC32();
  private int inTx;
  private int burstOfText = -1;
  private String burstText;
  private long sentInBurst;
  private long firstNs;
  private long lastNs;
  private boolean failed;

  private ProducerSender(ActorContext<Command> context, int index, Session session,
      ActiveMQMessageProducer producer, ContractArgs args, int capacity, AtomicBoolean stopping,
      AtomicLong sentCounter, ActorRef<ProducerCreator.Command> creator) {
    super(context);
    this.index = index;
    this.session = session;
    this.producer = producer;
    this.args = args;
    this.stopping = stopping;
    this.sentCounter = sentCounter;
    this.creator = creator;
    this.template = Body.of(0, args.size);
    this.seqs = new LongArray(capacity);
    this.sentNs = new LongArray(capacity);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Send.class, this::onSend)
        .onMessage(Close.class, this::onClose)
        .build();
  }

  private Behavior<Command> onSend(Send s) {
    if (failed || stopping.get()) {
      return this;
    }
    if (s.intendedNs() > 0) {
      long wait;
      while ((wait = s.intendedNs() - EpochClock.nowNs()) > 0) {
        if (stopping.get()) {
          return this;
        }
        LockSupport.parkNanos(Math.min(wait, 50_000_000L));
      }
    }
    try {
      BytesMessage m = session.createBytesMessage();
      byte[] counter = Body.counter(s.seq());
      System.arraycopy(counter, 0, template, 0, Math.min(6, template.length));
      m.writeBytes(template);
      long now = EpochClock.nowNs();
      long stamp = s.intendedNs() > 0 ? s.intendedNs() : now;
      m.setStringProperty("bb_producer", args.id);
      m.setStringProperty("bb_seq", Long.toString(s.seq()));
      if (s.burst() != burstOfText) {
        burstOfText = s.burst();
        burstText = Integer.toString(burstOfText);
      }
      m.setStringProperty("bb_burst", burstText);
      m.setStringProperty("bb_sent_ns", Long.toString(stamp));
      m.setStringProperty("bb_nonce", args.nonce);
      m.setStringProperty("bb_crc32", Body.hex8(Body.crc32(crc, template, 0, template.length)));
      boolean transacted = args.txBatch > 0;
      if (s.last() && !transacted) {
        CompletableFuture<Void> confirmed = new CompletableFuture<>();
        producer.send(m, new AsyncCallback() {
          @Override
          public void onSuccess() {
            confirmed.complete(null);
          }

          @Override
          public void onException(JMSException e) {
            confirmed.completeExceptionally(e);
          }
        });
        confirmed.get(120, TimeUnit.SECONDS);
      } else {
        producer.send(m);
      }
      if (transacted && (++inTx >= args.txBatch || s.last())) {
        session.commit();
        inTx = 0;
      }
      seqs.add(s.seq());
      sentNs.add(stamp);
      sentCounter.lazySet(seqs.size());   // this sender's count; only the tick reads it
      if (sentInBurst++ == 0) {
        firstNs = now;
      }
      lastNs = now;
      if (s.last()) {
        creator.tell(new ProducerCreator.SenderDone(index, s.burst(), sentInBurst, firstNs, lastNs));
        sentInBurst = 0;
      }
    } catch (Exception e) {
      failed = true;
      Throwable cause = e.getCause() != null && !(e instanceof JMSException) ? e.getCause() : e;
      creator.tell(new ProducerCreator.SenderFailed("send failed: " + Jms.describe(cause)));
    }
    return this;
  }

  private Behavior<Command> onClose(Close c) {
    try {
      if (!failed && inTx > 0) {
        session.commit();
      }
      producer.close();
      session.close();
    } catch (JMSException e) {
      // the connection closes next; what was sent is recorded either way
    }
    c.replyTo().tell(new ProducerCreator.Closed(index, seqs, sentNs));
    return Behaviors.stopped();
  }
}
