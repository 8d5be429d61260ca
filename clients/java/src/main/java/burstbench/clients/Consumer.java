package burstbench.clients;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import jakarta.jms.BytesMessage;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;

import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQPrefetchPolicy;
import org.apache.activemq.ActiveMQSession;
import org.apache.activemq.command.ActiveMQBytesMessage;
import org.apache.activemq.command.ActiveMQMessage;
import org.apache.activemq.command.ActiveMQQueue;
import org.apache.activemq.util.ByteSequence;

/**
 * burstbench consumer over OpenWire (clients/contract.md).
 *
 * One session, one MessageConsumer + MessageListener per queue. The listener runs in the
 * session's thread, never in the connection's transport (reader) thread: an acknowledgement
 * is a socket write, and a reader blocked in a write stops reading, so the broker's writes to
 * us stall too and neither side moves again (seen: 256 queues, a thread dump showed the
 * transport thread in TcpTransport.oneway from afterMessageIsConsumed). A commit (--tx-batch)
 * also needs the reader free, to read the broker's answer.
 * auto acknowledges each message (no optimizeAcknowledge: see run()). Records go to
 * primitive arrays and are written at stop.
 */
public final class Consumer {
    private final Common.Opts o;
    private final int ackMode;          // JMS / ActiveMQ ack mode, or SESSION_TRANSACTED
    private final int ackEvery;         // client mode: acknowledge at least every ceil(prefetch/2)
    private final long target;          // stop after this many bench messages (0 = until stopped)
    private final CountDownLatch reached = new CountDownLatch(1);
    private volatile Connection conn;
    private volatile Session session;
    private Thread ticker;

    // --- state guarded by 'this' (the listener is synchronized: one message at a time)
    private volatile long received;     // bench messages (read by the ticker)
    private long foreign, redelivered;
    private int sinceAck;
    private Message lastUnacked;
    private final Map<String, Integer> producerIdx = new HashMap<>();
    private final List<String> producerNames = new ArrayList<>();
    private String lastProducer;
    private int lastProducerIdx;
    // records, one slot per bench message
    private int n;
    private int[] rProducer, rBurst, rBytes, rDest;
    private long[] rSeq, rSent, rRecv;
    private byte[] rFlags;              // bit 0 body_ok, bit 1 redelivered

    private Consumer(Common.Opts o) {
        this.o = o;
        switch (o.txBatch > 0 ? "tx" : o.ack) {
            case "tx": ackMode = Session.SESSION_TRANSACTED; break;
            case "client": ackMode = Session.CLIENT_ACKNOWLEDGE; break;
            case "client-individual": ackMode = ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE; break;
            case "dups-ok": ackMode = Session.DUPS_OK_ACKNOWLEDGE; break;
            default: ackMode = Session.AUTO_ACKNOWLEDGE;
        }
        ackEvery = Math.max(1, (o.prefetch + 1) / 2);
        target = o.gate ? 0 : (long) o.count * o.bursts;
        int cap = o.records == null ? 0 : (int) Math.min(target > 0 ? target : 1 << 16, 1 << 20);
        rProducer = new int[cap]; rBurst = new int[cap]; rBytes = new int[cap]; rDest = new int[cap];
        rSeq = new long[cap]; rSent = new long[cap]; rRecv = new long[cap]; rFlags = new byte[cap];
    }

    public static void main(String[] args) {
        new Consumer(Common.parse("consumer", args)).run();
    }

    private void run() {
        Common.installHook(this::finish);
        final boolean tx = o.txBatch > 0;
        Common.connectWithin(o, () -> {
            // auto / dups-ok: an ack may wait in the socket buffer for the next write while the
            // session already holds the next message (CorkedTcp); plain tcp:// only
            final boolean cork = !o.flushEach && !tx
                    && (ackMode == Session.AUTO_ACKNOWLEDGE || ackMode == Session.DUPS_OK_ACKNOWLEDGE);
            ActiveMQConnectionFactory f = Common.factory(o, cork);
            ActiveMQPrefetchPolicy pp = new ActiveMQPrefetchPolicy();
            pp.setQueuePrefetch(o.prefetch);
            f.setPrefetchPolicy(pp);
            f.setAlwaysSessionAsync(true);   // see the class comment
            f.setUseDedicatedTaskRunner(true);   // one thread for the session: ~20% faster than the pool's hand-offs
            // No optimizeAcknowledge: draining a backlog it paced the broker to its ack schedule
            // (~7k msg/s against ~20k without) and, under load, raced activemq-client's
            // delivery thread into acks the broker refused ("Unmatched acknowledge").
            Connection c = f.createConnection();
            conn = c;
            c.setExceptionListener(e -> {
                Common.connectionFailed(o, e);
            });
            Session s = c.createSession(tx, ackMode);
            session = s;
            if (cork) CorkedTcp.watch((ActiveMQSession) s);
            for (int i = 0; i < o.destinations.length; i++) {
                final int di = i;
                s.createConsumer(new ActiveMQQueue(o.destinations[i])).setMessageListener(m -> onMessage(m, di));
            }
            c.start();
            return c;
        });
        Common.emit("ready", o.id, "\"role\":\"consumer\"");
        ticker = Common.ticker(o.id, "received", () -> received);
        try {
            if (o.gate) {
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                String line;
                while ((line = in.readLine()) != null) {
                    line = line.trim();
                    if (line.equals("stop")) break;
                    if (!line.isEmpty()) System.err.println("warning: ignoring stdin line '" + line + "'");
                }
            } else {
                reached.await();   // with --count 0 only SIGTERM ends this
            }
        } catch (IOException | InterruptedException e) {
            Common.die(1, "error: " + Common.describe(e));
            return;
        }
        Common.finishAndExit();
    }

    /** Every message, in arrival order (serialised: one session, and synchronized for the start-up redispatch). */
    private synchronized void onMessage(Message m, int di) {
        final long recvNs = Common.nowNs();
        try {
            if (!bench(m, di, recvNs)) foreign++;
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
        } catch (JMSException | RuntimeException e) {
            Common.die(1, "error: receiving from " + o.url + " failed: " + Common.describe(e));
        }
        if (target > 0 && received >= target) reached.countDown();
    }

    /** Records a bench message and returns true, or false for a foreign one (headers missing or unparsable). */
    private boolean bench(Message m, int di, long recvNs) throws JMSException {
        String producer, seqS, burstS, sentS;
        long seq, sent;
        int burst;
        if (m instanceof ActiveMQMessage && fast.read((ActiveMQMessage) m)) {
            producer = fast.producer;
            seq = fast.seq;
            burst = fast.burst;
            sent = fast.sent;
        } else try {
            producer = prop(m, Common.P_PRODUCER);
            seqS = prop(m, Common.P_SEQ);
            burstS = prop(m, Common.P_BURST);
            sentS = prop(m, Common.P_SENT);
            if (producer == null || seqS == null || burstS == null || sentS == null) return false;
            seq = Long.parseLong(seqS);
            burst = Integer.parseInt(burstS);
            sent = Long.parseLong(sentS);
            if (seq < 0 || burst < 0) return false;
        } catch (NumberFormatException | JMSException e) {
            return false;
        }
        int pi;
        if (producer.equals(lastProducer)) {
            pi = lastProducerIdx;
        } else {
            Integer idx = producerIdx.get(producer);
            if (idx == null) {
                if (!Common.ID.matcher(producer).matches()) return false;
                idx = producerNames.size();
                producerNames.add(producer);
                producerIdx.put(producer, idx);
            }
            pi = idx;
            lastProducer = producer;
            lastProducerIdx = pi;
        }
        // body: length as received, and whether it starts with the expected counter digits
        int bytes = 0;
        boolean ok = false;
        int c = (int) (seq % 1_000_000L);
        if (m instanceof ActiveMQBytesMessage && !((ActiveMQBytesMessage) m).isCompressed()) {
            ByteSequence bs = ((ActiveMQBytesMessage) m).getContent();
            if (bs != null) {
                bytes = bs.length;
                ok = bytes > 0 && digitsMatch(c, bs.data, bs.offset, Math.min(6, bytes));
            }
        } else if (m instanceof BytesMessage) {
            BytesMessage bm = (BytesMessage) m;
            bytes = (int) bm.getBodyLength();
            byte[] head = new byte[Math.min(6, bytes)];
            bm.readBytes(head);
            ok = bytes > 0 && digitsMatch(c, head, 0, head.length);
        } else if (m instanceof TextMessage) {
            String t = ((TextMessage) m).getText();
            if (t != null) {
                byte[] b = t.getBytes(StandardCharsets.UTF_8);
                bytes = b.length;
                ok = bytes > 0 && digitsMatch(c, b, 0, Math.min(6, bytes));
            }
        }
        boolean redel = m.getJMSRedelivered();
        if (redel) redelivered++;
        if (o.records != null) {
            if (n == rSeq.length) grow();
            rProducer[n] = pi; rSeq[n] = seq; rBurst[n] = burst; rSent[n] = sent; rRecv[n] = recvNs;
            rBytes[n] = bytes; rFlags[n] = (byte) ((ok ? 1 : 0) | (redel ? 2 : 0)); rDest[n] = di;
            n++;
        }
        received = received + 1;
        return true;
    }

    private final FastProperties fast = new FastProperties();

    /**
     * The four bench properties read straight from the message's marshalled property bytes
     * (MarshallingSupport's primitive map: an int count, then per entry a UTF key, a type byte
     * and the value), without building activemq-client's HashMap and Strings per message.
     * Anything it does not expect (a bench property that is not a plain ASCII string, a map
     * or list value, truncated bytes) returns false, and the caller asks activemq-client.
     */
    static final class FastProperties {
        private static final byte[][] KEYS = {
            Common.P_PRODUCER.getBytes(StandardCharsets.US_ASCII), Common.P_SEQ.getBytes(StandardCharsets.US_ASCII),
            Common.P_BURST.getBytes(StandardCharsets.US_ASCII), Common.P_SENT.getBytes(StandardCharsets.US_ASCII)};
        String producer;
        long seq, sent;
        int burst;
        private byte[] producerRaw = new byte[0];

        boolean read(ActiveMQMessage m) {
            ByteSequence bs = m.getMarshalledProperties();
            if (bs == null || bs.length < 4) return false;
            final byte[] d = bs.data;
            final int end = bs.offset + bs.length;
            int p = bs.offset;
            int count = ((d[p] & 0xff) << 24) | ((d[p + 1] & 0xff) << 16) | ((d[p + 2] & 0xff) << 8) | (d[p + 3] & 0xff);
            p += 4;
            int found = 0;
            for (int e = 0; e < count; e++) {
                if (p + 2 > end) return false;
                int kl = ((d[p] & 0xff) << 8) | (d[p + 1] & 0xff);
                int ks = p + 2;
                p = ks + kl;
                if (p >= end) return false;
                int which = -1;
                for (int k = 0; k < KEYS.length; k++) {
                    if (KEYS[k].length == kl && java.util.Arrays.equals(KEYS[k], 0, kl, d, ks, p)) { which = k; break; }
                }
                byte type = d[p++];
                if (which >= 0 && type != 9) return false;   // a bench property, not a short string
                int skip;
                switch (type) {
                    case 0: skip = 0; break;                    // null
                    case 1: case 2: skip = 1; break;            // boolean, byte
                    case 3: case 4: skip = 2; break;            // char, short
                    case 5: case 8: skip = 4; break;            // int, float
                    case 6: case 7: skip = 8; break;            // long, double
                    case 9:                                     // string (UTF, 2-byte length)
                        if (p + 2 > end) return false;
                        skip = 2 + (((d[p] & 0xff) << 8) | (d[p + 1] & 0xff));
                        break;
                    case 10: case 13:                           // byte array, big string (4-byte length)
                        if (p + 4 > end) return false;
                        skip = 4 + (((d[p] & 0xff) << 24) | ((d[p + 1] & 0xff) << 16) | ((d[p + 2] & 0xff) << 8) | (d[p + 3] & 0xff));
                        break;
                    default: return false;                      // map, list, ...
                }
                if (skip < 0 || p + skip > end) return false;
                if (which >= 0 && !value(which, d, p + 2, skip - 2)) return false;
                if (which >= 0) found |= 1 << which;
                p += skip;
            }
            return found == 15;
        }

        private boolean value(int which, byte[] d, int at, int len) {
            if (which == 0) {
                if (len == producerRaw.length && java.util.Arrays.equals(producerRaw, 0, len, d, at, at + len)) return true;
                for (int i = at; i < at + len; i++) if (d[i] < 0) return false;   // not ASCII
                producerRaw = java.util.Arrays.copyOfRange(d, at, at + len);
                producer = new String(producerRaw, StandardCharsets.US_ASCII);
                return true;
            }
            if (len < 1 || len > 19) return false;   // (bb_sent_ns has 19 digits)
            long v = 0;
            for (int i = at; i < at + len; i++) {
                int c = d[i] - '0';
                if (c < 0 || c > 9) return false;
                v = v * 10 + c;
            }
            if (v < 0) return false;   // past Long.MAX_VALUE
            if (which == 1) seq = v;
            else if (which == 2) { if (v > Integer.MAX_VALUE) return false; burst = (int) v; }
            else sent = v;
            return true;
        }
    }

    /** A property as a string; straight from the map for ActiveMQ messages (no selector-expression wrapper). */
    private static String prop(Message m, String name) throws JMSException {
        if (m instanceof ActiveMQMessage) {
            Object v;
            try { v = ((ActiveMQMessage) m).getProperty(name); } catch (IOException e) { throw new JMSException(e.toString()); }
            return v == null ? null : v.toString();
        }
        return m.getStringProperty(name);
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
    }

    /** Stop: halt delivery, acknowledge / commit what we hold, disconnect, write records, print done. */
    private void finish() {
        Common.stopTicker(ticker);
        if (conn != null) {
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
                throw new RuntimeException((o.txBatch > 0 ? "commit" : "acknowledge") + " at stop failed: " + Common.describe(e), e);
            }
            Common.closing = true;
            try { conn.close(); } catch (JMSException e) { System.err.println("warning: close: " + Common.describe(e)); }
        }
        synchronized (this) {
            if (o.records != null) writeRecords();
            Common.emitLast("done", o.id, "\"received\":" + received + ",\"foreign\":" + foreign + ",\"redelivered\":" + redelivered);
        }
    }

    private void writeRecords() {
        try (Writer w = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(o.records), StandardCharsets.UTF_8), 1 << 16)) {
            w.write("#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest\n");
            StringBuilder sb = new StringBuilder(128);
            for (int i = 0; i < n; i++) {
                sb.setLength(0);
                sb.append(producerNames.get(rProducer[i])).append('\t').append(rSeq[i]).append('\t').append(rBurst[i])
                  .append('\t').append(rSent[i]).append('\t').append(rRecv[i]).append('\t').append(rBytes[i])
                  .append('\t').append(rFlags[i] & 1).append('\t').append((rFlags[i] >> 1) & 1)
                  .append('\t').append(o.destinations[rDest[i]]).append('\n');
                w.append(sb);
            }
        } catch (IOException e) {
            throw new RuntimeException("cannot write records to " + o.records + ": " + e.getMessage(), e);
        }
    }
}
