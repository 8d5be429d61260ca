package burstbench.bridge.shared;

import burstbench.clients.Tls;
import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.JMSSecurityException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.activemq.ActiveMQConnectionFactory;

/** OpenWire (ActiveMQ JMS) connection helpers shared by the bridge and its command-line clients. */
public final class Jms {
  private Jms() {}

  /** Could not connect or authenticate in time (contract exit code 3). */
  public static final class ConnectException extends Exception {
    public ConnectException(String message) {
      super(message);
    }
  }

  private static final String[] SCHEMES = {"tcp://", "ssl://", "nio://", "nio+ssl://", "failover:"};

  /** True for the OpenWire addresses this bridge speaks: tcp://, ssl://, nio://, failover:(...). */
  public static boolean isOpenWire(String url) {
    if (url == null) {
      return false;
    }
    String u = url.toLowerCase(Locale.ROOT);
    for (String s : SCHEMES) {
      if (u.startsWith(s) && u.length() > s.length()) {
        return true;
      }
    }
    return false;
  }

  /** A factory for {@code url}; throws IllegalArgumentException when the address does not parse. */
  public static ActiveMQConnectionFactory factory(String url, String user, String password) {
    return factory(url, user, password, null);
  }

  /** As above; with {@code caPem} the broker's TLS certificate is verified against that CA. */
  public static ActiveMQConnectionFactory factory(String url, String user, String password,
      String caPem) {
    return factory(url, user, password, caPem, null, null);
  }

  /**
   * As above; with {@code certPem} and {@code keyPem} (PEM, the key unencrypted PKCS#8) the
   * client shows that certificate to a broker that asks for one (mutual TLS).
   */
  public static ActiveMQConnectionFactory factory(String url, String user, String password,
      String caPem, String certPem, String keyPem) {
    if (!isOpenWire(url)) {
      throw new IllegalArgumentException(
          "unsupported broker url " + url + " (OpenWire only: tcp://, ssl://, nio://, failover:(...))");
    }
    ActiveMQConnectionFactory f;
    try {
      if (caPem != null || certPem != null) {
        org.apache.activemq.ActiveMQSslConnectionFactory sf =
            new org.apache.activemq.ActiveMQSslConnectionFactory(url);
        sf.setKeyAndTrustManagers(certPem != null ? Tls.keyManagers(certPem, keyPem) : null,
            caPem != null ? Tls.trustManagers(caPem) : null, null);
        f = sf;
      } else {
        f = new ActiveMQConnectionFactory(url);
      }
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("invalid broker url " + url + ": " + e.getMessage());
    }
    if (user != null) {
      f.setUserName(user);
    }
    if (password != null) {
      f.setPassword(password);
    }
    f.setWatchTopicAdvisories(false);
    f.setCopyMessageOnSend(false);
    return f;
  }

  /**
   * Create and start a connection, retrying refused connections until {@code timeout} has passed.
   * An authentication failure is final at once.
   */
  public static Connection connect(ActiveMQConnectionFactory f, Duration timeout) throws ConnectException {
    String url = f.getBrokerURL();
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = "timed out";
    while (true) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new ConnectException(
            "could not connect to " + url + " within " + timeout.toMillis() / 1000.0 + " s: " + last);
      }
      CompletableFuture<Connection> attempt = new CompletableFuture<>();
      Thread t = new Thread(() -> {
        Connection c = null;
        try {
          c = f.createConnection();
          c.start();
          attempt.complete(c);
        } catch (Throwable e) {
          closeQuietly(c);
          attempt.completeExceptionally(e);
        }
      }, "jms-connect");
      t.setDaemon(true);
      t.start();
      try {
        return attempt.get(left, TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        attempt.thenAccept(Jms::closeQuietly); // a late success is closed, not leaked
        throw new ConnectException("could not connect to " + url + " within "
            + timeout.toMillis() / 1000.0 + " s" + (last.equals("timed out") ? "" : ": " + last));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ConnectException("interrupted while connecting to " + url);
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof JMSSecurityException) {
          throw new ConnectException("authentication failed at " + url + ": " + cause.getMessage());
        }
        last = describe(cause);
      }
      try {
        Thread.sleep(Math.min(200, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ConnectException("interrupted while connecting to " + url);
      }
    }
  }

  private static final java.util.regex.Pattern NODELAY =
      java.util.regex.Pattern.compile("[?&]wireFormat\\.tcpNoDelayEnabled=([A-Za-z]+)");

  /**
   * The ready line's socket fact (clients/contract.md): TCP_NODELAY as read back from the
   * connection's socket (ActiveMQConnection.getTransport().narrow(Socket.class), public API), or
   * else what activemq-client sets once the wire format is negotiated: the negotiated
   * {@code wireFormat.tcpNoDelayEnabled}, true unless the URL says false. Changes nothing.
   */
  public static String nodelayJson(Connection c, String url) {
    if (c instanceof org.apache.activemq.ActiveMQConnection ac) {
      try {
        java.net.Socket s = ac.getTransport().narrow(java.net.Socket.class);
        if (s != null) {  // over ssl:// the negotiated TLS version too
          String tls = s instanceof javax.net.ssl.SSLSocket ssl
              ? ",\"tls\":\"" + ssl.getSession().getProtocol() + "\"" : "";
          return "\"tcp_nodelay\":" + s.getTcpNoDelay() + ",\"tcp_nodelay_how\":\"getsockopt\""
              + tls;
        }
      } catch (java.net.SocketException | RuntimeException ignored) {
        // fall through to what the library sets
      }
    }
    boolean on = true;
    for (java.util.regex.Matcher m = NODELAY.matcher(url); m.find(); ) {
      on = Boolean.parseBoolean(m.group(1));
    }
    return "\"tcp_nodelay\":" + on + ",\"tcp_nodelay_how\":\"library\"";
  }

  public static String describe(Throwable e) {
    Throwable t = e;
    while (t instanceof JMSException && t.getCause() != null) {
      t = t.getCause();
    }
    String m = t.getMessage();
    return m == null ? t.getClass().getSimpleName() : m;
  }

  public static void closeQuietly(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception ignored) {
        // closing is best effort
      }
    }
  }
}
