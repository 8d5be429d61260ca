package burstbench.bridge.shared;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/** What the command-line programs share: a quiet configuration and the version line. */
public final class Cli {
  private Cli() {}

  /** Logs at WARN unless -Dorg.slf4j.simpleLogger.defaultLogLevel says otherwise; call first in main. */
  public static void quietLogs() {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
    // initialise SLF4J now, on this thread, so Akka's logger does not race its initialisation
    org.slf4j.LoggerFactory.getILoggerFactory();
  }

  /** application.conf with Akka logging at WARNING unless -Dakka.loglevel says otherwise. */
  public static Config config() {
    quietLogs();
    return ConfigFactory.systemProperties()
        .withFallback(ConfigFactory.parseString("akka.loglevel = WARNING"))
        .withFallback(ConfigFactory.load());
  }

  /** This bridge's name in the client registry and clients/options.tsv. */
  public static final String CLIENT = "akka-bridge";

  public static String versionLine() {
    String akkaVersion = akka.Version.current();
    String amq = org.apache.activemq.ActiveMQConnectionMetaData.PROVIDER_VERSION;
    return "{\"client\":\"" + CLIENT + "\",\"library\":\"Akka " + akkaVersion + " + activemq-client " + amq
        + "\",\"runtime\":\"Java " + System.getProperty("java.version") + "\"}";
  }

  /** One {@code error:} line on stderr, then exit with {@code code}. */
  public static void fail(int code, String message) {
    System.err.println("error: " + message);
    System.err.flush();
    Runtime.getRuntime().halt(code);
  }
}
