/*
 * Text templates over decoded structs, many records at a time: the toString of Kafka's
 * classes that kafka-dump-log prints for __remote_log_metadata (RemoteLogMetadata.toString).
 * The templates are data in dump_format.py (_REMOTE_TEMPLATES), whose Python interpreter
 * (_render) is the reference; dump_format compiles each (class, version) into a program
 * (template_program below) and this file only runs the programs over the objects. Anything
 * a program does not say how to write (an id no name is known for, an empty leader-epoch
 * map, a value of an unexpected type, an int past 64 bits, a string that is not UTF-8) gives
 * up: None, and the caller writes that record in Python, which gives the same text or
 * raises kafkacodec's error. A test compares both on every vector and on generated structs.
 *
 *   template_program(reader, ops) -> a program (a capsule)
 *       reader: a NativeJson.reader plan of the fields the ops read, in order;
 *       ops: (kind, field index, a, b, c) each: OP_LIT writes a (a str); OP_INT, OP_STR,
 *       OP_UUID, OP_BOOL write the field as Java prints it; OP_NAMES the name a ({int: str})
 *       gives it; OP_OPTIONAL_LEN c (a str) when it is null, else a, its length, b;
 *       OP_STRUCT the program a over it; OP_SORTED_MAP its items, read by the reader plan a
 *       (their key and value), as a Java TreeMap prints them: "{k=v, ...}" by key, the last
 *       of a key winning. Checks write nothing, and give up when they fail: OP_CHECK_MIN the
 *       field below a (an int), OP_CHECK_NOT_BELOW the field below field a (an index),
 *       OP_CHECK_NONEMPTY an empty list, OP_CHECK_NAMED an id that a ({int: str}) lacks.
 *   template_texts(items, programs) -> [(None, text, False) | None]
 *       items: Codecs.metadata_items' output, (apiKey, version, object) or an error;
 *       programs: {apiKey: (program | None for each version from 0)}.
 */
#include "_native.h"

enum { OP_LIT = 0, OP_INT = 1, OP_STR = 2, OP_UUID = 3, OP_BOOL = 4, OP_NAMES = 5,
       OP_OPTIONAL_LEN = 6, OP_STRUCT = 7, OP_SORTED_MAP = 8,
       /* checks: nothing written; a check that fails gives up (Python raises Kafka's error) */
       OP_CHECK_MIN = 10, OP_CHECK_NOT_BELOW = 11, OP_CHECK_NONEMPTY = 12, OP_CHECK_NAMED = 13 };
#define MAX_DEPTH 16

typedef struct {
    int kind;
    Py_ssize_t index;
    PyObject *a, *b, *c; /* owned: a literal, names, a program or reader, texts */
} Op;

typedef struct {
    PyObject *reader; /* the reader plan's capsule (owned) */
    Plan *plan;
    Py_ssize_t n;
    Op *ops;
} Program;

static const char *PROGRAM = "kafkacodec.internal._native.TemplateProgram";

static void
program_free(Program *p)
{
    for (Py_ssize_t i = 0; p->ops != NULL && i < p->n; i++) {
        Py_XDECREF(p->ops[i].a);
        Py_XDECREF(p->ops[i].b);
        Py_XDECREF(p->ops[i].c);
    }
    PyMem_Free(p->ops);
    Py_XDECREF(p->reader);
    PyMem_Free(p);
}

static void
free_program(PyObject *capsule)
{
    Program *p = PyCapsule_GetPointer(capsule, PROGRAM);
    if (p != NULL)
        program_free(p);
}

static Program *
program_of(PyObject *capsule)
{
    return PyCapsule_GetPointer(capsule, PROGRAM);
}

PyDoc_STRVAR(template_program_doc,
"template_program(reader, ops) -> program\n\n"
"A text template compiled for one class and version (this file's comment).");

static PyObject *
template_program(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *reader, *ops;
    if (!PyArg_ParseTuple(args, "OO!:template_program", &reader, &PyTuple_Type, &ops))
        return NULL;
    Plan *plan = plan_of(reader);
    if (plan == NULL)
        return NULL;
    Program *p = PyMem_Calloc(1, sizeof *p);
    if (p == NULL)
        return PyErr_NoMemory();
    p->n = PyTuple_GET_SIZE(ops);
    p->reader = Py_NewRef(reader);
    p->plan = plan;
    if ((p->ops = PyMem_Calloc((size_t)(p->n ? p->n : 1), sizeof(Op))) == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    for (Py_ssize_t i = 0; i < p->n; i++) {
        Op *op = &p->ops[i];
        PyObject *a = Py_None, *b = Py_None, *c = Py_None;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(ops, i), "in|OOO:op", &op->kind, &op->index, &a, &b, &c))
            goto error;
        op->a = Py_NewRef(a), op->b = Py_NewRef(b), op->c = Py_NewRef(c);
        const int reads = op->kind != OP_LIT;
        const int known = (op->kind >= OP_LIT && op->kind <= OP_SORTED_MAP)
                          || (op->kind >= OP_CHECK_MIN && op->kind <= OP_CHECK_NAMED);
        if (!known || (reads && (op->index < 0 || op->index >= plan->n))) {
            PyErr_Format(PyExc_ValueError, "op %zd: kind %d of field %zd is not one of the plan", i, op->kind, op->index);
            goto error;
        }
        int bad = 0;
        switch (op->kind) {
        case OP_LIT:
            bad = !PyUnicode_Check(a);
            break;
        case OP_NAMES:
        case OP_CHECK_NAMED:
            bad = !PyDict_Check(a);
            break;
        case OP_CHECK_MIN:
            bad = !PyLong_CheckExact(a);
            break;
        case OP_CHECK_NOT_BELOW: {
            const Py_ssize_t other = PyLong_CheckExact(a) ? PyLong_AsSsize_t(a) : -1;
            bad = other < 0 || other >= plan->n;
            if (bad)
                PyErr_Clear();
            break;
        }
        case OP_OPTIONAL_LEN:
            bad = !PyUnicode_Check(a) || !PyUnicode_Check(b) || !PyUnicode_Check(c);
            break;
        case OP_STRUCT:
            bad = program_of(a) == NULL;
            break;
        case OP_SORTED_MAP:
            bad = plan_of(a) == NULL || plan_of(a)->n != 2;
            break;
        default:
            break;
        }
        if (bad) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "op %zd: the argument is not what kind %d takes", i, op->kind);
            goto error;
        }
    }
    PyObject *capsule = PyCapsule_New(p, PROGRAM, free_program);
    if (capsule == NULL)
        goto error;
    return capsule;
error:
    program_free(p);
    return NULL;
}

/* The text of a str (UTF-8): 0, 1 to give up (not a str, or not UTF-8), -1 on error. */
static int
emit_text(Out *o, PyObject *s)
{
    if (!PyUnicode_Check(s))
        return 1;
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (u == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
            return -1;
        PyErr_Clear();
        return 1;
    }
    return emit(o, u, n) < 0 ? -1 : 0;
}

/* An int in decimal: 0, 1 to give up (not an int, or past 64 bits), -1 on error. */
static int
emit_long(Out *o, PyObject *v)
{
    if (!PyLong_CheckExact(v))
        return 1;
    int overflow;
    const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow)
        return 1;
    if (x == -1 && PyErr_Occurred())
        return -1;
    return emit_int(o, x) < 0 ? -1 : 0;
}

typedef struct {
    long long key, value;
    Py_ssize_t at;
} Pair;

static int
pair_order(const void *x, const void *y)
{
    const Pair *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->at < b->at ? -1 : (a->at > b->at);
}

/* A TreeMap<Integer, Long>.toString of the items (the reader plan's two fields each):
 * 0, 1 to give up (none: Python raises Kafka's error; a value of another type), -1. */
static int
emit_sorted_map(Out *o, PyObject *list, const Plan *reader)
{
    if (!PyList_CheckExact(list) || PyList_GET_SIZE(list) == 0)
        return 1;
    const Py_ssize_t n = PyList_GET_SIZE(list);
    Pair *pairs = PyMem_Malloc((size_t)n * sizeof *pairs);
    if (pairs == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        PyObject *kv[2];
        const int got = read_fields(PyList_GET_ITEM(list, i), reader, kv);
        if (got <= 0) {
            rc = got < 0 ? -1 : 1;
            break;
        }
        int overflow = 0;
        pairs[i].at = i;
        if (!PyLong_CheckExact(kv[0]) || !PyLong_CheckExact(kv[1]))
            rc = 1;
        else {
            pairs[i].key = PyLong_AsLongLongAndOverflow(kv[0], &overflow);
            rc = overflow ? 1 : rc;
            pairs[i].value = PyLong_AsLongLongAndOverflow(kv[1], &overflow);
            rc = overflow ? 1 : rc;
            if (rc == 0 && PyErr_Occurred())
                rc = -1;
        }
        Py_DECREF(kv[0]);
        Py_DECREF(kv[1]);
    }
    if (rc == 0) {
        qsort(pairs, (size_t)n, sizeof *pairs, pair_order);
        rc = EMIT_LIT(o, "{");
        int first = 1;
        for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
            if (i + 1 < n && pairs[i + 1].key == pairs[i].key)
                continue; /* a later put of the same key replaced it */
            if ((!first && EMIT_LIT(o, ", ") < 0) || emit_int(o, pairs[i].key) < 0 || EMIT_LIT(o, "=") < 0
                || emit_int(o, pairs[i].value) < 0)
                rc = -1;
            first = 0;
        }
        if (rc == 0 && EMIT_LIT(o, "}") < 0)
            rc = -1;
    }
    PyMem_Free(pairs);
    return rc;
}

/* The program's text of obj into o: 0, 1 to give up, -1 on error. */
static int
run(Out *o, PyObject *obj, const Program *p, int depth)
{
    if (depth > MAX_DEPTH)
        return 1;
    PyObject *stack[16];
    PyObject **v = p->plan->n <= 16 ? stack : PyMem_Malloc((size_t)p->plan->n * sizeof *v);
    if (v == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    const int got = read_fields(obj, p->plan, v);
    if (got <= 0) {
        if (v != stack)
            PyMem_Free(v);
        return got < 0 ? -1 : 1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; i < p->n && rc == 0; i++) {
        const Op *op = &p->ops[i];
        PyObject *x = op->kind == OP_LIT ? NULL : v[op->index];
        switch (op->kind) {
        case OP_LIT:
            rc = emit_text(o, op->a);
            break;
        case OP_INT:
            rc = emit_long(o, x);
            break;
        case OP_STR:
            rc = emit_text(o, x);
            break;
        case OP_UUID:
            rc = PyBytes_CheckExact(x) && PyBytes_GET_SIZE(x) == 16
                ? (emit_base64(o, (const uint8_t *)PyBytes_AS_STRING(x), 16, 1, 0) < 0 ? -1 : 0)
                : 1;
            break;
        case OP_BOOL: /* its truth, as Python's `"true" if v else "false"` (a default may be 0) */
            if (PyBool_Check(x) || PyLong_CheckExact(x)) {
                const int truth = PyObject_IsTrue(x);
                rc = truth < 0 ? -1 : ((truth ? EMIT_LIT(o, "true") : EMIT_LIT(o, "false")) < 0 ? -1 : 0);
            } else
                rc = 1;
            break;
        case OP_NAMES: {
            PyObject *name = PyLong_CheckExact(x) ? PyDict_GetItemWithError(op->a, x) : NULL;
            rc = name != NULL ? emit_text(o, name) : (PyErr_Occurred() ? -1 : 1);
            break;
        }
        case OP_OPTIONAL_LEN:
            if (x == Py_None)
                rc = emit_text(o, op->c);
            else if (PyBytes_CheckExact(x))
                rc = emit_text(o, op->a) != 0 || emit_int(o, PyBytes_GET_SIZE(x)) < 0 || emit_text(o, op->b) != 0
                    ? -1 : 0;
            else
                rc = 1;
            break;
        case OP_STRUCT:
            rc = run(o, x, program_of(op->a), depth + 1);
            break;
        case OP_SORTED_MAP:
            rc = emit_sorted_map(o, x, plan_of(op->a));
            break;
        case OP_CHECK_MIN:
        case OP_CHECK_NOT_BELOW: {
            PyObject *bound = op->kind == OP_CHECK_MIN ? op->a : v[PyLong_AsSsize_t(op->a)];
            if (!PyLong_CheckExact(x) || !PyLong_CheckExact(bound))
                rc = 1;
            else {
                const int below = PyObject_RichCompareBool(x, bound, Py_LT);
                rc = below < 0 ? -1 : below;
            }
            break;
        }
        case OP_CHECK_NONEMPTY:
            rc = PyList_CheckExact(x) && PyList_GET_SIZE(x) > 0 ? 0 : 1;
            break;
        case OP_CHECK_NAMED: {
            const int has = PyLong_CheckExact(x) ? PyDict_Contains(op->a, x) : 0;
            rc = has < 0 ? -1 : !has;
            break;
        }
        default:
            rc = 1;
        }
    }
    for (Py_ssize_t i = 0; i < p->plan->n; i++)
        Py_DECREF(v[i]);
    if (v != stack)
        PyMem_Free(v);
    return rc;
}

PyDoc_STRVAR(template_texts_doc,
"template_texts(items, programs) -> [(None, text, False) | None]\n\n"
"kafka-dump-log's payload for each of Codecs.metadata_items' items, by the program of its\n"
"apiKey and version (None where Python must write one).");

/* One item's payload: 0 and *out set, 1 give up, -1 an exception. tables: the programs. */
static int
template_one(PyObject *item, PyObject *const *tables, PyObject **out)
{
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 3)
        return 1; /* the record's error: Python names it */
    PyObject *capsule = by_version(tables[0], PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1));
    if (capsule == NULL)
        return PyErr_Occurred() ? -1 : 1;
    const Program *p = program_of(capsule);
    if (p == NULL)
        return -1;
    Out o = {NULL, 0, 0};
    const int done = run(&o, PyTuple_GET_ITEM(item, 2), p, 0);
    if (done) {
        PyMem_Free(o.data);
        return done;
    }
    return payload_of(&o, out);
}

static PyObject *
template_texts(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *items, *tables[1];
    if (!PyArg_ParseTuple(args, "O!O!:template_texts", &PyList_Type, &items, &PyDict_Type, &tables[0]))
        return NULL;
    return texts_of(items, template_one, tables);
}

PyMethodDef TEMPLATE_METHODS[] = {
    {"template_program", template_program, METH_VARARGS, template_program_doc},
    {"template_texts", template_texts, METH_VARARGS, template_texts_doc},
    {NULL, NULL, 0, NULL},
};
