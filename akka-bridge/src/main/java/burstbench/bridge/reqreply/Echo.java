package burstbench.bridge.reqreply;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;

/** The replying actor of ReqReply's actor-ask mode: answers each request with its payload. */
final class Echo extends AbstractBehavior<Echo.Command> {

  sealed interface Command {}

  record Request(byte[] payload, ActorRef<Reply> replyTo) implements Command {}

  record Reply(byte[] payload) {}

  static Behavior<Command> create() {
    return Behaviors.setup(Echo::new);
  }

  private Echo(ActorContext<Command> context) {
    super(context);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder().onMessage(Request.class, this::onRequest).build();
  }

  private Behavior<Command> onRequest(Request r) {
    r.replyTo().tell(new Reply(r.payload()));
    return this;
  }
}
