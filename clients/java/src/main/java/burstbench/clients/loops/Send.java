package burstbench.clients.loops;

import jakarta.jms.*;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQMessageProducer;
import org.apache.activemq.command.ActiveMQQueue;

/** Minimal send loop (baseline for Producer): Send URL QUEUE COUNT [SIZE]; msg/s per 100k on stderr. */
public final class Send {
    public static void main(String[] a) throws Exception {
        long n = Long.parseLong(a[2]);
        int size = a.length > 3 ? Integer.parseInt(a[3]) : 6;
        ActiveMQConnectionFactory f = new ActiveMQConnectionFactory(a[0]);
        f.setUseAsyncSend(true);
        f.setCopyMessageOnSend(false);
        f.setWatchTopicAdvisories(false);
        Connection c = f.createConnection();
        c.start();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        ActiveMQMessageProducer p = (ActiveMQMessageProducer) s.createProducer(new ActiveMQQueue(a[1]));
        p.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
        long epoch = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
        long t0 = System.nanoTime(), t = t0, last = t0;
        for (long i = 0; i < n; i++) {
            last = System.nanoTime();
            BytesMessage m = s.createBytesMessage();
            byte[] body = new byte[size];
            java.util.Arrays.fill(body, (byte) 'x');
            for (long k = 5, d = i % 1000000; k >= 0; k--, d /= 10) if (k < size) body[(int) k] = (byte) ('0' + d % 10);
            m.writeBytes(body);
            m.setStringProperty("bb_producer", "loop");
            m.setStringProperty("bb_seq", Long.toString(i));
            m.setStringProperty("bb_burst", "0");
            m.setStringProperty("bb_sent_ns", Long.toString(System.currentTimeMillis() * 1_000_000L));
            if (i == n - 1) p.setSendTimeout(60_000);   // last one synchronous: all are in
            p.send(m);
            if ((i + 1) % 100_000 == 0) {
                long now = System.nanoTime();
                System.err.printf("send %d: %.0f msg/s%n", i + 1, 100_000 / ((now - t) / 1e9));
                t = now;
            }
        }
        last = System.nanoTime();  // the last send was synchronous: the broker has them all
        System.err.printf("send total %d in %.3f s: %.0f msg/s%n", n, (System.nanoTime() - t0) / 1e9, n / ((System.nanoTime() - t0) / 1e9));
        // the line ./bench perf reads: times of the first and last send, ns since the epoch
        System.out.printf("{\"count\":%d,\"first_ns\":%d,\"last_ns\":%d}%n", n, t0 + epoch, last + epoch);
        c.close();
    }
}
