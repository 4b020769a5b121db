package io.kafkacodec.spark;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.function.Consumer;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The Spark format's JVM reader (SliceReader) as a parser of the fuzzing protocol
 * (docs/fuzz-your-parser.md): each image is the one segment of a partition, read as one
 * slice by the reader's own walk (nextOwn), CRCs checked, control records left out, as the
 * format reads by default. Where the reader hands a slice to Python (bytes it does not read
 * as regular), the answer says so ("handed_over": why) with the rows it gave before: Python's
 * reader, which continues from there, is fuzzed as kafkacodec itself, and those rows must be
 * Kafka's first ones (peers.findings.signature). Usage: SparkJvmPeer FILE... | SparkJvmPeer -
 * (names on standard input, each answered as soon as it is read). peers.fuzz builds and
 * runs it as --parser kafkacodec-spark.
 */
public final class SparkJvmPeer {
    private static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("kafkacodec-spark-peer");
        Path log = dir.resolve("00000000000000000000.log");
        StructType schema = new StructType();
        for (String name : SliceReader.COLUMNS) schema = schema.add(name, DataTypes.BinaryType);  // (types unread)
        KafkacodecSource.ReadSettings settings = new KafkacodecSource.ReadSettings(
            Planner.JSON.readTree("{\"verify_crc\": true, \"include_control\": false}"));
        ObjectNode sliceJson = Planner.JSON.createObjectNode();
        sliceJson.put("directory", dir.toString()).put("topic", "fuzz").put("partition", 0).put("base_offset", 0L)
            .put("start", 0L).putNull("end").putNull("first").putNull("last").putNull("since");
        sliceJson.putArray("aborted");
        sliceJson.putNull("identity").put("deleted", false).put("python", false);
        StructType columns = schema;
        Consumer<String> answer = file -> {
            ObjectNode out = Planner.JSON.createObjectNode();
            out.put("file", file);
            ArrayNode records = out.putArray("records");
            try {
                Files.deleteIfExists(log);
                Files.createSymbolicLink(log, Paths.get(file).toAbsolutePath());
                SliceReader reader = new SliceReader(new Slice(sliceJson), columns, new HashMap<>(), settings);
                try {
                    if (!reader.readsItself()) {
                        out.put("handed_over", "the slice's file did not open");
                    } else {
                        while (reader.nextOwn()) records.add(record(reader.get()));
                    }
                } catch (RuntimeException | InternalError e) {
                    out.put("handed_over", String.valueOf(e));
                } finally {
                    reader.close();
                }
                out.putNull("error");
            } catch (Throwable t) {  // the harness's own failure: a panic of this peer
                out.put("panic", String.valueOf(t));
            }
            System.out.println(out);
            System.out.flush();
        };
        try {
            if (args.length == 1 && args[0].equals("-")) {
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                for (String line; (line = in.readLine()) != null; ) {
                    if (!line.isBlank()) answer.accept(line.strip());
                }
            } else {
                for (String f : args) answer.accept(f);
            }
        } finally {
            Files.deleteIfExists(log);
            Files.deleteIfExists(dir);
        }
    }

    /** A row in the protocol's record shape (peers.record_dict). */
    private static ObjectNode record(InternalRow row) {
        ObjectNode r = Planner.JSON.createObjectNode();
        int key = SliceReader.COLUMNS.indexOf("key"), value = SliceReader.COLUMNS.indexOf("value");
        int offset = SliceReader.COLUMNS.indexOf("offset"), ts = SliceReader.COLUMNS.indexOf("timestamp");
        int headers = SliceReader.COLUMNS.indexOf("headers"), control = SliceReader.COLUMNS.indexOf("is_control");
        r.put("offset", row.getLong(offset));
        if (row.isNullAt(ts)) r.putNull("timestamp");
        else r.put("timestamp", Math.floorDiv(row.getLong(ts), 1000L));  // the column is in microseconds
        r.put("key", row.isNullAt(key) ? null : HEX.formatHex(row.getBinary(key)));
        r.put("value", row.isNullAt(value) ? null : HEX.formatHex(row.getBinary(value)));
        ArrayNode hs = r.putArray("headers");
        if (!row.isNullAt(headers)) {
            ArrayData a = row.getArray(headers);
            for (int i = 0; i < a.numElements(); i++) {
                InternalRow h = a.getStruct(i, 2);
                ArrayNode pair = hs.addArray();
                pair.add(h.getUTF8String(0).toString());
                if (h.isNullAt(1)) pair.addNull();
                else pair.add(HEX.formatHex(h.getBinary(1)));
            }
        }
        r.put("control", row.getBoolean(control));
        return r;
    }
}
