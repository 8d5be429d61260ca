package burstbench.bridge.shared;

import java.util.Arrays;

/** A growable array of primitive longs (records are kept in memory until the client stops). */
public final class LongArray {
  private long[] data;
  private int size;

  public LongArray() {
    this(1024);
  }

  public LongArray(int capacity) {
    data = new long[Math.max(16, capacity)];
  }

  public void add(long v) {
    if (size == data.length) {
      data = Arrays.copyOf(data, data.length * 2);
    }
    data[size++] = v;
  }

  public long get(int i) {
    return data[i];
  }

  public int size() {
    return size;
  }
}
