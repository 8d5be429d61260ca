package burstbench.bridge.bursts;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.PostStop;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import burstbench.bridge.shared.EpochClock;
import burstbench.bridge.shared.Jms;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.activemq.ActiveMQMessageProducer;
import org.apache.activemq.AsyncCallback;

/**
 * The broker route's JMS producer (runs on the blocking dispatcher): sends each emitted message as
 * a contract BytesMessage, waits for the broker to confirm the last one of a burst, and tells the
 * creator how many went out and when.
 */
final class JmsBurstProducer extends AbstractBehavior<JmsBurstProducer.Command> {

  sealed interface Command {}

  record Send(BurstMessage message) implements Command {}

  static Behavior<Command> create(
      Connection connection, Queue queue, boolean persistent, ActorRef<BurstRun.Command> creator) {
    return Behaviors.setup(ctx -> new JmsBurstProducer(ctx, connection, queue, persistent, creator));
  }

  private final ActorRef<BurstRun.Command> creator;
  private final Session session;
  private final ActiveMQMessageProducer producer;
  private boolean failed;
  private long sentInBurst;
  private long firstNs;

  private JmsBurstProducer(ActorContext<Command> context, Connection connection, Queue queue,
      boolean persistent, ActorRef<BurstRun.Command> creator) throws JMSException {
    super(context);
    this.creator = creator;
    this.session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
    this.producer = (ActiveMQMessageProducer) session.createProducer(queue);
    producer.setDeliveryMode(persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
    producer.setDisableMessageTimestamp(true);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Send.class, this::onSend)
        .onSignal(PostStop.class, s -> onPostStop())
        .build();
  }

  private Behavior<Command> onSend(Send s) {
    if (failed) {
      return this;
    }
    BurstMessage m = s.message();
    try {
      BytesMessage msg = session.createBytesMessage();
      msg.writeBytes(m.body());
      long now = EpochClock.nowNs();
      msg.setStringProperty("bb_producer", m.producer());
      msg.setStringProperty("bb_seq", Long.toString(m.seq()));
      msg.setStringProperty("bb_burst", Integer.toString(m.burst()));
      msg.setStringProperty("bb_sent_ns", Long.toString(now));
      if (sentInBurst == 0) {
        firstNs = now;
      }
      if (m.last()) {
        CompletableFuture<Void> confirmed = new CompletableFuture<>();
        producer.send(msg, new AsyncCallback() {
          @Override
          public void onSuccess() {
            confirmed.complete(null);
          }

          @Override
          public void onException(JMSException e) {
            confirmed.completeExceptionally(e);
          }
        });
        confirmed.get(60, TimeUnit.SECONDS);
        sentInBurst++;
        creator.tell(new BurstRun.BurstSent(m.burst(), sentInBurst, firstNs, now));
        sentInBurst = 0;
      } else {
        producer.send(msg);
        sentInBurst++;
      }
    } catch (Exception e) {
      failed = true;
      Throwable cause = e.getCause() != null && !(e instanceof JMSException) ? e.getCause() : e;
      creator.tell(new BurstRun.SendFailed("send to broker failed: " + Jms.describe(cause)));
    }
    return this;
  }

  private Behavior<Command> onPostStop() {
    try {
      session.close();
    } catch (JMSException ignored) {
      // the connection is closed by the creator anyway
    }
    return this;
  }
}
