package burstbench.clients;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Session;

import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * burstbench consumer over OpenWire (clients/contract.md): plain JMS on activemq-client with
 * ActiveMQ's defaults. One session, a MessageConsumer and MessageListener per queue, run in the
 * session's thread (ActiveMQ's default; README.md says why never the transport's); records in
 * {@link Received}. With --connections N > 1 the process holds N such consumers, each a slot
 * ({@link ConsumerSlots}). {@link #connectionFactory()}, {@link #createSession},
 * {@link #headers} and {@link #body} are the hooks a variant overrides.
 */
public class Consumer {
    static final Opts.Program PROGRAM = Opts.Program.stock("consumer");

    protected final Opts o;
    /** JMS / ActiveMQ ack mode, or SESSION_TRANSACTED. */
    protected final int ackMode;
    private final long target;          // stop after this many bench messages (0 = until stopped)
    private final CountDownLatch reached = new CountDownLatch(1);
    volatile Connection conn;
    private volatile Acks acks;         // what a message asks of the session (null: nothing)
    private Thread ticker;
    private final AtomicBoolean failing = new AtomicBoolean();   // failed() acts once
    /** A slot of several (--connections N > 1): its group; null for the process's one connection. */
    ConsumerSlots group;

    // the listener's state (one session's calls, one at a time); the writers of the records
    // (finish, failed) hold 'this', one after the other, once no listener call can run
    private final Headers h = new Headers();
    private final BodyInfo bi = new BodyInfo();
    private final Received kept;        // the counts, the records (with --records), the names seen

    protected Consumer(Opts o) {
        this.o = o;
        ackMode = Connect.ackMode(o);
        target = o.slot > 0 || o.gate ? 0 : (long) o.count * o.bursts;   // slots stop together (ConsumerSlots)
        kept = Received.forRun(o);
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

    /** The bench headers into {@code h} (false: a foreign message); the body's facts into {@code b}. */
    protected boolean headers(Message m, Headers h) throws JMSException { return Headers.read(m, h); }
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
        acks = Acks.of(o, ackMode, s);
        for (int i = 0; i < o.destinations.length; i++) {
            final int di = i;
            s.createConsumer(s.createQueue(o.destinations[i])).setMessageListener(m -> onMessage(m, di));
        }
        c.start();
        return c;
    }

    void ready() { Common.emit("ready", o.id, "\"role\":\"consumer\"," + Connect.nodelayJson(conn, o)); }

    protected final void run() {
        Common.installHook(this::finish);
        Connect.connectWithin(o, () -> connect(factoryForRun()));
        ready();
        ticker = Runs.ticker(o.id, "received", kept::received);
        try {
            if (o.gate) Runs.awaitStop();
            else reached.await();   // with --count 0 only SIGTERM ends this
        } catch (IOException | InterruptedException e) {
            Common.die(1, "error: " + Connect.describe(e));
            return;
        }
        Common.finishAndExit();
    }

    /**
     * A dropped connection (no failover): the records of what was received, then exit 1. The
     * listener may still run: Connection.close returns once a call in progress has completed and
     * lets no other start. In a thread of its own: this runs in the connection's executor, which
     * close() shuts down.
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
     * Every message, in arrival order, one at a time (JMS: a session serialises its listeners):
     * no lock of its own; a stop and a dropped connection wait for a call in progress through
     * the library. Rare steps (a new producer, acknowledgements) are methods of their own.
     */
    private void onMessage(Message m, int di) {
        final long recvNs = Common.nowNs();
        try {
            if (!bench(m, di, recvNs)) kept.foreign();
            if (acks != null) acks.after(m);
        } catch (JMSException | RuntimeException e) {
            Common.die(1, "error: receiving from " + o.url + " failed: " + Connect.describe(e));
        }
        if (target > 0 && kept.received() >= target) reached.countDown();
    }

    /** Records a bench message and returns true, or false for a foreign one (headers missing or unparsable). */
    private boolean bench(Message m, int di, long recvNs) throws JMSException {
        if (!headers(m, h)) return false;
        final int pi = kept.producer(h.producer);   // -1: an id that is no contract id
        if (pi < 0) return false;
        body(m, bi);
        final boolean redel = m.getJMSRedelivered();
        if (o.records != null) kept.add(h, bi, pi, di, recvNs, redel);
        kept.count(redel);
        return true;
    }

    /** Stop: halt delivery, acknowledge / commit what we hold, disconnect, write records, print done. */
    private void finish() {
        Runs.stopTicker(ticker);
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
            synchronized (this) { if (acks != null) acks.atStop(); }
        } catch (JMSException e) {
            throw new RuntimeException((o.txBatch > 0 ? "commit" : "acknowledge") + " at stop failed: " + Connect.describe(e), e);
        }
    }

    void close() {
        try { conn.close(); } catch (JMSException e) { System.err.println("warning: close: " + Connect.describe(e)); }
    }

    /** The done line: the process's last when {@code last}. */
    void done(boolean last) {
        Common.emit(last, "done", o.id, kept.counts());
    }

    /** Bench messages received so far (any thread). */
    long received() { return kept.received(); }

    void writeRecords() { kept.write(o.records, o.destinations); }
}
