package burstbench.bridge.api;

import burstbench.bridge.shared.Jms;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** The HTTP API's request and response bodies (JSON keys are the snake_case of these names). */
public final class Api {
  private Api() {}

  public enum BurstRoute { ACTORS, BROKER }

  /** POST /bursts body as sent; absent fields take defaults in {@link #validate}. */
  public record BurstRequest(
      Integer count,
      Integer size,
      Integer workers,
      Integer bursts,
      String route,
      String brokerUrl,
      String destination,
      Boolean persistent) {}

  /** A validated burst run. */
  public record BurstSpec(
      int count, int size, int workers, int bursts, BurstRoute route,
      String brokerUrl, String destination, boolean persistent) {}

  public record BurstStats(
      int burst, long sent, long received, long duplicates, long badBodies, boolean complete,
      long firstSendNs, long lastRecvNs, double seconds, double msgsPerS) {}

  public record Accounting(long sent, long received, long lost, long duplicates) {}

  public record BurstsResult(
      String route, int count, int size, int workers, String destination,
      List<BurstStats> bursts, Accounting accounting, long foreign) {}

  /** POST /pi body. */
  public record PiRequest(Integer workers, Long messages, Long elements) {}

  public record PiResult(
      double pi, double exact, double error, double truncationError, double seconds,
      int workers, long messages, long elements) {}

  /** One NDJSON line of POST /messages. */
  public record IngestMessage(String id, String body, Map<String, String> headers) {}

  public record IngestResult(
      long accepted, long relayed, String destination, long bytes,
      long firstNs, long lastNs, double seconds) {}

  public record ErrorBody(String error) {}

  public static final Pattern QUEUE_NAME = Pattern.compile("[A-Za-z0-9_.\\-]{1,200}");
  private static final Pattern JMS_IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]{0,127}");

  private static Json.BadRequest bad(String m) {
    return new Json.BadRequest(m);
  }

  private static int range(String name, Integer value, int dflt, int min, long max) {
    int v = value == null ? dflt : value;
    if (v < min) {
      throw bad(name + " must be >= " + min + " (got " + v + ")");
    }
    if (v > max) {
      throw bad(name + " must be <= " + max + " (got " + v + ")");
    }
    return v;
  }

  public static BurstSpec validate(BurstRequest r, Settings s) {
    Settings.Limits l = s.limits();
    int count = range("count", r.count(), 1000, 1, l.maxCount());
    int size = range("size", r.size(), 6, 1, l.maxSize());
    int workers = range("workers", r.workers(), 4, 1, l.maxWorkers());
    int bursts = range("bursts", r.bursts(), 1, 1, l.maxBursts());
    if ((long) count * size > l.maxBurstBytes()) {
      throw bad("count x size = " + (long) count * size + " bytes exceeds the limit of "
          + l.maxBurstBytes() + " bytes per burst");
    }
    String routeName = r.route() == null ? "actors" : r.route();
    BurstRoute route = switch (routeName) {
      case "actors" -> BurstRoute.ACTORS;
      case "broker" -> BurstRoute.BROKER;
      default -> throw bad("unknown route '" + routeName + "' (expected \"actors\" or \"broker\")");
    };
    boolean persistent = r.persistent() != null && r.persistent();
    if (route == BurstRoute.ACTORS) {
      if (r.brokerUrl() != null || r.destination() != null || r.persistent() != null) {
        throw bad("broker_url, destination and persistent apply to route \"broker\" only");
      }
      return new BurstSpec(count, size, workers, bursts, route, null, null, false);
    }
    String url = r.brokerUrl() != null ? r.brokerUrl() : s.brokerUrl();
    if (url == null || url.isEmpty()) {
      throw bad("route \"broker\" needs broker_url (or burstbench.bridge.broker-url configured)");
    }
    if (!Jms.isOpenWire(url)) {
      throw bad("broker_url must be an OpenWire address (tcp://, ssl://, nio://, failover:(...))");
    }
    String dest = r.destination();
    if (dest != null && !QUEUE_NAME.matcher(dest).matches()) {
      throw bad("destination must match [A-Za-z0-9_.-]{1,200}");
    }
    return new BurstSpec(count, size, workers, bursts, route, url, dest, persistent);
  }

  public record PiSpec(int workers, long messages, long elements) {}

  public static PiSpec validate(PiRequest r, Settings s) {
    Settings.Limits l = s.limits();
    int workers = range("workers", r.workers(), 1, 1, l.maxWorkers());
    long messages = r.messages() == null ? 1000 : r.messages();
    long elements = r.elements() == null ? 10 : r.elements();
    if (messages < 1 || messages > l.maxPiMessages()) {
      throw bad("messages must be in 1.." + l.maxPiMessages() + " (got " + messages + ")");
    }
    if (elements < 1 || elements > l.maxPiTerms()) {
      throw bad("elements must be in 1.." + l.maxPiTerms() + " (got " + elements + ")");
    }
    if (Math.multiplyHigh(messages, elements) != 0 || messages * elements > l.maxPiTerms()) {
      throw bad("messages x elements exceeds the limit of " + l.maxPiTerms() + " terms");
    }
    return new PiSpec(workers, messages, elements);
  }

  public static void validate(IngestMessage m, int line) {
    if (m.body() == null) {
      throw bad("line " + line + ": field 'body' (string) is required");
    }
    if (m.headers() != null) {
      for (Map.Entry<String, String> h : m.headers().entrySet()) {
        String k = h.getKey();
        if (!JMS_IDENTIFIER.matcher(k).matches() || k.startsWith("JMS")) {
          throw bad("line " + line + ": header name '" + k + "' is not a usable JMS property name");
        }
        if (h.getValue() == null) {
          throw bad("line " + line + ": header '" + k + "' must be a string");
        }
      }
    }
  }
}
