package io.kafkacodec.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kafkacodec.kaitai.KafkaControlRecordKey;
import io.kafkacodec.kaitai.KafkaEndTxnMarker;
import io.kafkacodec.kaitai.KafkaLegacyMessage;
import io.kafkacodec.kaitai.KafkaLog;
import io.kafkacodec.kaitai.KafkaRecord;
import io.kafkacodec.kaitai.KafkaRecordBatch;
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
    static final List<String> COLUMNS = Arrays.asList(
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
    private ByteBufferKaitaiStream io;
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
            data = ch.map(FileChannel.MapMode.READ_ONLY, slice.start, end - slice.start);
            io = new ByteBufferKaitaiStream(data);
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
                return nextOwn();
            } catch (RuntimeException | InternalError e) {  // Irregular, anything a generated parser throws, a
                // mapped file truncated under the reader (InternalError: a fault in an unsafe memory access)
                python = true;
                pending = java.util.Collections.emptyIterator();
            }
        }
        return nextFromPython();
    }

    /** Whether this JVM reads the slice itself (it opened the file planned), so far. */
    boolean readsItself() {
        return !python;
    }

    /**
     * The next row this JVM reads itself (then in get()), false at the slice's end; at
     * bytes it does not read as regular it throws (Irregular, or what a generated parser
     * throws), and next() hands the slice to Python. What the fuzz target drives
     * (harness/src/SparkJvmPeer.java: peers.fuzz's kafkacodec-spark).
     */
    boolean nextOwn() {
        while (!pending.hasNext()) {
            if (!nextEntry()) return false;
        }
        row = new GenericInternalRow(pending.next());
        given++;
        return true;
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

    /**
     * The rows of the next entry into pending; false at the end of the slice's log. The
     * entries are the kafka_log schema's (KafkaLog.Entry: Kafka's ByteBufferLogInputStream
     * rules, a partial entry ending the log), each of exactly the length it states.
     */
    private boolean nextEntry() {
        if (io.isEof()) return false;
        int at = (int) io.pos();
        KafkaLog.Entry e = new KafkaLog.Entry(io);
        if (e.partial() != null) return false;
        if (io.pos() != at + 12L + e.length()) throw new Irregular("an entry's length disagrees with its fields");
        if (e.body() instanceof KafkaRecordBatch) v2(at, (KafkaRecordBatch) e.body());
        else legacy(at, (KafkaLegacyMessage) e.body());
        return true;
    }

    /** The CRC the schema's crc_from and crc_to delimit, from the entry at `at`. */
    private static void crc(ByteBuffer buf, int at, int from, long to, long stored, java.util.zip.Checksum c) {
        // (crc_to is a long in the schema: 12 + a length of up to 2^31 - 1; the entry was read whole)
        c.update(buf.slice(at + from, Math.toIntExact(to - from)));
        if (c.getValue() != stored) throw new Irregular("crc");
    }

    private void v2(int at, KafkaRecordBatch b) {
        if (settings.verifyCrc) crc(data, at, b.crcFrom(), b.crcTo(), b.crc(), new CRC32C());
        long base = b.baseOffset();
        if (slice.first != null && base + b.lastOffsetDelta() < slice.first) return;
        if (slice.last != null && base > slice.last) return;
        if (slice.since != null && b.maxTimestamp() < slice.since) return;
        // the schema checks that the records take the region and each record its length
        KafkaRecordBatch.RecordList region = b.recordsRegion();
        boolean control = b.isControl();
        if (control && !settings.includeControl) {
            for (KafkaRecord r : region.records()) control(r.body());  // checked as Python checks them
            return;
        }
        boolean transactional = b.isTransactional();
        if (transactional && !control && aborted(b.producerId(), base)) return;
        boolean logAppend = b.timestampType() == KafkaRecordBatch.TimestampType.LOG_APPEND_TIME;
        int codec = (int) b.compression().id();
        List<Object[]> rows = new ArrayList<>(region.records().size());
        for (KafkaRecord rec : region.records()) {
            KafkaRecord.Body r = rec.body();
            if (control) control(r);
            long ts = logAppend ? b.maxTimestamp() : b.baseTimestamp() + r.timestampDelta().value();
            add(rows, r.key(), r.value(), base + r.offsetDelta().value(), ts, logAppend ? 1 : 0, headers(r), base,
                (byte) 2, codec, b.producerId(), b.producerEpoch(), b.baseSequence(), transactional, control,
                b.partitionLeaderEpoch(), at);
        }
        pending = rows.iterator();
    }

    /** A control record's key (and end-transaction marker), read as batches.parse_control. */
    private static void control(KafkaRecord.Body r) {
        if (r.key() == null) throw new Irregular("control record without a key");
        KafkaControlRecordKey k = new KafkaControlRecordKey(new ByteBufferKaitaiStream(r.key()));
        long type = k.type() == null ? -1 : k.type().id();
        if (type == 0 || type == 1) {  // Kafka's EndTransactionMarker refuses a marker it cannot read
            if (r.value() == null) throw new Irregular("an end transaction marker without a value");
            new KafkaEndTxnMarker(new ByteBufferKaitaiStream(r.value()));
        }
    }

    private boolean aborted(long producer, long base) {
        for (long[] a : slice.aborted) {
            if (a[0] == producer && base >= a[1] && base <= a[2]) return true;
        }
        return false;
    }

    private static Object headers(KafkaRecord.Body r) {
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
    private void legacy(int at, KafkaLegacyMessage m) {
        if (settings.verifyCrc) crc(data, at, m.crcFrom(), m.crcTo(), m.crc(), new CRC32());
        byte magic = m.magic();
        long wrapperOffset = m.offset();
        if (slice.first != null && wrapperOffset < slice.first) return;
        if (slice.since != null && magic == 0) return;
        int codec = (int) m.compression().id();
        int tsType = magic == 0 ? -1 : m.logAppendTimeBit();
        List<Object[]> rows = new ArrayList<>();
        if (codec == 0) {
            add(rows, m.key(), m.value(), wrapperOffset, magic == 0 ? -1 : m.timestamp(), tsType, null, wrapperOffset,
                magic, codec, -1L, (short) -1, -1, false, false, -1, at);
            pending = rows.iterator();
            return;
        }
        if (m.inner() == null) throw new Irregular("wrapper with a null value");
        List<KafkaLegacyMessage> messages = new ArrayList<>();
        for (KafkaLegacyMessage.InnerEntry e : m.inner().entries()) {
            // a partial inner message (Kafka drops it), or an inner magic other than 0 and 1
            // (Kafka reads it with magic 1's layout): Python reads those
            if (e.message() == null) throw new Irregular("a partial inner message");
            if (e.message().magic() != 0 && e.message().magic() != 1) throw new Irregular("an inner magic of neither 0 nor 1");
            messages.add(e.message());
        }
        if (messages.isEmpty()) throw new Irregular("a wrapper of no inner message");  // Kafka refuses it
        // Each inner message's CRC over the range its own length names (always checked, as
        // Kafka does): a length that disagrees with the message's fields fails it, or the sum
        ByteBuffer inner = ByteBuffer.wrap(m._raw_inner());
        int ip = 0;
        for (KafkaLegacyMessage im : messages) {
            if (im.compression().id() != 0) throw new Irregular("a compressed inner message");
            crc(inner, ip, im.crcFrom(), im.crcTo(), im.crc(), new CRC32());
            ip += Math.toIntExact(im.crcTo());
        }
        if (ip != inner.limit()) throw new Irregular("inner messages' lengths disagree with the set");
        long lastInner = messages.get(messages.size() - 1).offset();
        long shift = 0;
        if (magic >= 1 && wrapperOffset != 0) {  // relative inner offsets
            if (wrapperOffset < lastInner) throw new Irregular("wrapper offset below its last inner one");
            shift = Math.subtractExact(wrapperOffset, lastInner);
        }
        long first = Math.addExact(messages.get(0).offset(), shift);
        boolean logAppend = magic >= 1 && tsType == 1;
        for (KafkaLegacyMessage im : messages) {
            // magic 0 has no time; a magic 1 one takes a LogAppendTime wrapper's (DeepRecordsIterator)
            long ts = im.magic() == 0 ? -1 : logAppend ? m.timestamp() : im.timestamp();
            add(rows, im.key(), im.value(), Math.addExact(im.offset(), shift), ts, tsType, null, first, magic, codec,
                -1L, (short) -1, -1, false, false, -1, at);
        }
        pending = rows.iterator();
    }

    /** One row in the schema's columns, when it is within the slice's offsets and time. */
    private void add(List<Object[]> rows, byte[] key, byte[] value, long offset, long ts, int tsType, Object headers,
                     long base, byte magic, int codec, long producerId, short producerEpoch, int baseSequence,
                     boolean transactional, boolean control, int leaderEpoch, int at) {
        if (slice.first != null && offset < slice.first) return;
        if (slice.last != null && offset > slice.last) return;
        if (slice.since != null && (tsType == -1 || ts < slice.since)) return;
        Object[] v = new Object[columns.length];
        for (int i = 0; i < columns.length; i++) {
            switch (columns[i]) {
                case 0: v[i] = key; break;
                case 1: v[i] = value; break;
                case 2: v[i] = topic; break;
                case 3: v[i] = slice.partition; break;
                case 4: v[i] = offset; break;
                case 5: v[i] = tsType == -1 ? null : (Object) Math.multiplyExact(ts, 1000L); break;
                case 6: v[i] = tsType; break;
                case 7: v[i] = headers; break;
                case 8: v[i] = base; break;
                case 9: v[i] = magic; break;
                case 10: v[i] = CODECS[codec]; break;
                case 11: v[i] = producerId; break;
                case 12: v[i] = producerEpoch; break;
                case 13: v[i] = baseSequence; break;
                case 14: v[i] = transactional; break;
                case 15: v[i] = control; break;
                case 16: v[i] = leaderEpoch; break;
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
        io = null;
        finishPython();
    }
}
