package burstbench.bridge.api;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.util.stream.Collectors;

/** The bridge's one strict Jackson mapper (snake_case keys, unknown fields and type coercions fail). */
public final class Json {
  private Json() {}

  public static final ObjectMapper MAPPER = build();

  /** A client error: the route answers 400 with {"error": message}. */
  public static final class BadRequest extends RuntimeException {
    public BadRequest(String message) {
      super(message);
    }
  }

  private static ObjectMapper build() {
    JsonMapper m = JsonMapper.builder()
        .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
        .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
        .build();
    m.coercionConfigFor(LogicalType.Integer)
        .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
    m.coercionConfigFor(LogicalType.Float)
        .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
    m.coercionConfigFor(LogicalType.Textual)
        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
    m.coercionConfigFor(LogicalType.Boolean)
        .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
    return m;
  }

  /** Parse {@code text} as one {@code type}; any failure becomes a {@link BadRequest} with a short reason. */
  public static <T> T parse(String text, Class<T> type) {
    if (text == null || text.isBlank()) {
      throw new BadRequest("empty body: a JSON object is required");
    }
    try {
      T value = MAPPER.readValue(text, type);
      if (value == null) {
        throw new BadRequest("a JSON object is required");
      }
      return value;
    } catch (JsonProcessingException e) {
      throw new BadRequest(describe(e));
    }
  }

  /** A short, body-free description of a Jackson failure. */
  public static String describe(JsonProcessingException e) {
    if (e instanceof UnrecognizedPropertyException u) {
      return "unknown field '" + u.getPropertyName() + "'";
    }
    String where = "";
    JsonLocation loc = e.getLocation();
    if (loc != null && loc.getLineNr() > 0) {
      where = " (line " + loc.getLineNr() + ", column " + loc.getColumnNr() + ")";
    }
    if (e instanceof JsonMappingException m && !m.getPath().isEmpty()) {
      String field = m.getPath().stream()
          .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
          .collect(Collectors.joining("."));
      String msg = e.getOriginalMessage();
      if (e.getCause() != null && e.getCause() != e && e.getCause().getMessage() != null
          && e.getClass().getSimpleName().equals("ValueInstantiationException")) {
        msg = e.getCause().getMessage();
      }
      return "bad value for field '" + field + "': " + firstLine(msg);
    }
    String kind = e instanceof JsonMappingException ? "invalid JSON value" : "malformed JSON";
    return kind + ": " + firstLine(e.getOriginalMessage()) + where;
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    String line = nl >= 0 ? s.substring(0, nl) : s;
    // Jackson's hints about coercion settings and source locations say nothing to a client
    line = line.replaceAll(" \\(start marker at \\[.*?\\]\\)", "")
        .replaceAll(" \\(but [^)]*\\)", "").replace("`", "'");
    return line.length() > 300 ? line.substring(0, 300) + "..." : line;
  }

  /** Serialize to a compact JSON string. */
  public static String write(Object value) {
    try {
      return MAPPER.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
