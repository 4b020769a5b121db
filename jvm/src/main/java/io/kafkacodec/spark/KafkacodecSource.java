package io.kafkacodec.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.core.JsonProcessingException;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code kafkacodec} format on the JVM: the same source as the Python data source of that
 * name (pipeline/source.py), with the records decoded here. Spark takes a JVM source before a
 * Python one of the same name (DataSource.lookupDataSource), so with this jar on the
 * classpath {@code spark.read.format("kafkacodec")} comes here; the Python source stays
 * registered under the name and this one hands it what it does not do itself: streams
 * (spark.readStream), and any slice it cannot read as regular bytes (Planner, SliceReader).
 * The options, the schema and the plan are Python's (pipeline/planner.py).
 */
public final class KafkacodecSource implements TableProvider, DataSourceRegister {
    static final String NAME = "kafkacodec";
    /** The Python data source of the records format (pipeline/source.py PythonRecordsDataSource). */
    static final String PYTHON = "kafkacodec_python";

    @Override
    public String shortName() {
        return NAME;
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return StructType.fromDDL(Planner.ask("describe", options.asCaseSensitiveMap(), null).get("schema").asText());
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new RecordsTable(schema, partitioning, new HashMap<>(properties));
    }

    static final class RecordsTable implements SupportsRead {
        private final StructType schema;
        private final Transform[] partitioning;
        private final HashMap<String, String> properties;

        RecordsTable(StructType schema, Transform[] partitioning, HashMap<String, String> properties) {
            this.schema = schema;
            this.partitioning = partitioning;
            this.properties = properties;
        }

        @Override public String name() { return NAME; }
        @Override public StructType schema() { return schema; }

        @Override
        public Set<TableCapability> capabilities() {
            return EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ);
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            return () -> new RecordsScan(this, options);
        }

        /** The Python source's table of the same read (streams are Python's: stream.py). */
        Table python() {
            PythonDataSourceV2 source = new PythonDataSourceV2();
            source.setShortName(PYTHON);
            return source.getTable(schema, partitioning, properties);
        }
    }

    static final class RecordsScan implements Scan {
        private final RecordsTable table;
        private final CaseInsensitiveStringMap options;

        RecordsScan(RecordsTable table, CaseInsensitiveStringMap options) {
            this.table = table;
            this.options = options;
        }

        @Override public StructType readSchema() { return table.schema; }
        @Override public String description() { return "kafkacodec (JVM reader)"; }

        @Override
        public CustomMetric[] supportedCustomMetrics() {
            return new CustomMetric[] {new SlicesReadByPython()};
        }

        @Override
        public Batch toBatch() {
            return new RecordsBatch(table.schema, new HashMap<>(options.asCaseSensitiveMap()));
        }

        @Override
        public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
            return ((SupportsRead) table.python()).newScanBuilder(options).build().toMicroBatchStream(checkpointLocation);
        }
    }

    static final class RecordsBatch implements Batch {
        private final StructType schema;
        private final HashMap<String, String> options;
        private InputPartition[] planned;
        private ReadSettings settings;

        RecordsBatch(StructType schema, HashMap<String, String> options) {
            this.schema = schema;
            this.options = options;
        }

        @Override
        public synchronized InputPartition[] planInputPartitions() {
            if (planned == null) {
                JsonNode answer = Planner.ask("plan", options, null);
                JsonNode slices = answer.get("slices");
                planned = new InputPartition[slices.size()];
                try {
                    for (int i = 0; i < slices.size(); i++) planned[i] = new Slice(slices.get(i));
                } catch (JsonProcessingException e) {
                    throw new IllegalStateException(e);
                }
                settings = new ReadSettings(answer.get("read"));
            }
            return planned;
        }

        @Override
        public PartitionReaderFactory createReaderFactory() {
            planInputPartitions();
            return new Factory(schema, options, settings);
        }
    }

    /** Slices this JVM handed to Python (SliceReader): an object store's or a tiered
     * segment, damage, a segment the broker moved since planning. In the Spark UI, and in the
     * tests, which see that regular data never goes there. */
    public static final class SlicesReadByPython extends CustomSumMetric {
        static final String NAME = "slicesReadByPython";

        @Override public String name() { return NAME; }
        @Override public String description() { return "slices read by Python"; }
    }

    /** What the reader keeps of each record, as the Python planner says (Options). */
    static final class ReadSettings implements java.io.Serializable {
        final boolean verifyCrc;
        final boolean includeControl;

        ReadSettings(JsonNode read) {
            verifyCrc = read.get("verify_crc").asBoolean();
            includeControl = read.get("include_control").asBoolean();
        }
    }

    static final class Factory implements PartitionReaderFactory {
        private final StructType schema;
        private final HashMap<String, String> options;
        private final ReadSettings settings;

        Factory(StructType schema, HashMap<String, String> options, ReadSettings settings) {
            this.schema = schema;
            this.options = options;
            this.settings = settings;
        }

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            return new SliceReader((Slice) partition, schema, options, settings);
        }
    }
}
