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
    public static final Pattern NONCE = Pattern.compile("[A-Za-z0-9]{1,32}");

    // ------------------------------------------------------------------ options

    /** The parsed command line (clients/contract.md's options). */
    public static final class Opts {
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
        public String ca;
        public double connectTimeout = 10;
        /** The program's own flags ({@link Program#flags}) that were given. */
        public final Set<String> flags = new HashSet<>();

        public boolean producer() { return role.equals("producer"); }
        public boolean failover() { return url.startsWith("failover:"); }
        public long connectTimeoutMs() { return Math.max(1L, Math.round(connectTimeout * 1000)); }
    }

    /**
     * Which program parses the command line: the client name its --version prints, the main
     * class its --help names, and flags of its own beyond the contract's, each {name, roles
     * ("p", "c" or "pc"), help lines}.
     */
    public record Program(String client, String mainClass, List<String[]> flags) {
        static Program stock(String role) {
            return new Program(CLIENT, role.equals("producer") ? Producer.class.getName() : Consumer.class.getName(),
                    List.of());
        }
    }

    /** One row per option: name, roles ("pc" = both), takes a value. */
    private static final String[][] OPTIONS = {
        {"url", "pc", "v"}, {"destinations", "pc", "v"}, {"count", "pc", "v"}, {"size", "pc", "v"},
        {"bursts", "pc", "v"}, {"persistent", "p", ""}, {"async-send", "p", ""}, {"ack", "c", "v"},
        {"prefetch", "c", "v"}, {"rate", "p", "v"}, {"duration", "p", "v"}, {"tx-batch", "pc", "v"}, {"id", "pc", "v"}, {"nonce", "p", "v"},
        {"records", "pc", "v"}, {"gate", "pc", ""}, {"user", "pc", "v"}, {"password", "pc", "v"}, {"ca", "pc", "v"},
        {"connect-timeout", "pc", "v"}, {"failover", "pc", "v"}, {"version", "pc", ""}, {"help", "pc", ""},
    };

    /** Parses and validates; prints help/version or "error: ..." and exits (0 / 2) itself. */
    public static Opts parse(String role, String[] args, Program program) {
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) { realOut().print(help(role, program)); realOut().flush(); System.exit(0); }
        }
        for (String a : args) {
            if (a.equals("--version")) { emitRaw(versionJson(program.client())); System.exit(0); }
        }
        Opts o = new Opts();
        o.role = role;
        o.id = role.equals("producer") ? "p1" : "c1";
        String destinations = null, failover = null;
        char r = role.charAt(0);
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || a.length() == 2) usage("unexpected argument '" + a + "'");
            String name = a.substring(2), value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) { value = name.substring(eq + 1); name = name.substring(0, eq); }
            String[] spec = null;
            for (String[] s : OPTIONS) if (s[0].equals(name)) spec = s;
            for (String[] f : program.flags()) if (f[0].equals(name)) spec = new String[] {f[0], f[1], ""};
            if (spec == null) usage("unknown option --" + name);
            if (spec[1].indexOf(r) < 0) usage("--" + name + " is not an option of the " + role);
            if (spec[2].isEmpty()) {
                if (value != null) usage("--" + name + " takes no value");
            } else if (value == null) {
                if (i + 1 >= args.length || args[i + 1].startsWith("--")) usage("--" + name + " needs a value");
                value = args[++i];
            }
            switch (name) {
                case "url": o.url = value; break;
                case "destinations": destinations = value; break;
                case "count": o.count = intIn(name, value, r == 'p' ? 1 : 0, Integer.MAX_VALUE); break;
                case "size": o.size = intIn(name, value, 1, 67108864); break;
                case "bursts": o.bursts = intIn(name, value, 1, Integer.MAX_VALUE); break;
                case "persistent": o.persistent = true; break;
                case "async-send": o.asyncSend = true; break;
                case "ack":
                    if (!List.of(ACK_MODES).contains(value)) usage("--ack must be one of auto, client, client-individual, dups-ok (got '" + value + "')");
                    o.ack = value; break;
                case "prefetch":
                    if (value.trim().equals("0")) usage("--prefetch 0 (pull consumer) is not supported: activemq-client refuses it for MessageListeners; use >= 1");
                    o.prefetch = intIn(name, value, 1, Short.MAX_VALUE); break;
                case "rate": o.rate = doubleIn(name, value, 0, 1e9, true); break;
                case "duration": o.duration = doubleIn(name, value, 0, 86400, true); break;
                case "tx-batch": o.txBatch = intIn(name, value, 0, Integer.MAX_VALUE); break;
                case "id":
                    if (!ID.matcher(value).matches()) usage("--id must match [A-Za-z0-9_.-]{1,64} (got '" + value + "')");
                    o.id = value; break;
                case "nonce":
                    if (!NONCE.matcher(value).matches()) usage("--nonce must match [A-Za-z0-9]{1,32} (got '" + value + "')");
                    o.nonce = value; break;
                case "records":
                    if (value.isEmpty()) usage("--records needs a path");
                    o.records = value; break;
                case "gate": o.gate = true; break;
                case "user": o.user = value; break;
                case "password": o.password = value; break;
                case "ca":
                    if (!java.nio.file.Files.isReadable(java.nio.file.Path.of(value))) usage("--ca: cannot read " + value);
                    o.ca = value; break;
                case "connect-timeout": o.connectTimeout = doubleIn(name, value, 0, 86400, false); break;
                case "failover": failover = value; break;
                default: o.flags.add(name);   // one of the program's own flags
            }
        }
        if (o.url == null) usage("--url is required");
        if (destinations == null) usage("--destinations is required");
        checkUrl(o.url);
        if (failover != null) o.url = failoverUrl(o.url, failover);
        List<String> ds = new ArrayList<>();
        for (String d : destinations.split(",", -1)) {
            d = d.trim();
            if (d.isEmpty()) usage("--destinations has an empty queue name");
            if (d.startsWith("/") || d.contains("://") || d.chars().anyMatch(Character::isWhitespace))
                usage("--destinations takes plain queue names (got '" + d + "')");
            ds.add(d);
        }
        o.destinations = ds.toArray(new String[0]);
        if (o.password != null && o.user == null) usage("--password needs --user");
        return o;
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

    private static int intIn(String name, String v, long min, long max) {
        long x;
        try { x = Long.parseLong(v.trim()); } catch (NumberFormatException e) { usage("--" + name + " must be an integer (got '" + v + "')"); return 0; }
        if (x < min || x > max) usage("--" + name + " must be in " + min + ".." + max + " (got " + x + ")");
        return (int) x;
    }

    private static double doubleIn(String name, String v, double min, double max, boolean minInclusive) {
        double x;
        try { x = Double.parseDouble(v.trim()); } catch (NumberFormatException e) { usage("--" + name + " must be a number (got '" + v + "')"); return 0; }
        if (Double.isNaN(x) || (minInclusive ? x < min : x <= min) || x > max)
            usage("--" + name + " must be " + (minInclusive ? ">= " : "> ") + fmt(min) + " and <= " + fmt(max) + " (got '" + v + "')");
        return x;
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

    static String help(String role, Program program) {
        boolean p = role.equals("producer");
        StringBuilder b = new StringBuilder();
        b.append("usage: java -cp clients/java/target/classes:clients/java/target/lib/* ")
         .append(program.mainClass()).append(" --url URL --destinations Q1[,Q2...] [options]\n\n")
         .append(p ? "Sends bursts of BytesMessages over OpenWire (activemq-client, JMS) to queues.\n"
                   : "Receives messages over OpenWire (activemq-client, JMS) from queues, recording each.\n")
         .append("Options take '--name value' or '--name=value'. See clients/contract.md.\n\n")
         .append("  --url URL              tcp://HOST:PORT, ssl://HOST:PORT, nio://HOST:PORT or failover:(URL,...)[?opts]\n")
         .append("  --destinations LIST    comma-separated queue names (required)\n")
         .append(p ? "  --count N              messages per burst (default 1000, >= 1)\n"
                   : "  --count N              stop after N x bursts messages (default 1000; 0 = until stopped)\n")
         .append(p ? "  --size BYTES           body size, 1..67108864 (default 6)\n"
                   : "  --size BYTES           accepted and ignored (the body size is whatever arrives)\n")
         .append("  --bursts B             number of bursts (default 1)\n");
        if (p) {
            b.append("  --persistent           persistent delivery (sent synchronously unless --async-send)\n")
             .append("  --async-send           send persistent messages asynchronously too (useAsyncSend); the\n")
             .append("                         last message of each burst is still confirmed before 'burst'\n")
             .append("  --rate R               messages/s (0 = as fast as possible); bb_sent_ns = intended time\n")
             .append("  --duration S           seconds per burst instead of --count messages (0 = off)\n");
        } else {
            b.append("  --ack MODE             auto (one acknowledgement per message, after the listener),\n")
             .append("                         client (cumulative, every ceil(prefetch/2)), client-individual, dups-ok\n")
             .append("  --prefetch N           queue prefetch, 1..32767 (default 1000)\n");
        }
        for (String[] f : program.flags()) {
            if (f[1].indexOf(role.charAt(0)) < 0) continue;
            for (int i = 2; i < f.length; i++) b.append(f[i]).append('\n');
        }
        b.append("  --tx-batch N           transacted session, commit every N messages (default 0 = none)\n")
         .append("  --id ID                process id [A-Za-z0-9_.-]{1,64} (default ").append(p ? "p1" : "c1").append(")\n");
        if (p) {
            b.append("  --nonce NONCE          run nonce [A-Za-z0-9]{1,32} (default 0), sent as property bb_nonce;\n")
             .append("                         every message also carries bb_crc32, the CRC-32 of its body (8 hex)\n");
        }
        b
         .append("  --records PATH         write the raw records (TSV) there when stopping\n")
         .append(p ? "  --gate                 read 'go' (send next burst) / 'stop' from stdin\n"
                   : "  --gate                 run until 'stop' or EOF on stdin\n")
         .append("  --user U, --password P broker credentials\n")
         .append("  --ca FILE              PEM CA that signed the broker's TLS certificate (ssl:// URLs)\n")
         .append("  --connect-timeout S    give up connecting after S seconds, exit 3 (default 10)\n")
         .append("  --failover LIST        more addresses in --url's scheme: failover:(URL,LIST)?randomize=false&...\n")
         .append("  --version              print a JSON line naming client, library and runtime\n")
         .append("  --help                 this text\n\n")
         .append("stdout carries JSON lines only (ready, tick, ").append(p ? "burst, " : "").append("done); logs go to stderr\n")
         .append("(slf4j-simple, level warn: -Dorg.slf4j.simpleLogger.defaultLogLevel=info for more).\n")
         .append("Exit codes: 0 done, 1 failed after start, 2 bad arguments, 3 cannot connect/authenticate.\n");
        return b.toString();
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

    /** Wall clock, ns since the epoch (ns resolution on Linux, JDK >= 15). */
    static long nowNs() {
        Instant t = UTC.instant();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
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
        if (o.ca != null) {
            // verify the broker against the given CA (ActiveMQ checks the host name too)
            org.apache.activemq.ActiveMQSslConnectionFactory sf = new org.apache.activemq.ActiveMQSslConnectionFactory(url);
            try {
                sf.setKeyAndTrustManagers(null, trustManagers(o.ca), null);
            } catch (Exception e) {
                usage("--ca " + o.ca + ": " + e.getMessage());
            }
            f = sf;
        } else {
            f = new ActiveMQConnectionFactory(url);
        }
        if (o.user != null) f.setUserName(o.user);
        if (o.password != null) f.setPassword(o.password);
        f.setConnectResponseTimeout((int) Math.min(Integer.MAX_VALUE, o.connectTimeoutMs()));
        f.setCloseTimeout(5000);
        if (o.failover()) f.setTransportListener(new Reconnects(o.id));
        return f;
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
                if (s != null) return "\"tcp_nodelay\":" + s.getTcpNoDelay() + ",\"tcp_nodelay_how\":\"getsockopt\"";
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
        if (closing) return;
        boolean auth = false;
        for (Throwable x = e; x != null; x = x.getCause()) {
            if (x instanceof JMSSecurityException || x instanceof SecurityException
                    || String.valueOf(x.getMessage()).contains("SecurityException")) auth = true;
        }
        if (auth) die(3, "error: authentication failed at " + o.url + ": " + describe(e));
        die(1, "error: connection to " + o.url + " failed: " + describe(e));
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
        if (!STATE.compareAndSet(RUNNING, DYING)) return;
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
                    emit("tick", id, "\"t_ns\":" + nowNs() + ",\"" + key + "\":" + total.getAsLong());
                }
            } catch (InterruptedException ignored) { }
        }, "bb-tick");
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void stopTicker(Thread t) {
        if (t == null) return;
        t.interrupt();
        try { t.join(2000); } catch (InterruptedException ignored) { }
    }
}
