package burstbench.bridge.shared;

import sun.misc.Signal;

/** SIGTERM/SIGINT handling that lets a program finish in order and exit 0 (not 143). */
public final class Signals {
  private Signals() {}

  public static void onTerm(Runnable action) {
    for (String name : new String[] {"TERM", "INT"}) {
      try {
        Signal.handle(new Signal(name), sig -> action.run());
      } catch (IllegalArgumentException e) {
        // signal not available on this platform: the JVM's default applies
      }
    }
  }
}
