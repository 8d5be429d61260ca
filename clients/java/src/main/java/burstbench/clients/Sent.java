package burstbench.clients;

import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A producer's records (clients/contract.md, "Records"): each message's bb_sent_ns and when it
 * was handed to send(), by seq, in arrays made before the first burst (grown if more come),
 * written at stop.
 */
final class Sent {
    private long[] sentNs, actualNs;

    /** Room for a producer of {@code o}'s bursts of {@code burstCount} (at most 2^20; a slot its share). */
    Sent(Opts o, int burstCount) {
        long want = (long) burstCount * o.bursts;
        sentNs = new long[o.slot > 0 ? o.slotCapacity(want) : (int) Math.min(want, 1 << 20)];
        actualNs = new long[sentNs.length];
    }

    void record(long seq, long stamp, long actual) {
        if (seq >= sentNs.length) {
            int n = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(seq + 1, 2L * sentNs.length));
            sentNs = Arrays.copyOf(sentNs, n);
            actualNs = Arrays.copyOf(actualNs, n);
        }
        sentNs[(int) seq] = stamp;
        actualNs[(int) seq] = actual;
    }

    /** The records file of producer {@code id}: messages 0..n-1, {@code burstCount} a burst. */
    void write(String path, String id, long n, int burstCount) {
        try (Writer w = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(path), StandardCharsets.US_ASCII), 1 << 16)) {
            w.write("#producer\tseq\tburst\tsent_ns\tactual_ns\n");
            StringBuilder sb = new StringBuilder(64);
            for (long s = 0; s < n; s++) {
                sb.setLength(0);
                sb.append(id).append('\t').append(s).append('\t').append(s / burstCount).append('\t').append(sentNs[(int) s]).append('\t').append(actualNs[(int) s]).append('\n');
                w.append(sb);
            }
        } catch (IOException e) {
            throw new RuntimeException("cannot write records to " + path + ": " + e.getMessage(), e);
        }
    }
}
