/* kafkacodec's test-support subset of the official Java runtime (see KaitaiStream.java):
 * a stream over a byte array or a whole file, through a java.nio.ByteBuffer; reading past
 * the end throws java.nio.BufferUnderflowException, as the official one does. */
package io.kaitai.struct;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Paths;

public class ByteBufferKaitaiStream extends KaitaiStream {
    private final ByteBuffer bb;

    public ByteBufferKaitaiStream(byte[] arr) {
        this(ByteBuffer.wrap(arr));
    }

    public ByteBufferKaitaiStream(String fileName) {
        this(read(fileName));
    }

    public ByteBufferKaitaiStream(ByteBuffer buffer) {
        this.bb = buffer;
    }

    private static byte[] read(String fileName) {
        try {
            return Files.readAllBytes(Paths.get(fileName));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override public boolean isEof() { return !bb.hasRemaining(); }
    @Override public void seek(int newPos) { bb.position(newPos); }

    @Override
    public void seek(long newPos) {
        if (newPos > Integer.MAX_VALUE) {
            throw new RuntimeException("Java ByteBuffer can't be seeked past Integer.MAX_VALUE");
        }
        bb.position((int) newPos);
    }

    @Override public int pos() { return bb.position(); }
    @Override public long size() { return bb.limit(); }

    private ByteBuffer be() { return bb.order(ByteOrder.BIG_ENDIAN); }
    private ByteBuffer le() { return bb.order(ByteOrder.LITTLE_ENDIAN); }

    @Override public byte readS1() { return bb.get(); }
    @Override public short readS2be() { return be().getShort(); }
    @Override public int readS4be() { return be().getInt(); }
    @Override public long readS8be() { return be().getLong(); }
    @Override public short readS2le() { return le().getShort(); }
    @Override public int readS4le() { return le().getInt(); }
    @Override public long readS8le() { return le().getLong(); }
    @Override public int readU1() { return bb.get() & 0xff; }
    @Override public int readU2be() { return be().getShort() & 0xffff; }
    @Override public long readU4be() { return be().getInt() & 0xffffffffL; }
    @Override public int readU2le() { return le().getShort() & 0xffff; }
    @Override public long readU4le() { return le().getInt() & 0xffffffffL; }
    @Override public float readF4be() { return be().getFloat(); }
    @Override public double readF8be() { return be().getDouble(); }
    @Override public float readF4le() { return le().getFloat(); }
    @Override public double readF8le() { return le().getDouble(); }

    @Override
    protected byte[] readBytesNotAligned(long n) {
        byte[] buf = new byte[toByteArrayLength(n)];
        bb.get(buf);
        return buf;
    }

    @Override
    public byte[] readBytesFull() {
        byte[] buf = new byte[bb.remaining()];
        bb.get(buf);
        return buf;
    }

    @Override
    public KaitaiStream substream(long n) {
        int len = toByteArrayLength(n);
        if (len > bb.remaining()) {
            throw new java.nio.BufferUnderflowException();
        }
        ByteBuffer sub = bb.slice();
        sub.limit(len);
        bb.position(bb.position() + len);
        return new ByteBufferKaitaiStream(sub);
    }
}
