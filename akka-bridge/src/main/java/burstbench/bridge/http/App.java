package burstbench.bridge.http;

import akka.NotUsed;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.http.javadsl.Http;
import akka.http.javadsl.ServerBinding;
import akka.http.javadsl.server.Route;
import burstbench.bridge.api.Json;
import burstbench.bridge.api.Settings;
import burstbench.bridge.api.Stats;
import burstbench.bridge.bursts.Bursts;
import burstbench.bridge.ingest.Ingest;
import burstbench.bridge.pi.PiRunner;
import burstbench.bridge.shared.Out;
import burstbench.bridge.shared.Signals;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bridge's HTTP server. Settings come from {@code burstbench.bridge} in application.conf
 * (environment variables and -D system properties override them). Prints one JSON line
 * {"event":"ready","url":...} on stdout once bound; logs go to stderr; SIGTERM/SIGINT run
 * CoordinatedShutdown (unbind, drain, stop) and exit 0.
 */
public final class App {
  private static final Logger log = LoggerFactory.getLogger(App.class);

  private App() {}

  /** Why CoordinatedShutdown ran: a signal. */
  private static final CoordinatedShutdown.Reason SIGNAL = new CoordinatedShutdown.Reason() {
    @Override
    public String toString() {
      return "signal";
    }
  };

  /** The configuration the server runs with: HTTP timeouts and body limit follow the bridge settings. */
  static Config config() {
    Config base = ConfigFactory.load();
    Settings s = Settings.from(base);
    long askMs = s.askTimeout().toMillis();
    return ConfigFactory.parseMap(Map.of(
            "akka.http.server.request-timeout", (askMs + 10_000) + "ms",
            "akka.http.server.idle-timeout", (askMs + 60_000) + "ms",
            "akka.http.server.parsing.max-content-length", Long.toString(s.limits().maxBodyBytes()),
            "akka.coordinated-shutdown.exit-jvm", "on"))
        .withFallback(base);
  }

  static void startHttpServer(Route route, ActorSystem<?> system, Settings settings) {
    CompletionStage<ServerBinding> futureBinding =
        Http.get(system).newServerAt(settings.host(), settings.port()).bind(route);
    futureBinding.whenComplete((binding, failure) -> {
      if (binding != null) {
        binding.addToCoordinatedShutdown(Duration.ofSeconds(10), system);
        InetSocketAddress address = binding.localAddress();
        String host = settings.host().contains(":") ? "[" + settings.host() + "]" : settings.host();
        String url = "http://" + host + ":" + address.getPort();
        log.info("akka-bridge listening on {}", url);
        Out.line("{\"event\":\"ready\",\"url\":" + Json.write(url) + "}");
      } else {
        System.err.println("error: could not bind " + settings.host() + ":" + settings.port() + ": "
            + failure.getMessage());
        new Thread(() -> System.exit(1), "exit").start();
      }
    });
  }

  public static void main(String[] args) {
    LoggerFactory.getILoggerFactory(); // initialise SLF4J before Akka's logger races it
    Config config = config();
    Settings settings = Settings.from(config);
    Behavior<NotUsed> rootBehavior = Behaviors.setup(context -> {
      ActorRef<Stats.Command> stats = context.spawn(Stats.create(), "stats");
      ActorRef<Bursts.Command> bursts = context.spawn(Bursts.create(settings, stats), "bursts");
      ActorRef<Ingest.Command> ingest = context.spawn(Ingest.create(settings, stats), "ingest");
      ActorRef<PiRunner.Command> pi = context.spawn(PiRunner.create(), "pi");
      Routes routes = new Routes(context.getSystem(), settings, bursts, ingest, pi, stats);
      startHttpServer(routes.routes(), context.getSystem(), settings);
      return Behaviors.empty();
    });
    ActorSystem<NotUsed> system = ActorSystem.create(rootBehavior, "burstbench-bridge", config);
    Signals.onTerm(() -> {
      log.info("signal: coordinated shutdown");
      CoordinatedShutdown.get(system).runAll(SIGNAL);
    });
  }
}
