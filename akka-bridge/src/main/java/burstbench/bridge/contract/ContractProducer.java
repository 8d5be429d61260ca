package burstbench.bridge.contract;

import akka.actor.typed.ActorSystem;
import burstbench.bridge.shared.Cli;
import burstbench.bridge.shared.Jms;
import burstbench.bridge.shared.LongArray;
import burstbench.bridge.shared.Out;
import burstbench.bridge.shared.Signals;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Session;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQMessageProducer;

/**
 * burstbench contract producer (clients/contract.md) built on actors: a {@link ProducerCreator}
 * emits each burst into one {@link ProducerSender} actor per destination, each owning a JMS session
 * on one OpenWire connection.
 */
public final class ContractProducer {
  private ContractProducer() {}

  public static void main(String[] argv) throws Exception {
    Cli.quietLogs();
    ContractArgs a = ContractArgs.parseOrExit(argv, ContractArgs.Role.PRODUCER);
    ActiveMQConnectionFactory factory = a.factoryOrExit();
    Connection connection;
    try {
      connection = Jms.connect(factory, Duration.ofMillis((long) (a.connectTimeout * 1000)));
    } catch (Jms.ConnectException e) {
      Cli.fail(3, e.getMessage());
      return;
    }
    Connection conn = connection;
    boolean[] closing = {false};
    connection.setExceptionListener(e -> {
      if (!closing[0]) {
        Cli.fail(1, "connection to " + a.url + " failed: " + Jms.describe(e));
      }
    });
    List<Session> sessions = new ArrayList<>();
    List<ActiveMQMessageProducer> producers = new ArrayList<>();
    try {
      for (String d : a.destinations) {
        Session s = connection.createSession(a.txBatch > 0,
            a.txBatch > 0 ? Session.SESSION_TRANSACTED : Session.AUTO_ACKNOWLEDGE);
        ActiveMQMessageProducer p = (ActiveMQMessageProducer) s.createProducer(s.createQueue(d));
        p.setDeliveryMode(a.persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
        p.setDisableMessageTimestamp(true);
        sessions.add(s);
        producers.add(p);
      }
    } catch (JMSException e) {
      Cli.fail(1, "could not create a producer at " + a.url + ": " + Jms.describe(e));
      return;
    }
    Out.line("{\"event\":\"ready\",\"id\":\"" + a.id + "\",\"role\":\"producer\","
        + Jms.nodelayJson(connection, a.url) + "}");

    CompletableFuture<ProducerCreator.Records> result = new CompletableFuture<>();
    ActorSystem<ProducerCreator.Command> system = ActorSystem.create(
        ProducerCreator.create(a, sessions, producers, result), "producer", Cli.config());
    Signals.onTerm(() -> system.tell(ProducerCreator.Abort.INSTANCE));
    if (a.gate) {
      Thread gate = new Thread(() -> readGate(system), "gate");
      gate.setDaemon(true);
      gate.start();
    }

    ProducerCreator.Records records;
    try {
      records = result.get();
    } catch (ExecutionException e) {
      Cli.fail(1, e.getCause().getMessage());
      return;
    }
    closing[0] = true;
    Jms.closeQuietly(conn);
    if (a.records != null) {
      try {
        writeRecords(Path.of(a.records), a, records);
      } catch (IOException e) {
        Cli.fail(1, "could not write records to " + a.records + ": " + e.getMessage());
      }
    }
    Out.line("{\"event\":\"done\",\"id\":\"" + a.id + "\",\"sent\":" + records.sent() + "}");
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception ignored) {
      // exiting anyway
    }
    System.exit(0);
  }

  private static void readGate(ActorSystem<ProducerCreator.Command> creator) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        String cmd = line.trim();
        if (cmd.equals("go")) {
          creator.tell(ProducerCreator.Go.INSTANCE);
        } else if (cmd.equals("stop")) {
          break;
        } else if (!cmd.isEmpty()) {
          System.err.println("warning: unknown gate command '" + cmd + "' ignored");
        }
      }
    } catch (IOException e) {
      // end of input
    }
    creator.tell(ProducerCreator.Stop.INSTANCE);
  }

  /** Producer records in seq order: a k-way merge of the senders' (already ordered) lists. */
  static void writeRecords(Path path, ContractArgs a, ProducerCreator.Records r) throws IOException {
    int k = r.seqs().length;
    int[] pos = new int[k];
    try (BufferedWriter w = Files.newBufferedWriter(path, StandardCharsets.UTF_8)) {
      w.write("#producer\tseq\tburst\tsent_ns\n");
      StringBuilder sb = new StringBuilder(64);
      while (true) {
        int best = -1;
        long bestSeq = Long.MAX_VALUE;
        for (int i = 0; i < k; i++) {
          LongArray s = r.seqs()[i];
          if (s != null && pos[i] < s.size() && s.get(pos[i]) < bestSeq) {
            bestSeq = s.get(pos[i]);
            best = i;
          }
        }
        if (best < 0) {
          break;
        }
        long ns = r.sentNs()[best].get(pos[best]++);
        sb.setLength(0);
        sb.append(a.id).append('\t').append(bestSeq).append('\t').append(bestSeq / a.count)
            .append('\t').append(ns).append('\n');
        w.write(sb.toString());
      }
    }
  }
}
