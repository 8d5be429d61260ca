package burstbench.bridge.contract;

import burstbench.bridge.shared.Cli;
import burstbench.bridge.shared.Jms;
import burstbench.bridge.shared.Out;
import burstbench.clients.Table;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * The options of clients/contract.md for one role, parsed with picocli over this bridge's rows
 * of clients/options.tsv (clients/options.yaml resolved per client, which the harness checks
 * every value against too), each value checked against its row as the JMS client checks its
 * own (burstbench.clients.Table).
 */
public final class ContractArgs {

  public enum Role { PRODUCER, CONSUMER }

  /** Bad arguments: exit 2 with one error line. */
  public static final class Invalid extends Exception {
    public Invalid(String message) {
      super(message);
    }
  }

  public final Role role;
  public String url;
  public List<String> destinations = new ArrayList<>();
  public long count = 1000;
  public int size = 6;
  public int bursts = 1;
  public boolean persistent;
  public String ack = "auto";
  public int prefetch = 1000;
  public double rate;
  public int txBatch;
  public String id;
  /** Producer: the run nonce every message carries as bb_nonce. */
  public String nonce = "0";
  public String records;
  public boolean gate;
  public String user;
  public String password;
  public String ca;
  public String cert;
  public String key;
  public double connectTimeout = 10;
  public int workers = 4;
  public boolean version;
  public boolean help;

  private ContractArgs(Role role) {
    this.role = role;
    this.id = role == Role.PRODUCER ? "p1" : "c1";
  }

  /** clients/options.tsv's rows for this bridge and {@code role} (burstbench.clients.Table). */
  private static List<Map<String, String>> rows(Role role) {
    return Table.rows(Cli.CLIENT, role == Role.PRODUCER ? "producer" : "consumer");
  }

  private static CommandLine commandLine(Role role) {
    boolean p = role == Role.PRODUCER;
    CommandSpec spec = CommandSpec.create();
    spec.usageMessage().sortOptions(false).width(110).synopsisHeading("")
        .customSynopsis("usage: java -cp akka-bridge/target/classes:akka-bridge/target/lib/* burstbench.bridge."
            + (p ? "ContractProducer" : "ContractConsumer") + " --url URL --destinations Q1[,Q2...] [options]")
        .description("burstbench client (clients/contract.md), " + (p ? "producer" : "consumer")
            + ": Akka actors + ActiveMQ OpenWire JMS");
    for (Map<String, String> row : rows(role)) {
      OptionSpec.Builder b = OptionSpec.builder("--" + row.get("option")).description(row.get("help"));
      switch (row.get("option")) {
        case "version" -> b.versionHelp(true);
        case "help" -> b.usageHelp(true);
        default -> {
          if (row.get("type").equals("flag")) {
            b.arity("0");
          } else {
            b.type(String.class).paramLabel(row.get("type").toUpperCase(Locale.ROOT));
          }
        }
      }
      spec.addOption(b.build());
    }
    return new CommandLine(spec).setExpandAtFiles(false);
  }

  public static String usage(Role role) {
    return commandLine(role).getUsageMessage().stripTrailing();
  }

  /** Parses argv for a contract client: --help and --version answer and exit 0, bad input exits 2. */
  public static ContractArgs parseOrExit(String[] argv, Role role) {
    ContractArgs a = null;
    try {
      a = parse(argv, role);
    } catch (Invalid e) {
      Cli.fail(2, e.getMessage());
    }
    if (a.help) {
      Out.line(usage(role));
      System.exit(0);
    }
    if (a.version) {
      Out.line(Cli.versionLine());
      System.exit(0);
    }
    return a;
  }

  /** The broker's connection factory for these arguments; exit 2 when the URL or CA will not do. */
  public org.apache.activemq.ActiveMQConnectionFactory factoryOrExit() {
    try {
      return Jms.factory(url, user, password, ca, cert, key);
    } catch (IllegalArgumentException e) {
      Cli.fail(2, e.getMessage());
      return null;
    }
  }

  /** Parses {@code argv} against the table's rows, each value checked against its row (Invalid: one line). */
  public static ContractArgs parse(String[] argv, Role role) throws Invalid {
    ContractArgs a = new ContractArgs(role);
    boolean producer = role == Role.PRODUCER;
    CommandLine cl = commandLine(role);
    ParseResult r;
    try {
      r = cl.parseArgs(argv);
    } catch (CommandLine.ParameterException e) {
      throw new Invalid(e.getMessage().replace('\n', ' '));
    }
    a.help = cl.isUsageHelpRequested();
    a.version = cl.isVersionHelpRequested();
    if (a.help || a.version) {
      return a;
    }
    Map<String, String> v;
    try {
      v = Table.values(rows(role), name -> r.matchedOptionValue("--" + name, null), name -> r.hasMatchedOption("--" + name));
    } catch (IllegalArgumentException e) {
      throw new Invalid(e.getMessage());
    }
    a.url = v.get("url");
    a.destinations.addAll(Arrays.asList(v.get("destinations").split(",", -1)));
    a.count = Long.parseLong(v.get("count"));
    a.size = Integer.parseInt(v.get("size"));
    a.bursts = Integer.parseInt(v.get("bursts"));
    a.txBatch = Integer.parseInt(v.get("tx-batch"));
    a.id = v.get("id");
    a.records = v.get("records");
    a.gate = v.get("gate") != null;
    a.user = v.get("user");
    a.password = v.get("password");
    if (a.password == null && a.user != null) {
      a.password = System.getenv("BB_PASSWORD"); // off the process list
    }
    a.ca = v.get("ca");
    a.cert = v.get("cert");
    a.key = v.get("key");
    if ((a.cert == null) != (a.key == null)) {
      throw new Invalid("--cert and --key must be given together");
    }
    a.connectTimeout = Double.parseDouble(v.get("connect-timeout"));
    if (producer) {
      a.persistent = v.get("persistent") != null;
      a.rate = Double.parseDouble(v.get("rate"));
      a.nonce = v.get("nonce");
    } else {
      a.ack = v.get("ack");
      a.prefetch = Integer.parseInt(v.get("prefetch"));
      a.workers = Integer.parseInt(v.get("workers"));
    }
    return a;
  }
}
