package burstbench.clients;

import static burstbench.clients.Common.*;
import static burstbench.clients.Failover.failoverUrl;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * The parsed command line (clients/contract.md's options): {@link #parse} reads it against the
 * contract's table (clients/options.yaml) and the program's own flags, and checks what this
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
    /** The program's own flags ({@link Program#flags}) that were given. */
    public final Set<String> flags = new HashSet<>();

    public boolean producer() { return role.equals("producer"); }
    public boolean failover() { return url.startsWith("failover:"); }
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
     * Which program parses the command line: the client name its --version prints, the main
     * class its --help names, and flags of its own beyond the contract's (clients/options.yaml
     * names them), each {name, roles ("p", "c" or "pc"), help}.
     */
    public record Program(String client, String mainClass, List<String[]> flags) {
        static Program stock(String role) {
            return new Program(CLIENT, role.equals("producer") ? Producer.class.getName() : Consumer.class.getName(),
                    List.of());
        }
    }

    /**
     * The contract's options (clients/options.yaml), one row each: name, roles ("p", "c", "pc"),
     * type ("" flag, "s" string, "i" int, "d" number), label, help. The harness checks every
     * value against that table; picocli parses these, {@link #parse} checks types, minimums,
     * --id and the URL (what the contract tests ask) and what this client cannot do.
     */
    private static final String[][] OPTIONS = {
        {"url", "pc", "s", "URL", "tcp://HOST:PORT, ssl://HOST:PORT, nio://HOST:PORT or failover:(URL,...)[?opts]"},
        {"destinations", "pc", "s", "LIST", "comma-separated queue names (required)"},
        {"count", "p", "i", "N", "messages per burst (default 1000)"},
        {"count", "c", "i", "N", "stop after N x bursts messages (default 1000; 0 = until stopped)"},
        {"size", "pc", "i", "BYTES", "body size (default 6; the consumer ignores it)"},
        {"bursts", "pc", "i", "B", "number of bursts (default 1)"},
        {"persistent", "p", "", "", "persistent delivery (sent synchronously unless --async-send)"},
        {"async-send", "p", "", "", "send persistent messages asynchronously too (useAsyncSend); the last"
            + " message of each burst is still confirmed before 'burst'"},
        {"rate", "p", "d", "R", "messages/s (0 = as fast as possible); bb_sent_ns = intended time"},
        {"duration", "p", "d", "S", "seconds per burst instead of --count messages (0 = off)"},
        {"nonce", "p", "s", "NONCE", "run nonce (default 0), sent as property bb_nonce"},
        {"ack", "c", "s", "MODE", "auto, client (cumulative, every ceil(prefetch/2)), client-individual, dups-ok"},
        {"prefetch", "c", "i", "N", "queue prefetch, 1..32767 (default 1000)"},
        {"tx-batch", "pc", "i", "N", "transacted session, commit every N messages (default 0 = none)"},
        {"id", "pc", "s", "ID", "process id [A-Za-z0-9_.-]{1,64} (default p1 / c1)"},
        {"records", "pc", "s", "PATH", "write the raw records (TSV) there when stopping"},
        {"gate", "pc", "", "", "read 'go' / 'stop' from stdin"},
        {"user", "pc", "s", "U", "broker user"},
        {"password", "pc", "s", "P", "broker password (or the environment's BB_PASSWORD)"},
        {"ca", "pc", "s", "FILE", "PEM CA that signed the broker's TLS certificate (ssl:// URLs)"},
        {"cert", "pc", "s", "FILE", "PEM client certificate for mutual TLS (with --key)"},
        {"key", "pc", "s", "FILE", "the client certificate's PEM private key, unencrypted"},
        {"connect-timeout", "pc", "d", "S", "give up connecting after S seconds, exit 3 (default 10)"},
        {"failover", "pc", "s", "LIST", "more addresses in --url's scheme: failover:(URL,LIST)?randomize=false&..."},
        {"connections", "pc", "i", "N", "open N connections in this process, each a slot of its own"
            + " (ids ID.1..ID.N; --records PATH with {id}; default 1)"},
    };

    /** Parses and validates; prints help/version or "error: ..." and exits (0 / 2) itself. */
    public static Opts parse(String role, String[] args, Program program) {
        boolean p = role.equals("producer");
        String r = role.substring(0, 1);
        CommandSpec spec = CommandSpec.create();
        spec.usageMessage().sortOptions(false).width(110).synopsisHeading("")
            .customSynopsis("usage: java -cp clients/java/target/classes:clients/java/target/lib/* "
                + program.mainClass() + " --url URL --destinations Q1[,Q2...] [options]")
            .description(p ? "Sends bursts of BytesMessages over OpenWire (activemq-client, JMS) to queues."
                           : "Receives messages over OpenWire (activemq-client, JMS) from queues, recording each.",
                         "Options take '--name value' or '--name=value'. See clients/contract.md.")
            .footer("stdout carries JSON lines only; logs go to stderr (slf4j-simple, level warn).",
                    "Exit codes: 0 done, 1 failed after start, 2 bad arguments, 3 cannot connect/authenticate.");
        for (String[] o : OPTIONS) {
            if (!o[1].contains(r)) continue;
            OptionSpec.Builder b = OptionSpec.builder("--" + o[0]).description(o[4]);
            switch (o[2]) {
                case "i" -> b.type(long.class).paramLabel(o[3]);
                case "d" -> b.type(double.class).paramLabel(o[3]);
                case "s" -> b.type(String.class).paramLabel(o[3]);
                default -> b.arity("0");
            }
            spec.addOption(b.build());
        }
        for (String[] f : program.flags()) {
            if (f[1].contains(r)) {
                spec.addOption(OptionSpec.builder("--" + f[0]).arity("0").description(f[2]).build());
            }
        }
        spec.addOption(OptionSpec.builder("--version").versionHelp(true)
            .description("print a JSON line naming client, library and runtime").build());
        spec.addOption(OptionSpec.builder("--help").usageHelp(true).description("this text").build());
        CommandLine cl = new CommandLine(spec).setExpandAtFiles(false);
        ParseResult pr = null;
        try {
            pr = cl.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            usage(e.getMessage());
        }
        if (cl.isUsageHelpRequested()) { realOut().print(cl.getUsageMessage()); realOut().flush(); System.exit(0); }
        if (cl.isVersionHelpRequested()) { emitRaw(versionJson(program.client())); System.exit(0); }
        Opts o = new Opts();
        o.role = role;
        o.url = pr.matchedOptionValue("--url", null);
        String destinations = pr.matchedOptionValue("--destinations", null);
        if (o.url == null) usage("--url is required");
        if (destinations == null) usage("--destinations is required");
        o.count = (int) atLeast(pr, "count", p ? 1 : 0, 1000);
        o.size = (int) atLeast(pr, "size", 1, 6);
        o.bursts = (int) atLeast(pr, "bursts", 1, 1);
        o.txBatch = (int) atLeast(pr, "tx-batch", 0, 0);
        o.id = pr.matchedOptionValue("--id", p ? "p1" : "c1");
        if (!ID.matcher(o.id).matches()) usage("--id must match [A-Za-z0-9_.-]{1,64} (got '" + o.id + "')");
        o.records = pr.matchedOptionValue("--records", null);
        o.gate = pr.hasMatchedOption("--gate");
        o.user = pr.matchedOptionValue("--user", null);
        o.password = pr.matchedOptionValue("--password", null);
        if (o.password == null && o.user != null) o.password = System.getenv("BB_PASSWORD"); // off the process list
        if (o.password != null && o.user == null) usage("--password needs --user");
        o.ca = pr.matchedOptionValue("--ca", null);
        if (o.ca != null && !java.nio.file.Files.isReadable(java.nio.file.Path.of(o.ca))) usage("--ca: cannot read " + o.ca);
        o.cert = pr.matchedOptionValue("--cert", null);
        o.key = pr.matchedOptionValue("--key", null);
        if ((o.cert == null) != (o.key == null)) usage("--cert and --key must be given together");
        for (String f : new String[] {o.cert, o.key}) {
            if (f != null && !java.nio.file.Files.isReadable(java.nio.file.Path.of(f))) usage("cannot read " + f);
        }
        o.connectTimeout = pr.matchedOptionValue("--connect-timeout", 10.0);
        o.connections = (int) atLeast(pr, "connections", 1, 1);
        if (o.connections > MAX_CONNECTIONS) usage("--connections must be in 1.." + MAX_CONNECTIONS + " (got " + o.connections + ")");
        // N slots writing one file would overwrite each other: each slot's path has its id
        if (o.connections > 1 && o.records != null && !o.records.contains("{id}"))
            usage("--records must contain {id} with --connections > 1 (each slot writes PATH with {id} replaced by its id)");
        // a slot's id is stamped on its messages, and consumers take a longer bb_producer for foreign
        String lastId = o.id + "." + o.connections;
        if (o.connections > 1 && !ID.matcher(lastId).matches())
            usage("--id " + o.id + " with --connections " + o.connections + " gives slot ids over 64 characters (" + lastId + ")");
        if (p) {
            o.persistent = pr.hasMatchedOption("--persistent");
            o.asyncSend = pr.hasMatchedOption("--async-send");
            o.rate = pr.matchedOptionValue("--rate", 0.0);
            o.duration = pr.matchedOptionValue("--duration", 0.0);
            o.nonce = pr.matchedOptionValue("--nonce", "0");
        } else {
            o.ack = pr.matchedOptionValue("--ack", "auto");
            if (!List.of(ACK_MODES).contains(o.ack)) usage("--ack must be one of auto, client, client-individual, dups-ok (got '" + o.ack + "')");
            // activemq-client refuses a prefetch of 0 for MessageListeners; its limit is a short
            o.prefetch = (int) atLeast(pr, "prefetch", 1, 1000);
            if (o.prefetch > Short.MAX_VALUE) usage("--prefetch must be 1.." + Short.MAX_VALUE + " for activemq-client (got " + o.prefetch + ")");
        }
        for (String[] f : program.flags()) if (pr.hasMatchedOption("--" + f[0])) o.flags.add(f[0]);
        checkUrl(o.url);
        String failover = pr.matchedOptionValue("--failover", null);
        if (failover != null) o.url = failoverUrl(o.url, failover);
        o.destinations = destinations.split(",", -1);
        return o;
    }

    /** options.yaml's bound of --connections. */
    static final int MAX_CONNECTIONS = 100_000;

    /** An integer option's value (or its default), at least {@code min} and at most an int. */
    private static long atLeast(ParseResult pr, String name, long min, long dflt) {
        long x = pr.matchedOptionValue("--" + name, dflt);
        if (x < min || x > Integer.MAX_VALUE) usage("--" + name + " must be in " + min + ".." + Integer.MAX_VALUE + " (got " + x + ")");
        return x;
    }

    static void checkUrl(String url) {
        String u = url.toLowerCase(Locale.ROOT);
        if (u.startsWith("failover:")) {
            if (!u.startsWith("failover:(") || url.indexOf(')') < 0)
                usage("failover URLs are failover:(URL,...)[?options] (got '" + url + "')");
            return;
        }
        if (!(u.startsWith("tcp://") || u.startsWith("ssl://") || u.startsWith("nio://")))
            usage("--url must be tcp://, ssl://, nio:// or failover:(...) for OpenWire (got '" + url + "')");
        try {
            URI uri = new URI(url);
            if (uri.getHost() == null || uri.getPort() <= 0) usage("--url needs HOST:PORT (got '" + url + "')");
        } catch (URISyntaxException e) {
            usage("--url is not a valid URI (" + e.getMessage() + ")");
        }
    }
}
