package burstbench.clients;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.jms.Connection;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;
import jakarta.jms.JMSSecurityException;

import org.apache.activemq.ActiveMQConnection;
import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * What the producer and the consumer share: options (clients/contract.md), JSON lines on
 * stdout, the clock, the message body, connecting within --connect-timeout, and the one
 * way to stop (normal end, stdin "stop"/EOF, SIGTERM, or an error exit).
 */
public final class Common {
    private Common() {}

    public static final String CLIENT = "openwire-jms";
    static final String LIBRARY_VERSION = "6.1.7";
    public static final Pattern ID = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    static final String[] ACK_MODES = {"auto", "client", "client-individual", "dups-ok"};
    public static final String P_PRODUCER = "bb_producer", P_SEQ = "bb_seq", P_BURST = "bb_burst", P_SENT = "bb_sent_ns";
    /** The run nonce (--nonce) and the CRC-32 of the exact body bytes, 8 lowercase hex digits. */
    public static final String P_NONCE = "bb_nonce", P_CRC = "bb_crc32";

    // ------------------------------------------------------------------ options

    /** The parsed command line (clients/contract.md's options). */
    public static final class Opts implements Cloneable {
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

    /**
     * --failover: activemq-client's own failover transport over --url then the list, in that
     * order, retrying every 0.1 s growing to 1 s (its documented options); {@link #connectUrl}
     * adds {@code timeout} from --connect-timeout.
     */
    static String failoverUrl(String url, String list) {
        if (url.toLowerCase(Locale.ROOT).startsWith("failover:"))
            usage("--failover with a failover: --url: give the plain addresses (got '" + url + "')");
        StringBuilder all = new StringBuilder(url);
        for (String u : list.split(",", -1)) {
            checkUrl(u);
            if (u.toLowerCase(Locale.ROOT).startsWith("failover:") || !u.regionMatches(true, 0, url, 0, url.indexOf(':')))
                usage("--failover addresses must use --url's scheme (got '" + u + "')");
            all.append(',').append(u);
        }
        return "failover:(" + all + ")?randomize=false&initialReconnectDelay=100&maxReconnectDelay=1000";
    }

    private static void checkUrl(String url) {
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

    private static String fmt(double d) { return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d); }

    public static void usage(String msg) {
        System.err.println("error: " + msg.replace('\n', ' '));
        System.err.flush();
        System.exit(2);
    }

    static String versionJson() {
        return versionJson(CLIENT);
    }

    static String versionJson(String client) {
        return "{\"client\":\"" + client + "\",\"library\":\"activemq-client " + libraryVersion()
            + "\",\"runtime\":\"Java " + System.getProperty("java.version") + "\"}";
    }

    private static String libraryVersion() {
        Package p = ActiveMQConnectionFactory.class.getPackage();
        String v = p == null ? null : p.getImplementationVersion();
        return v == null ? LIBRARY_VERSION : v;
    }

    // ------------------------------------------------------------------ stdout

    private static final PrintStream OUT =
        new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 14), false, StandardCharsets.US_ASCII);
    private static boolean outClosed;

    static {
        // Nothing but our JSON lines may reach stdout: anything else printing to System.out lands on stderr.
        System.setOut(System.err);
    }

    static PrintStream realOut() { return OUT; }

    /** One JSON line on stdout, flushed, unless 'done' has been printed. */
    static void emitRaw(String json) {
        synchronized (OUT) {
            if (outClosed) return;
            OUT.print(json);
            OUT.print('\n');
            OUT.flush();
        }
    }

    static void emit(String event, String id, String rest) {
        emitRaw("{\"event\":\"" + event + "\",\"id\":\"" + id + "\"" + (rest.isEmpty() ? "" : "," + rest) + "}");
    }

    /** The last line: nothing is printed after it. */
    static void emitLast(String event, String id, String rest) {
        synchronized (OUT) {
            emit(event, id, rest);
            outClosed = true;
        }
    }

    // ------------------------------------------------------------------ clock, body

    private static final Clock UTC = Clock.systemUTC();

    /**
     * Wall clock, ns since the epoch: the monotonic clock plus its distance from the wall clock.
     * System.nanoTime is a compiler intrinsic; Clock.instant() is a call into the VM and an
     * Instant, 33-46 ns a message here (28955a4:docs/perf.md), the clock the other languages read.
     * Linux slews both clocks alike, so their distance moves only when the wall clock is set
     * (a step): {@link #reanchor()}, called by the ticker every second, follows it.
     */
    static long nowNs() {
        return System.nanoTime() + epochOffset;
    }

    /** The wall clock as the VM reads it, ns since the epoch (ns resolution on Linux, JDK >= 15). */
    static long wallNs() {
        Instant t = UTC.instant();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    /** A step smaller than this is the reading's own jitter, not the wall clock set. */
    static final long STEP_NS = 20_000;
    private static volatile long epochOffset = measureOffset();

    /** Wall clock minus monotonic clock, from the tightest of a few readings between two nanoTimes. */
    static long measureOffset() {
        long best = Long.MAX_VALUE, offset = 0;
        for (int i = 0; i < 7; i++) {
            long a = System.nanoTime(), w = wallNs(), b = System.nanoTime();
            if (b - a < best) {
                best = b - a;
                offset = w - (a + (b - a) / 2);
            }
        }
        return offset;
    }

    /** Follows a step of the wall clock (see {@link #nowNs()}); true when there was one. */
    static boolean reanchor() {
        long o = measureOffset();
        if (Math.abs(o - epochOffset) < STEP_NS) return false;
        epochOffset = o;
        return true;
    }

    /** Writes the first min(6, n) digits of the 6-digit zero-padded seq mod 1e6 into dst[0..]. */
    public static void counter(long seq, byte[] dst, int n) {
        int c = (int) (seq % 1_000_000L);
        int k = Math.min(6, n);
        for (int i = 5; i >= 0; i--) {
            if (i < k) dst[i] = (byte) ('0' + c % 10);
            c /= 10;
        }
    }

    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    /** {@code crc} as 8 lowercase hex digits, zero-padded (as {@code String.format("%08x", crc)}). */
    public static String hex8(int crc) {
        byte[] b = new byte[8];
        hex8(crc, b, 0);
        return new String(b, StandardCharsets.US_ASCII);
    }

    /** Writes {@code crc} as 8 lowercase hex digits into b[at..at+8). */
    public static void hex8(int crc, byte[] b, int at) {
        for (int i = 7; i >= 0; i--) { b[at + i] = HEX[crc & 15]; crc >>>= 4; }
    }

    /** Appends {@code crc} as 8 lowercase hex digits. */
    public static StringBuilder hex8(int crc, StringBuilder sb) {
        for (int i = 28; i >= 0; i -= 4) sb.append((char) HEX[(crc >>> i) & 15]);
        return sb;
    }

    /**
     * The value of an 8-digit lowercase hex string (as {@link #hex8} writes it), or -1L for
     * anything else (then the string itself is kept).
     */
    public static long parseHex8(String s) {
        if (s.length() != 8) return -1L;
        long v = 0;
        for (int i = 0; i < 8; i++) {
            char c = s.charAt(i);
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0) return -1L;
            v = (v << 4) | d;
        }
        return v;
    }

    // ------------------------------------------------------------------ connecting

    /**
     * The URL with the contract's bounded connect added unless it sets its own: the tcp
     * transport's {@code connectionTimeout} (tcp/ssl/nio) or failover's {@code timeout}.
     */
    public static String connectUrl(Opts o) {
        long ms = o.connectTimeoutMs();
        String url = o.url;
        if (o.failover()) {
            if (!hasParam(url.substring(url.lastIndexOf(')') + 1), "timeout")) url = addParam(url, "timeout=" + ms);
        } else if (!hasParam(url, "connectionTimeout")) {
            url = addParam(url, "connectionTimeout=" + ms);
        }
        return url;
    }

    /** A factory for {@link #connectUrl}: ActiveMQ's defaults plus what the contract's options ask for. */
    static ActiveMQConnectionFactory factory(Opts o) {
        return factory(o, connectUrl(o));
    }

    /**
     * A factory for {@code url} with the contract's options: credentials, the --ca trust,
     * a bounded connect ({@code connectResponseTimeout}) and a bounded close (a stop must not
     * wait 15 s for a broker that is gone). Everything else is ActiveMQ's default.
     */
    public static ActiveMQConnectionFactory factory(Opts o, String url) {
        ActiveMQConnectionFactory f;
        if (o.ca != null || o.cert != null) {
            // verify the broker against the given CA (ActiveMQ checks the host name too), else
            // the JDK's trust store; show our own certificate when the broker asks (mutual TLS)
            org.apache.activemq.ActiveMQSslConnectionFactory sf = new org.apache.activemq.ActiveMQSslConnectionFactory(url);
            try {
                sf.setKeyAndTrustManagers(o.cert != null ? keyManagers(o.cert, o.key) : null,
                    o.ca != null ? trustManagers(o.ca) : null, null);
            } catch (IllegalArgumentException e) {
                usage(e.getMessage());
            } catch (Exception e) {
                usage("--ca " + o.ca + " / --cert " + o.cert + ": " + e.getMessage());
            }
            f = sf;
        } else {
            f = new ActiveMQConnectionFactory(url);
        }
        if (o.user != null) f.setUserName(o.user);
        if (o.password != null) f.setPassword(o.password);
        f.setConnectResponseTimeout((int) Math.min(Integer.MAX_VALUE, o.connectTimeoutMs()));
        f.setCloseTimeout(5000);
        // one process, one listener; several slots share the factory: each connection gets its own (reconnectLines)
        if (o.failover() && o.slot == 0) f.setTransportListener(new Reconnects(o.id));
        return f;
    }

    /**
     * What a slot of several adds to its connection: with --failover its own {@code reconnected}
     * lines (ActiveMQConnection.addTransportListener), as the factory's listener gives a process.
     */
    static void reconnectLines(Connection c, Opts o) {
        if (o.slot > 0 && o.failover()) ((ActiveMQConnection) c).addTransportListener(new Reconnects(o.id));
    }

    /** The contract's {@code reconnected} line when the failover transport resumes after an interruption. */
    static final class Reconnects implements org.apache.activemq.transport.TransportListener {
        private final String id;
        private boolean interrupted;
        private int n;

        Reconnects(String id) { this.id = id; }

        @Override public void onCommand(Object command) { }
        @Override public void onException(java.io.IOException error) { }
        @Override public synchronized void transportInterupted() { interrupted = true; }
        @Override public synchronized void transportResumed() {
            if (!interrupted) return;   // the first connection
            interrupted = false;
            emit("reconnected", id, "\"t_ns\":" + nowNs() + ",\"n\":" + ++n);
        }
    }

    /** The client's own certificate (chain) and its unencrypted PKCS#8 PEM key, for mutual TLS. */
    static javax.net.ssl.KeyManager[] keyManagers(String certPem, String keyPem) throws Exception {
        java.util.List<java.security.cert.Certificate> chain = new java.util.ArrayList<>();
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(java.nio.file.Path.of(certPem))) {
            chain.addAll(java.security.cert.CertificateFactory.getInstance("X.509").generateCertificates(in));
        }
        if (chain.isEmpty()) throw new IllegalArgumentException("--cert " + certPem + ": no certificate in the file");
        java.util.regex.Matcher m = java.util.regex.Pattern
            .compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----")
            .matcher(java.nio.file.Files.readString(java.nio.file.Path.of(keyPem)));
        if (!m.find()) {
            throw new IllegalArgumentException("--key " + keyPem + ": not an unencrypted PKCS#8 PEM key "
                + "(BEGIN PRIVATE KEY; openssl pkcs8 -topk8 -nocrypt converts one)");
        }
        java.security.spec.PKCS8EncodedKeySpec der =
            new java.security.spec.PKCS8EncodedKeySpec(java.util.Base64.getMimeDecoder().decode(m.group(1)));
        java.security.PrivateKey key = null;
        for (String alg : new String[] {"RSA", "EC"}) {
            try {
                key = java.security.KeyFactory.getInstance(alg).generatePrivate(der);
                break;
            } catch (java.security.spec.InvalidKeySpecException e) {
                // the next algorithm
            }
        }
        if (key == null) throw new IllegalArgumentException("--key " + keyPem + ": neither an RSA nor an EC key");
        char[] pw = "bench".toCharArray();  // the in-memory store's own
        java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("client", key, pw, chain.toArray(new java.security.cert.Certificate[0]));
        javax.net.ssl.KeyManagerFactory kmf =
            javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pw);
        return kmf.getKeyManagers();
    }

    private static javax.net.ssl.TrustManager[] trustManagers(String pem) throws Exception {
        java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        int i = 0;
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(java.nio.file.Path.of(pem))) {
            for (java.security.cert.Certificate c
                    : java.security.cert.CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                ks.setCertificateEntry("ca" + i++, c);
            }
        }
        if (i == 0) throw new IllegalArgumentException("no certificate in the file");
        javax.net.ssl.TrustManagerFactory tmf =
            javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        return tmf.getTrustManagers();
    }

    public static boolean hasParam(String url, String name) {
        int q = url.indexOf('?');
        if (q < 0) return false;
        for (String kv : url.substring(q + 1).split("&")) if (kv.split("=", 2)[0].equals(name)) return true;
        return false;
    }

    public static String addParam(String url, String kv) {
        int q = url.lastIndexOf('?');
        boolean hasQuery = q >= 0 && q > url.lastIndexOf(')');
        return url + (hasQuery ? "&" : "?") + kv;
    }

    private static final Pattern NODELAY = Pattern.compile("[?&]wireFormat\\.tcpNoDelayEnabled=([A-Za-z]+)");

    /**
     * The ready line's socket fact: TCP_NODELAY as read back from the connection's socket
     * (ActiveMQConnection.getTransport().narrow(Socket.class), public API: the tcp, ssl and
     * nio transports answer with their socket, failover with its connected one), or else what
     * activemq-client sets: once the wire format is negotiated, its WireFormatNegotiator sets
     * TCP_NODELAY to the negotiated {@code wireFormat.tcpNoDelayEnabled}, true unless the URL
     * (or the broker) says false. Nothing here changes the option.
     */
    static String nodelayJson(Connection c, Opts o) {
        if (c instanceof ActiveMQConnection) {
            try {
                Socket s = ((ActiveMQConnection) c).getTransport().narrow(Socket.class);
                // over ssl:// the negotiated version too (SSLSession.getProtocol(): "TLSv1.3")
                String tls = s instanceof javax.net.ssl.SSLSocket ssl
                    ? ",\"tls\":\"" + ssl.getSession().getProtocol() + "\"" : "";
                if (s != null) return "\"tcp_nodelay\":" + s.getTcpNoDelay() + ",\"tcp_nodelay_how\":\"getsockopt\"" + tls;
            } catch (SocketException | RuntimeException ignored) {
                // fall through to what the library sets
            }
        }
        boolean on = true;
        for (Matcher m = NODELAY.matcher(o.url); m.find(); ) on = Boolean.parseBoolean(m.group(1));
        return "\"tcp_nodelay\":" + on + ",\"tcp_nodelay_how\":\"library\"";
    }

    /** Runs the connect/subscribe steps; exits 3 naming the address if they fail or outlast --connect-timeout. */
    static <T> T connectWithin(Opts o, Callable<T> steps) {
        FutureTask<T> task = new FutureTask<>(steps);
        Thread t = new Thread(task, "bb-connect");
        t.setDaemon(true);
        t.start();
        try {
            return task.get(o.connectTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            die(3, "error: could not connect to " + o.url + " within " + fmt(o.connectTimeout) + " s");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            boolean auth = false;
            for (Throwable x = c; x != null; x = x.getCause()) if (x instanceof JMSSecurityException || x instanceof SecurityException) auth = true;
            die(3, "error: " + (auth ? "authentication failed at " : "could not connect to ") + o.url + ": " + describe(c));
        } catch (InterruptedException e) {
            die(3, "error: interrupted while connecting to " + o.url);
        }
        return null;
    }

    /** A connection's exception listener: refused credentials are exit 3 (no retry), else 1. */
    static void connectionFailed(Opts o, Throwable e) {
        connectionFailed(o, e, null);
    }

    /**
     * The same, for a slot of several too: its error line names the slot, and {@code before}
     * (every slot's records), when given, runs once this exit is the process's, before it.
     */
    static void connectionFailed(Opts o, Throwable e, Runnable before) {
        if (closing) return;
        boolean auth = false;
        for (Throwable x = e; x != null; x = x.getCause()) {
            if (x instanceof JMSSecurityException || x instanceof SecurityException
                    || String.valueOf(x.getMessage()).contains("SecurityException")) auth = true;
        }
        String error = errorOf(o);
        if (auth) dieAfter(3, error + "authentication failed at " + o.url + ": " + describe(e), before);
        else dieAfter(1, error + "connection to " + o.url + " failed: " + describe(e), before);
    }

    /** "error: ", naming the slot when {@code o} is one of several. */
    static String errorOf(Opts o) {
        return o.slot > 0 ? "error: slot " + o.id + ": " : "error: ";
    }

    public static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        String m = root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
        String top = e.getMessage();
        String s = (top != null && root != e && !top.contains(m)) ? top + " (" + m + ")" : (root == e ? m : (top != null ? top : m));
        return s.replace('\n', ' ').replace('\r', ' ');
    }

    // ------------------------------------------------------------------ stopping

    private static final int RUNNING = 0, FINISHING = 1, DONE = 2, DYING = 3;
    private static final AtomicInteger STATE = new AtomicInteger(RUNNING);
    private static final CountDownLatch FINISHED = new CountDownLatch(1);
    private static volatile boolean inHook;
    private static volatile Runnable finisher;
    /** True once we close on purpose: connection exceptions are then not failures. */
    static volatile boolean closing;

    /** SIGTERM (and any other JVM shutdown we did not start) stops like 'stop' and exits 0. */
    static void installHook(Runnable finish) {
        finisher = finish;
        // an exception nothing caught is a failure (exit 1), not a stop
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> die(1, "error: " + describe(e)));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            inHook = true;
            int s = STATE.get();
            if (s == DYING || s == DONE) return;           // error exit keeps its code; normal exit is 0
            int code = finishOnce();
            OUT.flush();
            System.err.flush();
            Runtime.getRuntime().halt(code);               // 0, not 143, after SIGTERM
        }, "bb-sigterm"));
    }

    /** Runs the finisher once (writes records, prints done); other callers wait for it. Returns the exit code. */
    static int finishOnce() {
        if (STATE.compareAndSet(RUNNING, FINISHING)) {
            try {
                finisher.run();
                STATE.set(DONE);
                FINISHED.countDown();
                return 0;
            } catch (Throwable e) {
                FINISHED.countDown();
                dieNow(1, "error: failed while stopping: " + describe(e));
                return 1;
            }
        }
        try { FINISHED.await(30, TimeUnit.SECONDS); } catch (InterruptedException ignored) { }
        return STATE.get() == DONE ? 0 : 1;
    }

    /** Normal end: finish and exit 0. */
    static void finishAndExit() {
        int code = finishOnce();
        OUT.flush();
        System.exit(code);
    }

    /** True while no stop has begun. */
    static boolean running() { return STATE.get() == RUNNING; }

    /**
     * Error exit: one "error:" line on stderr, exit code. Ignored (returns) when a stop is already
     * under way; the caller then just returns.
     */
    static void die(int code, String msg) {
        dieAfter(code, msg, null);
    }

    /**
     * {@link #die}, running {@code before} first (writing what the slots hold) once this exit is
     * the process's: a stop (finishOnce) or another error can no longer begin meanwhile.
     */
    static void dieAfter(int code, String msg, Runnable before) {
        if (!STATE.compareAndSet(RUNNING, DYING)) return;
        if (before != null) {
            try {
                before.run();
            } catch (RuntimeException e) {
                System.err.println("warning: " + describe(e));
            }
        }
        dieNow(code, msg);
    }

    private static void dieNow(int code, String msg) {
        STATE.set(DYING);
        synchronized (OUT) { outClosed = true; }
        System.err.println(msg.replace('\n', ' '));
        System.err.flush();
        if (inHook) Runtime.getRuntime().halt(code);
        System.exit(code);
    }

    // ------------------------------------------------------------------ ticks

    static Thread ticker(String id, String key, LongSupplier total) {
        Thread t = new Thread(() -> {
            try {
                while (true) {
                    Thread.sleep(1000);
                    if (!running()) return;
                    reanchor();
                    emit("tick", id, "\"t_ns\":" + nowNs() + ",\"" + key + "\":" + total.getAsLong());
                }
            } catch (InterruptedException ignored) { }
        }, "bb-tick");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * One ticker for the slots of --connections N > 1: slot i's tick ({@code ids[i]},
     * {@code total.applyAsLong(i)}) at most once a second and only when its total changed, so
     * that idle slots stay quiet.
     */
    static Thread slotTicker(String[] ids, String key, java.util.function.IntToLongFunction total) {
        Thread t = new Thread(() -> {
            long[] ticked = new long[ids.length];
            try {
                while (true) {
                    Thread.sleep(1000);
                    if (!running()) return;
                    reanchor();
                    for (int i = 0; i < ids.length; i++) {
                        long n = total.applyAsLong(i);
                        if (n == ticked[i]) continue;
                        ticked[i] = n;
                        emit("tick", ids[i], "\"t_ns\":" + nowNs() + ",\"" + key + "\":" + n);
                    }
                }
            } catch (InterruptedException ignored) { }
        }, "bb-tick");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Threads {@link #forEachSlot} uses at most. */
    private static final int SLOT_THREADS = 32;

    /**
     * Runs {@code step} for slots 0..n-1 on up to 32 threads at once and waits for all: a
     * step that waits for the broker (a close is a round trip and a socket shut down, 3-5 ms
     * here) would take a minute for 10,000 slots one after another.
     */
    static void forEachSlot(int n, java.util.function.IntConsumer step) {
        AtomicInteger next = new AtomicInteger();
        Thread[] ts = new Thread[Math.min(n, SLOT_THREADS)];
        for (int k = 0; k < ts.length; k++) {
            ts[k] = new Thread(() -> {
                for (int i; (i = next.getAndIncrement()) < n; ) step.accept(i);
            }, "bb-slots-" + k);
            ts[k].setDaemon(true);
            ts[k].start();
        }
        for (Thread t : ts) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    static void stopTicker(Thread t) {
        if (t == null) return;
        t.interrupt();
        try { t.join(2000); } catch (InterruptedException ignored) { }
    }
}
