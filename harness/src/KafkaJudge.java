/*
 * Kafka's own record classes as the judge of log images (tests/kafka/test_kafka_judges_corpus.py):
 * each file read as a Kafka consumer reads a fetched record set with check.crcs=true
 * (MemoryRecords.readableRecords, the batches of ByteBufferLogInputStream, ensureValid on
 * every batch and record, the records through the batch's streamingIterator, which
 * decompresses with Kafka's CompressionType), printed as one line of JSON per file; the
 * records of a control batch are read as Kafka reads them (ControlRecordType.parse, as a
 * read_committed consumer and DumpLogSegments do, and EndTransactionMarker.deserialize for
 * ABORT and COMMIT, as the broker's producer state and DumpLogSegments do):
 *
 *   {"batches": [{"position": P, "magic": M, "compression": C, "control": B, "records": [
 *      {"offset": O, "timestamp": T, "timestamp_type": "CreateTime", "key": HEX|null,
 *       "value": HEX|null, "headers": [[KEY, HEX|null], ...],
 *       "control": {"type": T, "coordinator_epoch": E|null}}, ...]}, ...],
 *    "error": {"class": "CorruptRecordException", "message": "...", "position": P}}
 *
 * (`control` only in a control batch's records.) A file name "-" reads the names, one a
 * line, from standard input: one JVM for any number of files. "--stream" reads the images
 * themselves from standard input, each framed by its length (4 bytes, big-endian), and
 * answers each with its line as soon as it is read (a long-lived oracle: a case costs a
 * message, not a file nor a JVM start); the output is flushed whenever no more input is
 * waiting, so a client may write many cases before it reads.
 *
 * "error" is there when Kafka refused something, with the position of the batch it was
 * reading; the batches before it are listed. Compiled against each release's kafka-clients.
 *
 *   java -cp KAFKA_CLASSPATH:. KafkaJudge FILE...
 */
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HexFormat;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

public class KafkaJudge {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--stream")) {
            stream();
            return;
        }
        for (String file : args) {
            if (!file.equals("-")) {
                System.out.println(JSON.writeValueAsString(judge(Files.readAllBytes(Paths.get(file)))));
                continue;
            }
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            for (String line; (line = in.readLine()) != null; ) {
                System.out.println(JSON.writeValueAsString(judge(Files.readAllBytes(Paths.get(line)))));
                System.out.flush();
            }
        }
    }

    static void stream() throws Exception {
        java.io.DataInputStream in = new java.io.DataInputStream(new java.io.BufferedInputStream(System.in, 1 << 16));
        java.io.PrintStream out = new java.io.PrintStream(new java.io.BufferedOutputStream(System.out, 1 << 16), false, "UTF-8");
        while (true) {
            int size;
            try {
                size = in.readInt();
            } catch (java.io.EOFException end) {
                break;
            }
            if (size < 0) throw new IllegalArgumentException("a frame of " + size + " bytes");
            byte[] data = new byte[size];
            in.readFully(data);
            out.println(JSON.writeValueAsString(judge(data)));
            if (in.available() == 0) out.flush();
        }
        out.flush();
    }

    static ObjectNode judge(byte[] data) {
        ObjectNode out = JSON.createObjectNode();
        ArrayNode batches = out.putArray("batches");
        int position = 0;
        BufferSupplier buffers = BufferSupplier.create();
        try {
            for (MutableRecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(data)).batches()) {
                batch.ensureValid();
                ObjectNode one = JSON.createObjectNode();
                one.put("position", position).put("magic", batch.magic())
                   .put("compression", batch.compressionType().name).put("control", batch.isControlBatch());
                ArrayNode records = one.putArray("records");
                try (CloseableIterator<Record> it = batch.streamingIterator(buffers)) {
                    while (it.hasNext()) {
                        Record r = it.next();
                        r.ensureValid();
                        ObjectNode rec = records.addObject();
                        rec.put("offset", r.offset()).put("timestamp", r.timestamp())
                           .put("timestamp_type", batch.timestampType().name)
                           .put("key", hex(r.key())).put("value", hex(r.value()));
                        ArrayNode headers = rec.putArray("headers");
                        for (Header h : r.headers()) {
                            headers.addArray().add(h.key()).add(h.value() == null ? null : HEX.formatHex(h.value()));
                        }
                        if (batch.isControlBatch()) {
                            ControlRecordType type = ControlRecordType.parse(r.key());
                            ObjectNode control = rec.putObject("control");
                            control.put("type", ControlRecordType.parseTypeId(r.key()));
                            if (type == ControlRecordType.ABORT || type == ControlRecordType.COMMIT)
                                control.put("coordinator_epoch", EndTransactionMarker.deserialize(r).coordinatorEpoch());
                            else
                                control.putNull("coordinator_epoch");
                        }
                    }
                }
                batches.add(one);
                position += batch.sizeInBytes();
            }
        } catch (Throwable e) {
            out.putObject("error").put("class", e.getClass().getSimpleName())
               .put("message", String.valueOf(e.getMessage())).put("position", position);
        }
        return out;
    }

    static String hex(ByteBuffer b) {
        if (b == null) return null;
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return HEX.formatHex(bytes);
    }
}
