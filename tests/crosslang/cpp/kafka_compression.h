// The custom process of kafkacodec's schemas (`process: kafka_compression(codec, magic[, records])`)
// for the official compiler's C++ output, as the cross-language tests plug it in: the
// generated code constructs kafka_compression_t(codec, magic[, records]) and calls decode() on the
// compressed region. Here: gzip through zlib's raw inflate, snappy (xerial's stream
// format, or a raw block) and lz4 (Kafka's frame) decoded by hand, zstd through libzstd's
// streaming decoder (declared here: its ABI is stable, and this machine has the library
// but not its headers). Each stream is read as Kafka's Java streams read it, to where they
// end (what follows is read, skipped or refused as they do: kafkacodec.runtime.compression
// states the same rules, which Kafka's classes judge), and never past LIMIT bytes of output.
// A user plugs in any decompressor the same way.
#ifndef KAFKA_COMPRESSION_H_
#define KAFKA_COMPRESSION_H_

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include <stdexcept>
#include <string>

extern "C" {
typedef struct ZSTD_DCtx_s ZSTD_DStream;
typedef struct { const void* src; size_t size; size_t pos; } ZSTD_inBuffer;
typedef struct { void* dst; size_t size; size_t pos; } ZSTD_outBuffer;
ZSTD_DStream* ZSTD_createDStream(void);
size_t ZSTD_freeDStream(ZSTD_DStream* zds);
size_t ZSTD_initDStream(ZSTD_DStream* zds);
size_t ZSTD_decompressStream(ZSTD_DStream* zds, ZSTD_outBuffer* output, ZSTD_inBuffer* input);
unsigned ZSTD_isError(size_t code);
}

class kafka_compression_t {
public:
    // records: how many records a v2 batch says its region holds (-1: not said, a legacy
    // wrapper); of a region said to hold none Kafka reads the codec's head alone.
    kafka_compression_t(int codec, int magic, int64_t records = -1)
        : m_codec(codec), m_magic(magic), m_records(records) {}

    std::string decode(std::string src) {
        if (m_records == 0) {
            check_head(src);
            return std::string();
        }
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

    //: runtime/compression.py DEFAULT_MAX_INFLATED: what one region may inflate to.
    static const size_t LIMIT = (size_t) 128 << 20;

private:
    int m_codec;
    int m_magic;
    int64_t m_records;

    // What Kafka reads of a compressed records region that holds no record
    // (kafkacodec.runtime.compression.check_head): DefaultRecordBatch's streaming iterator
    // opens the codec's stream, whose constructor reads the gzip member header, the LZ4
    // frame header, snappy-java's header or, when the bytes do not start with it, the one
    // raw block it decompresses whole; zstd-jni's reads nothing. Then no record is read.
    void check_head(const std::string& src) const {
        if (m_codec < 0 || m_codec > (m_magic < 2 ? 3 : 4)) throw std::runtime_error("unknown compression codec");
        if (m_codec == 1) gzip_header(src, 0);
        else if (m_codec == 3) lz4_head(src);
        else if (m_codec == 2 && (src.size() < 16 || src.compare(0, 8, std::string("\x82SNAPPY\0", 8)) != 0)) unsnappy(src);
    }

    static uint32_t le32u(const std::string& b, size_t at) {
        return (uint32_t) (unsigned char) b[at] | (uint32_t) (unsigned char) b[at + 1] << 8 |
               (uint32_t) (unsigned char) b[at + 2] << 16 | (uint32_t) (unsigned char) b[at + 3] << 24;
    }

    // The length of the gzip member header at s[pos], as the JDK's GZIPInputStream.readHeader
    // reads it (reserved flag bits not looked at; a header CRC checked); throws otherwise.
    static size_t gzip_header(const std::string& s, size_t pos) {
        const unsigned char* b = (const unsigned char*) s.data();
        size_t n = s.size();
        if (n - pos < 10) throw std::runtime_error("gzip: header cut short");
        if (b[pos] != 0x1f || b[pos + 1] != 0x8b) throw std::runtime_error("gzip: not in gzip format");
        if (b[pos + 2] != 8) throw std::runtime_error("gzip: not deflate");
        unsigned flg = b[pos + 3];
        size_t at = pos + 10;
        if (flg & 4) {  // FEXTRA
            if (n - at < 2) throw std::runtime_error("gzip: header cut short");
            at += 2 + (b[at] | (size_t) b[at + 1] << 8);
            if (at > n) throw std::runtime_error("gzip: header cut short");
        }
        for (unsigned bit = 8; bit <= 16; bit <<= 1) {  // FNAME, FCOMMENT: zero-terminated
            if (flg & bit) {
                size_t z = s.find('\0', at);
                if (z == std::string::npos) throw std::runtime_error("gzip: header cut short");
                at = z + 1;
            }
        }
        if (flg & 2) {  // FHCRC
            if (n - at < 2) throw std::runtime_error("gzip: header cut short");
            uLong crc = crc32(0L, b + pos, (uInt) (at - pos));
            if ((b[at] | (unsigned) b[at + 1] << 8) != (crc & 0xffff)) throw std::runtime_error("gzip: corrupt header");
            at += 2;
        }
        return at - pos;
    }

    // java.util.zip.GZIPInputStream over the bytes, with the 8 KiB input buffer Kafka's
    // GzipCompression gives it (kafkacodec.runtime.compression._gunzip): a member's header,
    // raw deflate, trailer (CRC-32, length); then, only when the JDK looks at what follows
    // (input it has not read yet, or more than 26 bytes of its buffer left after the deflate
    // data), a next member if a header it takes starts there, else the end.
    static std::string gunzip(const std::string& src) {
        const size_t jdk_buffer = 8 * 1024;
        size_t size = src.size();
        size_t pos = gzip_header(src, 0);
        size_t in_pos = pos;
        std::string out;
        for (;;) {
            z_stream s = z_stream();
            if (inflateInit2(&s, -MAX_WBITS) != Z_OK) throw std::runtime_error("gzip: inflateInit2");
            s.next_in = (Bytef*) src.data() + pos;
            s.avail_in = (uInt) (size - pos);
            size_t member_start = out.size();
            char buf[65536];
            int rc;
            do {
                s.next_out = (Bytef*) buf;
                s.avail_out = sizeof buf;
                rc = inflate(&s, Z_NO_FLUSH);
                out.append(buf, sizeof buf - s.avail_out);
                if (out.size() > LIMIT) rc = Z_MEM_ERROR;
            } while (rc == Z_OK && (s.avail_in > 0 || s.avail_out == 0));
            size_t deflate_end = size - s.avail_in;
            inflateEnd(&s);
            if (rc != Z_STREAM_END) throw std::runtime_error("gzip: corrupt, cut short or too large");
            if (deflate_end > in_pos) {  // the 8 KiB fills that reached the deflate data's end
                size_t fills = (deflate_end - in_pos + jdk_buffer - 1) / jdk_buffer;
                in_pos = in_pos + fills * jdk_buffer < size ? in_pos + fills * jdk_buffer : size;
            }
            size_t buffered = in_pos - deflate_end;
            if (size - deflate_end < 8) throw std::runtime_error("gzip: member ends inside its trailer");
            uLong crc = crc32(0L, (const Bytef*) out.data() + member_start, (uInt) (out.size() - member_start));
            if (le32u(src, deflate_end) != (uint32_t) crc || le32u(src, deflate_end + 4) != (uint32_t) (out.size() - member_start)) {
                throw std::runtime_error("gzip: corrupt trailer");
            }
            if (in_pos < deflate_end + 8) in_pos = deflate_end + 8;
            if (!(size > in_pos || buffered > 26)) return out;
            size_t header;
            try {
                header = gzip_header(src, deflate_end + 8);
            } catch (const std::runtime_error&) {
                return out;  // "ignore any malformed": the stream ends here
            }
            pos = deflate_end + 8 + header;
            if (in_pos < pos) in_pos = pos;
        }
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

    // snappy-java's SnappyInputStream as Kafka reads it (kafkacodec.runtime.compression
    // _unsnappy): fewer than 16 bytes, or no magic, is one raw block; else chunks (an int32
    // length, a raw block) until fewer than 4 bytes are left; a length that is the magic's
    // first 4 bytes starts a concatenated stream's header (version at least 1), or, when the
    // rest of the magic does not follow, is 16 bytes skipped: the end when the read Kafka
    // made (2 KiB of output at a time) had given nothing yet, else the stream goes on.
    static std::string unsnappy(const std::string& src) {
        static const char xerial[8] = {(char) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
        const size_t kafka_read = 2 * 1024, max_chunk = (size_t) 512 << 20;
        if (src.empty()) throw std::runtime_error("snappy: empty data");
        if (src.size() < 16 || src.compare(0, 8, std::string(xerial, 8)) != 0) return snappy_block(src, 0, src.size(), 0);
        std::string out;
        size_t at = 16, read_start = 0;  // magic, version, compatible version
        while (src.size() - at >= 4) {
            uint32_t n = be32(src, at);
            at += 4;
            if (n == be32(std::string(xerial, 8), 0)) {  // a concatenated stream's header
                if (src.size() - at < 12) throw std::runtime_error("snappy: header cut short");
                bool magic = src.compare(at, 4, std::string(xerial + 4, 4)) == 0;
                int32_t version = (int32_t) be32(src, at + 4);
                at += 12;
                if (!magic) {
                    if ((out.size() - read_start) % kafka_read == 0) break;  // -1: the end
                    read_start = out.size();
                    continue;
                }
                if (version < 1) throw std::runtime_error("snappy: stream of version below 1");
                continue;
            }
            if (n > max_chunk || n > src.size() - at) throw std::runtime_error("snappy: a chunk longer than the data");
            out += snappy_block(src, at, at + n, out.size());
            at += n;
        }
        return out;
    }

    static std::string snappy_block(const std::string& s, size_t at, size_t end, size_t before) {
        const unsigned char* b = (const unsigned char*) s.data();
        uint64_t len = 0;
        for (int shift = 0;; shift += 7) {
            if (at >= end || shift > 28) throw std::runtime_error("snappy: bad length");
            unsigned c = b[at++];
            len |= (uint64_t) (c & 0x7f) << shift;
            if (c < 0x80) break;
        }
        if (before + len > LIMIT) throw std::runtime_error("snappy: inflates past the limit");
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

    // Lz4BlockInputStream.readHeader: where the frame's blocks start.
    size_t lz4_head(const std::string& src) const {
        size_t n = src.size();
        if (n < 6) throw std::runtime_error("lz4: frame header cut short");
        if (le32(src, 0) != 0x184D2204u) throw std::runtime_error("lz4: not a frame (bad magic number)");
        unsigned flg = (unsigned char) src[4], bd = (unsigned char) src[5];
        if (flg & 3) throw std::runtime_error("lz4: reserved descriptor bits must be 0");
        if (!(flg & 0x20)) throw std::runtime_error("lz4: dependent blocks are not supported");
        if ((flg >> 6) != 1) throw std::runtime_error("lz4: frame version is not supported");
        if (bd & 0x8f) throw std::runtime_error("lz4: reserved block descriptor bits must be 0");
        if (((bd >> 4) & 7) < 4) throw std::runtime_error("lz4: the block size must be 4 to 7");
        size_t at = 6;
        if (flg & 0x08) {
            if (n - at < 8) throw std::runtime_error("lz4: frame header cut short");
            at += 8;
        }
        if (n - at < 1) throw std::runtime_error("lz4: frame header cut short");
        if (m_magic != 0 && (unsigned char) src[at] != ((xxh32(src, 4, at - 4) >> 8) & 0xff))
            throw std::runtime_error("lz4: frame descriptor corrupted (its checksum does not match)");
        return at + 1;
    }

    // Kafka's Lz4BlockInputStream over one LZ4 frame (kafkacodec.runtime.compression._unlz4
    // states the same rules): FLG with no reserved bit, independent blocks, version 1; BD
    // with no reserved bit and a block size of 64 KiB to 4 MiB; the descriptor's checksum
    // but for magic 0 (KAFKA-3160); blocks to the end mark (a size of 0 whatever its top
    // bit), a block checksum checked, the content checksum not; a block of no bytes ends
    // the stream, and nothing after the end mark is read.
    std::string unlz4(const std::string& src) const {
        size_t n = src.size();
        size_t at = lz4_head(src);
        unsigned flg = (unsigned char) src[4];
        unsigned size_id = ((unsigned char) src[5] >> 4) & 7;
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
            else lz4_block(src, at, at + size, out, max_block);
            if (out.size() - before > max_block) throw std::runtime_error("lz4: a block inflates past the block size");
            if (out.size() > LIMIT) throw std::runtime_error("lz4: inflates past the limit");
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

    // One LZ4 block (s[at, end)) appended to out, within max_block bytes, as liblz4's
    // LZ4_decompress_safe decides it (lib/lz4.c LZ4_decompress_generic: full block, no
    // dictionary), the decompressor lz4-java calls for Kafka's Lz4BlockInputStream; the Go
    // package's lz4Block states the same rules (a last sequence's literals end the block
    // whatever its match length nibble; literals ending within 8 bytes of the end must end
    // it; no match ends within 5 bytes of the bound; offset 0 is zeros; liblz4's fast loop
    // while the output is 64 bytes or more from the bound, then its safe loop).
    static void lz4_block(const std::string& s, size_t at, size_t end, std::string& out, size_t max_block) {
        const unsigned char* src = (const unsigned char*) s.data();
        std::string dst(max_block, '\0');
        const long iend = (long) end, oend = (long) max_block;
        const std::runtime_error bad("lz4: corrupt block");
        if (iend == (long) at) throw bad;
        long ip = (long) at, op = 0, token = 0, length = 0, match = 0;
        auto var_len = [&](long limit, bool initial) -> long {
            if (initial && ip >= limit) return -1;
            long n = 0;
            for (;;) {
                if (ip >= iend) return -1;
                long b = src[ip++];
                n += b;
                if (ip > limit) return -1;
                if (b != 255) return n;
            }
        };
        auto copy_match = [&](long from, long len) {
            if (from == op) { for (long i = 0; i < len; i++) dst[op + i] = 0; return; }  // offset 0: zeros
            for (long i = 0; i < len; i++) dst[op + i] = dst[from + i];
        };
        bool fast = oend - op >= 64;
        for (;;) {
            enum { NEXT, LITERALS, MATCH_LENGTH, MATCH } step = NEXT;
            if (fast) {
                if (ip >= iend) throw bad;
                token = src[ip++];
                length = token >> 4;
                if (length == 15) {
                    long addl = var_len(iend - 15, true);
                    if (addl < 0) throw bad;
                    length += addl;
                    if (op + length > oend - 32 || ip + length > iend - 32) step = LITERALS;
                } else if (ip > iend - 17) {
                    step = LITERALS;
                }
                if (step == NEXT) {
                    dst.replace(op, length, s, ip, length);
                    ip += length;
                    op += length;
                    long offset = src[ip] | (long) src[ip + 1] << 8;
                    ip += 2;
                    match = op - offset;
                    length = token & 15;
                    if (length == 15) {
                        long addl = var_len(iend - 5 + 1, false);
                        if (addl < 0) throw bad;
                        length += addl + 4;
                    } else {
                        length += 4;
                    }
                    if (op + length >= oend - 64) {
                        step = MATCH;
                    } else {
                        if (match < 0) throw bad;
                        copy_match(match, length);
                        op += length;
                        continue;
                    }
                }
                fast = false;
            }
            if (step == NEXT) {  // the safe loop
                if (ip >= iend) throw bad;
                token = src[ip++];
                length = token >> 4;
                if (length != 15 && ip < iend - 16 && op <= oend - 32) {  // the shortcut
                    dst.replace(op, length, s, ip, length);
                    op += length;
                    ip += length;
                    length = token & 15;
                    long offset = src[ip] | (long) src[ip + 1] << 8;
                    ip += 2;
                    match = op - offset;
                    if (length != 15 && offset >= 8 && match >= 0) {
                        copy_match(match, length + 4);
                        op += length + 4;
                        continue;
                    }
                    step = MATCH_LENGTH;
                } else {
                    if (length == 15) {
                        long addl = var_len(iend - 15, true);
                        if (addl < 0) throw bad;
                        length += addl;
                    }
                    step = LITERALS;
                }
            }
            if (step == LITERALS) {
                long cpy = op + length;
                if (cpy > oend - 12 || ip + length > iend - 8) {  // the last sequence
                    if (ip + length != iend || cpy > oend) throw bad;
                    dst.replace(op, length, s, ip, length);
                    out.append(dst, 0, cpy);
                    return;
                }
                dst.replace(op, length, s, ip, length);
                ip += length;
                op = cpy;
                long offset = src[ip] | (long) src[ip + 1] << 8;
                ip += 2;
                match = op - offset;
                length = token & 15;
                step = MATCH_LENGTH;
            }
            if (step == MATCH_LENGTH) {
                if (length == 15) {
                    long addl = var_len(iend - 5 + 1, false);
                    if (addl < 0) throw bad;
                    length += addl;
                }
                length += 4;
            }
            if (match < 0) throw bad;
            long cpy = op + length;
            if (cpy > oend - 5) throw bad;  // the last 5 bytes must be literals
            copy_match(match, length);
            op = cpy;
        }
    }

    // Where the frame (or skippable frame) at s[pos] ends, from its headers and its blocks'
    // headers (RFC 8878); 0 when the data ends inside a magic number (zstd waits for more);
    // throws for bytes that start no frame or a reserved block. The end may lie past the
    // data (the frame is cut short). kafkacodec.runtime.compression._zstd_frame_end.
    static size_t zstd_frame_end(const std::string& s, size_t pos) {
        const unsigned char* b = (const unsigned char*) s.data();
        size_t n = s.size();
        static const unsigned char magic[4] = {0x28, 0xb5, 0x2f, 0xfd}, skip[4] = {0x50, 0x2a, 0x4d, 0x18};
        size_t have = n - pos < 4 ? n - pos : 4;
        bool prefix = true, skippable = have > 0 && b[pos] >= 0x50 && b[pos] <= 0x5f;
        for (size_t i = 0; i < have; i++) {
            prefix = prefix && b[pos + i] == magic[i];
            if (i > 0) skippable = skippable && b[pos + i] == skip[i];
        }
        if (have < 4 || (n - pos < 5 && prefix)) {
            if (prefix || skippable) return 0;
            throw std::runtime_error("zstd: data holds no frame");
        }
        if (skippable) return n - pos < 8 ? pos + 8 : pos + 8 + le32u(s, pos + 4);
        if (!prefix) throw std::runtime_error("zstd: data holds no frame");
        unsigned fhd = b[pos + 4];
        unsigned single = (fhd >> 5) & 1;
        static const size_t dict[4] = {0, 1, 2, 4};
        size_t fcs[4] = {single, 2, 4, 8};
        size_t at = pos + 4 + 1 + (1 - single) + dict[fhd & 3] + fcs[fhd >> 6];
        for (;;) {
            if (at > n || n - at < 3) return at + 3;
            uint32_t bh = b[at] | (uint32_t) b[at + 1] << 8 | (uint32_t) b[at + 2] << 16;
            unsigned kind = (bh >> 1) & 3;
            if (kind == 3) throw std::runtime_error("zstd: block of the reserved type");
            at += 3 + (kind == 1 ? 1 : bh >> 3);  // an RLE block holds one byte
            if (bh & 1) return at + 4 * ((fhd >> 2) & 1);  // and its content checksum
        }
    }

    // One frame's content (or what a frame cut short gives before its end), by libzstd's
    // streaming decoder, within LIMIT.
    static void zstd_frame(const std::string& s, size_t from, size_t to, std::string& out) {
        ZSTD_DStream* z = ZSTD_createDStream();
        if (!z || ZSTD_isError(ZSTD_initDStream(z))) throw std::runtime_error("zstd: cannot start");
        ZSTD_inBuffer in = {s.data() + from, to - from, 0};
        char buf[65536];
        for (;;) {
            ZSTD_outBuffer o = {buf, sizeof buf, 0};
            size_t rc = ZSTD_decompressStream(z, &o, &in);
            if (ZSTD_isError(rc)) {
                ZSTD_freeDStream(z);
                throw std::runtime_error("zstd: corrupt data");
            }
            out.append(buf, o.pos);
            if (out.size() > LIMIT) {
                ZSTD_freeDStream(z);
                throw std::runtime_error("zstd: inflates past the limit");
            }
            if (rc == 0 || (in.pos == in.size && o.pos < o.size)) break;  // the frame's end, or no more input
        }
        ZSTD_freeDStream(z);
    }

    // zstd-jni's ZstdInputStreamNoFinalizer as Kafka reads it (kafkacodec.runtime.compression
    // _unzstd): frames one after the other, empty and skippable ones giving nothing; at the
    // end of the data after a frame cut short (what it gave is kept) or inside a magic
    // number: the end if a frame ended since zstd-jni last read input (131075 bytes at a
    // time), else "Truncated source".
    static std::string unzstd(const std::string& src) {
        const size_t jni_read = (128 << 10) + 3;
        size_t n = src.size(), pos = 0, done = 0;
        bool any_done = false;
        std::string out;
        while (pos < n) {
            size_t end = zstd_frame_end(src, pos);
            if (end == 0) break;
            bool skippable = src[pos] != (char) 0x28;
            if (end > n) {
                if (!skippable) zstd_frame(src, pos, n, out);
                break;
            }
            if (!skippable) zstd_frame(src, pos, end, out);
            done = end;
            any_done = true;
            pos = end;
        }
        if (pos >= n) return out;
        size_t last_read = (n - 1) / jni_read * jni_read;
        if (any_done && done > last_read) return out;
        throw std::runtime_error("zstd: a frame cut short (truncated source)");
    }
};

#endif
