// kafkacodec's test-support subset of the official C++/STL runtime (see kaitaistruct.h).
#include <kaitai/kaitaistream.h>

#include <cstring>
#include <iterator>
#include <stdexcept>

namespace kaitai {

kstream::kstream(const std::string& data) : m_data(data), m_pos(0) {}

kstream::kstream(std::istream* io) : m_pos(0) {
    m_data.assign(std::istreambuf_iterator<char>(*io), std::istreambuf_iterator<char>());
}

void kstream::seek(uint64_t pos) {
    if (pos > m_data.size()) throw std::runtime_error("seek: past the end of the stream");
    m_pos = pos;
}

void kstream::need(uint64_t n) const {
    if (n > m_data.size() - m_pos) {
        throw std::runtime_error("requested " + to_string((int64_t) n) + " bytes, but only " +
                                 to_string((int64_t) (m_data.size() - m_pos)) + " bytes available");
    }
}

// n bytes as an unsigned integer: big-endian (1) or little-endian (0).
uint64_t kstream::ahead(uint64_t n, int be) {
    need(n);
    uint64_t v = 0;
    const unsigned char* p = (const unsigned char*) m_data.data() + m_pos;
    for (uint64_t i = 0; i < n; i++) v |= (uint64_t) p[be ? i : n - 1 - i] << (8 * (n - 1 - i));
    m_pos += n;
    return v;
}

int8_t kstream::read_s1() { return (int8_t) ahead(1, 1); }
int16_t kstream::read_s2be() { return (int16_t) ahead(2, 1); }
int32_t kstream::read_s4be() { return (int32_t) ahead(4, 1); }
int64_t kstream::read_s8be() { return (int64_t) ahead(8, 1); }
int16_t kstream::read_s2le() { return (int16_t) ahead(2, 0); }
int32_t kstream::read_s4le() { return (int32_t) ahead(4, 0); }
int64_t kstream::read_s8le() { return (int64_t) ahead(8, 0); }
uint8_t kstream::read_u1() { return (uint8_t) ahead(1, 1); }
uint16_t kstream::read_u2be() { return (uint16_t) ahead(2, 1); }
uint32_t kstream::read_u4be() { return (uint32_t) ahead(4, 1); }
uint64_t kstream::read_u8be() { return ahead(8, 1); }
uint16_t kstream::read_u2le() { return (uint16_t) ahead(2, 0); }
uint32_t kstream::read_u4le() { return (uint32_t) ahead(4, 0); }
uint64_t kstream::read_u8le() { return ahead(8, 0); }

float kstream::read_f4be() {
    uint32_t bits = read_u4be();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

double kstream::read_f8be() {
    uint64_t bits = read_u8be();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

std::string kstream::read_bytes(std::streamsize len) {
    if (len < 0) throw std::runtime_error("read_bytes: requested a negative amount");
    need((uint64_t) len);
    std::string out = m_data.substr(m_pos, (size_t) len);
    m_pos += (uint64_t) len;
    return out;
}

std::string kstream::read_bytes_full() {
    std::string out = m_data.substr(m_pos);
    m_pos = m_data.size();
    return out;
}

std::string kstream::bytes_to_str(const std::string& src, const char*) { return src; }

int64_t kstream::mod(int64_t a, int64_t b) {
    if (b <= 0) throw std::invalid_argument("mod: divisor b <= 0");
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

std::string kstream::to_string(int64_t val) {
    std::ostringstream s;
    s << val;
    return s.str();
}

}  // namespace kaitai
