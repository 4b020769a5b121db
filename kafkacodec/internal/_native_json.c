/*
 * The decoded structs of Kafka's internal topics as the JSON
 * of Kafka's generated <Spec>JsonConverter.write, many records at a time. The Python
 * writer (kafkacodec/internal/kafka_json.py) is the reference and decides everything: it
 * compiles each (class, version, validVersions) into a plan (which fields are present, their
 * JSON names and kinds), and this file only walks the plan over the objects' slots. For
 * anything a plan does not say how to write (a non-empty tagged field, a float64, a field
 * printed by a Python function, a string that is not UTF-8, an int past 64 bits, a value of
 * an unexpected type) it gives up and returns None: the caller writes that record in
 * Python, which gives the same text or raises kafkacodec's error. A test compares both on
 * every internal-topic vector and on generated structs of every spec.
 *
 *   plan(cls, entries, tagged_slot, resolve) -> a plan (a capsule)
 *       entries: (prefix, slot, kind, element kind, names[, tag, default mode, default])
 *       for each field printed, in order; prefix: the field's `"name":` text; names:
 *       {int: JSON text} for NAMES. A tagged field (tag >= 0) is the attribute `slot` of
 *       the value of its tag in tagged_fields, printed only when its tag is there and its
 *       value is not its default (the default modes below, FieldSpec's non-default check);
 *       tagged_slot: the class's tagged_fields slot or None; resolve(cls) -> the plan of a
 *       nested struct's class at the same version (None: give up).
 *   write(obj, plan) -> str | None
 *   coordinator_texts(items, key_plans, value_plans, value_word) -> [(key, payload, False) | None]
 *   metadata_texts(items, plans, names) -> [(None, payload, False) | None]
 *       items: Codecs.coordinator_pairs' output; key_plans {record type: plan | None};
 *       value_plans {record type: (plan | None for each version from 0)}; the texts
 *       dump_format's coordinator parsers print.
 */
#include "_native.h"

enum { J_INT = 1, J_BOOL = 2, J_STR = 3, J_BYTES = 4, J_UUID = 5, J_STRUCT = 6, J_NAMES = 7,
       J_ARRAY = 8 };
/* When a tagged field's value is its default (kafka_json._is_default): equal to it (and not
 * None), None, an empty list, the same truth, or a struct (given up: Python compares it). */
enum { D_EQ = 1, D_NONE = 2, D_EMPTY = 3, D_BOOL = 4, D_STRUCT = 5 };
#define MAX_DEPTH 32

static const char *CAPSULE = "kafkacodec.internal._native.Plan";

static void
free_plan(Plan *p)
{
    if (p == NULL)
        return;
    for (Py_ssize_t i = 0; i < p->n && p->entries; i++) {
        PyMem_Free(p->entries[i].prefix);
        Py_XDECREF(p->entries[i].names);
        Py_XDECREF(p->entries[i].attr);
        Py_XDECREF(p->entries[i].default_value);
        Py_XDECREF(p->entries[i].child_type);
        Py_XDECREF(p->entries[i].child);
    }
    PyMem_Free(p->entries);
    Py_XDECREF(p->cls);
    Py_XDECREF(p->resolve);
    PyMem_Free(p);
}

static void
capsule_free(PyObject *capsule)
{
    free_plan((Plan *)PyCapsule_GetPointer(capsule, CAPSULE));
}

Plan *
plan_of(PyObject *capsule)
{
    return (Plan *)PyCapsule_GetPointer(capsule, CAPSULE);
}

PyDoc_STRVAR(plan_doc,
"plan(cls, entries, tagged_slot, resolve) -> a plan for write() (see the module's doc)");

static PyObject *
make_plan(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *cls;
    PyObject *entries, *tagged, *resolve;
    if (!PyArg_ParseTuple(args, "O!O!OO:plan", &PyType_Type, &cls, &PyTuple_Type, &entries,
                          &tagged, &resolve))
        return NULL;
    Plan *p = PyMem_Calloc(1, sizeof(Plan));
    if (p == NULL)
        return PyErr_NoMemory();
    p->cls = (PyTypeObject *)Py_NewRef(cls);
    p->resolve = Py_NewRef(resolve);
    p->tagged_offset = -1;
    if (tagged != Py_None) {
        const char *name = PyUnicode_AsUTF8(tagged);
        if (name == NULL || (p->tagged_offset = member_offset(cls, name)) < 0)
            goto fail;
    }
    p->n = PyTuple_GET_SIZE(entries);
    p->entries = PyMem_Calloc(p->n ? p->n : 1, sizeof(Entry));
    if (p->entries == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < p->n; i++) {
        Entry *e = &p->entries[i];
        PyObject *prefix, *slot, *names, *dflt = Py_None;
        e->tag = -1;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(entries, i), "UUiiO|iiO:an entry", &prefix, &slot,
                              &e->kind, &e->element, &names, &e->tag, &e->default_mode, &dflt))
            goto fail;
        Py_ssize_t n;
        const char *text = PyUnicode_AsUTF8AndSize(prefix, &n);
        const char *slot_name = PyUnicode_AsUTF8(slot);
        if (text == NULL || slot_name == NULL)
            goto fail;
        if (e->tag >= 0) { /* read from its tag's value, whose class the plan does not know */
            if (p->tagged_offset < 0 || e->default_mode < D_EQ || e->default_mode > D_STRUCT) {
                PyErr_SetString(PyExc_ValueError, "a tagged entry needs tagged_slot and a default mode");
                goto fail;
            }
            e->attr = Py_NewRef(slot);
            PyUnicode_InternInPlace(&e->attr);
            e->default_value = Py_NewRef(dflt);
        } else if ((e->offset = member_offset(cls, slot_name)) < 0) {
            goto fail;
        }
        if ((e->prefix = PyMem_Malloc((size_t)n + 1)) == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        memcpy(e->prefix, text, (size_t)n);
        e->prefix_len = n;
        if (e->kind < J_INT || e->kind > J_ARRAY
            || (e->kind == J_ARRAY && (e->element < J_INT || e->element > J_STRUCT))) {
            PyErr_SetString(PyExc_ValueError, "an entry of an unknown kind");
            goto fail;
        }
        if (e->kind == J_NAMES) {
            if (!PyDict_Check(names)) {
                PyErr_SetString(PyExc_TypeError, "NAMES needs a dict");
                goto fail;
            }
            e->names = Py_NewRef(names);
        }
    }
    PyObject *capsule = PyCapsule_New(p, CAPSULE, capsule_free);
    if (capsule == NULL)
        free_plan(p);
    return capsule;
fail:
    free_plan(p);
    return NULL;
}

/* ---------------------------------------------------------------------------- writing */

/* write_*: 0 written, 1 give up (the caller writes it in Python), -1 an exception. */

/* A str as Jackson writes it: ", \, \n, \t, \b, \f, \r escaped, other characters below
 * 0x20 as \u00XX, everything else as its UTF-8. A str that is not valid UTF-8 (surrogate
 * escapes of bytes that were not UTF-8) is given up: the Python writer refuses it. */
static int
write_str(Out *o, PyObject *s)
{
    if (!PyUnicode_CheckExact(s))
        return 1;
    Py_ssize_t n;
    const char *p;
    if (PyUnicode_IS_ASCII(s)) {
        p = (const char *)PyUnicode_DATA(s);
        n = PyUnicode_GET_LENGTH(s);
    } else if ((p = PyUnicode_AsUTF8AndSize(s, &n)) == NULL) {
        PyErr_Clear();
        return 1;
    }
    if (o->cap - o->len < n + 2 && out_reserve(o, n + 2) < 0)
        return -1;
    o->data[o->len++] = '"';
    Py_ssize_t run = 0; /* characters copied as they are, written at once */
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)p[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (emit(o, p + run, i - run) < 0)
            return -1;
        run = i + 1;
        char esc[6] = {'\\', 0, '0', '0', 0, 0};
        int len = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\r': esc[1] = 'r'; break;
        default:
            esc[1] = 'u';
            esc[4] = "0123456789ABCDEF"[c >> 4];
            esc[5] = "0123456789ABCDEF"[c & 15];
            len = 6;
        }
        if (emit(o, esc, len) < 0)
            return -1;
    }
    if (emit(o, p + run, n - run) < 0)
        return -1;
    return EMIT_LIT(o, "\"");
}

static int write_struct(Out *o, PyObject *obj, Plan *p, int depth);

/* The plan of a nested struct's class (kept in the entry for the next one). */
static Plan *
child_plan(Entry *e, Plan *parent, PyObject *obj, int *give_up)
{
    if ((PyObject *)Py_TYPE(obj) != (PyObject *)e->child_type) {
        PyObject *got = PyObject_CallOneArg(parent->resolve, (PyObject *)Py_TYPE(obj));
        if (got == NULL)
            return NULL;
        if (got == Py_None) {
            Py_DECREF(got);
            *give_up = 1;
            return NULL;
        }
        if (plan_of(got) == NULL) {
            Py_DECREF(got);
            return NULL;
        }
        Py_XSETREF(e->child_type, (PyTypeObject *)Py_NewRef(Py_TYPE(obj)));
        Py_XSETREF(e->child, got);
    }
    return plan_of(e->child);
}

/* One value of kind (not an array) */
static int
write_value(Out *o, PyObject *v, int kind, Entry *e, Plan *p, int depth)
{
    if (v == Py_None)
        return EMIT_LIT(o, "null");
    switch (kind) {
    case J_INT: {
        int overflow = 0;
        if (!PyLong_CheckExact(v))
            return 1;
        const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow)
            return 1;
        if (x == -1 && PyErr_Occurred())
            return -1;
        return emit_int(o, x);
    }
    case J_BOOL:
        if (v == Py_True || v == Py_False)
            return v == Py_True ? EMIT_LIT(o, "true") : EMIT_LIT(o, "false");
        if (!PyLong_CheckExact(v))
            return 1;
        switch (PyObject_IsTrue(v)) {
        case 0: return EMIT_LIT(o, "false");
        case 1: return EMIT_LIT(o, "true");
        default: return -1;
        }
    case J_STR:
        return write_str(o, v);
    case J_BYTES:
    case J_UUID:
        if (!PyBytes_CheckExact(v))
            return 1;
        if (EMIT_LIT(o, "\"") < 0
            || emit_base64(o, (const uint8_t *)PyBytes_AS_STRING(v), PyBytes_GET_SIZE(v),
                           kind == J_UUID, kind == J_BYTES) < 0)
            return -1;
        return EMIT_LIT(o, "\"");
    case J_NAMES: {
        PyObject *text = PyDict_GetItemWithError(e->names, v);
        if (text == NULL)
            return PyErr_Occurred() ? -1 : 1;
        Py_ssize_t n;
        const char *t = PyUnicode_AsUTF8AndSize(text, &n);
        return t == NULL ? -1 : emit(o, t, n);
    }
    case J_STRUCT: {
        int give_up = 0;
        Plan *c = child_plan(e, p, v, &give_up);
        if (c == NULL)
            return give_up ? 1 : -1;
        return write_struct(o, v, c, depth + 1);
    }
    }
    return 1;
}


static int
write_array(Out *o, PyObject *list, Entry *e, Plan *p, int depth)
{
    if (list == Py_None)
        return EMIT_LIT(o, "null");
    if (!PyList_CheckExact(list))
        return 1;
    if (EMIT_LIT(o, "[") < 0)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        int done;
        if (i && EMIT_LIT(o, ",") < 0)
            return -1;
        if (e->element == J_STR || e->element == J_BYTES) {
            PyObject *inner = PyObject_GetAttr(item, VALUE_NAME);
            if (inner == NULL)
                return drop_ordinary_error() ? 1 : -1;
            done = write_value(o, inner, e->element, e, p, depth);
            Py_DECREF(inner);
        } else {
            done = write_value(o, item, e->element, e, p, depth);
        }
        if (done)
            return done;
    }
    return EMIT_LIT(o, "]");
}

/* The value of a tagged field of obj: a new reference, NULL with *absent set when its tag
 * is not there (or holds bytes: a tag this version does not know, which Python leaves out
 * too), NULL with an exception, or NULL with *give_up. The last item of a tag wins. */
int
tag_of(PyObject *item, long *number)
{
    PyObject *tag = PyObject_GetAttr(item, TAG_NAME);
    if (tag == NULL)
        return -1;
    *number = PyLong_Check(tag) ? PyLong_AsLong(tag) : -2;
    Py_DECREF(tag);
    return *number == -1 && PyErr_Occurred() ? -1 : 0;
}

PyObject *
tagged_value(PyObject *obj, const Plan *p, const Entry *e, int *absent, int *give_up)
{
    PyObject *list = SLOT(obj, p->tagged_offset), *found = NULL;
    *absent = 1;
    if (list == NULL || list == Py_None)
        return NULL;
    if (!PyList_CheckExact(list)) {
        *give_up = 1;
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        long t;
        if (tag_of(item, &t) < 0)
            return NULL;
        if (t != e->tag)
            continue;
        PyObject *value = PyObject_GetAttr(item, VALUE_NAME);
        if (value == NULL)
            return NULL;
        if (PyBytes_Check(value) || PyByteArray_Check(value) || PyMemoryView_Check(value)) {
            Py_DECREF(value);
            continue;
        }
        Py_XSETREF(found, value);
    }
    if (found == NULL)
        return NULL;
    *absent = 0;
    PyObject *v = PyObject_GetAttr(found, e->attr);
    Py_DECREF(found);
    return v;
}

/* 1 when v is the tagged field's default (not printed), 0 when not, -1 an exception, 2 give up. */
/* The fields a reader plan names (NativeJson.reader): new references in out[0..p->n); 1 read,
 * 0 give up, -1 an exception.
 * The tagged fields come from one pass over obj's tagged_fields (the last of a tag wins, a
 * tag holding bytes is one this version does not know: left out), as dump_format.get. */
int
read_fields(PyObject *obj, const Plan *p, PyObject **out)
{
    if (Py_TYPE(obj) != p->cls)
        return 0;
    for (Py_ssize_t i = 0; i < p->n; i++)
        out[i] = NULL;
    PyObject *tags = p->tagged_offset >= 0 ? SLOT(obj, p->tagged_offset) : NULL;
    if (tags != NULL && tags != Py_None) {
        if (!PyList_CheckExact(tags))
            return 0;
        for (Py_ssize_t t = 0; t < PyList_GET_SIZE(tags); t++) {
            PyObject *item = PyList_GET_ITEM(tags, t);
            long number;
            if (tag_of(item, &number) < 0)
                goto error;
            PyObject *value = NULL;
            for (Py_ssize_t i = 0; i < p->n; i++) {
                const Entry *e = &p->entries[i];
                if (e->tag < 0 || e->tag != number)
                    continue;
                if (value == NULL && (value = PyObject_GetAttr(item, VALUE_NAME)) == NULL)
                    goto error;
                if (PyBytes_Check(value) || PyByteArray_Check(value) || PyMemoryView_Check(value))
                    break;
                PyObject *v = PyObject_GetAttr(value, e->attr);
                if (v == NULL) {
                    Py_DECREF(value);
                    goto error;
                }
                Py_XSETREF(out[i], v);
            }
            Py_XDECREF(value);
        }
    }
    for (Py_ssize_t i = 0; i < p->n; i++) {
        const Entry *e = &p->entries[i];
        if (e->tag >= 0) {
            if (out[i] == NULL) /* its tag is not there: its default (a list: its own) */
                out[i] = PyList_CheckExact(e->default_value) ? PyList_New(0) : Py_NewRef(e->default_value);
            if (out[i] == NULL)
                goto error;
        } else if ((out[i] = SLOT(obj, e->offset)) == NULL) {
            goto give_up;
        } else {
            Py_INCREF(out[i]);
        }
    }
    return 1;
give_up:
    for (Py_ssize_t i = 0; i < p->n; i++)
        Py_CLEAR(out[i]);
    return 0;
error:
    for (Py_ssize_t i = 0; i < p->n; i++)
        Py_CLEAR(out[i]);
    return -1;
}

static int
is_default(PyObject *v, const Entry *e)
{
    switch (e->default_mode) {
    case D_NONE:
        return v == Py_None;
    case D_EQ:
        return v == Py_None ? 0 : PyObject_RichCompareBool(v, e->default_value, Py_EQ);
    case D_EMPTY:
        if (v == Py_None)
            return 0;
        return PyList_CheckExact(v) ? PyList_GET_SIZE(v) == 0 : 2;
    case D_BOOL: {
        if (v == Py_None)
            return 0;
        const int a = PyObject_IsTrue(v), b = PyObject_IsTrue(e->default_value);
        return a < 0 || b < 0 ? -1 : a == b;
    }
    }
    return 2;
}

static int
write_struct(Out *o, PyObject *obj, Plan *p, int depth)
{
    if (depth > MAX_DEPTH || Py_TYPE(obj) != p->cls)
        return 1;
    if (EMIT_LIT(o, "{") < 0)
        return -1;
    Py_ssize_t printed = 0;
    for (Py_ssize_t i = 0; i < p->n; i++) {
        Entry *e = &p->entries[i];
        PyObject *v;
        int done;
        if (e->tag >= 0) {
            int absent = 0, give_up = 0;
            if ((v = tagged_value(obj, p, e, &absent, &give_up)) == NULL) {
                if (PyErr_Occurred())
                    return -1;
                if (give_up)
                    return 1;
                continue; /* its tag is not there: its default, not printed */
            }
            const int d = is_default(v, e);
            if (d) {
                Py_DECREF(v);
                if (d == 1)
                    continue;
                return d < 0 ? -1 : 1;
            }
        } else if ((v = SLOT(obj, e->offset)) == NULL) {
            return 1;
        } else {
            Py_INCREF(v);
        }
        if ((printed++ && EMIT_LIT(o, ",") < 0) || emit(o, e->prefix, e->prefix_len) < 0) {
            Py_DECREF(v);
            return -1;
        }
        done = e->kind == J_ARRAY ? write_array(o, v, e, p, depth)
                                  : write_value(o, v, e->kind, e, p, depth);
        Py_DECREF(v);
        if (done)
            return done;
    }
    return EMIT_LIT(o, "}");
}

PyDoc_STRVAR(write_doc,
"write(obj, plan) -> str | None: obj as Kafka's JSON, None when Python must write it");

static PyObject *
write_json(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *obj, *capsule;
    if (!PyArg_ParseTuple(args, "OO:write", &obj, &capsule))
        return NULL;
    Plan *p = plan_of(capsule);
    if (p == NULL)
        return NULL;
    Out o = {NULL, 0, 0};
    const int done = write_struct(&o, obj, p, 0);
    if (done) {
        PyMem_Free(o.data);
        if (done < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    return out_str(&o);
}

/* ------------------------------------------------------ the coordinator topics' texts */

/* The plan for a record type (and version) in the tables, or NULL (not an error) when
 * there is none. */
static Plan *
key_plan(PyObject *table, PyObject *rt)
{
    PyObject *got = PyDict_GetItemWithError(table, rt);
    return got == NULL || got == Py_None ? NULL : plan_of(got);
}

PyObject *
by_version(PyObject *table, PyObject *key, PyObject *version)
{
    PyObject *versions = PyDict_GetItemWithError(table, key);
    if (versions == NULL || !PyTuple_Check(versions))
        return NULL;
    const Py_ssize_t v = PyLong_AsSsize_t(version);
    if (v < 0 || v >= PyTuple_GET_SIZE(versions)) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *got = PyTuple_GET_ITEM(versions, v);
    return got == Py_None ? NULL : got;
}

static Plan *
value_plan(PyObject *table, PyObject *rt, PyObject *version)
{
    PyObject *got = by_version(table, rt, version);
    return got == NULL ? NULL : plan_of(got);
}

/* One item's (key, payload): 0 and *out set, 1 give up, -1 an exception. */
static int
coordinator_item(PyObject *item, PyObject *keys, PyObject *values, PyObject *word,
                 PyObject **out)
{
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 4)
        return 1;
    PyObject *rt = PyTuple_GET_ITEM(item, 0), *kobj = PyTuple_GET_ITEM(item, 1);
    PyObject *version = PyTuple_GET_ITEM(item, 2), *vobj = PyTuple_GET_ITEM(item, 3);
    if (!PyLong_CheckExact(rt) || !PyLong_CheckExact(version))
        return 1;
    Plan *kp = key_plan(keys, rt);
    if (kp == NULL)
        return PyErr_Occurred() ? -1 : 1;
    /* Jackson's ObjectNode: {"type":"<record type>","data":{...}} (numbers as text) */
    Out o = {NULL, 0, 0};
    int done;
    const long long type = PyLong_AsLongLong(rt);
    if ((type == -1 && PyErr_Occurred()) || EMIT_LIT(&o, "{\"type\":\"") < 0
        || emit_int(&o, type) < 0 || EMIT_LIT(&o, "\",\"data\":") < 0)
        goto error;
    if ((done = write_struct(&o, kobj, kp, 0)) != 0)
        goto give_up;
    if (EMIT_LIT(&o, "}") < 0)
        goto error;
    PyObject *key = out_str(&o);
    if (key == NULL)
        return -1;
    PyObject *payload;
    if (vobj == Py_None) {
        payload = PyUnicode_FromString("<DELETE>");
    } else {
        Plan *vp = value_plan(values, rt, version);
        if (vp == NULL) {
            Py_DECREF(key);
            return PyErr_Occurred() ? -1 : 1;
        }
        Py_ssize_t wn;
        const char *w = PyUnicode_AsUTF8AndSize(word, &wn);
        const long long v = PyLong_AsLongLong(version);
        if (w == NULL || (v == -1 && PyErr_Occurred()) || EMIT_LIT(&o, "{\"") < 0
            || emit(&o, w, wn) < 0 || EMIT_LIT(&o, "\":\"") < 0 || emit_int(&o, v) < 0
            || EMIT_LIT(&o, "\",\"data\":") < 0) {
            Py_DECREF(key);
            goto error;
        }
        if ((done = write_struct(&o, vobj, vp, 0)) != 0 || EMIT_LIT(&o, "}") < 0) {
            Py_DECREF(key);
            if (done > 0)
                goto give_up;
            goto error;
        }
        payload = out_str(&o);
    }
    if (payload == NULL) {
        Py_DECREF(key);
        return -1;
    }
    *out = PyTuple_Pack(3, key, payload, Py_False);
    Py_DECREF(key);
    Py_DECREF(payload);
    return *out == NULL ? -1 : 0;
give_up:
    PyMem_Free(o.data);
    return done;
error:
    PyMem_Free(o.data);
    return -1;
}

PyDoc_STRVAR(coordinator_texts_doc,
"coordinator_texts(items, key_plans, value_plans, value_word) -> [(key, payload, False) | None]\n\n"
"The key and payload texts of kafka-dump-log's coordinator decoders for each item of\n"
"Codecs.coordinator_pairs' output, as dump_format's parsers return them (not failed);\n"
"None where Python must write it.");

PyObject *
texts_of(PyObject *items, int (*one)(PyObject *, PyObject *const *, PyObject **),
         PyObject *const *tables)
{
    const Py_ssize_t n = PyList_GET_SIZE(items);
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *got = NULL;
        const int done = one(PyList_GET_ITEM(items, i), tables, &got);
        if (done < 0) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, done ? Py_NewRef(Py_None) : got);
    }
    return out;
}

static int
coordinator_one(PyObject *item, PyObject *const *tables, PyObject **out)
{
    return coordinator_item(item, tables[0], tables[1], tables[2], out);
}

static PyObject *
coordinator_texts(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *items, *tables[3];
    if (!PyArg_ParseTuple(args, "O!O!O!U:coordinator_texts", &PyList_Type, &items, &PyDict_Type,
                          &tables[0], &PyDict_Type, &tables[1], &tables[2]))
        return NULL;
    return texts_of(items, coordinator_one, tables);
}

/* ------------------------------------------------------------ the metadata topic's texts */

PyDoc_STRVAR(metadata_texts_doc,
"metadata_texts(items, plans, names) -> [(None, payload, False) | None]\n\n"
"ClusterMetadataLogMessageParser's payload, {\"type\":NAME,\"version\":V,\"data\":{...}}, for each\n"
"item of Codecs.metadata_items' output (api_key, version, object): plans {apiKey: (plan |\n"
"None for each version from 0)}, names {apiKey: MetadataRecordType name}. None where Python\n"
"must write it.");

/* One item's payload: 0 and *out set, 1 give up, -1 an exception. tables: plans, names. */
static int
metadata_one(PyObject *item, PyObject *const *tables, PyObject **out)
{
    PyObject *name;
    Plan *p;
    Py_ssize_t len;
    const char *text;
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 3
        || (p = value_plan(tables[0], PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1))) == NULL
        || (name = PyDict_GetItemWithError(tables[1], PyTuple_GET_ITEM(item, 0))) == NULL
        || (text = PyUnicode_AsUTF8AndSize(name, &len)) == NULL)
        return PyErr_Occurred() ? -1 : 1;
    Out o = {NULL, 0, 0};
    const long long version = PyLong_AsLongLong(PyTuple_GET_ITEM(item, 1));
    int done = -1;
    if (!(version == -1 && PyErr_Occurred()) && EMIT_LIT(&o, "{\"type\":\"") == 0
        && emit(&o, text, len) == 0 && EMIT_LIT(&o, "\",\"version\":") == 0
        && emit_int(&o, version) == 0 && EMIT_LIT(&o, ",\"data\":") == 0)
        done = write_struct(&o, PyTuple_GET_ITEM(item, 2), p, 0);
    if (done == 0 && EMIT_LIT(&o, "}") < 0)
        done = -1;
    if (done) {
        PyMem_Free(o.data);
        return done;
    }
    return payload_of(&o, out);
}

int
payload_of(Out *o, PyObject **out)
{
    PyObject *payload = out_str(o);
    if (payload == NULL)
        return -1;
    *out = PyTuple_Pack(3, Py_None, payload, Py_False);
    Py_DECREF(payload);
    return *out == NULL ? -1 : 0;
}

static PyObject *
metadata_texts(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *items, *tables[2];
    if (!PyArg_ParseTuple(args, "O!O!O!:metadata_texts", &PyList_Type, &items, &PyDict_Type,
                          &tables[0], &PyDict_Type, &tables[1]))
        return NULL;
    return texts_of(items, metadata_one, tables);
}

PyMethodDef JSON_METHODS[] = {
    {"metadata_texts", metadata_texts, METH_VARARGS, metadata_texts_doc},
    {"plan", make_plan, METH_VARARGS, plan_doc},
    {"write", write_json, METH_VARARGS, write_doc},
    {"coordinator_texts", coordinator_texts, METH_VARARGS, coordinator_texts_doc},
    {NULL, NULL, 0, NULL},
};
