/*
 * Parse inputs with the official Kaitai compiler's Java output of kafkacodec's schemas and
 * print each as one line of JSON, for tests/crosslang/test_java.py to compare with
 * kafkacodec's Python codecs.
 *
 *   java KafkacodecDump FIELDS JOBS PACKAGE
 *
 * FIELDS: one line per generated class, `BinaryClassName<TAB>field,field,...`: the seq
 * fields to print, in order, by their schema names (what the schema stores; instances are
 * computed, and not printed). JOBS: one line per input, `BinaryClassName<TAB>PARAM<TAB>
 * OFFSET<TAB>PATH`: the class to parse the file's bytes from OFFSET with, and its one
 * parameter (`-` for none; the version of a type made from a Kafka message spec). PACKAGE:
 * the generated classes' package (`export-schemas --java-package`; class names in FIELDS and
 * JOBS are without it).
 *
 * Output, per job: {"ok": TREE} or {"error": EXCEPTION, "message": ...}. In a tree, a
 * struct is an object of its stored fields (absent ones left out), bytes are {"hex": ...},
 * varints their value, enums their id, and a log (KafkaLog) also gets "crc": each whole
 * entry's stored CRC and the one java.util.zip computes over the range the schema names.
 */
import io.kaitai.struct.ByteBufferKaitaiStream;
import io.kaitai.struct.KaitaiStream;
import io.kaitai.struct.KaitaiStruct;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class KafkacodecDump {
    private final Map<String, String[]> fields = new HashMap<>();
    private String prefix = "";

    public static void main(String[] args) throws Exception {
        KafkacodecDump d = new KafkacodecDump();
        if (args.length > 2 && !args[2].isEmpty()) d.prefix = args[2] + ".";
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            String[] parts = line.split("\t", -1);
            d.fields.put(parts[0], parts[1].isEmpty() ? new String[0] : parts[1].split(","));
        }
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        for (String line : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
            if (line.isEmpty()) continue;
            String[] job = line.split("\t", 4);
            out.println(d.run(job[0], job[1], Integer.parseInt(job[2]), job[3]));
        }
        out.flush();
    }

    private String run(String className, String param, int offset, String path) {
        StringBuilder sb = new StringBuilder();
        try {
            byte[] all = Files.readAllBytes(Paths.get(path));
            byte[] data = java.util.Arrays.copyOfRange(all, offset, all.length);
            Object obj = parse(Class.forName(prefix + className), param, data);
            sb.append("{\"ok\":");
            tree(obj, sb);
            Crc.appendLog(obj, data, sb);
            sb.append('}');
        } catch (Throwable err) {
            Throwable e = err instanceof InvocationTargetException ? err.getCause() : err;
            sb.setLength(0);
            sb.append("{\"error\":");
            string(e.getClass().getSimpleName(), sb);
            sb.append(",\"message\":");
            string(String.valueOf(e.getMessage()), sb);
            sb.append('}');
        }
        return sb.toString();
    }

    private static Object parse(Class<?> cls, String param, byte[] data) throws Exception {
        KaitaiStream io = new ByteBufferKaitaiStream(data);
        if (param.equals("-")) return cls.getConstructor(KaitaiStream.class).newInstance(io);
        for (Constructor<?> c : cls.getConstructors()) {
            Class<?>[] types = c.getParameterTypes();
            if (types.length == 2 && types[0] == KaitaiStream.class) {
                return c.newInstance(io, number(types[1], Long.parseLong(param)));
            }
        }
        throw new IllegalArgumentException(cls.getName() + " has no (stream, param) constructor");
    }

    private static Object number(Class<?> type, long v) {
        if (type == short.class) return (short) v;
        if (type == int.class) return (int) v;
        if (type == byte.class) return (byte) v;
        return v;
    }

    private void tree(Object v, StringBuilder sb) throws Exception {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof byte[]) {
            sb.append("{\"hex\":\"");
            for (byte b : (byte[]) v) sb.append(String.format("%02x", b & 0xff));
            sb.append("\"}");
        } else if (v instanceof String) {
            string((String) v, sb);
        } else if (v instanceof Boolean || v instanceof Long || v instanceof Integer
                || v instanceof Short || v instanceof Byte) {
            sb.append(v);
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) string(String.valueOf(d), sb);
            else sb.append(d);
        } else if (v instanceof List) {
            sb.append('[');
            boolean first = true;
            for (Object item : (List<?>) v) {
                if (!first) sb.append(',');
                first = false;
                tree(item, sb);
            }
            sb.append(']');
        } else if (v instanceof Enum) {
            sb.append(v.getClass().getMethod("id").invoke(v));
        } else if (v instanceof KaitaiStruct) {
            String name = v.getClass().getName().substring(prefix.length());
            if (name.equals("ZigzagVarint") || name.equals("UnsignedVarint")) {
                sb.append(v.getClass().getMethod("value").invoke(v));
                return;
            }
            String[] names = fields.get(name);
            if (names == null) throw new IllegalStateException("no fields listed for " + name);
            sb.append('{');
            boolean first = true;
            for (String f : names) {
                Field field = v.getClass().getDeclaredField(camel(f));
                field.setAccessible(true);
                Object value = field.get(v);
                if (value == null && !field.getType().isEnum()) continue; // absent (its `if` did not hold)
                if (!first) sb.append(',');
                first = false;
                string(f, sb);
                sb.append(':');
                if (value == null) {
                    // Kaitai's Java runtime reads a number its enum does not name as null:
                    // the value is lost; say so, with the numbers the enum has.
                    sb.append("{\"unknown_enum\":[");
                    Object[] known = field.getType().getEnumConstants();
                    for (int i = 0; i < known.length; i++) {
                        if (i > 0) sb.append(',');
                        sb.append(known[i].getClass().getMethod("id").invoke(known[i]));
                    }
                    sb.append("]}");
                    continue;
                }
                tree(value, sb);
            }
            sb.append('}');
        } else {
            throw new IllegalStateException("cannot print a " + v.getClass().getName());
        }
    }

    /** The Java name the official compiler gives a schema field (len_key -> lenKey). */
    static String camel(String id) {
        StringBuilder sb = new StringBuilder();
        boolean up = false;
        for (char c : id.toCharArray()) {
            if (c == '_') {
                up = sb.length() > 0;
                if (sb.length() == 0) sb.append('_');
                continue;
            }
            sb.append(up ? Character.toUpperCase(c) : c);
            up = false;
        }
        return sb.toString();
    }

    static void string(String s, StringBuilder sb) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20 || Character.isSurrogate(c)) sb.append(String.format("\\u%04x", (int) c));
                    else sb.append(c);
            }
        }
        sb.append('"');
    }

    /** CRCs the schemas cannot check: java.util.zip over the byte ranges they expose. */
    static final class Crc {
        static void appendLog(Object obj, byte[] data, StringBuilder sb) throws Exception {
            if (!obj.getClass().getSimpleName().equals("KafkaLog")) return;
            sb.append(",\"crc\":[");
            List<?> entries = (List<?>) obj.getClass().getMethod("entries").invoke(obj);
            int pos = 0;
            boolean first = true;
            for (Object e : entries) {
                Object body = e.getClass().getMethod("body").invoke(e);
                if (body == null) break; // a partial entry ends the log: nothing to check
                long size = 12L + ((Number) e.getClass().getMethod("length").invoke(e)).longValue();
                long from = ((Number) body.getClass().getMethod("crcFrom").invoke(body)).longValue();
                long to = ((Number) body.getClass().getMethod("crcTo").invoke(body)).longValue();
                long stored = ((Number) body.getClass().getMethod("crc").invoke(body)).longValue();
                java.util.zip.Checksum c = ((Number) body.getClass().getMethod("magic").invoke(body)).intValue() == 2
                        ? new java.util.zip.CRC32C() : new java.util.zip.CRC32();
                c.update(data, (int) (pos + from), (int) (to - from));
                if (!first) sb.append(',');
                first = false;
                sb.append("{\"position\":").append(pos).append(",\"stored\":").append(stored)
                  .append(",\"computed\":").append(c.getValue())
                  .append(",\"ok\":").append(stored == c.getValue()).append('}');
                pos += size;
            }
            sb.append(']');
        }
    }
}
