package burstbench.bridge.http;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Scheduler;
import akka.actor.typed.javadsl.AskPattern;
import akka.http.javadsl.marshallers.jackson.Jackson;
import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntity;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.StatusCode;
import akka.http.javadsl.model.StatusCodes;
import akka.http.javadsl.server.AllDirectives;
import akka.http.javadsl.server.ExceptionHandler;
import akka.http.javadsl.server.MalformedRequestContentRejection;
import akka.http.javadsl.server.RejectionHandler;
import akka.http.javadsl.server.Route;
import akka.http.javadsl.server.ValidationRejection;
import akka.http.javadsl.unmarshalling.Unmarshaller;
import akka.http.scaladsl.model.EntityStreamSizeException;
import burstbench.bridge.api.Api;
import burstbench.bridge.api.Json;
import burstbench.bridge.api.Settings;
import burstbench.bridge.api.Stats;
import burstbench.bridge.bursts.BurstRun;
import burstbench.bridge.bursts.Bursts;
import burstbench.bridge.ingest.Ingest;
import burstbench.bridge.pi.PiRunner;
import burstbench.bridge.shared.Jms;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bridge's HTTP routes. They only speak HTTP: parse and validate the body with the strict
 * mapper, then ask the actor that does the work (with the configured timeout) and render its reply.
 * Every error is JSON {"error": "..."}: 400 bad input, 413 body too large, 502 broker trouble,
 * 503 ask timeout.
 */
final class Routes extends AllDirectives {
  private static final Logger log = LoggerFactory.getLogger(Routes.class);
  private static final ObjectReader INGEST_READER = Json.MAPPER.readerFor(Api.IngestMessage.class);

  private final Settings settings;
  private final Scheduler scheduler;
  private final Duration askTimeout;
  private final ActorRef<Bursts.Command> bursts;
  private final ActorRef<Ingest.Command> ingest;
  private final ActorRef<PiRunner.Command> pi;
  private final ActorRef<Stats.Command> stats;

  public Routes(ActorSystem<?> system, Settings settings, ActorRef<Bursts.Command> bursts,
      ActorRef<Ingest.Command> ingest, ActorRef<PiRunner.Command> pi, ActorRef<Stats.Command> stats) {
    this.settings = settings;
    this.scheduler = system.scheduler();
    this.askTimeout = settings.askTimeout();
    this.bursts = bursts;
    this.ingest = ingest;
    this.pi = pi;
    this.stats = stats;
  }

  Route routes() {
    return mapResponse(this::counted, () ->
        handleExceptions(exceptionHandler(), () ->
            handleRejections(rejectionHandler(), () ->
                limitBody(() -> concat(
                    path("health", () -> get(() -> json(StatusCodes.OK, Map.of("status", "ok")))),
                    path("stats", () -> get(() -> onSuccess(
                        AskPattern.<Stats.Command, Stats.Snapshot>ask(stats, Stats.Get::new, askTimeout, scheduler),
                        s -> json(StatusCodes.OK, s)))),
                    path("bursts", () -> post(() -> bodyText(this::postBursts))),
                    path("messages", () -> post(() ->
                        parameterOptional("relay", relay ->
                            parameterOptional("broker_url", url ->
                                bodyText(text -> postMessages(text, relay, url)))))),
                    path("pi", () -> post(() -> bodyText(this::postPi))))))));
  }

  // ---- endpoints ----

  private Route postBursts(String text) {
    Api.BurstSpec spec = Api.validate(Json.parse(text, Api.BurstRequest.class), settings);
    CompletionStage<BurstRun.Reply> reply = AskPattern.ask(
        bursts, replyTo -> new Bursts.Run(spec, replyTo), askTimeout, scheduler);
    return onSuccess(reply, r -> {
      if (r instanceof BurstRun.Done d) {
        return json(StatusCodes.OK, d.result());
      }
      return error(StatusCodes.BAD_GATEWAY, ((BurstRun.Failed) r).error());
    });
  }

  private Route postPi(String text) {
    Api.PiSpec spec = Api.validate(Json.parse(text, Api.PiRequest.class), settings);
    CompletionStage<Api.PiResult> reply = AskPattern.ask(
        pi, replyTo -> new PiRunner.Run(spec, replyTo), askTimeout, scheduler);
    return onSuccess(reply, r -> {
      stats.tell(new Stats.PiComputed(r.messages()));
      return json(StatusCodes.OK, r);
    });
  }

  private Route postMessages(String text, Optional<String> relay, Optional<String> brokerUrl) {
    String queue = relay.orElse(null);
    String url = null;
    if (queue != null) {
      if (!Api.QUEUE_NAME.matcher(queue).matches()) {
        throw new Json.BadRequest("relay must be a queue name matching [A-Za-z0-9_.-]{1,200}");
      }
      url = brokerUrl.orElse(settings.brokerUrl());
      if (url == null || url.isEmpty()) {
        throw new Json.BadRequest(
            "relay needs a broker: ?broker_url=tcp://... (or burstbench.bridge.broker-url configured)");
      }
      if (!Jms.isOpenWire(url)) {
        throw new Json.BadRequest("broker_url must be an OpenWire address (tcp://, ssl://, nio://, failover:(...))");
      }
    } else if (brokerUrl.isPresent()) {
      throw new Json.BadRequest("broker_url applies only with ?relay=QUEUE");
    }
    List<Api.IngestMessage> messages = parseNdjson(text);
    String finalUrl = url;
    CompletionStage<Ingest.Reply> reply = AskPattern.ask(
        ingest, replyTo -> new Ingest.Batch(messages, queue, finalUrl, replyTo), askTimeout, scheduler);
    return onSuccess(reply, r -> {
      if (r instanceof Ingest.Accepted a) {
        return json(StatusCodes.OK, a.result());
      }
      return error(StatusCodes.BAD_GATEWAY, ((Ingest.Failed) r).error());
    });
  }

  /** NDJSON: one JSON object per line; blank lines are skipped. */
  List<Api.IngestMessage> parseNdjson(String text) {
    List<Api.IngestMessage> out = new ArrayList<>();
    int lineNo = 0;
    int start = 0;
    int len = text.length();
    while (start <= len) {
      int nl = text.indexOf('\n', start);
      int end = nl < 0 ? len : nl;
      String line = text.substring(start, end).strip();
      lineNo++;
      if (!line.isEmpty()) {
        if (out.size() >= settings.limits().maxCount()) {
          throw new Json.BadRequest("more than " + settings.limits().maxCount() + " messages in one batch");
        }
        Api.IngestMessage m;
        try {
          m = INGEST_READER.readValue(line);
        } catch (JsonProcessingException e) {
          throw new Json.BadRequest("line " + lineNo + ": " + Json.describe(e));
        }
        if (m == null) {
          throw new Json.BadRequest("line " + lineNo + ": a JSON object is required");
        }
        Api.validate(m, lineNo);
        out.add(m);
      }
      if (nl < 0) {
        break;
      }
      start = nl + 1;
    }
    if (out.isEmpty()) {
      throw new Json.BadRequest("no messages: the body must hold one JSON object per line");
    }
    return out;
  }

  // ---- plumbing ----

  private Route bodyText(Function<String, Route> inner) {
    return entity(Unmarshaller.entityToString(), inner);
  }

  /** 413 at once when Content-Length says too much; otherwise cap the stream at the same size. */
  private Route limitBody(Supplier<Route> inner) {
    long max = settings.limits().maxBodyBytes();
    return extractRequestEntity(entity -> {
      OptionalLong declared = entity.getContentLengthOption();
      if (declared.isPresent() && declared.getAsLong() > max) {
        return tooLarge(declared.getAsLong());
      }
      return withSizeLimit(max, inner);
    });
  }

  private Route tooLarge(long actual) {
    return error(StatusCodes.PAYLOAD_TOO_LARGE, "request body" + (actual >= 0 ? " of " + actual + " bytes" : "")
        + " exceeds the limit of " + settings.limits().maxBodyBytes() + " bytes");
  }

  private Route json(StatusCode status, Object body) {
    return complete(status, body, Jackson.marshaller(Json.MAPPER));
  }

  private Route error(StatusCode status, String message) {
    return json(status, new Api.ErrorBody(message));
  }

  private HttpResponse counted(HttpResponse response) {
    stats.tell(new Stats.Requested(response.status().intValue()));
    return response;
  }

  private static Throwable unwrap(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof java.util.concurrent.ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static boolean tooLargeCause(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof EntityStreamSizeException) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  private ExceptionHandler exceptionHandler() {
    return ExceptionHandler.newBuilder()
        .matchAny(raw -> {
          Throwable e = unwrap(raw);
          if (e instanceof Json.BadRequest) {
            return error(StatusCodes.BAD_REQUEST, e.getMessage());
          }
          if (tooLargeCause(e)) {
            return tooLarge(-1);
          }
          if (e instanceof TimeoutException) {
            return error(StatusCodes.SERVICE_UNAVAILABLE,
                "no answer within the ask timeout of " + askTimeout.toMillis() + " ms");
          }
          log.error("request failed", e);
          return error(StatusCodes.INTERNAL_SERVER_ERROR, "internal error: " + e);
        })
        .build();
  }

  private RejectionHandler rejectionHandler() {
    return RejectionHandler.newBuilder()
        .handle(MalformedRequestContentRejection.class, r -> tooLargeCause(r.getCause())
            ? tooLarge(-1)
            : error(StatusCodes.BAD_REQUEST, "malformed request body: " + r.message()))
        .handle(ValidationRejection.class, r -> error(StatusCodes.BAD_REQUEST, r.message()))
        .build()
        .withFallback(RejectionHandler.defaultHandler())
        .mapRejectionResponse(Routes::jsonError);
  }

  /** The default handler answers in text/plain; turn that into {"error": text}. */
  private static HttpResponse jsonError(HttpResponse response) {
    if (response.entity() instanceof HttpEntity.Strict strict
        && !strict.getContentType().equals(ContentTypes.APPLICATION_JSON)) {
      String text = strict.getData().decodeString(StandardCharsets.UTF_8);
      return response.withEntity(ContentTypes.APPLICATION_JSON, Json.write(new Api.ErrorBody(text)));
    }
    return response;
  }
}
