import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;

/**
 * Kafka's generated message classes as the judge of internal-topic payloads (issue 39, part 4).
 *
 * <p>Each line of standard input is {@code NAME<TAB>VERSION<TAB>HEX}: the payload of a message
 * of the spec NAME (OffsetCommitValue, PartitionRecord, ...) at VERSION, without its framing.
 * Kafka reads it with the generated class's {@code (Readable, short)} constructor, prints it with
 * the generated {@code NAMEJsonConverter.write(message, version)}, and writes it back with
 * {@code size} and {@code write}, as its coordinators and controllers do. One JSON line per
 * payload: {@code {"json": "...", "left": N, "written": "HEX"}} (the JSON as Jackson's
 * {@code toString} prints it; left is the bytes the read did not take), {@code "write_error"}
 * in place of written when Kafka refuses to write what it read, {@code {"error": CLASS,
 * "message": ...}} when Kafka refuses to read it, {@code {"missing": true}} when the release has
 * no such class.
 */
public final class InternalJudge {
    /** Where the releases put the generated classes of their internal topics and state files. */
    private static final String[] PACKAGES = {
        "org.apache.kafka.coordinator.group.generated.",
        "org.apache.kafka.coordinator.transaction.generated.",
        "org.apache.kafka.coordinator.share.generated.",
        "org.apache.kafka.common.metadata.",
        "org.apache.kafka.server.log.remote.metadata.storage.generated.",
        "org.apache.kafka.raft.generated.",
        "org.apache.kafka.common.message.",
        "org.apache.kafka.server.common.serialization.",
        "org.apache.kafka.storage.internals.generated.",
    };

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private InternalJudge() {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isEmpty()) continue;
            String[] job = line.split("\t", 3);
            out.append(judge(job[0], Short.parseShort(job[1]), HexFormat.of().parseHex(job[2]))).append('\n');
        }
        System.out.print(out);
        System.out.flush();
    }

    private static Class<?> find(String name) {
        for (String p : PACKAGES) {
            try {
                return Class.forName(p + name);
            } catch (ClassNotFoundException e) {
                // the next package
            }
        }
        return null;
    }

    static String judge(String name, short version, byte[] data) {
        ObjectNode result = MAPPER.createObjectNode();
        Class<?> cls = find(name);
        if (cls == null) {
            return result.put("missing", true).toString();
        }
        Message message;
        ByteBufferAccessor in = new ByteBufferAccessor(ByteBuffer.wrap(data));
        try {
            Constructor<?> read = cls.getConstructor(Readable.class, short.class);
            message = (Message) read.newInstance(in, version);
            Method write = Class.forName(cls.getName() + "JsonConverter").getMethod("write", cls, short.class);
            result.put("json", ((JsonNode) write.invoke(null, message, version)).toString());
        } catch (Throwable e) {
            return refused(result, e).toString();
        }
        result.put("left", in.remaining());
        try {
            ObjectSerializationCache cache = new ObjectSerializationCache();
            ByteBuffer buf = ByteBuffer.allocate(message.size(cache, version));
            message.write(new ByteBufferAccessor(buf), cache, version);
            result.put("written", HexFormat.of().formatHex(buf.array()));
        } catch (Throwable e) {
            result.put("write_error", String.valueOf(e.getMessage()));
        }
        return result.toString();
    }

    private static ObjectNode refused(ObjectNode result, Throwable e) {
        Throwable t = e instanceof InvocationTargetException ? e.getCause() : e;
        return result.put("error", t.getClass().getSimpleName()).put("message", String.valueOf(t.getMessage()));
    }
}
