/*
 * Jazzer's fuzz target over the schemas' Java output (the official Kaitai compiler's, with
 * the official runtime and KafkaCompression, as jvm/ builds it for the Spark format): a log
 * image read by io.kafkacodec.kaitai.KafkaLog. A refusal is what the output and its runtime
 * throw on purpose (a schema's `valid`, the codec's Failure, the end of the data, a negative
 * size the runtime refuses); anything else (a NullPointerException, an index out of
 * bounds, a class cast, a hang, memory) is a finding, which Jazzer minimizes and writes as
 * crash-<sha1>. Seeded with peers.mutate's cases (`make fuzz`, docs/fuzz-your-parser.md):
 *
 *   java -cp JAZZER:CLASSES:. com.code_intelligence.jazzer.Jazzer --target_class=JavaOutputFuzz \
 *        --instrumentation_includes='io.kafkacodec.**' -max_total_time=300 SEEDS_DIR
 *
 * As a program, `java JavaOutputFuzz DIR` reads every file of DIR and prints how many ended
 * in each way (a finding's stack printed, exit 1).
 */
import io.kafkacodec.kaitai.KafkaCompression;
import io.kafkacodec.kaitai.KafkaLog;
import io.kaitai.struct.ByteBufferKaitaiStream;
import io.kaitai.struct.KaitaiStream;
import java.nio.BufferUnderflowException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.TreeMap;

public class JavaOutputFuzz {
    public static void fuzzerTestOneInput(byte[] data) {
        try {
            new KafkaLog(new ByteBufferKaitaiStream(data));
        } catch (RuntimeException e) {
            if (!refusal(e)) throw e;
        }
    }

    /** Whether the output refused the bytes on purpose. */
    static boolean refusal(RuntimeException e) {
        return e instanceof KaitaiStream.KaitaiStructError
            || e instanceof KafkaCompression.Failure
            || e instanceof BufferUnderflowException  // the runtime's end of the data
            || (e instanceof IllegalArgumentException && String.valueOf(e.getMessage()).startsWith("Byte array size can't be negative"));
    }

    public static void main(String[] args) throws Exception {
        Map<String, Integer> seen = new TreeMap<>();
        int findings = 0;
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Paths.get(args[0]))) {
            for (Path p : dir) {
                try {
                    fuzzerTestOneInput(Files.readAllBytes(p));
                    seen.merge("read", 1, Integer::sum);
                } catch (Throwable e) {
                    seen.merge("finding: " + e.getClass().getName(), 1, Integer::sum);
                    if (findings++ == 0) {
                        System.out.println(p);
                        e.printStackTrace(System.out);
                    }
                }
            }
        }
        System.out.println(seen);
        System.exit(findings == 0 ? 0 : 1);
    }
}
