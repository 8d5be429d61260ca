package burstbench.bridge.reqreply;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.AskPattern;
import burstbench.bridge.api.Api;
import burstbench.bridge.contract.ContractArgs;
import burstbench.bridge.shared.Cli;
import burstbench.bridge.shared.Jms;
import burstbench.bridge.shared.Out;
import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.DeliveryMode;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TemporaryQueue;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.activemq.ActiveMQConnection;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.command.ActiveMQQueue;
import org.springframework.jms.connection.CachingConnectionFactory;
import org.springframework.jms.connection.SingleConnectionFactory;
import org.springframework.jms.core.JmsTemplate;

/**
 * Blocking request/reply, one request at a time, in three modes:
 * <ul>
 *   <li>{@code temp-queue}: Spring's {@link JmsTemplate#sendAndReceive}, which creates a temporary
 *       reply queue (and a consumer on it) for every request and deletes it afterwards;</li>
 *   <li>{@code reused-queue}: one temporary reply queue for the whole run, replies matched by
 *       JMSCorrelationID;</li>
 *   <li>{@code actor-ask}: Akka's ask against a replying actor in the same ActorSystem.</li>
 * </ul>
 * The JMS responder (an echo listener on the request queue) runs in this process on its own
 * connection. Prints one JSON line and writes one latency (ns) per line to --records.
 */
public final class ReqReply {
  private ReqReply() {}

  private static final String USAGE =
      "usage: ReqReply --mode temp-queue|reused-queue|actor-ask [--url tcp://HOST:PORT]\n"
          + "                --payload BYTES --requests N [--warmup K] [--records PATH]\n"
          + "                [--queue NAME] [--spring-cf single|caching|plain] [--timeout S]\n"
          + "  --url is required for the JMS modes. --spring-cf (temp-queue only): the\n"
          + "  ConnectionFactory behind JmsTemplate: one shared connection (single, default),\n"
          + "  cached sessions too (caching), or a new connection per request (plain).\n"
          + "  Prints {mode, payload, requests, warmup, seconds, ops_per_s}; --records gets one\n"
          + "  latency in ns per measured request.";

  static final class Options {
    String mode;
    String url;
    int payload = -1;
    int requests = -1;
    int warmup;
    String records;
    String queue;
    String springCf = "single";
    double timeout = 30;
  }

  static Options parse(String[] argv) throws ContractArgs.Invalid {
    Options o = new Options();
    for (int i = 0; i < argv.length; i++) {
      String opt = argv[i];
      String v = null;
      int eq = opt.indexOf('=');
      if (opt.startsWith("--") && eq > 2) {
        v = opt.substring(eq + 1);
        opt = opt.substring(0, eq);
      }
      if (opt.equals("--help")) {
        Out.line(USAGE);
        System.exit(0);
      }
      if (!Arrays.asList("--mode", "--url", "--payload", "--requests", "--warmup", "--records",
          "--queue", "--spring-cf", "--timeout").contains(opt)) {
        throw new ContractArgs.Invalid("unknown option " + opt);
      }
      if (v == null) {
        if (i + 1 >= argv.length) {
          throw new ContractArgs.Invalid("missing value for " + opt);
        }
        v = argv[++i];
      }
      switch (opt) {
        case "--mode" -> {
          if (!Arrays.asList("temp-queue", "reused-queue", "actor-ask").contains(v)) {
            throw new ContractArgs.Invalid("--mode must be temp-queue, reused-queue or actor-ask");
          }
          o.mode = v;
        }
        case "--url" -> o.url = v;
        case "--payload" -> o.payload = (int) integer(opt, v, 0, 67_108_864);
        case "--requests" -> o.requests = (int) integer(opt, v, 1, Integer.MAX_VALUE);
        case "--warmup" -> o.warmup = (int) integer(opt, v, 0, Integer.MAX_VALUE);
        case "--records" -> o.records = v;
        case "--queue" -> {
          if (!Api.QUEUE_NAME.matcher(v).matches()) {
            throw new ContractArgs.Invalid("--queue must match [A-Za-z0-9_.-]{1,200}");
          }
          o.queue = v;
        }
        case "--spring-cf" -> {
          if (!Arrays.asList("single", "caching", "plain").contains(v)) {
            throw new ContractArgs.Invalid("--spring-cf must be single, caching or plain");
          }
          o.springCf = v;
        }
        default -> {
          try {
            o.timeout = Double.parseDouble(v);
          } catch (NumberFormatException e) {
            throw new ContractArgs.Invalid("--timeout needs a number");
          }
          if (!(o.timeout > 0)) {
            throw new ContractArgs.Invalid("--timeout must be > 0");
          }
        }
      }
    }
    if (o.mode == null) {
      throw new ContractArgs.Invalid("--mode is required");
    }
    if (o.payload < 0) {
      throw new ContractArgs.Invalid("--payload is required");
    }
    if (o.requests < 0) {
      throw new ContractArgs.Invalid("--requests is required");
    }
    if (!o.mode.equals("actor-ask")) {
      if (o.url == null) {
        throw new ContractArgs.Invalid("--url is required for mode " + o.mode);
      }
      if (!Jms.isOpenWire(o.url)) {
        throw new ContractArgs.Invalid("unsupported url " + o.url + " (OpenWire only: tcp://, ssl://, failover:(...))");
      }
    }
    return o;
  }

  private static long integer(String opt, String v, long min, long max) throws ContractArgs.Invalid {
    try {
      long n = Long.parseLong(v.trim());
      if (n < min || n > max) {
        throw new ContractArgs.Invalid(opt + " must be in " + min + ".." + max);
      }
      return n;
    } catch (NumberFormatException e) {
      throw new ContractArgs.Invalid(opt + " needs an integer, got '" + v + "'");
    }
  }

  /** One blocking round trip; returns the reply's payload length. */
  interface Requester extends AutoCloseable {
    int request(byte[] payload, long seq) throws Exception;

    @Override
    default void close() throws Exception {}
  }

  public static void main(String[] argv) throws Exception {
    Cli.quietLogs();
    Options o;
    try {
      o = parse(argv);
    } catch (ContractArgs.Invalid e) {
      Cli.fail(2, e.getMessage());
      return;
    }
    byte[] payload = new byte[o.payload];
    Arrays.fill(payload, (byte) 'x');
    long[] latencies = new long[o.requests];
    Duration timeout = Duration.ofMillis((long) (o.timeout * 1000));
    ActorSystem<Echo.Command> system = null;
    Connection responderConnection = null;
    Requester requester;
    String queueName = o.queue != null ? o.queue
        : "akka.reqreply." + o.mode + "." + UUID.randomUUID().toString().substring(0, 8);
    ActiveMQConnectionFactory amq = null;
    try {
      if (o.mode.equals("actor-ask")) {
        system = ActorSystem.create(Echo.create(), "reqreply", Cli.config());
        ActorSystem<Echo.Command> sys = system;
        requester = (p, seq) -> AskPattern.<Echo.Command, Echo.Reply>ask(
                sys, replyTo -> new Echo.Request(p, replyTo), timeout, sys.scheduler())
            .toCompletableFuture().get().payload().length;
      } else {
        amq = Jms.factory(o.url, null, null);
        responderConnection = Jms.connect(amq, timeout);
        startResponder(responderConnection, queueName);
        requester = o.mode.equals("temp-queue")
            ? springTemplate(amq, o, queueName)
            : reusedQueue(Jms.connect(amq, timeout), queueName, timeout);
      }
    } catch (Jms.ConnectException e) {
      Cli.fail(3, e.getMessage());
      return;
    } catch (IllegalArgumentException e) {
      Cli.fail(2, e.getMessage());
      return;
    }

    double seconds;
    try {
      for (int i = 0; i < o.warmup; i++) {
        check(requester.request(payload, i), o.payload);
      }
      long t0 = System.nanoTime();
      for (int i = 0; i < o.requests; i++) {
        long s = System.nanoTime();
        check(requester.request(payload, o.warmup + (long) i), o.payload);
        latencies[i] = System.nanoTime() - s;
      }
      seconds = (System.nanoTime() - t0) / 1e9;
      requester.close();
    } catch (Exception e) {
      Throwable c = e.getCause() != null && !(e instanceof JMSException) ? e.getCause() : e;
      Cli.fail(1, "request failed: " + (c instanceof JMSException j ? Jms.describe(j) : c.toString()));
      return;
    }
    if (responderConnection != null) {
      if (o.queue == null) {
        try {
          ((ActiveMQConnection) responderConnection).destroyDestination(new ActiveMQQueue(queueName));
        } catch (JMSException ignored) {
          // the responder's consumer is still open; the empty queue stays
        }
      }
      Jms.closeQuietly(responderConnection);
    }
    if (o.records != null) {
      try (BufferedWriter w = Files.newBufferedWriter(Path.of(o.records), StandardCharsets.UTF_8)) {
        for (long l : latencies) {
          w.write(Long.toString(l));
          w.write('\n');
        }
      } catch (IOException e) {
        Cli.fail(1, "could not write records to " + o.records + ": " + e.getMessage());
      }
    }
    StringBuilder line = new StringBuilder("{\"mode\":\"").append(o.mode).append('"');
    if (o.mode.equals("temp-queue")) {
      line.append(",\"spring_cf\":\"").append(o.springCf).append('"');
    }
    line.append(",\"payload\":").append(o.payload)
        .append(",\"requests\":").append(o.requests)
        .append(",\"warmup\":").append(o.warmup)
        .append(",\"seconds\":").append(seconds)
        .append(",\"ops_per_s\":").append(o.requests / seconds).append('}');
    Out.line(line.toString());
    if (system != null) {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    System.exit(0);
  }

  private static void check(int got, int expected) {
    if (got != expected) {
      throw new IllegalStateException("reply of " + got + " bytes, expected " + expected);
    }
  }

  private static int bodyLength(Message reply) throws JMSException {
    if (reply == null) {
      throw new IllegalStateException("no reply within the timeout");
    }
    return (int) ((BytesMessage) reply).getBodyLength();
  }

  /** The echo service: a JMS listener on the request queue answering to JMSReplyTo. */
  static void startResponder(Connection connection, String queueName) throws JMSException {
    Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
    MessageProducer replies = session.createProducer(null);
    replies.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
    MessageConsumer consumer = session.createConsumer(session.createQueue(queueName));
    consumer.setMessageListener(request -> {
      try {
        Destination replyTo = request.getJMSReplyTo();
        if (replyTo == null) {
          return;
        }
        BytesMessage in = (BytesMessage) request;
        byte[] body = new byte[(int) in.getBodyLength()];
        in.readBytes(body);
        BytesMessage out = session.createBytesMessage();
        out.writeBytes(body);
        String corr = request.getJMSCorrelationID();
        out.setJMSCorrelationID(corr != null ? corr : request.getJMSMessageID());
        replies.send(replyTo, out);
      } catch (JMSException e) {
        System.err.println("warning: responder: " + Jms.describe(e));
      }
    });
  }

  /** temp-queue: JmsTemplate.sendAndReceive, a new temporary reply queue per request. */
  static Requester springTemplate(ActiveMQConnectionFactory amq, Options o, String queueName) {
    ConnectionFactory cf = switch (o.springCf) {
      case "plain" -> amq;
      case "caching" -> new CachingConnectionFactory(amq);
      default -> new SingleConnectionFactory(amq);
    };
    JmsTemplate template = new JmsTemplate(cf);
    template.setReceiveTimeout((long) (o.timeout * 1000));
    template.setExplicitQosEnabled(true);
    template.setDeliveryPersistent(false);
    return new Requester() {
      @Override
      public int request(byte[] payload, long seq) throws Exception {
        return bodyLength(template.sendAndReceive(queueName, session -> {
          BytesMessage m = session.createBytesMessage();
          m.writeBytes(payload);
          return m;
        }));
      }

      @Override
      public void close() {
        if (cf instanceof SingleConnectionFactory s) {
          s.destroy();
        }
      }
    };
  }

  /** reused-queue: one temporary reply queue for the run, replies matched by correlation id. */
  static Requester reusedQueue(Connection connection, String queueName, Duration timeout) throws JMSException {
    Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
    Queue requests = session.createQueue(queueName);
    TemporaryQueue replyQueue = session.createTemporaryQueue();
    MessageConsumer replies = session.createConsumer(replyQueue);
    MessageProducer producer = session.createProducer(requests);
    producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
    long timeoutMs = timeout.toMillis();
    return new Requester() {
      @Override
      public int request(byte[] payload, long seq) throws Exception {
        BytesMessage m = session.createBytesMessage();
        m.writeBytes(payload);
        String corr = "r" + seq;
        m.setJMSCorrelationID(corr);
        m.setJMSReplyTo(replyQueue);
        producer.send(m);
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (true) {
          long left = (deadline - System.nanoTime()) / 1_000_000L;
          Message reply = left > 0 ? replies.receive(left) : null;
          if (reply == null) {
            throw new IllegalStateException("no reply within the timeout");
          }
          if (corr.equals(reply.getJMSCorrelationID())) {
            return bodyLength(reply);
          }
          // a stale reply (an earlier request that timed out): skip it
        }
      }

      @Override
      public void close() {
        Jms.closeQuietly(connection);
      }
    };
  }
}
