import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka's own Java client, driven by kafkacodec's tests (tests/kafka_broker.py): it writes
 * workloads to a real broker, and reads back what a consumer fetches and what the broker
 * answers, as JSON, for the tests to compare with what kafkacodec reads from the broker's
 * files.
 *
 * <pre>
 * create BOOTSTRAP TOPIC PARTITIONS [KEY=VALUE ...]   a topic with these configs
 * produce BOOTSTRAP SPEC.json                          batches as the spec lists them
 * consume BOOTSTRAP TOPIC ISOLATION OUT.jsonl          every record, one JSON object a line
 * offsets BOOTSTRAP TOPIC OUT.json [TIMESTAMP ...]     Admin.listOffsets' answers
 * commit BOOTSTRAP GROUP PROTOCOL TOPIC P=OFFSET ...   a consumer group's commits (classic or consumer)
 * delete-records BOOTSTRAP TOPIC P=OFFSET ...         Admin.deleteRecords
 * metadata-version LEVEL                              the MetadataVersion of a feature level
 * metadata-image FILE                                 the metadata image a metadata log file replays to
 * share BOOTSTRAP GROUP TOPIC COUNT OUT.jsonl           a share group's member acknowledges records
 * describe BOOTSTRAP TOPIC OUT.json                   each partition's leader, replicas and ISR
 * elect BOOTSTRAP TOPIC TYPE P ...                    Admin.electLeaders (PREFERRED or UNCLEAN)
 * move-dir BOOTSTRAP TOPIC P BROKER DIR               Admin.alterReplicaLogDirs (a -future replica)
 * reassign BOOTSTRAP TOPIC P=B,B,B ...                Admin.alterPartitionReassignments
 * delete-topic BOOTSTRAP TOPIC                        Admin.deleteTopics
 * broker-config BOOTSTRAP BROKER KEY=VALUE ...        a broker's dynamic configs set
 * </pre>
 * create takes replication.factor=N among its KEY=VALUE pairs (1 without it).
 */
public final class KafkacodecClient {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Base64.Encoder B64 = Base64.getEncoder();
    private static final Base64.Decoder UNB64 = Base64.getDecoder();

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "create" -> create(args);
            case "produce" -> produce(args[1], new File(args[2]));
            case "consume" -> consume(args[1], args[2], args[3], new File(args[4]));
            case "offsets" -> offsets(args);
            case "commit" -> commit(args);
            case "delete-records" -> deleteRecords(args);
            case "metadata-version" -> System.out.println(
                    org.apache.kafka.server.common.MetadataVersion.fromFeatureLevel(Short.parseShort(args[1])));
            case "metadata-image" -> metadataImage(args[1]);
            case "share" -> share(args);
            case "describe" -> describe(args);
            case "elect" -> elect(args);
            case "move-dir" -> moveDir(args);
            case "reassign" -> reassign(args);
            case "delete-topic" -> deleteTopic(args);
            case "broker-config" -> brokerConfig(args);
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    private static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(p);
    }

    private static void create(String[] args) throws Exception {
        Map<String, String> configs = new HashMap<>();
        short rf = 1;
        for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            if (kv[0].equals("replication.factor")) {
                rf = Short.parseShort(kv[1]);
            } else {
                configs.put(kv[0], kv[1]);
            }
        }
        try (Admin admin = admin(args[1])) {
            NewTopic topic = new NewTopic(args[2], Integer.parseInt(args[3]), rf).configs(configs);
            admin.createTopics(List.of(topic)).all().get(60, TimeUnit.SECONDS);
        }
    }

    private static byte[] bytes(Object v) {
        return v == null ? null : UNB64.decode((String) v);
    }

    /**
     * The spec: {"producers": [{"config": {...}, "transactional": bool, "transactions":
     * [{"commit": bool or null, "records": [...]}], "records": [...]}]}; a record is {"topic",
     * "partition", "timestamp" (or null), "key", "value" (base64 or null), "headers":
     * [[key, base64 or null]]}. Each producer's records are sent in order, flushed at its end.
     * A transaction whose commit is null is left open: its records flushed, the producer
     * closed at once (a graceful close would abort it), the transactions after it not begun.
     */
    @SuppressWarnings("unchecked")
    private static void produce(String bootstrap, File specFile) throws Exception {
        Map<String, Object> spec = JSON.readValue(specFile, Map.class);
        for (Map<String, Object> prod : (List<Map<String, Object>>) spec.get("producers")) {
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.putAll((Map<String, Object>) prod.getOrDefault("config", Map.of()));
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                if (prod.containsKey("transactions")) {
                    producer.initTransactions();
                    for (Map<String, Object> txn : (List<Map<String, Object>>) prod.get("transactions")) {
                        producer.beginTransaction();
                        send(producer, (List<Map<String, Object>>) txn.get("records"));
                        producer.flush();
                        if (txn.get("commit") == null) {
                            producer.close(Duration.ZERO);
                            break;
                        } else if (Boolean.TRUE.equals(txn.get("commit"))) {
                            producer.commitTransaction();
                        } else {
                            producer.abortTransaction();
                        }
                    }
                } else {
                    send(producer, (List<Map<String, Object>>) prod.get("records"));
                    producer.flush();
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static void send(KafkaProducer<byte[], byte[]> producer, List<Map<String, Object>> records)
            throws Exception {
        for (Map<String, Object> r : records) {
            RecordHeaders headers = new RecordHeaders();
            for (List<Object> h : (List<List<Object>>) r.getOrDefault("headers", List.of())) {
                headers.add((String) h.get(0), bytes(h.get(1)));
            }
            Number ts = (Number) r.get("timestamp");
            Number partition = (Number) r.get("partition");
            producer.send(new ProducerRecord<>((String) r.get("topic"),
                    partition == null ? null : partition.intValue(), ts == null ? null : ts.longValue(),
                    bytes(r.get("key")), bytes(r.get("value")), headers)).get();
        }
    }

    /**
     * The metadata image a KRaft metadata log file (or snapshot) replays to, through Kafka's
     * own classes (BatchFileReader, MetadataDelta, the image's MetadataNode tree), printed as
     * the metadata shell's `tree /image` prints it: a node's name and a colon, its children
     * or its value indented below. The judge for a release whose kafka-shell is not on Maven
     * Central (4.4.0), beside the shell for one whose is.
     */
    private static void metadataImage(String file) throws Exception {
        org.apache.kafka.image.MetadataDelta delta = new org.apache.kafka.image.MetadataDelta.Builder()
                .setImage(org.apache.kafka.image.MetadataImage.EMPTY).build();
        List<org.apache.kafka.common.protocol.ApiMessage> pending = null;
        try (org.apache.kafka.metadata.util.BatchFileReader reader =
                     new org.apache.kafka.metadata.util.BatchFileReader.Builder().setPath(file).build()) {
            while (reader.hasNext()) {
                org.apache.kafka.metadata.util.BatchFileReader.BatchAndType batch = reader.next();
                if (batch.isControl()) {
                    continue;
                }
                for (org.apache.kafka.server.common.ApiMessageAndVersion r : batch.batch().records()) {
                    // a metadata transaction (KIP-868) applies at its end, or never when
                    // aborted, as MetadataBatchLoader applies it
                    org.apache.kafka.common.protocol.ApiMessage m = r.message();
                    if (m instanceof org.apache.kafka.common.metadata.BeginTransactionRecord) {
                        pending = new ArrayList<>();
                    } else if (m instanceof org.apache.kafka.common.metadata.EndTransactionRecord) {
                        pending.forEach(delta::replay);
                        pending = null;
                    } else if (m instanceof org.apache.kafka.common.metadata.AbortTransactionRecord) {
                        pending = null;
                    } else if (pending != null) {
                        pending.add(m);
                    } else {
                        delta.replay(m);
                    }
                }
            }
        }
        org.apache.kafka.image.MetadataImage image = delta.apply(org.apache.kafka.image.MetadataProvenance.EMPTY);
        StringBuilder out = new StringBuilder();
        org.apache.kafka.image.node.printer.MetadataNodePrinter printer = new org.apache.kafka.image.node.printer.MetadataNodePrinter() {
            private int depth = 0;

            @Override
            public org.apache.kafka.image.node.printer.MetadataNodeRedactionCriteria redactionCriteria() {
                return new org.apache.kafka.image.node.printer.MetadataNodeRedactionCriteria() {
                    public boolean shouldRedactScram() { return false; }
                    public boolean shouldRedactDelegationToken() { return false; }
                    public boolean shouldRedactConfig(org.apache.kafka.common.config.ConfigResource.Type type, String key) {
                        return false;
                    }
                };
            }

            @Override
            public void enterNode(String name) {
                out.append("  ".repeat(depth)).append(name).append(":\n");
                depth++;
            }

            @Override
            public void leaveNode() {
                depth--;
            }

            @Override
            public void output(String text) {
                out.append("  ".repeat(depth)).append(text).append("\n");
            }
        };
        org.apache.kafka.image.node.MetadataNode root = new org.apache.kafka.image.node.MetadataImageNode(image);
        for (String name : new java.util.TreeSet<>(root.childNames())) {
            printTree(root.child(name), name, printer);
        }
        System.out.print(out);
    }

    private static void printTree(org.apache.kafka.image.node.MetadataNode node, String name,
                                  org.apache.kafka.image.node.printer.MetadataNodePrinter printer) {
        if (node == null) { // a name listed without a node (as the shell's tree, print nothing)
            return;
        }
        printer.enterNode(name);
        if (node.isDirectory()) {
            for (String child : new java.util.TreeSet<>(node.childNames())) {
                printTree(node.child(child), child, printer);
            }
        } else {
            node.print(printer);
        }
        printer.leaveNode();
    }

    /**
     * A share group (KIP-932) reading a topic from its start (the group's
     * share.auto.offset.reset set to earliest first): a KafkaShareConsumer acknowledges COUNT
     * records, every fifth released then every seventh rejected (so that the share-partition
     * state holds more than a start offset), commits and leaves. The acknowledged records'
     * partitions and offsets go to OUT, one JSON object a line.
     */
    private static void share(String[] args) throws Exception {
        String bootstrap = args[1], group = args[2], topic = args[3];
        int count = Integer.parseInt(args[4]);
        try (Admin admin = admin(bootstrap)) {
            org.apache.kafka.common.config.ConfigResource res =
                    new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(res, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                    new org.apache.kafka.clients.admin.ConfigEntry("share.auto.offset.reset", "earliest"),
                    org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get(60, TimeUnit.SECONDS);
        }
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put("share.acknowledgement.mode", "explicit");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<String> lines = new ArrayList<>();
        try (org.apache.kafka.clients.consumer.KafkaShareConsumer<byte[], byte[]> consumer =
                     new org.apache.kafka.clients.consumer.KafkaShareConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 90_000;
            int seen = 0;
            while (seen < count) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("share group " + group + ": " + seen + " of " + count + " records in 90 s");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    org.apache.kafka.clients.consumer.AcknowledgeType how = seen >= count ? org.apache.kafka.clients.consumer.AcknowledgeType.RELEASE
                            : r.offset() % 5 == 4 ? org.apache.kafka.clients.consumer.AcknowledgeType.RELEASE
                            : r.offset() % 7 == 6 ? org.apache.kafka.clients.consumer.AcknowledgeType.REJECT
                            : org.apache.kafka.clients.consumer.AcknowledgeType.ACCEPT;
                    consumer.acknowledge(r, how);
                    if (how == org.apache.kafka.clients.consumer.AcknowledgeType.ACCEPT) {
                        seen++;
                        lines.add("{\"partition\": " + r.partition() + ", \"offset\": " + r.offset() + "}");
                    }
                }
                consumer.commitSync();
            }
        }
        java.nio.file.Files.write(new File(args[5]).toPath(), (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /** Admin.deleteRecords: the log start offset of each partition named (P=OFFSET) moved up. */
    private static void deleteRecords(String[] args) throws Exception {
        Map<TopicPartition, RecordsToDelete> before = new HashMap<>();
        for (int i = 3; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            before.put(new TopicPartition(args[2], Integer.parseInt(kv[0])),
                    RecordsToDelete.beforeOffset(Long.parseLong(kv[1])));
        }
        try (Admin admin = admin(args[1])) {
            admin.deleteRecords(before).all().get(60, TimeUnit.SECONDS);
        }
    }

    private static List<TopicPartition> partitions(String bootstrap, String topic) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(60, TimeUnit.SECONDS).get(topic);
            List<TopicPartition> out = new ArrayList<>();
            d.partitions().forEach(p -> out.add(new TopicPartition(topic, p.partition())));
            return out;
        }
    }

    /** Every record of every partition of the topic, as a consumer with this isolation level fetches it. */
    private static void consume(String bootstrap, String topic, String isolation, File out) throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<TopicPartition> tps = partitions(bootstrap, topic);
        List<String> lines = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps); // the LSO for read_committed
            long deadline = System.currentTimeMillis() + 60_000;
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("records still missing after 60 s");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    Map<String, Object> o = new LinkedHashMap<>();
                    o.put("partition", r.partition());
                    o.put("offset", r.offset());
                    o.put("timestamp", r.timestamp());
                    o.put("timestamp_type", r.timestampType().name);
                    o.put("key", r.key() == null ? null : B64.encodeToString(r.key()));
                    o.put("value", r.value() == null ? null : B64.encodeToString(r.value()));
                    List<List<Object>> hs = new ArrayList<>();
                    for (Header h : r.headers()) {
                        hs.add(java.util.Arrays.asList(h.key(), h.value() == null ? null : B64.encodeToString(h.value())));
                    }
                    o.put("headers", hs);
                    o.put("leader_epoch", r.leaderEpoch().orElse(-1));
                    lines.add(JSON.writeValueAsString(o));
                }
            }
        }
        java.nio.file.Files.write(out.toPath(), (String.join("\n", lines) + (lines.isEmpty() ? "" : "\n"))
                .getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Offsets committed for a group by a member of the given group protocol (classic: the
     * group coordinator's GroupMetadataManager records; consumer: KIP-848's), after it joined
     * with a subscription to the topic.
     */
    private static void commit(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, args[2]);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, args[3]);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        String topic = args[4];
        Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> offsets = new HashMap<>();
        for (int i = 5; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            offsets.put(new TopicPartition(topic, Integer.parseInt(kv[0])),
                    new org.apache.kafka.clients.consumer.OffsetAndMetadata(Long.parseLong(kv[1]), "kafkacodec"));
        }
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 60_000;
            while (consumer.assignment().isEmpty()) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("no assignment after 60 s");
                }
                consumer.poll(Duration.ofMillis(200));
            }
            consumer.commitSync(offsets);
        }
    }

    /**
     * Admin.listOffsets for each partition: latest, earliest, max timestamp, earliest local,
     * latest tiered, and each timestamp given.
     */
    private static void offsets(String[] args) throws Exception {
        String bootstrap = args[1];
        String topic = args[2];
        Map<String, OffsetSpec> specs = new LinkedHashMap<>();
        specs.put("latest", OffsetSpec.latest());
        specs.put("earliest", OffsetSpec.earliest());
        specs.put("max_timestamp", OffsetSpec.maxTimestamp());
        specs.put("earliest_local", OffsetSpec.earliestLocal());
        specs.put("latest_tiered", OffsetSpec.latestTiered());
        for (int i = 4; i < args.length; i++) {
            specs.put(args[i], OffsetSpec.forTimestamp(Long.parseLong(args[i])));
        }
        List<TopicPartition> tps = partitions(bootstrap, topic);
        Map<String, Object> out = new LinkedHashMap<>();
        try (Admin admin = admin(bootstrap)) {
            for (TopicPartition tp : tps) {
                Map<String, Object> answers = new LinkedHashMap<>();
                for (Map.Entry<String, OffsetSpec> e : specs.entrySet()) {
                    ListOffsetsResult.ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, e.getValue()))
                            .partitionResult(tp).get(60, TimeUnit.SECONDS);
                    Map<String, Object> a = new LinkedHashMap<>();
                    a.put("offset", info.offset());
                    a.put("timestamp", info.timestamp());
                    a.put("leader_epoch", info.leaderEpoch().orElse(-1));
                    answers.put(e.getKey(), a);
                }
                out.put(Integer.toString(tp.partition()), answers);
            }
        }
        JSON.writerWithDefaultPrettyPrinter().writeValue(new File(args[3]), out);
    }

    /** Each partition's leader (-1: none), replicas and ISR, as Admin.describeTopics gives them. */
    private static void describe(String[] args) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        try (Admin admin = admin(args[1])) {
            TopicDescription d = admin.describeTopics(List.of(args[2])).allTopicNames().get(60, TimeUnit.SECONDS).get(args[2]);
            for (org.apache.kafka.common.TopicPartitionInfo p : d.partitions()) {
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("leader", p.leader() == null ? -1 : p.leader().id());
                o.put("replicas", p.replicas().stream().map(n -> n.id()).toList());
                o.put("isr", p.isr().stream().map(n -> n.id()).toList());
                out.put(Integer.toString(p.partition()), o);
            }
        }
        JSON.writerWithDefaultPrettyPrinter().writeValue(new File(args[3]), out);
    }

    /** Admin.electLeaders of TYPE (PREFERRED, UNCLEAN) for the partitions named. */
    private static void elect(String[] args) throws Exception {
        java.util.Set<TopicPartition> tps = new java.util.HashSet<>();
        for (int i = 4; i < args.length; i++) {
            tps.add(new TopicPartition(args[2], Integer.parseInt(args[i])));
        }
        try (Admin admin = admin(args[1])) {
            Map<TopicPartition, java.util.Optional<Throwable>> res = admin.electLeaders(
                    org.apache.kafka.common.ElectionType.valueOf(args[3]), tps).partitions().get(60, TimeUnit.SECONDS);
            for (Map.Entry<TopicPartition, java.util.Optional<Throwable>> e : res.entrySet()) {
                if (e.getValue().isPresent()
                        && !(e.getValue().get() instanceof org.apache.kafka.common.errors.ElectionNotNeededException)) {
                    throw new IllegalStateException(e.getKey() + ": " + e.getValue().get());
                }
            }
        }
    }

    /** Admin.alterReplicaLogDirs: the replica of TOPIC-P on BROKER moved to DIR (a -future
     * directory there while it copies). */
    private static void moveDir(String[] args) throws Exception {
        try (Admin admin = admin(args[1])) {
            admin.alterReplicaLogDirs(Map.of(new org.apache.kafka.common.TopicPartitionReplica(args[2],
                    Integer.parseInt(args[3]), Integer.parseInt(args[4])), args[5])).all().get(60, TimeUnit.SECONDS);
        }
    }

    /** Admin.alterPartitionReassignments: each partition named (P=B,B,B) to these brokers. */
    private static void reassign(String[] args) throws Exception {
        Map<TopicPartition, java.util.Optional<org.apache.kafka.clients.admin.NewPartitionReassignment>> moves = new HashMap<>();
        for (int i = 3; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            List<Integer> to = new ArrayList<>();
            for (String b : kv[1].split(",")) {
                to.add(Integer.parseInt(b));
            }
            moves.put(new TopicPartition(args[2], Integer.parseInt(kv[0])),
                    java.util.Optional.of(new org.apache.kafka.clients.admin.NewPartitionReassignment(to)));
        }
        try (Admin admin = admin(args[1])) {
            admin.alterPartitionReassignments(moves).all().get(60, TimeUnit.SECONDS);
        }
    }

    /** Admin.deleteTopics. */
    private static void deleteTopic(String[] args) throws Exception {
        try (Admin admin = admin(args[1])) {
            admin.deleteTopics(List.of(args[2])).all().get(60, TimeUnit.SECONDS);
        }
    }

    /** Admin.incrementalAlterConfigs of a broker's dynamic configs (KEY=VALUE, SET). */
    private static void brokerConfig(String[] args) throws Exception {
        List<org.apache.kafka.clients.admin.AlterConfigOp> ops = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            ops.add(new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry(kv[0], kv[1]),
                    org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET));
        }
        org.apache.kafka.common.config.ConfigResource broker = new org.apache.kafka.common.config.ConfigResource(
                org.apache.kafka.common.config.ConfigResource.Type.BROKER, args[2]);
        try (Admin admin = admin(args[1])) {
            admin.incrementalAlterConfigs(Map.of(broker, ops)).all().get(60, TimeUnit.SECONDS);
        }
    }
}
