package dev.ksg.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Utils;

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
 *   records-write &lt;json batch&gt;   (MemoryRecordsBuilder) -> ok &lt;hex of one v2 batch&gt;
 *   records-marker &lt;json marker&gt;  (EndTransactionMarker) -> ok &lt;hex of one control batch&gt;
 *   records-read &lt;hex&gt;          (MemoryRecords, CRC checked) -> ok &lt;json array of batches&gt;
 *   partition &lt;hex key&gt; &lt;n&gt;      -> ok &lt;Utils.murmur2&gt; &lt;BuiltInPartitioner.partitionForKey&gt;
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
      case "records-write":
        need(parts, 2);
        return HEX.formatHex(writeBatch(MAPPER.readTree(line.substring(parts[0].length() + 1))));
      case "records-marker":
        need(parts, 2);
        return HEX.formatHex(writeMarker(MAPPER.readTree(line.substring(parts[0].length() + 1))));
      case "records-read":
        need(parts, 2);
        return MAPPER.writeValueAsString(readBatches(HEX.parseHex(parts[1])));
      case "partition": {
        need(parts, 3);
        byte[] key = HEX.parseHex(parts[1]);
        return Utils.murmur2(key)
            + " "
            + BuiltInPartitioner.partitionForKey(key, Integer.parseInt(parts[2]));
      }
      default:
        throw new IllegalArgumentException("unknown command " + parts[0]);
    }
  }

  private static byte[] hexOrNull(JsonNode n) {
    return n == null || n.isNull() ? null : HEX.parseHex(n.asText());
  }

  private static JsonNode hexNode(java.nio.ByteBuffer b) {
    if (b == null) {
      return MAPPER.nullNode();
    }
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return MAPPER.getNodeFactory().textNode(HEX.formatHex(a));
  }

  /** One v2 batch, as Java's producer path builds it (MemoryRecordsBuilder, CreateTime). */
  private static byte[] writeBatch(JsonNode spec) {
    Compression compression = Compression.of(spec.get("compression").asText()).build();
    ByteBuffer buf = ByteBuffer.allocate(1024);
    MemoryRecordsBuilder b =
        MemoryRecords.builder(
            buf,
            RecordBatch.MAGIC_VALUE_V2,
            compression,
            TimestampType.CREATE_TIME,
            spec.path("baseOffset").asLong(0),
            RecordBatch.NO_TIMESTAMP,
            spec.path("producerId").asLong(-1),
            (short) spec.path("producerEpoch").asInt(-1),
            spec.path("baseSequence").asInt(-1),
            spec.path("transactional").asBoolean(false),
            spec.path("partitionLeaderEpoch").asInt(-1));
    for (JsonNode r : spec.get("records")) {
      JsonNode hs = r.path("headers");
      Header[] headers = new Header[hs.size()];
      for (int i = 0; i < headers.length; i++) {
        JsonNode h = hs.get(i);
        headers[i] = new RecordHeader(h.get("key").asText(), hexOrNull(h.get("value")));
      }
      b.append(r.get("timestamp").asLong(), hexOrNull(r.get("key")), hexOrNull(r.get("value")),
          headers);
    }
    return bytesOf(b.build().buffer());
  }

  /** A commit or abort marker batch, as a transaction coordinator writes it. */
  private static byte[] writeMarker(JsonNode spec) {
    ControlRecordType type =
        spec.get("commit").asBoolean() ? ControlRecordType.COMMIT : ControlRecordType.ABORT;
    MemoryRecords m =
        MemoryRecords.withEndTransactionMarker(
            spec.get("baseOffset").asLong(),
            spec.path("timestamp").asLong(0),
            spec.path("partitionLeaderEpoch").asInt(-1),
            spec.get("producerId").asLong(),
            (short) spec.get("producerEpoch").asInt(),
            new EndTransactionMarker(type, spec.get("coordinatorEpoch").asInt()));
    return bytesOf(m.buffer());
  }

  private static byte[] bytesOf(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return a;
  }

  /** Every batch and record as Java's consumer reads them (CRC checked first). */
  private static ArrayNode readBatches(byte[] bytes) {
    ArrayNode out = MAPPER.createArrayNode();
    MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(bytes));
    int consumed = 0;
    for (MutableRecordBatch batch : records.batches()) {
      batch.ensureValid();
      consumed += batch.sizeInBytes();
      ObjectNode b = out.addObject();
      b.put("baseOffset", batch.baseOffset());
      b.put("lastOffset", batch.lastOffset());
      b.put("partitionLeaderEpoch", batch.partitionLeaderEpoch());
      b.put("magic", batch.magic());
      b.put("crc", batch.checksum());
      b.put("compression", batch.compressionType().name);
      b.put("timestampType", batch.timestampType().name);
      b.put("maxTimestamp", batch.maxTimestamp());
      b.put("producerId", batch.producerId());
      b.put("producerEpoch", batch.producerEpoch());
      b.put("baseSequence", batch.baseSequence());
      b.put("transactional", batch.isTransactional());
      b.put("control", batch.isControlBatch());
      b.put("count", batch.countOrNull());
      ArrayNode rs = b.putArray("records");
      for (Record r : batch) {
        r.ensureValid();
        ObjectNode o = rs.addObject();
        o.put("offset", r.offset());
        o.put("timestamp", r.timestamp());
        o.put("sequence", r.sequence());
        o.set("key", hexNode(r.key()));
        o.set("value", hexNode(r.value()));
        ArrayNode hs = o.putArray("headers");
        for (Header h : r.headers()) {
          ObjectNode ho = hs.addObject();
          ho.put("key", h.key());
          ho.set("value", h.value() == null ? MAPPER.nullNode()
              : MAPPER.getNodeFactory().textNode(HEX.formatHex(h.value())));
        }
      }
    }
    if (consumed != bytes.length) {
      throw new IllegalStateException(
          (bytes.length - consumed) + " bytes after the last complete batch");
    }
    return out;
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
