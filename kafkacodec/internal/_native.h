/*
 * kafkacodec.internal._native: the internal topics' optional native loops, one file per
 * concern, each named _native_<concern>.c: json (decoded structs as the JSON of Kafka's
 * JsonConverter, from plans kafka_json.py compiles), fold (the newest record of each key of
 * a coordinator topic, as Kafka's coordinators replay them), metadata (runs of
 * PartitionChangeRecords applied to the cluster's state, as cluster.py applies them),
 * template (decoded structs as the toString text of Kafka's classes, from templates
 * dump_format.py compiles) and module.
 *
 * The Python code stays the reference (kafka_json.to_json, groups.py): each loop gives up
 * (None, or the indices it did not take) on anything it does not cover, and the caller does
 * that work in Python. Tests compare both paths.
 *
 * This header: what the files share. The slot offsets and the growing buffer are the
 * runtime's (runtime/pyobjects.h).
 */
#ifndef KAFKACODEC_INTERNAL_NATIVE_H
#define KAFKACODEC_INTERNAL_NATIVE_H

#include "pyobjects.h"

/* "value" (a []string or []bytes item's, a tagged field's) and "tag", interned at import;
 * ("offset", "value") (a record's). */
extern PyObject *VALUE_NAME, *TAG_NAME, *RECORD_ATTRS;

/* ------------------------------------------------- plans (_native_json.c, kafka_json.py) */

/* One field of a plan: where it is (a slot, or an attribute of its tag's value) and how it is
 * written (the JSON writer's kinds). */
typedef struct {
    char *prefix;
    Py_ssize_t prefix_len, offset;
    int kind, element;
    PyObject *names;                 /* J_NAMES: {int: str} */
    int tag, default_mode;           /* tag -1: not a tagged field */
    PyObject *attr, *default_value;  /* a tagged field: its attribute in its tag's value */
    PyTypeObject *child_type;        /* the nested struct class last seen, and its plan */
    PyObject *child;
} Entry;

/* The fields of a class at a version, in order. */
typedef struct Plan {
    PyTypeObject *cls;
    Py_ssize_t tagged_offset; /* -1: none */
    Py_ssize_t n;
    Entry *entries;
    PyObject *resolve;
} Plan;

/* The Plan in a capsule plan() made, or NULL with an exception. */
Plan *plan_of(PyObject *capsule);

/* The tag number of an item of tagged_fields (-2 when it is not an int): 0, or -1 with an
 * exception. */
int tag_of(PyObject *item, long *number);

/* The value of a tagged field of obj: a new reference, NULL with *absent set when its tag
 * is not there (or holds bytes), NULL with an exception, or NULL with *give_up. */
PyObject *tagged_value(PyObject *obj, const Plan *p, const Entry *e, int *absent, int *give_up);

/* The fields a reader plan (kafka_json.NativeJson.reader) names, read from obj as
 * dump_format.get reads them (a tagged field: its tag's value, else its default): new
 * references in out[0..p->n); 1 read, 0 give up (obj is not of the plan's class, a slot
 * unset), -1 with an exception. */
int read_fields(PyObject *obj, const Plan *p, PyObject **out);

/* table[key][version] of a {key: (entry | None for each version from 0)} table: a borrowed
 * reference, NULL when there is none (an exception set only when the lookup raised). */
PyObject *by_version(PyObject *table, PyObject *key, PyObject *version);

/* one(item, tables, &text) for each item: a list of the texts, None where one gave up (1);
 * NULL when one raised (-1). */
PyObject *texts_of(PyObject *items, int (*one)(PyObject *, PyObject *const *, PyObject **),
                   PyObject *const *tables);

/* kafka-dump-log's (None, payload, False) of o's text into *out, o freed: 0, or -1. */
int payload_of(Out *o, PyObject **out);

/* Each file's functions, added to the module one table after another. */
extern PyMethodDef JSON_METHODS[], FOLD_METHODS[], METADATA_METHODS[], TEMPLATE_METHODS[];

#endif
