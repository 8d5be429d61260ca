package burstbench.bridge.pi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.AskPattern;
import burstbench.bridge.api.Api;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PiActorsTest {
  static ActorSystem<PiRunner.Command> system;

  @BeforeAll
  static void start() {
    system = ActorSystem.create(PiRunner.create(), "pi-test",
        ConfigFactory.parseString("akka.loglevel = WARNING").withFallback(ConfigFactory.load()));
  }

  @AfterAll
  static void stop() throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  static Api.PiResult run(int workers, long messages, long elements) throws Exception {
    Api.PiSpec spec = new Api.PiSpec(workers, messages, elements);
    return AskPattern.<PiRunner.Command, Api.PiResult>ask(
            system, r -> new PiRunner.Run(spec, r), Duration.ofSeconds(60), system.scheduler())
        .toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  @Test
  void exactPartialSums() {
    assertEquals(4.0, PiActors.exact(1), 0.0);
    assertEquals(4.0 * (1 - 1.0 / 3), PiActors.exact(2), 1e-15);
    assertEquals(4.0 * (1 - 1.0 / 3 + 1.0 / 5 - 1.0 / 7 + 1.0 / 9 - 1.0 / 11), PiActors.exact(6), 1e-15);
    // two chunks of three add up to the six-term sum
    assertEquals(PiActors.exact(6), PiActors.chunk(0, 3) + PiActors.chunk(3, 3), 1e-15);
  }

  @Test
  void actorsMatchTheExactPartialSumOnSmallGrids() throws Exception {
    for (int workers : new int[] {1, 2, 5}) {
      for (long messages : new long[] {1, 3, 10, 100}) {
        for (long elements : new long[] {1, 7, 100}) {
          Api.PiResult r = run(workers, messages, elements);
          double exact = PiActors.exact(messages * elements);
          assertEquals(exact, r.exact(), 0.0);
          assertEquals(exact, r.pi(), 1e-12,
              "workers=" + workers + " messages=" + messages + " elements=" + elements);
          assertTrue(r.error() <= 1e-12);
          assertEquals(Math.abs(exact - Math.PI), r.truncationError(), 1e-15);
          assertEquals(workers, r.workers());
          assertEquals(messages, r.messages());
          assertEquals(elements, r.elements());
          assertTrue(r.seconds() > 0);
        }
      }
    }
  }

  @Test
  void convergesTowardsPi() throws Exception {
    Api.PiResult r = run(4, 1000, 1000);
    assertTrue(Math.abs(r.pi() - Math.PI) < 1.01e-6, "1e6 terms are within 1e-6 of pi: " + r.pi());
  }
}
