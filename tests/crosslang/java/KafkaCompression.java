/*
 * The custom process of kafkacodec's schemas (`process: kafka_compression(codec, magic)`)
 * for the official compiler's Java output, as the cross-language tests plug it in: the
 * generated code calls `new KafkaCompression(codec, magic).decode(compressedBytes)` and
 * parses the result as the records (a v2 batch) or the inner message set (magic 0 and 1).
 *
 * Here: none, gzip (java.util.zip), snappy (xerial's stream format around raw blocks,
 * as Kafka writes it, or a raw block) and lz4 (Kafka's frame) are decoded with the JDK
 * alone; zstd calls the system's libzstd through JDK 17's incubating foreign-function API
 * (zstd-jni, what Kafka uses, is not in this machine's package registries): compile and
 * run with --add-modules jdk.incubator.foreign (and --enable-native-access=ALL-UNNAMED).
 * A user plugs in any decompressor the same way: a class of this name and shape on the
 * classpath, for example one calling Kafka's own zstd-jni, snappy-java and lz4-java.
 */
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.zip.GZIPInputStream;

public class KafkaCompression {
    private final int codec;
    private final int magic;

    public KafkaCompression(long codec, long magic) {
        this.codec = (int) codec;
        this.magic = (int) magic;
    }

    public byte[] decode(byte[] src) {
        switch (codec) {
            case 0: return src;
            case 1: return gunzip(src);
            case 2: return unsnappy(src);
            case 3: return unlz4(src);
            case 4:
                if (magic < 2) throw new IllegalArgumentException("zstd needs message format 2 (magic 2)");
                return Zstd.decompress(src);
            default: throw new IllegalArgumentException("unknown compression codec " + codec);
        }
    }

    private static byte[] gunzip(byte[] src) {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(src))) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // -- snappy
    private static final byte[] XERIAL = {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

    private static byte[] unsnappy(byte[] src) {
        boolean xerial = src.length >= 16;
        for (int i = 0; xerial && i < XERIAL.length; i++) xerial = src[i] == XERIAL[i];
        if (!xerial) return snappyBlock(src, 0, src.length);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 16; // magic, version, compatible version
        while (at < src.length) {
            if (src.length - at < 4) throw new IllegalStateException("snappy: a chunk length cut short");
            int n = be32(src, at);
            at += 4;
            if (n < 0 || n > src.length - at) throw new IllegalStateException("snappy: a chunk longer than the data");
            out.writeBytes(snappyBlock(src, at, at + n));
            at += n;
        }
        return out.toByteArray();
    }

    private static byte[] snappyBlock(byte[] src, int at, int end) {
        long len = 0;
        for (int shift = 0; ; shift += 7) {
            if (at >= end || shift > 28) throw new IllegalStateException("snappy: bad length");
            int b = src[at++] & 0xff;
            len |= (long) (b & 0x7f) << shift;
            if (b < 0x80) break;
        }
        if (len > Integer.MAX_VALUE - 8) throw new IllegalStateException("snappy: length too large");
        byte[] out = new byte[(int) len];
        int o = 0;
        while (at < end) {
            int tag = src[at++] & 0xff;
            int kind = tag & 3;
            if (kind == 0) {
                int n = tag >>> 2;
                if (n >= 60) {
                    int bytes = n - 59;
                    n = 0;
                    for (int i = 0; i < bytes; i++) n |= (src[at++] & 0xff) << (8 * i);
                }
                n += 1;
                if (n < 0 || n > end - at || n > out.length - o) throw new IllegalStateException("snappy: bad literal");
                System.arraycopy(src, at, out, o, n);
                at += n;
                o += n;
                continue;
            }
            int n, offset;
            if (kind == 1) {
                n = ((tag >>> 2) & 7) + 4;
                offset = ((tag >>> 5) << 8) | (src[at++] & 0xff);
            } else if (kind == 2) {
                n = (tag >>> 2) + 1;
                offset = (src[at] & 0xff) | (src[at + 1] & 0xff) << 8;
                at += 2;
            } else {
                n = (tag >>> 2) + 1;
                offset = (src[at] & 0xff) | (src[at + 1] & 0xff) << 8 | (src[at + 2] & 0xff) << 16 | (src[at + 3] & 0xff) << 24;
                at += 4;
            }
            if (offset <= 0 || offset > o || n > out.length - o) throw new IllegalStateException("snappy: bad copy");
            for (int i = 0; i < n; i++, o++) out[o] = out[o - offset];
        }
        if (o != out.length) throw new IllegalStateException("snappy: " + o + " bytes, the header says " + out.length);
        return out;
    }

    // -- lz4 (Kafka's frame: KafkaLZ4BlockInputStream)
    private byte[] unlz4(byte[] src) {
        if (src.length < 7 || le32(src, 0) != 0x184D2204) throw new IllegalStateException("lz4: not a frame");
        int flg = src[4] & 0xff;
        int at = 6 + ((flg & 0x08) != 0 ? 8 : 0) + ((flg & 0x01) != 0 ? 4 : 0) + 1; // FLG BD [size] [dict] HC
        boolean blockChecksum = (flg & 0x10) != 0;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (true) {
            if (src.length - at < 4) throw new IllegalStateException("lz4: a block size cut short");
            int size = le32(src, at);
            at += 4;
            if (size == 0) break;
            boolean raw = (size & 0x80000000) != 0;
            size &= 0x7fffffff;
            if (size > src.length - at) throw new IllegalStateException("lz4: a block longer than the data");
            if (raw) out.write(src, at, size);
            else lz4Block(src, at, at + size, out);
            at += size + (blockChecksum ? 4 : 0);
        }
        return out.toByteArray();
    }

    private static void lz4Block(byte[] src, int at, int end, ByteArrayOutputStream sink) {
        byte[] out = new byte[Math.max(64, (end - at) * 4)];
        int o = 0;
        while (at < end) {
            int token = src[at++] & 0xff;
            int lit = token >>> 4;
            if (lit == 15) for (int b = 255; b == 255; lit += b) b = src[at++] & 0xff;
            if (lit > end - at) throw new IllegalStateException("lz4: bad literal length");
            out = room(out, o, lit);
            System.arraycopy(src, at, out, o, lit);
            at += lit;
            o += lit;
            if (at >= end) break; // the last sequence has literals only
            int offset = (src[at] & 0xff) | (src[at + 1] & 0xff) << 8;
            at += 2;
            int n = token & 15;
            if (n == 15) for (int b = 255; b == 255; n += b) b = src[at++] & 0xff;
            n += 4;
            if (offset <= 0 || offset > o) throw new IllegalStateException("lz4: bad offset");
            out = room(out, o, n);
            for (int i = 0; i < n; i++, o++) out[o] = out[o - offset];
        }
        sink.write(out, 0, o);
    }

    private static byte[] room(byte[] out, int used, int more) {
        if (out.length - used >= more) return out;
        return java.util.Arrays.copyOf(out, Math.max(out.length * 2, used + more));
    }

    private static int be32(byte[] b, int at) {
        return (b[at] & 0xff) << 24 | (b[at + 1] & 0xff) << 16 | (b[at + 2] & 0xff) << 8 | (b[at + 3] & 0xff);
    }

    private static int le32(byte[] b, int at) {
        return (b[at] & 0xff) | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16 | (b[at + 3] & 0xff) << 24;
    }

    /** libzstd's one-shot ZSTD_decompress, through jdk.incubator.foreign (JDK 17). */
    static final class Zstd {
        private static final String[] PATHS = {
            "/usr/lib/x86_64-linux-gnu/libzstd.so.1", "/usr/lib/aarch64-linux-gnu/libzstd.so.1",
            "/usr/lib64/libzstd.so.1", "/usr/lib/libzstd.so.1", "/lib/x86_64-linux-gnu/libzstd.so.1",
        };
        private static final long MAX = 1L << 30;
        private static java.lang.invoke.MethodHandle decompress, isError;

        private static synchronized void load() {
            if (decompress != null) return;
            boolean loaded = false;
            for (String p : PATHS) {
                if (new java.io.File(p).exists()) {
                    System.load(p);
                    loaded = true;
                    break;
                }
            }
            if (!loaded) throw new UnsupportedOperationException("zstd: libzstd.so.1 not found");
            jdk.incubator.foreign.SymbolLookup lookup = jdk.incubator.foreign.SymbolLookup.loaderLookup();
            jdk.incubator.foreign.CLinker c = jdk.incubator.foreign.CLinker.getInstance();
            decompress = c.downcallHandle(lookup.lookup("ZSTD_decompress").get(),
                java.lang.invoke.MethodType.methodType(long.class, jdk.incubator.foreign.MemoryAddress.class, long.class,
                    jdk.incubator.foreign.MemoryAddress.class, long.class),
                jdk.incubator.foreign.FunctionDescriptor.of(jdk.incubator.foreign.CLinker.C_LONG,
                    jdk.incubator.foreign.CLinker.C_POINTER, jdk.incubator.foreign.CLinker.C_LONG,
                    jdk.incubator.foreign.CLinker.C_POINTER, jdk.incubator.foreign.CLinker.C_LONG));
            isError = c.downcallHandle(lookup.lookup("ZSTD_isError").get(),
                java.lang.invoke.MethodType.methodType(int.class, long.class),
                jdk.incubator.foreign.FunctionDescriptor.of(jdk.incubator.foreign.CLinker.C_INT,
                    jdk.incubator.foreign.CLinker.C_LONG));
        }

        /** Kafka's zstd frames carry no content size: the output buffer grows until it fits. */
        static byte[] decompress(byte[] src) {
            load();
            try (jdk.incubator.foreign.ResourceScope scope = jdk.incubator.foreign.ResourceScope.newConfinedScope()) {
                jdk.incubator.foreign.MemorySegment in = jdk.incubator.foreign.MemorySegment.allocateNative(Math.max(1, src.length), scope);
                in.copyFrom(jdk.incubator.foreign.MemorySegment.ofArray(src));
                for (long cap = Math.max(1 << 16, 8L * src.length); ; cap *= 2) {
                    try (jdk.incubator.foreign.ResourceScope inner = jdk.incubator.foreign.ResourceScope.newConfinedScope()) {
                        jdk.incubator.foreign.MemorySegment out = jdk.incubator.foreign.MemorySegment.allocateNative(cap, inner);
                        long n = (long) decompress.invokeExact(out.address(), cap, in.address(), (long) src.length);
                        if ((int) isError.invokeExact(n) == 0) return out.asSlice(0, n).toByteArray();
                        if (cap >= MAX) throw new IllegalStateException("zstd: cannot decompress (or more than 1 GiB)");
                    }
                }
            } catch (RuntimeException e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("zstd: " + e, e);
            }
        }
    }
}
