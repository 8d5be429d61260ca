package burstbench.clients.tuned;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Session;

import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.ActiveMQSession;
import org.apache.activemq.command.ActiveMQBytesMessage;
import org.apache.activemq.command.ActiveMQMessage;
import org.apache.activemq.util.ByteSequence;

import burstbench.clients.Common;
import burstbench.clients.Opts;
import burstbench.clients.BodyInfo;
import burstbench.clients.Consumer;
import burstbench.clients.Headers;

/**
 * The tuned consumer ({@code openwire-jms-tuned}): the stock {@link Consumer} with
 * - the four properties, bb_nonce and bb_crc32 read straight from the message's marshalled
 *   property bytes ({@link FastProperties}) and the body (its CRC-32 too) from its content,
 *   instead of getStringProperty / readBytes;
 * - a dedicated thread for the session ({@code useDedicatedTaskRunner=true}, a public setter
 *   that ActiveMQ's connection documentation does not list): about 20% faster than the
 *   pooled task runner's hand-offs;
 * - loose encoding, and with auto / dups-ok acknowledgements held in the socket buffer while
 *   the session already holds the next message ({@link HeldWritesTcp}; --flush-each turns
 *   that off).
 */
public final class TunedConsumer extends Consumer {
    private final FastProperties fast = new FastProperties();
    private boolean hold;

    private TunedConsumer(Opts o) { super(o); }

    public static void main(String[] args) {
        new TunedConsumer(Tuned.oneConnection(Opts.parse("consumer", args, Tuned.program("consumer", TunedConsumer.class)))).run();
    }

    @Override
    protected ActiveMQConnectionFactory connectionFactory() {
        // auto / dups-ok: an ack may wait in the socket buffer for the next write while the
        // session already holds the next message; plain tcp:// only
        hold = !o.flags.contains(Tuned.FLUSH_EACH) && o.txBatch == 0
                && (ackMode == Session.AUTO_ACKNOWLEDGE || ackMode == Session.DUPS_OK_ACKNOWLEDGE);
        ActiveMQConnectionFactory f = Tuned.factory(o, hold);
        f.setUseDedicatedTaskRunner(true);
        return f;
    }

    @Override
    protected Session createSession(Connection c) throws JMSException {
        Session s = super.createSession(c);
        if (hold) HeldWritesTcp.watch((ActiveMQSession) s);
        return s;
    }

    @Override
    protected boolean headers(Message m, Headers h) throws JMSException {
        if (m instanceof ActiveMQMessage && fast.read((ActiveMQMessage) m, h)) return true;
        return super.headers(m, h);
    }

    @Override
    protected void body(Message m, BodyInfo b) throws JMSException {
        if (m instanceof ActiveMQBytesMessage && !((ActiveMQBytesMessage) m).isCompressed()) {
            ByteSequence bs = ((ActiveMQBytesMessage) m).getContent();
            if (bs == null) b.set(b.head, 0, 0);
            else b.set(bs.data, bs.offset, bs.length);   // no copy of the body
            return;
        }
        super.body(m, b);
    }

    /**
     * The four bench properties, and bb_nonce and bb_crc32 when present, read straight from
     * the message's marshalled property bytes (MarshallingSupport's primitive map: an int
     * count, then per entry a UTF key, a type byte and the value), without building
     * activemq-client's HashMap and Strings per message. Anything it does not expect (a bench
     * property that is not a plain ASCII string, a bb_crc32 that is not 8 lowercase hex
     * digits, a map or list value, truncated bytes) returns false, and the caller asks
     * activemq-client.
     */
    static final class FastProperties {
        private static final int PRODUCER = 0, NONCE = 4, CRC = 5, REQUIRED = 15;
        private static final byte[][] KEYS = {
            Common.P_PRODUCER.getBytes(StandardCharsets.US_ASCII), Common.P_SEQ.getBytes(StandardCharsets.US_ASCII),
            Common.P_BURST.getBytes(StandardCharsets.US_ASCII), Common.P_SENT.getBytes(StandardCharsets.US_ASCII),
            Common.P_NONCE.getBytes(StandardCharsets.US_ASCII), Common.P_CRC.getBytes(StandardCharsets.US_ASCII)};
        private byte[] producerRaw = new byte[0];
        private String producer;
        private byte[] nonceRaw = new byte[0];
        private String nonce = "";

        boolean read(ActiveMQMessage m, Headers h) {
            ByteSequence bs = m.getMarshalledProperties();
            if (bs == null || bs.length < 4) return false;
            h.nonce = null;
            h.crcState = Headers.CRC_ABSENT;
            h.crcRaw = null;
            final byte[] d = bs.data;
            final int end = bs.offset + bs.length;
            int p = bs.offset;
            int count = ((d[p] & 0xff) << 24) | ((d[p + 1] & 0xff) << 16) | ((d[p + 2] & 0xff) << 8) | (d[p + 3] & 0xff);
            p += 4;
            int found = 0;
            for (int e = 0; e < count; e++) {
                if (p + 2 > end) return false;
                int kl = ((d[p] & 0xff) << 8) | (d[p + 1] & 0xff);
                int ks = p + 2;
                p = ks + kl;
                if (p >= end) return false;
                int which = -1;
                for (int k = 0; k < KEYS.length; k++) {
                    if (KEYS[k].length == kl && Arrays.equals(KEYS[k], 0, kl, d, ks, p)) { which = k; break; }
                }
                byte type = d[p++];
                if (which >= 0 && type != 9) return false;   // a bench property, not a short string
                int skip;
                switch (type) {
                    case 0: skip = 0; break;                    // null
                    case 1: case 2: skip = 1; break;            // boolean, byte
                    case 3: case 4: skip = 2; break;            // char, short
                    case 5: case 8: skip = 4; break;            // int, float
                    case 6: case 7: skip = 8; break;            // long, double
                    case 9:                                     // string (UTF, 2-byte length)
                        if (p + 2 > end) return false;
                        skip = 2 + (((d[p] & 0xff) << 8) | (d[p + 1] & 0xff));
                        break;
                    case 10: case 13:                           // byte array, big string (4-byte length)
                        if (p + 4 > end) return false;
                        skip = 4 + (((d[p] & 0xff) << 24) | ((d[p + 1] & 0xff) << 16) | ((d[p + 2] & 0xff) << 8) | (d[p + 3] & 0xff));
                        break;
                    default: return false;                      // map, list, ...
                }
                if (skip < 0 || p + skip > end) return false;
                if (which >= 0 && !value(which, d, p + 2, skip - 2, h)) return false;
                if (which >= 0) found |= 1 << which;
                p += skip;
            }
            return (found & REQUIRED) == REQUIRED;
        }

        private boolean value(int which, byte[] d, int at, int len, Headers h) {
            if (which == PRODUCER) {
                if (len != producerRaw.length || !Arrays.equals(producerRaw, 0, len, d, at, at + len)) {
                    for (int i = at; i < at + len; i++) if (d[i] < 0) return false;   // not ASCII
                    producerRaw = Arrays.copyOfRange(d, at, at + len);
                    producer = new String(producerRaw, StandardCharsets.US_ASCII);
                }
                h.producer = producer;
                return true;
            }
            if (which == NONCE) {
                if (len != nonceRaw.length || !Arrays.equals(nonceRaw, 0, len, d, at, at + len)) {
                    for (int i = at; i < at + len; i++) if (d[i] < 0) return false;   // not ASCII
                    nonceRaw = Arrays.copyOfRange(d, at, at + len);
                    nonce = new String(nonceRaw, StandardCharsets.US_ASCII);
                }
                h.nonce = nonce;
                return true;
            }
            if (which == CRC) {
                if (len != 8) return false;
                int v = 0;
                for (int i = at; i < at + 8; i++) {
                    int c = d[i], x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
                    if (x < 0) return false;   // not as the contract writes it: kept as received by the fallback
                    v = (v << 4) | x;
                }
                h.crcState = Headers.CRC_HEX;
                h.crc = v;
                return true;
            }
            if (len < 1 || len > 19) return false;   // (bb_sent_ns has 19 digits)
            long v = 0;
            for (int i = at; i < at + len; i++) {
                int c = d[i] - '0';
                if (c < 0 || c > 9) return false;
                v = v * 10 + c;
            }
            if (v < 0) return false;   // past Long.MAX_VALUE
            if (which == 1) h.seq = v;
            else if (which == 2) { if (v > Integer.MAX_VALUE) return false; h.burst = (int) v; }
            else h.sent = v;
            return true;
        }
    }
}
