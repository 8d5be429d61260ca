package burstbench.clients;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;

/**
 * What the consumer takes from a body: its length, first bytes and CRC-32, every byte read
 * on arrival. (Comparing a contract body with its filler instead and computing its CRC-32 at
 * stop cost 0.07 µs a message more at 1 KiB on the bench's Xeon, live on one CPU beside the
 * loop, where the JIT's CRC-32 uses AVX-512: 28955a4:docs/perf.md, "CRC-32 on arrival".)
 */
public final class BodyInfo {
    /** The body's first min(6, bytes) bytes. */
    public final byte[] head = new byte[6];
    public int bytes;
    /** CRC-32 (IEEE) of every byte. */
    public int crc;
    private byte[] buf = new byte[64];
    private final CRC32 crc32 = new CRC32();

    /** Sets bytes, head and crc from b[off..off+len). */
    public void set(byte[] b, int off, int len) {
        bytes = len;
        System.arraycopy(b, off, head, 0, Math.min(head.length, len));
        crc32.reset();
        crc32.update(b, off, len);
        crc = (int) crc32.getValue();
    }

    /** A reusable buffer of at least len bytes. */
    public byte[] buffer(int len) {
        if (buf.length < len) buf = new byte[(int) Math.max(len, Math.min(Integer.MAX_VALUE - 8, 2L * buf.length))];
        return buf;
    }

    /** The body's length, first bytes and CRC-32 into {@code b} (every byte is read). */
    public static void read(Message m, BodyInfo b) throws JMSException {
        if (m instanceof BytesMessage) {
            BytesMessage bm = (BytesMessage) m;
            int len = (int) bm.getBodyLength();
            byte[] buf = b.buffer(len);
            int got = len == 0 ? 0 : Math.max(0, bm.readBytes(buf, len));
            b.set(buf, 0, got);
            return;
        }
        if (m instanceof TextMessage) {
            String t = ((TextMessage) m).getText();
            byte[] d = t == null ? new byte[0] : t.getBytes(StandardCharsets.UTF_8);
            b.set(d, 0, d.length);
            return;
        }
        b.set(b.head, 0, 0);
    }
}
