/*
 * The runtime's primitives for the native extensions of the layers above it: big-endian
 * loads, Kafka's zig-zag varints with the bounds of runtime/varint.py, and the CRC-32 of
 * legacy messages (runtime/crc.py's). Header-only (static inline): each extension that
 * includes it gets its own copy, so the runtime ships no native module of its own.
 *
 * The records layer's extension (kafkacodec/records/_native_*.c) includes it; what a schema
 * says (offsets, sizes, bounds) is not here but in the generated kafka_layout.h.
 */
#ifndef KAFKACODEC_RUNTIME_PRIMITIVES_H
#define KAFKACODEC_RUNTIME_PRIMITIVES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The CRC-32 of legacy messages (zlib's, as Python's zlib.crc32 computes it): Intel ISA-L's
 * crc32_gzip_refl when the build found it (Debian's libisal-dev; PCLMULQDQ, about 6x zlib's
 * speed on a 130-byte message here), else zlib's own. */
#ifdef KAFKACODEC_ISAL
#include <isa-l/crc.h>
#define CRC32_IEEE(p, n) crc32_gzip_refl(0, (const unsigned char *)(p), (uint64_t)(n))
#define CRC32_IEEE_NAME "isa-l"
#else
#include <zlib.h>
#define CRC32_IEEE(p, n) crc32_z(crc32(0L, Z_NULL, 0), (const Bytef *)(p), (z_size_t)(n))
#define CRC32_IEEE_NAME "zlib"
#endif

static inline int64_t be64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return (int64_t)__builtin_bswap64(v); }
static inline int32_t be32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return (int32_t)__builtin_bswap32(v); }
static inline int16_t be16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return (int16_t)__builtin_bswap16(v); }

/* Read a zig-zag varint (max_len 5, int32) or varlong (max_len 10, int64) with the bounds
 * of runtime/varint.py. Returns 0 on success, -1 when the encoding is not one the
 * generated parser would accept (truncated, too long, out of range). */
static inline int
read_varint(const uint8_t *buf, Py_ssize_t *pos, Py_ssize_t end, int max_len, int64_t *out)
{
    Py_ssize_t p = *pos;
    /* The usual lengths and deltas first: one byte, then two (no last-byte rule applies) */
    if (p < end && buf[p] < 0x80) {
        const uint64_t raw = buf[p];
        *pos = p + 1;
        *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
        return 0;
    }
    if (end - p >= 2 && buf[p + 1] < 0x80) { /* (buf[p] has its continuation bit here) */
        const uint64_t raw = (uint64_t)(buf[p] & 0x7F) | ((uint64_t)buf[p + 1] << 7);
        *pos = p + 2;
        *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
        return 0;
    }
    uint64_t raw = 0;
    int shift = 0;
    for (int i = 0; i < max_len; i++) {
        if (p >= end)
            return -1;
        uint8_t b = buf[p++];
        if (i == max_len - 1) {
            /* The last byte may only carry the bits that still fit the type. */
            if (b & 0x80)
                return -1;
            if (max_len == 5 ? (b & 0x70) : (b & 0x7E))
                return -1;
        }
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *pos = p;
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            return 0;
        }
        shift += 7;
    }
    return -1;
}

/* The bytes of v as a zig-zag varint (1 to 10). */
static inline int
varint_size(int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    int n = 1;
    while (u >= 0x80) {
        u >>= 7;
        n++;
    }
    return n;
}

/* Write v as a zig-zag varint at dst (room for 10 bytes): the bytes written. */
static inline int
write_varint(char *dst, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    int n = 0;
    while (u >= 0x80) {
        dst[n++] = (char)((u & 0x7F) | 0x80);
        u >>= 7;
    }
    dst[n++] = (char)u;
    return n;
}

#endif
