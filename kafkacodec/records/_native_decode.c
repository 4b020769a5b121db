/* The records of a v2 batch's records region as Record objects (decode_v2_records),
 * each record framed as the generated parser frames it (scan_record). */
#include "_native.h"

/* Whether count records can be in total bytes (each takes at least KAFKA_RECORD_MIN_SIZE);
 * a count that cannot fit is the parser's to report. */
static inline int
count_fits(Py_ssize_t count, Py_ssize_t total)
{
    return count >= 0 && count <= total / KAFKA_RECORD_MIN_SIZE;
}

int
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
        || read_varint(buf, &p, end, 5, &r->len_key) < 0
        || r->len_key > end - p)
        return -1;
    r->key_at = p;
    if (r->len_key > 0)
        p += (Py_ssize_t)r->len_key;
    if (read_varint(buf, &p, end, 5, &r->len_value) < 0
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
        if (read_varint(buf, &p, end, 5, &len_hvalue) < 0
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
    if (!count_fits(count, total))
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

/* Whether a (decompressed) records region of total bytes is exactly count records, each
 * framed as decode_v2_records frames it (scan_record), with no Record made. */
static int
records_framed(const uint8_t *buf, Py_ssize_t total, Py_ssize_t count)
{
    Py_ssize_t pos = 0;
    int ok = count_fits(count, total);
    for (Py_ssize_t i = 0; ok && i < count; i++) {
        RecordView r;
        ok = scan_record(buf, &pos, total, &r) == 0;
    }
    return ok && pos == total;
}

PyDoc_STRVAR(check_v2_records_doc,
"check_v2_records(data, count) -> bool\n\n"
"Whether a v2 batch's (decompressed) records region is exactly count records the\n"
"generated parser accepts, each framed as decode_v2_records frames it, with no Record\n"
"made (a count of what is there, for verify). False when not: the parser then decides,\n"
"and names what is wrong.");

static PyObject *
check_v2_records(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "y*n:check_v2_records", &view, &count))
        return NULL;
    const int ok = records_framed((const uint8_t *)view.buf, view.len, count);
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

PyDoc_STRVAR(check_v2_run_doc,
"check_v2_run(data, entries) -> bytes\n\n"
"check_v2_records over a run of walked entries at once (entries: packed BatchEntry structs,\n"
"scan_batches' output, each a whole entry of data): one byte per entry, 1 when it is an\n"
"uncompressed v2 batch, not a control batch, whose records region is exactly its count of\n"
"records framed as check_v2_records frames them; 0 when such a batch's records are not;\n"
"2 when the check does not apply (compressed, control, legacy): the caller reads those.");

static PyObject *
check_v2_run(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer view, run;
    if (!PyArg_ParseTuple(args, "y*y*:check_v2_run", &view, &run))
        return NULL;
    PyObject *out = NULL;
    if (run.len % (Py_ssize_t)sizeof(BatchEntry)) {
        PyErr_SetString(PyExc_ValueError, "entries must be whole BatchEntry structs");
        goto done;
    }
    const Py_ssize_t n = run.len / (Py_ssize_t)sizeof(BatchEntry);
    out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL)
        goto done;
    uint8_t *flags = (uint8_t *)PyBytes_AS_STRING(out);
    const uint8_t *buf = (const uint8_t *)view.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        BatchEntry e;
        memcpy(&e, (const char *)run.buf + i * (Py_ssize_t)sizeof(BatchEntry), sizeof e);
        const Py_ssize_t start = (Py_ssize_t)e.position + KAFKA_RECORD_BATCH_FIXED_SIZE;
        const Py_ssize_t end = (Py_ssize_t)e.position + LOG_OVERHEAD + (Py_ssize_t)e.len_batch;
        if (e.magic != KAFKA_RECORD_BATCH_MAGIC_EQ || (e.attributes & KAFKA_RECORD_BATCH_COMPRESSION_MASK)
            || (e.attributes & KAFKA_RECORD_BATCH_IS_CONTROL_MASK)) {
            flags[i] = 2;
            continue;
        }
        if (e.position < 0 || start > end || end > view.len) {
            Py_CLEAR(out);
            PyErr_SetString(PyExc_ValueError, "an entry lies outside data");
            goto done;
        }
        flags[i] = (uint8_t)records_framed(buf + start, end - start, e.num_records);
    }
done:
    PyBuffer_Release(&view);
    PyBuffer_Release(&run);
    return out;
}

PyMethodDef DECODE_METHODS[] = {
    {"check_v2_records", check_v2_records, METH_VARARGS, check_v2_records_doc},
    {"check_v2_run", check_v2_run, METH_VARARGS, check_v2_run_doc},
    {"decode_v2_records", decode_v2_records, METH_VARARGS, decode_v2_records_doc},
    {NULL, NULL, 0, NULL},
};
