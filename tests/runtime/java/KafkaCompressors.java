// The compressors Kafka 3.8's org.apache.kafka.common.compress classes call, each as Kafka
// calls it, for tests/runtime/test_java_compressors.py: the JDK's GZIPOutputStream with
// Kafka's level and buffer sizes (GzipCompression, GzipOutputStream), snappy-java's
// SnappyOutputStream (SnappyCompression), and lz4-java's block compressors as
// Lz4BlockOutputStream picks them (the fast one at the default level 9, the HC one at any
// other). Reads lines "codec level input output" on stdin; writes each output file: the
// whole stream for gzip and snappy, each 64 KiB block's compressed bytes for lz4 (an int32
// big-endian length, then the bytes: the frame around them is Kafka's own code).
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import org.xerial.snappy.SnappyOutputStream;

public class KafkaCompressors {
    /** Kafka's GzipOutputStream: the JDK's, its Deflater set to Kafka's level. */
    static final class LevelledGzip extends GZIPOutputStream {
        LevelledGzip(OutputStream out, int size, int level) throws IOException {
            super(out, size);
            def.setLevel(level);
        }
    }

    static final int LZ4_BLOCK = 64 * 1024;
    static final int LZ4_DEFAULT_LEVEL = 9;

    public static void main(String[] args) throws Exception {
        LZ4Factory lz4 = LZ4Factory.fastestInstance();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ");
            int level = Integer.parseInt(f[1]);
            byte[] data = Files.readAllBytes(Path.of(f[2]));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            switch (f[0]) {
                case "gzip":
                    // GzipCompression.wrapForOutput: 8 KiB deflate buffer behind 16 KiB of input buffer
                    try (OutputStream o = new BufferedOutputStream(new LevelledGzip(out, 8 * 1024, level), 16 * 1024)) {
                        writeInPieces(o, data);
                    }
                    break;
                case "snappy":
                    try (OutputStream o = new SnappyOutputStream(out)) {
                        writeInPieces(o, data);
                    }
                    break;
                case "lz4": {
                    LZ4Compressor c = level == LZ4_DEFAULT_LEVEL ? lz4.fastCompressor() : lz4.highCompressor(level);
                    byte[] block = new byte[c.maxCompressedLength(LZ4_BLOCK)];
                    DataOutputStream o = new DataOutputStream(out);
                    for (int at = 0; at < data.length; at += LZ4_BLOCK) {
                        int n = Math.min(LZ4_BLOCK, data.length - at);
                        int len = c.compress(data, at, n, block, 0);
                        o.writeInt(len);
                        o.write(block, 0, len);
                    }
                    o.flush();
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown codec " + f[0]);
            }
            Files.write(Path.of(f[3]), out.toByteArray());
        }
        System.out.println("lz4-java: " + lz4);
    }

    /** As a producer's appends reach the stream: records of a few hundred bytes at a time. */
    static void writeInPieces(OutputStream o, byte[] data) throws IOException {
        for (int at = 0; at < data.length; at += 300) {
            o.write(data, at, Math.min(300, data.length - at));
        }
    }
}
