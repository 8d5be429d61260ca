package burstbench.bridge.pi;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.AskPattern;
import burstbench.bridge.api.Api;
import burstbench.bridge.api.Json;
import burstbench.bridge.shared.Cli;
import burstbench.bridge.shared.Out;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Leibniz Pi over actors: {@code PiActors --workers W --messages M --elements E}. A creator sends M
 * work messages through a round-robin pool of W workers; each computes E terms; a collector adds
 * them up. Prints one JSON line with the result, the exact partial sum of M*E terms computed
 * directly, and the seconds from creating the actors to the last sum.
 */
public final class PiActors {
  private PiActors() {}

  /** 4 * sum of (-1)^k / (2k+1) for k in [start, start+n). */
  static double chunk(long start, long n) {
    double s = 0.0;
    long end = start + n;
    for (long k = start; k < end; k++) {
      double term = 1.0 / (2.0 * k + 1.0);
      s += (k & 1L) == 0 ? term : -term;
    }
    return 4.0 * s;
  }

  /** The partial sum of the first {@code terms} terms, computed directly in one loop. */
  public static double exact(long terms) {
    return chunk(0, terms);
  }

  private static final String USAGE =
      "usage: PiActors --workers W --messages M --elements E\n"
          + "  Leibniz Pi: creator -> round-robin pool of W worker actors -> collector;\n"
          + "  M messages of E terms each. Prints one JSON line:\n"
          + "  {pi, exact, error, truncation_error, seconds, workers, messages, elements}";

  public static void main(String[] args) throws Exception {
    Cli.quietLogs();
    int workers = 1;
    long messages = 1000;
    long elements = 10;
    try {
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        String v = null;
        int eq = a.indexOf('=');
        if (a.startsWith("--") && eq > 0) {
          v = a.substring(eq + 1);
          a = a.substring(0, eq);
        }
        if (a.equals("--help") || a.equals("-h")) {
          Out.line(USAGE);
          return;
        }
        if (!a.equals("--workers") && !a.equals("--messages") && !a.equals("--elements")) {
          throw new IllegalArgumentException("unknown option " + a);
        }
        if (v == null) {
          if (i + 1 >= args.length) {
            throw new IllegalArgumentException("missing value for " + a);
          }
          v = args[++i];
        }
        long n;
        try {
          n = Long.parseLong(v);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(a + " needs an integer, got '" + v + "'");
        }
        if (n < 1) {
          throw new IllegalArgumentException(a + " must be >= 1");
        }
        switch (a) {
          case "--workers" -> {
            if (n > 100_000) {
              throw new IllegalArgumentException("--workers must be <= 100000");
            }
            workers = (int) n;
          }
          case "--messages" -> messages = n;
          default -> elements = n;
        }
      }
      if (Math.multiplyHigh(messages, elements) != 0 || messages * elements < 0) {
        throw new IllegalArgumentException("messages x elements overflows");
      }
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      System.exit(2);
    }

    ActorSystem<PiRunner.Command> system = ActorSystem.create(PiRunner.create(), "pi", Cli.config());
    int exit = 0;
    try {
      Api.PiSpec spec = new Api.PiSpec(workers, messages, elements);
      Api.PiResult r = AskPattern.<PiRunner.Command, Api.PiResult>ask(
              system, replyTo -> new PiRunner.Run(spec, replyTo), Duration.ofDays(1), system.scheduler())
          .toCompletableFuture().get();
      Out.line(Json.write(r));
    } catch (Exception e) {
      System.err.println("error: " + e);
      exit = 1;
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    System.exit(exit);
  }
}
