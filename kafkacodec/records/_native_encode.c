/* Writing: v2 records regions and whole batches (encode_v2_records, encode_v2_batch),
 * a region again in its shortest form (reencode_v2_records), legacy message sets
 * (encode_legacy), into a growing buffer (Out). */
#include "_native.h"

/* ------------------------------------------------------------------------ encoding */

int
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
            /* the generated builder compresses again and reports the failure, located; an
             * interrupt in the compressor stays one */
            if (packed == NULL && !drop_ordinary_error()) {
                PyMem_Free(o.data);
                return NULL;
            }
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
    int64_t n = 0, len_hkey = 0, len_hvalue = 0;
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
        int64_t len_hkey = 0, len_hvalue = 0;
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

PyMethodDef ENCODE_METHODS[] = {
    {"encode_v2_records", encode_v2_records, METH_VARARGS, encode_v2_records_doc},
    {"encode_v2_batch", encode_v2_batch, METH_VARARGS, encode_v2_batch_doc},
    {"reencode_v2_records", reencode_v2_records, METH_VARARGS, reencode_v2_records_doc},
    {"encode_legacy", encode_legacy, METH_VARARGS, encode_legacy_doc},
    {NULL, NULL, 0, NULL},
};
