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
 * In --stream mode each answer also has "consumer": what a KafkaConsumer with check.crcs=true
 * and read_uncommitted hands its application from a fetch of these bytes at offset 0, from
 * Kafka's own CompletedFetch.fetchRecords (its batch and record checks, control records
 * left out, records below the next fetch offset skipped, an error after the records before
 * it): {"records": [{"offset", "timestamp", "timestamp_type", "key", "value", "headers"}],
 * "error": {"class", "message"} (the cause KafkaException wraps) or null}.
 *
 * "--stream --broker" also reads each image as the broker's log layer reads a segment
 * (FileRecords over a file: its batches through FileLogInputStream, ensureValid,
 * searchForOffsetWithSize / searchForOffsetFromPosition, searchForTimestamp,
 * largestTimestampAfter, slice; the producer's path: DefaultRecordBatch.skipKeyValueIterator)
 * and adds what it found as "broker": {"batches": [[POSITION, BASE, LAST, SIZE, MAGIC], ...],
 * "steps": {STEP: RESULT or "!Exception: message"}}: the branches these reach are counted
 * with JaCoCo (peers/coverage.py); the consumer's answer above is the one compared.
 *
 * "error" is there when Kafka refused something, with the position of the batch it was
 * reading; the batches before it are listed. Compiled against each release's kafka-clients.
 *
 *   java -cp KAFKA_CLASSPATH:. KafkaJudge FILE...
 */
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.internals.FetchConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.LogContext;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HexFormat;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.FileLogInputStream;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

public class KafkaJudge {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        if (args.length >= 1 && args[0].equals("--stream")) {
            stream(args.length == 2 && args[1].equals("--broker"));
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

    static void stream(boolean broker) throws Exception {
        File segment = broker ? File.createTempFile("kafkajudge", ".log") : null;
        if (segment != null) segment.deleteOnExit();
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
            ObjectNode answer = judge(data);
            answer.set("consumer", consume(data));
            if (segment != null) answer.set("broker", broker(data, segment));
            out.println(JSON.writeValueAsString(answer));
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

    static final TopicPartition PARTITION = new TopicPartition("judged", 0);
    static final FetchConfig FETCH = new FetchConfig(1, 50 << 20, 500, 1 << 20, 500, true, "", IsolationLevel.READ_UNCOMMITTED);
    static Object subscriptions, aggregator, deserializers;
    static Constructor<?> completedFetch;
    static Method fetchRecords;

    /** What a consumer's CompletedFetch hands the application from a fetch of data at
     * offset 0 (see the header). Its constructors differ between releases (4.0 takes the
     * request version, 4.4 does not; Deserializers takes Metrics from 4.1): found by their
     * parameters. */
    static ObjectNode consume(byte[] data) throws Exception {
        String internals = "org.apache.kafka.clients.consumer.internals.";
        if (completedFetch == null) {
            Object earliest = Class.forName(internals + "AutoOffsetResetStrategy").getField("EARLIEST").get(null);
            subscriptions = Class.forName(internals + "SubscriptionState").getConstructors()[0]
                .newInstance(new LogContext(), earliest);
            Object manager = Class.forName(internals + "FetchMetricsManager").getConstructors()[0]
                .newInstance(new Metrics(), Class.forName(internals + "FetchMetricsRegistry").getConstructor().newInstance());
            Constructor<?> agg = Class.forName(internals + "FetchMetricsAggregator").getDeclaredConstructors()[0];
            agg.setAccessible(true);
            aggregator = agg.newInstance(manager, java.util.Set.of(PARTITION));
            for (Constructor<?> c : Class.forName(internals + "Deserializers").getConstructors()) {
                Class<?>[] p = c.getParameterTypes();
                if (p[0] == org.apache.kafka.common.serialization.Deserializer.class)
                    deserializers = p.length == 2 ? c.newInstance(new ByteArrayDeserializer(), new ByteArrayDeserializer())
                                                  : c.newInstance(new ByteArrayDeserializer(), new ByteArrayDeserializer(), new Metrics());
            }
            Class<?> cf = Class.forName(internals + "CompletedFetch");
            completedFetch = cf.getDeclaredConstructors()[0];
            completedFetch.setAccessible(true);
            for (Method m : cf.getDeclaredMethods()) if (m.getName().equals("fetchRecords")) fetchRecords = m;
            fetchRecords.setAccessible(true);
        }
        ObjectNode out = JSON.createObjectNode();
        ArrayNode records = out.putArray("records");
        out.putNull("error");
        Object partition = new FetchResponseData.PartitionData().setPartitionIndex(0).setHighWatermark(Long.MAX_VALUE)
            .setRecords(MemoryRecords.readableRecords(ByteBuffer.wrap(data)));
        Object[] args = {org.slf4j.LoggerFactory.getLogger(KafkaJudge.class), subscriptions, BufferSupplier.create(),
                         PARTITION, partition, aggregator, 0L, (short) 17};
        Object fetch = completedFetch.newInstance(java.util.Arrays.copyOf(args, completedFetch.getParameterCount()));
        try {
            while (true) {
                List<?> got = (List<?>) fetchRecords.invoke(fetch, FETCH, deserializers, 500);
                if (got.isEmpty()) break;
                for (Object o : got) {
                    ConsumerRecord<?, ?> r = (ConsumerRecord<?, ?>) o;
                    ObjectNode rec = records.addObject();
                    rec.put("offset", r.offset()).put("timestamp", r.timestamp())
                       .put("timestamp_type", r.timestampType().name)
                       .put("key", r.key() == null ? null : HEX.formatHex((byte[]) r.key()))
                       .put("value", r.value() == null ? null : HEX.formatHex((byte[]) r.value()));
                    ArrayNode headers = rec.putArray("headers");
                    for (Header h : r.headers()) {
                        headers.addArray().add(h.key()).add(h.value() == null ? null : HEX.formatHex(h.value()));
                    }
                }
            }
        } catch (InvocationTargetException wrapped) {
            Throwable e = wrapped.getCause();
            // the consumer's KafkaException("Received exception when fetching the next record ...") says
            // which partition; its cause says what Kafka found
            if (e.getCause() != null && e.getMessage() != null && e.getMessage().startsWith("Received exception when fetching"))
                e = e.getCause();
            out.putObject("error").put("class", e.getClass().getSimpleName()).put("message", String.valueOf(e.getMessage()));
        }
        return out;
    }

    /** The image as the broker's log layer reads a segment file (see the header). */
    static ObjectNode broker(byte[] data, File segment) throws Exception {
        ObjectNode out = JSON.createObjectNode();
        ArrayNode batches = out.putArray("batches");
        ObjectNode steps = out.putObject("steps");
        Files.write(segment.toPath(), data);
        BufferSupplier buffers = BufferSupplier.create();
        try (FileRecords file = FileRecords.open(segment)) {
            long first = -1, last = -1, maxTimestamp = -1;
            int at = 0;
            try {
                for (FileLogInputStream.FileChannelRecordBatch b : file.batches()) {
                    batches.addArray().add(b.position()).add(b.baseOffset()).add(b.lastOffset())
                           .add(b.sizeInBytes()).add(b.magic());
                    if (first < 0) first = b.baseOffset();
                    last = b.lastOffset();
                    maxTimestamp = Math.max(maxTimestamp, b.maxTimestamp());
                    b.ensureValid();
                    b.countOrNull();
                    for (Record r : b) r.ensureValid();
                    at = b.position();
                }
                steps.put("walk", "ok");
            } catch (Throwable e) {
                steps.put("walk", failure(e));
            }
            long[] targets = {first, first + 1, (first + last) / 2, last, last + 1};
            for (long target : targets) {
                step(steps, "offset " + target, () -> call(file, new String[] {"searchForOffsetFromPosition", "searchForOffsetWithSize"}, target, 0));
            }
            final long from = Math.max(first, 0L);
            long[] times = {-1, 0, maxTimestamp, maxTimestamp + 1};
            for (long t : times) {
                step(steps, "timestamp " + t, () -> call(file, new String[] {"searchForTimestamp"}, t, 0, from, 2147483639));
                step(steps, "timestamp " + t + " after", () -> call(file, new String[] {"searchForTimestamp"}, t, 0, from + 1, 2147483639));
            }
            final int middle = at;
            step(steps, "largest", () -> file.largestTimestampAfter(0));
            step(steps, "largest after", () -> file.largestTimestampAfter(middle));
            for (int[] cut : new int[][] {{0, data.length + 10}, {data.length, 0}, {data.length + 1, 1}, {1, -1}, {-1, 1}, {1, Integer.MAX_VALUE}}) {
                step(steps, "file slice " + cut[0] + "+" + cut[1], () -> file.slice(cut[0], cut[1]).sizeInBytes());
            }
            step(steps, "slice", () -> {
                FileRecords slice = (FileRecords) (Object) file.slice(middle, Math.max(0, data.length - middle));
                int n = 0;
                for (FileLogInputStream.FileChannelRecordBatch b : slice.batches()) {
                    b.ensureValid();
                    n++;
                }
                return n;
            });
        }
        step(steps, "valid bytes", () -> {
            MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(data));
            return records.validBytes() + records.validBytes();  // counted, then remembered
        });
        step(steps, "first batch size", () -> MemoryRecords.readableRecords(ByteBuffer.wrap(data)).firstBatchSize());
        for (int[] cut : new int[][] {{0, data.length}, {0, data.length + 1}, {1, data.length}, {data.length / 2, data.length}, {-1, 1}, {0, -1}}) {
            step(steps, "memory slice " + cut[0] + "+" + cut[1], () -> {
                int n = 0;
                // MemoryRecords.slice: 4.1 and later
                Records slice = (Records) call(MemoryRecords.readableRecords(ByteBuffer.wrap(data)), new String[] {"slice"}, cut[0], cut[1]);
                for (RecordBatch b : slice.batches()) n++;
                return n;
            });
        }
        step(steps, "accessors", () -> {
            StringBuilder seen = new StringBuilder();
            for (MutableRecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(data)).batches()) {
                // what the broker's producer state and the log layer ask of a batch
                seen.append(batch.isValid()).append(batch.lastSequence()).append(batch.baseSequence())
                    .append(batch.isTransactional()).append(batch.hasProducerId()).append(batch.producerId())
                    .append(batch.producerEpoch()).append(batch.deleteHorizonMs()).append(batch.partitionLeaderEpoch())
                    .append(batch.nextOffset()).append(batch.isCompressed()).append(batch.countOrNull()).append(';');
                batch.ensureValid();
                var types = batch.timestampType().getDeclaringClass().getEnumConstants();
                for (Record r : batch) {
                    seen.append(r.keySize()).append(r.valueSize()).append(r.hasKey()).append(r.hasValue())
                        .append(r.isCompressed()).append(r.sizeInBytes());
                    for (byte magic = 0; magic <= 2; magic++) seen.append(r.hasMagic(magic));
                    for (var t : types) seen.append(r.hasTimestampType(t));
                    r.ensureValid();
                }
            }
            return seen.length();
        });
        step(steps, "skip key value", () -> {
            int n = 0;
            for (MutableRecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(data)).batches()) {
                batch.ensureValid();
                if (batch instanceof DefaultRecordBatch) {
                    try (CloseableIterator<Record> it = ((DefaultRecordBatch) batch).skipKeyValueIterator(buffers)) {
                        while (it.hasNext()) {
                            Record r = it.next();
                            r.offset();
                            r.timestamp();
                            n++;
                        }
                    }
                } else {
                    for (Record r : batch) {
                        r.ensureValid();
                        n++;
                    }
                }
            }
            return n;
        });
        return out;
    }

    interface Step {
        Object run() throws Throwable;
    }

    static void step(ObjectNode steps, String name, Step step) {
        try {
            steps.put(name, String.valueOf(step.run()));
        } catch (Throwable e) {
            steps.put(name, failure(e));
        }
    }

    static String failure(Throwable e) {
        if (e instanceof InvocationTargetException) e = e.getCause();
        return "!" + e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    /** The first public method of these names (releases rename them) that takes as many of
     * the arguments as it has parameters, given those. */
    static Object call(Object target, String[] names, Object... args) throws Throwable {
        for (String name : names) {
            for (int n = args.length; n >= 0; n--) {
                for (Method m : target.getClass().getMethods()) {
                    if (m.getName().equals(name) && m.getParameterCount() == n) {
                        Class<?>[] types = m.getParameterTypes();
                        Object[] given = new Object[n];
                        for (int i = 0; i < n; i++) {
                            Object a = args[i];
                            given[i] = types[i] == int.class && a instanceof Long ? (Object) (int) (long) (Long) a : a;
                        }
                        return m.invoke(target, given);
                    }
                }
            }
        }
        throw new NoSuchMethodException(String.join("|", names));
    }

    static String hex(ByteBuffer b) {
        if (b == null) return null;
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return HEX.formatHex(bytes);
    }
}
