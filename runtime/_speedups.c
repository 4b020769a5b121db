/*
 * kafkacodec._speedups: an optional native fast path for the hottest loop of the project,
 * turning the records region of a v2 batch into Record objects.
 *
 * The generated parser (generated/kafka_record.py, from schemas/kafka_record.ksy) stays the
 * reference. This loop accepts exactly the inputs the generated parser accepts and yields
 * the same values; the moment it meets anything else (a bad length, an out-of-range or
 * overlong varint, a truncated field, bytes left over) it gives up and returns None, and
 * the caller re-decodes the region with the generated parser, which raises the precise
 * error with its byte position and schema path. Tests compare both paths on every vector
 * and on Hypothesis-generated and mutated batches.
 *
 * Nothing here allocates by an untrusted length: each key, value or header is bounded by
 * the bytes actually present, and the output list grows as records are found.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <stddef.h>
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

/* The byte layout of the formats, generated from schemas/ (generated/kafka_layout.h):
 * offsets, sizes, bounds and attribute bits are named there, never restated here. */
#include "kafka_layout.h"

/* Both v2 batches and legacy messages start with an offset and a length: the walk reads
 * those, then the magic byte at the same place in both. */
#define LOG_OVERHEAD KAFKA_RECORD_BATCH_REST_AT
_Static_assert(KAFKA_RECORD_BATCH_REST_AT == KAFKA_LEGACY_MESSAGE_REST_AT, "offset and length");
_Static_assert(KAFKA_RECORD_BATCH_MAGIC_AT == KAFKA_LEGACY_MESSAGE_MAGIC_AT, "magic byte");
_Static_assert(KAFKA_RECORD_BATCH_LEN_BATCH_AT == KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_AT, "length");

/* The Record slots, in the order the loop fills them. */
enum { F_OFFSET, F_TIMESTAMP, F_TIMESTAMP_TYPE, F_KEY, F_VALUE, F_HEADERS, F_SEQUENCE,
       F_CONTROL, F_ATTRIBUTES, N_FIELDS };
static const char *FIELD_NAMES[N_FIELDS] = {
    "offset", "timestamp", "timestamp_type", "key", "value", "headers", "sequence",
    "control", "attributes",
};

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

static int find_slot_offsets(PyTypeObject *type, Py_ssize_t offsets[N_FIELDS]);

/* Byte offsets of the Record slots, found through the class's member descriptors; the
 * last class asked about is remembered (and held, so that its address stays its own). */
static int
slot_offsets(PyTypeObject *type, Py_ssize_t offsets[N_FIELDS])
{
    static PyTypeObject *known = NULL;
    static Py_ssize_t known_offsets[N_FIELDS];
    if (type != known) {
        if (find_slot_offsets(type, known_offsets) < 0)
            return -1;
        Py_XSETREF(known, (PyTypeObject *)Py_NewRef(type));
    }
    memcpy(offsets, known_offsets, sizeof known_offsets);
    return 0;
}

static int
find_slot_offsets(PyTypeObject *type, Py_ssize_t offsets[N_FIELDS])
{
    for (int i = 0; i < N_FIELDS; i++) {
        PyObject *descr = PyDict_GetItemString(type->tp_dict, FIELD_NAMES[i]);
        if (descr == NULL || !PyObject_TypeCheck(descr, &PyMemberDescr_Type)) {
            PyErr_Format(PyExc_TypeError, "%s has no slot named %s", type->tp_name,
                         FIELD_NAMES[i]);
            return -1;
        }
        PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
        if (m->type != T_OBJECT_EX) {
            PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name,
                         FIELD_NAMES[i]);
            return -1;
        }
        offsets[i] = m->offset;
    }
    return 0;
}

/* The object slot at byte offset off of obj (a member descriptor's offset). */
#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))
#define SET(obj, field, value) (SLOT(obj, offsets[field]) = (value))

/* Put values[f] into every slot f of the record rec, but skip (already set): 0, or -1 when a
 * value is NULL (its making failed: rec is freed, with whatever values it took). */
static int
fill_record(PyObject *rec, const Py_ssize_t offsets[N_FIELDS], PyObject *values[N_FIELDS],
            int skip)
{
    int failed = 0;
    for (int f = 0; f < N_FIELDS; f++) {
        if (f == skip)
            continue;
        if (values[f] == NULL)
            failed = 1;
        SET(rec, f, values[f]);
    }
    if (failed) {
        Py_DECREF(rec);
        return -1;
    }
    return 0;
}

/* A bytes object for buf[p:p+n], or None for n == -1. */
static inline PyObject *
take_bytes(const uint8_t *buf, Py_ssize_t p, int64_t n)
{
    if (n < 0)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)buf + p, (Py_ssize_t)n);
}

/* One record of a records region, its framing checked as the generated parser checks it:
 * where its key, value and headers are, and the deltas to add to the batch's bases. */
typedef struct {
    int attributes;
    int64_t ts_delta, offset_delta, len_key, len_value, num_headers;
    Py_ssize_t key_at, value_at, headers_at;
} RecordView;

/* Scan the record at *pos (headers included) and move *pos past it. Returns -1 when the
 * record is not exactly what the generated parser accepts: the caller gives up. */
static int
scan_record(const uint8_t *buf, Py_ssize_t *pos, Py_ssize_t total, RecordView *r)
{
    int64_t len_body;
    Py_ssize_t p = *pos;
    if (read_varint(buf, &p, total, 5, &len_body) < 0 || len_body < 0 || len_body > total - p)
        return -1;
    const Py_ssize_t end = p + (Py_ssize_t)len_body;
    if (p >= end)
        return -1;
    r->attributes = (int8_t)buf[p++];
    if (read_varint(buf, &p, end, 10, &r->ts_delta) < 0
        || read_varint(buf, &p, end, 5, &r->offset_delta) < 0
        || read_varint(buf, &p, end, 5, &r->len_key) < 0 || r->len_key < -1
        || r->len_key > end - p)
        return -1;
    r->key_at = p;
    if (r->len_key > 0)
        p += (Py_ssize_t)r->len_key;
    if (read_varint(buf, &p, end, 5, &r->len_value) < 0 || r->len_value < -1
        || r->len_value > end - p)
        return -1;
    r->value_at = p;
    if (r->len_value > 0)
        p += (Py_ssize_t)r->len_value;
    if (read_varint(buf, &p, end, 5, &r->num_headers) < 0 || r->num_headers < 0
        || r->num_headers * 2 > end - p)
        return -1;
    r->headers_at = p;
    for (int64_t h = 0; h < r->num_headers; h++) {
        int64_t len_hkey = 0, len_hvalue = 0;
        if (read_varint(buf, &p, end, 5, &len_hkey) < 0 || len_hkey < 0 || len_hkey > end - p)
            return -1;
        p += (Py_ssize_t)len_hkey;
        if (read_varint(buf, &p, end, 5, &len_hvalue) < 0 || len_hvalue < -1
            || len_hvalue > end - p)
            return -1;
        if (len_hvalue > 0)
            p += (Py_ssize_t)len_hvalue;
    }
    if (p != end)
        return -1;
    *pos = p;
    return 0;
}

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

PyDoc_STRVAR(decode_v2_records_doc,
"decode_v2_records(data, count, base_offset, base_timestamp, log_append_time,\n"
"                  base_sequence, timestamp_type, record_type) -> list | None\n\n"
"The records of a v2 batch's (decompressed) records region as record_type objects with\n"
"absolute offsets, timestamps (log_append_time when it is not None) and sequences; None\n"
"when the region is not exactly what the generated parser accepts.");

/* Header keys repeat from record to record: the first few of a record are kept (ASCII
 * ones), and the next record whose key at that place has the same bytes shares the str. */
#define HKEY_CACHE 4

/* What every record of a batch shares, for decode_v2_records. */
typedef struct {
    long long base_offset, base_timestamp, base_sequence;
    PyObject *log_append_time, *timestamp_type;
    PyTypeObject *record_type;
    Py_ssize_t offsets[N_FIELDS];
    PyObject *hkeys[HKEY_CACHE];
} BatchCtx;

/* The str of a header key (UTF-8, surrogateescape, as the generated parser decodes it),
 * shared with the last record's key at the same place when the bytes are the same. */
static PyObject *
header_key_str(BatchCtx *b, int64_t h, const uint8_t *at, Py_ssize_t len)
{
    PyObject **kept = h < HKEY_CACHE ? &b->hkeys[h] : NULL;
    if (kept != NULL && *kept != NULL && PyUnicode_GET_LENGTH(*kept) == len
        && memcmp(PyUnicode_DATA(*kept), at, (size_t)len) == 0)
        return Py_NewRef(*kept);
    PyObject *key = PyUnicode_DecodeUTF8((const char *)at, len, "surrogateescape");
    if (key != NULL && kept != NULL && PyUnicode_IS_ASCII(key))
        Py_XSETREF(*kept, Py_NewRef(key));
    return key;
}

/* A record's headers as a list of (str, bytes | None); NULL with an exception set. */
static PyObject *
make_headers(BatchCtx *b, const uint8_t *buf, const RecordView *r)
{
    PyObject *headers = PyList_New((Py_ssize_t)r->num_headers);
    if (headers == NULL)
        return NULL;
    Py_ssize_t hpos = r->headers_at;
    for (int64_t h = 0; h < r->num_headers; h++) {
        Py_ssize_t hkey_at, hvalue_at;
        int64_t len_hkey = 0, len_hvalue = 0;
        next_header(buf, &hpos, &hkey_at, &len_hkey, &hvalue_at, &len_hvalue);
        PyObject *hkey = header_key_str(b, h, buf + hkey_at, (Py_ssize_t)len_hkey);
        PyObject *hvalue = hkey ? take_bytes(buf, hvalue_at, len_hvalue) : NULL;
        PyObject *pair = hvalue ? PyTuple_New(2) : NULL;
        if (pair == NULL) {
            Py_XDECREF(hkey);
            Py_XDECREF(hvalue);
            Py_DECREF(headers);
            return NULL;
        }
        PyTuple_SET_ITEM(pair, 0, hkey);
        PyTuple_SET_ITEM(pair, 1, hvalue);
        PyList_SET_ITEM(headers, (Py_ssize_t)h, pair);
    }
    return headers;
}

/* The Record object of a scanned record into *out: 1, 0 when the loop gives up (an offset
 * or timestamp that overflows: the parser answers), -1 with an exception set. */
static int
make_record(BatchCtx *b, const uint8_t *buf, const RecordView *r, PyObject **out)
{
    const Py_ssize_t *offsets = b->offsets;
    /* Python's integers do not wrap; on the (corrupt) overflow the parser answers. */
    long long offset, ts;
    if (__builtin_add_overflow(b->base_offset, (long long)r->offset_delta, &offset)
        || __builtin_add_overflow(b->base_timestamp, (long long)r->ts_delta, &ts))
        return 0;
    PyObject *headers = make_headers(b, buf, r);
    if (headers == NULL)
        return -1;
    PyObject *rec = b->record_type->tp_alloc(b->record_type, 0);
    if (rec == NULL) {
        Py_DECREF(headers);
        return -1;
    }
    /* Fill every slot first (tp_alloc zeroes them), so a failure below frees cleanly. */
    SET(rec, F_HEADERS, headers);
    PyObject *timestamp = b->log_append_time != Py_None ? Py_NewRef(b->log_append_time)
                                                        : PyLong_FromLongLong(ts);
    const long long sequence = b->base_sequence == -1
        ? -1 : (long long)(((uint64_t)b->base_sequence + (uint64_t)r->offset_delta) & 0x7FFFFFFF);
    PyObject *values[] = {
        [F_OFFSET] = PyLong_FromLongLong(offset),
        [F_TIMESTAMP] = timestamp,
        [F_TIMESTAMP_TYPE] = Py_NewRef(b->timestamp_type),
        [F_KEY] = take_bytes(buf, r->key_at, r->len_key),
        [F_VALUE] = take_bytes(buf, r->value_at, r->len_value),
        [F_SEQUENCE] = PyLong_FromLongLong(sequence),
        [F_CONTROL] = Py_NewRef(Py_None),
        [F_ATTRIBUTES] = PyLong_FromLong(r->attributes),
    };
    if (fill_record(rec, offsets, values, F_HEADERS) < 0)
        return -1;
    *out = rec;
    return 1;
}

static PyObject *
decode_v2_records(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count;
    BatchCtx b;
    memset(b.hkeys, 0, sizeof b.hkeys);
    if (!PyArg_ParseTuple(args, "y*nLLOLUO!:decode_v2_records", &view, &count, &b.base_offset,
                          &b.base_timestamp, &b.log_append_time, &b.base_sequence,
                          &b.timestamp_type, &PyType_Type, &b.record_type))
        return NULL;
    PyObject *out = NULL;
    const uint8_t *buf = (const uint8_t *)view.buf;
    const Py_ssize_t total = view.len;
    Py_ssize_t pos = 0;
    if (slot_offsets(b.record_type, b.offsets) < 0)
        goto error;
    /* Every record takes at least 7 bytes; a count that cannot fit is the parser's to report. */
    if (count < 0 || count > total / 7)
        goto give_up;
    out = PyList_New(0);
    if (out == NULL)
        goto error;
    for (Py_ssize_t i = 0; i < count; i++) {
        RecordView r;
        PyObject *rec = NULL;
        if (scan_record(buf, &pos, total, &r) < 0)
            goto give_up;
        const int made = make_record(&b, buf, &r, &rec);
        if (made == 0)
            goto give_up;
        if (made < 0)
            goto error;
        const int appended = PyList_Append(out, rec);
        Py_DECREF(rec);
        if (appended < 0)
            goto error;
    }
    if (pos != total)
        goto give_up;
    goto done;
give_up:
    Py_XDECREF(out);
    out = Py_NewRef(Py_None);
    goto done;
error:
    Py_CLEAR(out);
done:
    for (int k = 0; k < HKEY_CACHE; k++)
        Py_XDECREF(b.hkeys[k]);
    PyBuffer_Release(&view);
    return out;
}


/* ------------------------------------------------------------------------ encoding */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Out;

static int
out_reserve(Out *o, Py_ssize_t more)
{
    if (o->len + more <= o->cap)
        return 0;
    Py_ssize_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + more)
        cap *= 2;
    char *p = PyMem_Realloc(o->data, (size_t)cap);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->data = p;
    o->cap = cap;
    return 0;
}

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

/* The int64 value of v when it is an int of width bytes (signed): 1, else 0 (the Python
 * builders convert or refuse anything else with their own message). */
static int
int_field(PyObject *v, int width, long long *out)
{
    int overflow = 0;
    if (!PyLong_CheckExact(v))
        return 0;
    *out = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (*out == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    return width == 8 || (*out >= -(1LL << (8 * width - 1)) && *out < (1LL << (8 * width - 1)));
}

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
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    while (u >= 0x80) {
        o->data[o->len++] = (char)((u & 0x7F) | 0x80);
        u >>= 7;
    }
    o->data[o->len++] = (char)u;
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

#define GET(obj, field) SLOT(obj, offsets[field])

PyDoc_STRVAR(encode_v2_records_doc,
"encode_v2_records(records, base_offset, base_timestamp, record_type)\n"
"    -> (region, first_timestamp, max_timestamp, last_offset_delta) | None\n\n"
"The uncompressed records region of a v2 batch for a list of record_type objects (or\n"
"5-tuples in its order: offset, timestamp, key, value, headers), as the\n"
"generated builder writes it; None when a record holds anything but ints, bytes, None\n"
"and (str, bytes | None) headers, or a delta does not fit, so that the Python builder\n"
"converts or refuses it with its own message. base_timestamp None means the first\n"
"record's timestamp.");

/* One record as encode_v2_records reads it: its deltas, key, value and headers. */
typedef struct {
    long long delta, ts_delta;
    const char *key, *value;
    int64_t len_key, len_value;
    PyObject *headers;
} RecordIn;

/* The offset, timestamp, key, value and headers of r, a record_type object or a producer's
 * plain data in Record's order (a 5-tuple), borrowed into f (NULL for an unset slot): 1, or
 * 0 for a tuple of another length (the Python builders convert those). */
enum { R_OFFSET, R_TIMESTAMP, R_KEY, R_VALUE, R_HEADERS, N_GIVEN };

static int
given_fields(PyObject *r, const Py_ssize_t *offsets, PyObject *f[N_GIVEN])
{
    if (PyTuple_CheckExact(r)) {
        if (PyTuple_GET_SIZE(r) != N_GIVEN)
            return 0;
        for (int k = 0; k < N_GIVEN; k++)
            f[k] = PyTuple_GET_ITEM(r, k);
        return 1;
    }
    const int slots[N_GIVEN] = {F_OFFSET, F_TIMESTAMP, F_KEY, F_VALUE, F_HEADERS};
    for (int k = 0; k < N_GIVEN; k++)
        f[k] = GET(r, slots[k]);
    return 1;
}

/* Read record i (an object of record_type): 1 when the loop takes it, 0 when it gives up
 * (anything but ints, bytes, None and a list of headers; a delta that does not fit). The
 * first timestamp becomes *base_ts when the caller gave none. */
static int
read_record(PyObject *r, Py_ssize_t i, const Py_ssize_t *offsets, long long base_offset,
            int *have_base, long long *base_ts, RecordIn *in, long long *ts)
{
    PyObject *f[N_GIVEN];
    if (!given_fields(r, offsets, f))
        return 0;
    PyObject *off_obj = f[R_OFFSET], *ts_obj = f[R_TIMESTAMP], *key = f[R_KEY],
             *value = f[R_VALUE], *headers = f[R_HEADERS];
    if (off_obj == NULL || ts_obj == NULL || headers == NULL || !PyList_CheckExact(headers)
        || !PyLong_CheckExact(ts_obj) || (off_obj != Py_None && !PyLong_CheckExact(off_obj)))
        return 0;
    int overflow = 0;
    *ts = PyLong_AsLongLongAndOverflow(ts_obj, &overflow);
    if (overflow)
        return 0;
    if (off_obj == Py_None) {
        in->delta = i;
    } else {
        long long off = PyLong_AsLongLongAndOverflow(off_obj, &overflow);
        if (overflow || __builtin_sub_overflow(off, base_offset, &in->delta))
            return 0;
    }
    if (in->delta < INT32_MIN || in->delta > INT32_MAX)
        return 0;
    if (!*have_base) {
        *base_ts = *ts;
        *have_base = 1;
    }
    if (__builtin_sub_overflow(*ts, *base_ts, &in->ts_delta))
        return 0;
    if (key == NULL || value == NULL || blob(key, &in->key, &in->len_key) < 0
        || blob(value, &in->value, &in->len_value) < 0)
        return 0;
    if (in->len_key > INT32_MAX || in->len_value > INT32_MAX)
        return 0;
    in->headers = headers;
    return 1;
}

/* A header key's bytes: an ASCII str's own, otherwise encoded into *scratch with the
 * builder's codec (UTF-8, surrogateescape). -1 with an exception set when it cannot be. */
static int
header_key(PyObject *hkey, PyObject **scratch, const char **at, Py_ssize_t *len)
{
    if (PyUnicode_IS_ASCII(hkey)) {
        *at = (const char *)PyUnicode_DATA(hkey);
        *len = PyUnicode_GET_LENGTH(hkey);
        return 0;
    }
    Py_XSETREF(*scratch, PyUnicode_AsEncodedString(hkey, "utf-8", "surrogateescape"));
    if (*scratch == NULL)
        return -1;
    *at = PyBytes_AS_STRING(*scratch);
    *len = PyBytes_GET_SIZE(*scratch);
    return 0;
}

/* The size of a record's body (everything after its length varint) into *body: 1, or 0
 * when a header is not a (str, bytes | None) pair the loop takes. */
static int
measure_record(const RecordIn *in, PyObject **scratch, int64_t *body)
{
    const Py_ssize_t num_headers = PyList_GET_SIZE(in->headers);
    int64_t n = 1 + varint_size(in->ts_delta) + varint_size(in->delta)
        + varint_size(in->len_key) + (in->len_key > 0 ? in->len_key : 0)
        + varint_size(in->len_value) + (in->len_value > 0 ? in->len_value : 0)
        + varint_size(num_headers);
    for (Py_ssize_t h = 0; h < num_headers; h++) {
        PyObject *pair = PyList_GET_ITEM(in->headers, h);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2
            || !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 0)))
            return 0;
        const char *hv, *kb;
        int64_t len_hvalue;
        Py_ssize_t len_hkey;
        if (blob(PyTuple_GET_ITEM(pair, 1), &hv, &len_hvalue) < 0 || len_hvalue > INT32_MAX)
            return 0;
        if (header_key(PyTuple_GET_ITEM(pair, 0), scratch, &kb, &len_hkey) < 0) {
            PyErr_Clear(); /* the generated builder names what it cannot encode */
            return 0;
        }
        n += varint_size(len_hkey) + len_hkey + varint_size(len_hvalue)
            + (len_hvalue > 0 ? len_hvalue : 0);
    }
    *body = n;
    return 1;
}

static inline void
put_bytes(Out *o, const char *at, int64_t n)
{
    if (n > 0) {
        memcpy(o->data + o->len, at, (size_t)n);
        o->len += (Py_ssize_t)n;
    }
}

/* Write a measured record (room for body + 5 bytes reserved): 0, or -1 with an exception. */
static int
write_record(Out *o, const RecordIn *in, int64_t body, PyObject **scratch)
{
    put_varint(o, body);
    o->data[o->len++] = 0; /* attributes: unused, always 0 */
    put_varint(o, in->ts_delta);
    put_varint(o, in->delta);
    put_varint(o, in->len_key);
    put_bytes(o, in->key, in->len_key);
    put_varint(o, in->len_value);
    put_bytes(o, in->value, in->len_value);
    const Py_ssize_t num_headers = PyList_GET_SIZE(in->headers);
    put_varint(o, num_headers);
    for (Py_ssize_t h = 0; h < num_headers; h++) {
        PyObject *pair = PyList_GET_ITEM(in->headers, h);
        const char *kb, *hv = NULL;
        Py_ssize_t len_hkey;
        if (header_key(PyTuple_GET_ITEM(pair, 0), scratch, &kb, &len_hkey) < 0)
            return -1;
        int64_t len_hvalue = -1;
        blob(PyTuple_GET_ITEM(pair, 1), &hv, &len_hvalue);
        put_varint(o, len_hkey);
        put_bytes(o, kb, len_hkey);
        put_varint(o, len_hvalue);
        put_bytes(o, hv, len_hvalue);
    }
    return 0;
}

/* What a records region tells its batch's header. */
typedef struct {
    long long first_ts, max_ts, last_delta; /* -1 each for no records */
} RegionSummary;

/* Append the records region of records (record_type objects or 5-tuples) to o: 1, 0 when
 * the Python builder must convert or refuse something, -1 with an exception. base_ts_obj
 * None: the first record's timestamp is the base. */
static int
encode_region(PyObject *records, long long base_offset, PyObject *base_ts_obj,
              PyTypeObject *record_type, Out *o, RegionSummary *sum)
{
    Py_ssize_t offsets[N_FIELDS];
    if (slot_offsets(record_type, offsets) < 0)
        return -1;
    PyObject *scratch = NULL; /* a non-ASCII header key, encoded */
    const Py_ssize_t n = PyList_GET_SIZE(records);
    long long base_ts = 0, max_ts = -1, last_delta = -1;
    int have_base = base_ts_obj != Py_None, got = 1;
    if (have_base) {
        base_ts = PyLong_AsLongLong(base_ts_obj);
        if (base_ts == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
    }
    for (Py_ssize_t i = 0; i < n && got == 1; i++) {
        PyObject *r = PyList_GET_ITEM(records, i);
        RecordIn in;
        long long ts;
        int64_t body;
        if ((Py_TYPE(r) != record_type && !PyTuple_CheckExact(r))
            || !read_record(r, i, offsets, base_offset, &have_base, &base_ts, &in, &ts)
            || !measure_record(&in, &scratch, &body)
            || body > INT32_MAX) /* the generated builder refuses it with its own message */
            got = 0;
        else if (out_reserve(o, (Py_ssize_t)body + 5) < 0 || write_record(o, &in, body, &scratch) < 0)
            got = -1;
        else {
            if (ts > max_ts)
                max_ts = ts;
            if (in.delta > last_delta)
                last_delta = in.delta;
        }
    }
    Py_XDECREF(scratch);
    sum->first_ts = n ? base_ts : -1;
    sum->max_ts = max_ts;
    sum->last_delta = last_delta;
    return got;
}

static PyObject *
encode_v2_records(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *records, *base_obj, *base_ts_obj;
    long long base_offset;
    PyTypeObject *record_type;
    if (!PyArg_ParseTuple(args, "O!OOO!:encode_v2_records", &PyList_Type, &records, &base_obj,
                          &base_ts_obj, &PyType_Type, &record_type))
        return NULL;
    if (!int_field(base_obj, 8, &base_offset))
        Py_RETURN_NONE;
    Out o = {NULL, 0, 0};
    RegionSummary sum;
    const int got = encode_region(records, base_offset, base_ts_obj, record_type, &o, &sum);
    PyObject *region = got == 1 ? PyBytes_FromStringAndSize(o.data ? o.data : "", o.len) : NULL;
    PyMem_Free(o.data);
    if (got <= 0)
        return got < 0 ? NULL : Py_NewRef(Py_None);
    if (region == NULL)
        return NULL;
    PyObject *first = PyList_GET_SIZE(records) ? PyLong_FromLongLong(sum.first_ts) : Py_NewRef(Py_None);
    return Py_BuildValue("(NNLL)", region, first, sum.max_ts, sum.last_delta);
}

PyDoc_STRVAR(encode_v2_batch_doc,
"encode_v2_batch(records, base_offset, record_type, attributes, partition_leader_epoch,\n"
"                producer_id, producer_epoch, base_sequence, max_timestamp, compress,\n"
"                codec, crc32c) -> bytes | None\n\n"
"A whole v2 batch, as the generated builder writes it from encode_v2_records' region and\n"
"what it derives (first and max timestamp, last offset delta, count). max_timestamp None:\n"
"the records' largest (else LogAppendTime's stamp); compress(region, codec, 2) makes the\n"
"records region of a codec other than 0; crc32c(buffer) -> int. None when a record or a\n"
"header value is anything the Python builder must convert or refuse (a value that does\n"
"not fit its field), which then writes the batch or raises its own error.");

static PyObject *
encode_v2_batch(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *records, *base_obj, *fields[5], *max_ts_obj, *compress, *crc32c;
    long long base_offset;
    PyTypeObject *record_type;
    int codec;
    if (!PyArg_ParseTuple(args, "O!OO!OOOOOOOiO:encode_v2_batch", &PyList_Type, &records,
                          &base_obj, &PyType_Type, &record_type, &fields[0], &fields[1],
                          &fields[2], &fields[3], &fields[4], &max_ts_obj, &compress, &codec,
                          &crc32c))
        return NULL;
    /* attributes, partition_leader_epoch, producer_id, producer_epoch, base_sequence */
    static const int widths[5] = {2, 4, 8, 2, 4};
    long long v[6];
    for (int k = 0; k < 5; k++)
        if (!int_field(fields[k], widths[k], &v[k]))
            Py_RETURN_NONE;
    if (!int_field(base_obj, 8, &base_offset)
        || (max_ts_obj != Py_None && !int_field(max_ts_obj, 8, &v[5])))
        Py_RETURN_NONE;
    /* the records after room for the header, which is written once their region is known */
    Out o = {NULL, 0, 0};
    RegionSummary sum;
    PyObject *packed = NULL, *batch = NULL;
    if (out_reserve(&o, KAFKA_RECORD_BATCH_FIXED_SIZE) < 0)
        return NULL;
    o.len = KAFKA_RECORD_BATCH_FIXED_SIZE;
    const int got = encode_region(records, base_offset, Py_None, record_type, &o, &sum);
    if (got <= 0) {
        PyMem_Free(o.data);
        return got < 0 ? NULL : Py_NewRef(Py_None);
    }
    const char *region = o.data + KAFKA_RECORD_BATCH_FIXED_SIZE;
    Py_ssize_t region_len = o.len - KAFKA_RECORD_BATCH_FIXED_SIZE;
    if (codec != 0) {
        PyObject *plain = PyBytes_FromStringAndSize(region, region_len);
        packed = plain ? PyObject_CallFunction(compress, "Oii", plain, codec, 2) : NULL;
        Py_XDECREF(plain);
        if (packed == NULL || !PyBytes_Check(packed)) {
            /* the generated builder compresses again and reports the failure, located */
            PyErr_Clear();
            Py_XDECREF(packed);
            PyMem_Free(o.data);
            Py_RETURN_NONE;
        }
        region = PyBytes_AS_STRING(packed);
        region_len = PyBytes_GET_SIZE(packed);
    }
    if (region_len > INT32_MAX - KAFKA_RECORD_BATCH_FIXED_SIZE) { /* the builder refuses it */
        Py_XDECREF(packed);
        PyMem_Free(o.data);
        Py_RETURN_NONE;
    }
    const Py_ssize_t total = KAFKA_RECORD_BATCH_FIXED_SIZE + region_len;
    batch = PyBytes_FromStringAndSize(NULL, total);
    if (batch == NULL)
        goto error;
    Out b = {PyBytes_AS_STRING(batch), 0, total};
    put_be(&b, (uint64_t)base_offset, KAFKA_RECORD_BATCH_BASE_OFFSET_SIZE);
    put_be(&b, (uint64_t)(total - KAFKA_RECORD_BATCH_REST_AT), KAFKA_RECORD_BATCH_LEN_BATCH_SIZE);
    put_be(&b, (uint64_t)v[1], KAFKA_RECORD_BATCH_PARTITION_LEADER_EPOCH_SIZE);
    put_be(&b, KAFKA_RECORD_BATCH_MAGIC_EQ, KAFKA_RECORD_BATCH_MAGIC_SIZE);
    put_be(&b, 0, KAFKA_RECORD_BATCH_CRC_SIZE); /* once the bytes it covers are written */
    put_be(&b, (uint64_t)v[0], KAFKA_RECORD_BATCH_ATTRIBUTES_SIZE);
    put_be(&b, (uint64_t)sum.last_delta, KAFKA_RECORD_BATCH_LAST_OFFSET_DELTA_SIZE);
    put_be(&b, (uint64_t)sum.first_ts, KAFKA_RECORD_BATCH_BASE_TIMESTAMP_SIZE);
    put_be(&b, (uint64_t)(max_ts_obj != Py_None ? v[5] : sum.max_ts),
           KAFKA_RECORD_BATCH_MAX_TIMESTAMP_SIZE);
    put_be(&b, (uint64_t)v[2], KAFKA_RECORD_BATCH_PRODUCER_ID_SIZE);
    put_be(&b, (uint64_t)v[3], KAFKA_RECORD_BATCH_PRODUCER_EPOCH_SIZE);
    put_be(&b, (uint64_t)v[4], KAFKA_RECORD_BATCH_BASE_SEQUENCE_SIZE);
    put_be(&b, (uint64_t)PyList_GET_SIZE(records), KAFKA_RECORD_BATCH_NUM_RECORDS_SIZE);
    if (b.len != KAFKA_RECORD_BATCH_FIXED_SIZE) { /* the layout's fields, in order */
        PyErr_SetString(PyExc_SystemError, "encode_v2_batch: the header is not the layout's");
        goto error;
    }
    memcpy(b.data + b.len, region, (size_t)region_len);
    PyObject *covered = PyMemoryView_FromMemory(b.data + KAFKA_RECORD_BATCH_CRC_FROM,
                                                total - KAFKA_RECORD_BATCH_CRC_FROM, PyBUF_READ);
    PyObject *crc = covered ? PyObject_CallOneArg(crc32c, covered) : NULL;
    Py_XDECREF(covered);
    const unsigned long value = crc ? PyLong_AsUnsignedLong(crc) : 0;
    Py_XDECREF(crc);
    if (crc == NULL || PyErr_Occurred())
        goto error;
    Out at_crc = {b.data, KAFKA_RECORD_BATCH_CRC_AT, total};
    put_be(&at_crc, (uint64_t)value, KAFKA_RECORD_BATCH_CRC_SIZE);
    Py_XDECREF(packed);
    PyMem_Free(o.data);
    return batch;
error:
    Py_XDECREF(batch);
    Py_XDECREF(packed);
    PyMem_Free(o.data);
    return NULL;
}


PyDoc_STRVAR(reencode_v2_records_doc,
"reencode_v2_records(region, count) -> bytes | None\n\n"
"A v2 batch's (decompressed) records region rebuilt from the decoded fields of its count\n"
"records (attributes, deltas, key, value, headers) as Kafka's DefaultRecord.writeTo\n"
"writes them: every length and varint in its shortest form. None when the region is not\n"
"exactly count records the generated parser accepts (which then names what is wrong).");

/* The bytes a header takes after the record's fields (both lengths and their data). */
static int64_t
headers_size(const uint8_t *buf, const RecordView *r)
{
    Py_ssize_t p = r->headers_at, key_at, value_at;
    int64_t n = 0, len_hkey, len_hvalue;
    for (int64_t h = 0; h < r->num_headers; h++) {
        next_header(buf, &p, &key_at, &len_hkey, &value_at, &len_hvalue);
        n += varint_size(len_hkey) + len_hkey + varint_size(len_hvalue)
            + (len_hvalue > 0 ? len_hvalue : 0);
    }
    return n;
}

static PyObject *
reencode_v2_records(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "y*n:reencode_v2_records", &view, &count))
        return NULL;
    const uint8_t *buf = view.buf;
    const Py_ssize_t total = view.len;
    PyObject *out = NULL;
    if (count < 0 || count > total) /* a record takes at least one byte */
        goto give_up;
    /* Never longer than the region: each field is copied, or written in its shortest form
     * where the region may have used a longer one. */
    out = PyBytes_FromStringAndSize(NULL, total);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Out o = {PyBytes_AS_STRING(out), 0, total};
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        RecordView r;
        if (scan_record(buf, &pos, total, &r) < 0)
            goto give_up;
        const int64_t body = 1 + varint_size(r.ts_delta) + varint_size(r.offset_delta)
            + varint_size(r.len_key) + (r.len_key > 0 ? r.len_key : 0)
            + varint_size(r.len_value) + (r.len_value > 0 ? r.len_value : 0)
            + varint_size(r.num_headers) + headers_size(buf, &r);
        put_varint(&o, body);
        o.data[o.len++] = (char)r.attributes;
        put_varint(&o, r.ts_delta);
        put_varint(&o, r.offset_delta);
        put_varint(&o, r.len_key);
        put_bytes(&o, (const char *)buf + r.key_at, r.len_key);
        put_varint(&o, r.len_value);
        put_bytes(&o, (const char *)buf + r.value_at, r.len_value);
        put_varint(&o, r.num_headers);
        Py_ssize_t p = r.headers_at, key_at, value_at;
        int64_t len_hkey, len_hvalue;
        for (int64_t h = 0; h < r.num_headers; h++) {
            next_header(buf, &p, &key_at, &len_hkey, &value_at, &len_hvalue);
            put_varint(&o, len_hkey);
            put_bytes(&o, (const char *)buf + key_at, len_hkey);
            put_varint(&o, len_hvalue);
            put_bytes(&o, (const char *)buf + value_at, len_hvalue);
        }
    }
    if (pos != total) /* bytes after the last record: not a region the builder writes */
        goto give_up;
    PyBuffer_Release(&view);
    if (o.len != total && _PyBytes_Resize(&out, o.len) < 0)
        return NULL;
    return out;
give_up:
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}


/* ------------------------------------------------------------------------ columns */

/* Column buffers for decode_v2_columns: bytes objects, sized from the record count and the
 * input where that bounds them, else grown by doubling, and cut to their length at the end. */
typedef struct {
    PyObject *obj;
    char *data;
    Py_ssize_t len, cap;
} Col;

/* The buffers of KafkaRecord.column_buffers (generated/kafka_record.py), in its order:
 * COLUMNS_LAYOUT below spells the layout out and a test compares it with the schema's. */
typedef struct {
    Col attributes, timestamp_delta, offset_delta, key_valid, key_offsets, key_data,
        value_valid, value_offsets, value_data, header_offsets, hkey_offsets, hkey_data,
        hvalue_valid, hvalue_offsets, hvalue_data;
} Columns;
#define N_COLUMNS 15
#define COLUMNS_LAYOUT                                                                  \
    "attributes:int:b timestamp_delta:int:q offset_delta:int:i key:binary:null "        \
    "value:binary:null headers:list headers.key:string headers.value:binary:null"

/* Room for n more bytes in o (doubling): 0, or -1 with MemoryError. */
static int
grow(Col *o, Py_ssize_t n)
{
    Py_ssize_t cap = o->cap > PY_SSIZE_T_MAX / 2 ? PY_SSIZE_T_MAX : 2 * o->cap;
    if (cap - o->len < n)
        cap = o->len + n;
    if (_PyBytes_Resize(&o->obj, cap < 64 ? 64 : cap) < 0) /* obj is NULL after a failure */
        return -1;
    o->data = PyBytes_AS_STRING(o->obj);
    o->cap = PyBytes_GET_SIZE(o->obj);
    return 0;
}

/* Room for n more bytes in o: 0, or -1 with MemoryError. The appends below do not check:
 * each record first reserves what it can append. */
static inline int
reserve(Col *o, Py_ssize_t n)
{
    return o->cap - o->len >= n ? 0 : grow(o, n);
}

static inline void
append(Col *o, const void *p, Py_ssize_t n)
{
    memcpy(o->data + o->len, p, (size_t)n);
    o->len += n;
}

static inline void append_i64(Col *o, int64_t v) { append(o, &v, 8); }
static inline void append_i32(Col *o, int32_t v) { append(o, &v, 4); }
static inline void append_u8(Col *o, uint8_t v) { o->data[o->len++] = (char)v; }

/* A binary value: its validity byte (when valid is not NULL), its end offset and its bytes
 * (n == -1 is null). No offset passes INT32_MAX: a column holds bytes of the regions, which
 * decode_v2_columns takes up to INT32_MAX in all. */
static inline void
append_blob(Col *valid, Col *offsets, Col *data, const uint8_t *p, int64_t n)
{
    if (valid != NULL)
        append_u8(valid, n >= 0);
    if (n > 0)
        append(data, p, (Py_ssize_t)n);
    append_i32(offsets, (int32_t)data->len);
}

PyDoc_STRVAR(decode_v2_columns_doc,
"decode_v2_columns(regions) -> tuple of 15 bytes | None\n\n"
"The records of several v2 batches' records regions, given as a list of (region, count),\n"
"as the buffers KafkaRecord.parse_columns fills (kafkacodec._prim.column_buffers order,\n"
"spelled out in COLUMNS_LAYOUT), for all regions end to end. None when any region is not\n"
"exactly what the generated parser accepts or the regions pass 2 GiB in all: the caller\n"
"then decodes those regions with the generated code, which raises the precise error.");

/* Append the records of a region, each checked exactly as the generated parser checks it
 * (count of them, filling the region exactly). The per-record columns have room for every
 * record of every region (decode_v2_columns sizes them from the counts); the others are
 * reserved record by record, from what the scan found. 0; -2 when the region is not
 * accepted (the caller gives up); -1 with MemoryError. */
static int
fill_region(const uint8_t *buf, Py_ssize_t total, Py_ssize_t count, Columns *c,
            int32_t *header_count)
{
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        RecordView rec;
        const Py_ssize_t at = pos;
        if (scan_record(buf, &pos, total, &rec) < 0)
            return -2;
        if (reserve(&c->key_data, rec.len_key) < 0 || reserve(&c->value_data, rec.len_value) < 0)
            return -1;
        if (rec.num_headers > 0) {
            /* the header keys and values lie inside the record, pos - at bytes */
            const Py_ssize_t h = (Py_ssize_t)rec.num_headers;
            if (reserve(&c->hkey_offsets, 4 * h) < 0 || reserve(&c->hvalue_offsets, 4 * h) < 0
                || reserve(&c->hvalue_valid, h) < 0 || reserve(&c->hkey_data, pos - at) < 0
                || reserve(&c->hvalue_data, pos - at) < 0)
                return -1;
            Py_ssize_t hpos = rec.headers_at;
            for (Py_ssize_t k = 0; k < h; k++) {
                Py_ssize_t hkey_at, hvalue_at;
                int64_t len_hkey = 0, len_hvalue = 0;
                next_header(buf, &hpos, &hkey_at, &len_hkey, &hvalue_at, &len_hvalue);
                append_blob(NULL, &c->hkey_offsets, &c->hkey_data, buf + hkey_at, len_hkey);
                append_blob(&c->hvalue_valid, &c->hvalue_offsets, &c->hvalue_data,
                            buf + hvalue_at, len_hvalue);
            }
            *header_count += (int32_t)h; /* at most total / 2 of them */
        }
        append_blob(&c->key_valid, &c->key_offsets, &c->key_data, buf + rec.key_at, rec.len_key);
        append_blob(&c->value_valid, &c->value_offsets, &c->value_data, buf + rec.value_at,
                    rec.len_value);
        append_u8(&c->attributes, (uint8_t)rec.attributes);
        append_i64(&c->timestamp_delta, rec.ts_delta);
        append_i32(&c->offset_delta, (int32_t)rec.offset_delta);
        append_i32(&c->header_offsets, *header_count);
    }
    return pos == total ? 0 : -2;
}

static PyObject *
decode_v2_columns(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *regions;
    if (!PyArg_ParseTuple(args, "O!:decode_v2_columns", &PyList_Type, &regions))
        return NULL;
    const Py_ssize_t n_regions = PyList_GET_SIZE(regions);
    Columns c;
    memset(&c, 0, sizeof c);
    Col *all = (Col *)&c;
    PyObject *result = NULL;
    Py_ssize_t held = 0;
    Py_buffer *views = PyMem_Calloc((size_t)(n_regions ? n_regions : 1), sizeof(Py_buffer));
    Py_ssize_t *counts = PyMem_Calloc((size_t)(n_regions ? n_regions : 1), sizeof(Py_ssize_t));
    if (views == NULL || counts == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    for (; held < n_regions; held++) {
        PyObject *item = PyList_GET_ITEM(regions, held);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_SetString(PyExc_TypeError, "regions are (region, count) tuples");
            goto error;
        }
        if (!PyArg_ParseTuple(item, "y*n:region", &views[held], &counts[held]))
            goto error;
    }

    /* One pass: the records checked and appended. The record count (each record takes at
     * least 7 bytes) sizes the per-record columns; the others start from a guess and
     * grow. Input past 2 GiB is the generated code's (Arrow's int32 offsets). */
    Py_ssize_t R = 0, total = 0;
    for (Py_ssize_t r = 0; r < n_regions; r++) {
        if (counts[r] < 0 || counts[r] > views[r].len / 7)
            goto give_up;
        R += counts[r];
        total += views[r].len;
    }
    if (total > INT32_MAX)
        goto give_up;
    const Py_ssize_t sizes[N_COLUMNS] = {
        R, 8 * R, 4 * R, R, 4 * (R + 1), total / 8, R, 4 * (R + 1), total,
        4 * (R + 1), 4 * (R + 1), total / 16, R, 4 * (R + 1), total / 16,
    };
    for (int i = 0; i < N_COLUMNS; i++) {
        all[i].obj = PyBytes_FromStringAndSize(NULL, sizes[i]);
        if (all[i].obj == NULL)
            goto error;
        all[i].data = PyBytes_AS_STRING(all[i].obj);
        all[i].cap = sizes[i];
    }
    /* every offsets column starts with 0 (their sizes above have room for it) */
    append_i32(&c.key_offsets, 0);
    append_i32(&c.value_offsets, 0);
    append_i32(&c.header_offsets, 0);
    append_i32(&c.hkey_offsets, 0);
    append_i32(&c.hvalue_offsets, 0);
    int32_t header_count = 0;
    for (Py_ssize_t r = 0; r < n_regions; r++) {
        const int got = fill_region(views[r].buf, views[r].len, counts[r], &c, &header_count);
        if (got == -2)
            goto give_up;
        if (got < 0)
            goto error;
    }
    for (int i = 0; i < N_COLUMNS; i++) /* each cut to what it holds */
        if (all[i].len != all[i].cap && _PyBytes_Resize(&all[i].obj, all[i].len) < 0)
            goto error;
    result = PyTuple_New(N_COLUMNS);
    if (result == NULL)
        goto error;
    for (int i = 0; i < N_COLUMNS; i++) {
        PyTuple_SET_ITEM(result, i, all[i].obj);
        all[i].obj = NULL;
    }
    goto done;
give_up:
    result = Py_None;
    Py_INCREF(result);
    goto done;
error:
    Py_CLEAR(result);
done:
    for (int i = 0; i < N_COLUMNS; i++)
        Py_CLEAR(all[i].obj);
    for (Py_ssize_t r = 0; r < held; r++)
        PyBuffer_Release(&views[r]);
    PyMem_Free(views);
    PyMem_Free(counts);
    return result;
}


/* --------------------------------------------------------------------- batch walk */

/* One batch header as scan_batches writes it (native byte order); BATCH_FIELDS below
 * describes the layout to NumPy. */
typedef struct {
    int64_t position, base_offset, base_timestamp, max_timestamp, producer_id;
    int32_t len_batch, partition_leader_epoch, last_offset_delta, base_sequence, num_records;
    uint32_t crc;
    int16_t attributes, producer_epoch;
    int8_t magic;
} BatchEntry;

static inline int64_t be64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return (int64_t)__builtin_bswap64(v); }
static inline int32_t be32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return (int32_t)__builtin_bswap32(v); }
static inline int16_t be16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return (int16_t)__builtin_bswap16(v); }

/* Call crc(memoryview of n bytes at p); 1 when it returns expected, 0 when not, -1 on error. */
static int
crc_matches(PyObject *crc, const uint8_t *p, Py_ssize_t n, uint32_t expected)
{
    PyObject *mv = PyMemoryView_FromMemory((char *)p, n, PyBUF_READ);
    if (mv == NULL)
        return -1;
    PyObject *got = PyObject_CallOneArg(crc, mv);
    Py_DECREF(mv);
    if (got == NULL)
        return -1;
    unsigned long value = PyLong_AsUnsignedLong(got);
    Py_DECREF(got);
    if (value == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    return (value & 0xFFFFFFFFul) == expected;
}

/* Whether the CRC-32 of the legacy message at p (size bytes after its offset and length)
 * is expected: 1 or 0 (the CRC zlib.crc32 computes: runtime/crc.py). */
static int
legacy_crc_matches(const uint8_t *p, int32_t size, uint32_t expected)
{
    const Py_ssize_t n = LOG_OVERHEAD + (Py_ssize_t)size - KAFKA_LEGACY_MESSAGE_CRC_FROM;
    return (uint32_t)CRC32_IEEE(p + KAFKA_LEGACY_MESSAGE_CRC_FROM, n) == expected;
}

/* Read the v2 batch at p (size bytes after the 12-byte prefix) into e: 1 when it is one the
 * generated parser accepts, 0 when not (the walk stops there). */
static int
read_v2(const uint8_t *p, int32_t size, BatchEntry *e)
{
#define V2(field) (p + KAFKA_RECORD_BATCH_##field##_AT)
    if (size < KAFKA_RECORD_BATCH_LEN_BATCH_MIN)
        return 0;
    e->base_offset = be64(V2(BASE_OFFSET));
    e->len_batch = size;
    e->partition_leader_epoch = be32(V2(PARTITION_LEADER_EPOCH));
    e->magic = KAFKA_RECORD_BATCH_MAGIC_EQ;
    e->crc = (uint32_t)be32(V2(CRC));
    e->attributes = be16(V2(ATTRIBUTES));
    e->last_offset_delta = be32(V2(LAST_OFFSET_DELTA));
    e->base_timestamp = be64(V2(BASE_TIMESTAMP));
    e->max_timestamp = be64(V2(MAX_TIMESTAMP));
    e->producer_id = be64(V2(PRODUCER_ID));
    e->producer_epoch = be16(V2(PRODUCER_EPOCH));
    e->base_sequence = be32(V2(BASE_SEQUENCE));
    e->num_records = be32(V2(NUM_RECORDS));
#undef V2
    return e->num_records >= KAFKA_RECORD_BATCH_NUM_RECORDS_MIN;
}

/* Read the legacy message (magic 0 or 1) at p into e, as Kafka's legacy batches answer
 * for it: 1 when the generated parser accepts it (key and value lengths fill the message
 * exactly), 0 when not. */
static int
read_legacy(const uint8_t *p, int32_t size, BatchEntry *e)
{
    const int magic = p[KAFKA_LEGACY_MESSAGE_MAGIC_AT];
    const Py_ssize_t end = LOG_OVERHEAD + (Py_ssize_t)size;
    Py_ssize_t q = KAFKA_LEGACY_MESSAGE_FIXED_SIZE; /* then the timestamp (magic 1), key, value */
    int64_t timestamp = -1;
    if (magic == 1) {
        if (end - q < 8)
            return 0;
        timestamp = be64(p + q);
        q += 8;
    }
    if (end - q < 4)
        return 0;
    const int32_t len_key = be32(p + q);
    q += 4;
    if (len_key < -1 || len_key > end - q)
        return 0;
    if (len_key > 0)
        q += len_key;
    if (end - q < 4)
        return 0;
    const int32_t len_value = be32(p + q);
    q += 4;
    if (len_value < -1 || len_value > end - q)
        return 0;
    if (len_value > 0)
        q += len_value;
    if (q != end)
        return 0;
    e->base_offset = be64(p);
    e->len_batch = size;
    e->partition_leader_epoch = -1;
    e->magic = (int8_t)magic;
    e->crc = (uint32_t)be32(p + KAFKA_LEGACY_MESSAGE_CRC_AT);
    e->attributes = (int8_t)p[KAFKA_LEGACY_MESSAGE_ATTRIBUTES_AT];
    e->last_offset_delta = 0;
    e->base_timestamp = e->max_timestamp = timestamp;
    e->producer_id = -1;
    e->producer_epoch = -1;
    e->base_sequence = -1;
    /* a wrapper's count needs decompressing */
    e->num_records = (e->attributes & KAFKA_LEGACY_MESSAGE_COMPRESSION_MASK) ? -1 : 1;
    return 1;
}

/* The entry at p (size bytes after its offset and length) into e: 1 when it is a v2 batch
 * or a legacy message the generated parsers accept, with a matching CRC when crc32c and
 * crc32 are not None; 0 when not (the walk stops there); -1 when a CRC call raised. */
static int
read_entry(const uint8_t *p, int32_t size, PyObject *crc32c, PyObject *crc32, BatchEntry *e)
{
    memset(e, 0, sizeof *e); /* the padding too: no stack bytes leak into the output */
    const int magic = p[KAFKA_RECORD_BATCH_MAGIC_AT];
    PyObject *crc;
    Py_ssize_t covered_from;
    if (magic == KAFKA_RECORD_BATCH_MAGIC_EQ) {
        if (!read_v2(p, size, e))
            return 0;
        crc = crc32c;
        covered_from = KAFKA_RECORD_BATCH_CRC_FROM;
    }
    else if (magic == 0 || magic == 1) {
        if (!read_legacy(p, size, e))
            return 0;
        crc = crc32;
        covered_from = KAFKA_LEGACY_MESSAGE_CRC_FROM;
    }
    else
        return 0;
    if (crc == Py_None)
        return 1;
    if (magic != KAFKA_RECORD_BATCH_MAGIC_EQ) /* zlib's own crc32, without a Python call */
        return legacy_crc_matches(p, size, e->crc);
    return crc_matches(crc, p + covered_from, LOG_OVERHEAD + size - covered_from, e->crc);
}

PyDoc_STRVAR(scan_batches_doc,
"scan_batches(data, start, end, crc32c, crc32) -> (entries bytes, stop position)\n\n"
"Walk the entries of data[start:end] from start (v2 batches and legacy messages), reading\n"
"only their headers, and return them as packed BatchEntry structs (layout in BATCH_FIELDS)\n"
"with the position where the walk stopped. crc32c, when not None, is called on the\n"
"CRC-covered bytes of each v2 batch (a memoryview) and must return the CRC-32C; crc32, when\n"
"not None, says that legacy messages' CRC-32 is checked (with zlib's crc32). The walk stops, without an error, at the first entry that is not complete and\n"
"exactly what the generated parsers accept with a matching CRC (a partial entry at the\n"
"end, an unknown magic, anything damaged): the caller hands that entry to the Python\n"
"iterator, which reads it or raises the precise error.");

static PyObject *
scan_batches(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end;
    PyObject *crc32c, *crc32;
    if (!PyArg_ParseTuple(args, "y*nnOO:scan_batches", &view, &start, &end, &crc32c, &crc32))
        return NULL;
    if (start < 0 || end > view.len || start > end) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "start and end must lie inside data");
        return NULL;
    }
    const uint8_t *buf = (const uint8_t *)view.buf;
    Py_ssize_t cap = 64, n = 0, pos = start;
    PyObject *out = PyBytes_FromStringAndSize(NULL, cap * (Py_ssize_t)sizeof(BatchEntry));
    if (out == NULL)
        goto error;
    while (end - pos >= KAFKA_LEGACY_MESSAGE_FIXED_SIZE) { /* offset, length, magic, ... */
        const uint8_t *p = buf + pos;
        const int32_t size = be32(p + KAFKA_RECORD_BATCH_LEN_BATCH_AT);
        if (size < KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_MIN || size > end - pos - LOG_OVERHEAD)
            break; /* damaged, or a partial entry: the Python iterator decides */
        BatchEntry e;
        const int ok = read_entry(p, size, crc32c, crc32, &e);
        if (ok < 0)
            goto error;
        if (!ok)
            break;
        e.position = pos;
        if (n == cap) {
            cap *= 2;
            if (_PyBytes_Resize(&out, cap * (Py_ssize_t)sizeof(BatchEntry)) < 0)
                goto error;
        }
        memcpy(PyBytes_AS_STRING(out) + n * (Py_ssize_t)sizeof(BatchEntry), &e, sizeof e);
        n++;
        pos += LOG_OVERHEAD + (Py_ssize_t)size;
    }
    PyBuffer_Release(&view);
    if (_PyBytes_Resize(&out, n * (Py_ssize_t)sizeof(BatchEntry)) < 0)
        return NULL;
    return Py_BuildValue("(Nn)", out, pos);
error:
    PyBuffer_Release(&view);
    Py_XDECREF(out);
    return NULL;
}

/* ---------------------------------------------------------------------- freelists */

/* Records and batches are made by the million and most live a moment. A class given to
 * keep_freed() keeps up to FREELIST_SIZE of its freed objects' memory for the next object
 * of the class, as Cython's @cython.freelist does for its classes: making one is then
 * taking a block back (its slots already empty), and freeing one is emptying its slots.
 * CPython's generic subtype_dealloc does the same emptying through every member
 * descriptor, with the checks a class with a __dict__, weak references or a finalizer
 * needs; keep_freed() takes only classes with none of those (slots on plain classes,
 * down to object) and keeps a reference to each, so that a block is never handed to a
 * class of another size. A subclass made later gets CPython's allocation and its own
 * subtype_dealloc, which ends here for the slots of the class kept (basedealloc). */

#define FREELIST_SIZE 64
#define FREELIST_TYPES 8

typedef struct {
    PyTypeObject *type;
    int n_free;
    PyObject *free[FREELIST_SIZE];
} Freelist;

/* The object slots of a class with __slots__ alone (and of its bases): every pointer from
 * the end of object's header to the end of the object (keep_freed checks it). */
#define FIRST_SLOT(obj) ((PyObject **)((char *)(obj) + sizeof(PyObject)))
#define END_SLOT(obj, fl) ((PyObject **)((char *)(obj) + (fl)->type->tp_basicsize))

static Freelist FREELISTS[FREELIST_TYPES];
static int N_FREELISTS;

/* The freelist of type, or of its nearest base that has one; NULL when none has. */
static inline Freelist *
freelist_of(PyTypeObject *type)
{
    for (; type != NULL; type = type->tp_base)
        for (int i = 0; i < N_FREELISTS; i++)
            if (FREELISTS[i].type == type)
                return &FREELISTS[i];
    return NULL;
}

static PyObject *
freelist_alloc(PyTypeObject *type, Py_ssize_t nitems)
{
    for (int i = 0; i < N_FREELISTS; i++) {
        Freelist *fl = &FREELISTS[i];
        if (fl->type == type && nitems == 0 && fl->n_free > 0) {
            PyObject *obj = fl->free[--fl->n_free];
            PyObject_Init(obj, type); /* the type (a reference to it), a reference count of 1 */
            PyObject_GC_Track(obj);
            return obj;
        }
    }
    return PyType_GenericAlloc(type, nitems);
}

static void
freelist_dealloc(PyObject *obj)
{
    PyTypeObject *type = Py_TYPE(obj);
    /* a __del__ given to the class later: called as subtype_dealloc would (a subclass's
     * own was called by its subtype_dealloc before it came here) */
    Freelist *fl = freelist_of(type);
    if (fl->type == type && type->tp_finalize != NULL) {
        if (PyObject_CallFinalizerFromDealloc(obj) < 0)
            return; /* resurrected */
    }
    PyObject_GC_UnTrack(obj);
    for (PyObject **slot = FIRST_SLOT(obj), **end = END_SLOT(obj, fl); slot < end; slot++)
        Py_CLEAR(*slot);
    if (fl->type == type && fl->n_free < FREELIST_SIZE)
        fl->free[fl->n_free++] = obj;
    else
        PyObject_GC_Del(obj);
    Py_DECREF(type); /* an object of a heap type holds a reference to it */
}

PyDoc_STRVAR(keep_freed_doc,
"keep_freed(cls) -> None\n\n"
"Keep freed objects of cls for the next ones (a freelist, as Cython's). cls and each of\n"
"its bases but object must be a Python class with __slots__ only: no __dict__, no weak\n"
"references, no __del__; TypeError otherwise.");

static PyObject *
keep_freed(PyObject *Py_UNUSED(module), PyObject *cls_obj)
{
    if (!PyType_Check(cls_obj))
        return PyErr_Format(PyExc_TypeError, "a class is needed");
    PyTypeObject *cls = (PyTypeObject *)cls_obj;
    if (freelist_of(cls) != NULL && freelist_of(cls)->type == cls)
        Py_RETURN_NONE;
    if (N_FREELISTS == FREELIST_TYPES)
        return PyErr_Format(PyExc_TypeError, "no room for another freelist (%s)", cls->tp_name);
    Freelist *fl = &FREELISTS[N_FREELISTS];
    Py_ssize_t n_slots = 0;
    for (PyTypeObject *t = cls; t != &PyBaseObject_Type; t = t->tp_base) {
        /* a plain class with slots, whose objects subtype_dealloc frees (tp_dealloc is
         * inherited by no Python class: each gets subtype_dealloc) */
        if (t == NULL || !(t->tp_flags & Py_TPFLAGS_HEAPTYPE) || t->tp_dictoffset != 0
            || t->tp_weaklistoffset != 0 || t->tp_finalize != NULL || t->tp_del != NULL
            || t->tp_itemsize != 0 || t->tp_dealloc != cls->tp_dealloc
            || (t == cls && (cls->tp_alloc != PyType_GenericAlloc
                             || !(cls->tp_flags & Py_TPFLAGS_HAVE_GC)))
            || PyTuple_GET_SIZE(t->tp_bases) != 1)
            return PyErr_Format(PyExc_TypeError,
                                "%s: only classes with __slots__ alone keep freed objects",
                                cls->tp_name);
        /* a Python class's tp_members: its slots, as subtype_dealloc's clear_slots reads them */
        for (PyMemberDef *m = t->tp_members; m != NULL && m->name != NULL; m++, n_slots++)
            if (m->type != T_OBJECT_EX || (m->flags & READONLY)
                || m->offset < (Py_ssize_t)sizeof(PyObject) || m->offset >= cls->tp_basicsize)
                return PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot",
                                    cls->tp_name, m->name);
    }
    /* distinct slots, each a pointer: together they fill the object after its header */
    if ((Py_ssize_t)sizeof(PyObject) + n_slots * (Py_ssize_t)sizeof(PyObject *) != cls->tp_basicsize)
        return PyErr_Format(PyExc_TypeError, "%s: its slots do not fill its objects", cls->tp_name);
    fl->type = (PyTypeObject *)Py_NewRef(cls); /* kept: a block is for this class's size */
    fl->n_free = 0;
    N_FREELISTS++;
    cls->tp_alloc = freelist_alloc;
    cls->tp_dealloc = freelist_dealloc;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------ lazy batches, the walk */

/* iter_batches' batches are read lazily. The walk (Walker below) checks each entry exactly
 * as the generated parsers would (size, magic, bounds, CRC: read_entry) and makes an object
 * of the batch class holding only its buffer and position. Every field of the schema is a
 * LazyField on that class: the first access reads it from the bytes (at kafka_layout.h's
 * offsets) and keeps it in the generated class's own slot, where the generated parser
 * would have put it. A value that anything set (the parser, a builder, a user) is simply
 * what the slot holds. The objects stay the generated classes' objects; their fields are
 * read only when asked for. */

enum {
    LZ_INT,              /* a fixed-width integer `at` bytes in (fmt: q i h b I) */
    LZ_NONE,             /* a field the parser leaves undecoded: None */
    LZ_POS_PLUS,         /* position + at: where a CRC's coverage starts */
    LZ_END,              /* where the entry ends (its CRC's coverage too) */
    LZ_V2_RECORDS,       /* the records region: buf[position + at : end] */
    LZ_V2_LAST_OFFSET,   /* base_offset + last_offset_delta (not kept) */
    LZ_LEGACY_TIMESTAMP, /* magic 1's timestamp, None for magic 0 */
    LZ_LEGACY_LEN_KEY, LZ_LEGACY_KEY, LZ_LEGACY_LEN_VALUE, LZ_LEGACY_VALUE,
    LZ_LEGACY_INNER_RAW,
    LZ_LEGACY_BASE_OFFSET, /* a plain message's offset; a wrapper's: the class's own getter */
};

typedef struct {
    const char *name; /* the attribute */
    const char *slot; /* the generated class's slot that keeps it; NULL: not kept */
    int kind, at;
    char fmt;
    int readonly;     /* an alias Kafka's API names (count), not a field of the schema */
} LazySpec;

static const LazySpec V2_SPECS[] = {
    {"base_offset", "base_offset", LZ_INT, KAFKA_RECORD_BATCH_BASE_OFFSET_AT, 'q'},
    {"len_batch", "len_batch", LZ_INT, KAFKA_RECORD_BATCH_LEN_BATCH_AT, 'i'},
    {"partition_leader_epoch", "partition_leader_epoch", LZ_INT,
     KAFKA_RECORD_BATCH_PARTITION_LEADER_EPOCH_AT, 'i'},
    {"magic", "magic", LZ_INT, KAFKA_RECORD_BATCH_MAGIC_AT, 'b'},
    {"crc", "crc", LZ_INT, KAFKA_RECORD_BATCH_CRC_AT, 'I'},
    {"attributes", "attributes", LZ_INT, KAFKA_RECORD_BATCH_ATTRIBUTES_AT, 'h'},
    {"last_offset_delta", "last_offset_delta", LZ_INT, KAFKA_RECORD_BATCH_LAST_OFFSET_DELTA_AT,
     'i'},
    {"base_timestamp", "base_timestamp", LZ_INT, KAFKA_RECORD_BATCH_BASE_TIMESTAMP_AT, 'q'},
    {"max_timestamp", "max_timestamp", LZ_INT, KAFKA_RECORD_BATCH_MAX_TIMESTAMP_AT, 'q'},
    {"producer_id", "producer_id", LZ_INT, KAFKA_RECORD_BATCH_PRODUCER_ID_AT, 'q'},
    {"producer_epoch", "producer_epoch", LZ_INT, KAFKA_RECORD_BATCH_PRODUCER_EPOCH_AT, 'h'},
    {"base_sequence", "base_sequence", LZ_INT, KAFKA_RECORD_BATCH_BASE_SEQUENCE_AT, 'i'},
    {"num_records", "num_records", LZ_INT, KAFKA_RECORD_BATCH_NUM_RECORDS_AT, 'i'},
    {"records_region", "records_region", LZ_NONE, 0, 0},
    {"records_region_raw", "records_region_raw", LZ_V2_RECORDS, KAFKA_RECORD_BATCH_FIXED_SIZE, 0},
    {"crc_start", "crc_start", LZ_POS_PLUS, KAFKA_RECORD_BATCH_CRC_FROM, 0},
    {"crc_end", "crc_end", LZ_END, 0, 0},
    /* Kafka's names for two of them (RecordBatch.lastOffset, countOrNull), read-only */
    {"last_offset", NULL, LZ_V2_LAST_OFFSET, 0, 0, 1},
    {"count", "num_records", LZ_INT, KAFKA_RECORD_BATCH_NUM_RECORDS_AT, 'i', 1},
};
static const LazySpec LEGACY_SPECS[] = {
    {"offset", "offset", LZ_INT, KAFKA_LEGACY_MESSAGE_OFFSET_AT, 'q'},
    {"len_message", "len_message", LZ_INT, KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_AT, 'i'},
    {"crc", "crc", LZ_INT, KAFKA_LEGACY_MESSAGE_CRC_AT, 'I'},
    {"magic", "magic", LZ_INT, KAFKA_LEGACY_MESSAGE_MAGIC_AT, 'b'},
    {"attributes", "attributes", LZ_INT, KAFKA_LEGACY_MESSAGE_ATTRIBUTES_AT, 'b'},
    {"timestamp", "timestamp", LZ_LEGACY_TIMESTAMP, 0, 0},
    {"len_key", "len_key", LZ_LEGACY_LEN_KEY, 0, 0},
    {"key", "key", LZ_LEGACY_KEY, 0, 0},
    {"len_value", "len_value", LZ_LEGACY_LEN_VALUE, 0, 0},
    {"value", "value", LZ_LEGACY_VALUE, 0, 0},
    {"inner", "inner", LZ_NONE, 0, 0},
    {"inner_raw", "inner_raw", LZ_LEGACY_INNER_RAW, 0, 0},
    {"crc_start", "crc_start", LZ_POS_PLUS, KAFKA_LEGACY_MESSAGE_CRC_FROM, 0},
    {"crc_end", "crc_end", LZ_END, 0, 0},
    /* Kafka's names (AbstractLegacyRecordBatch.lastOffset, baseOffset), read-only: a
     * wrapper's base offset is its first inner message's, which the Python getter reads */
    {"last_offset", "offset", LZ_INT, KAFKA_LEGACY_MESSAGE_OFFSET_AT, 'q', 1},
    {"base_offset", "offset", LZ_LEGACY_BASE_OFFSET, KAFKA_LEGACY_MESSAGE_OFFSET_AT, 'q', 1},
};
#define N_SPECS(a) ((Py_ssize_t)(sizeof a / sizeof a[0]))

/* The slots every lazily read batch class adds (batches.py: position, _buf, _records,
 * source), in this order. */
enum { BS_BUF, BS_POSITION, BS_RECORDS, BS_SOURCE, N_BATCH_SLOTS };
static const char *BATCH_SLOT_NAMES[N_BATCH_SLOTS] = {"_buf", "position", "_records", "source"};

typedef struct {
    PyObject_HEAD
    PyObject *name;
    const LazySpec *spec;
    Py_ssize_t slot;               /* where the value is kept; -1 when it is not */
    Py_ssize_t buf_slot, pos_slot; /* the object's _buf and position */
    Py_ssize_t base_slot, delta_slot; /* last_offset's terms: base_offset, last_offset_delta */
    Py_ssize_t attributes_slot;    /* a legacy base_offset's: whether it is a wrapper */
    PyObject *fallback;            /* a legacy base_offset's: the class's getter it replaced */
    Py_ssize_t min_size;           /* the fixed-width fields the layout starts with */
} LazyField;

static PyTypeObject LazyFieldType;

/* The byte offset of the object slot `name` of type (a member descriptor on its MRO that is
 * not a LazyField), or -1 with an exception. */
static Py_ssize_t
member_offset(PyTypeObject *type, const char *name)
{
    PyObject *key = PyUnicode_InternFromString(name);
    if (key == NULL)
        return -1;
    PyObject *mro = type->tp_mro;
    for (Py_ssize_t i = 0; mro != NULL && i < PyTuple_GET_SIZE(mro); i++) {
        PyObject *dict = ((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_dict;
        PyObject *d = dict ? PyDict_GetItemWithError(dict, key) : NULL;
        if (d != NULL && PyObject_TypeCheck(d, &PyMemberDescr_Type)) {
            PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
            Py_DECREF(key);
            if (m->type != T_OBJECT_EX) {
                PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, name);
                return -1;
            }
            return m->offset;
        }
        if (PyErr_Occurred()) {
            Py_DECREF(key);
            return -1;
        }
    }
    Py_DECREF(key);
    PyErr_Format(PyExc_TypeError, "%s has no slot named %s", type->tp_name, name);
    return -1;
}

/* The bytes an object's fields are read from: its _buf (a memoryview, not released) and
 * position, with the entry's length field inside the buffer. 0, or -1 with an exception. */
static int
entry_bytes(PyObject *obj, const LazyField *f, const uint8_t **p, Py_ssize_t *avail)
{
    PyObject *buf = SLOT(obj, f->buf_slot), *pos_obj = SLOT(obj, f->pos_slot);
    if (buf == NULL || pos_obj == NULL) {
        PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '%U'",
                     Py_TYPE(obj)->tp_name, f->name);
        return -1;
    }
    if (!PyMemoryView_Check(buf)
        || (((PyMemoryViewObject *)buf)->flags & _Py_MEMORYVIEW_RELEASED)) {
        PyErr_Format(PyExc_ValueError, "cannot read %U: the batch's buffer is gone", f->name);
        return -1;
    }
    const Py_buffer *view = PyMemoryView_GET_BUFFER(buf);
    const Py_ssize_t pos = PyLong_AsSsize_t(pos_obj);
    if (pos == -1 && PyErr_Occurred())
        return -1;
    /* a flat view of bytes, as byte_view makes them */
    const int flat = view->itemsize == 1 && view->ndim <= 1
                     && (view->strides == NULL || view->strides[0] == 1);
    if (!flat || pos < 0 || view->len - pos < LOG_OVERHEAD) {
        PyErr_Format(PyExc_ValueError, "cannot read %U: position %zd is outside the batch's buffer",
                     f->name, pos);
        return -1;
    }
    *p = (const uint8_t *)view->buf + pos;
    *avail = view->len - pos;
    return 0;
}

/* Where a legacy message's key and value lie (from the message's first byte). */
typedef struct {
    Py_ssize_t len_key, key_at, len_value, value_at;
} LegacyLayout;

static int
legacy_layout(const uint8_t *p, Py_ssize_t avail, LegacyLayout *l)
{
    const Py_ssize_t end = LOG_OVERHEAD + (Py_ssize_t)be32(p + KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_AT);
    Py_ssize_t q = KAFKA_LEGACY_MESSAGE_FIXED_SIZE + (p[KAFKA_LEGACY_MESSAGE_MAGIC_AT] >= 1 ? 8 : 0);
    if (end > avail || end - q < 4)
        return -1;
    l->len_key = be32(p + q);
    l->key_at = q + 4;
    q = l->key_at + (l->len_key > 0 ? l->len_key : 0);
    if (l->len_key < -1 || end - q < 4)
        return -1;
    l->len_value = be32(p + q);
    l->value_at = q + 4;
    if (l->len_value < -1 || l->len_value > end - l->value_at)
        return -1;
    return 0;
}

/* buf[a:b] of the object's buffer, a memoryview as the generated parser's slices are. */
static PyObject *
buffer_slice(PyObject *obj, const LazyField *f, Py_ssize_t a, Py_ssize_t b)
{
    PyObject *pos_obj = SLOT(obj, f->pos_slot);
    const Py_ssize_t pos = PyLong_AsSsize_t(pos_obj);
    return PySequence_GetSlice(SLOT(obj, f->buf_slot), pos + a, pos + b);
}

/* The value of the field, read from the bytes: a new reference, or NULL with an exception. */
static PyObject *
read_lazy(const LazyField *f, PyObject *obj)
{
    const LazySpec *s = f->spec;
    if (s->kind == LZ_NONE)
        Py_RETURN_NONE;
    const uint8_t *p;
    Py_ssize_t avail;
    if (entry_bytes(obj, f, &p, &avail) < 0)
        return NULL;
    const Py_ssize_t end = LOG_OVERHEAD + (Py_ssize_t)be32(p + KAFKA_RECORD_BATCH_LEN_BATCH_AT);
    if (end > avail || end < f->min_size) {
        PyErr_Format(PyExc_ValueError, "cannot read %U: the entry's length does not hold",
                     f->name);
        return NULL;
    }
    LegacyLayout l = {0, 0, 0, 0};
    if (s->kind >= LZ_LEGACY_LEN_KEY && s->kind <= LZ_LEGACY_INNER_RAW
        && legacy_layout(p, avail, &l) < 0) {
        PyErr_Format(PyExc_ValueError, "cannot read %U: the message's lengths do not hold",
                     f->name);
        return NULL;
    }
    const int codec = p[KAFKA_LEGACY_MESSAGE_ATTRIBUTES_AT] & KAFKA_LEGACY_MESSAGE_COMPRESSION_MASK;
    switch (s->kind) {
    case LZ_LEGACY_BASE_OFFSET: /* a plain message (lazy_get): its offset */
    case LZ_INT:
        switch (s->fmt) {
        case 'q': return PyLong_FromLongLong(be64(p + s->at));
        case 'i': return PyLong_FromLong(be32(p + s->at));
        case 'I': return PyLong_FromUnsignedLong((uint32_t)be32(p + s->at));
        case 'h': return PyLong_FromLong(be16(p + s->at));
        default: return PyLong_FromLong((int8_t)p[s->at]);
        }
    case LZ_POS_PLUS:
    case LZ_END: {
        const Py_ssize_t pos = PyLong_AsSsize_t(SLOT(obj, f->pos_slot));
        return PyLong_FromSsize_t(pos + (s->kind == LZ_END ? end : s->at));
    }
    case LZ_V2_RECORDS:
        return buffer_slice(obj, f, s->at, end);
    case LZ_V2_LAST_OFFSET: {
        long long last;
        if (__builtin_add_overflow(be64(p + KAFKA_RECORD_BATCH_BASE_OFFSET_AT),
                                   (long long)be32(p + KAFKA_RECORD_BATCH_LAST_OFFSET_DELTA_AT),
                                   &last)) {
            PyObject *a = PyLong_FromLongLong(be64(p + KAFKA_RECORD_BATCH_BASE_OFFSET_AT));
            PyObject *b = a ? PyLong_FromLong(be32(p + KAFKA_RECORD_BATCH_LAST_OFFSET_DELTA_AT)) : NULL;
            PyObject *sum = b ? PyNumber_Add(a, b) : NULL;
            Py_XDECREF(a);
            Py_XDECREF(b);
            return sum;
        }
        return PyLong_FromLongLong(last);
    }
    case LZ_LEGACY_TIMESTAMP:
        if (p[KAFKA_LEGACY_MESSAGE_MAGIC_AT] == 0)
            Py_RETURN_NONE;
        if (end < KAFKA_LEGACY_MESSAGE_FIXED_SIZE + 8)
            return PyErr_Format(PyExc_ValueError, "cannot read %U: the message is too short",
                                f->name);
        return PyLong_FromLongLong(be64(p + KAFKA_LEGACY_MESSAGE_FIXED_SIZE));
    case LZ_LEGACY_LEN_KEY:
        return PyLong_FromSsize_t(l.len_key);
    case LZ_LEGACY_KEY:
        if (l.len_key < 0)
            Py_RETURN_NONE;
        return buffer_slice(obj, f, l.key_at, l.key_at + l.len_key);
    case LZ_LEGACY_LEN_VALUE:
        return PyLong_FromSsize_t(l.len_value);
    case LZ_LEGACY_VALUE:
    case LZ_LEGACY_INNER_RAW:
        if (l.len_value < 0 || (codec == KAFKA_LEGACY_MESSAGE_COMPRESSION_TYPE_NONE)
                                   != (s->kind == LZ_LEGACY_VALUE))
            Py_RETURN_NONE;
        return buffer_slice(obj, f, l.value_at, l.value_at + l.len_value);
    }
    PyErr_SetString(PyExc_SystemError, "unknown lazy field kind");
    return NULL;
}

static PyObject *
lazy_get(PyObject *self, PyObject *obj, PyObject *Py_UNUSED(type))
{
    LazyField *f = (LazyField *)self;
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    if (f->spec->kind == LZ_LEGACY_BASE_OFFSET) {
        /* the codec, from the attributes as they now are */
        PyObject *attributes = SLOT(obj, f->attributes_slot);
        long codec = -1;
        if (attributes == NULL) {
            const uint8_t *p;
            Py_ssize_t avail;
            if (entry_bytes(obj, f, &p, &avail) < 0)
                return NULL;
            if (avail < f->min_size) /* its fixed-width fields, the attributes among them */
                return PyErr_Format(PyExc_ValueError, "cannot read %U: the message is too short",
                                    f->name);
            codec = p[KAFKA_LEGACY_MESSAGE_ATTRIBUTES_AT] & KAFKA_LEGACY_MESSAGE_COMPRESSION_MASK;
        }
        else if (PyLong_CheckExact(attributes)) {
            codec = PyLong_AsLong(attributes) & KAFKA_LEGACY_MESSAGE_COMPRESSION_MASK;
            if (PyErr_Occurred())
                return NULL;
        }
        if (codec != KAFKA_LEGACY_MESSAGE_COMPRESSION_TYPE_NONE)
            return Py_TYPE(f->fallback)->tp_descr_get(f->fallback, obj, (PyObject *)Py_TYPE(obj));
    }
    if (f->slot >= 0) {
        PyObject *kept = SLOT(obj, f->slot);
        if (kept != NULL)
            return Py_NewRef(kept);
    }
    if (f->spec->kind == LZ_V2_LAST_OFFSET
        && (SLOT(obj, f->base_slot) != NULL || SLOT(obj, f->delta_slot) != NULL)) {
        /* a value kept or set: the sum of the fields as they now are, each from its slot
         * or else from the bytes */
        PyObject *terms[2] = {SLOT(obj, f->base_slot), SLOT(obj, f->delta_slot)};
        const uint8_t *p = NULL;
        Py_ssize_t avail;
        if (terms[0] == NULL || terms[1] == NULL) {
            if (entry_bytes(obj, f, &p, &avail) < 0)
                return NULL;
            if (avail < KAFKA_RECORD_BATCH_FIXED_SIZE)
                return PyErr_Format(PyExc_ValueError, "cannot read %U: the batch is too short",
                                    f->name);
        }
        /* in C when both are ints of 64 bits whose sum is one (always, for the bytes) */
        long long v[2], total;
        int native = 1;
        for (int i = 0; i < 2; i++) {
            int over = 0;
            if (terms[i] == NULL)
                v[i] = i == 0 ? be64(p + KAFKA_RECORD_BATCH_BASE_OFFSET_AT)
                              : be32(p + KAFKA_RECORD_BATCH_LAST_OFFSET_DELTA_AT);
            else if (PyLong_CheckExact(terms[i]))
                v[i] = PyLong_AsLongLongAndOverflow(terms[i], &over);
            else
                over = 1;
            native &= !over;
        }
        if (native && !__builtin_add_overflow(v[0], v[1], &total))
            return PyLong_FromLongLong(total);
        PyObject *base = terms[0] ? Py_NewRef(terms[0]) : PyLong_FromLongLong(v[0]);
        PyObject *delta = base == NULL ? NULL : terms[1] ? Py_NewRef(terms[1])
                                                         : PyLong_FromLongLong(v[1]);
        PyObject *sum = delta ? PyNumber_Add(base, delta) : NULL;
        Py_XDECREF(base);
        Py_XDECREF(delta);
        return sum;
    }
    PyObject *v = read_lazy(f, obj);
    if (v != NULL && f->slot >= 0)
        SLOT(obj, f->slot) = Py_NewRef(v);
    return v;
}

static int
lazy_set(PyObject *self, PyObject *obj, PyObject *value)
{
    LazyField *f = (LazyField *)self;
    if (f->slot < 0 || f->spec->readonly) {
        PyErr_Format(PyExc_AttributeError, "%U is read-only", f->name);
        return -1;
    }
    Py_XSETREF(SLOT(obj, f->slot), Py_XNewRef(value));
    return 0;
}

static void
lazy_dealloc(PyObject *self)
{
    Py_XDECREF(((LazyField *)self)->name);
    Py_XDECREF(((LazyField *)self)->fallback);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
lazy_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<lazy field %U>", ((LazyField *)self)->name);
}

static PyTypeObject LazyFieldType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkacodec.runtime._speedups.LazyField",
    .tp_basicsize = sizeof(LazyField),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A field of a batch read from its bytes on first access and kept in its slot.",
    .tp_dealloc = lazy_dealloc,
    .tp_repr = lazy_repr,
    .tp_descr_get = lazy_get,
    .tp_descr_set = lazy_set,
};

PyDoc_STRVAR(lazy_fields_doc,
"lazy_fields(cls, layout) -> None\n\n"
"Make every field of cls (a subclass of the generated KafkaRecordBatch for layout 'v2',\n"
"KafkaLegacyMessage for 'legacy', with the slots _buf, position, _records and source)\n"
"a LazyField, so that Walker's objects read them from their bytes when asked. Raises\n"
"TypeError when a field of cls.FIELDS has no lazy reading here (a schema changed).");

static PyObject *
lazy_fields(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *cls;
    const char *layout;
    if (!PyArg_ParseTuple(args, "O!s:lazy_fields", &PyType_Type, &cls, &layout))
        return NULL;
    const int v2 = strcmp(layout, "v2") == 0;
    if (!v2 && strcmp(layout, "legacy") != 0)
        return PyErr_Format(PyExc_ValueError, "unknown layout %s", layout);
    const LazySpec *specs = v2 ? V2_SPECS : LEGACY_SPECS;
    const Py_ssize_t n = v2 ? N_SPECS(V2_SPECS) : N_SPECS(LEGACY_SPECS);
    const Py_ssize_t buf_slot = member_offset(cls, "_buf");
    const Py_ssize_t pos_slot = buf_slot < 0 ? -1 : member_offset(cls, "position");
    if (pos_slot < 0)
        return NULL;
    /* every stored field of the schema must be read here, or the objects would lack it */
    PyObject *fields = PyObject_GetAttrString((PyObject *)cls, "FIELDS");
    if (fields == NULL || !PyTuple_Check(fields)) {
        Py_XDECREF(fields);
        return PyErr_Format(PyExc_TypeError, "%s has no FIELDS tuple", cls->tp_name);
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
        const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(fields, i));
        Py_ssize_t k = 0;
        while (name != NULL && k < n && strcmp(specs[k].name, name) != 0)
            k++;
        if (name == NULL || k == n) {
            if (name != NULL)
                PyErr_Format(PyExc_TypeError, "%s.%s has no lazy reading (layout %s)",
                             cls->tp_name, name, layout);
            Py_DECREF(fields);
            return NULL;
        }
    }
    Py_DECREF(fields);
    for (Py_ssize_t k = 0; k < n; k++) {
        LazyField *f = PyObject_New(LazyField, &LazyFieldType);
        if (f == NULL)
            return NULL;
        f->name = PyUnicode_InternFromString(specs[k].name);
        f->spec = &specs[k];
        f->buf_slot = buf_slot;
        f->pos_slot = pos_slot;
        f->min_size = v2 ? KAFKA_RECORD_BATCH_FIXED_SIZE : KAFKA_LEGACY_MESSAGE_FIXED_SIZE;
        f->slot = specs[k].slot ? member_offset(cls, specs[k].slot) : -1;
        f->base_slot = v2 ? member_offset(cls, "base_offset") : -1;
        f->delta_slot = v2 ? member_offset(cls, "last_offset_delta") : -1;
        f->attributes_slot = v2 ? -1 : member_offset(cls, "attributes");
        f->fallback = NULL;
        if (specs[k].kind == LZ_LEGACY_BASE_OFFSET) {
            /* the class's own getter (a property), which a wrapper needs */
            PyObject *own = f->name ? _PyType_Lookup(cls, f->name) : NULL;
            if (own == NULL || Py_TYPE(own)->tp_descr_get == NULL) {
                if (f->name != NULL)
                    PyErr_Format(PyExc_TypeError, "%s.%U must be a property for wrappers",
                                 cls->tp_name, f->name);
                Py_DECREF(f);
                return NULL;
            }
            f->fallback = Py_NewRef(own);
        }
        if (f->name == NULL || (specs[k].slot && f->slot < 0)
            || (v2 ? f->delta_slot < 0 : f->attributes_slot < 0)
            || PyObject_SetAttr((PyObject *)cls, f->name, (PyObject *)f) < 0) {
            Py_DECREF(f);
            return NULL;
        }
        Py_DECREF(f);
    }
    Py_RETURN_NONE;
}

/* What the walk fills in at once, from the header it has read anyway: the values a walk
 * over batches reads (Kafka's RecordBatch baseOffset, lastOffset, countOrNull), small ints
 * cheaper made here than read on demand. Everything else is read when asked for. */
enum { FILL_OFFSET, FILL_DELTA, FILL_COUNT, N_FILLS };
static const char *WALK_FILLS[2][N_FILLS] = {
    {"base_offset", "last_offset_delta", "num_records"}, /* v2 */
    {"offset", NULL, NULL},                              /* legacy */
};

/* The walk over a buffer's entries behind iter_batches (batches.BatchIterator subclasses
 * it). Each entry the generated parsers accept whole, with a matching CRC when asked, is
 * made here into a lazily read batch; anything else (an unknown magic, a damaged or
 * partial entry) goes to the subclass's _slow_next, which reads it with the generated
 * parser or raises the precise error. */
typedef struct {
    PyObject_HEAD
    PyObject *view;         /* the memoryview of the data */
    Py_buffer buf;          /* held while the walk lasts: the data cannot go away */
    Py_ssize_t position, end, batches;
    int fast;               /* 0: every entry goes to _slow_next (the reference path) */
    PyObject *source;
    PyObject *crc32c, *crc32;   /* the CRC functions, None when CRCs are not checked */
    PyTypeObject *types[2];     /* v2, legacy */
    Py_ssize_t slots[2][N_BATCH_SLOTS];
    Py_ssize_t fills[2][N_FILLS]; /* the slots of WALK_FILLS; -1: none */
    PyObject *dict;
} Walker;

static int
walker_init(Walker *w, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"view", "start", "end", "verify_crc", "source", "v2_type",
                             "legacy_type", "crc32c", "crc32", "fast", NULL};
    PyObject *view, *source, *crc32c, *crc32;
    PyTypeObject *v2_type, *legacy_type;
    Py_ssize_t start, end;
    int verify, fast;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!nnpOO!O!OOp:Walker", kwlist,
                                     &PyMemoryView_Type, &view, &start, &end, &verify, &source,
                                     &PyType_Type, &v2_type, &PyType_Type, &legacy_type,
                                     &crc32c, &crc32, &fast))
        return -1;
    if (w->view != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a Walker is initialized once");
        return -1;
    }
    PyTypeObject *types[2] = {v2_type, legacy_type};
    for (int t = 0; t < 2; t++)
        for (int s = 0; s < N_BATCH_SLOTS; s++)
            if ((w->slots[t][s] = member_offset(types[t], BATCH_SLOT_NAMES[s])) < 0)
                return -1;
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < N_FILLS; k++)
            if ((w->fills[t][k] = WALK_FILLS[t][k] ? member_offset(types[t], WALK_FILLS[t][k]) : -1) < 0
                && WALK_FILLS[t][k] != NULL)
                return -1;
    if (PyObject_GetBuffer(view, &w->buf, PyBUF_SIMPLE) < 0)
        return -1;
    if (start < 0 || start > w->buf.len || end < start) {
        PyBuffer_Release(&w->buf);
        PyErr_SetString(PyExc_ValueError, "start and end must lie inside data");
        return -1;
    }
    w->view = Py_NewRef(view);
    w->position = start;
    w->end = end > w->buf.len ? w->buf.len : end;
    w->fast = fast;
    w->source = Py_NewRef(source);
    w->crc32c = Py_NewRef(verify ? crc32c : Py_None);
    w->crc32 = Py_NewRef(verify ? crc32 : Py_None);
    for (int t = 0; t < 2; t++)
        w->types[t] = (PyTypeObject *)Py_NewRef(types[t]);
    return 0;
}

/* The next entry as a batch: 1 with *out set, 0 at the end of the data (or a partial entry
 * there), 2 when the generated parser must read it, -1 with an exception. */
static int
walk_one(Walker *w, PyObject **out)
{
    const Py_ssize_t pos = w->position;
    if (w->end - pos < LOG_OVERHEAD)
        return 0;
    const uint8_t *p = (const uint8_t *)w->buf.buf + pos;
    const int32_t size = be32(p + KAFKA_RECORD_BATCH_LEN_BATCH_AT);
    if (size < KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_MIN)
        return 2;
    if (size > w->end - pos - LOG_OVERHEAD)
        return 0;
    BatchEntry e;
    const int ok = read_entry(p, size, w->crc32c, w->crc32, &e);
    if (ok <= 0)
        return ok < 0 ? -1 : 2;
    const int t = e.magic == KAFKA_RECORD_BATCH_MAGIC_EQ ? 0 : 1;
    PyTypeObject *type = w->types[t];
    PyObject *batch = type->tp_alloc(type, 0);
    PyObject *position = batch ? PyLong_FromSsize_t(pos) : NULL;
    if (position == NULL) {
        Py_XDECREF(batch);
        return -1;
    }
    const Py_ssize_t *slots = w->slots[t];
    SLOT(batch, slots[BS_BUF]) = Py_NewRef(w->view);
    SLOT(batch, slots[BS_POSITION]) = position;
    SLOT(batch, slots[BS_RECORDS]) = Py_NewRef(Py_None);
    SLOT(batch, slots[BS_SOURCE]) = Py_NewRef(w->source);
    const int64_t fill[N_FILLS] = {e.base_offset, e.last_offset_delta, e.num_records};
    for (int k = 0; k < N_FILLS; k++)
        if (w->fills[t][k] >= 0 && (SLOT(batch, w->fills[t][k]) = PyLong_FromLongLong(fill[k])) == NULL) {
            Py_DECREF(batch);
            return -1;
        }
    w->position = pos + LOG_OVERHEAD + size;
    w->batches++;
    *out = batch;
    return 1;
}

static PyObject *
walker_next(Walker *w)
{
    if (w->view == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the Walker was not initialized");
        return NULL;
    }
    if (w->fast) {
        PyObject *batch = NULL;
        const int got = walk_one(w, &batch);
        if (got == 1)
            return batch;
        if (got == 0)
            return NULL; /* StopIteration */
        if (got < 0)
            return NULL;
    }
    return PyObject_CallMethod((PyObject *)w, "_slow_next", NULL);
}

static int
walker_traverse(Walker *w, visitproc visit, void *arg)
{
    Py_VISIT(w->view);
    Py_VISIT(w->source);
    Py_VISIT(w->crc32c);
    Py_VISIT(w->crc32);
    Py_VISIT(w->types[0]);
    Py_VISIT(w->types[1]);
    Py_VISIT(w->dict);
    Py_VISIT(Py_TYPE(w));
    return 0;
}

static int
walker_clear(Walker *w)
{
    Py_CLEAR(w->source);
    Py_CLEAR(w->crc32c);
    Py_CLEAR(w->crc32);
    Py_CLEAR(w->types[0]);
    Py_CLEAR(w->types[1]);
    Py_CLEAR(w->dict);
    return 0;
}

static void
walker_dealloc(Walker *w)
{
    PyObject_GC_UnTrack(w);
    if (w->view != NULL) {
        PyBuffer_Release(&w->buf);
        Py_CLEAR(w->view);
    }
    walker_clear(w);
    /* a subclass's dealloc (subtype_dealloc) releases the subclass itself */
    Py_TYPE(w)->tp_free((PyObject *)w);
}

static PyMemberDef walker_members[] = {
    {"position", T_PYSSIZET, offsetof(Walker, position), 0,
     "Where the next entry starts (after the walk: where it stopped)."},
    {"end", T_PYSSIZET, offsetof(Walker, end), READONLY, "Where the walk ends."},
    {"batches", T_PYSSIZET, offsetof(Walker, batches), 0, "Entries read so far."},
    {"source", T_OBJECT, offsetof(Walker, source), READONLY, "The file named in errors."},
    {"_view", T_OBJECT, offsetof(Walker, view), READONLY, "The data, as a memoryview."},
    {NULL, 0, 0, 0, NULL},
};

static PyObject *
walker_verify_crc(Walker *w, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(w->crc32c != NULL && w->crc32c != Py_None);
}

static PyGetSetDef walker_getset[] = {
    {"verify_crc", (getter)walker_verify_crc, NULL, "Whether CRCs are checked.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject WalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkacodec.runtime._speedups.Walker",
    .tp_basicsize = sizeof(Walker),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The native walk behind iter_batches (see kafkacodec.records.batches).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)walker_init,
    .tp_dealloc = (destructor)walker_dealloc,
    .tp_traverse = (traverseproc)walker_traverse,
    .tp_clear = (inquiry)walker_clear,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)walker_next,
    .tp_members = walker_members,
    .tp_getset = walker_getset,
    .tp_dictoffset = offsetof(Walker, dict),
};

/* --------------------------------------------------------------- legacy records */

PyDoc_STRVAR(decode_legacy_doc,
"decode_legacy(data, start, end, wrapper, crc32, record_type, timestamp_types) -> list | None\n\n"
"The records of magic 0 and 1 messages as record_type objects, with Kafka's offset and\n"
"timestamp rules (FORMATS.md 1.3, AbstractLegacyRecordBatch). wrapper None: the one\n"
"top-level uncompressed message at data[start:] (end is ignored), with its own offset and\n"
"timestamp type. wrapper (offset, magic, log_append_time | None): the decompressed inner\n"
"message set data[start:end] of that wrapper. crc32, when not None, checks each message's\n"
"CRC-32 (zlib's). timestamp_types: the names of NoTimestampType,\n"
"CreateTime, LogAppendTime. None when anything is not exactly what the generated parser\n"
"accepts and Kafka allows (a damaged message, a CRC, a nested wrapper, a wrapper offset\n"
"below its last inner offset): the Python path then raises the precise error.");

/* What each record of a legacy message set shares. */
typedef struct {
    int wrapped;             /* inner messages of a wrapper (else one top-level message) */
    long long base;          /* added to each inner offset (magic 1 wrappers), else 0 */
    PyObject *log_append;    /* the wrapper's LogAppendTime timestamp, or NULL */
    PyObject *ts_names[3];   /* NoTimestampType, CreateTime, LogAppendTime */
    PyTypeObject *record_type;
    Py_ssize_t offsets[N_FIELDS];
} LegacyCtx;

/* The Record of the message at p (checked by read_legacy into e): 1, 0 when the loop gives
 * up (an offset that overflows), -1 with an exception. */
static int
make_legacy_record(const LegacyCtx *c, const uint8_t *p, const BatchEntry *e, PyObject **out)
{
    const Py_ssize_t *offsets = c->offsets;
    long long offset;
    if (__builtin_add_overflow(c->base, (long long)e->base_offset, &offset))
        return 0;
    PyObject *timestamp, *ts_type;
    if (c->log_append != NULL) {
        timestamp = Py_NewRef(c->log_append);
        ts_type = c->ts_names[2];
    } else if (e->magic == 0) {
        timestamp = PyLong_FromLong(-1);
        ts_type = c->ts_names[0];
    } else {
        timestamp = PyLong_FromLongLong(e->base_timestamp);
        /* a top-level message says its own type; an inner one is CreateTime unless its
         * wrapper is LogAppendTime (Kafka ignores the inner bit) */
        ts_type = c->ts_names[!c->wrapped && (e->attributes & KAFKA_LEGACY_MESSAGE_LOG_APPEND_TIME_BIT_MASK)
                              ? 2 : 1];
    }
    LegacyLayout l = {0, 0, 0, 0};
    legacy_layout(p, LOG_OVERHEAD + (Py_ssize_t)e->len_batch, &l);
    PyObject *rec = c->record_type->tp_alloc(c->record_type, 0);
    if (rec == NULL) {
        Py_XDECREF(timestamp);
        return -1;
    }
    PyObject *values[] = {
        [F_OFFSET] = PyLong_FromLongLong(offset),
        [F_TIMESTAMP] = timestamp,
        [F_TIMESTAMP_TYPE] = Py_NewRef(ts_type),
        [F_KEY] = take_bytes(p, l.key_at, l.len_key),
        [F_VALUE] = take_bytes(p, l.value_at, l.len_value),
        [F_HEADERS] = PyList_New(0),
        [F_SEQUENCE] = PyLong_FromLong(-1),
        [F_CONTROL] = Py_NewRef(Py_None),
        [F_ATTRIBUTES] = PyLong_FromLong(e->attributes),
    };
    if (fill_record(rec, offsets, values, -1) < 0)
        return -1;
    *out = rec;
    return 1;
}

/* Check the messages of data[start:end] as the generated parser and Kafka would: their
 * count, or 0 to give up, -1 on an error; *last is the last message's offset. */
static Py_ssize_t
check_legacy_set(const uint8_t *buf, Py_ssize_t start, Py_ssize_t end, int wrapped,
                 PyObject *crc32, long long *last)
{
    Py_ssize_t n = 0;
    for (Py_ssize_t pos = start; pos < end;) {
        const uint8_t *p = buf + pos;
        if (end - pos < LOG_OVERHEAD)
            return 0;
        const int32_t size = be32(p + KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_AT);
        if (size < KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_MIN || size > end - pos - LOG_OVERHEAD)
            return 0;
        const int magic = p[KAFKA_LEGACY_MESSAGE_MAGIC_AT];
        BatchEntry e;
        memset(&e, 0, sizeof e);
        if ((magic != 0 && magic != 1) || !read_legacy(p, size, &e))
            return 0;
        /* one level only (Kafka): a compressed inner message is the parser's to refuse;
         * a compressed top-level message is not the caller's to hand here */
        if (e.attributes & KAFKA_LEGACY_MESSAGE_COMPRESSION_MASK)
            return 0;
        if (crc32 != Py_None && !legacy_crc_matches(p, size, e.crc))
            return 0;
        *last = e.base_offset;
        n++;
        pos += LOG_OVERHEAD + size;
        if (!wrapped)
            return pos == end ? n : 0;
    }
    return n;
}

/* The records of the legacy messages data[start:end] (see decode_legacy): a new list, None
 * (a new reference) to give up, NULL with an exception. */
static PyObject *
legacy_list(const uint8_t *buf, Py_ssize_t len, Py_ssize_t start, Py_ssize_t end,
            LegacyCtx *c, long long wrapper_offset, int wrapper_magic, PyObject *crc32)
{
    if (!c->wrapped) {
        if (start < 0 || len - start < LOG_OVERHEAD)
            Py_RETURN_NONE;
        end = start + LOG_OVERHEAD + (Py_ssize_t)be32(buf + start + KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_AT);
    }
    if (start < 0 || end < start || end > len)
        Py_RETURN_NONE;
    long long last = 0;
    const Py_ssize_t n = check_legacy_set(buf, start, end, c->wrapped, crc32, &last);
    if (n < 0)
        return NULL;
    if (n == 0 && (!c->wrapped || start != end))
        Py_RETURN_NONE;
    c->base = 0;
    if (c->wrapped && wrapper_magic >= 1 && n > 0) {
        /* Kafka's rule for magic 1 wrappers: inner offsets are relative to the last one;
         * a wrapper offset of 0 is data straight from a producer */
        if (wrapper_offset != 0 && wrapper_offset < last)
            Py_RETURN_NONE;
        c->base = wrapper_offset == 0 ? 0 : wrapper_offset - last;
    }
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    Py_ssize_t pos = start;
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint8_t *p = buf + pos;
        BatchEntry e;
        memset(&e, 0, sizeof e);
        read_legacy(p, be32(p + KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_AT), &e);
        PyObject *rec = NULL;
        const int made = make_legacy_record(c, p, &e, &rec);
        if (made <= 0) {
            Py_DECREF(out);
            if (made < 0)
                return NULL;
            Py_RETURN_NONE;
        }
        PyList_SET_ITEM(out, i, rec);
        pos += LOG_OVERHEAD + (Py_ssize_t)e.len_batch;
    }
    return out;
}

static int
legacy_ctx(LegacyCtx *c, PyTypeObject *record_type, PyObject *ts_names)
{
    memset(c, 0, sizeof *c);
    c->record_type = record_type;
    if (!PyTuple_Check(ts_names) || PyTuple_GET_SIZE(ts_names) != 3) {
        PyErr_SetString(PyExc_ValueError, "three timestamp type names are needed");
        return -1;
    }
    for (int i = 0; i < 3; i++)
        c->ts_names[i] = PyTuple_GET_ITEM(ts_names, i);
    return slot_offsets(record_type, c->offsets);
}

static PyObject *
decode_legacy(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end;
    PyObject *wrapper, *crc32, *ts_names, *out = NULL;
    PyTypeObject *record_type;
    LegacyCtx c;
    if (!PyArg_ParseTuple(args, "y*nnOOO!O!:decode_legacy", &view, &start, &end, &wrapper,
                          &crc32, &PyType_Type, &record_type, &PyTuple_Type, &ts_names))
        return NULL;
    long long wrapper_offset = 0;
    int wrapper_magic = 0;
    PyObject *log_append = NULL;
    if (legacy_ctx(&c, record_type, ts_names) < 0)
        goto done;
    c.wrapped = wrapper != Py_None;
    if (c.wrapped) {
        if (!PyArg_ParseTuple(wrapper, "LiO:decode_legacy wrapper", &wrapper_offset,
                              &wrapper_magic, &log_append))
            goto done;
        c.log_append = log_append == Py_None ? NULL : log_append;
    }
    out = legacy_list((const uint8_t *)view.buf, view.len, start, end, &c, wrapper_offset,
                      wrapper_magic, crc32);
done:
    PyBuffer_Release(&view);
    return out;
}

/* LegacyBatch.records as a method in C (native_legacy_records installs it): the records of
 * an uncompressed top-level message straight from its bytes; anything else (a wrapper, a
 * batch made by hand, bytes the loop does not take) goes to the Python method. */
static struct {
    PyObject *fallback, *record_type, *ts_names, *attributes_name;
    PyTypeObject *cls;
    Py_ssize_t records_slot, buf_slot, pos_slot, attributes_slot;
} LEGACY_METHOD;

static PyObject *
legacy_records_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *kept = SLOT(self, LEGACY_METHOD.records_slot);
    if (kept != NULL && kept != Py_None && nargs == 0)
        return Py_NewRef(kept);
    PyObject *buf = SLOT(self, LEGACY_METHOD.buf_slot), *pos_obj = SLOT(self, LEGACY_METHOD.pos_slot);
    if (nargs == 0 && buf != NULL && pos_obj != NULL && PyMemoryView_Check(buf)
        && !(((PyMemoryViewObject *)buf)->flags & _Py_MEMORYVIEW_RELEASED)
        && PyBuffer_IsContiguous(PyMemoryView_GET_BUFFER(buf), 'C')) {
        const Py_buffer *view = PyMemoryView_GET_BUFFER(buf);
        const Py_ssize_t pos = PyLong_Check(pos_obj) ? PyLong_AsSsize_t(pos_obj) : -1;
        /* The attributes as self.attributes answers them: for the class's own objects, the
         * value kept in (or set to) its slot, else the byte the lazy field would read */
        PyObject *attributes = Py_TYPE(self) == LEGACY_METHOD.cls
                                   ? Py_XNewRef(SLOT(self, LEGACY_METHOD.attributes_slot))
                                   : PyObject_GetAttr(self, LEGACY_METHOD.attributes_name);
        long attrs = -1;
        if (attributes != NULL)
            attrs = PyLong_Check(attributes) ? PyLong_AsLong(attributes) : -1;
        else if (!PyErr_Occurred() && pos >= 0 && view->len - pos > KAFKA_LEGACY_MESSAGE_ATTRIBUTES_AT)
            attrs = (int8_t)((const uint8_t *)view->buf)[pos + KAFKA_LEGACY_MESSAGE_ATTRIBUTES_AT];
        Py_XDECREF(attributes);
        if (PyErr_Occurred())
            PyErr_Clear(); /* the Python method answers */
        else if (attrs >= 0 && (attrs & KAFKA_LEGACY_MESSAGE_COMPRESSION_MASK) == 0 && pos >= 0) {
            LegacyCtx c;
            if (legacy_ctx(&c, (PyTypeObject *)LEGACY_METHOD.record_type, LEGACY_METHOD.ts_names) < 0)
                return NULL;
            PyObject *recs = legacy_list((const uint8_t *)view->buf, view->len, pos, -1, &c, 0, 0,
                                         Py_None);
            if (recs == NULL || recs != Py_None) {
                if (recs != NULL)
                    Py_XSETREF(SLOT(self, LEGACY_METHOD.records_slot), Py_NewRef(recs));
                return recs;
            }
            Py_DECREF(recs);
        }
    }
    PyObject *call_args[1 + 8];
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw > 8)
        return PyErr_Format(PyExc_TypeError, "records() takes keyword arguments only");
    call_args[0] = self;
    for (Py_ssize_t i = 0; i < nargs + nkw; i++)
        call_args[1 + i] = args[i];
    return PyObject_Vectorcall(LEGACY_METHOD.fallback, call_args, 1 + nargs, kwnames);
}

static PyMethodDef LEGACY_RECORDS_DEF = {
    "records", (PyCFunction)(void (*)(void))legacy_records_method, METH_FASTCALL | METH_KEYWORDS,
    "records(*, verify_crc=True, max_inflated=None) -> list of Record\n\n"
    "The message itself, or a wrapper's inner messages with absolute offsets.",
};

PyDoc_STRVAR(native_legacy_records_doc,
"native_legacy_records(cls, fallback, record_type, timestamp_types) -> None\n\n"
"Make cls.records (cls: batches.LegacyBatch) a method in C that reads an uncompressed\n"
"top-level message's record from its bytes and calls fallback(self, **kwargs) for all else.");

static PyObject *
native_legacy_records(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *cls, *record_type;
    PyObject *fallback, *ts_names;
    if (!PyArg_ParseTuple(args, "O!OO!O!:native_legacy_records", &PyType_Type, &cls, &fallback,
                          &PyType_Type, &record_type, &PyTuple_Type, &ts_names))
        return NULL;
    Py_ssize_t offsets[N_FIELDS];
    if (slot_offsets(record_type, offsets) < 0)
        return NULL;
    const Py_ssize_t records_slot = member_offset(cls, "_records");
    const Py_ssize_t buf_slot = records_slot < 0 ? -1 : member_offset(cls, "_buf");
    const Py_ssize_t pos_slot = buf_slot < 0 ? -1 : member_offset(cls, "position");
    const Py_ssize_t attributes_slot = pos_slot < 0 ? -1 : member_offset(cls, "attributes");
    if (attributes_slot < 0)
        return NULL;
    PyObject *method = PyDescr_NewMethod(cls, &LEGACY_RECORDS_DEF);
    if (method == NULL)
        return NULL;
    if (PyObject_SetAttrString((PyObject *)cls, "records", method) < 0) {
        Py_DECREF(method);
        return NULL;
    }
    Py_DECREF(method);
    Py_XSETREF(LEGACY_METHOD.fallback, Py_NewRef(fallback));
    Py_XSETREF(LEGACY_METHOD.record_type, Py_NewRef(record_type));
    Py_XSETREF(LEGACY_METHOD.ts_names, Py_NewRef(ts_names));
    if (LEGACY_METHOD.attributes_name == NULL
        && (LEGACY_METHOD.attributes_name = PyUnicode_InternFromString("attributes")) == NULL)
        return NULL;
    LEGACY_METHOD.records_slot = records_slot;
    LEGACY_METHOD.buf_slot = buf_slot;
    LEGACY_METHOD.pos_slot = pos_slot;
    LEGACY_METHOD.attributes_slot = attributes_slot;
    Py_XSETREF(LEGACY_METHOD.cls, (PyTypeObject *)Py_NewRef(cls));
    Py_RETURN_NONE;
}

/* --------------------------------------------------------------- legacy encoding */

PyDoc_STRVAR(encode_legacy_doc,
"encode_legacy(records, magic, base_offset, offset_shift, attributes, log_append_time,\n"
"              record_type) -> (message set, last offset, max timestamp) | None\n\n"
"The legacy messages (magic 0 or 1) of a list of record_type objects or 5-tuples in its\n"
"order (offset, timestamp, key, value, headers), as the generated builder writes them:\n"
"offsets base_offset + i where a record has none, each minus offset_shift (a magic 1\n"
"wrapper's relative inner offsets), magic 1 timestamps (log_append_time for all when it is\n"
"not None), attributes as given, CRC-32 computed. None when a record holds anything but\n"
"ints, bytes and None, has headers, or a value does not fit, so that the Python builder\n"
"converts or refuses it with its own message.");

/* One record as encode_legacy reads it. */
typedef struct {
    long long offset, timestamp;
    const char *key, *value;
    int64_t len_key, len_value;
} MessageIn;

/* Record i into *m: 1 when the loop takes it, 0 when it gives up. */
static int
read_message(PyObject *r, Py_ssize_t i, const Py_ssize_t *offsets, long long base_offset,
             long long shift, int magic, PyObject *log_append, MessageIn *m)
{
    PyObject *f[N_GIVEN];
    if (!given_fields(r, offsets, f))
        return 0;
    PyObject *off_obj = f[R_OFFSET], *ts_obj = f[R_TIMESTAMP], *key = f[R_KEY],
             *value = f[R_VALUE], *headers = f[R_HEADERS];
    /* no headers: a Record's empty list, or a tuple's empty list or tuple (Record makes
     * either into []) */
    if (headers == NULL
        || !((PyList_CheckExact(headers) && PyList_GET_SIZE(headers) == 0)
             || (PyTuple_CheckExact(r) && PyTuple_CheckExact(headers)
                 && PyTuple_GET_SIZE(headers) == 0)))
        return 0;
    if (off_obj == NULL || key == NULL || value == NULL)
        return 0;
    int overflow = 0;
    if (off_obj == Py_None) {
        if (__builtin_add_overflow(base_offset, (long long)i, &m->offset))
            return 0;
    } else {
        if (!PyLong_CheckExact(off_obj))
            return 0;
        m->offset = PyLong_AsLongLongAndOverflow(off_obj, &overflow);
        if (overflow)
            return 0;
    }
    if (__builtin_sub_overflow(m->offset, shift, &m->offset))
        return 0;
    m->timestamp = -1;
    if (magic == 1) {
        PyObject *ts = log_append != Py_None ? log_append : ts_obj;
        if (ts == NULL || !PyLong_CheckExact(ts))
            return 0;
        m->timestamp = PyLong_AsLongLongAndOverflow(ts, &overflow);
        if (overflow)
            return 0;
    }
    if (blob(key, &m->key, &m->len_key) < 0 || blob(value, &m->value, &m->len_value) < 0)
        return 0;
    return 1;
}


static PyObject *
encode_legacy(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *records, *base_obj, *shift_obj, *log_append;
    int magic, attributes;
    long long base_offset, shift;
    PyTypeObject *record_type;
    if (!PyArg_ParseTuple(args, "O!iOOiOO!:encode_legacy", &PyList_Type, &records, &magic,
                          &base_obj, &shift_obj, &attributes, &log_append, &PyType_Type,
                          &record_type))
        return NULL;
    if ((magic != 0 && magic != 1) || attributes < -128 || attributes > 127
        || !int_field(base_obj, 8, &base_offset) || !int_field(shift_obj, 8, &shift))
        Py_RETURN_NONE;
    Py_ssize_t offsets[N_FIELDS];
    if (slot_offsets(record_type, offsets) < 0)
        return NULL;
    Out o = {NULL, 0, 0};
    const Py_ssize_t n = PyList_GET_SIZE(records);
    const Py_ssize_t fixed = KAFKA_LEGACY_MESSAGE_FIXED_SIZE + (magic == 1 ? 8 : 0) + 8;
    long long last = 0, max_ts = INT64_MIN;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = PyList_GET_ITEM(records, i);
        MessageIn m = {0, 0, NULL, NULL, 0, 0};
        if ((Py_TYPE(r) != record_type && !PyTuple_CheckExact(r))
            || !read_message(r, i, offsets, base_offset, shift, magic, log_append, &m))
            goto give_up;
        const int64_t size = fixed - LOG_OVERHEAD + (m.len_key > 0 ? m.len_key : 0)
                             + (m.len_value > 0 ? m.len_value : 0);
        if (size > INT32_MAX) /* the generated builder refuses it with its own message */
            goto give_up;
        if (out_reserve(&o, LOG_OVERHEAD + (Py_ssize_t)size) < 0)
            goto error;
        const Py_ssize_t at = o.len;
        put_be(&o, (uint64_t)m.offset, 8);
        put_be(&o, (uint64_t)size, 4);
        put_be(&o, 0, 4); /* the CRC, once the bytes it covers are written */
        o.data[o.len++] = (char)magic;
        o.data[o.len++] = (char)attributes;
        if (magic == 1)
            put_be(&o, (uint64_t)m.timestamp, 8);
        put_be(&o, (uint64_t)m.len_key, 4);
        put_bytes(&o, m.key, m.len_key);
        put_be(&o, (uint64_t)m.len_value, 4);
        put_bytes(&o, m.value, m.len_value);
        const uint8_t *covered = (const uint8_t *)o.data + at + KAFKA_LEGACY_MESSAGE_CRC_FROM;
        const uint32_t crc = CRC32_IEEE(covered, o.len - at - KAFKA_LEGACY_MESSAGE_CRC_FROM);
        Out at_crc = {o.data, at + KAFKA_LEGACY_MESSAGE_CRC_AT, o.cap};
        put_be(&at_crc, (uint64_t)crc, 4);
        last = m.offset + shift;
        if (m.timestamp > max_ts)
            max_ts = m.timestamp;
    }
    PyObject *set = PyBytes_FromStringAndSize(o.data ? o.data : "", o.len);
    PyMem_Free(o.data);
    if (set == NULL)
        return NULL;
    return Py_BuildValue("(NLL)", set, last, max_ts);

give_up:
    PyMem_Free(o.data);
    Py_RETURN_NONE;
error:
    PyMem_Free(o.data);
    return NULL;
}

/* ------------------------------------------------------------------ Record.__init__ */

/* Record.__init__ in C (native_record_init installs it): the Python method's parameters
 * and defaults, read from it at install time, and the same assignments (headers become a
 * new list), into the slots. Making a Record is what a producer does per message. */
static struct {
    PyTypeObject *type;
    Py_ssize_t offsets[N_FIELDS];
    PyObject *names[N_FIELDS];    /* parameter i's name (interned) */
    PyObject *defaults[N_FIELDS]; /* parameter i's default */
    int field[N_FIELDS];          /* parameter i's slot */
    int positional;               /* parameters that may be given by position */
} RECORD_INIT;

static PyObject *
record_init_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *values[N_FIELDS];
    if (nargs > RECORD_INIT.positional)
        return PyErr_Format(PyExc_TypeError,
                            "Record.__init__() takes from 1 to %d positional arguments but %zd "
                            "were given", RECORD_INIT.positional + 1, nargs + 1);
    for (int i = 0; i < N_FIELDS; i++)
        values[i] = i < nargs ? args[i] : NULL;
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        int i = 0;
        while (i < N_FIELDS && RECORD_INIT.names[i] != name)
            i++;
        for (int j = 0; i == N_FIELDS && j < N_FIELDS; j++)
            if (PyUnicode_Compare(RECORD_INIT.names[j], name) == 0)
                i = j;
        if (i == N_FIELDS) {
            PyErr_Clear();
            return PyErr_Format(PyExc_TypeError,
                                "Record.__init__() got an unexpected keyword argument '%S'", name);
        }
        if (values[i] != NULL)
            return PyErr_Format(PyExc_TypeError,
                                "Record.__init__() got multiple values for argument '%S'", name);
        values[i] = args[nargs + k];
    }
    PyObject *slots[N_FIELDS];
    for (int i = 0; i < N_FIELDS; i++) {
        PyObject *v = values[i] ? values[i] : RECORD_INIT.defaults[i];
        const int f = RECORD_INIT.field[i];
        slots[f] = f == F_HEADERS ? PySequence_List(v) : Py_NewRef(v);
        if (slots[f] == NULL) {
            for (int j = 0; j < i; j++)
                Py_DECREF(slots[RECORD_INIT.field[j]]);
            return NULL;
        }
    }
    for (int f = 0; f < N_FIELDS; f++)
        Py_XSETREF(SLOT(self, RECORD_INIT.offsets[f]), slots[f]);
    Py_RETURN_NONE;
}

/* The same as the class's tp_init: Record(...) calls it without looking __init__ up. */
static int
record_tp_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    PyObject *const *items = &PyTuple_GET_ITEM(args, 0);
    const Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    PyObject *done;
    if (kwds == NULL || PyDict_GET_SIZE(kwds) == 0) {
        done = record_init_method(self, items, nargs, NULL);
    } else {
        PyObject *stack[2 * N_FIELDS + 2];
        const Py_ssize_t nkw = PyDict_GET_SIZE(kwds);
        if (nargs + nkw > 2 * N_FIELDS + 2) /* more than there are parameters */
            return PyErr_Format(PyExc_TypeError, "Record.__init__() takes at most %d arguments",
                                N_FIELDS), -1;
        PyObject *kwnames = PyTuple_New(nkw);
        if (kwnames == NULL)
            return -1;
        for (Py_ssize_t i = 0; i < nargs; i++)
            stack[i] = items[i];
        Py_ssize_t pos = 0, k = 0;
        PyObject *key, *value;
        while (PyDict_Next(kwds, &pos, &key, &value)) {
            PyTuple_SET_ITEM(kwnames, k, Py_NewRef(key));
            stack[nargs + k++] = value;
        }
        done = record_init_method(self, stack, nargs, kwnames);
        Py_DECREF(kwnames);
    }
    if (done == NULL)
        return -1;
    Py_DECREF(done);
    return 0;
}

/* Record(...) itself (the class's tp_vectorcall): the object made and __init__'s work done
 * without the argument tuple and dict that type_call builds. When __init__ is not this
 * one any more (a test put the Python one back), the class is called as usual. */
static PyObject *
record_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyTypeObject *type = (PyTypeObject *)callable;
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (type->tp_init != record_tp_init) {
        PyObject *tuple = PyTuple_New(nargs);
        if (tuple == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < nargs; i++)
            PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
        PyObject *kwargs = NULL;
        const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        if (nkw && (kwargs = PyDict_New()) == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        for (Py_ssize_t k = 0; k < nkw; k++)
            if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) {
                Py_DECREF(tuple);
                Py_DECREF(kwargs);
                return NULL;
            }
        PyObject *made = PyType_Type.tp_call(callable, tuple, kwargs);
        Py_DECREF(tuple);
        Py_XDECREF(kwargs);
        return made;
    }
    PyObject *self = type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    PyObject *done = record_init_method(self, args, nargs, kwnames);
    if (done == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    Py_DECREF(done);
    return self;
}

static PyMethodDef RECORD_INIT_DEF = {
    "__init__", (PyCFunction)(void (*)(void))record_init_method, METH_FASTCALL | METH_KEYWORDS,
    "Record(offset=None, timestamp=-1, key=None, value=None, headers=(), *,\n"
    "       timestamp_type='CreateTime', sequence=-1, control=None, attributes=0)",
};

PyDoc_STRVAR(native_record_init_doc,
"native_record_init(cls) -> None\n\n"
"Make cls.__init__ (cls: batches.Record) a method in C with the parameters, defaults and\n"
"assignments of the Python one, which must name each of the record slots once.");

static PyObject *
native_record_init(PyObject *Py_UNUSED(module), PyObject *cls_obj)
{
    if (!PyType_Check(cls_obj))
        return PyErr_Format(PyExc_TypeError, "a class is needed");
    PyTypeObject *cls = (PyTypeObject *)cls_obj;
    PyObject *init = PyObject_GetAttrString(cls_obj, "__init__");
    PyObject *code = init && PyFunction_Check(init) ? PyFunction_GET_CODE(init) : NULL;
    if (code == NULL) {
        Py_XDECREF(init);
        return PyErr_Format(PyExc_TypeError, "%s.__init__ is not a Python function", cls->tp_name);
    }
    PyCodeObject *co = (PyCodeObject *)code;
    PyObject *defaults = PyFunction_GET_DEFAULTS(init), *kwdefaults = PyFunction_GET_KW_DEFAULTS(init);
    PyObject *names = PyObject_GetAttrString(code, "co_varnames");
    int ok = names != NULL && co->co_argcount + co->co_kwonlyargcount == N_FIELDS + 1
             && defaults != NULL && PyTuple_GET_SIZE(defaults) == co->co_argcount - 1
             && kwdefaults != NULL && slot_offsets(cls, RECORD_INIT.offsets) == 0;
    unsigned seen = 0;
    for (int i = 0; ok && i < N_FIELDS; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i + 1);
        int f = 0;
        while (f < N_FIELDS && PyUnicode_CompareWithASCIIString(name, FIELD_NAMES[f]) != 0)
            f++;
        PyObject *dflt = i < co->co_argcount - 1 ? PyTuple_GET_ITEM(defaults, i)
                                                 : PyDict_GetItemWithError(kwdefaults, name);
        ok = f < N_FIELDS && dflt != NULL && !(seen & (1u << f));
        if (ok) {
            seen |= 1u << f;
            Py_INCREF(name);
            PyUnicode_InternInPlace(&name);
            Py_XSETREF(RECORD_INIT.names[i], name);
            Py_XSETREF(RECORD_INIT.defaults[i], Py_NewRef(dflt));
            RECORD_INIT.field[i] = f;
        }
    }
    Py_XDECREF(names);
    Py_DECREF(init);
    if (!ok) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError,
                         "%s.__init__ must take each record slot once, with a default",
                         cls->tp_name);
        return NULL;
    }
    RECORD_INIT.positional = co->co_argcount - 1;
    Py_XSETREF(RECORD_INIT.type, (PyTypeObject *)Py_NewRef(cls));
    PyObject *method = PyDescr_NewMethod(cls, &RECORD_INIT_DEF);
    if (method == NULL || PyObject_SetAttrString(cls_obj, "__init__", method) < 0) {
        Py_XDECREF(method);
        return NULL;
    }
    Py_DECREF(method);
    /* Setting __init__ made the slot look it up at every call; this calls the C one as it
     * is. Setting __init__ again (a subclass's, or the Python one back) resets the slot. */
    cls->tp_init = record_tp_init;
    /* Calling the class itself: CPython calls a type's tp_vectorcall when it has one (not
     * inherited: a subclass is called as usual). Only for a class whose instances are
     * made by object.__new__, as Record's are. */
    if (cls->tp_new == PyBaseObject_Type.tp_new)
        cls->tp_vectorcall = record_vectorcall;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"decode_v2_records", decode_v2_records, METH_VARARGS, decode_v2_records_doc},
    {"encode_v2_records", encode_v2_records, METH_VARARGS, encode_v2_records_doc},
    {"encode_v2_batch", encode_v2_batch, METH_VARARGS, encode_v2_batch_doc},
    {"reencode_v2_records", reencode_v2_records, METH_VARARGS, reencode_v2_records_doc},
    {"decode_v2_columns", decode_v2_columns, METH_VARARGS, decode_v2_columns_doc},
    {"scan_batches", scan_batches, METH_VARARGS, scan_batches_doc},
    {"lazy_fields", lazy_fields, METH_VARARGS, lazy_fields_doc},
    {"decode_legacy", decode_legacy, METH_VARARGS, decode_legacy_doc},
    {"native_legacy_records", native_legacy_records, METH_VARARGS, native_legacy_records_doc},
    {"encode_legacy", encode_legacy, METH_VARARGS, encode_legacy_doc},
    {"native_record_init", native_record_init, METH_O, native_record_init_doc},
    {"keep_freed", keep_freed, METH_O, keep_freed_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "kafkacodec._speedups",
    "Optional native fast paths; the generated parsers remain the reference.",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

#define FIELD(name, fmt) {#name, fmt, offsetof(BatchEntry, name)}
static const struct { const char *name, *fmt; size_t offset; } BATCH_FIELDS[] = {
    FIELD(position, "i8"), FIELD(base_offset, "i8"), FIELD(base_timestamp, "i8"),
    FIELD(max_timestamp, "i8"), FIELD(producer_id, "i8"), FIELD(len_batch, "i4"),
    FIELD(partition_leader_epoch, "i4"), FIELD(last_offset_delta, "i4"),
    FIELD(base_sequence, "i4"), FIELD(num_records, "i4"), FIELD(crc, "u4"),
    FIELD(attributes, "i2"), FIELD(producer_epoch, "i2"), FIELD(magic, "i1"),
};
#define N_BATCH_FIELDS (sizeof BATCH_FIELDS / sizeof BATCH_FIELDS[0])

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&LazyFieldType) < 0 || PyType_Ready(&WalkerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Walker", (PyObject *)&WalkerType) < 0
        || PyModule_AddObjectRef(m, "LazyField", (PyObject *)&LazyFieldType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *fields = PyTuple_New(N_BATCH_FIELDS);
    if (fields == NULL)
        goto error;
    for (size_t i = 0; i < N_BATCH_FIELDS; i++) {
        PyObject *f = Py_BuildValue("(ssn)", BATCH_FIELDS[i].name, BATCH_FIELDS[i].fmt,
                                    (Py_ssize_t)BATCH_FIELDS[i].offset);
        if (f == NULL)
            goto error;
        PyTuple_SET_ITEM(fields, (Py_ssize_t)i, f);
    }
    if (PyModule_AddObject(m, "BATCH_FIELDS", fields) < 0)
        goto error;
    fields = NULL; /* the module holds it now */
    if (PyModule_AddIntConstant(m, "BATCH_ENTRY_SIZE", (long)sizeof(BatchEntry)) < 0
        || PyModule_AddStringConstant(m, "CRC32", CRC32_IEEE_NAME) < 0
        || PyModule_AddStringConstant(m, "COLUMNS_LAYOUT", COLUMNS_LAYOUT) < 0)
        goto error;
    return m;
error:
    Py_XDECREF(fields);
    Py_DECREF(m);
    return NULL;
}
