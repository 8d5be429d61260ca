package burstbench.clients;

import static burstbench.clients.Common.*;

import java.net.Socket;
import java.net.SocketException;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.jms.Connection;
import jakarta.jms.JMSSecurityException;

import org.apache.activemq.ActiveMQConnection;
import org.apache.activemq.ActiveMQConnectionFactory;

/**
 * Connecting as the contract asks (clients/contract.md): the URL with a bounded connect, a
 * factory with the credentials and TLS material, the ready line's socket facts, and exit 3
 * naming the address when connecting fails or outlasts --connect-timeout.
 */
public final class Connect {
    private Connect() {}

    /**
     * The URL with the contract's bounded connect added unless it sets its own: the tcp
     * transport's {@code connectionTimeout} (tcp/ssl/nio) or failover's {@code timeout}.
     */
    public static String connectUrl(Opts o) {
        long ms = o.connectTimeoutMs();
        String url = o.url;
        if (o.failover()) {
            if (!hasParam(url.substring(url.lastIndexOf(')') + 1), "timeout")) url = addParam(url, "timeout=" + ms);
        } else if (!hasParam(url, "connectionTimeout")) {
            url = addParam(url, "connectionTimeout=" + ms);
        }
        return url;
    }

    /** The session mode of a consumer of {@code o}: its --ack as JMS / ActiveMQ name it, or transacted with --tx-batch. */
    static int ackMode(Opts o) {
        return switch (o.txBatch > 0 ? "tx" : o.ack) {
            case "tx" -> jakarta.jms.Session.SESSION_TRANSACTED;
            case "client" -> jakarta.jms.Session.CLIENT_ACKNOWLEDGE;
            case "client-individual" -> org.apache.activemq.ActiveMQSession.INDIVIDUAL_ACKNOWLEDGE;
            case "dups-ok" -> jakarta.jms.Session.DUPS_OK_ACKNOWLEDGE;
            default -> jakarta.jms.Session.AUTO_ACKNOWLEDGE;
        };
    }

    /**
     * Sends {@code m} with a broker receipt (ActiveMQ's AsyncCallback: activemq-client 6.1 has no
     * JMS 2 CompletionListener) and waits for it, or until {@code stopping} (SIGTERM while the
     * broker holds us back).
     */
    static void sendConfirmed(org.apache.activemq.ActiveMQMessageProducer p, jakarta.jms.Message m,
                              java.util.function.BooleanSupplier stopping) throws jakarta.jms.JMSException, InterruptedException {
        final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        final jakarta.jms.JMSException[] failure = new jakarta.jms.JMSException[1];
        p.send(m, new org.apache.activemq.AsyncCallback() {
            @Override public void onSuccess() { done.countDown(); }
            @Override public void onException(jakarta.jms.JMSException e) { failure[0] = e; done.countDown(); }
        });
        while (!done.await(100, TimeUnit.MILLISECONDS)) {
            if (stopping.getAsBoolean()) return;
        }
        if (failure[0] != null) throw failure[0];
    }

    /** A factory for {@link #connectUrl}: ActiveMQ's defaults plus what the contract's options ask for. */
    static ActiveMQConnectionFactory factory(Opts o) {
        return factory(o, connectUrl(o));
    }

    /**
     * A factory for {@code url} with the contract's options: credentials, the --ca trust,
     * a bounded connect ({@code connectResponseTimeout}) and a bounded close (a stop must not
     * wait 15 s for a broker that is gone). Everything else is ActiveMQ's default.
     */
    public static ActiveMQConnectionFactory factory(Opts o, String url) {
        ActiveMQConnectionFactory f;
        if (o.ca != null || o.cert != null) {
            // verify the broker against the given CA (ActiveMQ checks the host name too), else
            // the JDK's trust store; show our own certificate when the broker asks (mutual TLS)
            org.apache.activemq.ActiveMQSslConnectionFactory sf = new org.apache.activemq.ActiveMQSslConnectionFactory(url);
            try {
                sf.setKeyAndTrustManagers(o.cert != null ? Tls.keyManagers(o.cert, o.key) : null,
                    o.ca != null ? Tls.trustManagers(o.ca) : null, null);
            } catch (IllegalArgumentException e) {
                usage(e.getMessage());
            } catch (Exception e) {
                usage("--ca " + o.ca + " / --cert " + o.cert + ": " + e.getMessage());
            }
            f = sf;
        } else {
            f = new ActiveMQConnectionFactory(url);
        }
        if (o.user != null) f.setUserName(o.user);
        if (o.password != null) f.setPassword(o.password);
        f.setConnectResponseTimeout((int) Math.min(Integer.MAX_VALUE, o.connectTimeoutMs()));
        f.setCloseTimeout(5000);
        // one process, one listener; several slots share the factory: each connection gets its own (reconnectLines)
        if (o.failover() && o.slot == 0) f.setTransportListener(new Failover.Reconnects(o.id));
        return f;
    }


    public static boolean hasParam(String url, String name) {
        int q = url.indexOf('?');
        if (q < 0) return false;
        for (String kv : url.substring(q + 1).split("&")) if (kv.split("=", 2)[0].equals(name)) return true;
        return false;
    }

    public static String addParam(String url, String kv) {
        int q = url.lastIndexOf('?');
        boolean hasQuery = q >= 0 && q > url.lastIndexOf(')');
        return url + (hasQuery ? "&" : "?") + kv;
    }

    private static final Pattern NODELAY = Pattern.compile("[?&]wireFormat\\.tcpNoDelayEnabled=([A-Za-z]+)");

    /**
     * The ready line's socket fact: TCP_NODELAY as read back from the connection's socket
     * (ActiveMQConnection.getTransport().narrow(Socket.class), public API: the tcp, ssl and
     * nio transports answer with their socket, failover with its connected one), or else what
     * activemq-client sets: once the wire format is negotiated, its WireFormatNegotiator sets
     * TCP_NODELAY to the negotiated {@code wireFormat.tcpNoDelayEnabled}, true unless the URL
     * (or the broker) says false. Nothing here changes the option.
     */
    static String nodelayJson(Connection c, Opts o) {
        if (c instanceof ActiveMQConnection) {
            try {
                Socket s = ((ActiveMQConnection) c).getTransport().narrow(Socket.class);
                // over ssl:// the negotiated version too (SSLSession.getProtocol(): "TLSv1.3")
                String tls = s instanceof javax.net.ssl.SSLSocket ssl
                    ? ",\"tls\":\"" + ssl.getSession().getProtocol() + "\"" : "";
                if (s != null) return "\"tcp_nodelay\":" + s.getTcpNoDelay() + ",\"tcp_nodelay_how\":\"getsockopt\"" + tls;
            } catch (SocketException | RuntimeException ignored) {
                // fall through to what the library sets
            }
        }
        boolean on = true;
        for (Matcher m = NODELAY.matcher(o.url); m.find(); ) on = Boolean.parseBoolean(m.group(1));
        return "\"tcp_nodelay\":" + on + ",\"tcp_nodelay_how\":\"library\"";
    }

    /** Runs the connect/subscribe steps; exits 3 naming the address if they fail or outlast --connect-timeout. */
    static <T> T connectWithin(Opts o, Callable<T> steps) {
        FutureTask<T> task = new FutureTask<>(steps);
        Thread t = new Thread(task, "bb-connect");
        t.setDaemon(true);
        t.start();
        try {
            return task.get(o.connectTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            die(3, "error: could not connect to " + o.url + " within " + fmt(o.connectTimeout) + " s");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            boolean auth = false;
            for (Throwable x = c; x != null; x = x.getCause()) if (x instanceof JMSSecurityException || x instanceof SecurityException) auth = true;
            die(3, "error: " + (auth ? "authentication failed at " : "could not connect to ") + o.url + ": " + describe(c));
        } catch (InterruptedException e) {
            die(3, "error: interrupted while connecting to " + o.url);
        }
        return null;
    }

    /** A connection's exception listener: refused credentials are exit 3 (no retry), else 1. */
    static void connectionFailed(Opts o, Throwable e) {
        connectionFailed(o, e, null);
    }

    /**
     * The same, for a slot of several too: its error line names the slot, and {@code before}
     * (every slot's records), when given, runs once this exit is the process's, before it.
     */
    static void connectionFailed(Opts o, Throwable e, Runnable before) {
        if (closing) return;
        boolean auth = false;
        for (Throwable x = e; x != null; x = x.getCause()) {
            if (x instanceof JMSSecurityException || x instanceof SecurityException
                    || String.valueOf(x.getMessage()).contains("SecurityException")) auth = true;
        }
        String error = errorOf(o);
        if (auth) dieAfter(3, error + "authentication failed at " + o.url + ": " + describe(e), before);
        else dieAfter(1, error + "connection to " + o.url + " failed: " + describe(e), before);
    }

    /** "error: ", naming the slot when {@code o} is one of several. */
    static String errorOf(Opts o) {
        return o.slot > 0 ? "error: slot " + o.id + ": " : "error: ";
    }

    public static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        String m = root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
        String top = e.getMessage();
        String s = (top != null && root != e && !top.contains(m)) ? top + " (" + m + ")" : (root == e ? m : (top != null ? top : m));
        return s.replace('\n', ' ').replace('\r', ' ');
    }

    private static String fmt(double d) { return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d); }
}
