// kafkacodec's test-support subset of the official C++/STL runtime (see kaitaistruct.h).
#ifndef KAITAI_STREAM_H
#define KAITAI_STREAM_H

#include <stdint.h>

#include <sstream>
#include <string>

namespace kaitai {

class kstream {
public:
    /** A stream over bytes in memory (copied). */
    explicit kstream(const std::string& data);
    /** A stream over a whole std::istream (read in full). */
    explicit kstream(std::istream* io);

    bool is_eof() const { return m_pos >= m_data.size(); }
    void seek(uint64_t pos);
    uint64_t pos() const { return m_pos; }
    uint64_t size() const { return m_data.size(); }

    int8_t read_s1();
    int16_t read_s2be();
    int32_t read_s4be();
    int64_t read_s8be();
    int16_t read_s2le();
    int32_t read_s4le();
    int64_t read_s8le();
    uint8_t read_u1();
    uint16_t read_u2be();
    uint32_t read_u4be();
    uint64_t read_u8be();
    uint16_t read_u2le();
    uint32_t read_u4le();
    uint64_t read_u8le();
    float read_f4be();
    double read_f8be();

    std::string read_bytes(std::streamsize len);
    std::string read_bytes_full();

    /** Bytes as text: the schemas' strings are UTF-8, kept as the bytes they are. */
    static std::string bytes_to_str(const std::string& src, const char* src_enc);
    static int64_t mod(int64_t a, int64_t b);
    static std::string to_string(int64_t val);

private:
    std::string m_data;
    uint64_t m_pos;
    uint64_t ahead(uint64_t n, int width_be_or_le);  // n bytes as an integer, checked
    void need(uint64_t n) const;
};

}  // namespace kaitai

#endif
