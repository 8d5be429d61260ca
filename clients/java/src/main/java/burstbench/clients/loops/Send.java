package burstbench.clients.loops;

import java.util.concurrent.CountDownLatch;
import jakarta.jms.*;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQMessageProducer;
import org.apache.activemq.AsyncCallback;

/**
 * Minimal send loop (baseline for the stock Producer): Send URL QUEUE COUNT [SIZE [SKIP]]. As the
 * Producer: ActiveMQ's defaults, non-persistent BytesMessages (sent asynchronously, ActiveMQ's
 * default) with the same body and four string properties, the last one sent with an
 * AsyncCallback and waited for. msg/s per 100k on stderr; mark_ns: when message SKIP (counted
 * from 0) was handed to send, the end of the warm-up; at_ns: when messages 0, EVERY, 2 EVERY...
 * were (so that the harness can count what was sent between two instants).
 */
public final class Send {
    static final int EVERY = 1000;

    public static void main(String[] a) throws Exception {
        long n = Long.parseLong(a[2]);
        int size = a.length > 3 ? Integer.parseInt(a[3]) : 6;
        long skip = a.length > 4 ? Long.parseLong(a[4]) : 0;
        ActiveMQConnectionFactory f = new ActiveMQConnectionFactory(a[0]);
        Connection c = f.createConnection();
        c.start();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageProducer p = s.createProducer(s.createQueue(a[1]));
        p.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
        long epoch = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
        byte[] body = new byte[size];
        java.util.Arrays.fill(body, (byte) 'x');
        CountDownLatch confirmed = new CountDownLatch(1);
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        long t0 = System.nanoTime(), t = t0, mark = t0;
        long[] at = new long[(int) ((n + EVERY - 1) / EVERY)];
        for (long i = 0; i < n; i++) {
            if (i == skip) mark = System.nanoTime();
            BytesMessage m = s.createBytesMessage();
            for (long k = 5, d = i % 1000000; k >= 0; k--, d /= 10) if (k < size) body[(int) k] = (byte) ('0' + d % 10);
            m.writeBytes(body);
            m.setStringProperty("bb_producer", "loop");
            m.setStringProperty("bb_seq", Long.toString(i));
            m.setStringProperty("bb_burst", "0");
            long now = System.nanoTime();
            if (i % EVERY == 0) at[(int) (i / EVERY)] = now;
            m.setStringProperty("bb_sent_ns", Long.toString(now + epoch));
            // the same six properties the bench sends (Producer: bb_nonce, bb_crc32)
            crc.reset();
            crc.update(body, 0, size);
            m.setStringProperty("bb_nonce", "loop");
            String hex = Long.toHexString(crc.getValue());
            m.setStringProperty("bb_crc32", "00000000".substring(hex.length()) + hex);
            if (i < n - 1) {
                p.send(m);
            } else {   // the last one with the broker's receipt: then all are in
                ((ActiveMQMessageProducer) p).send(m, new AsyncCallback() {
                    @Override public void onSuccess() { confirmed.countDown(); }
                    @Override public void onException(JMSException e) { e.printStackTrace(); System.exit(1); }
                });
            }
            if ((i + 1) % 100_000 == 0) {
                long at100k = System.nanoTime();
                System.err.printf("send %d: %.0f msg/s%n", i + 1, 100_000 / ((at100k - t) / 1e9));
                t = at100k;
            }
        }
        confirmed.await();
        long last = System.nanoTime();   // the broker has them all
        System.err.printf("send total %d in %.3f s: %.0f msg/s%n", n, (last - t0) / 1e9, n / ((last - t0) / 1e9));
        // the line ./bench perf reads: first send, and the broker's confirmation of the last
        StringBuilder ats = new StringBuilder();
        for (int k = 0; k < at.length; k++) ats.append(k > 0 ? "," : "").append(at[k] + epoch);
        System.out.printf("{\"count\":%d,\"first_ns\":%d,\"mark_ns\":%d,\"last_ns\":%d,\"every\":%d,\"at_ns\":[%s]}%n",
                          n, t0 + epoch, mark + epoch, last + epoch, EVERY, ats);
        c.close();
    }
}
