package burstbench.clients.tuned;

import java.io.IOException;
import java.util.Arrays;

import jakarta.jms.JMSException;
import jakarta.jms.Message;

import org.apache.activemq.ActiveMQConnectionFactory;
import org.apache.activemq.command.ActiveMQBytesMessage;
import org.apache.activemq.util.ByteSequence;

import burstbench.clients.Common;
import burstbench.clients.Opts;
import burstbench.clients.Producer;

/**
 * The tuned producer ({@code openwire-jms-tuned}): the stock {@link Producer} with
 * - the six properties (the four bench headers, bb_nonce, bb_crc32) written in OpenWire's
 *   marshalled form ({@link MarshalledProperties}) and the body set as the message's
 *   content, instead of setStringProperty / writeBytes;
 * - no copy on send ({@code copyMessageOnSend=false}: every message is a fresh object);
 * - loose encoding, and full-speed asynchronous sends held in the socket buffer for the next
 *   write ({@link HeldWritesTcp}; --flush-each turns that off).
 */
public final class TunedProducer extends Producer {
    private MarshalledProperties props;
    private int propsBurst = -1;
    private byte[] template;

    private TunedProducer(Opts o) { super(o); }

    public static void main(String[] args) {
        Opts o = Tuned.oneConnection(Opts.parse("producer", args, Tuned.program("producer", TunedProducer.class)));
        MarshalledProperties.check();
        new TunedProducer(o).run();
    }

    @Override
    protected ActiveMQConnectionFactory connectionFactory() {
        boolean async = !o.persistent || o.asyncSend;
        // full-speed asynchronous sends may wait in the socket buffer for the next one
        // (plain tcp:// only); paced sends go out one by one
        boolean hold = async && o.rate == 0 && !o.flags.contains(Tuned.FLUSH_EACH);
        HeldWritesTcp.holdSends = hold;
        ActiveMQConnectionFactory f = Tuned.factory(o, hold);
        f.setUseAsyncSend(async);
        f.setCopyMessageOnSend(false);
        return f;
    }

    @Override
    protected Message message(int burst, long seq, long sentNs) throws JMSException {
        if (burst != propsBurst) {
            props = new MarshalledProperties(o.id, burst, o.nonce);
            propsBurst = burst;
        }
        if (template == null) {
            template = new byte[o.size];
            Arrays.fill(template, (byte) 'x');
        }
        ActiveMQBytesMessage m = (ActiveMQBytesMessage) session.createBytesMessage();
        byte[] body = template.clone();
        Common.counter(seq, body, body.length);
        m.setMarshalledProperties(props.encode(seq, sentNs, crc32(body, 0, body.length)));
        m.setContent(new ByteSequence(body));
        return m;
    }

    /**
     * The six properties in OpenWire's marshalled form (MarshallingSupport's primitive map: an
     * int count, then per entry a UTF key, the STRING type byte and a UTF value), written
     * straight into one array per message. activemq-client would otherwise build a HashMap, a
     * stream and several Strings per message and marshal them on send: the same bytes,
     * several times the work. check() compares with activemq-client's own decoding.
     */
    static final class MarshalledProperties {
        private static final byte STRING = 9;   // MarshallingSupport.STRING_TYPE
        private final byte[] head;              // count, producer, burst, nonce, the seq key and type
        private final byte[] mid;               // the sent key and type
        private final byte[] tail;              // the crc key and type, the value's length (8)

        MarshalledProperties(String producer, int burst, String nonce) {
            java.io.ByteArrayOutputStream h = new java.io.ByteArrayOutputStream(96);
            java.io.ByteArrayOutputStream t = new java.io.ByteArrayOutputStream(16);
            java.io.ByteArrayOutputStream c = new java.io.ByteArrayOutputStream(16);
            try {
                java.io.DataOutputStream d = new java.io.DataOutputStream(h);
                d.writeInt(6);
                d.writeUTF(Common.P_PRODUCER); d.writeByte(STRING); d.writeUTF(producer);
                d.writeUTF(Common.P_BURST); d.writeByte(STRING); d.writeUTF(Integer.toString(burst));
                d.writeUTF(Common.P_NONCE); d.writeByte(STRING); d.writeUTF(nonce);
                d.writeUTF(Common.P_SEQ); d.writeByte(STRING);
                d = new java.io.DataOutputStream(t);
                d.writeUTF(Common.P_SENT); d.writeByte(STRING);
                d = new java.io.DataOutputStream(c);
                d.writeUTF(Common.P_CRC); d.writeByte(STRING); d.writeShort(8);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            head = h.toByteArray();
            mid = t.toByteArray();
            tail = c.toByteArray();
        }

        /** {@code crc}: the body's CRC-32, written as 8 lowercase hex digits. */
        ByteSequence encode(long seq, long sent, int crc) {
            int ns = digits(seq), nt = digits(sent);
            byte[] b = new byte[head.length + 2 + ns + mid.length + 2 + nt + tail.length + 8];
            System.arraycopy(head, 0, b, 0, head.length);
            int at = putUtfDigits(b, head.length, seq, ns);
            System.arraycopy(mid, 0, b, at, mid.length);
            at = putUtfDigits(b, at + mid.length, sent, nt);
            System.arraycopy(tail, 0, b, at, tail.length);
            Common.hex8(crc, b, at + tail.length);
            return new ByteSequence(b);
        }

        private static int digits(long v) {   // v >= 0
            int n = 1;
            while (v >= 10) { v /= 10; n++; }
            return n;
        }

        /** A UTF string of the decimal digits of v (ASCII: length = bytes); returns the end. */
        private static int putUtfDigits(byte[] b, int at, long v, int n) {
            b[at] = (byte) (n >>> 8);
            b[at + 1] = (byte) n;
            int end = at + 2 + n;
            for (int i = end - 1; i >= at + 2; i--) { b[i] = (byte) ('0' + v % 10); v /= 10; }
            return end;
        }

        /** activemq-client decodes what encode() wrote as the map setProperty would have made. */
        static void check() {
            long seq = 1234567890123L, sent = 1700000000123456789L;
            int crc = 0x0a1b2c3d;   // a leading zero digit
            try {
                ByteSequence bs = new MarshalledProperties("px-1", 7, "Run42").encode(seq, sent, crc);
                java.util.Map<String, Object> got = org.apache.activemq.util.MarshallingSupport.unmarshalPrimitiveMap(
                        new java.io.DataInputStream(new java.io.ByteArrayInputStream(bs.data, bs.offset, bs.length)));
                java.util.Map<String, String> want = java.util.Map.of(Common.P_PRODUCER, "px-1", Common.P_BURST, "7",
                        Common.P_SEQ, Long.toString(seq), Common.P_SENT, Long.toString(sent),
                        Common.P_NONCE, "Run42", Common.P_CRC, String.format("%08x", crc));
                java.util.Map<String, String> text = new java.util.HashMap<>();
                got.forEach((k, v) -> text.put(k, String.valueOf(v)));   // (strings may decode as UTF8Buffer)
                if (!want.equals(text)) throw new IllegalStateException("decoded " + got + ", expected " + want);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
