package burstbench.bridge;

/** The contract's message body: the 6-digit zero-padded counter (seq mod 1,000,000), then ASCII 'x'. */
public final class Body {
  private Body() {}

  /** The counter digits of {@code seq}, always six bytes. */
  public static byte[] counter(long seq) {
    long c = Math.floorMod(seq, 1_000_000L);
    byte[] d = new byte[6];
    for (int i = 5; i >= 0; i--) {
      d[i] = (byte) ('0' + (c % 10));
      c /= 10;
    }
    return d;
  }

  /** A body of exactly {@code size} bytes for message {@code seq}. */
  public static byte[] of(long seq, int size) {
    byte[] b = new byte[size];
    byte[] d = counter(seq);
    int n = Math.min(6, size);
    System.arraycopy(d, 0, b, 0, n);
    for (int i = n; i < size; i++) {
      b[i] = 'x';
    }
    return b;
  }

  /**
   * True when a body of {@code length} bytes whose first bytes are {@code head} starts with the
   * expected counter digits of {@code seq} (its first {@code length} digits when shorter than 6).
   */
  public static boolean ok(byte[] head, int length, long seq) {
    if (length <= 0 || head == null) {
      return false;
    }
    byte[] d = counter(seq);
    int n = Math.min(6, length);
    if (head.length < n) {
      return false;
    }
    for (int i = 0; i < n; i++) {
      if (head[i] != d[i]) {
        return false;
      }
    }
    return true;
  }
}
