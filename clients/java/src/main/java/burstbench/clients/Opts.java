package burstbench.clients;

import static burstbench.clients.Common.*;
import static burstbench.clients.Failover.failoverUrl;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * The parsed command line (clients/contract.md's options): {@link #parse} reads it against the
 * contract's table as this client's rows of clients/options.tsv give it, and checks what this
 * client cannot do; a bad one is one "error:" line and exit 2.
 */
public final class Opts implements Cloneable {
    public String role;
    public String url;
    public String[] destinations;
    public int count = 1000;
    public int size = 6;
    public int bursts = 1;
    public boolean persistent;
    public boolean asyncSend;
    public String ack = "auto";
    public int prefetch = 1000;
    public double rate;
    public double duration;   // seconds per burst instead of count messages; 0 = off
    public int txBatch;
    public String id;
    public String nonce = "0";
    public String records;
    public boolean gate;
    public String user, password;
    public String ca, cert, key;
    public double connectTimeout = 10;
    /** --connections: the process's N. */
    public int connections = 1;
    /** 0 for the process itself (N = 1), else this slot's number 1..N (see {@link #slot(int)}). */
    public int slot;
    /** The flags given (--persistent, --gate, a tuned entry's --flush-each...). */
    public final Set<String> flags = new HashSet<>();

    public boolean producer() { return role.equals("producer"); }
    public boolean failover() { return url.startsWith("failover:"); }
    /** A producer's messages a burst: --count, or with --duration those due before its end
     * (open loop), or without a rate a flood that the end cuts short. */
    public int burstCount() {
        return duration <= 0 ? count
            : rate > 0 ? (int) Math.max(1, Math.min(Integer.MAX_VALUE - 8, Math.ceil(duration * rate)))
            : Integer.MAX_VALUE;
    }

    public long connectTimeoutMs() { return Math.max(1L, Math.round(connectTimeout * 1000)); }

    /**
     * Slot {@code i} (1..N) of --connections N > 1: the process's options with the slot's
     * id, ID.i, and its records path, PATH with {id} replaced by that id.
     */
    public Opts slot(int i) {
        Opts s;
        try {
            s = (Opts) clone();   // (the destinations and flags are only read: shared)
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
        s.slot = i;
        s.id = id + "." + i;
        if (records != null) s.records = records.replace("{id}", s.id);
        return s;
    }

    /**
     * How many records a slot keeps room for before it starts, for the {@code want} it may
     * get: the N slots together at most 2^20, as one process (a slot's arrays grow when it
     * gets more), so that 10,000 slots do not each reserve a whole run's records.
     */
    public int slotCapacity(long want) {
        return (int) Math.min(want, Math.max(64, (1 << 20) / connections));
    }

    /**
     * Which program parses the command line: the client name its --version prints and whose
     * rows of clients/options.tsv it takes, and the main class its --help names.
     */
    public record Program(String client, String mainClass) {
        static Program stock(String role) {
            return new Program(CLIENT, role.equals("producer") ? Producer.class.getName() : Consumer.class.getName());
        }
    }

    /**
     * Parses with picocli over clients/options.tsv's rows for the program's client and role
     * ({@link Table}), each value checked against its row, then what this client cannot do;
     * prints help/version or "error: ..." and exits (0 / 2) itself.
     */
    public static Opts parse(String role, String[] args, Program program) {
        boolean p = role.equals("producer");
        List<Map<String, String>> rows = Table.rows(program.client(), role);
        CommandSpec spec = CommandSpec.create();
        spec.usageMessage().sortOptions(false).width(110).synopsisHeading("")
            .customSynopsis("usage: java -cp clients/java/target/classes:clients/java/target/lib/* "
                + program.mainClass() + " --url URL --destinations Q1[,Q2...] [options]")
            .description(p ? "Sends bursts of BytesMessages over OpenWire (activemq-client, JMS) to queues."
                           : "Receives messages over OpenWire (activemq-client, JMS) from queues, recording each.",
                         "Options take '--name value' or '--name=value'. See clients/contract.md.")
            .footer("stdout carries JSON lines only; logs go to stderr (slf4j-simple, level warn).",
                    "Exit codes: 0 done, 1 failed after start, 2 bad arguments, 3 cannot connect/authenticate.");
        for (Map<String, String> row : rows) {
            OptionSpec.Builder b = OptionSpec.builder("--" + row.get("option")).description(row.get("help"));
            switch (row.get("option")) {
                case "version" -> b.versionHelp(true);
                case "help" -> b.usageHelp(true);
                default -> {
                    if (row.get("type").equals("flag")) b.arity("0");
                    else b.type(String.class).paramLabel(row.get("type").toUpperCase(Locale.ROOT));
                }
            }
            spec.addOption(b.build());
        }
        CommandLine cl = new CommandLine(spec).setExpandAtFiles(false);
        ParseResult pr = null;
        try {
            pr = cl.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            usage(e.getMessage());
        }
        if (cl.isUsageHelpRequested()) { realOut().print(cl.getUsageMessage()); realOut().flush(); System.exit(0); }
        if (cl.isVersionHelpRequested()) { emitRaw(versionJson(program.client())); System.exit(0); }
        final ParseResult given = pr;
        Map<String, String> v = null;
        try {
            v = Table.values(rows, name -> given.matchedOptionValue("--" + name, null), name -> given.hasMatchedOption("--" + name));
        } catch (IllegalArgumentException e) {
            usage(e.getMessage());
        }
        Opts o = new Opts();
        o.role = role;
        for (Map<String, String> row : rows) {
            if (row.get("type").equals("flag") && v.containsKey(row.get("option"))) o.flags.add(row.get("option"));
        }
        o.url = v.get("url");
        o.count = Integer.parseInt(v.get("count"));
        o.size = Integer.parseInt(v.get("size"));
        o.bursts = Integer.parseInt(v.get("bursts"));
        o.txBatch = Integer.parseInt(v.get("tx-batch"));
        o.id = v.get("id");
        o.records = v.get("records");
        o.gate = o.flags.contains("gate");
        o.user = v.get("user");
        o.password = v.get("password");
        if (o.password == null && o.user != null) o.password = System.getenv("BB_PASSWORD"); // off the process list
        if (o.password != null && o.user == null) usage("--password needs --user");
        o.ca = v.get("ca");
        o.cert = v.get("cert");
        o.key = v.get("key");
        if ((o.cert == null) != (o.key == null)) usage("--cert and --key must be given together");
        for (String f : new String[] {o.ca, o.cert, o.key}) {
            if (f != null && !java.nio.file.Files.isReadable(java.nio.file.Path.of(f))) usage("cannot read " + f);
        }
        o.connectTimeout = Double.parseDouble(v.get("connect-timeout"));
        o.connections = Integer.parseInt(v.get("connections"));
        // N slots writing one file would overwrite each other: each slot's path has its id
        if (o.connections > 1 && o.records != null && !o.records.contains("{id}"))
            usage("--records must contain {id} with --connections > 1 (each slot writes PATH with {id} replaced by its id)");
        // a slot's id is stamped on its messages, and consumers take a longer bb_producer for foreign
        String lastId = o.id + "." + o.connections;
        if (o.connections > 1 && !ID.matcher(lastId).matches())
            usage("--id " + o.id + " with --connections " + o.connections + " gives slot ids over 64 characters (" + lastId + ")");
        if (p) {
            o.persistent = o.flags.contains("persistent");
            o.asyncSend = o.flags.contains("async-send");
            o.rate = Double.parseDouble(v.get("rate"));
            o.duration = Double.parseDouble(v.get("duration"));
            o.nonce = v.get("nonce");
        } else {
            o.ack = v.get("ack");
            o.prefetch = Integer.parseInt(v.get("prefetch"));  // (activemq-client's bound: the table's)
        }
        String failover = v.get("failover");
        if (failover != null) o.url = failoverUrl(o.url, failover);
        o.destinations = v.get("destinations").split(",", -1);
        return o;
    }
}
