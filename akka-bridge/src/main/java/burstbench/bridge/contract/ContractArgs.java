package burstbench.bridge.contract;

import burstbench.bridge.shared.Cli;
import burstbench.bridge.shared.Jms;
import burstbench.bridge.shared.Out;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** The options of clients/contract.md for one role, parsed strictly. */
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
  private static final Pattern NONCE = Pattern.compile("[A-Za-z0-9]{1,32}");
  private static final Pattern QUEUE = Pattern.compile("[^\\s,/*>]{1,200}");

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
  public double connectTimeout = 10;
  public int workers = 4;
  public boolean version;
  public boolean help;

  private ContractArgs(Role role) {
    this.role = role;
    this.id = role == Role.PRODUCER ? "p1" : "c1";
  }

  public static String usage(Role role) {
    boolean p = role == Role.PRODUCER;
    String main = p ? "ContractProducer" : "ContractConsumer";
    return "usage: java -cp akka-bridge/target/classes:akka-bridge/target/lib/* burstbench.bridge." + main
        + " --url URL --destinations Q1[,Q2...] [options]\n"
        + "  burstbench client (clients/contract.md), " + (p ? "producer" : "consumer")
        + ": Akka actors + ActiveMQ OpenWire JMS\n"
        + "  --url URL               tcp://HOST:PORT, ssl://..., nio://... or failover:(...)\n"
        + "  --destinations LIST     comma-separated queue names\n"
        + (p ? "  --count N               messages per burst (default 1000)\n"
             : "  --count N               with --bursts B and no --gate, stop after N x B (0 = until stopped)\n")
        + "  --size BYTES            body size 1..67108864 (default 6)" + (p ? "" : "; ignored") + "\n"
        + "  --bursts B              number of bursts (default 1)\n"
        + (p ? "  --persistent            persistent delivery\n"
             + "  --rate R                messages/s (0 = as fast as possible)\n"
             : "  --ack MODE              auto | client | client-individual | dups-ok (default auto)\n"
             + "  --prefetch N            broker prefetch (default 1000)\n"
             + "  --workers W             actors in the recording pool (default 4)\n")
        + "  --tx-batch N            commit every N messages (0 = no transactions)\n"
        + "  --id ID                 process id (default " + (p ? "p1" : "c1") + ")\n"
        + (p ? "  --nonce NONCE           run nonce [A-Za-z0-9]{1,32} (default 0), sent as property bb_nonce;\n"
             + "                          every message also carries bb_crc32, the CRC-32 of its body (8 hex)\n"
             : "")
        + "  --records PATH          write raw records (TSV) here when stopping\n"
        + "  --gate                  take go/stop commands from stdin\n"
        + "  --user U --password P   broker credentials\n"
        + "  --ca FILE               PEM CA that signed the broker's TLS certificate\n"
        + "  --connect-timeout S     seconds to connect (default 10)\n"
        + "  --version | --help";
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
      return Jms.factory(url, user, password, ca);
    } catch (IllegalArgumentException e) {
      Cli.fail(2, e.getMessage());
      return null;
    }
  }

  public static ContractArgs parse(String[] argv, Role role) throws Invalid {
    ContractArgs a = new ContractArgs(role);
    boolean producer = role == Role.PRODUCER;
    Set<String> flags = new HashSet<>(Set.of("--gate", "--version", "--help"));
    Set<String> valued = new HashSet<>(Set.of("--url", "--destinations", "--count", "--size",
        "--bursts", "--tx-batch", "--id", "--records", "--user", "--password", "--ca", "--connect-timeout"));
    if (producer) {
      flags.add("--persistent");
      valued.add("--rate");
      valued.add("--nonce");
    } else {
      valued.addAll(Set.of("--ack", "--prefetch", "--workers"));
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < argv.length; i++) {
      String opt = argv[i];
      String value = null;
      int eq = opt.indexOf('=');
      if (opt.startsWith("--") && eq > 2) {
        value = opt.substring(eq + 1);
        opt = opt.substring(0, eq);
      }
      if (flags.contains(opt)) {
        if (value != null) {
          throw new Invalid(opt + " takes no value");
        }
        switch (opt) {
          case "--gate" -> a.gate = true;
          case "--version" -> a.version = true;
          case "--help" -> a.help = true;
          default -> a.persistent = true;
        }
        continue;
      }
      if (!valued.contains(opt)) {
        throw new Invalid("unknown option " + opt + " for the " + role.name().toLowerCase() + " (see --help)");
      }
      if (value == null) {
        if (i + 1 >= argv.length) {
          throw new Invalid("missing value for " + opt);
        }
        value = argv[++i];
      }
      if (!seen.add(opt)) {
        throw new Invalid(opt + " given twice");
      }
      switch (opt) {
        case "--url" -> a.url = value;
        case "--destinations" -> {
          for (String d : value.split(",", -1)) {
            if (!QUEUE.matcher(d).matches()) {
              throw new Invalid("--destinations: bad queue name '" + d + "'");
            }
            a.destinations.add(d);
          }
        }
        case "--count" -> a.count = integer(opt, value, producer ? 1 : 0, Integer.MAX_VALUE);
        case "--size" -> a.size = (int) integer(opt, value, 1, 67_108_864);
        case "--bursts" -> a.bursts = (int) integer(opt, value, 1, Integer.MAX_VALUE);
        case "--tx-batch" -> a.txBatch = (int) integer(opt, value, 0, Integer.MAX_VALUE);
        case "--prefetch" -> a.prefetch = (int) integer(opt, value, 0, 32767 * 64);
        case "--workers" -> a.workers = (int) integer(opt, value, 1, 1024);
        case "--rate" -> a.rate = number(opt, value, 0, 1e9);
        case "--connect-timeout" -> {
          a.connectTimeout = number(opt, value, 0, 86400);
          if (a.connectTimeout <= 0) {
            throw new Invalid("--connect-timeout must be > 0");
          }
        }
        case "--ack" -> {
          if (!ACK_MODES.contains(value)) {
            throw new Invalid("--ack must be one of auto, client, client-individual, dups-ok (got '" + value + "')");
          }
          a.ack = value;
        }
        case "--id" -> {
          if (!ID.matcher(value).matches()) {
            throw new Invalid("--id must match [A-Za-z0-9_.-]{1,64}");
          }
          a.id = value;
        }
        case "--nonce" -> {
          if (!NONCE.matcher(value).matches()) {
            throw new Invalid("--nonce must match [A-Za-z0-9]{1,32} (got '" + value + "')");
          }
          a.nonce = value;
        }
        case "--records" -> {
          if (value.isEmpty()) {
            throw new Invalid("--records needs a path");
          }
          a.records = value;
        }
        case "--user" -> a.user = value;
        case "--password" -> a.password = value;
        case "--ca" -> {
          if (!java.nio.file.Files.isReadable(java.nio.file.Path.of(value))) {
            throw new Invalid("--ca: cannot read " + value);
          }
          a.ca = value;
        }
        default -> throw new Invalid("unknown option " + opt);
      }
    }
    if (a.help || a.version) {
      return a;
    }
    if (a.url == null) {
      throw new Invalid("--url is required");
    }
    if (a.destinations.isEmpty()) {
      throw new Invalid("--destinations is required");
    }
    if (!Jms.isOpenWire(a.url)) {
      throw new Invalid("unsupported url " + a.url
          + ": the akka-bridge client speaks OpenWire only (tcp://, ssl://, nio://, failover:(...))");
    }
    return a;
  }

  private static long integer(String opt, String v, long min, long max) throws Invalid {
    long n;
    try {
      n = Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new Invalid(opt + " needs an integer, got '" + v + "'");
    }
    if (n < min || n > max) {
      throw new Invalid(opt + " must be in " + min + ".." + max + " (got " + n + ")");
    }
    return n;
  }

  private static double number(String opt, String v, double min, double max) throws Invalid {
    double n;
    try {
      n = Double.parseDouble(v.trim());
    } catch (NumberFormatException e) {
      throw new Invalid(opt + " needs a number, got '" + v + "'");
    }
    if (!(n >= min && n <= max)) {
      throw new Invalid(opt + " must be in " + min + ".." + max + " (got " + v + ")");
    }
    return n;
  }
}
