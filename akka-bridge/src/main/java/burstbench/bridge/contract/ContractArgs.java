package burstbench.bridge.contract;

import burstbench.bridge.shared.Cli;
import burstbench.bridge.shared.Jms;
import burstbench.bridge.shared.Out;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * The options of clients/contract.md for one role, parsed with picocli. The option table is
 * clients/options.yaml: the harness checks every value against it before it starts a client;
 * this class checks types, minimums, --id and the URL (what the contract tests ask) and what
 * the bridge cannot do.
 */
public final class ContractArgs {

  public enum Role { PRODUCER, CONSUMER }

  /** Bad arguments: exit 2 with one error line. */
  public static final class Invalid extends Exception {
    public Invalid(String message) {
      super(message);
    }
  }

  public static final Set<String> ACK_MODES = Set.of("auto", "client", "client-individual", "dups-ok");
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

  /** One row per option: name, roles ("p", "c", "pc"), type ("" flag, "s", "i", "d"), label, help. */
  private static final String[][] OPTIONS = {
    {"url", "pc", "s", "URL", "tcp://HOST:PORT, ssl://..., nio://... or failover:(...)"},
    {"destinations", "pc", "s", "LIST", "comma-separated queue names"},
    {"count", "p", "i", "N", "messages per burst (default 1000)"},
    {"count", "c", "i", "N", "with --bursts B and no --gate, stop after N x B (0 = until stopped)"},
    {"size", "pc", "i", "BYTES", "body size (default 6; the consumer ignores it)"},
    {"bursts", "pc", "i", "B", "number of bursts (default 1)"},
    {"persistent", "p", "", "", "persistent delivery"},
    {"rate", "p", "d", "R", "messages/s (0 = as fast as possible)"},
    {"nonce", "p", "s", "NONCE", "run nonce (default 0), sent as property bb_nonce"},
    {"ack", "c", "s", "MODE", "auto | client | client-individual | dups-ok (default auto)"},
    {"prefetch", "c", "i", "N", "broker prefetch (default 1000)"},
    {"workers", "c", "i", "W", "actors in the recording pool (default 4)"},
    {"tx-batch", "pc", "i", "N", "commit every N messages (0 = no transactions)"},
    {"id", "pc", "s", "ID", "process id (default p1 / c1)"},
    {"records", "pc", "s", "PATH", "write raw records (TSV) here when stopping"},
    {"gate", "pc", "", "", "take go/stop commands from stdin"},
    {"user", "pc", "s", "U", "broker user"},
    {"password", "pc", "s", "P", "broker password (or the environment's BB_PASSWORD)"},
    {"ca", "pc", "s", "FILE", "PEM CA that signed the broker's TLS certificate"},
    {"cert", "pc", "s", "FILE", "PEM client certificate for mutual TLS (with --key)"},
    {"key", "pc", "s", "FILE", "the client certificate's PEM private key, unencrypted"},
    {"connect-timeout", "pc", "d", "S", "seconds to connect (default 10)"},
  };

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

  private static CommandLine commandLine(Role role) {
    boolean p = role == Role.PRODUCER;
    String r = p ? "p" : "c";
    CommandSpec spec = CommandSpec.create();
    spec.usageMessage().sortOptions(false).width(110).synopsisHeading("")
        .customSynopsis("usage: java -cp akka-bridge/target/classes:akka-bridge/target/lib/* burstbench.bridge."
            + (p ? "ContractProducer" : "ContractConsumer") + " --url URL --destinations Q1[,Q2...] [options]")
        .description("burstbench client (clients/contract.md), " + (p ? "producer" : "consumer")
            + ": Akka actors + ActiveMQ OpenWire JMS");
    for (String[] o : OPTIONS) {
      if (!o[1].contains(r)) {
        continue;
      }
      OptionSpec.Builder b = OptionSpec.builder("--" + o[0]).description(o[4]);
      switch (o[2]) {
        case "i" -> b.type(long.class).paramLabel(o[3]);
        case "d" -> b.type(double.class).paramLabel(o[3]);
        case "s" -> b.type(String.class).paramLabel(o[3]);
        default -> b.arity("0");
      }
      spec.addOption(b.build());
    }
    spec.addOption(OptionSpec.builder("--version").versionHelp(true).description("print versions as JSON").build());
    spec.addOption(OptionSpec.builder("--help").usageHelp(true).description("this text").build());
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
    a.url = r.matchedOptionValue("--url", null);
    String dests = r.matchedOptionValue("--destinations", null);
    if (a.url == null) {
      throw new Invalid("--url is required");
    }
    if (dests == null) {
      throw new Invalid("--destinations is required");
    }
    a.destinations.addAll(Arrays.asList(dests.split(",", -1)));
    a.count = atLeast(r, "count", producer ? 1 : 0, 1000);
    a.size = (int) atLeast(r, "size", 1, 6);
    a.bursts = (int) atLeast(r, "bursts", 1, 1);
    a.txBatch = (int) atLeast(r, "tx-batch", 0, 0);
    a.id = r.matchedOptionValue("--id", a.id);
    if (!ID.matcher(a.id).matches()) {
      throw new Invalid("--id must match [A-Za-z0-9_.-]{1,64} (got '" + a.id + "')");
    }
    a.records = r.matchedOptionValue("--records", null);
    a.gate = r.hasMatchedOption("--gate");
    a.user = r.matchedOptionValue("--user", null);
    a.password = r.matchedOptionValue("--password", null);
    if (a.password == null && a.user != null) {
      a.password = System.getenv("BB_PASSWORD"); // off the process list
    }
    a.ca = r.matchedOptionValue("--ca", null);
    a.cert = r.matchedOptionValue("--cert", null);
    a.key = r.matchedOptionValue("--key", null);
    if ((a.cert == null) != (a.key == null)) {
      throw new Invalid("--cert and --key must be given together");
    }
    a.connectTimeout = r.matchedOptionValue("--connect-timeout", 10.0);
    if (producer) {
      a.persistent = r.hasMatchedOption("--persistent");
      a.rate = r.matchedOptionValue("--rate", 0.0);
      a.nonce = r.matchedOptionValue("--nonce", "0");
    } else {
      a.ack = r.matchedOptionValue("--ack", "auto");
      if (!ACK_MODES.contains(a.ack)) {
        throw new Invalid("--ack must be one of auto, client, client-individual, dups-ok (got '" + a.ack + "')");
      }
      a.prefetch = (int) atLeast(r, "prefetch", 0, 1000);
      a.workers = (int) atLeast(r, "workers", 1, 4);
    }
    if (!Jms.isOpenWire(a.url)) {
      throw new Invalid("unsupported url " + a.url
          + ": the akka-bridge client speaks OpenWire only (tcp://, ssl://, nio://, failover:(...))");
    }
    return a;
  }

  /** An integer option's value (or its default), at least {@code min} and at most an int. */
  private static long atLeast(ParseResult r, String name, long min, long dflt) throws Invalid {
    long n = r.matchedOptionValue("--" + name, dflt);
    if (n < min || n > Integer.MAX_VALUE) {
      throw new Invalid("--" + name + " must be in " + min + ".." + Integer.MAX_VALUE + " (got " + n + ")");
    }
    return n;
  }
}
