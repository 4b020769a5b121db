#include "_native.h"

/* --------------------------------------------------------------------- batch walk */

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

int
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

int
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
    if (len_key > end - q) /* a negative length is null (Utils.sizeDelimited) */
        return 0;
    if (len_key > 0)
        q += len_key;
    if (end - q < 4)
        return 0;
    const int32_t len_value = be32(p + q);
    q += 4;
    if (len_value > end - q)
        return 0;
    /* bytes after the value are Kafka's to ignore (LegacyRecord): the schema's `unused` */
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
    LZ_LEGACY_UNUSED,      /* the bytes after the value, which Kafka never reads */
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
    {"unused", "unused", LZ_LEGACY_UNUSED, 0, 0},
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

int
legacy_layout(const uint8_t *p, Py_ssize_t avail, LegacyLayout *l)
{
    const Py_ssize_t end = LOG_OVERHEAD + (Py_ssize_t)be32(p + KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_AT);
    /* any magic but 0 has magic 1's layout (LegacyRecord) */
    Py_ssize_t q = KAFKA_LEGACY_MESSAGE_FIXED_SIZE + (p[KAFKA_LEGACY_MESSAGE_MAGIC_AT] != 0 ? 8 : 0);
    if (end > avail || end - q < 4)
        return -1;
    l->len_key = be32(p + q);
    l->key_at = q + 4;
    q = l->key_at + (l->len_key > 0 ? l->len_key : 0);
    if (end - q < 4)
        return -1;
    l->len_value = be32(p + q);
    l->value_at = q + 4;
    if (l->len_value > end - l->value_at)
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
    if (s->kind >= LZ_LEGACY_LEN_KEY && s->kind <= LZ_LEGACY_UNUSED
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
    case LZ_LEGACY_UNUSED:
        return buffer_slice(obj, f, l.value_at + (l.len_value > 0 ? l.len_value : 0), end);
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

PyTypeObject LazyFieldType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkacodec.records._native.LazyField",
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

/* The next entry as a batch: 1 with *out set, 0 at the end of the data, 2 when the
 * generated parser must read it (an entry it does not take whole, and a partial entry at
 * the end, which Kafka's buffer and file walks end differently: BatchIterator._slow_next),
 * -1 with an exception. */
static int
walk_one(Walker *w, PyObject **out)
{
    const Py_ssize_t pos = w->position;
    if (w->end - pos < LOG_OVERHEAD)
        return 0;
    const uint8_t *p = (const uint8_t *)w->buf.buf + pos;
    const int32_t size = be32(p + KAFKA_RECORD_BATCH_LEN_BATCH_AT);
    if (size < KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_MIN || size > w->end - pos - LOG_OVERHEAD)
        return 2;
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
    /* Not Py_TYPE(w): WalkerType is a static type, and a Python subclass's instance
     * (BatchIterator) has its heap type visited by subtype_traverse before this runs. A
     * second visit made the collector count one reference too many from every walker to
     * BatchIterator, find the class unreachable while it was in use and clear its dict:
     * the next BatchIterator(...) failed with AttributeError: __init__ (found by the fuzz
     * run of the columnar walk, tests/records/test_walk.py has the case). */
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

PyTypeObject WalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkacodec.records._native.Walker",
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

PyMethodDef WALK_METHODS[] = {
    {"scan_batches", scan_batches, METH_VARARGS, scan_batches_doc},
    {"lazy_fields", lazy_fields, METH_VARARGS, lazy_fields_doc},
    {NULL, NULL, 0, NULL},
};
