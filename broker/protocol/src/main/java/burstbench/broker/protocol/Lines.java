package burstbench.broker.protocol;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * What every broker launcher (ActiveMQ Classic's, Artemis's) says to the harness and hears
 * from it, whatever the broker: JSON lines on stdout, whole, one writer at a time; the
 * {@code stats} and {@code hold Q1 Q2...} lines on stdin, and end of file there as the
 * parent's death; {@code bridges} events as a network's bridges come and go.
 */
public final class Lines {
  private Lines() {}

  /** One JSON line on stdout, whole (several threads of a launcher write). */
  public static void say(String json) {
    synchronized (System.out) {
      System.out.println(json);
      System.out.flush();
    }
  }

  /**
   * Reads stdin on a daemon thread: each {@code stats} line is answered with {@code
   * stats.get()}, each {@code hold Q1 Q2...} line handed to {@code hold}; end of file (the
   * harness gone, even by SIGKILL) stops the process.
   */
  public static void watchStdin(Supplier<String> stats, Consumer<List<String>> hold) {
    Thread watcher = new Thread(() -> {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
          StandardCharsets.UTF_8));
      try {
        String line;
        while ((line = in.readLine()) != null) {
          String cmd = line.strip();
          if (cmd.equals("stats")) {
            say(stats.get());
          } else if (cmd.startsWith("hold ")) {
            hold.accept(List.of(cmd.substring(5).strip().split("\\s+")));
          }
        }
      } catch (IOException ignored) {
        // a broken pipe means the same as end of file
      }
      System.err.println("burstbench broker: parent gone (stdin closed), stopping");
      System.exit(0);
    }, "burstbench-stdin-watch");
    watcher.setDaemon(true);
    watcher.start();
  }

  /**
   * Prints {@code {"event":"bridges","broker":NAME,"active":N}} whenever {@code active}
   * changes, every 100 ms while {@code running}, so the harness can wait for a network of
   * brokers to be connected before it starts clients.
   */
  public static void watchBridges(String broker, BooleanSupplier running, IntSupplier active) {
    Thread t = new Thread(() -> {
      int last = -1;
      while (running.getAsBoolean()) {
        int now = active.getAsInt();
        if (now != last) {
          say("{\"event\":\"bridges\",\"broker\":\"" + json(broker) + "\",\"active\":" + now
              + "}");
          last = now;
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "burstbench-bridge-watch");
    t.setDaemon(true);
    t.start();
  }

  /** Open file descriptors of this process (Linux /proc), -1 where that cannot be read. */
  public static long openFiles() {
    String[] fds = new java.io.File("/proc/self/fd").list();
    return fds == null ? -1 : fds.length;
  }

  public static long epochNanos() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** {@code s} as the inside of a JSON string. */
  public static String json(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  /** The innermost cause's class and message: what an error line names. */
  public static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getClass().getSimpleName() + ": " + t.getMessage();
  }
}
