package burstbench.clients.loops;

import java.util.concurrent.CountDownLatch;
import jakarta.jms.*;
import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.command.ActiveMQQueue;

/**
 * Minimal receive loop (baseline for Consumer): Recv URL QUEUE COUNT [PREFETCH [listener]];
 * msg/s per 100k on stderr. Default: receive() in main; 'listener': a MessageListener called
 * in the transport thread (alwaysSessionAsync=false), as Consumer does.
 */
public final class Recv {
    static long count, t0, t, bytes, lastAt;

    public static void main(String[] a) throws Exception {
        long n = Long.parseLong(a[2]);
        boolean listener = a.length > 4 && a[4].equals("listener");
        ActiveMQConnectionFactory f = new ActiveMQConnectionFactory(a[0]);
        f.getPrefetchPolicy().setQueuePrefetch(a.length > 3 ? Integer.parseInt(a[3]) : 1000);
        f.setOptimizeAcknowledge(true);
        f.setOptimizedAckScheduledAckInterval(100);
        f.setWatchTopicAdvisories(false);
        f.setAlwaysSessionAsync(!listener);
        Connection c = f.createConnection();
        c.start();
        Session s = c.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageConsumer mc = s.createConsumer(new ActiveMQQueue(a[1]));
        CountDownLatch done = new CountDownLatch(1);
        MessageListener l = m -> {
            try { if (m instanceof BytesMessage) bytes += ((BytesMessage) m).getBodyLength(); } catch (JMSException e) { throw new RuntimeException(e); }
            long now = System.nanoTime();
            if (++count == 1) t0 = t = now;   // clock starts at the first message
            if (count % 100_000 == 0) { System.err.printf("recv %d: %.0f msg/s%n", count, 100_000 / ((now - t) / 1e9)); t = now; }
            lastAt = now;
            if (count == n) done.countDown();
        };
        if (listener) mc.setMessageListener(l);
        else for (long i = 0; i < n; i++) l.onMessage(mc.receive());
        done.await();
        double secs = (System.nanoTime() - t0) / 1e9;
        System.err.printf("recv total %d (%d body bytes) in %.3f s: %.0f msg/s (%s)%n", n, bytes, secs, n / secs, listener ? "listener" : "receive()");
        long epoch = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
        System.out.printf("{\"count\":%d,\"first_ns\":%d,\"last_ns\":%d}%n", count, t0 + epoch, lastAt + epoch);
        c.close();
    }
}
