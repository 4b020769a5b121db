/*
 * The runtime's helpers for the native extensions of the layers above it, beside
 * primitives.h: reading the slots of generated objects and Record objects by their member
 * descriptors' byte offsets, and a growing byte buffer with the writes that text output
 * needs. Header-only (static inline), as primitives.h: each extension gets its own copy.
 *
 * Used by the records layer's extension (kafkacodec/records/_native_*.c), the internal
 * topics' JSON writer (kafkacodec/internal/_native_json.c) and the parse interpreter
 * (runtime/_programs.c).
 */
#ifndef KAFKACODEC_RUNTIME_PYOBJECTS_H
#define KAFKACODEC_RUNTIME_PYOBJECTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

/* Drop the pending error so that a fast path can let the Python path answer, when it is
 * an ordinary one (an Exception): 1. A KeyboardInterrupt (Ctrl-C, raised in Python code a
 * fast path called), SystemExit or other BaseException is never dropped: 0, the error
 * still set, for the caller to return. */
static inline int
drop_ordinary_error(void)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        return 0;
    PyErr_Clear();
    return 1;
}

/* The object slot at byte offset off of obj (a member descriptor's offset). */
#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* The byte offset of the object slot `name` of type (the first member descriptor of that
 * name on its MRO), or -1 with TypeError when type has no such slot. */
static inline Py_ssize_t
member_offset(PyTypeObject *type, const char *name)
{
    PyObject *key = PyUnicode_InternFromString(name);
    if (key == NULL)
        return -1;
    PyObject *mro = type->tp_mro;
    for (Py_ssize_t i = 0; mro != NULL && i < PyTuple_GET_SIZE(mro); i++) {
        PyObject *dict = ((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_dict;
        PyObject *d = dict ? PyDict_GetItemWithError(dict, key) : NULL;
        if (d != NULL && PyObject_TypeCheck(d, &PyMemberDescr_Type)) {
            PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
            Py_DECREF(key);
            if (m->type != T_OBJECT_EX) {
                PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, name);
                return -1;
            }
            return m->offset;
        }
        if (PyErr_Occurred()) {
            Py_DECREF(key);
            return -1;
        }
    }
    Py_DECREF(key);
    PyErr_Format(PyExc_TypeError, "%s has no slot named %s", type->tp_name, name);
    return -1;
}

/* ------------------------------------------------------------------ a growing buffer */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Out;

/* Room for more bytes in o (PyMem, doubling): 0, or -1 with MemoryError. */
static inline int
out_reserve(Out *o, Py_ssize_t more)
{
    if (o->len + more <= o->cap)
        return 0;
    Py_ssize_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + more)
        cap *= 2;
    char *p = PyMem_Realloc(o->data, (size_t)cap);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->data = p;
    o->cap = cap;
    return 0;
}

/* Append n bytes at p, growing o: 0, or -1 with MemoryError. */
static inline int
emit(Out *o, const char *p, Py_ssize_t n)
{
    if (o->cap - o->len < n && out_reserve(o, n) < 0)
        return -1;
    memcpy(o->data + o->len, p, (size_t)n);
    o->len += n;
    return 0;
}

#define EMIT_LIT(o, s) emit((o), (s), (Py_ssize_t)(sizeof(s) - 1))

/* A signed 64-bit integer in decimal. */
static inline int
emit_int(Out *o, long long v)
{
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[sizeof tmp - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[sizeof tmp - 1 - n++] = '-';
    return emit(o, tmp + sizeof tmp - n, n);
}

/* Bytes in base64 (RFC 4648's alphabet, or its URL-safe one), with or without the '='
 * padding. */
static inline int
emit_base64(Out *o, const uint8_t *p, Py_ssize_t n, int url_safe, int pad)
{
    const char *abc = url_safe
        ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const Py_ssize_t need = (n + 2) / 3 * 4;
    if (o->cap - o->len < need && out_reserve(o, need) < 0)
        return -1;
    char *d = o->data + o->len;
    Py_ssize_t i = 0;
    for (; i + 3 <= n; i += 3, d += 4) {
        const uint32_t t = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        d[0] = abc[t >> 18], d[1] = abc[(t >> 12) & 63], d[2] = abc[(t >> 6) & 63], d[3] = abc[t & 63];
    }
    Py_ssize_t len = need;
    if (n - i == 1) {
        const uint32_t t = (uint32_t)p[i] << 16;
        d[0] = abc[t >> 18], d[1] = abc[(t >> 12) & 63], d[2] = '=', d[3] = '=';
        len -= pad ? 0 : 2;
    } else if (n - i == 2) {
        const uint32_t t = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        d[0] = abc[t >> 18], d[1] = abc[(t >> 12) & 63], d[2] = abc[(t >> 6) & 63], d[3] = '=';
        len -= pad ? 0 : 1;
    }
    o->len += len;
    return 0;
}

/* The buffer as a str (it must hold UTF-8), freed either way. */
static inline PyObject *
out_str(Out *o)
{
    PyObject *s = PyUnicode_DecodeUTF8(o->data ? o->data : "", o->len, "strict");
    PyMem_Free(o->data);
    o->data = NULL;
    o->len = o->cap = 0;
    return s;
}

#endif
