package burstbench.clients;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Session;

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
    private final Received kept;        // the records (and the producers' names, with or without)

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
        kept = new Received(cap);
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

    /** Reads the bench headers into {@code h}; false for a foreign message ({@link Headers#read}). */
    protected boolean headers(Message m, Headers h) throws JMSException { return Headers.read(m, h); }

    /** The body's length, first bytes and CRC-32 into {@code b} ({@link BodyInfo#read}). */
    protected void body(Message m, BodyInfo b) throws JMSException { BodyInfo.read(m, b); }

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
        final int pi = kept.producer(h.producer);   // -1: an id that is no contract id
        if (pi < 0) return false;
        body(m, bi);
        final boolean redel = m.getJMSRedelivered();
        if (redel) redelivered++;
        if (o.records != null) kept.add(h, bi, pi, di, recvNs, redel);
        RECEIVED.setOpaque(this, received + 1);
        return true;
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

    void writeRecords() {
        kept.write(o.records, o.destinations);
    }
}
