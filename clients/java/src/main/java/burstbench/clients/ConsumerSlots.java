package burstbench.clients;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.jms.JMSException;

import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * --connections N > 1: N consumers in one process, each a slot with its own connection
 * (from one ConnectionFactory), session, listeners on every queue (competing consumers),
 * acknowledgements, id, records and lines, as a JMS user opens several. The main thread
 * connects the slots one after another (--connect-timeout each) and, without --gate,
 * watches their total: each slot's listener path is one consumer's, with no count of the
 * process in it.
 */
final class ConsumerSlots {
    private final Opts o;
    private final Consumer[] slots;
    private final long target;   // count x bursts for the slots together (0: until stopped)
    private final AtomicBoolean failing = new AtomicBoolean();
    private ActiveMQConnectionFactory factory;
    private Thread ticker;

    ConsumerSlots(Opts o) {
        this.o = o;
        target = o.gate ? 0 : (long) o.count * o.bursts;
        slots = new Consumer[o.connections];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Consumer(o.slot(i + 1));
            slots[i].group = this;
        }
        if (o.records != null) System.gc();   // the records' arrays to the old generation, once (see the constructor)
    }

    void run() {
        Common.installHook(this::finish);
        for (Consumer c : slots) {
            Connect.connectWithin(c.o, () -> c.connect(factory()));
            c.ready();
        }
        String[] ids = new String[slots.length];
        for (int i = 0; i < slots.length; i++) ids[i] = slots[i].o.id;
        ticker = Runs.slotTicker(ids, "received", i -> slots[i].received());
        try {
            if (o.gate) Runs.awaitStop();
            else awaitTarget();
        } catch (IOException | InterruptedException e) {
            Common.die(1, "error: " + Connect.describe(e));
            return;
        }
        Common.finishAndExit();
    }

    /** The one factory every slot's connection comes from (made in the first slot's connect). */
    private synchronized ActiveMQConnectionFactory factory() {
        if (factory == null) factory = slots[0].factoryForRun();
        return factory;
    }

    /** Until the slots together have received count x bursts (read every 10 ms); with --count 0 until SIGTERM. */
    private void awaitTarget() throws InterruptedException {
        if (target == 0) new CountDownLatch(1).await();
        while (total() < target) Thread.sleep(10);
    }

    private void closeAll() {
        Runs.forEachSlot(slots.length, i -> {
            if (slots[i].conn != null) slots[i].close();
        });
    }

    private long total() {
        long n = 0;
        for (Consumer c : slots) n += c.received();
        return n;
    }

    /**
     * Stop (count reached, 'stop', end of input, SIGTERM): every slot halts delivery and
     * acknowledges or commits what it holds, then disconnects (several slots at once), writes
     * its records and prints done. A slot whose acknowledgement fails still lets the others
     * write theirs (then exit 1).
     */
    private void finish() {
        Runs.stopTicker(ticker);
        AtomicReference<RuntimeException> failed = new AtomicReference<>();
        Runs.forEachSlot(slots.length, i -> {
            Consumer c = slots[i];
            if (c.conn == null) return;
            try {
                c.quiesce();
            } catch (RuntimeException e) {
                failed.compareAndSet(null, new RuntimeException("slot " + c.o.id + ": " + e.getMessage(), e));
            }
        });
        RuntimeException failure = failed.get();
        Common.closing = true;
        closeAll();
        for (int i = 0; i < slots.length; i++) {
            Consumer c = slots[i];
            synchronized (c) {
                if (c.o.records != null) c.writeRecords();
                if (failure == null) c.done(i == slots.length - 1);
            }
        }
        if (failure != null) throw failure;
    }

    /**
     * A slot's connection dropped: every slot disconnects (no listener call runs after that)
     * and writes its records, then exit 1 naming the slot. In a thread of its own: this runs
     * in the connection's executor, which close() shuts down.
     */
    void failed(Consumer c, JMSException e) {
        if (Common.closing || !failing.compareAndSet(false, true)) return;
        new Thread(() -> Connect.connectionFailed(c.o, e, this::closeAndWriteAll), "bb-failed").start();
    }

    private void closeAndWriteAll() {
        closeAll();
        for (Consumer c : slots) {
            if (c.o.records == null) continue;
            synchronized (c) {
                try { c.writeRecords(); } catch (RuntimeException w) { System.err.println("warning: " + w.getMessage()); }
            }
        }
    }
}
