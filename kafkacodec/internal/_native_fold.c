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
 *       attrs: the key object's attributes that make the key, a tuple (key[0], ...) of
 *       their values; target: a dict, key -> (record offset, value version, value object);
 *       delete: a tombstone removes its key from target (true), or is kept as key -> None
 *       (false: a transaction's staged records, applied by its COMMIT marker).
 *   Returns the indices of the items that are errors, for the caller to report.
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

PyDoc_STRVAR(fold_latest_doc,
"fold_latest(items, records, types, attrs, target, delete) -> [index of an error, ...]\n\n"
"Fold coordinator_pairs' items into target, key -> (offset, value version, value) of the\n"
"newest record (see the file's comment).");

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
    PyObject *errors = PyList_New(0);
    if (errors == NULL)
        return NULL;
    const Py_ssize_t nattrs = PyTuple_GET_SIZE(attrs);
    if (nattrs > MAX_ATTRS)
        return PyErr_Format(PyExc_ValueError, "fold_latest: at most %d attributes", MAX_ATTRS);
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
        PyObject *key = PyTuple_New(nattrs);
        if (key == NULL)
            goto error;
        for (Py_ssize_t a = 0; a < nattrs; a++) {
            PyObject *v = SLOT(kobj, keys.offsets[a]);
            if (v == NULL) {
                Py_DECREF(key);
                PyErr_SetString(PyExc_AttributeError, "fold_latest: a key attribute is not set");
                goto error;
            }
            PyTuple_SET_ITEM(key, a, Py_NewRef(v));
        }
        int done;
        if (vobj == Py_None && delete) {
            done = PyDict_Contains(target, key);
            if (done > 0)
                done = PyDict_DelItem(target, key);
        } else if (vobj == Py_None) {
            done = PyDict_SetItem(target, key, Py_None);
        } else {
            PyObject *r = PyList_GET_ITEM(records, i), *offset;
            if (find_slots(&recs, Py_TYPE(r), OFFSET_ATTRS) < 0 || (offset = SLOT(r, recs.offsets[0])) == NULL) {
                Py_DECREF(key);
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_AttributeError, "fold_latest: a record without its offset");
                goto error;
            }
            PyObject *entry = PyTuple_Pack(3, offset, PyTuple_GET_ITEM(item, 2), vobj);
            done = entry == NULL ? -1 : PyDict_SetItem(target, key, entry);
            Py_XDECREF(entry);
        }
        Py_DECREF(key);
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
