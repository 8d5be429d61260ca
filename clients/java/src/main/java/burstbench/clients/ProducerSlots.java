package burstbench.clients;

import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.jms.JMSException;

import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * --connections N > 1: N producers in one process, each a slot with its own connection
 * (from one ConnectionFactory), session, id, records and lines, as a JMS user opens
 * several. Each slot has a thread of its own that runs one producer's send loop: its
 * pacing (--rate per slot), its confirmation of a burst's last message and its records,
 * so that synchronous sends and commits of different slots overlap. The main thread
 * connects the slots one after another (--connect-timeout each), then orders every slot
 * each burst ('go', or each in turn without --gate) from one start, and waits for them all
 * before the next: a burst of the process is its slots' bursts, as one producer's follow
 * each other.
 */
final class ProducerSlots {
    /**
     * What a producer that is a slot has beyond one: its group, the bursts it is ordered, and the
     * start of the one being sent, the process's, with under --rate slot i's shift by (i-1)/(N R):
     * the slots' paced sends spread over each interval instead of leaving together.
     */
    record Slot(ProducerSlots group, BlockingQueue<Order> orders, long phaseNs, AtomicLong burstStart) {
        long start() { return burstStart.get() + phaseNs; }
    }

    /** A burst ordered to every slot (burst -1: no more), from the process's start; {@code done} counts the slots through. */
    record Order(int burst, long start, CountDownLatch done) { }


    /** A slot's thread: sends the bursts it is ordered, in order, until the end or a stop. */
    private static void sendOrdered(Producer p) {
        try {
            for (Order order; (order = p.slot.orders().take()).burst() >= 0; ) {
                try {
                    p.slot.burstStart().set(order.start());
                    if (!p.stopRequested) p.sendBurst(order.burst());
                } finally {
                    order.done().countDown();
                }
            }
        } catch (JMSException | InterruptedException e) {
            p.inBurst = false;
            p.slot.group().failed(p, "send to " + p.o.url + " failed", e);
        }
    }

    private final Opts o;
    private final Producer[] slots;
    private ActiveMQConnectionFactory factory;
    private Thread ticker;

    ProducerSlots(Opts o) {
        this.o = o;
        slots = new Producer[o.connections];
        for (int i = 0; i < slots.length; i++) {
            Producer p = new Producer(o.slot(i + 1));
            long phase = o.rate > 0 ? (long) (i * (1e9 / o.rate) / o.connections) : 0;
            p.slot = new Slot(this, new LinkedBlockingQueue<>(), phase, new AtomicLong());
            slots[i] = p;
        }
    }

    void run() {
        Common.installHook(this::finish);
        for (Producer p : slots) {
            Connect.connectWithin(p.o, () -> p.connect(factory()));
            p.prepare();
        }
        String[] ids = new String[slots.length];
        for (int i = 0; i < slots.length; i++) ids[i] = slots[i].o.id;
        ticker = Runs.slotTicker(ids, "sent", i -> slots[i].sent);
        Thread[] senders = new Thread[slots.length];
        for (int i = 0; i < slots.length; i++) {
            final Producer slot = slots[i];
            senders[i] = new Thread(() -> sendOrdered(slot), "bb-send-" + ids[i]);
            senders[i].setDaemon(true);
            senders[i].start();
        }
        try {
            Runs.bursts(o, Common::running, this::burst);
        } catch (JMSException | IOException | InterruptedException e) {
            Common.die(1, "error: " + Connect.describe(e));
            return;
        }
        for (Producer p : slots) p.slot.orders().add(new Order(-1, 0, null));
        for (Thread t : senders) {
            try { t.join(); } catch (InterruptedException e) { break; }
        }
        Common.finishAndExit();
    }

    /** The one factory every slot's connection comes from (made in the first slot's connect). */
    private synchronized ActiveMQConnectionFactory factory() {
        if (factory == null) factory = slots[0].factoryForRun();
        return factory;
    }

    /** Burst {@code b} on every slot from one start; returns when each slot is through it (or the process stops). */
    private void burst(int b) throws InterruptedException {
        Order order = new Order(b, Common.nowNs(), new CountDownLatch(slots.length));
        for (Producer p : slots) p.slot.orders().add(order);
        while (!order.done().await(100, TimeUnit.MILLISECONDS)) {
            if (!Common.running()) return;   // a stop or a failure ends the slots' loops itself
        }
    }

    /** Asks every slot's loop to stop and waits up to 5 s in all for them to notice. */
    private void stopSending() {
        for (Producer p : slots) p.stopRequested = true;
        long deadline = System.nanoTime() + 5_000_000_000L;
        for (Producer p : slots) p.awaitLoop(deadline);
    }

    /**
     * Stop (the end, 'stop', SIGTERM): every slot commits and disconnects (several at once),
     * then writes its records and prints done.
     */
    private void finish() {
        stopSending();
        Runs.stopTicker(ticker);
        Common.closing = true;
        Runs.forEachSlot(slots.length, i -> slots[i].close(!slots[i].inBurst));
        for (int i = 0; i < slots.length; i++) slots[i].report(i == slots.length - 1);
    }

    /** A slot's connection dropped: every slot writes its records, then exit 1 naming it. */
    void failed(Producer p, JMSException e) {
        Connect.connectionFailed(p.o, e, this::writeAll);
    }

    /** A slot's send failed: the same. */
    void failed(Producer p, String what, Exception e) {
        Common.dieAfter(1, Connect.errorOf(p.o) + what + ": " + Connect.describe(e), this::writeAll);
    }

    private void writeAll() {
        stopSending();
        for (Producer p : slots) if (p.o.records != null) p.writeRecords(p.sent);
    }
}
