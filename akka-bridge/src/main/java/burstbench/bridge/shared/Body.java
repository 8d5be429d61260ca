package burstbench.bridge.shared;

import java.util.zip.CRC32;

/**
 * The contract's message body: the 6-digit zero-padded counter (seq mod 1,000,000), then ASCII
 * 'x'; and its checksum, the CRC-32 (IEEE, as zlib's crc32) carried as bb_crc32 in 8 lowercase
 * hex digits.
 */
public final class Body {
  private Body() {}

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  /** CRC-32 of b[off..off+len) with a reusable {@code crc} (one per thread or actor). */
  public static int crc32(CRC32 crc, byte[] b, int off, int len) {
    crc.reset();
    crc.update(b, off, len);
    return (int) crc.getValue();
  }

  /** {@code crc} as 8 lowercase hex digits, zero-padded (as {@code String.format("%08x", crc)}). */
  public static String hex8(int crc) {
    return hex8(crc, new StringBuilder(8)).toString();
  }

  /** Appends {@code crc} as 8 lowercase hex digits. */
  public static StringBuilder hex8(int crc, StringBuilder sb) {
    for (int i = 28; i >= 0; i -= 4) {
      sb.append(HEX[(crc >>> i) & 15]);
    }
    return sb;
  }

  /** The value of 8 lowercase hex digits (as {@link #hex8} writes them), else -1. */
  public static long parseHex8(String s) {
    if (s == null || s.length() != 8) {
      return -1L;
    }
    long v = 0;
    for (int i = 0; i < 8; i++) {
      char c = s.charAt(i);
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) {
        return -1L;
      }
      v = (v << 4) | d;
    }
    return v;
  }

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
    if (length <= 0 || head == null || head.length < Math.min(6, length)) {
      return false;
    }
    return ok(head(head, length), length, seq);
  }

  /**
   * The first bytes of a body of {@code length} bytes (at most 6) packed into one long, byte i in
   * bits 8i..8i+7: what {@link #ok(long, int, long)} checks, without an array a message.
   */
  public static long head(byte[] b, int length) {
    long h = 0;
    for (int i = Math.min(6, length) - 1; i >= 0; i--) {
      h = (h << 8) | (b[i] & 0xFF);
    }
    return h;
  }

  /** As {@link #ok(byte[], int, long)}, for a head packed by {@link #head}. */
  public static boolean ok(long head, int length, long seq) {
    if (length <= 0) {
      return false;
    }
    long c = Math.floorMod(seq, 1_000_000L);
    int n = Math.min(6, length);
    for (int i = 5; i >= 0; i--) {
      if (i < n && ((head >>> (8 * i)) & 0xFF) != '0' + c % 10) {
        return false;
      }
      c /= 10;
    }
    return true;
  }
}
