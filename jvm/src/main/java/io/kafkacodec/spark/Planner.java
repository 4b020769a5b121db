package io.kafkacodec.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Python half of the reader (pipeline/planner.py): a process of this JVM's for its life,
 * asked in JSON lines. Kafka's rules (which offsets a read takes, where the broker moved a
 * segment, what damage is and how it is named) stay in Python; this JVM only decodes.
 */
final class Planner {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = LoggerFactory.getLogger(Planner.class);
    private static Planner shared;

    private final Process process;
    private final BufferedWriter in;
    private final BufferedReader out;

    private Planner(String python) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(python, "-m", "kafkacodec.pipeline.planner");
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new IOException("kafkacodec: cannot run " + python + " (the Python with kafkacodec installed: "
                + "set spark.kafkacodec.python): " + e.getMessage(), e);
        }
        in = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
        out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /**
     * The Python that has kafkacodec. On the driver: spark.kafkacodec.python
     * (kafkacodec.pipeline.jobs.session sets it to its own interpreter), else the driver's
     * Python as Spark names it. On an executor: the Python Spark runs its workers with there
     * (spark.pyspark.python, a packed environment's for a cluster).
     */
    static String python() {
        SparkEnv env = SparkEnv.get();
        SparkConf conf = env != null ? env.conf() : new SparkConf();
        boolean driver = env == null || "driver".equals(env.executorId());
        String[] keys = driver
            ? new String[] {"spark.kafkacodec.python", "spark.pyspark.driver.python", "spark.pyspark.python"}
            : new String[] {"spark.pyspark.python"};
        for (String key : keys) {
            if (conf.contains(key)) return conf.get(key);
        }
        String[] vars = driver ? new String[] {"PYSPARK_DRIVER_PYTHON", "PYSPARK_PYTHON"} : new String[] {"PYSPARK_PYTHON"};
        for (String var : vars) {
            String v = System.getenv(var);
            if (v != null && !v.isEmpty()) return v;
        }
        return "python3";
    }

    /**
     * One request's answer (its "error" thrown, its warnings logged). A planner that dies
     * (a signal: Python maps the files it reads, and a file a broker truncates under a
     * mapping kills its reader with SIGBUS) is started again and asked once more: every
     * request is one that can be asked again.
     */
    static synchronized JsonNode ask(String op, Map<String, String> options, ObjectNode more) {
        ObjectNode request = JSON.createObjectNode();
        request.put("op", op);
        ObjectNode opts = request.putObject("options");
        options.forEach(opts::put);
        if (more != null) request.setAll(more);
        String line;
        try {
            line = JSON.writeValueAsString(request);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        JsonNode answer;
        try {
            answer = once(line);
        } catch (Died e) {
            LOG.warn(e.getMessage() + "; starting it again");
            answer = once(line);
        }
        for (JsonNode w : answer.path("warnings")) LOG.warn(w.asText());
        if (answer.has("error")) throw new IllegalArgumentException(answer.get("error").asText());
        return answer;
    }

    /** The planner ended without answering. */
    private static final class Died extends IllegalStateException {
        Died(String message) { super(message); }
    }

    private static JsonNode once(String request) {
        try {
            if (shared == null || !shared.process.isAlive()) shared = new Planner(python());
            shared.in.write(request);
            shared.in.write('\n');
            shared.in.flush();
            String line = shared.out.readLine();
            if (line == null) throw new Died("kafkacodec: the Python planner (" + python()
                + " -m kafkacodec.pipeline.planner) ended without answering" + shared.how());
            return JSON.readTree(line);
        } catch (Died e) {
            shared = null;
            throw e;
        } catch (IOException e) {
            Planner dead = shared;
            shared = null;
            throw new Died("kafkacodec: the Python planner failed: " + e.getMessage() + (dead == null ? "" : dead.how()));
        }
    }

    /** How the process ended, when it has. */
    private String how() {
        try {
            if (process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
                int code = process.exitValue();
                return code > 128 ? " (killed by signal " + (code - 128) + ")" : " (exit code " + code + ")";
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "";
    }

    static File tempFile() throws IOException {
        return File.createTempFile("kafkacodec-rows-", ".arrow");  // SliceReader deletes it
    }
}
