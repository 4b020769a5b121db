/*
 * The branches of Kafka's record-reading classes that a JaCoCo run reached (peers/coverage.py):
 * the classes of kafka-clients under the given package prefixes analysed against the agent's
 * execution data, one JSON line per method:
 *
 *   {"class": "org/apache/kafka/common/record/DefaultRecordBatch", "source": "DefaultRecordBatch.java",
 *    "method": "ensureValid", "desc": "()V", "first_line": L, "branches": N, "covered": C,
 *    "missed": [[LINE, MISSED, TOTAL], ...]}
 *
 *   java -cp JACOCO_CLASSPATH:. KafkaBranches EXEC_FILE KAFKA_CLIENTS_JAR PREFIX...
 */
import java.io.File;
import java.io.InputStream;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.CoverageBuilder;
import org.jacoco.core.analysis.IClassCoverage;
import org.jacoco.core.analysis.ICounter;
import org.jacoco.core.analysis.ILine;
import org.jacoco.core.analysis.IMethodCoverage;
import org.jacoco.core.tools.ExecFileLoader;

public class KafkaBranches {
    public static void main(String[] args) throws Exception {
        ExecFileLoader loader = new ExecFileLoader();
        loader.load(new File(args[0]));
        CoverageBuilder builder = new CoverageBuilder();
        Analyzer analyzer = new Analyzer(loader.getExecutionDataStore(), builder);
        try (JarFile jar = new JarFile(args[1])) {
            for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                JarEntry entry = e.nextElement();
                String name = entry.getName();
                if (!name.endsWith(".class")) continue;
                boolean wanted = false;
                for (int i = 2; i < args.length; i++) {
                    String prefix = args[i];
                    // the package's own classes, not those of its sub-packages
                    wanted |= name.startsWith(prefix) && name.indexOf('/', prefix.length()) < 0;
                }
                if (!wanted) continue;
                try (InputStream in = jar.getInputStream(entry)) {
                    analyzer.analyzeClass(in, name);
                }
            }
        }
        StringBuilder out = new StringBuilder();
        for (IClassCoverage c : builder.getClasses()) {
            for (IMethodCoverage m : c.getMethods()) {
                ICounter b = m.getBranchCounter();
                out.append("{\"class\": \"").append(c.getName()).append("\", \"source\": \"")
                   .append(c.getSourceFileName()).append("\", \"method\": \"").append(m.getName())
                   .append("\", \"desc\": \"").append(m.getDesc()).append("\", \"first_line\": ")
                   .append(m.getFirstLine()).append(", \"branches\": ").append(b.getTotalCount())
                   .append(", \"covered\": ").append(b.getCoveredCount()).append(", \"missed\": [");
                String sep = "";
                for (int line = m.getFirstLine(); line > 0 && line <= m.getLastLine(); line++) {
                    ICounter lb = m.getLine(line).getBranchCounter();
                    if (lb.getMissedCount() > 0) {
                        out.append(sep).append('[').append(line).append(", ").append(lb.getMissedCount())
                           .append(", ").append(lb.getTotalCount()).append(']');
                        sep = ", ";
                    }
                }
                out.append("]}\n");
            }
        }
        System.out.print(out);
    }
}
