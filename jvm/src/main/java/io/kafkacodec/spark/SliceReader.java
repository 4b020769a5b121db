package io.kafkacodec.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kafkacodec.kaitai.KafkaControlRecordKey;
import io.kafkacodec.kaitai.KafkaEndTxnMarker;
import io.kafkacodec.kaitai.KafkaLegacyMessage;
import io.kafkacodec.kaitai.KafkaRecord;
import io.kafkacodec.kaitai.KafkaRecordBatch;
import io.kafkacodec.kaitai.ZigzagVarint;
import io.kaitai.struct.ByteBufferKaitaiStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The rows of one slice, decoded on the JVM from the schemas' Java output (KafkaRecordBatch,
 * KafkaRecord, KafkaLegacyMessage) while the bytes are regular: the file the driver planned,
 * each entry whole as Kafka's log reader takes it (the kafka_log schema's rules), CRCs right
 * (verify_crc), records filling their batch exactly, legacy wrappers as Kafka writes them.
 * At anything else (damage, a segment the broker replaced or deleted since planning, a slice
 * on an object store) the slice is read by Python instead (pipeline/planner.py `rows`: the
 * Python source's own reader, scan.current included), the rows already given skipped: what
 * Python reads, or the error it raises, decides. The rows kept are the Python source's
 * (read.records): offsets [first, last], no control records unless include_control, no
 * aborted transaction (read_committed), timestamps from `since` on.
 */
final class SliceReader implements PartitionReader<InternalRow> {
    // the columns of read.records_schema, by name
    private static final List<String> COLUMNS = Arrays.asList(
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers",
        "base_offset", "magic", "compression", "producer_id", "producer_epoch", "base_sequence",
        "is_transactional", "is_control", "partition_leader_epoch", "segment", "position");
    private static final UTF8String[] CODECS = {
        UTF8String.fromString("none"), UTF8String.fromString("gzip"), UTF8String.fromString("snappy"),
        UTF8String.fromString("lz4"), UTF8String.fromString("zstd")};

    private final Slice slice;
    private final StructType schema;
    private final HashMap<String, String> options;
    private final KafkacodecSource.ReadSettings settings;
    private final int[] columns;
    private final UTF8String topic;
    private final UTF8String segmentName;

    private MappedByteBuffer data;
    private int size;
    private int pos;
    private Iterator<Object[]> pending = java.util.Collections.emptyIterator();
    private InternalRow row;
    private long given;

    // Python's rows, after an irregularity
    private boolean python;
    private boolean pythonDone;
    private ArrowStreamReader arrow;
    private BufferAllocator allocator;
    private File arrowFile;
    private Iterator<InternalRow> arrowRows = java.util.Collections.emptyIterator();

    SliceReader(Slice slice, StructType schema, HashMap<String, String> options, KafkacodecSource.ReadSettings settings) {
        this.slice = slice;
        this.schema = schema;
        this.options = options;
        this.settings = settings;
        String[] names = schema.fieldNames();
        columns = new int[names.length];
        for (int i = 0; i < names.length; i++) {
            columns[i] = COLUMNS.indexOf(names[i]);
            if (columns[i] < 0) throw new IllegalArgumentException("kafkacodec: no column " + names[i] + " in the records format");
        }
        topic = UTF8String.fromString(slice.topic);
        segmentName = UTF8String.fromString(String.format("%020d.log", slice.baseOffset));
        python = slice.python || !open();
    }

    /** Map the planned file's bytes of the slice; false when it is not the file planned. */
    private boolean open() {
        Path dir = Paths.get(slice.directory);
        String name = String.format("%020d.log", slice.baseOffset);
        Path file = dir.resolve(slice.deleted ? name + ".deleted" : name);
        if (slice.identity != null && !Arrays.equals(identity(file), slice.identity)) {
            file = dir.resolve(name + ".deleted");  // Kafka's name for a segment it deletes
            if (!Arrays.equals(identity(file), slice.identity)) return false;
        }
        try (FileChannel ch = FileChannel.open(file)) {
            if (slice.identity != null && !Arrays.equals(identity(file), slice.identity)) return false;
            long length = ch.size();
            long end = slice.end == null ? length : Math.min(slice.end, length);
            if (end - slice.start > Integer.MAX_VALUE || end < slice.start) return false;
            size = (int) (end - slice.start);
            data = ch.map(FileChannel.MapMode.READ_ONLY, slice.start, size);
            return true;
        } catch (IOException e) {
            return false;  // gone since planning: Python finds where its offsets are now
        }
    }

    private static long[] identity(Path file) {
        try {
            return new long[] {((Number) Files.getAttribute(file, "unix:dev")).longValue(),
                               ((Number) Files.getAttribute(file, "unix:ino")).longValue()};
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    /** Bytes this reader does not read as regular: Python reads the slice. */
    private static final class Irregular extends RuntimeException {
        Irregular(String why) { super(why, null, false, false); }
    }

    @Override
    public boolean next() throws IOException {
        if (!python) {
            try {
                while (!pending.hasNext()) {
                    if (!nextEntry()) return false;
                }
                row = new GenericInternalRow(pending.next());
                given++;
                return true;
            } catch (RuntimeException | InternalError e) {  // Irregular, anything a generated parser throws, a
                // mapped file truncated under the reader (InternalError: a fault in an unsafe memory access)
                python = true;
                pending = java.util.Collections.emptyIterator();
            }
        }
        return nextFromPython();
    }

    @Override
    public InternalRow get() {
        return row;
    }

    @Override
    public CustomTaskMetric[] currentMetricsValues() {
        long value = python ? 1 : 0;
        return new CustomTaskMetric[] {new CustomTaskMetric() {
            @Override public String name() { return KafkacodecSource.SlicesReadByPython.NAME; }
            @Override public long value() { return value; }
        }};
    }

    // ---------------------------------------------------------------- the walk (kafka_log)

    /** The rows of the next entry into pending; false at the end of the slice's log. */
    private boolean nextEntry() {
        int remain = size - pos;
        if (remain < 12) return false;
        int length = data.getInt(pos + 8);
        if (length < 14) throw new Irregular("length below 14");
        if (remain < 17) return false;
        byte magic = data.get(pos + 16);
        if (magic < 0 || magic > 2) throw new Irregular("magic");
        if (remain - 12 < length) return false;  // a partial entry ends the log
        int at = pos;
        pos += 12 + length;
        if (magic == 2) v2(at, length);
        else legacy(at, length, magic);
        return true;
    }

    private void v2(int at, int length) {
        if (length < 49) throw new Irregular("v2 batch too short");
        if (settings.verifyCrc) {
            CRC32C crc = new CRC32C();
            crc.update(data.slice(at + 21, length - 9));
            if ((int) crc.getValue() != data.getInt(at + 17)) throw new Irregular("crc");
        }
        long base = data.getLong(at);
        long lastOffset = base + data.getInt(at + 23);
        long maxTimestamp = data.getLong(at + 35);
        if (slice.first != null && lastOffset < slice.first) return;
        if (slice.last != null && base > slice.last) return;
        if (slice.since != null && maxTimestamp < slice.since) return;
        KafkaRecordBatch b = new KafkaRecordBatch(new ByteBufferKaitaiStream(data.slice(at, 12 + length)));
        KafkaRecordBatch.RecordList region = b.recordsRegion();
        if (!region._io().isEof()) throw new Irregular("bytes after the records");
        int codec = (int) b.compression().id();
        if (codec > 4) throw new Irregular("codec");
        boolean control = b.isControl();
        boolean transactional = b.isTransactional();
        if (control && !settings.includeControl) {
            for (KafkaRecord r : region.records()) control(r);  // checked as Python checks them
            return;
        }
        if (transactional && !control && aborted(b.producerId(), base)) return;
        boolean logAppend = b.timestampType() == KafkaRecordBatch.TimestampType.LOG_APPEND_TIME;
        int tsType = logAppend ? 1 : 0;
        List<Object[]> rows = new ArrayList<>(region.records().size());
        for (KafkaRecord r : region.records()) {
            checkLength(r);
            if (control) control(r);
            long offset = base + r.offsetDelta().value();
            if (slice.first != null && offset < slice.first) continue;
            if (slice.last != null && offset > slice.last) continue;
            long ts = logAppend ? maxTimestamp : b.baseTimestamp() + r.timestampDelta().value();
            if (slice.since != null && ts < slice.since) continue;
            Object[] v = new Object[columns.length];
            for (int i = 0; i < columns.length; i++) {
                switch (columns[i]) {
                    case 0: v[i] = r.key(); break;
                    case 1: v[i] = r.value(); break;
                    case 2: v[i] = topic; break;
                    case 3: v[i] = slice.partition; break;
                    case 4: v[i] = offset; break;
                    case 5: v[i] = Math.multiplyExact(ts, 1000L); break;
                    case 6: v[i] = tsType; break;
                    case 7: v[i] = headers(r); break;
                    case 8: v[i] = base; break;
                    case 9: v[i] = (byte) 2; break;
                    case 10: v[i] = CODECS[codec]; break;
                    case 11: v[i] = b.producerId(); break;
                    case 12: v[i] = b.producerEpoch(); break;
                    case 13: v[i] = b.baseSequence(); break;
                    case 14: v[i] = transactional; break;
                    case 15: v[i] = control; break;
                    case 16: v[i] = b.partitionLeaderEpoch(); break;
                    case 17: v[i] = segmentName; break;
                    case 18: v[i] = slice.start + at; break;
                    default: throw new IllegalStateException();
                }
            }
            rows.add(v);
        }
        pending = rows.iterator();
    }

    /** A record's length field against the bytes after it (DefaultRecord.readFrom). */
    private static void checkLength(KafkaRecord r) {
        long body = 1 + len(r.timestampDelta()) + len(r.offsetDelta()) + len(r.lenKey())
            + Math.max(r.lenKey().value(), 0) + len(r.lenValue()) + Math.max(r.lenValue().value(), 0)
            + len(r.numHeaders());
        for (KafkaRecord.Header h : r.headers()) {
            body += len(h.lenKey()) + h.lenKey().value() + len(h.lenValue()) + Math.max(h.lenValue().value(), 0);
        }
        if (body != r.lenBody().value()) throw new Irregular("record length");
    }

    private static int len(ZigzagVarint v) {
        return v.len();
    }

    /** A control record's key (and end-transaction marker), read as batches.parse_control. */
    private static void control(KafkaRecord r) {
        checkLength(r);
        if (r.key() == null) throw new Irregular("control record without a key");
        KafkaControlRecordKey k = new KafkaControlRecordKey(new ByteBufferKaitaiStream(r.key()));
        long type = k.type() == null ? -1 : k.type().id();
        if ((type == 0 || type == 1) && r.value() != null && r.value().length >= 6) {
            new KafkaEndTxnMarker(new ByteBufferKaitaiStream(r.value()));
        }
    }

    private boolean aborted(long producer, long base) {
        for (long[] a : slice.aborted) {
            if (a[0] == producer && base >= a[1] && base <= a[2]) return true;
        }
        return false;
    }

    private static Object headers(KafkaRecord r) {
        List<KafkaRecord.Header> hs = r.headers();
        if (hs.isEmpty()) return null;  // Spark's source: null, not an empty list
        Object[] out = new Object[hs.size()];
        for (int i = 0; i < out.length; i++) {
            KafkaRecord.Header h = hs.get(i);
            out[i] = new GenericInternalRow(new Object[] {UTF8String.fromString(h.key()), h.value()});
        }
        return new GenericArrayData(out);
    }

    // ---------------------------------------------------------------- legacy (magic 0 and 1)

    /** One top-level legacy message: a record, or a wrapper of compressed ones, with Kafka's
     * wrapper rules (AbstractLegacyRecordBatch; FORMATS.md 1.3). */
    private void legacy(int at, int length, byte magic) {
        if (settings.verifyCrc) legacyCrc(data, at, length);
        long wrapperOffset = data.getLong(at);
        if (slice.first != null && wrapperOffset < slice.first) return;
        if (slice.since != null && magic == 0) return;
        ByteBufferKaitaiStream io = new ByteBufferKaitaiStream(data.slice(at, 12 + length));
        KafkaLegacyMessage m = new KafkaLegacyMessage(io);
        if (!io.isEof()) throw new Irregular("legacy message length");
        int codec = (int) m.compression().id();
        int tsType = magic == 0 ? -1 : (int) m.logAppendTimeBit();
        List<Object[]> rows = new ArrayList<>();
        if (codec == 0) {
            add(rows, at, m, m.offset(), m.offset(), magic == 0 ? -1 : m.timestamp(), tsType, magic, codec);
        } else {
            if (m.value() == null && m._raw_inner() == null) throw new Irregular("wrapper with a null value");
            ByteBuffer inner = ByteBuffer.wrap(m._raw_inner());
            List<KafkaLegacyMessage> messages = new ArrayList<>();
            int ip = 0;
            int n = inner.limit();
            while (ip < n) {
                if (n - ip < 12) throw new Irregular("inner message cut");
                int len = inner.getInt(ip + 8);
                if (len < 14 || n - ip - 12 < len) throw new Irregular("inner message cut");
                legacyCrc(inner, ip, len);
                ByteBufferKaitaiStream iio = new ByteBufferKaitaiStream(inner.slice(ip, 12 + len));
                KafkaLegacyMessage im = new KafkaLegacyMessage(iio);
                if (!iio.isEof() || im.compression().id() != 0) throw new Irregular("inner message");
                messages.add(im);
                ip += 12 + len;
            }
            if (messages.isEmpty()) throw new Irregular("a wrapper of no inner message");  // Kafka refuses it
            long lastInner = messages.get(messages.size() - 1).offset();
            long shift = 0;
            if (magic >= 1 && wrapperOffset != 0) {  // relative inner offsets
                if (wrapperOffset < lastInner) throw new Irregular("wrapper offset below its last inner one");
                shift = Math.subtractExact(wrapperOffset, lastInner);
            }
            long first = Math.addExact(messages.get(0).offset(), shift);
            boolean logAppend = magic >= 1 && tsType == 1;
            for (KafkaLegacyMessage im : messages) {
                long ts = logAppend ? m.timestamp() : (im.magic() == 0 ? -1 : im.timestamp());
                add(rows, at, im, Math.addExact(im.offset(), shift), first, ts, tsType, magic, codec);
            }
        }
        pending = rows.iterator();
    }

    private static void legacyCrc(ByteBuffer buf, int at, int length) {
        CRC32 crc = new CRC32();
        crc.update(buf.slice(at + 16, length - 4));
        if ((int) crc.getValue() != buf.getInt(at + 12)) throw new Irregular("legacy crc");
    }

    private void add(List<Object[]> rows, int at, KafkaLegacyMessage m, long offset, long base, long ts,
                     int tsType, byte magic, int codec) {
        if (slice.first != null && offset < slice.first) return;
        if (slice.last != null && offset > slice.last) return;
        if (slice.since != null && (tsType == -1 || ts < slice.since)) return;
        Object[] v = new Object[columns.length];
        for (int i = 0; i < columns.length; i++) {
            switch (columns[i]) {
                case 0: v[i] = m.key(); break;
                case 1: v[i] = m.value(); break;
                case 2: v[i] = topic; break;
                case 3: v[i] = slice.partition; break;
                case 4: v[i] = offset; break;
                case 5: v[i] = tsType == -1 ? null : (Object) Math.multiplyExact(ts, 1000L); break;
                case 6: v[i] = tsType; break;
                case 7: v[i] = null; break;
                case 8: v[i] = base; break;
                case 9: v[i] = magic; break;
                case 10: v[i] = CODECS[codec]; break;
                case 11: v[i] = -1L; break;
                case 12: v[i] = (short) -1; break;
                case 13: v[i] = -1; break;
                case 14: v[i] = false; break;
                case 15: v[i] = false; break;
                case 16: v[i] = -1; break;
                case 17: v[i] = segmentName; break;
                case 18: v[i] = slice.start + at; break;
                default: throw new IllegalStateException();
            }
        }
        rows.add(v);
    }

    // ---------------------------------------------------------------- Python's rows

    private boolean nextFromPython() throws IOException {
        if (pythonDone) return false;
        if (arrow == null) {
            arrowFile = Planner.tempFile();
            ObjectNode more = Planner.JSON.createObjectNode();
            more.set("slice", Planner.JSON.readTree(slice.json));
            more.put("out", arrowFile.getPath());
            long rows = Planner.ask("rows", options, more).get("rows").asLong();
            if (rows < given) fewer(rows);
            if (rows == 0) {
                pythonDone = true;
                finishPython();
                return false;
            }
            allocator = ArrowUtils.rootAllocator().newChildAllocator("kafkacodec-rows", 0, Long.MAX_VALUE);
            arrow = new ArrowStreamReader(new FileInputStream(arrowFile), allocator);
            for (long skipped = 0; skipped < given; skipped++) {
                advance();
                arrowRows.next();
            }
        }
        if (!advance()) {
            pythonDone = true;
            finishPython();
            return false;
        }
        row = arrowRows.next().copy();
        return true;
    }

    private void fewer(long rows) {
        throw new IllegalStateException("kafkacodec: " + slice.directory + "/" + segmentName + ": the JVM reader gave "
            + given + " rows of this slice where the Python reader finds " + rows + " (a bug: please report it)");
    }

    private boolean advance() throws IOException {
        while (!arrowRows.hasNext()) {
            if (!arrow.loadNextBatch()) return false;
            VectorSchemaRoot root = arrow.getVectorSchemaRoot();
            ColumnVector[] vectors = new ColumnVector[root.getFieldVectors().size()];
            int i = 0;
            for (FieldVector v : root.getFieldVectors()) vectors[i++] = new ArrowColumnVector(v);
            arrowRows = new ColumnarBatch(vectors, root.getRowCount()).rowIterator();
        }
        return true;
    }

    private void finishPython() throws IOException {
        if (arrow != null) arrow.close();
        if (allocator != null) allocator.close();
        if (arrowFile != null) Files.deleteIfExists(arrowFile.toPath());
        arrow = null;
        allocator = null;
    }

    @Override
    public void close() throws IOException {
        data = null;
        finishPython();
    }
}
