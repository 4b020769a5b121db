/*
 * kafkacodec's test-support Kaitai Struct runtime for Java: the part of the official
 * runtime's API (io.kaitai.struct, kaitai-io/kaitai_struct_java_runtime, version 0.11)
 * that the official compiler's Java output of kafkacodec's schemas calls, written for the
 * cross-language tests because the official runtime is not in this machine's package
 * registries. Same names, same signatures, same semantics: big- and little-endian reads,
 * u8 as a long with the same bits, a read past the end throws, substreams have their own
 * positions, validation errors carry the stream position and the schema path.
 *
 * A user compiles the generated code against the official runtime (Maven:
 * io.kaitai:kaitai-struct-runtime); nothing here is shipped.
 */
package io.kaitai.struct;

import java.io.Closeable;
import java.io.IOException;

public abstract class KaitaiStream implements Closeable {
    @Override
    public void close() throws IOException {}

    public abstract boolean isEof();
    public abstract void seek(int newPos);
    public abstract void seek(long newPos);
    public abstract int pos();
    public abstract long size();

    public abstract byte readS1();
    public abstract short readS2be();
    public abstract int readS4be();
    public abstract long readS8be();
    public abstract short readS2le();
    public abstract int readS4le();
    public abstract long readS8le();
    public abstract int readU1();
    public abstract int readU2be();
    public abstract long readU4be();
    public long readU8be() { return readS8be(); }
    public abstract int readU2le();
    public abstract long readU4le();
    public long readU8le() { return readS8le(); }
    public abstract float readF4be();
    public abstract double readF8be();
    public abstract float readF4le();
    public abstract double readF8le();

    public byte[] readBytes(long n) { return readBytesNotAligned(n); }
    protected abstract byte[] readBytesNotAligned(long n);
    public abstract byte[] readBytesFull();

    /** The next n bytes as a stream of their own (positions from 0); this one moves past them. */
    public abstract KaitaiStream substream(long n);

    protected int toByteArrayLength(long n) {
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                "Java byte arrays can be indexed only up to 31 bits, but " + n + " size was requested");
        }
        if (n < 0) {
            throw new IllegalArgumentException("Byte array size can't be negative, but " + n + " size was requested");
        }
        return (int) n;
    }

    /** Kaitai's %: the result has the divisor's sign (0 <= r < b for b > 0). */
    public static int mod(int a, int b) {
        if (b <= 0) throw new ArithmeticException("mod divisor <= 0");
        int r = a % b;
        return r < 0 ? r + b : r;
    }

    public static long mod(long a, long b) {
        if (b <= 0) throw new ArithmeticException("mod divisor <= 0");
        long r = a % b;
        return r < 0 ? r + b : r;
    }

    public static int byteArrayCompare(byte[] a, byte[] b) {
        if (a == b) return 0;
        int n = Math.min(a.length, b.length);
        for (int i = 0; i < n; i++) {
            int c = (a[i] & 0xff) - (b[i] & 0xff);
            if (c != 0) return c;
        }
        return a.length - b.length;
    }

    static String byteArrayToHex(byte[] arr) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < arr.length; i++) {
            if (i > 0) sb.append(' ');
            sb.append(String.format("%02x", arr[i]));
        }
        return sb.append(']').toString();
    }

    public static class KaitaiStructError extends RuntimeException {
        protected String srcPath;

        public KaitaiStructError(String msg, String srcPath) {
            super(srcPath + ": " + msg);
            this.srcPath = srcPath;
        }
    }

    public static class ValidationFailedError extends KaitaiStructError {
        protected KaitaiStream io;

        public ValidationFailedError(String msg, KaitaiStream io, String srcPath) {
            super((io != null ? "at pos " + io.pos() + ": " : "") + "validation failed: " + msg, srcPath);
            this.io = io;
        }
    }

    public static class ValidationNotEqualError extends ValidationFailedError {
        public ValidationNotEqualError(byte[] expected, byte[] actual, KaitaiStream io, String srcPath) {
            super("not equal, expected " + byteArrayToHex(expected) + ", but got " + byteArrayToHex(actual), io, srcPath);
        }

        public ValidationNotEqualError(Object expected, Object actual, KaitaiStream io, String srcPath) {
            super("not equal, expected " + expected + ", but got " + actual, io, srcPath);
        }
    }

    public static class ValidationLessThanError extends ValidationFailedError {
        public ValidationLessThanError(Object min, Object actual, KaitaiStream io, String srcPath) {
            super("not in range, min " + min + ", but got " + actual, io, srcPath);
        }
    }

    public static class ValidationGreaterThanError extends ValidationFailedError {
        public ValidationGreaterThanError(Object max, Object actual, KaitaiStream io, String srcPath) {
            super("not in range, max " + max + ", but got " + actual, io, srcPath);
        }
    }

    public static class ValidationNotAnyOfError extends ValidationFailedError {
        public ValidationNotAnyOfError(Object actual, KaitaiStream io, String srcPath) {
            super("not any of the list, got " + actual, io, srcPath);
        }
    }

    public static class ValidationNotInEnumError extends ValidationFailedError {
        public ValidationNotInEnumError(Object actual, KaitaiStream io, String srcPath) {
            super("not in the enum, got " + actual, io, srcPath);
        }
    }

    public static class ValidationExprError extends ValidationFailedError {
        public ValidationExprError(Object actual, KaitaiStream io, String srcPath) {
            super("not matching the expression, got " + actual, io, srcPath);
        }
    }
}
