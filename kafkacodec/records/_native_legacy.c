#include "_native.h"

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
    int wrapper_magic;       /* the wrapper's magic, when wrapped */
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
    /* A record's timestamp type is its batch's (a consumer's ConsumerRecord takes
     * RecordBatch.timestampType()): a top-level message's own, an inner one's wrapper's
     * (Kafka ignores the inner bit). Its timestamp: none for magic 0, else its own, or the
     * wrapper's for a magic 1 message in a LogAppendTime wrapper (DeepRecordsIterator). */
    PyObject *timestamp, *ts_type;
    if (c->wrapped)
        ts_type = c->ts_names[c->log_append != NULL ? 2 : c->wrapper_magic == 0 ? 0 : 1];
    else
        ts_type = c->ts_names[e->magic == 0 ? 0
                              : e->attributes & KAFKA_LEGACY_MESSAGE_LOG_APPEND_TIME_BIT_MASK ? 2 : 1];
    if (e->magic == 0)
        timestamp = PyLong_FromLong(-1);
    else if (c->log_append != NULL)
        timestamp = Py_NewRef(c->log_append);
    else
        timestamp = PyLong_FromLongLong(e->base_timestamp);
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
        c.wrapper_magic = wrapper_magic;
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
        if (PyErr_Occurred()) {
            if (!drop_ordinary_error()) /* the Python method answers; an interrupt stays one */
                return NULL;
        }
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

PyMethodDef LEGACY_METHODS[] = {
    {"decode_legacy", decode_legacy, METH_VARARGS, decode_legacy_doc},
    {"native_legacy_records", native_legacy_records, METH_VARARGS, native_legacy_records_doc},
    {NULL, NULL, 0, NULL},
};
