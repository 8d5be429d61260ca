package burstbench.clients;

import static burstbench.clients.Connect.describe;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * What the producer and the consumer share (clients/contract.md): JSON lines on stdout, the
 * clock, the message body, ticks, and the one way to stop (normal end, stdin "stop"/EOF,
 * SIGTERM, or an error exit). Their options are {@link Opts}, connecting {@link Connect},
 * --failover {@link Failover}.
 */
public final class Common {
    private Common() {}

    public static final String CLIENT = "openwire-jms";
    static final String LIBRARY_VERSION = "6.1.7";
    public static final Pattern ID = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    public static final String P_PRODUCER = "bb_producer", P_SEQ = "bb_seq", P_BURST = "bb_burst", P_SENT = "bb_sent_ns";
    /** The run nonce (--nonce) and the CRC-32 of the exact body bytes, 8 lowercase hex digits. */
    public static final String P_NONCE = "bb_nonce", P_CRC = "bb_crc32";

    public static void usage(String msg) {
        System.err.println("error: " + msg.replace('\n', ' '));
        System.err.flush();
        System.exit(2);
    }

    static String versionJson() {
        return versionJson(CLIENT);
    }

    static String versionJson(String client) {
        return "{\"client\":\"" + client + "\",\"library\":\"activemq-client " + libraryVersion()
            + "\",\"runtime\":\"Java " + System.getProperty("java.version") + "\"}";
    }

    private static String libraryVersion() {
        Package p = ActiveMQConnectionFactory.class.getPackage();
        String v = p == null ? null : p.getImplementationVersion();
        return v == null ? LIBRARY_VERSION : v;
    }

    // ------------------------------------------------------------------ stdout

    private static final PrintStream OUT =
        new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 14), false, StandardCharsets.US_ASCII);
    private static boolean outClosed;

    static {
        // Nothing but our JSON lines may reach stdout: anything else printing to System.out lands on stderr.
        System.setOut(System.err);
    }

    static PrintStream realOut() { return OUT; }

    /** One JSON line on stdout, flushed, unless 'done' has been printed. */
    static void emitRaw(String json) {
        synchronized (OUT) {
            if (outClosed) return;
            OUT.print(json);
            OUT.print('\n');
            OUT.flush();
        }
    }

    static void emit(String event, String id, String rest) {
        emitRaw("{\"event\":\"" + event + "\",\"id\":\"" + id + "\"" + (rest.isEmpty() ? "" : "," + rest) + "}");
    }

    /** The last line: nothing is printed after it. */
    /** emitLast when {@code last}, else emit. */
    static void emit(boolean last, String event, String id, String rest) {
        if (last) emitLast(event, id, rest);
        else emit(event, id, rest);
    }

    static void emitLast(String event, String id, String rest) {
        synchronized (OUT) {
            emit(event, id, rest);
            outClosed = true;
        }
    }

    // ------------------------------------------------------------------ clock, body

    private static final Clock UTC = Clock.systemUTC();

    /**
     * Wall clock, ns since the epoch: the monotonic clock plus its distance from the wall clock.
     * System.nanoTime is a compiler intrinsic; Clock.instant() is a call into the VM and an
     * Instant, 33-46 ns a message here (28955a4:docs/perf.md), the clock the other languages read.
     * Linux slews both clocks alike, so their distance moves only when the wall clock is set
     * (a step): {@link #reanchor()}, called by the ticker every second, follows it.
     */
    static long nowNs() {
        return System.nanoTime() + epochOffset;
    }

    /** The wall clock as the VM reads it, ns since the epoch (ns resolution on Linux, JDK >= 15). */
    static long wallNs() {
        Instant t = UTC.instant();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    /** A step smaller than this is the reading's own jitter, not the wall clock set. */
    static final long STEP_NS = 20_000;
    private static volatile long epochOffset = measureOffset();

    /** Wall clock minus monotonic clock, from the tightest of a few readings between two nanoTimes. */
    static long measureOffset() {
        long best = Long.MAX_VALUE, offset = 0;
        for (int i = 0; i < 7; i++) {
            long a = System.nanoTime(), w = wallNs(), b = System.nanoTime();
            if (b - a < best) {
                best = b - a;
                offset = w - (a + (b - a) / 2);
            }
        }
        return offset;
    }

    /** Follows a step of the wall clock (see {@link #nowNs()}); true when there was one. */
    static boolean reanchor() {
        long o = measureOffset();
        if (Math.abs(o - epochOffset) < STEP_NS) return false;
        epochOffset = o;
        return true;
    }

    /** Writes the first min(6, n) digits of the 6-digit zero-padded seq mod 1e6 into dst[0..]. */
    public static void counter(long seq, byte[] dst, int n) {
        int c = (int) (seq % 1_000_000L);
        int k = Math.min(6, n);
        for (int i = 5; i >= 0; i--) {
            if (i < k) dst[i] = (byte) ('0' + c % 10);
            c /= 10;
        }
    }

    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    /** {@code crc} as 8 lowercase hex digits, zero-padded (as {@code String.format("%08x", crc)}). */
    public static String hex8(int crc) {
        byte[] b = new byte[8];
        hex8(crc, b, 0);
        return new String(b, StandardCharsets.US_ASCII);
    }

    /** Writes {@code crc} as 8 lowercase hex digits into b[at..at+8). */
    public static void hex8(int crc, byte[] b, int at) {
        for (int i = 7; i >= 0; i--) { b[at + i] = HEX[crc & 15]; crc >>>= 4; }
    }

    /** Appends {@code crc} as 8 lowercase hex digits. */
    public static StringBuilder hex8(int crc, StringBuilder sb) {
        for (int i = 28; i >= 0; i -= 4) sb.append((char) HEX[(crc >>> i) & 15]);
        return sb;
    }

    /**
     * The value of an 8-digit lowercase hex string (as {@link #hex8} writes it), or -1L for
     * anything else (then the string itself is kept).
     */
    public static long parseHex8(String s) {
        if (s.length() != 8) return -1L;
        long v = 0;
        for (int i = 0; i < 8; i++) {
            char c = s.charAt(i);
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0) return -1L;
            v = (v << 4) | d;
        }
        return v;
    }

    // ------------------------------------------------------------------ stopping

    private static final int RUNNING = 0, FINISHING = 1, DONE = 2, DYING = 3;
    private static final AtomicInteger STATE = new AtomicInteger(RUNNING);
    private static final CountDownLatch FINISHED = new CountDownLatch(1);
    private static volatile boolean inHook;
    private static volatile Runnable finisher;
    /** True once we close on purpose: connection exceptions are then not failures. */
    static volatile boolean closing;

    /** SIGTERM (and any other JVM shutdown we did not start) stops like 'stop' and exits 0. */
    static void installHook(Runnable finish) {
        finisher = finish;
        // an exception nothing caught is a failure (exit 1), not a stop
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> die(1, "error: " + describe(e)));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            inHook = true;
            int s = STATE.get();
            if (s == DYING || s == DONE) return;           // error exit keeps its code; normal exit is 0
            int code = finishOnce();
            OUT.flush();
            System.err.flush();
            Runtime.getRuntime().halt(code);               // 0, not 143, after SIGTERM
        }, "bb-sigterm"));
    }

    /** Runs the finisher once (writes records, prints done); other callers wait for it. Returns the exit code. */
    static int finishOnce() {
        if (STATE.compareAndSet(RUNNING, FINISHING)) {
            try {
                finisher.run();
                STATE.set(DONE);
                FINISHED.countDown();
                return 0;
            } catch (Throwable e) {
                FINISHED.countDown();
                dieNow(1, "error: failed while stopping: " + describe(e));
                return 1;
            }
        }
        try { FINISHED.await(30, TimeUnit.SECONDS); } catch (InterruptedException ignored) { }
        return STATE.get() == DONE ? 0 : 1;
    }

    /** Normal end: finish and exit 0. */
    static void finishAndExit() {
        int code = finishOnce();
        OUT.flush();
        System.exit(code);
    }

    /** True while no stop has begun. */
    static boolean running() { return STATE.get() == RUNNING; }

    /**
     * Error exit: one "error:" line on stderr, exit code. Ignored (returns) when a stop is already
     * under way; the caller then just returns.
     */
    static void die(int code, String msg) {
        dieAfter(code, msg, null);
    }

    /**
     * {@link #die}, running {@code before} first (writing what the slots hold) once this exit is
     * the process's: a stop (finishOnce) or another error can no longer begin meanwhile.
     */
    static void dieAfter(int code, String msg, Runnable before) {
        if (!STATE.compareAndSet(RUNNING, DYING)) return;
        if (before != null) {
            try {
                before.run();
            } catch (RuntimeException e) {
                System.err.println("warning: " + describe(e));
            }
        }
        dieNow(code, msg);
    }

    private static void dieNow(int code, String msg) {
        STATE.set(DYING);
        synchronized (OUT) { outClosed = true; }
        System.err.println(msg.replace('\n', ' '));
        System.err.flush();
        if (inHook) Runtime.getRuntime().halt(code);
        System.exit(code);
    }
}
