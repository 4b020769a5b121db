/*
 * The newest record of each key of a coordinator topic, as Kafka's coordinators replay a
 * partition into their state (OffsetMetadataManager.replay for __consumer_offsets): in log
 * order, a record replaces the one before it with the same key, and a tombstone (a null
 * value) removes it. groups.py's fold calls this once per batch with the records decoded by
 * Codecs.coordinator_pairs, and decides everything else itself (which batches, which
 * record types, transactions and their markers, what to report).
 *
 *   fold_latest(items, records, types, attrs, target, delete) -> [index, ...]
 *       items: coordinator_pairs' output for records (each (record type, key object, value
 *       version, value object or None), or the error that record raised);
 *       types: the record types folded (others are passed over);
 *       attrs: the key object's attributes that make the key; target: nested dicts, one
 *       level per attribute, the last holding the newest record as bytes: its record type
 *       (int16), its offset (int64), then its value's bytes, all big-endian as on disk:
 *       target[group][topic][partition] for OffsetCommitKey's (group, topic, partition);
 *       delete: a tombstone removes its key from target (true), or is kept as None there
 *       (false: a transaction's staged records, applied by its COMMIT marker).
 *   Returns the indices of the items that are errors, for the caller to report.
 *
 * Nested, not keyed by a tuple: each level's keys are the interpreter's shared str objects
 * (runtime/_programs.c's cache) and small ints, found by identity in small dicts that stay
 * in the processor's cache, where a dict of 32k tuples misses it at every comparison of a
 * fresh tuple with a stored one. A newest record is one bytes object, not its decoded value:
 * what it replaces is freed long after it was made, out of the cache, and one object costs
 * one miss where a value object and its numbers cost five (and a tenth of the memory). Every
 * value was decoded before it came here (its items), so none goes unchecked; the caller
 * decodes the survivors again.
 */
#include "_native.h"

#define MAX_ATTRS 8

/* The slot offsets of attributes of the last type seen (held while it is used). */
typedef struct {
    PyTypeObject *type;
    Py_ssize_t offsets[MAX_ATTRS];
} Slots;

static int
find_slots(Slots *s, PyTypeObject *type, PyObject *attrs)
{
    if (type == s->type)
        return 0;
    for (Py_ssize_t a = 0; a < PyTuple_GET_SIZE(attrs); a++) {
        const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(attrs, a));
        if (name == NULL || (s->offsets[a] = member_offset(type, name)) < 0)
            return -1;
    }
    Py_XSETREF(s->type, (PyTypeObject *)Py_NewRef(type));
    return 0;
}

/* A record as the fold keeps it: record type, offset, value bytes (see the file's comment). */
static PyObject *
newest(PyObject *r, Slots *recs, PyObject *record_type)
{
    if (find_slots(recs, Py_TYPE(r), RECORD_ATTRS) < 0)
        return NULL;
    PyObject *offset = SLOT(r, recs->offsets[0]), *value = SLOT(r, recs->offsets[1]);
    if (offset == NULL || value == NULL)
        return PyErr_Format(PyExc_TypeError, "fold_latest: a record without its offset or value");
    const long long off = PyLong_AsLongLong(offset), rt = PyLong_AsLongLong(record_type);
    if ((off == -1 || rt == -1) && PyErr_Occurred())
        return NULL;
    Py_buffer view; /* bytes, or a slice of the segment (the Python parser's memoryview) */
    if (PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, 10 + view.len);
    if (out != NULL) {
        uint8_t *p = (uint8_t *)PyBytes_AS_STRING(out);
        const uint16_t rt_be = __builtin_bswap16((uint16_t)rt);
        const uint64_t off_be = __builtin_bswap64((uint64_t)off);
        memcpy(p, &rt_be, 2);
        memcpy(p + 2, &off_be, 8);
        memcpy(p + 10, view.buf, (size_t)view.len);
    }
    PyBuffer_Release(&view);
    return out;
}

PyDoc_STRVAR(fold_latest_doc,
"fold_latest(items, records, types, attrs, target, delete) -> [index of an error, ...]\n\n"
"Fold coordinator_pairs' items into target, nested dicts by each key attribute down to\n"
"the newest record's type, offset and value bytes (see the file's comment).");

static PyObject *
fold_latest(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *items, *records, *types, *attrs, *target;
    int delete;
    if (!PyArg_ParseTuple(args, "O!O!OO!O!p:fold_latest", &PyList_Type, &items, &PyList_Type,
                          &records, &types, &PyTuple_Type, &attrs, &PyDict_Type, &target, &delete))
        return NULL;
    if (PyList_GET_SIZE(items) != PyList_GET_SIZE(records))
        return PyErr_Format(PyExc_ValueError, "fold_latest: one item per record");
    if (!PyAnySet_Check(types))
        return PyErr_Format(PyExc_TypeError, "fold_latest: types is a set");
    const Py_ssize_t nattrs = PyTuple_GET_SIZE(attrs);
    if (nattrs < 1 || nattrs > MAX_ATTRS)
        return PyErr_Format(PyExc_ValueError, "fold_latest: 1 to %d attributes", MAX_ATTRS);
    PyObject *errors = PyList_New(0);
    if (errors == NULL)
        return NULL;
    Slots keys = {NULL, {0}}, recs = {NULL, {0}};
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 4) {
            PyObject *index = PyLong_FromSsize_t(i);
            if (index == NULL || PyList_Append(errors, index) < 0) {
                Py_XDECREF(index);
                goto error;
            }
            Py_DECREF(index);
            continue;
        }
        const int wanted = PySet_Contains(types, PyTuple_GET_ITEM(item, 0));
        if (wanted < 0)
            goto error;
        if (!wanted)
            continue;
        PyObject *kobj = PyTuple_GET_ITEM(item, 1), *vobj = PyTuple_GET_ITEM(item, 3);
        if (find_slots(&keys, Py_TYPE(kobj), attrs) < 0)
            goto error;
        PyObject *level = target, *key = NULL; /* borrowed */
        for (Py_ssize_t a = 0; a < nattrs; a++) {
            key = SLOT(kobj, keys.offsets[a]);
            if (key == NULL) {
                PyErr_SetString(PyExc_AttributeError, "fold_latest: a key attribute is not set");
                goto error;
            }
            if (a == nattrs - 1)
                break;
            PyObject *inner = PyDict_GetItemWithError(level, key);
            if (inner == NULL) {
                if (PyErr_Occurred() || (inner = PyDict_New()) == NULL)
                    goto error;
                const int set = PyDict_SetItem(level, key, inner);
                Py_DECREF(inner); /* held by level */
                if (set < 0)
                    goto error;
            } else if (!PyDict_CheckExact(inner)) {
                PyErr_SetString(PyExc_TypeError, "fold_latest: target's levels are dicts");
                goto error;
            }
            level = inner;
        }
        int done;
        if (vobj == Py_None && delete) {
            done = PyDict_Contains(level, key);
            if (done > 0)
                done = PyDict_DelItem(level, key);
        } else if (vobj == Py_None) {
            done = PyDict_SetItem(level, key, Py_None);
        } else {
            PyObject *entry = newest(PyList_GET_ITEM(records, i), &recs, PyTuple_GET_ITEM(item, 0));
            done = entry == NULL ? -1 : PyDict_SetItem(level, key, entry);
            Py_XDECREF(entry);
        }
        if (done < 0)
            goto error;
    }
    Py_XDECREF(keys.type);
    Py_XDECREF(recs.type);
    return errors;
error:
    Py_XDECREF(keys.type);
    Py_XDECREF(recs.type);
    Py_DECREF(errors);
    return NULL;
}

PyMethodDef FOLD_METHODS[] = {
    {"fold_latest", fold_latest, METH_VARARGS, fold_latest_doc},
    {NULL, NULL, 0, NULL},
};
