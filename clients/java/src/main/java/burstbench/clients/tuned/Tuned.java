package burstbench.clients.tuned;

import java.util.List;

import org.apache.activemq.ActiveMQConnectionFactory;

import burstbench.clients.Common;
import burstbench.clients.Connect;
import burstbench.clients.Opts;

/**
 * What the tuned producer and consumer (client {@code openwire-jms-tuned}) share: their name,
 * their --flush-each flag, and a connection factory with their faster settings. The stock
 * classes do the rest; the tuned ones override their hooks.
 */
final class Tuned {
    private Tuned() {}

    static final String CLIENT = "openwire-jms-tuned";
    static final String FLUSH_EACH = "flush-each";

    static Opts.Program program(String role, Class<?> main) {
        return new Opts.Program(CLIENT, main.getName());
    }

    /**
     * --connections N > 1 is the stock client's: the held writes watch one session and one
     * producer (HeldWritesTcp's state is the process's), so a tuned process holds one connection.
     */
    static Opts oneConnection(Opts o) {
        if (o.connections > 1) {
            Common.usage("--connections " + o.connections + ": " + CLIENT
                + " holds one connection per process (openwire-jms holds several)");
        }
        return o;
    }

    /**
     * The stock factory's settings, plus: OpenWire's loose encoding (a few more bytes per
     * message, less CPU to write and read them; the URL may say otherwise), no advisory
     * watching (no temporary destinations here), and with {@code hold} a plain tcp:// URL goes
     * through {@link HeldWritesTcp}.
     */
    static ActiveMQConnectionFactory factory(Opts o, boolean hold) {
        String url = Connect.connectUrl(o);
        if (!o.failover() && !Connect.hasParam(url, "wireFormat.tightEncodingEnabled")) {
            url = Connect.addParam(url, "wireFormat.tightEncodingEnabled=false");
        }
        if (hold && url.startsWith("tcp://")) url = HeldWritesTcp.scheme() + url.substring(3);
        ActiveMQConnectionFactory f = Connect.factory(o, url);
        f.setWatchTopicAdvisories(false);
        return f;
    }
}
