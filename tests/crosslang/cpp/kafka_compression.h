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

    // Kafka's Lz4BlockInputStream over one LZ4 frame (kafkacodec.runtime.compression._unlz4
    // states the same rules): FLG with no reserved bit, independent blocks, version 1; BD
    // with no reserved bit and a block size of 64 KiB to 4 MiB; the descriptor's checksum
    // but for magic 0 (KAFKA-3160); blocks to the end mark (a size of 0 whatever its top
    // bit), a block checksum checked, the content checksum not; a block of no bytes ends
    // the stream, and nothing after the end mark is read.
    std::string unlz4(const std::string& src) const {
        size_t n = src.size();
        if (n < 6) throw std::runtime_error("lz4: frame header cut short");
        if (le32(src, 0) != 0x184D2204u) throw std::runtime_error("lz4: not a frame (bad magic number)");
        unsigned flg = (unsigned char) src[4], bd = (unsigned char) src[5];
        if (flg & 3) throw std::runtime_error("lz4: reserved descriptor bits must be 0");
        if (!(flg & 0x20)) throw std::runtime_error("lz4: dependent blocks are not supported");
        if ((flg >> 6) != 1) throw std::runtime_error("lz4: frame version is not supported");
        if (bd & 0x8f) throw std::runtime_error("lz4: reserved block descriptor bits must be 0");
        unsigned size_id = (bd >> 4) & 7;
        if (size_id < 4) throw std::runtime_error("lz4: the block size must be 4 to 7");
        size_t at = 6;
        if (flg & 0x08) {
            if (n - at < 8) throw std::runtime_error("lz4: frame header cut short");
            at += 8;
        }
        if (n - at < 1) throw std::runtime_error("lz4: frame header cut short");
        if (m_magic != 0 && (unsigned char) src[at] != ((xxh32(src, 4, at - 4) >> 8) & 0xff))
            throw std::runtime_error("lz4: frame descriptor corrupted (its checksum does not match)");
        at += 1;
        size_t max_block = (size_t) 1 << (2 * size_id + 8);
        std::string out;
        for (;;) {
            if (n - at < 4) throw std::runtime_error("lz4: frame ends before its end mark");
            uint32_t word = le32(src, at);
            at += 4;
            size_t size = word & 0x7fffffffu;
            if (size == 0) {
                if ((flg & 0x04) && n - at < 4) throw std::runtime_error("lz4: frame ends inside its content checksum");
                return out;
            }
            if (size > max_block) throw std::runtime_error("lz4: a block past the frame's block size");
            if (n - at < size) throw std::runtime_error("lz4: frame ends inside a block");
            size_t before = out.size();
            if (word & 0x80000000u) out.append(src, at, size);
            else lz4_block(src, at, at + size, out);
            if (out.size() - before > max_block) throw std::runtime_error("lz4: a block inflates past the block size");
            size_t block_at = at;
            at += size;
            if (flg & 0x10) {
                if (n - at < 4) throw std::runtime_error("lz4: frame ends inside a block checksum");
                if (xxh32(src, block_at, size) != le32(src, at)) throw std::runtime_error("lz4: block checksum mismatch");
                at += 4;
            }
            if (out.size() == before) return out;  // a block of no bytes ends the stream
        }
    }

    static uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

    // xxHash32 (seed 0), as LZ4 frames use it
    static uint32_t xxh32(const std::string& s, size_t at, size_t len) {
        const uint32_t p1 = 2654435761u, p2 = 2246822519u, p3 = 3266489917u, p4 = 668265263u, p5 = 374761393u;
        const unsigned char* b = (const unsigned char*) s.data() + at;
        const unsigned char* end = b + len;
        uint32_t h;
        if (len >= 16) {
            uint32_t v1 = p1 + p2, v2 = p2, v3 = 0, v4 = 0u - p1;
            const unsigned char* limit = end - 16;
            do {
                v1 = rotl(v1 + rd32(b) * p2, 13) * p1; b += 4;
                v2 = rotl(v2 + rd32(b) * p2, 13) * p1; b += 4;
                v3 = rotl(v3 + rd32(b) * p2, 13) * p1; b += 4;
                v4 = rotl(v4 + rd32(b) * p2, 13) * p1; b += 4;
            } while (b <= limit);
            h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        } else {
            h = p5;
        }
        h += (uint32_t) len;
        while (b + 4 <= end) { h = rotl(h + rd32(b) * p3, 17) * p4; b += 4; }
        while (b < end) { h = rotl(h + (*b) * p5, 11) * p1; b++; }
        h ^= h >> 15; h *= p2; h ^= h >> 13; h *= p3; h ^= h >> 16;
        return h;
    }

    static uint32_t rd32(const unsigned char* b) {
        return (uint32_t) b[0] | ((uint32_t) b[1] << 8) | ((uint32_t) b[2] << 16) | ((uint32_t) b[3] << 24);
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
