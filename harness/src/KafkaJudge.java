/*
 * Kafka's own record classes as the judge of log images (tests/kafka/test_kafka_judges_corpus.py):
 * each file read as a Kafka consumer reads a fetched record set with check.crcs=true
 * (MemoryRecords.readableRecords, the batches of ByteBufferLogInputStream, ensureValid on
 * every batch and record, the records through the batch's streamingIterator, which
 * decompresses with Kafka's CompressionType), printed as one line of JSON per file:
 *
 *   {"batches": [{"position": P, "magic": M, "compression": C, "control": B, "records": [
 *      {"offset": O, "timestamp": T, "timestamp_type": "CreateTime", "key": HEX|null,
 *       "value": HEX|null, "headers": [[KEY, HEX|null], ...]}, ...]}, ...],
 *    "error": {"class": "CorruptRecordException", "message": "...", "position": P}}
 *
 * "error" is there when Kafka refused something, with the position of the batch it was
 * reading; the batches before it are listed. Compiled against each release's kafka-clients.
 *
 *   java -cp KAFKA_CLASSPATH:. KafkaJudge FILE...
 */
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

public class KafkaJudge {
    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();
        for (String file : args) {
            out.setLength(0);
            judge(Files.readAllBytes(Paths.get(file)), out);
            System.out.println(out);
        }
    }

    static void judge(byte[] data, StringBuilder sb) {
        sb.append("{\"batches\":[");
        int position = 0;
        boolean first = true;
        BufferSupplier buffers = BufferSupplier.create();
        try {
            MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(data));
            for (MutableRecordBatch batch : records.batches()) {
                batch.ensureValid();
                StringBuilder one = new StringBuilder();
                one.append("{\"position\":").append(position)
                   .append(",\"magic\":").append(batch.magic())
                   .append(",\"compression\":\"").append(batch.compressionType().name).append('"')
                   .append(",\"control\":").append(batch.isControlBatch())
                   .append(",\"records\":[");
                boolean firstRecord = true;
                try (CloseableIterator<Record> it = batch.streamingIterator(buffers)) {
                    while (it.hasNext()) {
                        Record r = it.next();
                        r.ensureValid();
                        if (!firstRecord) one.append(',');
                        firstRecord = false;
                        one.append("{\"offset\":").append(r.offset())
                           .append(",\"timestamp\":").append(r.timestamp())
                           .append(",\"timestamp_type\":\"").append(batch.timestampType().name).append('"')
                           .append(",\"key\":").append(hex(r.key()))
                           .append(",\"value\":").append(hex(r.value()))
                           .append(",\"headers\":[");
                        Header[] hs = r.headers();
                        for (int i = 0; i < hs.length; i++) {
                            if (i > 0) one.append(',');
                            one.append('[');
                            string(hs[i].key(), one);
                            one.append(',').append(hs[i].value() == null ? "null" : "\"" + hexOf(hs[i].value()) + "\"").append(']');
                        }
                        one.append("]}");
                    }
                }
                one.append("]}");
                if (!first) sb.append(',');
                first = false;
                sb.append(one);
                position += batch.sizeInBytes();
            }
            sb.append("]}");
        } catch (Throwable e) {
            sb.append("],\"error\":{\"class\":");
            string(e.getClass().getSimpleName(), sb);
            sb.append(",\"message\":");
            string(String.valueOf(e.getMessage()), sb);
            sb.append(",\"position\":").append(position).append("}}");
        }
    }

    static String hex(ByteBuffer b) {
        if (b == null) return "null";
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return "\"" + hexOf(bytes) + "\"";
    }

    static String hexOf(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (byte x : bytes) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    static void string(String s, StringBuilder sb) {
        sb.append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                default:
                    if (c < 0x20 || Character.isSurrogate(c)) sb.append(String.format("\\u%04x", (int) c));
                    else sb.append(c);
            }
        }
        sb.append('"');
    }
}
