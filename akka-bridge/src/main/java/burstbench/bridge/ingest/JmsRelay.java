package burstbench.bridge.ingest;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.PostStop;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import burstbench.bridge.api.Settings;
import burstbench.bridge.shared.EpochClock;
import burstbench.bridge.shared.Jms;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.activemq.ActiveMQMessageProducer;
import org.apache.activemq.AsyncCallback;

/**
 * Relays ingested batches to queues of one broker (runs on the blocking dispatcher). Each message
 * is a BytesMessage of the line's body with its headers as string properties; the batch is
 * answered once the broker has confirmed every send. Connects lazily and reconnects after a
 * failure.
 */
final class JmsRelay extends AbstractBehavior<JmsRelay.Command> {

  sealed interface Command {}

  record RelayBatch(String queue, List<BatchCollector.Processed> items,
      ActorRef<BatchCollector.Command> replyTo) implements Command {}

  static Behavior<Command> create(String url, Settings settings) {
    return Behaviors.setup(ctx -> new JmsRelay(ctx, url, settings));
  }

  private final String url;
  private final Settings settings;
  private Connection connection;
  private Session session;
  private ActiveMQMessageProducer producer;

  private JmsRelay(ActorContext<Command> context, String url, Settings settings) {
    super(context);
    this.url = url;
    this.settings = settings;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(RelayBatch.class, this::onRelayBatch)
        .onSignal(PostStop.class, s -> {
          reset();
          return this;
        })
        .build();
  }

  private Behavior<Command> onRelayBatch(RelayBatch b) {
    try {
      if (connection == null) {
        connection = Jms.connect(Jms.factory(url, null, null), settings.brokerConnectTimeout());
        connection.setExceptionListener(e -> getContext().getLog().warn("relay connection: {}", e.toString()));
        session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        producer = (ActiveMQMessageProducer) session.createProducer(null);
      }
      Queue queue = session.createQueue(b.queue());
      List<BatchCollector.Processed> items = b.items();
      CompletableFuture<Void> done = new CompletableFuture<>();
      AtomicInteger pending = new AtomicInteger(items.size());
      AsyncCallback callback = new AsyncCallback() {
        @Override
        public void onSuccess() {
          if (pending.decrementAndGet() == 0) {
            done.complete(null);
          }
        }

        @Override
        public void onException(JMSException e) {
          done.completeExceptionally(e);
        }
      };
      long first = 0;
      long last = 0;
      for (int i = 0; i < items.size(); i++) {
        BatchCollector.Processed p = items.get(i);
        BytesMessage m = session.createBytesMessage();
        m.writeBytes(p.body());
        for (Map.Entry<String, String> h : p.headers().entrySet()) {
          m.setStringProperty(h.getKey(), h.getValue());
        }
        if (p.id() != null) {
          m.setJMSCorrelationID(p.id());
        }
        last = EpochClock.nowNs();
        if (i == 0) {
          first = last;
        }
        producer.send(queue, m, DeliveryMode.NON_PERSISTENT, Message.DEFAULT_PRIORITY,
            Message.DEFAULT_TIME_TO_LIVE, callback);
      }
      if (items.isEmpty()) {
        done.complete(null);
      }
      done.get(settings.askTimeout().toMillis(), TimeUnit.MILLISECONDS);
      b.replyTo().tell(new BatchCollector.Relayed(items.size(), first, last));
    } catch (Jms.ConnectException | IllegalArgumentException e) {
      reset();
      b.replyTo().tell(new BatchCollector.RelayFailed(e.getMessage()));
    } catch (Exception e) {
      reset();
      Throwable cause = e.getCause() != null && !(e instanceof JMSException) ? e.getCause() : e;
      b.replyTo().tell(new BatchCollector.RelayFailed("relay to broker failed: " + Jms.describe(cause)));
    }
    return this;
  }

  private void reset() {
    Jms.closeQuietly(connection);
    connection = null;
    session = null;
    producer = null;
  }
}
