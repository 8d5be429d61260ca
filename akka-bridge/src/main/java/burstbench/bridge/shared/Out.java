package burstbench.bridge.shared;

import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** stdout is for JSON lines only: one writer, one line at a time, flushed at once. */
public final class Out {
  private static final PrintStream OUT =
      new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);

  private Out() {}

  public static synchronized void line(String json) {
    OUT.print(json);
    OUT.print('\n');
    OUT.flush();
  }
}
