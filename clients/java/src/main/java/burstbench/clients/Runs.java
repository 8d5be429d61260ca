package burstbench.clients;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * What the programs' run loops share (clients/contract.md): a producer's --bursts / --gate loop,
 * a consumer's wait for 'stop', a paced send's sleep, the tick threads and the threads that
 * step through many slots at once.
 */
public final class Runs {
    private Runs() {}

    /** Parks until {@code ns} (Common.nowNs's clock) and returns the time then. */
    static long sleepUntil(long ns) {
        long now = Common.nowNs();
        while (now < ns) {
            java.util.concurrent.locks.LockSupport.parkNanos(ns - now);
            now = Common.nowNs();
        }
        return now;
    }

    /** --gate: a consumer reads stdin until 'stop' or its end. */
    static void awaitStop() throws java.io.IOException {
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.equals("stop")) break;
            if (!line.isEmpty()) System.err.println("warning: ignoring stdin line '" + line + "'");
        }
    }

    /** What a producer does for burst {@code b} (see {@link #bursts}). */
    interface Burst { void send(int b) throws jakarta.jms.JMSException, java.io.IOException, InterruptedException; }

    /**
     * A producer's bursts: --bursts of them, or with --gate one per 'go' line on stdin until
     * 'stop' or the end of input; each while {@code going} holds.
     */
    static void bursts(Opts o, java.util.function.BooleanSupplier going, Burst burst)
            throws jakarta.jms.JMSException, java.io.IOException, InterruptedException {
        if (!o.gate) {
            for (int b = 0; b < o.bursts && going.getAsBoolean(); b++) burst.send(b);
            return;
        }
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        int b = 0;
        String line;
        while (going.getAsBoolean() && (line = in.readLine()) != null) {
            line = line.trim();
            if (line.equals("go")) burst.send(b++);
            else if (line.equals("stop")) break;
            else if (!line.isEmpty()) System.err.println("warning: ignoring stdin line '" + line + "'");
        }
    }


    static Thread ticker(String id, String key, LongSupplier total) {
        Thread t = new Thread(() -> {
            try {
                while (true) {
                    Thread.sleep(1000);
                    if (!Common.running()) return;
                    Common.reanchor();
                    Common.emit("tick", id, "\"t_ns\":" + Common.nowNs() + ",\"" + key + "\":" + total.getAsLong());
                }
            } catch (InterruptedException ignored) { }
        }, "bb-tick");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * One ticker for the slots of --connections N > 1: slot i's tick ({@code ids[i]},
     * {@code total.applyAsLong(i)}) at most once a second and only when its total changed, so
     * that idle slots stay quiet.
     */
    static Thread slotTicker(String[] ids, String key, java.util.function.IntToLongFunction total) {
        Thread t = new Thread(() -> {
            long[] ticked = new long[ids.length];
            try {
                while (true) {
                    Thread.sleep(1000);
                    if (!Common.running()) return;
                    Common.reanchor();
                    for (int i = 0; i < ids.length; i++) {
                        long n = total.applyAsLong(i);
                        if (n == ticked[i]) continue;
                        ticked[i] = n;
                        Common.emit("tick", ids[i], "\"t_ns\":" + Common.nowNs() + ",\"" + key + "\":" + n);
                    }
                }
            } catch (InterruptedException ignored) { }
        }, "bb-tick");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Threads {@link #forEachSlot} uses at most. */
    private static final int SLOT_THREADS = 32;

    /**
     * Runs {@code step} for slots 0..n-1 on up to 32 threads at once and waits for all: a
     * step that waits for the broker (a close is a round trip and a socket shut down, 3-5 ms
     * here) would take a minute for 10,000 slots one after another.
     */
    static void forEachSlot(int n, java.util.function.IntConsumer step) {
        AtomicInteger next = new AtomicInteger();
        Thread[] ts = new Thread[Math.min(n, SLOT_THREADS)];
        for (int k = 0; k < ts.length; k++) {
            ts[k] = new Thread(() -> {
                for (int i; (i = next.getAndIncrement()) < n; ) step.accept(i);
            }, "bb-slots-" + k);
            ts[k].setDaemon(true);
            ts[k].start();
        }
        for (Thread t : ts) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    static void stopTicker(Thread t) {
        if (t == null) return;
        t.interrupt();
        try { t.join(2000); } catch (InterruptedException ignored) { }
    }
}
