/* kafkacodec's test-support subset of the official Java runtime (see KaitaiStream.java). */
package io.kaitai.struct;

public class KaitaiStruct {
    protected KaitaiStream _io;

    public KaitaiStruct(KaitaiStream _io) {
        this._io = _io;
    }

    public KaitaiStream _io() { return _io; }
}
