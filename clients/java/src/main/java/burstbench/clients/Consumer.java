package burstbench.clients;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32;

import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatException;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQSession;

/**
 * burstbench consumer over OpenWire (clients/contract.md). Plain JMS on activemq-client with
 * ActiveMQ's defaults.
 *
 * One session, one MessageConsumer + MessageListener per queue. The listener runs in the
 * session's thread (ActiveMQ's default, {@code alwaysSessionAsync=true}), never in the
 * connection's transport (reader) thread: an acknowledgement is a socket write, and a reader
 * blocked in a write stops reading, so the broker's writes to us stall too and neither side
 * moves again (seen: 256 queues, a thread dump showed the transport thread in
 * TcpTransport.oneway from afterMessageIsConsumed). A commit (--tx-batch) also needs the
 * reader free, to read the broker's answer.
 * auto acknowledges each message as activemq-client does. The prefetch is the prefetch
 * policy's queue prefetch. Records go to primitive arrays and are written at stop; the
 * body's CRC-32 is kept as an int, computed on arrival, the nonce as an index into the nonces
 * seen, both formatted at stop.
 * With --connections N > 1 the process holds N such consumers, each a slot ({@link ConsumerSlots}).
 *
 * {@link #connectionFactory()}, {@link #createSession}, {@link #headers} and {@link #body}
 * are the hooks a variant overrides.
 */
public class Consumer {
    static final Opts.Program PROGRAM = Opts.Program.stock("consumer");

    protected final Opts o;
    /** JMS / ActiveMQ ack mode, or SESSION_TRANSACTED. */
    protected final int ackMode;
    private final int ackEvery;         // client mode: acknowledge at least every ceil(prefetch/2)
    private final boolean acks;         // a message asks something of the session: client modes, --tx-batch
    private final long target;          // stop after this many bench messages (0 = until stopped)
    private final CountDownLatch reached = new CountDownLatch(1);
    volatile Connection conn;
    private volatile Session session;
    private Thread ticker;
    private final AtomicBoolean failing = new AtomicBoolean();   // failed() acts once
    /** A slot of several (--connections N > 1): its group; null for the process's one connection. */
    ConsumerSlots group;

    // --- the listener's state (one session's calls, one at a time); the writers of the records
    // (finish, failed) hold 'this', one after the other, once no listener call can run
    private long received;              // bench messages: written by the listener, read by the ticker (RECEIVED)
    /** {@link #received}, written and read opaque: a progress count needs no fence (a volatile store is one a message). */
    static final VarHandle RECEIVED;
    static {
        try {
            RECEIVED = MethodHandles.lookup().findVarHandle(Consumer.class, "received", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private long foreign, redelivered;
    private int sinceAck;
    private Message lastUnacked;
    private final Headers h = new Headers();
    private final BodyInfo bi = new BodyInfo();
    private final Names producers = new Names(), nonces = new Names();
    private final Map<Integer, String> rawCrc = new HashMap<>();   // record -> bb_crc32 not in canonical form
    // records, one slot per bench message
    private int n;
    private int[] rProducer, rBurst, rBytes, rDest, rNonce, rCrcHeader, rCrcBody;
    private long[] rSeq, rSent, rRecv;
    private byte[] rFlags;              // bit 0 body_ok, bit 1 redelivered, bits 2-3 bb_crc32 (CRC_*)

    /** bb_crc32: absent, 8 lowercase hex digits (value in {@link Headers#crc}), other (in {@link Headers#crcRaw}). */
    public static final byte CRC_ABSENT = 0, CRC_HEX = 1, CRC_RAW = 2;

    /** Strings seen, each with its index in the order they first came; the last one found is kept at hand. */
    private static final class Names {
        final Map<String, Integer> index = new HashMap<>();
        final List<String> names = new ArrayList<>();
        private String last;
        private int lastIndex;

        /** The index of {@code s}, or -1 when it is new and {@code allowNew} does not hold for it. */
        int of(String s, java.util.function.Predicate<String> allowNew) {
            if (s.equals(last)) return lastIndex;
            Integer i = index.get(s);
            if (i == null) {
                if (!allowNew.test(s)) return -1;
                i = names.size();
                names.add(s);
                index.put(s, i);
            }
            last = s;
            lastIndex = i;
            return i;
        }
    }

    private static boolean contractId(String producer) { return Common.ID.matcher(producer).matches(); }

    /** The four bench headers of one message, and the optional nonce and body checksum. */
    public static final class Headers {
        public String producer;
        public long seq, sent;
        public int burst;
        /** bb_nonce, or null when absent. */
        public String nonce;
        /** bb_crc32: {@link #CRC_ABSENT}, {@link #CRC_HEX} with {@link #crc}, or {@link #CRC_RAW} with {@link #crcRaw}. */
        public byte crcState;
        public int crc;
        public String crcRaw;
    }

    /**
     * What the consumer takes from a body: its length, first bytes and CRC-32, every byte read
     * on arrival. (Comparing a contract body with its filler instead and computing its CRC-32 at
     * stop cost 0.07 µs a message more at 1 KiB on the bench's Xeon, live on one CPU beside the
     * loop, where the JIT's CRC-32 uses AVX-512: 28955a4:docs/perf.md, "CRC-32 on arrival".)
     */
    public static final class BodyInfo {
        /** The body's first min(6, bytes) bytes. */
        public final byte[] head = new byte[6];
        public int bytes;
        /** CRC-32 (IEEE) of every byte. */
        public int crc;
        private byte[] buf = new byte[64];
        private final CRC32 crc32 = new CRC32();

        /** Sets bytes, head and crc from b[off..off+len). */
        public void set(byte[] b, int off, int len) {
            bytes = len;
            System.arraycopy(b, off, head, 0, Math.min(head.length, len));
            crc32.reset();
            crc32.update(b, off, len);
            crc = (int) crc32.getValue();
        }

        /** A reusable buffer of at least len bytes. */
        public byte[] buffer(int len) {
            if (buf.length < len) buf = new byte[(int) Math.max(len, Math.min(Integer.MAX_VALUE - 8, 2L * buf.length))];
            return buf;
        }
    }

    protected Consumer(Opts o) {
        this.o = o;
        switch (o.txBatch > 0 ? "tx" : o.ack) {
            case "tx": ackMode = Session.SESSION_TRANSACTED; break;
            case "client": ackMode = Session.CLIENT_ACKNOWLEDGE; break;
            case "client-individual": ackMode = ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE; break;
            case "dups-ok": ackMode = Session.DUPS_OK_ACKNOWLEDGE; break;
            default: ackMode = Session.AUTO_ACKNOWLEDGE;
        }
        ackEvery = Math.max(1, (o.prefetch + 1) / 2);
        acks = o.txBatch > 0 || ackMode == Session.CLIENT_ACKNOWLEDGE || ackMode == ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE;
        long want = o.gate ? 0 : (long) o.count * o.bursts;
        target = o.slot > 0 ? 0 : want;   // slots stop together (ConsumerSlots), none on its own
        int cap = o.records == null ? 0
            : o.slot > 0 ? o.slotCapacity(((want > 0 ? want : 1 << 16) + o.connections - 1) / o.connections)
            : (int) Math.min(target > 0 ? target : 1 << 16, 1 << 20);
        rProducer = new int[cap]; rBurst = new int[cap]; rBytes = new int[cap]; rDest = new int[cap];
        rNonce = new int[cap]; rCrcHeader = new int[cap]; rCrcBody = new int[cap];
        rSeq = new long[cap]; rSent = new long[cap]; rRecv = new long[cap]; rFlags = new byte[cap];
        // The records are the harness's, made here for the whole run (21 MB for 400,000
        // messages): collected now, before the consumer connects, they move to the old
        // generation. Left in eden, they survived the drain's first collections, and the parallel
        // collector's adaptive sizing answered with survivors of up to 28 MB and an eden of
        // 72-97 MB where the loop kept 96-121: 21-23 collections in a one-CPU drain the loop took
        // 16 for; now 19 (28955a4:docs/perf.md, "The JMS consumer's eden"). It did not move the bench's
        // receive rows.
        if (cap > 0 && o.slot == 0) System.gc();   // (ConsumerSlots collects once, after making every slot)
    }

    public static void main(String[] args) {
        Opts o = Opts.parse("consumer", args, PROGRAM);
        if (o.connections > 1) new ConsumerSlots(o).run();
        else new Consumer(o).run();
    }

    /** The connection factory; run() then sets the queue prefetch (--prefetch) on its prefetch policy. */
    protected ActiveMQConnectionFactory connectionFactory() {
        return Connect.factory(o);
    }

    /** The one session every queue's consumer lives in. */
    protected Session createSession(Connection c) throws JMSException {
        return c.createSession(o.txBatch > 0, ackMode);
    }

    /**
     * Reads the four bench headers (string properties) into {@code h}, and bb_nonce and
     * bb_crc32 when present; false when one of the four is missing or does not parse (a
     * foreign message).
     */
    protected boolean headers(Message m, Headers h) throws JMSException {
        String producer, seq, burst, sent;
        try {
            producer = m.getStringProperty(Common.P_PRODUCER);
            seq = m.getStringProperty(Common.P_SEQ);
            burst = m.getStringProperty(Common.P_BURST);
            sent = m.getStringProperty(Common.P_SENT);
        } catch (MessageFormatException e) {
            return false;   // a property of a type that is no string (a byte array, a map)
        }
        if (producer == null || seq == null || burst == null || sent == null) return false;
        try {
            h.producer = producer;
            h.seq = Long.parseLong(seq);
            h.burst = Integer.parseInt(burst);
            h.sent = Long.parseLong(sent);
        } catch (NumberFormatException e) {
            return false;
        }
        if (h.seq < 0 || h.burst < 0) return false;
        h.nonce = optional(m, Common.P_NONCE);
        crcHeader(optional(m, Common.P_CRC), h);
        return true;
    }

    /** An optional string property, null when absent or of a type that is no string. */
    protected static String optional(Message m, String name) throws JMSException {
        try {
            return m.getStringProperty(name);
        } catch (MessageFormatException e) {
            return null;
        }
    }

    /** bb_crc32 as received (null = absent) into {@code h}. */
    protected static void crcHeader(String v, Headers h) {
        if (v == null) { h.crcState = CRC_ABSENT; h.crcRaw = null; return; }
        long x = Common.parseHex8(v);
        if (x >= 0) { h.crcState = CRC_HEX; h.crc = (int) x; h.crcRaw = null; }
        else { h.crcState = CRC_RAW; h.crcRaw = v; }
    }

    /** The body's length, first bytes and CRC-32 into {@code b} (every byte is read). */
    protected void body(Message m, BodyInfo b) throws JMSException {
        if (m instanceof BytesMessage) {
            BytesMessage bm = (BytesMessage) m;
            int len = (int) bm.getBodyLength();
            byte[] buf = b.buffer(len);
            int got = len == 0 ? 0 : Math.max(0, bm.readBytes(buf, len));
            b.set(buf, 0, got);
            return;
        }
        if (m instanceof TextMessage) {
            String t = ((TextMessage) m).getText();
            byte[] d = t == null ? new byte[0] : t.getBytes(StandardCharsets.UTF_8);
            b.set(d, 0, d.length);
            return;
        }
        b.set(b.head, 0, 0);
    }

    /** The variant's connection factory, with the queue prefetch (--prefetch) on its prefetch policy. */
    ActiveMQConnectionFactory factoryForRun() {
        ActiveMQConnectionFactory f = connectionFactory();
        f.getPrefetchPolicy().setQueuePrefetch(o.prefetch);
        return f;
    }

    /** Opens this consumer's connection and session, and a consumer with the listener per queue. */
    Connection connect(ActiveMQConnectionFactory f) throws JMSException {
        Connection c = f.createConnection();
        conn = c;
        Failover.reconnectLines(c, o);
        c.setExceptionListener(e -> {
            if (group != null) group.failed(this, e);
            else failed(c, e);
        });
        Session s = createSession(c);
        session = s;
        for (int i = 0; i < o.destinations.length; i++) {
            final int di = i;
            s.createConsumer(s.createQueue(o.destinations[i])).setMessageListener(m -> onMessage(m, di));
        }
        c.start();
        return c;
    }

    void ready() {
        Common.emit("ready", o.id, "\"role\":\"consumer\"," + Connect.nodelayJson(conn, o));
    }

    protected final void run() {
        Common.installHook(this::finish);
        Connect.connectWithin(o, () -> connect(factoryForRun()));
        ready();
        ticker = Common.ticker(o.id, "received", () -> (long) RECEIVED.getOpaque(this));
        try {
            if (o.gate) {
                awaitStopLine();
            } else {
                reached.await();   // with --count 0 only SIGTERM ends this
            }
        } catch (IOException | InterruptedException e) {
            Common.die(1, "error: " + Connect.describe(e));
            return;
        }
        Common.finishAndExit();
    }

    /** --gate: reads stdin until 'stop' or its end. */
    static void awaitStopLine() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.equals("stop")) break;
            if (!line.isEmpty()) System.err.println("warning: ignoring stdin line '" + line + "'");
        }
    }

    /**
     * A dropped connection (no failover) ends the consumer with exit 1; what it received is still
     * written, as every client does. The library calls this before it disposes the sessions, so
     * the listener may still be running: the connection is closed first, which returns once a
     * listener call in progress has completed and lets no other start (JMS, Connection.close; in
     * activemq-client, each consumer's dispatch lock), then the records are written. In a thread
     * of its own: this runs in the connection's executor, which close() shuts down.
     */
    private void failed(Connection c, JMSException e) {
        if (Common.closing || !failing.compareAndSet(false, true)) return;
        Thread t = new Thread(() -> {
            if (Common.running() && o.records != null) {
                try { c.close(); } catch (JMSException x) { System.err.println("warning: close: " + Connect.describe(x)); }
                synchronized (this) {
                    try { writeRecords(); } catch (RuntimeException w) { System.err.println("warning: " + w.getMessage()); }
                }
            }
            Connect.connectionFailed(o, e);
        }, "bb-failed");
        t.start();
    }

    /**
     * Every message, in arrival order. One session calls it, one message at a time (JMS: a
     * session serialises its listeners), so it takes no lock of its own: a stop
     * (Connection.stop) and a dropped connection ({@link #failed}) wait for a call in progress
     * through the library. The hot path is kept small, its rare steps (a new producer,
     * acknowledging in the client modes, a transaction) in methods of their own.
     */
    private void onMessage(Message m, int di) {
        final long recvNs = Common.nowNs();
        try {
            if (!bench(m, di, recvNs)) foreign++;
            if (acks) acknowledge(m);
        } catch (JMSException | RuntimeException e) {
            Common.die(1, "error: receiving from " + o.url + " failed: " + Connect.describe(e));
        }
        if (target > 0 && received >= target) reached.countDown();
    }

    /** The client acknowledgement modes and --tx-batch: what a message asks of the session. */
    private void acknowledge(Message m) throws JMSException {
        switch (ackMode) {
            case Session.CLIENT_ACKNOWLEDGE:
                lastUnacked = m;
                if (++sinceAck >= ackEvery) { m.acknowledge(); sinceAck = 0; lastUnacked = null; }
                break;
            case ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE:
                m.acknowledge();
                break;
            default:
        }
        if (o.txBatch > 0 && ++sinceAck >= o.txBatch) { session.commit(); sinceAck = 0; }
    }

    /** Records a bench message and returns true, or false for a foreign one (headers missing or unparsable). */
    private boolean bench(Message m, int di, long recvNs) throws JMSException {
        if (!headers(m, h)) return false;
        final int pi = producers.of(h.producer, Consumer::contractId);   // -1: an id that is no contract id
        if (pi < 0) return false;
        // body: length as received, whether it starts with the expected counter digits
        body(m, bi);
        final int bytes = bi.bytes;
        final boolean ok = bytes > 0 && digitsMatch((int) (h.seq % 1_000_000L), bi.head, 0, Math.min(6, bytes));
        final boolean redel = m.getJMSRedelivered();
        if (redel) redelivered++;
        if (o.records != null) record(pi, di, recvNs, ok, redel);
        RECEIVED.setOpaque(this, received + 1);
        return true;
    }

    /**
     * One record, from {@link #h} and {@link #bi}. Its bytecode stays under HotSpot's limit for
     * inlining a hot method (FreqInlineSize, 325 bytes on x86-64): at 328 bytes it had been a
     * call of its own in every message. The index is read once, a rare step is a method.
     */
    private void record(int pi, int di, long recvNs, boolean ok, boolean redel) {
        if (n == rSeq.length) grow();
        final int i = n;
        rProducer[i] = pi; rSeq[i] = h.seq; rBurst[i] = h.burst; rSent[i] = h.sent; rRecv[i] = recvNs;
        rBytes[i] = bi.bytes; rDest[i] = di;
        rFlags[i] = (byte) ((ok ? 1 : 0) | (redel ? 2 : 0) | (h.crcState << 2));
        rNonce[i] = h.nonce == null ? -1 : nonces.of(h.nonce, ANY); rCrcBody[i] = bi.crc;
        if (h.crcState == CRC_HEX) rCrcHeader[i] = h.crc;
        else if (h.crcState == CRC_RAW) keepRawCrc(i);
        n = i + 1;
    }

    private static final java.util.function.Predicate<String> ANY = x -> true;

    /** A bb_crc32 that is not 8 lowercase hex digits, kept as received for record i. */
    private void keepRawCrc(int i) {
        rawCrc.put(i, h.crcRaw);
    }

    private static boolean digitsMatch(int counter, byte[] data, int off, int k) {
        for (int i = 5; i >= 0; i--) {
            if (i < k && data[off + i] != (byte) ('0' + counter % 10)) return false;
            counter /= 10;
        }
        return true;
    }

    private void grow() {
        int cap = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(1024L, 2L * rSeq.length));
        rProducer = Arrays.copyOf(rProducer, cap); rBurst = Arrays.copyOf(rBurst, cap);
        rBytes = Arrays.copyOf(rBytes, cap); rDest = Arrays.copyOf(rDest, cap);
        rSeq = Arrays.copyOf(rSeq, cap); rSent = Arrays.copyOf(rSent, cap);
        rRecv = Arrays.copyOf(rRecv, cap); rFlags = Arrays.copyOf(rFlags, cap);
        rNonce = Arrays.copyOf(rNonce, cap); rCrcHeader = Arrays.copyOf(rCrcHeader, cap); rCrcBody = Arrays.copyOf(rCrcBody, cap);
    }

    /** Stop: halt delivery, acknowledge / commit what we hold, disconnect, write records, print done. */
    private void finish() {
        Common.stopTicker(ticker);
        if (conn != null) {
            quiesce();
            Common.closing = true;
            close();
        }
        synchronized (this) {
            if (o.records != null) writeRecords();
            done(true);
        }
    }

    /** Halts delivery (after a listener call in progress) and acknowledges / commits what the session holds. */
    void quiesce() {
        try {
            conn.stop();   // waits for a listener call in progress; nothing more is delivered
            synchronized (this) {
                if (o.txBatch > 0) {
                    if (sinceAck > 0) session.commit();
                } else if (lastUnacked != null) {
                    lastUnacked.acknowledge();
                }
                sinceAck = 0;
                lastUnacked = null;
            }
        } catch (JMSException e) {
            throw new RuntimeException((o.txBatch > 0 ? "commit" : "acknowledge") + " at stop failed: " + Connect.describe(e), e);
        }
    }

    void close() {
        try { conn.close(); } catch (JMSException e) { System.err.println("warning: close: " + Connect.describe(e)); }
    }

    /** The done line: the process's last when {@code last}. */
    void done(boolean last) {
        String rest = "\"received\":" + received + ",\"foreign\":" + foreign + ",\"redelivered\":" + redelivered;
        if (last) Common.emitLast("done", o.id, rest);
        else Common.emit("done", o.id, rest);
    }

    /** A received string as one TSV field: control characters (tab, newline) become '?'. */
    private static String field(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                StringBuilder b = new StringBuilder(s.length());
                for (int j = 0; j < s.length(); j++) {
                    char d = s.charAt(j);
                    b.append(d < 0x20 || d == 0x7f ? '?' : d);
                }
                return b.toString();
            }
        }
        return s;
    }

    void writeRecords() {
        try (Writer w = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(o.records), StandardCharsets.UTF_8), 1 << 16)) {
            w.write("#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest\tnonce\tcrc32_header\tcrc32_body\n");
            String[] nonceFields = new String[nonces.names.size()];
            for (int k = 0; k < nonceFields.length; k++) nonceFields[k] = field(nonces.names.get(k));
            StringBuilder sb = new StringBuilder(160);
            for (int i = 0; i < n; i++) {
                sb.setLength(0);
                sb.append(producers.names.get(rProducer[i])).append('\t').append(rSeq[i]).append('\t').append(rBurst[i])
                  .append('\t').append(rSent[i]).append('\t').append(rRecv[i]).append('\t').append(rBytes[i])
                  .append('\t').append(rFlags[i] & 1).append('\t').append((rFlags[i] >> 1) & 1)
                  .append('\t').append(o.destinations[rDest[i]])
                  .append('\t').append(rNonce[i] < 0 ? "-" : nonceFields[rNonce[i]]).append('\t');
                switch ((rFlags[i] >> 2) & 3) {
                    case CRC_HEX: Common.hex8(rCrcHeader[i], sb); break;
                    case CRC_RAW: sb.append(field(rawCrc.get(i))); break;
                    default: sb.append('-');
                }
                sb.append('\t');
                Common.hex8(rCrcBody[i], sb).append('\n');
                w.append(sb);
            }
        } catch (IOException e) {
            throw new RuntimeException("cannot write records to " + o.records + ": " + e.getMessage(), e);
        }
    }
}
