package burstbench.clients;

import java.io.IOException;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32;

import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;

import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQMessageProducer;
import org.apache.activemq.AsyncCallback;

/**
 * burstbench producer over OpenWire (clients/contract.md): plain JMS on activemq-client with
 * ActiveMQ's defaults. Bursts of BytesMessages with the bench's string properties, the last of
 * each burst confirmed by the broker: sent with an {@link AsyncCallback} and waited for when
 * sends are asynchronous (non-persistent, or --async-send), a synchronous send otherwise, a
 * commit with --tx-batch (README.md). With --connections N > 1 the process holds N such
 * producers, each a slot ({@link ProducerSlots}). {@link #connectionFactory()} and
 * {@link #message} are the hooks a variant overrides.
 */
public class Producer {
    static final Opts.Program PROGRAM = Opts.Program.stock("producer");

    protected final Opts o;
    private volatile Connection conn;
    protected volatile Session session;   // the one session every message is created and sent in
    private MessageProducer[] producers;
    private byte[] body;
    private final CRC32 crc = new CRC32();
    private Thread ticker;

    volatile boolean stopRequested;
    volatile boolean inBurst;       // the send loop is sending (a stop waits for it to notice)
    volatile long sent;             // messages sent so far (read by the ticker)
    private int pendingTx;          // sent in the open transaction
    private Sent log;               // the records (with --records)
    private int burstCount;         // --count, or the messages of a --duration burst
    ProducerSlots.Slot slot;        // a slot of several (--connections N > 1): its group, orders and start

    protected Producer(Opts o) { this.o = o; }

    public static void main(String[] args) {
        Opts o = Opts.parse("producer", args, PROGRAM);
        if (o.connections > 1) new ProducerSlots(o).run();
        else new Producer(o).run();
    }

    /** The connection factory; run() then adds --async-send (useAsyncSend). */
    protected ActiveMQConnectionFactory connectionFactory() { return Connect.factory(o); }

    /** Message {@code seq} of burst {@code burst}, stamped {@code sentNs}: a BytesMessage of the
     * body (a counter, then 'x'), the bench headers, nonce and body CRC-32 as string properties. */
    protected Message message(int burst, long seq, long sentNs) throws JMSException {
        BytesMessage m = session.createBytesMessage();
        Common.counter(seq, body, body.length);
        m.writeBytes(body);   // (copies: the array is reused)
        m.setStringProperty(Common.P_PRODUCER, o.id);
        m.setStringProperty(Common.P_SEQ, Long.toString(seq));
        m.setStringProperty(Common.P_BURST, Integer.toString(burst));
        m.setStringProperty(Common.P_SENT, Long.toString(sentNs));
        m.setStringProperty(Common.P_NONCE, o.nonce);
        m.setStringProperty(Common.P_CRC, Common.hex8(crc32(body, 0, body.length)));
        return m;
    }

    /** CRC-32 (IEEE, as zlib's crc32) of b[off..off+len). */
    protected final int crc32(byte[] b, int off, int len) { crc.reset(); crc.update(b, off, len); return (int) crc.getValue(); }

    /** The variant's connection factory, with --async-send (useAsyncSend). */
    ActiveMQConnectionFactory factoryForRun() {
        ActiveMQConnectionFactory f = connectionFactory();
        if (o.asyncSend) f.setUseAsyncSend(true);
        return f;
    }

    /** Opens this producer's connection, its session and a MessageProducer per queue. */
    Connection connect(ActiveMQConnectionFactory f) throws JMSException {
        Connection c = f.createConnection();
        conn = c;
        Failover.reconnectLines(c, o);
        c.setExceptionListener(e -> { if (slot != null) slot.group().failed(this, e); else Connect.connectionFailed(o, e); });
        boolean tx = o.txBatch > 0;
        Session s = c.createSession(tx, tx ? Session.SESSION_TRANSACTED : Session.AUTO_ACKNOWLEDGE);
        MessageProducer[] ps = new MessageProducer[o.destinations.length];
        for (int i = 0; i < ps.length; i++) {
            ps[i] = s.createProducer(s.createQueue(o.destinations[i]));
            ps[i].setDeliveryMode(o.persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
        }
        c.start();   // sends ConnectionInfo: authentication happens here at the latest
        session = s;
        producers = ps;
        return c;
    }

    /** The body, the burst's length and room for the records; then the ready line. */
    void prepare() {
        body = new byte[o.size];
        java.util.Arrays.fill(body, (byte) 'x');
        burstCount = o.burstCount();
        if (o.records != null) log = new Sent(o, burstCount);
        Common.emit("ready", o.id, "\"role\":\"producer\"," + Connect.nodelayJson(conn, o));
    }

    protected final void run() {
        Common.installHook(this::finish);
        Connect.connectWithin(o, () -> connect(factoryForRun()));
        prepare();
        ticker = Runs.ticker(o.id, "sent", () -> sent);
        try {
            Runs.bursts(o, () -> !stopRequested, this::sendBurst);
        } catch (JMSException | IOException | InterruptedException e) {
            inBurst = false;
            Common.die(1, "error: send to " + o.url + " failed: " + Connect.describe(e));
            return;
        }
        Common.finishAndExit();
    }

    void sendBurst(int burst) throws JMSException, InterruptedException {
        inBurst = true;
        try { sendBurst0(burst); } finally { inBurst = false; }
    }

    private void sendBurst0(int burst) throws JMSException, InterruptedException {
        final int count = burstCount, nd = producers.length;
        final long base = (long) burst * count;
        final boolean tx = o.txBatch > 0;
        final boolean confirmLast = !tx && (!o.persistent || o.asyncSend);
        final double nsPerMsg = o.rate > 0 ? 1e9 / o.rate : 0;
        final long start = slot == null ? Common.nowNs() : slot.start();
        final long end = o.duration > 0 && nsPerMsg == 0 ? start + (long) (o.duration * 1e9) : 0;  // a timed flood
        long first = 0, last = 0;
        int i = 0;   // (after the loop: the messages sent)
        for (; i < count && !stopRequested; i++) {
            long seq = base + i, stamp, now;
            if (nsPerMsg > 0) now = Runs.sleepUntil(stamp = start + (long) (i * nsPerMsg));
            else stamp = now = Common.nowNs();
            final boolean finalOne = i == count - 1 || (end != 0 && now >= end);
            Message m = message(burst, seq, stamp);
            MessageProducer p = producers[(int) (seq % nd)];
            if (i == 0) first = now;
            last = now;
            if (confirmLast && finalOne) {
                Connect.sendConfirmed((ActiveMQMessageProducer) p, m, () -> stopRequested);
            } else {
                p.send(m);
                if (tx && ++pendingTx >= o.txBatch) { session.commit(); pendingTx = 0; }
            }
            if (log != null) log.record(seq, stamp, now);
            sent = seq + 1;   // seq runs on across bursts from 0
            if (finalOne) { i++; break; }
        }
        if (tx && pendingTx > 0) { session.commit(); pendingTx = 0; }
        if (i == count || (end != 0 && last >= end))
            Common.emit("burst", o.id, "\"burst\":" + burst + ",\"sent\":" + i + ",\"first_ns\":" + first + ",\"last_ns\":" + last);
    }

    /** Stop: finish the send loop, commit what is open, disconnect, write records, print done. */
    private void finish() {
        stopRequested = true;
        boolean loopDone = awaitLoop(System.nanoTime() + 5_000_000_000L);
        Runs.stopTicker(ticker);
        Common.closing = true;
        close(loopDone);
        report(true);
    }

    /** Waits (until {@code deadline}, System.nanoTime) for the send loop to notice a stop; true if it has. */
    boolean awaitLoop(long deadline) {
        while (inBurst && System.nanoTime() < deadline) LockSupport.parkNanos(1_000_000L);
        return !inBurst;
    }

    /** Commits what is open (once the send loop has stopped) and disconnects. */
    void close(boolean loopDone) {
        if (conn == null) return;
        try {
            if (loopDone && session != null && pendingTx > 0) { session.commit(); pendingTx = 0; }
        } catch (JMSException e) {
            throw new RuntimeException("commit failed: " + Connect.describe(e), e);
        }
        try { conn.close(); } catch (JMSException e) { System.err.println("warning: close: " + Connect.describe(e)); }
    }

    /** Writes the records and prints done: the process's last line when {@code last}. */
    void report(boolean last) {
        long n = sent;
        if (o.records != null) writeRecords(n);
        Common.emit(last, "done", o.id, "\"sent\":" + n);
    }

    void writeRecords(long n) { log.write(o.records, o.id, n, burstCount); }
}
