package burstbench.clients;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * burstbench Pi worker over OpenWire: takes Leibniz work chunks from a queue and sends each
 * chunk's partial sum to a results queue (the "Pi workers" section of clients/contract.md).
 *
 * {@code --threads N} runs N competing consumers, each its own session (and so its own
 * listener thread) on one connection: N workers in one JVM, so that a hundred workers do not
 * need a hundred JVMs. A {@code stop} message ends the whole process.
 */
public final class PiWorker {
    private static final Pattern QUEUE = Pattern.compile("[A-Za-z0-9_.:>*$-]{1,200}");
    private static final Pattern DIGITS = Pattern.compile("[0-9]{1,18}");
    private static final MathContext SIG17 = new MathContext(17);

    private final Opts o;
    private final String work, results;
    private final int threads, prefetch;
    private final AtomicLong chunks = new AtomicLong();
    private final AtomicLong foreign = new AtomicLong();
    private final CountDownLatch stop = new CountDownLatch(1);
    private volatile Connection conn;

    private PiWorker(Opts o, String work, String results, int threads, int prefetch) {
        this.o = o;
        this.work = work;
        this.results = results;
        this.threads = threads;
        this.prefetch = prefetch;
    }

    /** Sum of (-1)^k / (2k+1) for k in [start, start+n), term by term in that order. */
    static double chunkSum(long start, long n) {
        double s = 0.0;
        long end = start + n;
        for (long k = start; k < end; k++) {
            double term = 1.0 / (2.0 * k + 1.0);
            if ((k & 1L) == 1L) s -= term; else s += term;
        }
        return s;
    }

    /** The double as a decimal string with 17 significant digits (exact round trip). */
    static String sig17(double d) {
        return new BigDecimal(d).round(SIG17).toString();
    }

    private static final String HELP =
        "usage: java -cp clients/java/target/classes:clients/java/target/lib/* burstbench.clients.PiWorker\n"
        + "         --url tcp://HOST:PORT --work QUEUE --results QUEUE [options]\n\n"
        + "Leibniz Pi worker over OpenWire (activemq-client, JMS). See clients/contract.md, 'Pi workers'.\n\n"
        + "  --url URL              tcp://, ssl://, nio:// or failover:(...) (required)\n"
        + "  --work QUEUE           queue the work messages come from (required)\n"
        + "  --results QUEUE        queue the partial sums go to (required)\n"
        + "  --id ID                worker id [A-Za-z0-9_.-]{1,64} (default w1)\n"
        + "  --threads N            competing consumers in this process, 1..1000 (default 1)\n"
        + "  --prefetch N           queue prefetch per consumer, 1..32767 (default 1000)\n"
        + "  --user U, --password P broker credentials\n"
        + "  --connect-timeout S    give up connecting after S seconds, exit 3 (default 10)\n"
        + "  --version              print a JSON line naming client, library and runtime\n"
        + "  --help                 this text\n";

    static PiWorker parse(String[] args) {
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                Common.realOut().print(HELP);
                Common.realOut().flush();
                System.exit(0);
            }
        }
        for (String a : args) {
            if (a.equals("--version")) { Common.emitRaw(Common.versionJson()); System.exit(0); }
        }
        Opts o = new Opts();
        o.role = "pi-worker";
        o.id = "w1";
        String work = null, results = null;
        int threads = 1, prefetch = 1000;
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || a.length() == 2) Common.usage("unexpected argument '" + a + "'");
            String name = a.substring(2), value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) { value = name.substring(eq + 1); name = name.substring(0, eq); }
            if (!List.of("url", "work", "results", "id", "threads", "prefetch", "user", "password",
                    "connect-timeout").contains(name)) Common.usage("unknown option --" + name);
            if (seen.contains(name)) Common.usage("option --" + name + " given twice");
            seen.add(name);
            if (value == null) {
                if (i + 1 >= args.length || args[i + 1].startsWith("--")) Common.usage("--" + name + " needs a value");
                value = args[++i];
            }
            switch (name) {
                case "url": o.url = value; break;
                case "work": work = value; break;
                case "results": results = value; break;
                case "id": o.id = value; break;
                case "threads": threads = intIn(name, value, 1, 1000); break;
                case "prefetch": prefetch = intIn(name, value, 1, Short.MAX_VALUE); break;
                case "user": o.user = value; break;
                case "password": o.password = value; break;
                default:
                    try { o.connectTimeout = Double.parseDouble(value.trim()); }
                    catch (NumberFormatException e) { Common.usage("--connect-timeout must be a number (got '" + value + "')"); }
                    if (!(o.connectTimeout > 0) || o.connectTimeout > 86400) Common.usage("--connect-timeout must be > 0 and <= 86400");
            }
        }
        if (o.url == null) Common.usage("--url is required");
        if (work == null) Common.usage("--work is required");
        if (results == null) Common.usage("--results is required");
        String u = o.url.toLowerCase(Locale.ROOT);
        if (!(u.startsWith("tcp://") || u.startsWith("ssl://") || u.startsWith("nio://") || u.startsWith("failover:(")))
            Common.usage("--url must be tcp://, ssl://, nio:// or failover:(...) for OpenWire (got '" + o.url + "')");
        if (!QUEUE.matcher(work).matches()) Common.usage("bad queue name for --work: '" + work + "'");
        if (!QUEUE.matcher(results).matches()) Common.usage("bad queue name for --results: '" + results + "'");
        if (!Common.ID.matcher(o.id).matches()) Common.usage("--id must match [A-Za-z0-9_.-]{1,64} (got '" + o.id + "')");
        if (o.password != null && o.user == null) Common.usage("--password needs --user");
        return new PiWorker(o, work, results, threads, prefetch);
    }

    private static int intIn(String name, String v, int min, int max) {
        long x = 0;
        try { x = Long.parseLong(v.trim()); } catch (NumberFormatException e) { Common.usage("--" + name + " must be an integer (got '" + v + "')"); }
        if (x < min || x > max) Common.usage("--" + name + " must be in " + min + ".." + max + " (got " + x + ")");
        return (int) x;
    }

    /** One competing consumer: its own session, listener thread and results producer. */
    private void subscribe(Connection c) throws JMSException {
        Session session = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer producer = session.createProducer(session.createQueue(results));
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
        MessageConsumer consumer = session.createConsumer(session.createQueue(work));
        consumer.setMessageListener(m -> onMessage(m, session, producer));
    }

    private void onMessage(Message m, Session session, MessageProducer producer) {
        try {
            String cmd = m.getStringProperty("pi_cmd");
            if ("stop".equals(cmd)) { stop.countDown(); return; }
            String chunk = m.getStringProperty("pi_chunk");
            String start = m.getStringProperty("pi_start");
            String n = m.getStringProperty("pi_elements");
            if (!"work".equals(cmd) || chunk == null || start == null || n == null
                    || !DIGITS.matcher(chunk).matches() || !DIGITS.matcher(start).matches()
                    || !DIGITS.matcher(n).matches() || Long.parseLong(n) < 1) {
                foreign.incrementAndGet();
                return;
            }
            double s = chunkSum(Long.parseLong(start), Long.parseLong(n));
            TextMessage r = session.createTextMessage(sig17(s));
            r.setStringProperty("pi_chunk", chunk);
            r.setStringProperty("pi_worker", o.id);
            producer.send(r);
            chunks.incrementAndGet();
        } catch (JMSException e) {
            if (!Common.closing) Common.die(1, "error: sending a result to " + results + " failed: " + Connect.describe(e));
        }
    }

    private void finish() {
        Common.closing = true;
        Connection c = conn;
        if (c != null) {
            try { c.close(); } catch (JMSException ignored) { }   // sends what is queued first
        }
        Common.emitLast("done", o.id, "\"chunks\":" + chunks.get() + ",\"foreign\":" + foreign.get());
    }

    public static void main(String[] args) throws Exception {
        PiWorker w = parse(args);
        Common.installHook(w::finish);
        ActiveMQConnectionFactory f = Connect.factory(w.o);
        f.getPrefetchPolicy().setQueuePrefetch(w.prefetch);
        w.conn = Connect.connectWithin(w.o, () -> {
            Connection c = f.createConnection();
            c.setExceptionListener(e -> {
                if (!Common.closing) Common.die(1, "error: lost connection to " + w.o.url + ": " + Connect.describe(e));
            });
            c.start();
            for (int i = 0; i < w.threads; i++) w.subscribe(c);
            return c;
        });
        Common.emit("ready", w.o.id, "\"role\":\"pi-worker\",\"threads\":" + w.threads);
        w.stop.await();
        Common.finishAndExit();
    }
}
