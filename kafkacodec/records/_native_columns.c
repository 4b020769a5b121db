#include "_native.h"

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
const char COLUMNS_LAYOUT[] =
    "attributes:int:b timestamp_delta:int:q offset_delta:int:i key:binary:null "
    "value:binary:null headers:list headers.key:string headers.value:binary:null";

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

PyMethodDef COLUMNS_METHODS[] = {
    {"decode_v2_columns", decode_v2_columns, METH_VARARGS, decode_v2_columns_doc},
    {NULL, NULL, 0, NULL},
};
