/* Record objects: their slots (slot_offsets, fill_record), Record.__init__ in C
 * (native_record_init) and freelists for Record and the batch classes (keep_freed). */
#include "_native.h"

const char *const FIELD_NAMES[N_FIELDS] = {
    "offset", "timestamp", "timestamp_type", "key", "value", "headers", "sequence",
    "control", "attributes",
};

static int find_slot_offsets(PyTypeObject *type, Py_ssize_t offsets[N_FIELDS]);

/* Byte offsets of the Record slots, found through the class's member descriptors; the
 * last class asked about is remembered (and held, so that its address stays its own). */
int
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

int
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

PyMethodDef RECORD_METHODS[] = {
    {"native_record_init", native_record_init, METH_O, native_record_init_doc},
    {"keep_freed", keep_freed, METH_O, keep_freed_doc},
    {NULL, NULL, 0, NULL},
};
