package burstbench.clients.loops;

import java.util.concurrent.CountDownLatch;
import jakarta.jms.*;
import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * Minimal receive loop (baseline for the stock Consumer): Recv URL QUEUE COUNT [SKIP];
 * mark_ns: when message SKIP (counted from 0) arrived, the end of the warm-up. As the Consumer: ActiveMQ's defaults, queue prefetch 1000 (the contract's
 * default) on the prefetch policy, one AUTO_ACKNOWLEDGE session, a MessageListener (run in
 * the session's thread, ActiveMQ's default). msg/s per 100k on stderr. at_ns: when messages 0,
 * EVERY, 2 EVERY, ... arrived (so that the harness can count what arrived between two instants).
 */
public final class Recv {
    static long count, t0, t, bytes, lastAt, keys, mark, skip;
    static byte[] buf = new byte[64];
    static final int EVERY = 1000;
    static long[] at;

    /**
     * What the loop does with a message: a consumer reads what it received, as the Consumer
     * does: the six bench properties and the whole body (the harness's own part is what it
     * records and checks). activemq-client decodes a property's UTF-8 on every read: that is the
     * library's work, and the Consumer reads all six (bb_nonce and bb_crc32 too). Also run by
     * perf/micro/ListenerCost.
     */
    public static void read(Message m) throws JMSException {
        keys += m.getStringProperty("bb_producer").length() + m.getStringProperty("bb_seq").length()
                + m.getStringProperty("bb_burst").length() + m.getStringProperty("bb_sent_ns").length()
                + m.getStringProperty("bb_nonce").length() + m.getStringProperty("bb_crc32").length();
        if (m instanceof BytesMessage) {
            BytesMessage bm = (BytesMessage) m;
            int len = (int) bm.getBodyLength();
            if (buf.length < len) buf = new byte[len];
            bm.readBytes(buf, len);
            bytes += len;
        }
    }

    public static void main(String[] a) throws Exception {
        long n = Long.parseLong(a[2]);
        skip = a.length > 3 ? Long.parseLong(a[3]) : 0;
        at = new long[(int) ((n + EVERY - 1) / EVERY)];
        ActiveMQConnectionFactory f = new ActiveMQConnectionFactory(a[0]);
        f.getPrefetchPolicy().setQueuePrefetch(1000);
        Connection c = f.createConnection();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageConsumer mc = s.createConsumer(s.createQueue(a[1]));
        CountDownLatch done = new CountDownLatch(1);
        mc.setMessageListener(m -> {
            long now = System.nanoTime();
            try {
                read(m);
            } catch (JMSException e) { throw new RuntimeException(e); }
            if (count == skip) mark = now;
            if (count % EVERY == 0) at[(int) (count / EVERY)] = now;
            if (++count == 1) t0 = t = now;   // clock starts at the first message
            if (count % 100_000 == 0) { System.err.printf("recv %d: %.0f msg/s%n", count, 100_000 / ((now - t) / 1e9)); t = now; }
            lastAt = now;
            if (count == n) done.countDown();
        });
        c.start();
        done.await();
        double secs = (lastAt - t0) / 1e9;
        System.err.printf("recv total %d (%d body bytes) in %.3f s: %.0f msg/s%n", count, bytes, secs, count / secs);
        long epoch = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
        StringBuilder ats = new StringBuilder();
        for (int i = 0; i < at.length; i++) ats.append(i > 0 ? "," : "").append(at[i] + epoch);
        System.out.printf("{\"count\":%d,\"first_ns\":%d,\"mark_ns\":%d,\"last_ns\":%d,\"every\":%d,\"at_ns\":[%s]}%n",
                          count, t0 + epoch, mark + epoch, lastAt + epoch, EVERY, ats);
        c.close();
    }
}
