/* Records as the command line prints them, many at a time: `kafkacodec records`' lines (text,
 * or JSON with keys and values in hex, base64 or UTF-8) and kafka-dump-log's record lines
 * (`dump --deep-iteration`, `--print-data-log`). The Python formatters stay the reference
 * (kafkacodec/cli/records.py, kafkacodec/dump.py): these give the same characters, a test
 * compares both on every vector and on generated records, and for anything they do not
 * format (a control record, a field of another type, a number past 64 bits) they return
 * None and the caller formats those records in Python.
 *
 * The text is built as UTF-8 in one buffer and returned as one str. Only the parts of a
 * line that are not plain printable ASCII go through Python's own objects: a key or value
 * is decoded by Python's UTF-8 decoder (so that what is valid, and what "replace" makes of
 * what is not, are Python's answers), and each character's printability is Python's
 * str.isprintable. */
#include "_native.h"
#include <limits.h>

/* The code point c in UTF-8 (c is never a surrogate here: the callers escape those). */
static int
emit_utf8(Out *o, Py_UCS4 c)
{
    char b[4];
    int n;
    if (c < 0x80) {
        b[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        b[0] = (char)(0xC0 | (c >> 6));
        b[1] = (char)(0x80 | (c & 0x3F));
        n = 2;
    } else if (c < 0x10000) {
        b[0] = (char)(0xE0 | (c >> 12));
        b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[2] = (char)(0x80 | (c & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (c >> 18));
        b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[3] = (char)(0x80 | (c & 0x3F));
        n = 4;
    }
    return emit(o, b, n);
}

static const char HEX[] = "0123456789abcdef";

/* Each character of the str s through each(): 0, or -1 with an exception. */
static int
emit_each(Out *o, PyObject *s, int (*each)(Out *, Py_UCS4))
{
    const int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t i = 0, n = PyUnicode_GET_LENGTH(s); i < n; i++)
        if (each(o, PyUnicode_READ(kind, data, i)) < 0)
            return -1;
    return 0;
}

/* The n bytes at p decoded as UTF-8 with "replace" (Python's decoder: its U+FFFD for each
 * invalid sequence), each character through each(). */
static int
emit_replaced(Out *o, const char *p, Py_ssize_t n, int (*each)(Out *, Py_UCS4))
{
    PyObject *s = PyUnicode_DecodeUTF8(p, n, "replace");
    if (s == NULL)
        return -1;
    const int done = emit_each(o, s, each);
    Py_DECREF(s);
    return done;
}

/* Whether every byte of p is printable ASCII (space to tilde): such text is the same
 * whatever the formatter, and is copied as it is. */
static inline int
plain_ascii(const uint8_t *p, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if ((uint8_t)(p[i] - 0x20) > 0x5E)
            return 0;
    return 1;
}

/* ------------------------------------------------------------- records' text lines */

/* A character as console.safe() leaves it: itself when printable, else ascii(ch)[1:-1]
 * (\t \n \r, \xhh, \uhhhh, \Uhhhhhhhh). */
static int
emit_safe_char(Out *o, Py_UCS4 c)
{
    if (c >= 0x20 && c < 0x7F)
        return emit(o, (const char *)&(char){(char)c}, 1);
    if (c >= 0x80 && Py_UNICODE_ISPRINTABLE(c))
        return emit_utf8(o, c);
    char b[10];
    int n;
    b[0] = '\\';
    if (c == '\t' || c == '\n' || c == '\r') {
        b[1] = c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
        n = 2;
    } else {
        const int digits = c < 0x100 ? 2 : c < 0x10000 ? 4 : 8;
        b[1] = c < 0x100 ? 'x' : c < 0x10000 ? 'u' : 'U';
        for (int i = 0; i < digits; i++)
            b[2 + i] = HEX[(c >> (4 * (digits - 1 - i))) & 0xF];
        n = 2 + digits;
    }
    return emit(o, b, n);
}

static int
emit_safe_str(Out *o, PyObject *s)
{
    if (PyUnicode_IS_ASCII(s) && plain_ascii(PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s)))
        return emit(o, PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s));
    return emit_each(o, s, emit_safe_char);
}

static int
emit_hex(Out *o, const uint8_t *p, Py_ssize_t n)
{
    if (o->cap - o->len < 2 * n && out_reserve(o, 2 * n) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        o->data[o->len++] = HEX[p[i] >> 4];
        o->data[o->len++] = HEX[p[i] & 0xF];
    }
    return 0;
}

/* A key, value or header value as records' _show(): null, the text when it is UTF-8, else
 * 0x and its hex; then made safe. */
static int
emit_show(Out *o, PyObject *v)
{
    if (v == Py_None)
        return EMIT_LIT(o, "null");
    const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(v);
    const Py_ssize_t n = PyBytes_GET_SIZE(v);
    if (plain_ascii(p, n))
        return emit(o, (const char *)p, n);
    PyObject *s = PyUnicode_DecodeUTF8((const char *)p, n, "strict");
    if (s == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
            return -1;
        PyErr_Clear();
        return EMIT_LIT(o, "0x") < 0 ? -1 : emit_hex(o, p, n);
    }
    const int done = emit_safe_str(o, s);
    Py_DECREF(s);
    return done;
}

/* ----------------------------------------------------------------- records' JSON */

/* A character inside a JSON string as json.dumps writes it (ensure_ascii). */
static int
emit_json_char(Out *o, Py_UCS4 c)
{
    char b[12];
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\')
        return emit(o, (const char *)&(char){(char)c}, 1);
    b[0] = '\\';
    switch (c) {
    case '"': b[1] = '"'; return emit(o, b, 2);
    case '\\': b[1] = '\\'; return emit(o, b, 2);
    case '\n': b[1] = 'n'; return emit(o, b, 2);
    case '\r': b[1] = 'r'; return emit(o, b, 2);
    case '\t': b[1] = 't'; return emit(o, b, 2);
    case '\b': b[1] = 'b'; return emit(o, b, 2);
    case '\f': b[1] = 'f'; return emit(o, b, 2);
    }
    if (c >= 0x10000) { /* a surrogate pair */
        const Py_UCS4 v = c - 0x10000, hi = 0xD800 | (v >> 10), lo = 0xDC00 | (v & 0x3FF);
        return emit_json_char(o, hi) < 0 ? -1 : emit_json_char(o, lo);
    }
    b[1] = 'u';
    for (int i = 0; i < 4; i++)
        b[2 + i] = HEX[(c >> (4 * (3 - i))) & 0xF];
    return emit(o, b, 6);
}

static int
emit_json_str(Out *o, PyObject *s)
{
    if (EMIT_LIT(o, "\"") < 0 || emit_each(o, s, emit_json_char) < 0)
        return -1;
    return EMIT_LIT(o, "\"");
}

enum { TEXT, JSON_HEX, JSON_BASE64, JSON_UTF8 };

/* Bytes as dump.encode_bytes gives them for how, as a JSON value. */
static int
emit_json_bytes(Out *o, PyObject *v, int mode)
{
    if (v == Py_None)
        return EMIT_LIT(o, "null");
    const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(v);
    const Py_ssize_t n = PyBytes_GET_SIZE(v);
    if (EMIT_LIT(o, "\"") < 0)
        return -1;
    if (mode == JSON_HEX) {
        if (emit_hex(o, p, n) < 0)
            return -1;
    } else if (mode == JSON_BASE64) {
        if (emit_base64(o, p, n, 0, 1) < 0)
            return -1;
    } else if (plain_ascii(p, n)) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (emit_json_char(o, p[i]) < 0)
                return -1;
    } else if (emit_replaced(o, (const char *)p, n, emit_json_char) < 0) {
        return -1;
    }
    return EMIT_LIT(o, "\"");
}

/* --------------------------------------------------------------------- the records */

/* What a line needs of a record, every field checked for the type the formatters take. */
typedef struct {
    long long offset, timestamp, sequence;
    PyObject *timestamp_type, *key, *value, *headers;
} Fields;

/* 1 when r's fields are what these formatters format (a record_type object, not a control
 * record; ints within 64 bits, bytes or None, a list of (str, bytes | None)), else 0. */
static int
fields_of(PyObject *r, PyTypeObject *record_type, const Py_ssize_t *offsets, Fields *f)
{
    if (Py_TYPE(r) != record_type || GET(r, F_CONTROL) != Py_None)
        return 0;
    PyObject *ints[3] = {GET(r, F_OFFSET), GET(r, F_TIMESTAMP), GET(r, F_SEQUENCE)};
    long long *to[3] = {&f->offset, &f->timestamp, &f->sequence};
    for (int i = 0; i < 3; i++) {
        int overflow = 0;
        if (ints[i] == NULL || !PyLong_CheckExact(ints[i]))
            return 0;
        *to[i] = PyLong_AsLongLongAndOverflow(ints[i], &overflow);
        if (overflow)
            return 0;
    }
    f->timestamp_type = GET(r, F_TIMESTAMP_TYPE);
    f->key = GET(r, F_KEY);
    f->value = GET(r, F_VALUE);
    f->headers = GET(r, F_HEADERS);
    if (f->timestamp_type == NULL || !PyUnicode_CheckExact(f->timestamp_type)
        || f->key == NULL || (f->key != Py_None && !PyBytes_CheckExact(f->key))
        || f->value == NULL || (f->value != Py_None && !PyBytes_CheckExact(f->value))
        || f->headers == NULL || !PyList_CheckExact(f->headers))
        return 0;
    for (Py_ssize_t h = 0, n = PyList_GET_SIZE(f->headers); h < n; h++) {
        PyObject *pair = PyList_GET_ITEM(f->headers, h);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2
            || !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 0))
            || (PyTuple_GET_ITEM(pair, 1) != Py_None && !PyBytes_CheckExact(PyTuple_GET_ITEM(pair, 1))))
            return 0;
    }
    return 1;
}

/* records' text line (cli/records.py _record_line), newline included. */
static int
text_line(Out *o, const Fields *f)
{
    if (EMIT_LIT(o, "offset ") < 0 || emit_int(o, f->offset) < 0 || EMIT_LIT(o, " ") < 0
        || emit_safe_str(o, f->timestamp_type) < 0 || EMIT_LIT(o, " ") < 0
        || emit_int(o, f->timestamp) < 0 || EMIT_LIT(o, " key=") < 0 || emit_show(o, f->key) < 0
        || EMIT_LIT(o, " value=") < 0 || emit_show(o, f->value) < 0)
        return -1;
    const Py_ssize_t n = PyList_GET_SIZE(f->headers);
    for (Py_ssize_t h = 0; h < n; h++) {
        PyObject *pair = PyList_GET_ITEM(f->headers, h);
        if ((h == 0 ? EMIT_LIT(o, " headers=[") : EMIT_LIT(o, ", ")) < 0
            || emit_safe_str(o, PyTuple_GET_ITEM(pair, 0)) < 0 || EMIT_LIT(o, "=") < 0
            || emit_show(o, PyTuple_GET_ITEM(pair, 1)) < 0)
            return -1;
    }
    return (n && EMIT_LIT(o, "]") < 0) ? -1 : EMIT_LIT(o, "\n");
}

/* records --json's object (cli/records.py _record_json: dump.record_dict and the timestamp
 * type, as json.dumps writes them), newline included. */
static int
json_line(Out *o, const Fields *f, int mode)
{
    if (EMIT_LIT(o, "{\"offset\": ") < 0 || emit_int(o, f->offset) < 0
        || EMIT_LIT(o, ", \"timestamp\": ") < 0 || emit_int(o, f->timestamp) < 0
        || EMIT_LIT(o, ", \"key\": ") < 0 || emit_json_bytes(o, f->key, mode) < 0
        || EMIT_LIT(o, ", \"value\": ") < 0 || emit_json_bytes(o, f->value, mode) < 0
        || EMIT_LIT(o, ", \"headers\": [") < 0)
        return -1;
    for (Py_ssize_t h = 0, n = PyList_GET_SIZE(f->headers); h < n; h++) {
        PyObject *pair = PyList_GET_ITEM(f->headers, h);
        if ((h && EMIT_LIT(o, ", ") < 0) || EMIT_LIT(o, "[") < 0
            || emit_json_str(o, PyTuple_GET_ITEM(pair, 0)) < 0 || EMIT_LIT(o, ", ") < 0
            || emit_json_bytes(o, PyTuple_GET_ITEM(pair, 1), mode) < 0 || EMIT_LIT(o, "]") < 0)
            return -1;
    }
    return (EMIT_LIT(o, "], \"timestamp_type\": ") < 0 || emit_json_str(o, f->timestamp_type) < 0)
        ? -1 : EMIT_LIT(o, "}\n");
}

PyDoc_STRVAR(record_lines_doc,
"record_lines(records, record_type, mode) -> str | None\n\n"
"The lines `kafkacodec records` prints for records (a list of record_type objects), each\n"
"ending with a newline: mode 'text' as its text lines, 'hex', 'base64' or 'utf8' as its\n"
"--json objects with bytes so (--bytes). None when a record is one the Python formatter\n"
"must print (a control record, a field of another type).");

static PyObject *
record_lines(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *records;
    PyTypeObject *record_type;
    const char *how;
    if (!PyArg_ParseTuple(args, "O!O!s:record_lines", &PyList_Type, &records, &PyType_Type,
                          &record_type, &how))
        return NULL;
    const int mode = !strcmp(how, "text") ? TEXT : !strcmp(how, "hex") ? JSON_HEX
        : !strcmp(how, "base64") ? JSON_BASE64 : !strcmp(how, "utf8") ? JSON_UTF8 : -1;
    if (mode < 0)
        return PyErr_Format(PyExc_ValueError, "record_lines: no mode %s", how);
    Py_ssize_t offsets[N_FIELDS];
    if (slot_offsets(record_type, offsets) < 0)
        return NULL;
    Out o = {NULL, 0, 0};
    for (Py_ssize_t i = 0, n = PyList_GET_SIZE(records); i < n; i++) {
        Fields f;
        if (!fields_of(PyList_GET_ITEM(records, i), record_type, offsets, &f)) {
            PyMem_Free(o.data);
            Py_RETURN_NONE;
        }
        if ((mode == TEXT ? text_line(&o, &f) : json_line(&o, &f, mode)) < 0) {
            PyMem_Free(o.data);
            return NULL;
        }
    }
    return out_str(&o);
}

/* ------------------------------------------------------------ kafka-dump-log's lines */

/* A key or value as dump._text: UTF-8 decoded with "replace", nothing escaped. */
static int
emit_dump_text(Out *o, PyObject *v)
{
    const char *p = PyBytes_AS_STRING(v);
    const Py_ssize_t n = PyBytes_GET_SIZE(v);
    Py_ssize_t i = 0;
    while (i < n && (uint8_t)p[i] < 0x80)
        i++;
    return i == n ? emit(o, p, n) : emit_replaced(o, p, n, emit_utf8);
}

PyDoc_STRVAR(dump_lines_doc,
"dump_lines(records, record_type, print_data, previous, texts=None) -> (str, last, gaps) | None\n\n"
"kafka-dump-log's lines for the records of a v2 batch (dump._record_lines), each ending\n"
"with a newline, with payloads when print_data: the key and value as text, or when texts\n"
"is given (a decoder's), the first two items of texts[i], (key, payload, ...) for record i,\n"
"each a str or None (not printed). previous: the offset of the record before them (None for none); last: the last\n"
"record's offset; gaps: the (offset, next offset) pairs that are not consecutive. None when\n"
"a record is one the Python formatter must print (a control record, a header key that is\n"
"not ASCII, ...).");

/* A decoder's text: 0 written (or None: nothing), 1 give up, -1 an exception. */
static int
emit_decoded(Out *o, const char *label, Py_ssize_t label_len, PyObject *text)
{
    if (text == Py_None)
        return 0;
    if (!PyUnicode_CheckExact(text))
        return 1;
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(text, &n);
    if (p == NULL) { /* not UTF-8: Python writes it as it can */
        PyErr_Clear();
        return 1;
    }
    return emit(o, label, label_len) < 0 || emit(o, p, n) < 0 ? -1 : 0;
}

static PyObject *
dump_lines(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *records, *previous, *texts = Py_None;
    PyTypeObject *record_type;
    int print_data;
    if (!PyArg_ParseTuple(args, "O!O!pO|O:dump_lines", &PyList_Type, &records, &PyType_Type,
                          &record_type, &print_data, &previous, &texts))
        return NULL;
    if (texts != Py_None && (!PyList_CheckExact(texts) || PyList_GET_SIZE(texts) != PyList_GET_SIZE(records)))
        return PyErr_Format(PyExc_ValueError, "dump_lines: texts is a list with one item per record");
    Py_ssize_t offsets[N_FIELDS];
    if (slot_offsets(record_type, offsets) < 0)
        return NULL;
    int have_last = previous != Py_None, overflow = 0;
    long long last = have_last ? PyLong_AsLongLongAndOverflow(previous, &overflow) : 0;
    if (overflow)
        Py_RETURN_NONE;
    if (last == -1 && PyErr_Occurred())
        return NULL;
    PyObject *gaps = PyList_New(0);
    if (gaps == NULL)
        return NULL;
    Out o = {NULL, 0, 0};
    for (Py_ssize_t i = 0, n = PyList_GET_SIZE(records); i < n; i++) {
        Fields f;
        if (!fields_of(PyList_GET_ITEM(records, i), record_type, offsets, &f))
            goto give_up;
        for (Py_ssize_t h = 0, nh = PyList_GET_SIZE(f.headers); h < nh; h++)
            if (!PyUnicode_IS_ASCII(PyTuple_GET_ITEM(PyList_GET_ITEM(f.headers, h), 0)))
                goto give_up;
        if (!PyUnicode_IS_ASCII(f.timestamp_type))
            goto give_up;
        if (have_last && (last == LLONG_MAX || f.offset != last + 1)) {
            PyObject *pair = Py_BuildValue("(LL)", last, f.offset);
            if (pair == NULL || PyList_Append(gaps, pair) < 0) {
                Py_XDECREF(pair);
                goto error;
            }
            Py_DECREF(pair);
        }
        last = f.offset;
        have_last = 1;
        if (EMIT_LIT(&o, "| offset: ") < 0 || emit_int(&o, f.offset) < 0 || EMIT_LIT(&o, " ") < 0
            || emit(&o, PyUnicode_DATA(f.timestamp_type), PyUnicode_GET_LENGTH(f.timestamp_type)) < 0
            || EMIT_LIT(&o, ": ") < 0 || emit_int(&o, f.timestamp) < 0
            || EMIT_LIT(&o, " keySize: ") < 0
            || emit_int(&o, f.key == Py_None ? -1 : PyBytes_GET_SIZE(f.key)) < 0
            || EMIT_LIT(&o, " valueSize: ") < 0
            || emit_int(&o, f.value == Py_None ? -1 : PyBytes_GET_SIZE(f.value)) < 0
            || EMIT_LIT(&o, " sequence: ") < 0 || emit_int(&o, f.sequence) < 0
            || EMIT_LIT(&o, " headerKeys: [") < 0)
            goto error;
        for (Py_ssize_t h = 0, nh = PyList_GET_SIZE(f.headers); h < nh; h++) {
            PyObject *k = PyTuple_GET_ITEM(PyList_GET_ITEM(f.headers, h), 0);
            if ((h && EMIT_LIT(&o, ",") < 0) || emit(&o, PyUnicode_DATA(k), PyUnicode_GET_LENGTH(k)) < 0)
                goto error;
        }
        if (EMIT_LIT(&o, "]") < 0)
            goto error;
        if (print_data && texts != Py_None) {
            PyObject *pair = PyList_GET_ITEM(texts, i);
            if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) < 2)
                goto give_up;
            int done = emit_decoded(&o, " key: ", 6, PyTuple_GET_ITEM(pair, 0));
            if (done == 0)
                done = emit_decoded(&o, " payload: ", 10, PyTuple_GET_ITEM(pair, 1));
            if (done > 0)
                goto give_up;
            if (done < 0)
                goto error;
        } else {
            if (print_data && f.key != Py_None
                && (EMIT_LIT(&o, " key: ") < 0 || emit_dump_text(&o, f.key) < 0))
                goto error;
            if (print_data && f.value != Py_None
                && (EMIT_LIT(&o, " payload: ") < 0 || emit_dump_text(&o, f.value) < 0))
                goto error;
        }
        if (EMIT_LIT(&o, "\n") < 0)
            goto error;
    }
    PyObject *text = out_str(&o);
    if (text == NULL) {
        Py_DECREF(gaps);
        return NULL;
    }
    PyObject *last_obj = have_last ? PyLong_FromLongLong(last) : Py_NewRef(previous);
    if (last_obj == NULL) {
        Py_DECREF(text);
        Py_DECREF(gaps);
        return NULL;
    }
    return Py_BuildValue("(NNN)", text, last_obj, gaps);
give_up:
    PyMem_Free(o.data);
    Py_DECREF(gaps);
    Py_RETURN_NONE;
error:
    PyMem_Free(o.data);
    Py_DECREF(gaps);
    return NULL;
}

PyMethodDef TEXT_METHODS[] = {
    {"record_lines", record_lines, METH_VARARGS, record_lines_doc},
    {"dump_lines", dump_lines, METH_VARARGS, dump_lines_doc},
    {NULL, NULL, 0, NULL},
};
