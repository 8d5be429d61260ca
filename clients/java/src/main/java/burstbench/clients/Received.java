package burstbench.clients;

import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * A consumer's records (clients/contract.md, "Records"), one entry per bench message in
 * primitive arrays made before the first message (grown if more come), written at stop: the
 * producer and nonce as indexes into the names seen, the body's CRC-32 as an int computed on
 * arrival, both formatted at stop.
 */
final class Received {
    private final Names producers = new Names(), nonces = new Names();
    private final Map<Integer, String> rawCrc = new HashMap<>();   // record -> bb_crc32 not in canonical form
    // bench messages (written by the listener, read by the ticker: RECEIVED), foreign ones, redelivered ones
    private long received, foreign, redelivered;
    /** {@link #received}, written and read opaque: a progress count needs no fence (a volatile store is one a message). */
    private static final VarHandle RECEIVED;
    static {
        try {
            RECEIVED = MethodHandles.lookup().findVarHandle(Received.class, "received", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private int n;
    private int[] rProducer, rBurst, rBytes, rDest, rNonce, rCrcHeader, rCrcBody;
    private long[] rSeq, rSent, rRecv;
    private byte[] rFlags;              // bit 0 body_ok, bit 1 redelivered, bits 2-3 bb_crc32 (Headers.CRC_*)

    Received(int cap) {
        rProducer = new int[cap]; rBurst = new int[cap]; rBytes = new int[cap]; rDest = new int[cap];
        rNonce = new int[cap]; rCrcHeader = new int[cap]; rCrcBody = new int[cap];
        rSeq = new long[cap]; rSent = new long[cap]; rRecv = new long[cap]; rFlags = new byte[cap];
    }

    /**
     * The records of a consumer of {@code o} (none without --records): room for --count x
     * --bursts (at most 2^20; a slot its share), made before the consumer connects and
     * collected then. The records are the harness's, made here for the whole run (21 MB for
     * 400,000 messages): collected now, they move to the old generation. Left in eden, they
     * survived the drain's first collections, and the parallel collector's adaptive sizing
     * answered with survivors of up to 28 MB and an eden of 72-97 MB where the loop kept
     * 96-121: 21-23 collections in a one-CPU drain the loop took 16 for; now 19
     * (28955a4:docs/perf.md, "The JMS consumer's eden"). It did not move the bench's receive
     * rows. ConsumerSlots collects once, after making every slot.
     */
    static Received forRun(Opts o) {
        long want = o.gate ? 0 : (long) o.count * o.bursts;
        int cap = o.records == null ? 0
            : o.slot > 0 ? o.slotCapacity(((want > 0 ? want : 1 << 16) + o.connections - 1) / o.connections)
            : (int) Math.min(want > 0 ? want : 1 << 16, 1 << 20);
        Received r = new Received(cap);
        if (cap > 0 && o.slot == 0) System.gc();
        return r;
    }

    /** A bench message counted (recorded or not). */
    void count(boolean redelivered) {
        if (redelivered) this.redelivered++;
        RECEIVED.setOpaque(this, received + 1);
    }

    void foreign() { foreign++; }

    /** Bench messages so far, from any thread. */
    long received() { return (long) RECEIVED.getOpaque(this); }

    /** The done line's counts. */
    String counts() { return "\"received\":" + received + ",\"foreign\":" + foreign + ",\"redelivered\":" + redelivered; }

    /** The index of producer {@code id}, or -1 for an id that is no contract id (a foreign message). */
    int producer(String id) { return producers.of(id, Received::contractId); }

    private static boolean contractId(String producer) { return Common.ID.matcher(producer).matches(); }

    /**
     * One record, from {@code h} and {@code bi} (body_ok: its first bytes are the counter's digits). Its bytecode stays under HotSpot's limit for
     * inlining a hot method (FreqInlineSize, 325 bytes on x86-64): at 328 bytes it had been a
     * call of its own in every message. The index is read once, a rare step is a method.
     */
    void add(Headers h, BodyInfo bi, int pi, int di, long recvNs, boolean redel) {
        final boolean ok = bi.bytes > 0 && digitsMatch((int) (h.seq % 1_000_000L), bi.head, 0, Math.min(6, bi.bytes));
        if (n == rSeq.length) grow();
        final int i = n;
        rProducer[i] = pi; rSeq[i] = h.seq; rBurst[i] = h.burst; rSent[i] = h.sent; rRecv[i] = recvNs;
        rBytes[i] = bi.bytes; rDest[i] = di;
        rFlags[i] = (byte) ((ok ? 1 : 0) | (redel ? 2 : 0) | (h.crcState << 2));
        rNonce[i] = h.nonce == null ? -1 : nonces.of(h.nonce); rCrcBody[i] = bi.crc;
        if (h.crcState == Headers.CRC_HEX) rCrcHeader[i] = h.crc;
        else if (h.crcState == Headers.CRC_RAW) keepRawCrc(i, h);
        n = i + 1;
    }

    /** A bb_crc32 that is not 8 lowercase hex digits, kept as received for record i. */
    private void keepRawCrc(int i, Headers h) {
        rawCrc.put(i, h.crcRaw);
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
        rNonce = Arrays.copyOf(rNonce, cap); rCrcHeader = Arrays.copyOf(rCrcHeader, cap); rCrcBody = Arrays.copyOf(rCrcBody, cap);
    }

    /** A received string as one TSV field: control characters (tab, newline) become '?'. */
    private static String field(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                StringBuilder b = new StringBuilder(s.length());
                for (int j = 0; j < s.length(); j++) {
                    char d = s.charAt(j);
                    b.append(d < 0x20 || d == 0x7f ? '?' : d);
                }
                return b.toString();
            }
        }
        return s;
    }

    /** The records file at {@code path}; {@code destinations} names the queues by index. */
    void write(String path, String[] destinations) {
        try (Writer w = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(path), StandardCharsets.UTF_8), 1 << 16)) {
            w.write("#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest\tnonce\tcrc32_header\tcrc32_body\n");
            String[] nonceFields = new String[nonces.names.size()];
            for (int k = 0; k < nonceFields.length; k++) nonceFields[k] = field(nonces.names.get(k));
            StringBuilder sb = new StringBuilder(160);
            for (int i = 0; i < n; i++) {
                sb.setLength(0);
                sb.append(producers.names.get(rProducer[i])).append('\t').append(rSeq[i]).append('\t').append(rBurst[i])
                  .append('\t').append(rSent[i]).append('\t').append(rRecv[i]).append('\t').append(rBytes[i])
                  .append('\t').append(rFlags[i] & 1).append('\t').append((rFlags[i] >> 1) & 1)
                  .append('\t').append(destinations[rDest[i]])
                  .append('\t').append(rNonce[i] < 0 ? "-" : nonceFields[rNonce[i]]).append('\t');
                switch ((rFlags[i] >> 2) & 3) {
                    case Headers.CRC_HEX: Common.hex8(rCrcHeader[i], sb); break;
                    case Headers.CRC_RAW: sb.append(field(rawCrc.get(i))); break;
                    default: sb.append('-');
                }
                sb.append('\t');
                Common.hex8(rCrcBody[i], sb).append('\n');
                w.append(sb);
            }
        } catch (IOException e) {
            throw new RuntimeException("cannot write records to " + path + ": " + e.getMessage(), e);
        }
    }
}
