package burstbench.bridge.api;

import com.typesafe.config.Config;
import java.time.Duration;

/** The bridge's settings, read once from the {@code burstbench.bridge} section of the configuration. */
public record Settings(
    String host,
    int port,
    Duration askTimeout,
    String brokerUrl,
    Duration brokerConnectTimeout,
    Duration burstIdleTimeout,
    int ingestWorkers,
    Limits limits) {

  /** Input limits; a request above one is answered 400 (413 for the body size). */
  public record Limits(
      int maxCount,
      int maxSize,
      long maxBodyBytes,
      int maxWorkers,
      int maxBursts,
      long maxBurstBytes,
      long maxPiMessages,
      long maxPiTerms) {}

  public static final String BLOCKING_DISPATCHER = "burstbench.blocking-dispatcher";

  public static Settings from(Config root) {
    Config c = root.getConfig("burstbench.bridge");
    Config l = c.getConfig("limits");
    return new Settings(
        c.getString("host"),
        c.getInt("port"),
        c.getDuration("ask-timeout"),
        c.getString("broker-url").trim(),
        c.getDuration("broker-connect-timeout"),
        c.getDuration("burst-idle-timeout"),
        c.getInt("ingest-workers"),
        new Limits(
            l.getInt("max-count"),
            l.getInt("max-size"),
            l.getBytes("max-body-bytes"),
            l.getInt("max-workers"),
            l.getInt("max-bursts"),
            l.getBytes("max-burst-bytes"),
            l.getLong("max-pi-messages"),
            l.getLong("max-pi-terms")));
  }
}
