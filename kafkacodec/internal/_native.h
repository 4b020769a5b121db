/*
 * kafkacodec.internal._native: the internal topics' optional native loops, one file per
 * concern, each named _native_<concern>.c: json (decoded structs as the JSON of Kafka's
 * JsonConverter, from plans kafka_json.py compiles), fold (the newest record of each key of
 * a coordinator topic, as Kafka's coordinators replay them) and module.
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

/* Each file's functions, added to the module one table after another. */
extern PyMethodDef JSON_METHODS[], FOLD_METHODS[];

#endif
