/* The native interpreter of generated parse programs (generator/programs.py): the types
 * of the schemas made from Kafka's message specs, read in C into the same generated
 * objects their Python parsers make.
 *
 *   compile(cls, resolve) -> a Program (a capsule): cls.PROGRAM checked and laid out in C
 *       arrays; resolve(name) gives the Program of another class a program names.
 *   parse(program, buf, pos, end, *params) -> (object, position), or None
 *
 * None means "not here": bad bytes (a length beyond the end, a failed check, a varint too
 * long) or anything the interpreter does not do; the caller then runs the Python parser
 * on the same bytes, which returns the same object or raises kafkacodec's error naming
 * what is wrong. So the interpreter never makes an error message of its own, and a
 * program can only be faster than its parser, never different (a test compares them).
 *
 * Objects are made as the classes' __init__ would make them: allocated by the class and
 * every slot of FIELDS set (None where the field is absent).
 */
#include "pyobjects.h"

enum { K_INT = 1, K_FLOAT = 2, K_UVARINT = 3, K_BYTES = 4, K_REST = 5, K_STR = 6, K_USER = 7, K_SWITCH = 8 };
enum {
    OP_CONST = 0, OP_SLOT = 1, OP_LEN = 2, OP_CUR = 3, OP_CUR_LEN = 4,
    OP_ADD = 10, OP_SUB = 11, OP_MUL = 12, OP_EQ = 13, OP_NE = 14, OP_LT = 15, OP_LE = 16,
    OP_GT = 17, OP_GE = 18, OP_AND = 19, OP_OR = 20, OP_NOT = 21, OP_NEG = 22, OP_TERN = 23
};
#define MAX_STACK 32
#define MAX_SLOTS 64
#define MAX_DEPTH 32

typedef struct { Py_ssize_t n; int64_t *code; } Expr; /* n == 0: none */

struct Program;

typedef struct { int64_t value; struct Program *prog; Py_ssize_t nargs; Expr *args; } Case;

typedef struct {
    int kind, slot, width, is_signed;
    Expr cond, count, size, on;
    Py_ssize_t nvalid; Expr *valid;
    struct Program *user; Py_ssize_t nargs; Expr *args;
    Py_ssize_t ncases; Case *cases;
} Instr;

typedef struct Program {
    PyTypeObject *cls;
    Py_ssize_t nslots;
    Py_ssize_t *offsets; /* each slot's member offset in the object */
    Py_ssize_t ninstr;
    Instr *instr;
    Py_ssize_t nparams;
    PyObject *keep; /* a list: the class and the Programs this one calls */
} Program;

static const char *CAPSULE = "kafkacodec.runtime._programs.Program";

/* ------------------------------------------------------------------ freeing */

static void free_expr(Expr *e) { PyMem_Free(e->code); e->code = NULL; e->n = 0; }

static void free_program(Program *p) {
    if (p == NULL) return;
    for (Py_ssize_t i = 0; i < p->ninstr && p->instr; i++) {
        Instr *in = &p->instr[i];
        free_expr(&in->cond); free_expr(&in->count); free_expr(&in->size); free_expr(&in->on);
        for (Py_ssize_t j = 0; j < in->nvalid; j++) free_expr(&in->valid[j]);
        PyMem_Free(in->valid);
        for (Py_ssize_t j = 0; j < in->nargs; j++) free_expr(&in->args[j]);
        PyMem_Free(in->args);
        for (Py_ssize_t c = 0; c < in->ncases; c++) {
            for (Py_ssize_t j = 0; j < in->cases[c].nargs; j++) free_expr(&in->cases[c].args[j]);
            PyMem_Free(in->cases[c].args);
        }
        PyMem_Free(in->cases);
    }
    PyMem_Free(p->instr);
    PyMem_Free(p->offsets);
    Py_XDECREF(p->keep);
    PyMem_Free(p);
}

static void capsule_free(PyObject *capsule) {
    free_program((Program *)PyCapsule_GetPointer(capsule, CAPSULE));
}

/* ------------------------------------------------------------------ compiling */

static int read_expr(PyObject *obj, Expr *out) {
    out->n = 0; out->code = NULL;
    if (obj == Py_None) return 0;
    if (!PyTuple_Check(obj)) { PyErr_SetString(PyExc_TypeError, "an expression is a tuple of ints"); return -1; }
    Py_ssize_t n = PyTuple_GET_SIZE(obj);
    if (n == 0) return 0;
    out->code = PyMem_Malloc(sizeof(int64_t) * n);
    if (!out->code) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t v = PyLong_AsLongLong(PyTuple_GET_ITEM(obj, i));
        if (v == -1 && PyErr_Occurred()) return -1;
        out->code[i] = v;
    }
    out->n = n;
    return 0;
}

static int read_exprs(PyObject *obj, Py_ssize_t *n, Expr **out) {
    *n = 0; *out = NULL;
    if (obj == Py_None) return 0;
    if (!PyTuple_Check(obj)) { PyErr_SetString(PyExc_TypeError, "expressions are a tuple"); return -1; }
    Py_ssize_t k = PyTuple_GET_SIZE(obj);
    if (k == 0) return 0;
    *out = PyMem_Calloc(k, sizeof(Expr));
    if (!*out) { PyErr_NoMemory(); return -1; }
    *n = k;
    for (Py_ssize_t i = 0; i < k; i++)
        if (read_expr(PyTuple_GET_ITEM(obj, i), &(*out)[i]) < 0) return -1;
    return 0;
}

static int as_int(PyObject *o, int *out) {
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = (int)v;
    return 0;
}

static Program *program_of(PyObject *capsule) {
    return (Program *)PyCapsule_GetPointer(capsule, CAPSULE);
}

/* The Program of a named class: resolve(name) returns a capsule; it is kept alive by p. */
static Program *resolve_named(Program *p, PyObject *resolve, PyObject *name) {
    PyObject *cap = PyObject_CallOneArg(resolve, name);
    if (cap == NULL) return NULL;
    Program *q = program_of(cap);
    if (q == NULL) { Py_DECREF(cap); return NULL; }
    int rc = PyList_Append(p->keep, cap);
    Py_DECREF(cap);
    return rc < 0 ? NULL : q;
}

static int member_offsets(Program *p, PyObject *fields) {
    p->nslots = PyTuple_GET_SIZE(fields);
    if (p->nslots > MAX_SLOTS) { PyErr_SetString(PyExc_ValueError, "too many fields"); return -1; }
    p->offsets = PyMem_Calloc(p->nslots ? p->nslots : 1, sizeof(Py_ssize_t));
    if (!p->offsets) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < p->nslots; i++) {
        const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(fields, i));
        if (name == NULL || (p->offsets[i] = member_offset(p->cls, name)) < 0) return -1;
    }
    return 0;
}

static PyObject *compile_program(PyObject *self, PyObject *args) {
    PyObject *cls, *resolve;
    if (!PyArg_ParseTuple(args, "OO", &cls, &resolve)) return NULL;
    if (!PyType_Check(cls)) { PyErr_SetString(PyExc_TypeError, "a class"); return NULL; }
    PyObject *prog = PyObject_GetAttrString(cls, "PROGRAM");
    if (prog == NULL) return NULL;
    Program *p = PyMem_Calloc(1, sizeof(Program));
    if (!p) { Py_DECREF(prog); return PyErr_NoMemory(); }
    p->cls = (PyTypeObject *)cls;
    p->keep = PyList_New(0);
    PyObject *capsule = NULL;
    if (p->keep == NULL || PyList_Append(p->keep, cls) < 0) goto fail;
    if (!PyTuple_Check(prog) || PyTuple_GET_SIZE(prog) != 3) { PyErr_SetString(PyExc_TypeError, "PROGRAM is (fields, instructions, params)"); goto fail; }
    if (member_offsets(p, PyTuple_GET_ITEM(prog, 0)) < 0) goto fail;
    p->nparams = PyLong_AsSsize_t(PyTuple_GET_ITEM(prog, 2));
    if (p->nparams < 0 || p->nparams > p->nslots) { if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "params"); goto fail; }
    PyObject *instrs = PyTuple_GET_ITEM(prog, 1);
    p->ninstr = PyTuple_GET_SIZE(instrs);
    p->instr = PyMem_Calloc(p->ninstr ? p->ninstr : 1, sizeof(Instr));
    if (!p->instr) { PyErr_NoMemory(); goto fail; }
    for (Py_ssize_t i = 0; i < p->ninstr; i++) {
        PyObject *t = PyTuple_GET_ITEM(instrs, i);
        Instr *in = &p->instr[i];
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 8) { PyErr_SetString(PyExc_TypeError, "an instruction has 8 items"); goto fail; }
        if (as_int(PyTuple_GET_ITEM(t, 0), &in->kind) < 0 || as_int(PyTuple_GET_ITEM(t, 1), &in->slot) < 0) goto fail;
        if (in->slot < 0 || in->slot >= p->nslots) { PyErr_SetString(PyExc_ValueError, "slot out of range"); goto fail; }
        if (read_expr(PyTuple_GET_ITEM(t, 2), &in->cond) < 0 || read_expr(PyTuple_GET_ITEM(t, 3), &in->count) < 0) goto fail;
        if (read_exprs(PyTuple_GET_ITEM(t, 4), &in->nvalid, &in->valid) < 0) goto fail;
        PyObject *a = PyTuple_GET_ITEM(t, 5), *b = PyTuple_GET_ITEM(t, 6), *c = PyTuple_GET_ITEM(t, 7);
        switch (in->kind) {
        case K_INT:
            if (as_int(a, &in->width) < 0 || as_int(b, &in->is_signed) < 0) goto fail;
            if (in->width != 1 && in->width != 2 && in->width != 4 && in->width != 8) { PyErr_SetString(PyExc_ValueError, "width"); goto fail; }
            break;
        case K_FLOAT:
            if (as_int(a, &in->width) < 0) goto fail;
            if (in->width != 4 && in->width != 8) { PyErr_SetString(PyExc_ValueError, "width"); goto fail; }
            break;
        case K_UVARINT:
            if (as_int(a, &in->width) < 0) goto fail;
            if (in->width != 5 && in->width != 10) { PyErr_SetString(PyExc_ValueError, "varint length"); goto fail; }
            break;
        case K_BYTES: case K_STR:
            if (read_expr(a, &in->size) < 0) goto fail;
            break;
        case K_REST:
            break;
        case K_USER:
            if ((in->user = resolve_named(p, resolve, a)) == NULL) goto fail;
            if (read_exprs(b, &in->nargs, &in->args) < 0) goto fail;
            if (in->nargs != in->user->nparams) { PyErr_SetString(PyExc_ValueError, "arguments"); goto fail; }
            break;
        case K_SWITCH:
            if (read_expr(a, &in->size) < 0 || read_expr(b, &in->on) < 0) goto fail;
            in->ncases = PyTuple_GET_SIZE(c);
            in->cases = PyMem_Calloc(in->ncases ? in->ncases : 1, sizeof(Case));
            if (!in->cases) { PyErr_NoMemory(); goto fail; }
            for (Py_ssize_t k = 0; k < in->ncases; k++) {
                PyObject *ct = PyTuple_GET_ITEM(c, k);
                Case *cs = &in->cases[k];
                cs->value = PyLong_AsLongLong(PyTuple_GET_ITEM(ct, 0));
                if (cs->value == -1 && PyErr_Occurred()) goto fail;
                if ((cs->prog = resolve_named(p, resolve, PyTuple_GET_ITEM(ct, 1))) == NULL) goto fail;
                if (read_exprs(PyTuple_GET_ITEM(ct, 2), &cs->nargs, &cs->args) < 0) goto fail;
                if (cs->nargs != cs->prog->nparams) { PyErr_SetString(PyExc_ValueError, "arguments"); goto fail; }
            }
            break;
        default:
            PyErr_SetString(PyExc_ValueError, "unknown instruction");
            goto fail;
        }
    }
    Py_DECREF(prog);
    capsule = PyCapsule_New(p, CAPSULE, capsule_free);
    if (capsule == NULL) free_program(p);
    return capsule;
fail:
    Py_DECREF(prog);
    free_program(p);
    return NULL;
}

/* ------------------------------------------------------------------ running */

/* The cyclic collector. What the interpreter makes is a tree: no object it makes can be
 * part of a reference cycle. So, as CPython does for tuples and dicts of atomic values, it
 * leaves untracked every object, list and result tuple that holds no tracked object: the
 * collector then never walks them (a bulk read of 200k records made 300k tracked objects
 * that cost one collection about 65 ms; untracked, the whole read runs near twice as
 * fast). Untracking never frees anything early; the one cost is that a cycle a caller
 * builds later through such an object by mutating it (appending a list to itself) is
 * never collected, the trade msgspec makes for its Structs. */
static inline int tracked(PyObject *o) { return PyObject_IS_GC(o) && PyObject_GC_IsTracked(o); }

typedef struct {
    PyObject *vals[MAX_SLOTS];
    int64_t ints[MAX_SLOTS];
    int64_t lens[MAX_SLOTS];
} Frame;

/* Evaluate; 0 on success, -1 when the expression cannot be computed here. */
static int eval(const Expr *e, const Frame *f, int64_t cur, int64_t cur_len, int64_t *out) {
    int64_t st[MAX_STACK];
    int sp = 0;
    for (Py_ssize_t i = 0; i < e->n; i++) {
        int64_t op = e->code[i], a, b, c;
        switch (op) {
        case OP_CONST: if (i + 1 >= e->n || sp >= MAX_STACK) return -1; st[sp++] = e->code[++i]; break;
        case OP_SLOT: if (i + 1 >= e->n || sp >= MAX_STACK) return -1; st[sp++] = f->ints[e->code[++i]]; break;
        case OP_LEN: if (i + 1 >= e->n || sp >= MAX_STACK) return -1; st[sp++] = f->lens[e->code[++i]]; break;
        case OP_CUR: if (sp >= MAX_STACK) return -1; st[sp++] = cur; break;
        case OP_CUR_LEN: if (sp >= MAX_STACK) return -1; st[sp++] = cur_len; break;
        case OP_NOT: if (sp < 1) return -1; st[sp - 1] = !st[sp - 1]; break;
        case OP_NEG: if (sp < 1) return -1; st[sp - 1] = -st[sp - 1]; break;
        case OP_TERN:
            if (sp < 3) return -1;
            c = st[--sp]; b = st[--sp]; a = st[--sp];
            st[sp++] = a ? b : c;
            break;
        default:
            if (sp < 2) return -1;
            b = st[--sp]; a = st[--sp];
            switch (op) {
            case OP_ADD: if (__builtin_add_overflow(a, b, &c)) return -1; break;
            case OP_SUB: if (__builtin_sub_overflow(a, b, &c)) return -1; break;
            case OP_MUL: if (__builtin_mul_overflow(a, b, &c)) return -1; break;
            case OP_EQ: c = a == b; break;
            case OP_NE: c = a != b; break;
            case OP_LT: c = a < b; break;
            case OP_LE: c = a <= b; break;
            case OP_GT: c = a > b; break;
            case OP_GE: c = a >= b; break;
            case OP_AND: c = a && b; break;
            case OP_OR: c = a || b; break;
            default: return -1;
            }
            st[sp++] = c;
        }
    }
    if (sp != 1) return -1;
    *out = st[0];
    return 0;
}

/* Strings. Kafka's internal records repeat a few names over and over (a group, its topics,
 * a transactional id), so short ASCII strings come from a cache: one str object per name
 * instead of one per record, so that its hash is computed once and a dict finds it by
 * identity. A str is immutable, so sharing it is invisible. The cache is two-way set
 * associative (the newer of a set's two strings first), STR_CACHE strings of at most
 * STR_CACHE_MAX bytes: a few thousand names stay in it without two of them taking turns.
 * Anything else is decoded as the generated parser decodes it (UTF-8, surrogateescape). */
#define STR_CACHE 4096
#define STR_CACHE_MAX 64
static PyObject *str_cache[STR_CACHE];

static inline int same_str(PyObject *s, const uint8_t *p, Py_ssize_t n) {
    return s != NULL && PyUnicode_GET_LENGTH(s) == n && memcmp(PyUnicode_DATA(s), p, (size_t)n) == 0;
}

static PyObject *decode_str(const uint8_t *s, Py_ssize_t n) {
    if (n == 0 || n > STR_CACHE_MAX)
        return PyUnicode_DecodeUTF8((const char *)s, n, "surrogateescape");
    uint32_t h = 2166136261u; /* FNV-1a */
    uint8_t high = 0;
    for (Py_ssize_t i = 0; i < n; i++) { h = (h ^ s[i]) * 16777619u; high |= s[i]; }
    if (high & 0x80) return PyUnicode_DecodeUTF8((const char *)s, n, "surrogateescape");
    PyObject **set = &str_cache[(h % (STR_CACHE / 2)) * 2];
    if (same_str(set[0], s, n))
        return Py_NewRef(set[0]);
    if (same_str(set[1], s, n)) { /* the newer now */
        PyObject *hit = set[1];
        set[1] = set[0];
        set[0] = hit;
        return Py_NewRef(hit);
    }
    PyObject *str = PyUnicode_DecodeASCII((const char *)s, n, NULL);
    if (str == NULL) return NULL;
    Py_XDECREF(set[1]);
    set[1] = set[0];
    set[0] = Py_NewRef(str);
    return str;
}

/* run() returns an object, or NULL with *give_up set (let Python read the bytes) or with
 * an exception set (out of memory). */
static PyObject *run(const Program *p, const uint8_t *buf, Py_ssize_t pos, Py_ssize_t end,
                     const int64_t *params, PyObject *const *param_objs, Py_ssize_t *after, int depth, int *give_up);

static PyObject *read_one(const Instr *in, Frame *f, const uint8_t *buf, Py_ssize_t *pos, Py_ssize_t end,
                          int64_t *ival, int64_t *ilen, int depth, int *give_up) {
    Py_ssize_t at = *pos;
    *ival = 0; *ilen = 0;
    switch (in->kind) {
    case K_INT: {
        if (end - at < in->width) { *give_up = 1; return NULL; }
        uint64_t u = 0;
        for (int i = 0; i < in->width; i++) u = (u << 8) | buf[at + i];
        *pos = at + in->width;
        if (in->is_signed) {
            int64_t v;
            if (in->width == 8) v = (int64_t)u;
            else { int shift = 64 - 8 * in->width; v = (int64_t)(u << shift) >> shift; }
            *ival = v;
            return PyLong_FromLongLong(v);
        }
        *ival = (int64_t)u; /* only u1-u4 are used in expressions */
        return PyLong_FromUnsignedLongLong(u);
    }
    case K_FLOAT: {
        if (end - at < in->width) { *give_up = 1; return NULL; }
        double d;
        if (in->width == 8) d = PyFloat_Unpack8((const char *)buf + at, 0);
        else d = PyFloat_Unpack4((const char *)buf + at, 0);
        if (d == -1.0 && PyErr_Occurred()) return NULL;
        *pos = at + in->width;
        return PyFloat_FromDouble(d);
    }
    case K_UVARINT: {
        uint64_t v = 0;
        int shift = 0, i = 0;
        for (;;) {
            if (at + i >= end || i >= in->width) { *give_up = 1; return NULL; }
            uint8_t b = buf[at + i];
            v |= (uint64_t)(b & 0x7f) << shift;
            i++;
            if (!(b & 0x80)) break;
            shift += 7;
        }
        if ((in->width == 5 && v > 0xFFFFFFFFull) || v > (uint64_t)INT64_MAX) { *give_up = 1; return NULL; }
        *pos = at + i;
        *ival = (int64_t)v;
        return PyLong_FromUnsignedLongLong(v);
    }
    case K_BYTES: case K_STR: case K_REST: {
        int64_t n;
        if (in->kind == K_REST) n = end - at;
        else if (eval(&in->size, f, 0, 0, &n) < 0) { *give_up = 1; return NULL; }
        if (n < 0 || n > end - at) { *give_up = 1; return NULL; }
        *pos = at + (Py_ssize_t)n;
        *ilen = n;
        if (in->kind == K_STR) return decode_str(buf + at, (Py_ssize_t)n);
        return PyBytes_FromStringAndSize((const char *)buf + at, (Py_ssize_t)n);
    }
    case K_USER: {
        int64_t args[MAX_SLOTS];
        PyObject *objs[MAX_SLOTS];
        if (in->nargs > MAX_SLOTS) { *give_up = 1; return NULL; }
        for (Py_ssize_t k = 0; k < in->nargs; k++)
            if (eval(&in->args[k], f, 0, 0, &args[k]) < 0) { *give_up = 1; return NULL; }
        for (Py_ssize_t k = 0; k < in->nargs; k++) objs[k] = NULL;
        return run(in->user, buf, at, end, args, objs, pos, depth + 1, give_up);
    }
    case K_SWITCH: {
        int64_t n, on;
        if (eval(&in->size, f, 0, 0, &n) < 0 || eval(&in->on, f, 0, 0, &on) < 0) { *give_up = 1; return NULL; }
        if (n < 0 || n > end - at) { *give_up = 1; return NULL; }
        Py_ssize_t sub_end = at + (Py_ssize_t)n;
        *pos = sub_end; /* Kaitai: the case is read inside the size; the size is skipped */
        for (Py_ssize_t c = 0; c < in->ncases; c++) {
            const Case *cs = &in->cases[c];
            if (cs->value != on) continue;
            int64_t args[MAX_SLOTS];
            PyObject *objs[MAX_SLOTS];
            if (cs->nargs > MAX_SLOTS) { *give_up = 1; return NULL; }
            for (Py_ssize_t k = 0; k < cs->nargs; k++) {
                if (eval(&cs->args[k], f, 0, 0, &args[k]) < 0) { *give_up = 1; return NULL; }
                objs[k] = NULL;
            }
            Py_ssize_t inner;
            return run(cs->prog, buf, at, sub_end, args, objs, &inner, depth + 1, give_up);
        }
        return PyBytes_FromStringAndSize((const char *)buf + at, (Py_ssize_t)n);
    }
    }
    *give_up = 1;
    return NULL;
}

static PyObject *run(const Program *p, const uint8_t *buf, Py_ssize_t pos, Py_ssize_t end,
                     const int64_t *params, PyObject *const *param_objs, Py_ssize_t *after, int depth, int *give_up) {
    if (depth > MAX_DEPTH || p->nparams > p->nslots) { *give_up = 1; return NULL; }
    Frame f;
    for (Py_ssize_t i = 0; i < p->nslots; i++) { f.vals[i] = NULL; f.ints[i] = 0; f.lens[i] = 0; }
    for (Py_ssize_t i = 0; i < p->nparams; i++) {
        f.ints[i] = params[i];
        f.vals[i] = param_objs[i] ? Py_NewRef(param_objs[i]) : PyLong_FromLongLong(params[i]);
        if (f.vals[i] == NULL) goto error;
    }
    for (Py_ssize_t i = 0; i < p->ninstr; i++) {
        const Instr *in = &p->instr[i];
        int64_t v;
        if (in->cond.n) {
            if (eval(&in->cond, &f, 0, 0, &v) < 0) { *give_up = 1; goto error; }
            if (!v) continue;
        }
        if (in->count.n) {
            int64_t count;
            if (eval(&in->count, &f, 0, 0, &count) < 0) { *give_up = 1; goto error; }
            if (count < 0 || count > end - pos) { *give_up = 1; goto error; } /* Python says why */
            PyObject *list = PyList_New((Py_ssize_t)count);
            if (list == NULL) goto error;
            f.vals[in->slot] = list;
            int holds_tracked = 0;
            for (Py_ssize_t k = 0; k < count; k++) {
                int64_t iv, il;
                PyObject *item = read_one(in, &f, buf, &pos, end, &iv, &il, depth, give_up);
                if (item == NULL) goto error;
                PyList_SET_ITEM(list, k, item);
                holds_tracked |= tracked(item);
            }
            if (!holds_tracked) PyObject_GC_UnTrack(list);
            continue;
        }
        int64_t iv, il;
        PyObject *item = read_one(in, &f, buf, &pos, end, &iv, &il, depth, give_up);
        if (item == NULL) goto error;
        f.vals[in->slot] = item;
        f.ints[in->slot] = iv;
        f.lens[in->slot] = il;
        for (Py_ssize_t k = 0; k < in->nvalid; k++) {
            if (eval(&in->valid[k], &f, iv, il, &v) < 0 || !v) { *give_up = 1; goto error; }
        }
    }
    PyObject *obj = p->cls->tp_alloc(p->cls, 0);
    if (obj == NULL) goto error;
    int holds_tracked = 0;
    for (Py_ssize_t i = 0; i < p->nslots; i++) {
        PyObject *v = f.vals[i] ? f.vals[i] : Py_NewRef(Py_None);
        *(PyObject **)((char *)obj + p->offsets[i]) = v; /* the slot was NULL: steal the ref */
        holds_tracked |= tracked(v);
    }
    if (!holds_tracked && tracked(obj)) PyObject_GC_UnTrack(obj);
    *after = pos;
    return obj;
error:
    for (Py_ssize_t i = 0; i < p->nslots; i++) Py_XDECREF(f.vals[i]);
    return NULL;
}

static PyObject *parse(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 4) { PyErr_SetString(PyExc_TypeError, "parse(program, buf, pos, end, *params)"); return NULL; }
    Program *p = program_of(args[0]);
    if (p == NULL) return NULL;
    if (nargs - 4 != p->nparams) { PyErr_SetString(PyExc_TypeError, "wrong number of params"); return NULL; }
    Py_buffer view;
    if (PyObject_GetBuffer(args[1], &view, PyBUF_SIMPLE) < 0) return NULL;
    Py_ssize_t pos = PyLong_AsSsize_t(args[2]);
    Py_ssize_t end = args[3] == Py_None ? view.len : PyLong_AsSsize_t(args[3]);
    PyObject *result = NULL;
    if (PyErr_Occurred()) goto done;
    if (pos < 0 || end > view.len || pos > end) { result = Py_NewRef(Py_None); goto done; }
    int64_t params[MAX_SLOTS];
    if (p->nparams > MAX_SLOTS) { result = Py_NewRef(Py_None); goto done; }
    for (Py_ssize_t i = 0; i < p->nparams; i++) {
        params[i] = PyLong_AsLongLong(args[4 + i]);
        if (params[i] == -1 && PyErr_Occurred()) goto done;
    }
    int give_up = 0;
    Py_ssize_t after = pos;
    PyObject *obj = run(p, (const uint8_t *)view.buf, pos, end, params, args + 4, &after, 0, &give_up);
    if (obj == NULL) {
        if (give_up && !PyErr_Occurred()) result = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *at = PyLong_FromSsize_t(after);
    if (at == NULL) { Py_DECREF(obj); goto done; }
    result = PyTuple_Pack(2, obj, at);
    Py_DECREF(obj);
    Py_DECREF(at);
done:
    PyBuffer_Release(&view);
    return result;
}

/* One struct from start (after its framing) filling the rest of the buffer: a new object,
 * or NULL with *give_up (or an exception). */
static PyObject *whole(const Program *p, const uint8_t *buf, Py_ssize_t start, Py_ssize_t len, int64_t version, int *give_up) {
    int64_t params[1] = {version};
    PyObject *objs[1] = {NULL};
    Py_ssize_t after = start;
    if (p->nparams != 1) { *give_up = 1; return NULL; }
    PyObject *obj = run(p, buf, start, len, params, objs, &after, 0, give_up);
    if (obj != NULL && after != len) { Py_DECREF(obj); *give_up = 1; return NULL; }
    return obj;
}

static int16_t prefix(const uint8_t *b) { return (int16_t)(((uint16_t)b[0] << 8) | b[1]); }

/* coordinator_pairs(pairs, keys, values) -> a list, one item per (key, value) pair:
 * (record_type, key object, value version, value object or None for a tombstone), or None
 * where the interpreter cannot read the pair (the caller reads it with the Python path).
 * keys: {record type: (program, key version)}; values: {record type: (program, lo, hi)}. */
static PyObject *coordinator_pairs(PyObject *self, PyObject *args) {
    PyObject *pairs, *keys, *values;
    if (!PyArg_ParseTuple(args, "OO!O!", &pairs, &PyDict_Type, &keys, &PyDict_Type, &values)) return NULL;
    PyObject *seq = PySequence_Fast(pairs, "pairs is a sequence of (key, value)");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    if (out == NULL) { Py_DECREF(seq); return NULL; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(seq, i), *item = NULL;
        PyObject *k, *v, *kobj = NULL, *vobj = NULL, *rt = NULL;
        int give_up = 0;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) goto none;
        k = PyTuple_GET_ITEM(pair, 0); v = PyTuple_GET_ITEM(pair, 1);
        if (!PyBytes_Check(k) || PyBytes_GET_SIZE(k) < 2 || (v != Py_None && (!PyBytes_Check(v) || PyBytes_GET_SIZE(v) < 2))) goto none;
        const uint8_t *kb = (const uint8_t *)PyBytes_AS_STRING(k);
        rt = PyLong_FromLong(prefix(kb));
        if (rt == NULL) goto error;
        PyObject *kent = PyDict_GetItemWithError(keys, rt);
        if (kent == NULL) { if (PyErr_Occurred()) goto error; goto none; }
        Program *kp = program_of(PyTuple_GET_ITEM(kent, 0));
        if (kp == NULL) goto error;
        kobj = whole(kp, kb, 2, PyBytes_GET_SIZE(k), PyLong_AsLongLong(PyTuple_GET_ITEM(kent, 1)), &give_up);
        if (kobj == NULL) { if (give_up && !PyErr_Occurred()) goto none; goto error; }
        int64_t version = -1;
        if (v != Py_None) {
            const uint8_t *vb = (const uint8_t *)PyBytes_AS_STRING(v);
            version = prefix(vb);
            PyObject *vent = PyDict_GetItemWithError(values, rt);
            if (vent == NULL) { if (PyErr_Occurred()) goto error; goto none; }
            Program *vp = program_of(PyTuple_GET_ITEM(vent, 0));
            if (vp == NULL) goto error;
            if (version < PyLong_AsLongLong(PyTuple_GET_ITEM(vent, 1)) || version > PyLong_AsLongLong(PyTuple_GET_ITEM(vent, 2))) goto none;
            vobj = whole(vp, vb, 2, PyBytes_GET_SIZE(v), version, &give_up);
            if (vobj == NULL) { if (give_up && !PyErr_Occurred()) goto none; goto error; }
        } else {
            vobj = Py_NewRef(Py_None);
        }
        PyObject *ver = PyLong_FromLongLong(version);
        if (ver == NULL) goto error;
        item = PyTuple_New(4);
        if (item == NULL) { Py_DECREF(ver); goto error; }
        PyTuple_SET_ITEM(item, 0, rt); PyTuple_SET_ITEM(item, 1, kobj);
        PyTuple_SET_ITEM(item, 2, ver); PyTuple_SET_ITEM(item, 3, vobj);
        if (!tracked(kobj) && !tracked(vobj)) PyObject_GC_UnTrack(item);
        PyList_SET_ITEM(out, i, item);
        continue;
    none:
        Py_XDECREF(rt); Py_XDECREF(kobj); Py_XDECREF(vobj);
        PyList_SET_ITEM(out, i, Py_NewRef(Py_None));
        continue;
    error:
        Py_XDECREF(rt); Py_XDECREF(kobj); Py_XDECREF(vobj);
        Py_DECREF(out); Py_DECREF(seq);
        return NULL;
    }
    Py_DECREF(seq);
    return out;
}

/* metadata_values(values, programs) -> a list, one item per value: (apiKey, version,
 * object), or None where the interpreter cannot read it (the caller reads it with the
 * Python path). A value is a framed metadata record whose frame version (1), apiKey and
 * version are one byte each (the usual framing; anything else is the caller's);
 * programs: {apiKey: (program, lowest version, highest version)}. */
static PyObject *metadata_values(PyObject *self, PyObject *args) {
    PyObject *values, *programs;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &values, &PyDict_Type, &programs)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(values);
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyList_GET_ITEM(values, i), *item = NULL, *obj = NULL, *api = NULL, *ent;
        int give_up = 0;
        if (!PyBytes_Check(v) || PyBytes_GET_SIZE(v) <= 3) goto none;
        const uint8_t *b = (const uint8_t *)PyBytes_AS_STRING(v);
        if (b[0] != 1 || b[1] >= 0x80 || b[2] >= 0x80) goto none;
        api = PyLong_FromLong(b[1]);
        if (api == NULL) goto error;
        ent = PyDict_GetItemWithError(programs, api);
        if (ent == NULL) { if (PyErr_Occurred()) goto error; goto none; }
        if (!PyTuple_Check(ent) || PyTuple_GET_SIZE(ent) != 3) { PyErr_SetString(PyExc_TypeError, "programs: (program, lo, hi)"); goto error; }
        Program *p = program_of(PyTuple_GET_ITEM(ent, 0));
        if (p == NULL) goto error;
        if (b[2] < PyLong_AsLongLong(PyTuple_GET_ITEM(ent, 1)) || b[2] > PyLong_AsLongLong(PyTuple_GET_ITEM(ent, 2))) goto none;
        obj = whole(p, b, 3, PyBytes_GET_SIZE(v), b[2], &give_up);
        if (obj == NULL) { if (give_up && !PyErr_Occurred()) goto none; goto error; }
        PyObject *ver = PyLong_FromLong(b[2]);
        if (ver == NULL || (item = PyTuple_New(3)) == NULL) { Py_XDECREF(ver); goto error; }
        PyTuple_SET_ITEM(item, 0, api); PyTuple_SET_ITEM(item, 1, ver); PyTuple_SET_ITEM(item, 2, obj);
        if (!tracked(obj)) PyObject_GC_UnTrack(item);
        PyList_SET_ITEM(out, i, item);
        continue;
    none:
        Py_XDECREF(api);
        PyList_SET_ITEM(out, i, Py_NewRef(Py_None));
        continue;
    error:
        Py_XDECREF(api); Py_XDECREF(obj);
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static PyMethodDef methods[] = {
    {"metadata_values", metadata_values, METH_VARARGS,
     "metadata_values(values, programs) -> [(api_key, version, object) or None]"},
    {"coordinator_pairs", coordinator_pairs, METH_VARARGS,
     "coordinator_pairs(pairs, keys, values) -> [(record_type, key, value_version, value) or None]"},
    {"compile", compile_program, METH_VARARGS,
     "compile(cls, resolve) -> a Program for cls.PROGRAM; resolve(name) gives the Program of a class it names."},
    {"parse", (PyCFunction)(void (*)(void))parse, METH_FASTCALL,
     "parse(program, buf, pos, end, *params) -> (object, position), or None: read it with the Python parser."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_programs",
    "The native interpreter of generated parse programs (generator/programs.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__programs(void) { return PyModule_Create(&module); }
