package burstbench.clients;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageFormatException;

/** The four bench headers of one message, and the optional nonce and body checksum. */
public final class Headers {
    public String producer;
    public long seq, sent;
    public int burst;
    /** bb_nonce, or null when absent. */
    public String nonce;
    /** bb_crc32: {@link #CRC_ABSENT}, {@link #CRC_HEX} with {@link #crc}, or {@link #CRC_RAW} with {@link #crcRaw}. */
    public byte crcState;
    public int crc;
    public String crcRaw;

    /** bb_crc32: absent, 8 lowercase hex digits (value in {@link Headers#crc}), other (in {@link Headers#crcRaw}). */
    public static final byte CRC_ABSENT = 0, CRC_HEX = 1, CRC_RAW = 2;

    /**
     * Reads the four bench headers (string properties) into {@code h}, and bb_nonce and
     * bb_crc32 when present; false when one of the four is missing or does not parse (a
     * foreign message).
     */
    public static boolean read(Message m, Headers h) throws JMSException {
        String producer, seq, burst, sent;
        try {
            producer = m.getStringProperty(Common.P_PRODUCER);
            seq = m.getStringProperty(Common.P_SEQ);
            burst = m.getStringProperty(Common.P_BURST);
            sent = m.getStringProperty(Common.P_SENT);
        } catch (MessageFormatException e) {
            return false;   // a property of a type that is no string (a byte array, a map)
        }
        if (producer == null || seq == null || burst == null || sent == null) return false;
        try {
            h.producer = producer;
            h.seq = Long.parseLong(seq);
            h.burst = Integer.parseInt(burst);
            h.sent = Long.parseLong(sent);
        } catch (NumberFormatException e) {
            return false;
        }
        if (h.seq < 0 || h.burst < 0) return false;
        h.nonce = optional(m, Common.P_NONCE);
        crcHeader(optional(m, Common.P_CRC), h);
        return true;
    }

    /** An optional string property, null when absent or of a type that is no string. */
    static String optional(Message m, String name) throws JMSException {
        try {
            return m.getStringProperty(name);
        } catch (MessageFormatException e) {
            return null;
        }
    }

    /** bb_crc32 as received (null = absent) into {@code h}. */
    static void crcHeader(String v, Headers h) {
        if (v == null) { h.crcState = CRC_ABSENT; h.crcRaw = null; return; }
        long x = Common.parseHex8(v);
        if (x >= 0) { h.crcState = CRC_HEX; h.crc = (int) x; h.crcRaw = null; }
        else { h.crcState = CRC_RAW; h.crcRaw = v; }
    }
}
