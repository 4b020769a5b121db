package io.kafkacodec.kaitai;

import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;
import org.xerial.snappy.Snappy;

/**
 * The custom process of kafkacodec's schemas ({@code process: kafka_compression(codec, magic[, records])})
 * for the official compiler's Java output, with the libraries Kafka's own
 * CompressionType classes call: the JDK's inflater for gzip, snappy-java (xerial's stream
 * framing, as Kafka's SnappyInputStream reads it, or one raw block), lz4-java (Kafka's frame,
 * KafkaLZ4BlockInputStream: the header checksum of magic 0, KAFKA-3160, is not checked) and
 * zstd-jni. As runtime/compression.py decompresses: at most {@link #LIMIT} bytes out (a
 * larger output is an error, never an allocation), and damaged input is an error.
 */
public class KafkaCompression {
    /** runtime/compression.py DEFAULT_MAX_INFLATED: what one batch may inflate to. */
    public static final int LIMIT = 128 * 1024 * 1024;

    private static final byte[] XERIAL = {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    private static final int LZ4_MAGIC = 0x184D2204;
    private static final LZ4SafeDecompressor LZ4 = LZ4Factory.fastestInstance().safeDecompressor();
    private static final XXHash32 XXH = XXHashFactory.fastestInstance().hash32();

    private final int codec;
    private final int magic;
    /** How many records a v2 batch says its region holds; -1 when not said (a legacy wrapper). */
    private final long records;

    public KafkaCompression(long codec, long magic) {
        this(codec, magic, -1);
    }

    /** {@code process: kafka_compression(codec, magic, records)}: a v2 batch's records region. */
    public KafkaCompression(long codec, long magic, long records) {
        this.codec = (int) codec;
        this.magic = (int) magic;
        this.records = records;
    }

    /**
     * The codec's bytes decompressed; a KafkaCompression.Failure when they are not valid. Of
     * a region said to hold no record, Kafka reads the codec's head alone (checkHead) and
     * nothing comes out.
     */
    public byte[] decode(byte[] src) {
        try {
            if (records == 0) {
                checkHead(src);
                return new byte[0];
            }
            switch (codec) {
                case 0: return src;
                // Kafka's GzipCompression: an 8 KiB input buffer, which decides where the JDK
                // looks for a next member after one ends (GZIPInputStream.readTrailer)
                case 1: return drain(new GZIPInputStream(new ByteArrayInputStream(src), 8 * 1024), "gzip");
                case 2: return unsnappy(src);
                case 3: return unlz4(src);
                case 4:
                    if (magic < 2) throw new Failure("zstd needs message format 2 (magic 2)");
                    return drain(new ZstdInputStreamNoFinalizer(new ByteArrayInputStream(src)), "zstd");
                default: throw new Failure("unknown compression codec " + codec);
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof Failure) throw (Failure) e;
            throw new Failure("codec " + codec + " data does not decompress: " + e);
        }
    }

    /**
     * What Kafka reads of a compressed records region that holds no record
     * (kafkacodec.runtime.compression.check_head): DefaultRecordBatch's streaming iterator
     * opens the codec's stream, whose constructor reads the gzip member header
     * (GZIPInputStream), the LZ4 frame header (Lz4BlockInputStream), snappy-java's header or,
     * when the bytes do not start with it, the one raw block it decompresses whole
     * (SnappyInputStream); zstd-jni's reads nothing. Then no record is read.
     */
    private void checkHead(byte[] src) throws IOException {
        if (codec < 0 || codec > (magic < 2 ? 3 : 4)) throw new Failure("unknown compression codec " + codec);
        switch (codec) {
            case 1: new GZIPInputStream(new ByteArrayInputStream(src), 8 * 1024).close(); break;
            case 2: if (src.length < 16 || !xerial(src)) unsnappy(src); break;
            case 3: lz4Head(src); break;
            default: break;
        }
    }

    /** Data that does not decompress (or inflates past the limit). */
    public static class Failure extends RuntimeException {
        public Failure(String message) { super(message); }
    }

    private static byte[] drain(InputStream in, String name) throws IOException {
        try (in) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[64 * 1024];
            int n;
            while ((n = in.read(buf)) > 0) {
                if (out.size() + n > LIMIT) throw new Failure(name + " data inflates past the limit of " + LIMIT + " bytes");
                out.write(buf, 0, n);
            }
            return out.toByteArray();
        }
    }

    private static boolean xerial(byte[] src) {
        if (src.length < XERIAL.length) return false;
        for (int i = 0; i < XERIAL.length; i++) if (src[i] != XERIAL[i]) return false;
        return true;
    }

    private static int be32(byte[] b, int at) {
        return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
    }

    /** SnappyCompression.decompressionOutputSize: what Kafka asks of SnappyInputStream at a time. */
    private static final int SNAPPY_KAFKA_READ = 2 * 1024;
    private static final int SNAPPY_MAX_CHUNK = 512 * 1024 * 1024;  // SnappyInputStream's

    /**
     * snappy-java's SnappyInputStream as Kafka reads it (kafkacodec.runtime.compression._unsnappy
     * states the same rules): fewer than 16 bytes, or no magic, is one raw block; else chunks
     * (an int32 length, a raw block) until fewer than 4 bytes are left; a length that is the
     * magic's first 4 bytes starts a concatenated stream's header (version at least 1), or,
     * when the rest of the magic does not follow, is 16 bytes skipped: the end when the read
     * Kafka made (2 KiB of output at a time) had given nothing yet, else the stream goes on.
     * Every length is checked before anything is allocated for it.
     */
    private static byte[] unsnappy(byte[] src) throws IOException {
        if (src.length == 0) throw new Failure("snappy data is empty");
        if (src.length < 16 || !xerial(src)) return snappyBlock(src, 0, src.length, 0).toByteArray();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 16;  // magic, version, compatible version
        int readStart = 0;
        while (src.length - at >= 4) {
            int n = be32(src, at);
            at += 4;
            if (n == be32(XERIAL, 0)) {  // a concatenated stream's header
                if (src.length - at < 12) throw new Failure("snappy-java header cut short at byte " + (at - 4));
                boolean magic = be32(src, at) == be32(XERIAL, 4);
                int version = be32(src, at + 4);
                at += 12;
                if (!magic) {
                    if ((out.size() - readStart) % SNAPPY_KAFKA_READ == 0) break;  // -1: the end
                    readStart = out.size();
                    continue;
                }
                if (version < 1) throw new Failure("snappy-java stream of version " + version + " at byte " + (at - 16));
                continue;
            }
            if (n < 0 || n > SNAPPY_MAX_CHUNK) throw new Failure("snappy-java chunk at byte " + (at - 4) + " claims " + n + " bytes");
            if (n > src.length - at) throw new Failure("snappy-java chunk at byte " + (at - 4) + " claims " + n + " bytes, " + (src.length - at) + " left");
            snappyBlock(src, at, n, out.size()).writeTo(out);
            at += n;
        }
        return out.toByteArray();
    }

    private static ByteArrayOutputStream snappyBlock(byte[] src, int at, int n, int before) throws IOException {
        int size = Snappy.uncompressedLength(src, at, n);
        if (size < 0 || (long) before + size > LIMIT) throw new Failure("snappy data inflates past the limit of " + LIMIT + " bytes");
        byte[] out = new byte[size];
        int got = Snappy.uncompress(src, at, n, out, 0);
        if (got != size) throw new Failure("snappy block does not decompress");
        ByteArrayOutputStream o = new ByteArrayOutputStream(size);
        o.write(out, 0, size);
        return o;
    }

    private static int le32(byte[] b, int at) {
        return (b[at] & 0xff) | ((b[at + 1] & 0xff) << 8) | ((b[at + 2] & 0xff) << 16) | ((b[at + 3] & 0xff) << 24);
    }

    /** Lz4BlockInputStream.readHeader: where the frame's blocks start. */
    private int lz4Head(byte[] src) {
        int n = src.length;
        if (n < 6) throw new Failure("LZ4 frame header cut short");
        if (le32(src, 0) != LZ4_MAGIC) throw new Failure("not an LZ4 frame (bad magic number)");
        int flg = src[4] & 0xff;
        int bd = src[5] & 0xff;
        if ((flg & 3) != 0) throw new Failure("LZ4 frame descriptor: reserved bits must be 0");
        if ((flg & 0x20) == 0) throw new Failure("LZ4 frame descriptor: dependent blocks are not supported");
        if ((flg >> 6) != 1) throw new Failure("LZ4 frame version " + (flg >> 6) + " is not supported");
        if ((bd & 0x8f) != 0) throw new Failure("LZ4 frame descriptor: reserved block descriptor bits must be 0");
        if (((bd >> 4) & 7) < 4) throw new Failure("LZ4 frame descriptor: the block size must be 4 to 7");
        int at = 6;
        if ((flg & 0x08) != 0) {  // a content size, skipped
            if (n - at < 8) throw new Failure("LZ4 frame header cut short");
            at += 8;
        }
        if (n - at < 1) throw new Failure("LZ4 frame header cut short");
        if (magic != 0 && (src[at] & 0xff) != ((XXH.hash(src, 4, at - 4, 0) >> 8) & 0xff)) {
            throw new Failure("LZ4 frame descriptor corrupted (its checksum does not match)");
        }
        return at + 1;
    }

    /**
     * Kafka's Lz4BlockInputStream over one LZ4 frame (kafkacodec.runtime.compression._unlz4
     * states the same rules): FLG with no reserved bit, independent blocks, version 1; BD
     * with no reserved bit and a block size of 64 KiB to 4 MiB; the descriptor's checksum
     * but for magic 0 (KAFKA-3160); blocks to the end mark (a size of 0 whatever its top
     * bit), a block checksum checked, the content checksum not; a block of no bytes ends
     * the stream (Kafka's ChunkedBytesStream), and nothing after the end mark is read.
     */
    private byte[] unlz4(byte[] src) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int n = src.length;
        int at = lz4Head(src);
        int flg = src[4] & 0xff;
        int sizeId = (src[5] >> 4) & 7;
        int maxBlock = 1 << (2 * sizeId + 8);
        while (true) {
            if (n - at < 4) throw new Failure("LZ4 frame ends before its end mark");
            int word = le32(src, at);
            at += 4;
            int size = word & 0x7fffffff;
            if (size == 0) {  // the end mark
                if ((flg & 0x04) != 0 && n - at < 4) throw new Failure("LZ4 frame ends inside its content checksum");
                return out.toByteArray();
            }
            if (size > maxBlock) throw new Failure("LZ4 block of " + size + " bytes, past the frame's " + maxBlock);
            if (n - at < size) throw new Failure("LZ4 frame ends inside a block");
            boolean raw = (word & 0x80000000) != 0;
            int got;
            byte[] block = null;
            if (raw) {
                got = size;
            } else {
                block = new byte[maxBlock];
                try {
                    got = LZ4.decompress(src, at, size, block, 0, maxBlock);
                } catch (LZ4Exception e) {
                    throw new Failure("LZ4 block at byte " + at + " does not decompress: " + e.getMessage());
                }
            }
            int blockAt = at;
            at += size;
            if ((flg & 0x10) != 0) {  // a block checksum
                if (n - at < 4) throw new Failure("LZ4 frame ends inside a block checksum");
                if (XXH.hash(src, blockAt, size, 0) != le32(src, at)) throw new Failure("LZ4 block checksum mismatch at byte " + blockAt);
                at += 4;
            }
            if (got == 0) return out.toByteArray();  // a block of no bytes ends the stream
            if (out.size() + got > LIMIT) throw new Failure("lz4 data inflates past the limit of " + LIMIT + " bytes");
            if (raw) out.write(src, blockAt, size);
            else out.write(block, 0, got);
        }
    }
}
