package burstbench.clients;

import static burstbench.clients.Common.*;

import java.util.Locale;

import jakarta.jms.Connection;

import org.apache.activemq.ActiveMQConnection;

/**
 * --failover: activemq-client's own failover transport, and the contract's {@code reconnected}
 * line each time it resumes. Everything else about a failover connection is the library's.
 */
public final class Failover {
    private Failover() {}

    /**
     * --failover: activemq-client's own failover transport over --url then the list, in that
     * order, retrying every 0.1 s growing to 1 s (its documented options); {@link #connectUrl}
     * adds {@code timeout} from --connect-timeout.
     */
    static String failoverUrl(String url, String list) {
        if (url.toLowerCase(Locale.ROOT).startsWith("failover:"))
            usage("--failover with a failover: --url: give the plain addresses (got '" + url + "')");
        StringBuilder all = new StringBuilder(url);
        for (String u : list.split(",", -1)) {   // (each an address the table allows)
            if (u.toLowerCase(Locale.ROOT).startsWith("failover:") || !u.regionMatches(true, 0, url, 0, url.indexOf(':')))
                usage("--failover addresses must use --url's scheme (got '" + u + "')");
            all.append(',').append(u);
        }
        return "failover:(" + all + ")?randomize=false&initialReconnectDelay=100&maxReconnectDelay=1000";
    }

    /**
     * What a slot of several adds to its connection: with --failover its own {@code reconnected}
     * lines (ActiveMQConnection.addTransportListener), as the factory's listener gives a process.
     */
    static void reconnectLines(Connection c, Opts o) {
        if (o.slot > 0 && o.failover()) ((ActiveMQConnection) c).addTransportListener(new Reconnects(o.id));
    }

    /** The contract's {@code reconnected} line when the failover transport resumes after an interruption. */
    static final class Reconnects implements org.apache.activemq.transport.TransportListener {
        private final String id;
        private boolean interrupted;
        private int n;

        Reconnects(String id) { this.id = id; }

        @Override public void onCommand(Object command) { }
        @Override public void onException(java.io.IOException error) { }
        @Override public synchronized void transportInterupted() { interrupted = true; }
        @Override public synchronized void transportResumed() {
            if (!interrupted) return;   // the first connection
            interrupted = false;
            emit("reconnected", id, "\"t_ns\":" + nowNs() + ",\"n\":" + ++n);
        }
    }
}
