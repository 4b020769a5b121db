// kafkacodec's test-support Kaitai Struct runtime for C++ (the cpp_stl target): the part
// of the official runtime's API (kaitai-io/kaitai_struct_cpp_stl_runtime, version 0.11)
// that the official compiler's C++ output of kafkacodec's schemas calls, written for the
// cross-language tests because the official runtime is not in this machine's package
// registries. Same names and semantics: big-endian reads, reading past the end throws,
// validation errors carry the stream position and the schema path. A user builds the
// generated code against the official runtime; nothing here is shipped.
#ifndef KAITAI_STRUCT_H
#define KAITAI_STRUCT_H

#include <kaitai/kaitaistream.h>

#define KAITAI_STRUCT_VERSION 11000L

namespace kaitai {

class kstruct {
public:
    kstruct(kstream* io) : m__io(io) {}
    virtual ~kstruct() {}

protected:
    kstream* m__io;

public:
    kstream* _io() { return m__io; }
};

}  // namespace kaitai

#endif
