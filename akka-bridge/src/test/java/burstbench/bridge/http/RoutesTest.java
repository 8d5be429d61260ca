package burstbench.bridge.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.Behaviors;
import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.HttpMethods;
import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.japi.function.Function;
import akka.stream.Materializer;
import akka.stream.javadsl.Source;
import akka.util.ByteString;
import burstbench.bridge.api.Json;
import burstbench.bridge.api.Settings;
import burstbench.bridge.api.Stats;
import burstbench.bridge.bursts.Bursts;
import burstbench.bridge.ingest.Ingest;
import burstbench.bridge.pi.PiActors;
import burstbench.bridge.pi.PiRunner;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The routes, driven as a request -> response function: no port, no broker. */
class RoutesTest {
  static final long MAX_BODY = 4096;
  static final Settings SETTINGS = new Settings("127.0.0.1", 0, Duration.ofSeconds(30), "",
      Duration.ofSeconds(1), Duration.ofSeconds(2), 2,
      new Settings.Limits(1000, 1024, MAX_BODY, 8, 5, 1 << 20, 100_000, 10_000_000));

  static ActorSystem<Void> system;
  static Materializer mat;
  static Function<HttpRequest, CompletionStage<HttpResponse>> handler;

  record Answer(int status, JsonNode json) {}

  @BeforeAll
  static void start() {
    system = ActorSystem.create(Behaviors.empty(), "routes-test",
        ConfigFactory.parseString("akka.loglevel = WARNING").withFallback(ConfigFactory.load()));
    mat = Materializer.matFromSystem(system);
    ActorRef<Stats.Command> stats = system.systemActorOf(Stats.create(), "stats", Props.empty());
    ActorRef<Bursts.Command> bursts = system.systemActorOf(Bursts.create(SETTINGS, stats), "bursts", Props.empty());
    ActorRef<Ingest.Command> ingest = system.systemActorOf(Ingest.create(SETTINGS, stats), "ingest", Props.empty());
    ActorRef<PiRunner.Command> pi = system.systemActorOf(PiRunner.create(), "pi", Props.empty());
    handler = new Routes(system, SETTINGS, bursts, ingest, pi, stats).routes().handler(system);
  }

  @AfterAll
  static void stop() throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  static Answer run(HttpRequest request) throws Exception {
    HttpResponse r = handler.apply(request).toCompletableFuture().get(30, TimeUnit.SECONDS);
    String body = r.entity().toStrict(10_000, mat).toCompletableFuture().get(10, TimeUnit.SECONDS)
        .getData().utf8String();
    assertEquals(ContentTypes.APPLICATION_JSON, r.entity().getContentType(), body);
    return new Answer(r.status().intValue(), Json.MAPPER.readTree(body));
  }

  static Answer post(String path, String body) throws Exception {
    return run(HttpRequest.POST(path).withEntity(ContentTypes.APPLICATION_JSON, body));
  }

  static void assertError(int status, Answer a, String fragment) {
    assertEquals(status, a.status(), a.json().toString());
    assertTrue(a.json().has("error"), a.json().toString());
    assertTrue(a.json().get("error").asText().contains(fragment),
        "error should mention '" + fragment + "': " + a.json());
  }

  @Test
  void health() throws Exception {
    Answer a = run(HttpRequest.GET("/health"));
    assertEquals(200, a.status());
    assertEquals("ok", a.json().get("status").asText());
  }

  @Test
  void actorsBurstAccountsForEveryMessage() throws Exception {
    Answer a = post("/bursts", "{\"count\":500,\"size\":10,\"workers\":3,\"bursts\":2,\"route\":\"actors\"}");
    assertEquals(200, a.status(), a.json().toString());
    JsonNode acc = a.json().get("accounting");
    assertEquals(1000, acc.get("sent").asLong());
    assertEquals(1000, acc.get("received").asLong());
    assertEquals(0, acc.get("lost").asLong());
    assertEquals(0, acc.get("duplicates").asLong());
    assertEquals(2, a.json().get("bursts").size());
    for (JsonNode b : a.json().get("bursts")) {
      assertTrue(b.get("complete").asBoolean());
      assertEquals(0, b.get("bad_bodies").asLong());
      assertTrue(b.get("last_recv_ns").asLong() >= b.get("first_send_ns").asLong());
      assertTrue(b.get("first_send_ns").asLong() > 1_500_000_000_000_000_000L, "ns since the epoch");
    }
  }

  @Test
  void defaultsApply() throws Exception {
    Answer a = post("/bursts", "{}");
    assertEquals(200, a.status(), a.json().toString());
    assertEquals(1000, a.json().get("count").asInt());
    assertEquals("actors", a.json().get("route").asText());
  }

  @Test
  void malformedJsonIs400() throws Exception {
    assertError(400, post("/bursts", "{\"count\":10"), "malformed JSON");
    assertError(400, post("/bursts", "{\"count\":10} trailing"), "JSON");
    assertError(400, post("/bursts", "[1,2]"), "");
    assertError(400, post("/bursts", ""), "empty body");
  }

  @Test
  void unknownFieldIs400() throws Exception {
    assertError(400, post("/bursts", "{\"count\":10,\"colour\":\"red\"}"), "unknown field 'colour'");
  }

  @Test
  void wrongTypesAre400() throws Exception {
    assertError(400, post("/bursts", "{\"count\":\"10\"}"), "count");
    assertError(400, post("/bursts", "{\"count\":10.5}"), "count");
    assertError(400, post("/bursts", "{\"route\":7}"), "route");
    assertError(400, post("/bursts", "{\"workers\":true}"), "workers");
  }

  @Test
  void limitsAre400() throws Exception {
    assertError(400, post("/bursts", "{\"count\":1001}"), "count must be <= 1000");
    assertError(400, post("/bursts", "{\"count\":0}"), "count must be >= 1");
    assertError(400, post("/bursts", "{\"size\":1025}"), "size must be <= 1024");
    assertError(400, post("/bursts", "{\"workers\":9}"), "workers must be <= 8");
    assertError(400, post("/bursts", "{\"bursts\":6}"), "bursts must be <= 5");
  }

  @Test
  void routeChecksAre400() throws Exception {
    assertError(400, post("/bursts", "{\"route\":\"kafka\"}"), "unknown route 'kafka'");
    assertError(400, post("/bursts", "{\"route\":\"broker\"}"), "broker_url");
    assertError(400, post("/bursts", "{\"route\":\"broker\",\"broker_url\":\"stomp://127.0.0.1:61613\"}"), "OpenWire");
    assertError(400, post("/bursts", "{\"route\":\"broker\",\"broker_url\":\"tcp://127.0.0.1:1\",\"destination\":\"a b\"}"), "destination");
    assertError(400, post("/bursts", "{\"route\":\"actors\",\"destination\":\"q\"}"), "route \"broker\" only");
  }

  @Test
  void oversizeBodyIs413AndTheBridgeKeepsServing() throws Exception {
    String big = "{\"count\":10," + "\"x\":\"" + "y".repeat((int) MAX_BODY) + "\"}";
    assertError(413, post("/bursts", big), "exceeds the limit of 4096 bytes");
    HttpRequest chunked = HttpRequest.create("/bursts").withMethod(HttpMethods.POST).withEntity(
        HttpEntities.createChunked(ContentTypes.APPLICATION_JSON,
            Source.from(java.util.List.of(ByteString.fromString(big.substring(0, 3000)),
                ByteString.fromString(big.substring(3000))))));
    assertError(413, run(chunked), "exceeds the limit");
    assertEquals(200, run(HttpRequest.GET("/health")).status());
  }

  @Test
  void ndjsonIngest() throws Exception {
    Answer a = post("/messages", "{\"id\":\"a\",\"body\":\"hello\"}\n\n{\"body\":\"w\",\"headers\":{\"k\":\"v\"}}\n");
    assertEquals(200, a.status(), a.json().toString());
    assertEquals(2, a.json().get("accepted").asLong());
    assertEquals(0, a.json().get("relayed").asLong());
    assertEquals(6, a.json().get("bytes").asLong());
  }

  @Test
  void badNdjsonIs400() throws Exception {
    assertError(400, post("/messages", "{\"body\":\"x\"}\n{\"body\":"), "line 2");
    assertError(400, post("/messages", "{\"body\":\"x\"}\n{\"bodyy\":\"x\"}"), "line 2: unknown field 'bodyy'");
    assertError(400, post("/messages", "{\"id\":\"x\"}"), "'body'");
    assertError(400, post("/messages", "{\"body\":1}"), "body");
    assertError(400, post("/messages", "\n\n"), "no messages");
    assertError(400, post("/messages", "{\"body\":\"x\",\"headers\":{\"JMSType\":\"t\"}}"), "JMS property");
    assertError(400, post("/messages?relay=a/b", "{\"body\":\"x\"}"), "relay");
    assertError(400, post("/messages?relay=akka.q", "{\"body\":\"x\"}"), "broker");
    assertError(400, post("/messages?relay=akka.q&broker_url=ws://h:1/", "{\"body\":\"x\"}"), "OpenWire");
    assertError(400, post("/messages?broker_url=tcp://h:1", "{\"body\":\"x\"}"), "relay");
  }

  @Test
  void oversizeNdjsonIs413() throws Exception {
    String lines = "{\"body\":\"\"}\n".repeat(1001); // 12 bytes a line: over the 4096-byte limit
    assertError(413, post("/messages", lines), "exceeds the limit");
  }

  @Test
  void tooManyLinesIs400() {
    Settings two = new Settings("127.0.0.1", 0, Duration.ofSeconds(5), "", Duration.ofSeconds(1),
        Duration.ofSeconds(1), 1, new Settings.Limits(2, 16, MAX_BODY, 1, 1, 1024, 10, 10));
    Routes routes = new Routes(system, two, null, null, null, null);
    assertEquals(2, routes.parseNdjson("{\"body\":\"a\"}\n{\"body\":\"b\"}\n").size());
    Json.BadRequest e = org.junit.jupiter.api.Assertions.assertThrows(Json.BadRequest.class,
        () -> routes.parseNdjson("{\"body\":\"a\"}\n{\"body\":\"b\"}\n{\"body\":\"c\"}"));
    assertTrue(e.getMessage().contains("more than 2 messages"), e.getMessage());
  }

  @Test
  void piOverHttp() throws Exception {
    Answer a = post("/pi", "{\"workers\":3,\"messages\":50,\"elements\":20}");
    assertEquals(200, a.status(), a.json().toString());
    assertTrue(a.json().get("error").asDouble() < 1e-12);
    assertEquals(PiActors.exact(1000), a.json().get("exact").asDouble(), 0.0);
    assertError(400, post("/pi", "{\"workers\":3,\"messages\":0}"), "messages");
    assertError(400, post("/pi", "{\"workers\":3,\"messages\":100000,\"elements\":1000}"), "terms");
    assertError(400, post("/pi", "{\"threads\":3}"), "unknown field 'threads'");
  }

  @Test
  void statsAndUnknownPaths() throws Exception {
    run(HttpRequest.GET("/health"));
    Answer s = run(HttpRequest.GET("/stats"));
    assertEquals(200, s.status());
    assertTrue(s.json().has("requests"));
    assertTrue(s.json().has("burst_messages_lost"));
    assertError(404, run(HttpRequest.GET("/nowhere")), "");
    assertError(405, run(HttpRequest.DELETE("/health")), "");
  }
}
