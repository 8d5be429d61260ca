package burstbench.clients;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Session;

import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQMessageProducer;
import org.apache.activemq.AsyncCallback;
import org.apache.activemq.command.ActiveMQBytesMessage;
import org.apache.activemq.command.ActiveMQQueue;
import org.apache.activemq.util.ByteSequence;

/**
 * burstbench producer over OpenWire (clients/contract.md): bursts of BytesMessages carrying
 * bb_producer / bb_seq / bb_burst / bb_sent_ns, the last of each burst confirmed by the broker.
 *
 * Non-persistent (and --async-send) messages go asynchronously; the burst's last one is sent
 * with an AsyncCallback and waited for, and since the broker handles a connection's commands
 * in order, every earlier message is then in too. Persistent messages are synchronous sends.
 * With --tx-batch the session is transacted and commits every N messages and at burst end.
 */
public final class Producer {
    private final Common.Opts o;
    private volatile Connection conn;
    private volatile Session session;
    private ActiveMQMessageProducer[] producers;
    private byte[] template;
    private Thread ticker;

    private volatile boolean stopRequested;
    private volatile boolean inBurst;      // the main thread is sending (a stop waits for it to notice)
    private volatile long sent;            // messages sent so far (read by the ticker)
    private int pendingTx;                 // sent in the open transaction
    private long[] sentNs = new long[0];   // records: bb_sent_ns per message, index = seq

    private Producer(Common.Opts o) { this.o = o; }

    public static void main(String[] args) {
        new Producer(Common.parse("producer", args)).run();
    }

    private void run() {
        Common.installHook(this::finish);
        Properties.check();
        boolean async = !o.persistent || o.asyncSend;
        Common.connectWithin(o, () -> {
            // full-speed asynchronous sends may wait in the socket buffer for the next one
            // (CorkedTcp; plain tcp:// only); paced sends go out one by one
            boolean cork = async && o.rate == 0 && !o.flushEach;
            CorkedTcp.holdSends = cork;
            ActiveMQConnectionFactory f = Common.factory(o, cork);
            f.setUseAsyncSend(async);
            f.setCopyMessageOnSend(false);     // every message is a fresh object: no defensive copy
            Connection c = f.createConnection();
            conn = c;
            c.setExceptionListener(e -> {
                Common.connectionFailed(o, e);
            });
            boolean tx = o.txBatch > 0;
            Session s = c.createSession(tx, tx ? Session.SESSION_TRANSACTED : Session.AUTO_ACKNOWLEDGE);
            ActiveMQMessageProducer[] ps = new ActiveMQMessageProducer[o.destinations.length];
            for (int i = 0; i < ps.length; i++) {
                ps[i] = (ActiveMQMessageProducer) s.createProducer(new ActiveMQQueue(o.destinations[i]));
                ps[i].setDeliveryMode(o.persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
            }
            c.start();   // sends ConnectionInfo: authentication happens here at the latest
            session = s;
            producers = ps;
            return c;
        });
        template = new byte[o.size];
        Arrays.fill(template, (byte) 'x');
        if (o.records != null) sentNs = new long[(int) Math.min((long) o.count * o.bursts, 1 << 20)];
        Common.emit("ready", o.id, "\"role\":\"producer\"");
        ticker = Common.ticker(o.id, "sent", () -> sent);
        try {
            if (o.gate) {
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                int burst = 0;
                String line;
                while (!stopRequested && (line = in.readLine()) != null) {
                    line = line.trim();
                    if (line.equals("go")) sendBurst(burst++);
                    else if (line.equals("stop")) break;
                    else if (!line.isEmpty()) System.err.println("warning: ignoring stdin line '" + line + "'");
                }
            } else {
                for (int b = 0; b < o.bursts && !stopRequested; b++) sendBurst(b);
            }
        } catch (JMSException | IOException | InterruptedException e) {
            inBurst = false;
            Common.die(1, "error: send to " + o.url + " failed: " + Common.describe(e));
            return;
        }
        Common.finishAndExit();
    }

    private void sendBurst(int burst) throws JMSException, InterruptedException {
        inBurst = true;
        try {
            sendBurst0(burst);
        } finally {
            inBurst = false;
        }
    }

    private void sendBurst0(int burst) throws JMSException, InterruptedException {
        final int count = o.count, nd = producers.length;
        final long base = (long) burst * count;
        final boolean tx = o.txBatch > 0;
        final boolean confirmLast = !tx && (!o.persistent || o.asyncSend);
        final double nsPerMsg = o.rate > 0 ? 1e9 / o.rate : 0;
        final Properties props = new Properties(o.id, burst);
        final long start = Common.nowNs();
        long first = 0, last = 0;
        int i = 0;
        for (; i < count; i++) {
            if (stopRequested) break;
            long seq = base + i, stamp, now;
            if (nsPerMsg > 0) {
                stamp = start + (long) (i * nsPerMsg);
                now = Common.nowNs();
                while (now < stamp) {
                    LockSupport.parkNanos(stamp - now);
                    now = Common.nowNs();
                }
            } else {
                stamp = now = Common.nowNs();
            }
            ActiveMQBytesMessage m = (ActiveMQBytesMessage) session.createBytesMessage();
            byte[] body = template.clone();
            Common.counter(seq, body, body.length);
            m.setMarshalledProperties(props.encode(seq, stamp));
            m.setContent(new ByteSequence(body));
            ActiveMQMessageProducer p = producers[(int) (seq % nd)];
            if (i == 0) first = now;
            last = now;
            if (confirmLast && i == count - 1) {
                sendConfirmed(p, m);
            } else {
                p.send(m);
                if (tx && ++pendingTx >= o.txBatch) { session.commit(); pendingTx = 0; }
            }
            record(seq, stamp);
        }
        if (tx && pendingTx > 0) { session.commit(); pendingTx = 0; }
        if (i == count) {
            Common.emit("burst", o.id, "\"burst\":" + burst + ",\"sent\":" + count + ",\"first_ns\":" + first + ",\"last_ns\":" + last);
        }
    }

    /**
     * The four bench properties in OpenWire's marshalled form (MarshallingSupport's primitive
     * map: an int count, then per entry a UTF key, the STRING type byte and a UTF value),
     * written straight into one array per message. activemq-client would otherwise build a
     * HashMap, a stream and two Strings per message and marshal them on send: the same bytes,
     * several times the work. check() compares with activemq-client's own decoding.
     */
    static final class Properties {
        private static final byte STRING = 9;   // MarshallingSupport.STRING_TYPE
        private final byte[] head;              // count, producer, burst, the seq key and type
        private final byte[] mid;               // the sent key and type
        private final int[] tens = new int[20];

        Properties(String producer, int burst) {
            java.io.ByteArrayOutputStream h = new java.io.ByteArrayOutputStream(64);
            java.io.ByteArrayOutputStream t = new java.io.ByteArrayOutputStream(16);
            try {
                java.io.DataOutputStream d = new java.io.DataOutputStream(h);
                d.writeInt(4);
                d.writeUTF(Common.P_PRODUCER); d.writeByte(STRING); d.writeUTF(producer);
                d.writeUTF(Common.P_BURST); d.writeByte(STRING); d.writeUTF(Integer.toString(burst));
                d.writeUTF(Common.P_SEQ); d.writeByte(STRING);
                d = new java.io.DataOutputStream(t);
                d.writeUTF(Common.P_SENT); d.writeByte(STRING);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            head = h.toByteArray();
            mid = t.toByteArray();
        }

        ByteSequence encode(long seq, long sent) {
            int ns = digits(seq), nt = digits(sent);
            byte[] b = new byte[head.length + 2 + ns + mid.length + 2 + nt];
            System.arraycopy(head, 0, b, 0, head.length);
            int at = putUtfDigits(b, head.length, seq, ns);
            System.arraycopy(mid, 0, b, at, mid.length);
            putUtfDigits(b, at + mid.length, sent, nt);
            return new ByteSequence(b);
        }

        private static int digits(long v) {   // v >= 0
            int n = 1;
            while (v >= 10) { v /= 10; n++; }
            return n;
        }

        /** A UTF string of the decimal digits of v (ASCII: length = bytes); returns the end. */
        private static int putUtfDigits(byte[] b, int at, long v, int n) {
            b[at] = (byte) (n >>> 8);
            b[at + 1] = (byte) n;
            int end = at + 2 + n;
            for (int i = end - 1; i >= at + 2; i--) { b[i] = (byte) ('0' + v % 10); v /= 10; }
            return end;
        }

        /** activemq-client decodes what encode() wrote as the map setProperty would have made. */
        static void check() {
            long seq = 1234567890123L, sent = 1700000000123456789L;
            try {
                ByteSequence bs = new Properties("px-1", 7).encode(seq, sent);
                java.util.Map<String, Object> got = org.apache.activemq.util.MarshallingSupport.unmarshalPrimitiveMap(
                        new java.io.DataInputStream(new java.io.ByteArrayInputStream(bs.data, bs.offset, bs.length)));
                java.util.Map<String, String> want = java.util.Map.of(Common.P_PRODUCER, "px-1", Common.P_BURST, "7",
                        Common.P_SEQ, Long.toString(seq), Common.P_SENT, Long.toString(sent));
                java.util.Map<String, String> text = new java.util.HashMap<>();
                got.forEach((k, v) -> text.put(k, String.valueOf(v)));   // (strings may decode as UTF8Buffer)
                if (!want.equals(text)) throw new IllegalStateException("decoded " + got + ", expected " + want);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Sends with a broker receipt (AsyncCallback) and waits for it. */
    private void sendConfirmed(ActiveMQMessageProducer p, ActiveMQBytesMessage m) throws JMSException, InterruptedException {
        final CountDownLatch done = new CountDownLatch(1);
        final JMSException[] failure = new JMSException[1];
        p.send(m, new AsyncCallback() {
            @Override public void onSuccess() { done.countDown(); }
            @Override public void onException(JMSException e) { failure[0] = e; done.countDown(); }
        });
        while (!done.await(100, TimeUnit.MILLISECONDS)) {
            if (stopRequested) return;   // SIGTERM while the broker holds us back
        }
        if (failure[0] != null) throw failure[0];
    }

    private void record(long seq, long stamp) {
        if (o.records != null) {
            if (seq >= sentNs.length) sentNs = Arrays.copyOf(sentNs, (int) Math.min(Integer.MAX_VALUE - 8, Math.max(seq + 1, 2L * sentNs.length)));
            sentNs[(int) seq] = stamp;
        }
        sent = seq + 1;   // seq runs on across bursts from 0
    }

    /** Stop: finish the send loop, commit what is open, disconnect, write records, print done. */
    private void finish() {
        stopRequested = true;
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (inBurst && System.nanoTime() < deadline) LockSupport.parkNanos(1_000_000L);
        boolean loopDone = !inBurst;
        Common.stopTicker(ticker);
        Common.closing = true;
        if (conn != null) {
            try {
                if (loopDone && session != null && pendingTx > 0) { session.commit(); pendingTx = 0; }
            } catch (JMSException e) {
                throw new RuntimeException("commit failed: " + Common.describe(e), e);
            }
            try { conn.close(); } catch (JMSException e) { System.err.println("warning: close: " + Common.describe(e)); }
        }
        long n = sent;
        if (o.records != null) writeRecords(n);
        Common.emitLast("done", o.id, "\"sent\":" + n);
    }

    private void writeRecords(long n) {
        try (Writer w = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(o.records), StandardCharsets.US_ASCII), 1 << 16)) {
            w.write("#producer\tseq\tburst\tsent_ns\n");
            StringBuilder sb = new StringBuilder(64);
            for (long s = 0; s < n; s++) {
                sb.setLength(0);
                sb.append(o.id).append('\t').append(s).append('\t').append(s / o.count).append('\t').append(sentNs[(int) s]).append('\n');
                w.append(sb);
            }
        } catch (IOException e) {
            throw new RuntimeException("cannot write records to " + o.records + ": " + e.getMessage(), e);
        }
    }
}
