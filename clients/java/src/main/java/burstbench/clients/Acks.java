package burstbench.clients;

import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Session;

import org.apache.activemq.ActiveMQSession;

/**
 * What a consumer's messages ask of its session in the client acknowledgement modes and with
 * --tx-batch: client acknowledges at least every ceil(prefetch/2) messages (cumulatively),
 * client-individual each message, a transacted session commits every N. Called from the
 * session's thread only (one message at a time), and at stop once delivery has halted.
 */
final class Acks {
    private final int mode, every, txBatch;
    private final Session session;
    private int since;
    private Message held;

    private Acks(Opts o, int mode, Session session) {
        this.mode = mode;
        this.session = session;
        every = Math.max(1, (o.prefetch + 1) / 2);
        txBatch = o.txBatch;
    }

    /** The acknowledgements of {@code session} in {@code mode}, or null when a message asks nothing (auto, dups-ok). */
    static Acks of(Opts o, int mode, Session session) {
        boolean asks = o.txBatch > 0 || mode == Session.CLIENT_ACKNOWLEDGE || mode == ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE;
        return asks ? new Acks(o, mode, session) : null;
    }

    /** After message {@code m}. */
    void after(Message m) throws JMSException {
        switch (mode) {
            case Session.CLIENT_ACKNOWLEDGE:
                held = m;
                if (++since >= every) { m.acknowledge(); since = 0; held = null; }
                break;
            case ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE:
                m.acknowledge();
                break;
            default:
        }
        if (txBatch > 0 && ++since >= txBatch) { session.commit(); since = 0; }
    }

    /** At stop: commit the open transaction, or acknowledge what is held. */
    void atStop() throws JMSException {
        if (txBatch > 0) {
            if (since > 0) session.commit();
        } else if (held != null) {
            held.acknowledge();
        }
        since = 0;
        held = null;
    }
}
