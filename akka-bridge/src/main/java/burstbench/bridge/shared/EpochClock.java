package burstbench.bridge.shared;

import java.time.Instant;

/** Wall-clock nanoseconds since the Unix epoch, read cheaply from the monotonic clock plus one offset. */
public final class EpochClock {
  private static final long OFFSET;

  static {
    Instant now = Instant.now();
    long mono = System.nanoTime();
    OFFSET = now.getEpochSecond() * 1_000_000_000L + now.getNano() - mono;
  }

  private EpochClock() {}

  public static long nowNs() {
    return OFFSET + System.nanoTime();
  }
}
