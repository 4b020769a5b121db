// The custom process of kafkacodec's schemas (`process: kafka_compression(codec, magic)`)
// for the official compiler's C++ output, as the cross-language tests plug it in: the
// generated code constructs kafka_compression_t(codec, magic) and calls decode() on the
// compressed region. Here: gzip through zlib, snappy (xerial's stream format, or a raw
// block) and lz4 (Kafka's frame) decoded by hand, zstd through libzstd's one-shot
// ZSTD_decompress (declared here: its ABI is stable, and this machine has the library but
// not its headers). A user plugs in any decompressor the same way.
#ifndef KAFKA_COMPRESSION_H_
#define KAFKA_COMPRESSION_H_

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include <stdexcept>
#include <string>

extern "C" {
size_t ZSTD_decompress(void* dst, size_t dst_capacity, const void* src, size_t src_size);
unsigned ZSTD_isError(size_t code);
}

class kafka_compression_t {
public:
    kafka_compression_t(int codec, int magic) : m_codec(codec), m_magic(magic) {}

    std::string decode(std::string src) {
        switch (m_codec) {
            case 0: return src;
            case 1: return gunzip(src);
            case 2: return unsnappy(src);
            case 3: return unlz4(src);
            case 4:
                if (m_magic < 2) throw std::runtime_error("zstd needs message format 2 (magic 2)");
                return unzstd(src);
            default: throw std::runtime_error("unknown compression codec");
        }
    }

private:
    int m_codec;
    int m_magic;

    static std::string gunzip(const std::string& src) {
        std::string out;
        z_stream s = z_stream();
        if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("gzip: inflateInit2");
        s.next_in = (Bytef*) src.data();
        s.avail_in = (uInt) src.size();
        char buf[65536];
        for (;;) {
            s.next_out = (Bytef*) buf;
            s.avail_out = sizeof buf;
            int rc = inflate(&s, Z_NO_FLUSH);
            out.append(buf, sizeof buf - s.avail_out);
            if (rc == Z_STREAM_END) {
                if (s.avail_in == 0) break;
                inflateReset(&s);  // another gzip member follows
                continue;
            }
            if (rc != Z_OK) {
                inflateEnd(&s);
                throw std::runtime_error("gzip: corrupt data");
            }
            if (s.avail_in == 0 && s.avail_out != 0) {
                inflateEnd(&s);
                throw std::runtime_error("gzip: truncated data");
            }
        }
        inflateEnd(&s);
        return out;
    }

    static uint32_t be32(const std::string& b, size_t at) {
        if (at + 4 > b.size()) throw std::runtime_error("cut short");
        return (uint32_t) (unsigned char) b[at] << 24 | (uint32_t) (unsigned char) b[at + 1] << 16 |
               (uint32_t) (unsigned char) b[at + 2] << 8 | (uint32_t) (unsigned char) b[at + 3];
    }

    static uint32_t le32(const std::string& b, size_t at) {
        if (at + 4 > b.size()) throw std::runtime_error("cut short");
        return (uint32_t) (unsigned char) b[at] | (uint32_t) (unsigned char) b[at + 1] << 8 |
               (uint32_t) (unsigned char) b[at + 2] << 16 | (uint32_t) (unsigned char) b[at + 3] << 24;
    }

    static std::string unsnappy(const std::string& src) {
        static const char xerial[8] = {(char) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
        if (src.size() < 16 || src.compare(0, 8, std::string(xerial, 8)) != 0) return snappy_block(src, 0, src.size());
        std::string out;
        size_t at = 16;  // magic, version, compatible version
        while (at < src.size()) {
            uint32_t n = be32(src, at);
            at += 4;
            if (n > src.size() - at) throw std::runtime_error("snappy: a chunk longer than the data");
            out += snappy_block(src, at, at + n);
            at += n;
        }
        return out;
    }

    static std::string snappy_block(const std::string& s, size_t at, size_t end) {
        const unsigned char* b = (const unsigned char*) s.data();
        uint64_t len = 0;
        for (int shift = 0;; shift += 7) {
            if (at >= end || shift > 28) throw std::runtime_error("snappy: bad length");
            unsigned c = b[at++];
            len |= (uint64_t) (c & 0x7f) << shift;
            if (c < 0x80) break;
        }
        std::string out;
        out.reserve((size_t) len);
        while (at < end) {
            unsigned tag = b[at++];
            size_t n, offset;
            if ((tag & 3) == 0) {
                n = tag >> 2;
                if (n >= 60) {
                    size_t bytes = n - 59;
                    if (bytes > end - at) throw std::runtime_error("snappy: bad literal");
                    n = 0;
                    for (size_t i = 0; i < bytes; i++) n |= (size_t) b[at++] << (8 * i);
                }
                n += 1;
                if (n > end - at || out.size() + n > len) throw std::runtime_error("snappy: bad literal");
                out.append(s, at, n);
                at += n;
                continue;
            }
            if ((tag & 3) == 1) {
                if (at >= end) throw std::runtime_error("snappy: cut short");
                n = ((tag >> 2) & 7) + 4;
                offset = ((size_t) (tag >> 5) << 8) | b[at++];
            } else if ((tag & 3) == 2) {
                if (end - at < 2) throw std::runtime_error("snappy: cut short");
                n = (tag >> 2) + 1;
                offset = b[at] | (size_t) b[at + 1] << 8;
                at += 2;
            } else {
                if (end - at < 4) throw std::runtime_error("snappy: cut short");
                n = (tag >> 2) + 1;
                offset = le32(s, at);
                at += 4;
            }
            if (offset == 0 || offset > out.size() || out.size() + n > len) throw std::runtime_error("snappy: bad copy");
            for (size_t i = 0; i < n; i++) out.push_back(out[out.size() - offset]);
        }
        if (out.size() != len) throw std::runtime_error("snappy: length mismatch");
        return out;
    }

    static std::string unlz4(const std::string& src) {
        if (src.size() < 7 || le32(src, 0) != 0x184D2204u) throw std::runtime_error("lz4: not a frame");
        unsigned flg = (unsigned char) src[4];
        size_t at = 6 + ((flg & 0x08) ? 8 : 0) + ((flg & 0x01) ? 4 : 0) + 1;  // FLG BD [size] [dict] HC
        bool block_checksum = (flg & 0x10) != 0;
        std::string out;
        for (;;) {
            uint32_t size = le32(src, at);
            at += 4;
            if (size == 0) break;
            bool raw = (size & 0x80000000u) != 0;
            size &= 0x7fffffffu;
            if (size > src.size() - at) throw std::runtime_error("lz4: a block longer than the data");
            if (raw) out.append(src, at, size);
            else lz4_block(src, at, at + size, out);
            at += size + (block_checksum ? 4 : 0);
        }
        return out;
    }

    static void lz4_block(const std::string& s, size_t at, size_t end, std::string& out) {
        const unsigned char* b = (const unsigned char*) s.data();
        size_t start = out.size();
        while (at < end) {
            unsigned token = b[at++];
            size_t lit = token >> 4;
            if (lit == 15) {
                unsigned c;
                do {
                    if (at >= end) throw std::runtime_error("lz4: cut short");
                    c = b[at++];
                    lit += c;
                } while (c == 255);
            }
            if (lit > end - at) throw std::runtime_error("lz4: bad literal length");
            out.append(s, at, lit);
            at += lit;
            if (at >= end) break;  // the last sequence has literals only
            if (end - at < 2) throw std::runtime_error("lz4: cut short");
            size_t offset = b[at] | (size_t) b[at + 1] << 8;
            at += 2;
            size_t n = token & 15;
            if (n == 15) {
                unsigned c;
                do {
                    if (at >= end) throw std::runtime_error("lz4: cut short");
                    c = b[at++];
                    n += c;
                } while (c == 255);
            }
            n += 4;
            if (offset == 0 || offset > out.size() - start) throw std::runtime_error("lz4: bad offset");
            for (size_t i = 0; i < n; i++) out.push_back(out[out.size() - offset]);
        }
    }

    // Kafka's zstd frames carry no content size: the output buffer grows until it fits.
    static std::string unzstd(const std::string& src) {
        for (size_t cap = src.size() * 8 > 65536 ? src.size() * 8 : 65536;; cap *= 2) {
            std::string out(cap, '\0');
            size_t n = ZSTD_decompress(&out[0], cap, src.data(), src.size());
            if (!ZSTD_isError(n)) {
                out.resize(n);
                return out;
            }
            if (cap >= ((size_t) 1 << 30)) throw std::runtime_error("zstd: cannot decompress (or more than 1 GiB)");
        }
    }
};

#endif
