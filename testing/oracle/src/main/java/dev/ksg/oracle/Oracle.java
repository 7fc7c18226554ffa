package dev.ksg.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

/**
 * Conformance oracle: Apache Kafka's own (de)serialisers behind a line protocol.
 *
 * <p>One command per stdin line, exactly one answer line on stdout, so a test harness can keep a
 * single JVM for a whole run (JVM start-up dominates otherwise):
 *
 * <pre>
 *   ping                                               -> ok pong
 *   versions &lt;apiKey&gt;                                  -> ok &lt;lowest&gt; &lt;highest&gt;
 *   encode &lt;apiKey&gt; &lt;version&gt; request|response &lt;json&gt;  -> ok &lt;hex of the body&gt;
 *   (apiKey "header": RequestHeaderData / ResponseHeaderData instead of a body)
 *   decode &lt;apiKey&gt; &lt;version&gt; request|response &lt;hex&gt;   -> ok &lt;json&gt;
 *   anything that fails                                -> err &lt;message&gt;
 * </pre>
 *
 * <p>Bodies only: no size prefix, no request/response header. JSON is the format of Kafka's
 * generated {@code *DataJsonConverter} classes (camelCase field names, fields present only in the
 * versions that carry them). Decoding must consume every byte, otherwise it is an error: trailing
 * bytes mean the two sides disagree about the layout even if the prefix parsed.
 */
public final class Oracle {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final HexFormat HEX = HexFormat.of();
  private static final ConcurrentHashMap<Class<?>, Method[]> CONVERTERS = new ConcurrentHashMap<>();

  private Oracle() {}

  public static void main(String[] args) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
    PrintWriter out =
        new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), false);
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      String answer;
      try {
        answer = "ok " + handle(line.strip());
      } catch (Throwable t) {
        answer = "err " + describe(t);
      }
      out.println(answer);
      // Flush per answer: the harness waits for this line before sending the next command.
      out.flush();
    }
  }

  static String handle(String line) throws Exception {
    String[] parts = line.split(" ", 5);
    switch (parts[0]) {
      case "ping":
        return "pong";
      case "versions": {
        need(parts, 2);
        ApiMessageType type = ApiMessageType.fromApiKey(Short.parseShort(parts[1]));
        return type.lowestSupportedVersion() + " " + type.highestSupportedVersion(true);
      }
      case "encode": {
        need(parts, 5);
        short version = Short.parseShort(parts[2]);
        ApiMessage proto = newMessage(parts[1], parts[3]);
        checkVersion(proto, version);
        JsonNode json = MAPPER.readTree(parts[4]);
        ApiMessage msg = (ApiMessage) converter(proto.getClass())[0].invoke(null, json, version);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = msg.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        msg.write(new ByteBufferAccessor(buf), cache, version);
        if (buf.hasRemaining()) {
          throw new IllegalStateException(
              "Kafka wrote " + buf.position() + " bytes but computed size " + size);
        }
        return HEX.formatHex(buf.array());
      }
      case "decode": {
        // The hex may be empty (e.g. ApiVersionsRequest v0-2 has no fields), and the line
        // was stripped, so four words mean an empty body.
        need(parts, 4);
        short version = Short.parseShort(parts[2]);
        ApiMessage msg = newMessage(parts[1], parts[3]);
        checkVersion(msg, version);
        ByteBuffer buf = ByteBuffer.wrap(HEX.parseHex(parts.length > 4 ? parts[4].strip() : ""));
        msg.read(new ByteBufferAccessor(buf), version);
        if (buf.hasRemaining()) {
          throw new IllegalStateException(
              buf.remaining() + " trailing bytes after decoding at offset " + buf.position());
        }
        JsonNode json = (JsonNode) converter(msg.getClass())[1].invoke(null, msg, version);
        return MAPPER.writeValueAsString(json);
      }
      default:
        throw new IllegalArgumentException("unknown command " + parts[0]);
    }
  }

  private static void need(String[] parts, int n) {
    if (parts.length < n) {
      throw new IllegalArgumentException("expected " + n + " words, got " + parts.length);
    }
  }

  private static ApiMessage newMessage(String apiKey, String kind) {
    if (apiKey.equals("header")) {
      // Not API messages, but generated the same way: "header" selects RequestHeaderData or
      // ResponseHeaderData, so the crate's header codecs can be checked too.
      switch (kind) {
        case "request":
          return new RequestHeaderData();
        case "response":
          return new ResponseHeaderData();
        default:
          throw new IllegalArgumentException("expected request|response, got " + kind);
      }
    }
    ApiMessageType type = ApiMessageType.fromApiKey(Short.parseShort(apiKey));
    switch (kind) {
      case "request":
        return type.newRequest();
      case "response":
        return type.newResponse();
      default:
        throw new IllegalArgumentException("expected request|response, got " + kind);
    }
  }

  /** Generated classes do not all reject out-of-range versions themselves; be strict here. */
  private static void checkVersion(ApiMessage msg, short version) {
    if (version < msg.lowestSupportedVersion() || version > msg.highestSupportedVersion()) {
      throw new IllegalArgumentException(
          msg.getClass().getSimpleName() + " has no version " + version + " (supports "
              + msg.lowestSupportedVersion() + "-" + msg.highestSupportedVersion() + ")");
    }
  }

  /** [read(JsonNode, short), write(XData, short)] of the generated XDataJsonConverter. */
  private static Method[] converter(Class<?> dataClass) {
    return CONVERTERS.computeIfAbsent(
        dataClass,
        c -> {
          try {
            Class<?> conv = Class.forName(c.getName() + "JsonConverter");
            return new Method[] {
              conv.getMethod("read", JsonNode.class, short.class),
              conv.getMethod("write", c, short.class)
            };
          } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no JSON converter for " + c.getName(), e);
          }
        });
  }

  private static String describe(Throwable t) {
    while (t instanceof InvocationTargetException && t.getCause() != null) {
      t = t.getCause();
    }
    StringBuilder sb = new StringBuilder(t.getClass().getSimpleName());
    if (t.getMessage() != null) {
      sb.append(": ").append(t.getMessage());
    }
    if (t.getCause() != null && t.getCause() != t) {
      sb.append(" (caused by ").append(t.getCause()).append(')');
    }
    // One answer per line, whatever the exception text holds.
    return sb.toString().replace('\r', ' ').replace('\n', ' ');
  }
}
