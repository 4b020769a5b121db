/*
 * kafkacodec.records._native: the records layer's optional native loops, one file per
 * concern, each named _native_<concern>.c: decode (a v2 records region into Record
 * objects), legacy (magic 0 and 1 messages into Record objects), walk (the batch walk and
 * lazily read batch fields), columns (records regions into Arrow-shaped column buffers),
 * encode (regions, batches and legacy message sets written), record (Record objects: slots,
 * __init__, freelists), text (records as the command line prints them) and module.
 *
 * The generated parsers (generated/kafka_record.py and the others, from schemas/) stay the
 * reference. Each loop accepts exactly the inputs the generated code accepts and gives the
 * same values; the moment it meets anything else (a bad length, an out-of-range or overlong
 * varint, a truncated field, bytes left over) it gives up and returns None, and the caller
 * does the work with the generated code, which raises the precise error with its byte
 * position and schema path. Tests compare both paths on every vector and on
 * Hypothesis-generated and mutated batches.
 *
 * Nothing here allocates by an untrusted length: each key, value or header is bounded by
 * the bytes actually present, and the outputs grow as records are found.
 *
 * This header: what the files share. The primitives (varints, big-endian loads, CRC-32)
 * are the runtime's (runtime/primitives.h), and so are the slot offsets and the growing
 * buffer (runtime/pyobjects.h); the byte layout of the formats is the
 * schemas' (generated/kafka_layout.h), never restated here.
 */
#ifndef KAFKACODEC_RECORDS_NATIVE_H
#define KAFKACODEC_RECORDS_NATIVE_H

#include "primitives.h"
#include "pyobjects.h"
#include <stddef.h>

#include "kafka_layout.h"

/* Both v2 batches and legacy messages start with an offset and a length: the walk reads
 * those, then the magic byte at the same place in both. */
#define LOG_OVERHEAD KAFKA_RECORD_BATCH_REST_AT
_Static_assert(KAFKA_RECORD_BATCH_REST_AT == KAFKA_LEGACY_MESSAGE_REST_AT, "offset and length");
_Static_assert(KAFKA_RECORD_BATCH_MAGIC_AT == KAFKA_LEGACY_MESSAGE_MAGIC_AT, "magic byte");
_Static_assert(KAFKA_RECORD_BATCH_LEN_BATCH_AT == KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_AT, "length");

/* ----------------------------------------------------------- Record objects (_native_record.c) */

/* The Record slots, in the order the loops fill them. */
enum { F_OFFSET, F_TIMESTAMP, F_TIMESTAMP_TYPE, F_KEY, F_VALUE, F_HEADERS, F_SEQUENCE,
       F_CONTROL, F_ATTRIBUTES, N_FIELDS };
extern const char *const FIELD_NAMES[N_FIELDS];

/* Byte offsets of the Record slots of type (found through its member descriptors): 0, or
 * -1 with TypeError when type has not every slot. */
int slot_offsets(PyTypeObject *type, Py_ssize_t offsets[N_FIELDS]);

#define SET(obj, field, value) (SLOT(obj, offsets[field]) = (value))
#define GET(obj, field) SLOT(obj, offsets[field])

/* Put values[f] into every slot f of the record rec, but skip (already set): 0, or -1 when a
 * value is NULL (its making failed: rec is freed, with whatever values it took). */
int fill_record(PyObject *rec, const Py_ssize_t offsets[N_FIELDS], PyObject *values[N_FIELDS],
                int skip);

/* A bytes object for buf[p:p+n], or None for n == -1. */
static inline PyObject *
take_bytes(const uint8_t *buf, Py_ssize_t p, int64_t n)
{
    if (n < 0)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)buf + p, (Py_ssize_t)n);
}

/* --------------------------------------------------- a v2 record's framing (_native_decode.c) */

/* One record of a records region, its framing checked as the generated parser checks it:
 * where its key, value and headers are, and the deltas to add to the batch's bases. */
typedef struct {
    int attributes;
    int64_t ts_delta, offset_delta, len_key, len_value, num_headers;
    Py_ssize_t key_at, value_at, headers_at;
} RecordView;

/* Scan the record at *pos (headers included) and move *pos past it. Returns -1 when the
 * record is not exactly what the generated parser accepts: the caller gives up. */
int scan_record(const uint8_t *buf, Py_ssize_t *pos, Py_ssize_t total, RecordView *r);

/* The next header of a record scan_record accepted (so nothing is checked again). */
static inline void
next_header(const uint8_t *buf, Py_ssize_t *pos, Py_ssize_t *key_at, int64_t *len_key,
            Py_ssize_t *value_at, int64_t *len_value)
{
    read_varint(buf, pos, PY_SSIZE_T_MAX, 5, len_key);
    *key_at = *pos;
    *pos += (Py_ssize_t)*len_key;
    read_varint(buf, pos, PY_SSIZE_T_MAX, 5, len_value);
    *value_at = *pos;
    if (*len_value > 0)
        *pos += (Py_ssize_t)*len_value;
}

/* ------------------------------------------- writing into a growing buffer (runtime's Out) */

/* Append the low n bytes of v (1 <= n <= 8), big-endian; the caller reserved the room. */
static inline void
put_be(Out *o, uint64_t v, int n)
{
    const uint64_t be = __builtin_bswap64(v << (8 * (8 - n))); /* its first n bytes */
    memcpy(o->data + o->len, &be, (size_t)n);
    o->len += n;
}

/* Append a zig-zag varint; the caller reserved the room. */
static inline void
put_varint(Out *o, int64_t v)
{
    o->len += write_varint(o->data + o->len, v);
}

static inline void
put_bytes(Out *o, const char *at, int64_t n)
{
    if (n > 0) {
        memcpy(o->data + o->len, at, (size_t)n);
        o->len += (Py_ssize_t)n;
    }
}

/* The bytes of a key, value or header value: 1 for bytes, 0 for None, -1 for anything
 * the Python builder should convert or refuse. */
static inline int
blob(PyObject *v, const char **at, int64_t *n)
{
    if (v == Py_None) {
        *n = -1;
        return 0;
    }
    if (!PyBytes_CheckExact(v))
        return -1;
    *at = PyBytes_AS_STRING(v);
    *n = PyBytes_GET_SIZE(v);
    return 1;
}

/* The int64 value of v when it is an int of width bytes (signed): 1, else 0 (the Python
 * builders convert or refuse anything else with their own message). */
int int_field(PyObject *v, int width, long long *out);

/* ------------------------------------------------------------ batch entries (_native_walk.c) */

/* One batch header as scan_batches writes it (native byte order); BATCH_FIELDS (_native_module.c)
 * describes the layout to NumPy. */
typedef struct {
    int64_t position, base_offset, base_timestamp, max_timestamp, producer_id;
    int32_t len_batch, partition_leader_epoch, last_offset_delta, base_sequence, num_records;
    uint32_t crc;
    int16_t attributes, producer_epoch;
    int8_t magic;
} BatchEntry;

/* Read the legacy message (magic 0 or 1) at p into e, as Kafka's legacy batches answer
 * for it: 1 when the generated parser accepts it (key and value lengths fill the message
 * exactly), 0 when not. */
int read_legacy(const uint8_t *p, int32_t size, BatchEntry *e);

/* Whether the CRC-32 of the legacy message at p (size bytes after its offset and length)
 * is expected: 1 or 0 (the CRC zlib.crc32 computes: runtime/crc.py). */
int legacy_crc_matches(const uint8_t *p, int32_t size, uint32_t expected);

/* Where a legacy message's key and value lie (from the message's first byte). */
typedef struct {
    Py_ssize_t len_key, key_at, len_value, value_at;
} LegacyLayout;

/* The layout of the legacy message at p (avail bytes there): 0, or -1 with ValueError. */
int legacy_layout(const uint8_t *p, Py_ssize_t avail, LegacyLayout *l);

/* --------------------------------------------------------------- the module (_native_module.c) */

/* Each file's functions, added to the module one table after another. */
extern PyMethodDef DECODE_METHODS[], LEGACY_METHODS[], WALK_METHODS[], COLUMNS_METHODS[],
    ENCODE_METHODS[], RECORD_METHODS[], TEXT_METHODS[];
extern PyTypeObject WalkerType, LazyFieldType;
extern const char COLUMNS_LAYOUT[];

#endif
