import io.kafkacodec.kaitai.KafkaLog;
import io.kafkacodec.kaitai.KafkaRecord;
import io.kafkacodec.kaitai.KafkaRecordBatch;
import io.kaitai.struct.ByteBufferKaitaiStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.zip.CRC32C;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

/**
 * The schemas' Java parser (the official compiler's output, jvm/) against Kafka's own batch
 * iteration over the same log segment, for bench/languages.py. Each side checks every batch's
 * CRC and reads every field of every record (offset, timestamp, key, value, headers) into a
 * checksum that must agree:
 *   - kafkacodec: new KafkaLog(stream), CRC-32C over each batch's crcFrom..crcTo, the records;
 *   - Kafka: MemoryRecords.readableRecords, ensureValid, streamingIterator (as the consumer's
 *     CompletedFetch reads a fetched batch).
 * Usage: LanguagesBench REPEAT SEGMENT; prints one JSON line: each side's median records/s.
 */
public final class LanguagesBench {
    private LanguagesBench() {}

    static long[] kafkacodec(byte[] data) {
        KafkaLog log = new KafkaLog(new ByteBufferKaitaiStream(data));
        long records = 0, sum = 0;
        int pos = 0;
        for (KafkaLog.Entry e : log.entries()) {
            if (!(e.body() instanceof KafkaRecordBatch)) break;
            KafkaRecordBatch b = (KafkaRecordBatch) e.body();
            CRC32C crc = new CRC32C();
            crc.update(data, pos + b.crcFrom(), Math.toIntExact(b.crcTo() - b.crcFrom()));
            if (crc.getValue() != b.crc()) throw new IllegalStateException("CRC mismatch at " + pos);
            boolean logAppend = b.timestampType() == KafkaRecordBatch.TimestampType.LOG_APPEND_TIME;
            for (KafkaRecord rec : b.recordsRegion().records()) {
                KafkaRecord.Body r = rec.body();
                long ts = logAppend ? b.maxTimestamp() : b.baseTimestamp() + r.timestampDelta().value();
                sum += b.baseOffset() + r.offsetDelta().value() + ts
                        + (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
                for (KafkaRecord.Header h : r.headers()) {
                    sum += h.key().getBytes(java.nio.charset.StandardCharsets.UTF_8).length + (h.value() == null ? 0 : h.value().length);
                }
                records++;
            }
            pos += 12 + b.lenBatch();
        }
        return new long[] {records, sum};
    }

    static long[] kafka(byte[] data) {
        MemoryRecords recs = MemoryRecords.readableRecords(ByteBuffer.wrap(data));
        BufferSupplier supplier = BufferSupplier.create();
        long records = 0, sum = 0;
        for (RecordBatch b : recs.batches()) {
            b.ensureValid();
            try (CloseableIterator<Record> it = b.streamingIterator(supplier)) {
                while (it.hasNext()) {
                    Record r = it.next();
                    sum += r.offset() + r.timestamp() + r.keySize() + r.valueSize();
                    if (r.key() != null) r.key().get(r.key().position());
                    for (Header h : r.headers()) {
                        sum += h.key().getBytes(java.nio.charset.StandardCharsets.UTF_8).length + (h.value() == null ? 0 : h.value().length);
                    }
                    records++;
                }
            }
        }
        return new long[] {records, sum};
    }

    public static void main(String[] args) throws Exception {
        int repeat = Integer.parseInt(args[0]);
        byte[] data = Files.readAllBytes(Paths.get(args[1]));
        List<Double> ours = new ArrayList<>(), theirs = new ArrayList<>();
        long[] a = null, k = null;
        for (int i = 0; i <= repeat; i++) {  // the first round warms the JIT up
            for (int j = 0; j < 2; j++) {
                boolean oursFirst = (i + j) % 2 == 0;
                long t0 = System.nanoTime();
                long[] got = oursFirst ? kafkacodec(data) : kafka(data);
                double s = (System.nanoTime() - t0) / 1e9;
                if (oursFirst) { a = got; if (i > 0) ours.add(got[0] / s); }
                else { k = got; if (i > 0) theirs.add(got[0] / s); }
            }
        }
        if (a[0] != k[0] || a[1] != k[1]) throw new IllegalStateException("the sides disagree: " + a[0] + "/" + a[1] + " vs " + k[0] + "/" + k[1]);
        Collections.sort(ours);
        Collections.sort(theirs);
        System.out.println("{\"records\": " + a[0] + ", \"bytes\": " + data.length + ", \"checksum\": " + a[1]
                + ", \"kafkacodec\": " + ours.get(ours.size() / 2) + ", \"kafka\": " + theirs.get(theirs.size() / 2) + "}");
    }
}
