/*
 * Kafka's DumpLogSegments (kafka-dump-log) of one release, run many times in one JVM
 * (tests/kafka/test_kafka_dump_releases.py): each line of standard input is one run's
 * arguments, separated by tabs. Each run's output is framed by a line "\u0000RUN n" before
 * it and "\u0000END n STATUS" after it, STATUS "ok" or the exception that ended the run
 * (as `kafka-dump-log` would print it on stderr and exit 1).
 *
 *   java -cp TOOLS_CLASSPATH:. DumpMany kafka.tools.DumpLogSegments < runs
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

public class DumpMany {
    public static void main(String[] args) throws Exception {
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int n = 0;
        for (String line; (line = in.readLine()) != null; n++) {
            System.out.println("\u0000RUN " + n);
            System.out.flush();
            String status = "ok";
            try {
                main.invoke(null, (Object) line.split("\t"));
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                status = cause.toString().replace('\n', ' ');  // (as the JVM prints an uncaught one)
            }
            System.out.flush();
            System.err.flush();
            System.out.println("\u0000END " + n + " " + status);
            System.out.flush();
        }
    }
}
