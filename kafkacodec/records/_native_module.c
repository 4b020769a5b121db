/* The module: each file's functions and types, and the layouts Python reads (BATCH_FIELDS,
 * COLUMNS_LAYOUT). */
#include "_native.h"

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "kafkacodec.records._native",
    "The records layer's optional native loops; the generated parsers remain the reference.",
    -1,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
};

#define FIELD(name, fmt) {#name, fmt, offsetof(BatchEntry, name)}
static const struct { const char *name, *fmt; size_t offset; } BATCH_FIELDS[] = {
    FIELD(position, "i8"), FIELD(base_offset, "i8"), FIELD(base_timestamp, "i8"),
    FIELD(max_timestamp, "i8"), FIELD(producer_id, "i8"), FIELD(len_batch, "i4"),
    FIELD(partition_leader_epoch, "i4"), FIELD(last_offset_delta, "i4"),
    FIELD(base_sequence, "i4"), FIELD(num_records, "i4"), FIELD(crc, "u4"),
    FIELD(attributes, "i2"), FIELD(producer_epoch, "i2"), FIELD(magic, "i1"),
};
#define N_BATCH_FIELDS (sizeof BATCH_FIELDS / sizeof BATCH_FIELDS[0])

PyMODINIT_FUNC
PyInit__native(void)
{
    if (PyType_Ready(&LazyFieldType) < 0 || PyType_Ready(&WalkerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Walker", (PyObject *)&WalkerType) < 0
        || PyModule_AddObjectRef(m, "LazyField", (PyObject *)&LazyFieldType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyMethodDef *tables[] = {DECODE_METHODS, LEGACY_METHODS, WALK_METHODS, COLUMNS_METHODS,
                             ENCODE_METHODS, RECORD_METHODS, TEXT_METHODS};
    PyObject *fields = NULL;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        if (PyModule_AddFunctions(m, tables[t]) < 0)
            goto error;
    fields = PyTuple_New(N_BATCH_FIELDS);
    if (fields == NULL)
        goto error;
    for (size_t i = 0; i < N_BATCH_FIELDS; i++) {
        PyObject *f = Py_BuildValue("(ssn)", BATCH_FIELDS[i].name, BATCH_FIELDS[i].fmt,
                                    (Py_ssize_t)BATCH_FIELDS[i].offset);
        if (f == NULL)
            goto error;
        PyTuple_SET_ITEM(fields, (Py_ssize_t)i, f);
    }
    if (PyModule_AddObject(m, "BATCH_FIELDS", fields) < 0)
        goto error;
    fields = NULL; /* the module holds it now */
    if (PyModule_AddIntConstant(m, "BATCH_ENTRY_SIZE", (long)sizeof(BatchEntry)) < 0
        || PyModule_AddIntConstant(m, "V2_RECORDS_AT", KAFKA_RECORD_BATCH_FIXED_SIZE) < 0
        || PyModule_AddStringConstant(m, "CRC32", CRC32_IEEE_NAME) < 0
        || PyModule_AddStringConstant(m, "COLUMNS_LAYOUT", COLUMNS_LAYOUT) < 0)
        goto error;
    return m;
error:
    Py_XDECREF(fields);
    Py_DECREF(m);
    return NULL;
}

