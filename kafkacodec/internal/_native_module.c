/* The module: each file's functions (_native.h) and the names they share. */
#include "_native.h"

PyObject *VALUE_NAME, *TAG_NAME, *RECORD_ATTRS;

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native",
    "The internal topics' native loops: Kafka's JSON of their structs, the toString text of "
    "Kafka's classes, the fold of a coordinator topic's newest record per key, and runs of "
    "metadata changes.", -1, NULL,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    if ((VALUE_NAME = PyUnicode_InternFromString("value")) == NULL
        || (TAG_NAME = PyUnicode_InternFromString("tag")) == NULL
        || (RECORD_ATTRS = Py_BuildValue("(ss)", "offset", "value")) == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddFunctions(m, JSON_METHODS) < 0 || PyModule_AddFunctions(m, FOLD_METHODS) < 0
        || PyModule_AddFunctions(m, METADATA_METHODS) < 0 || PyModule_AddFunctions(m, TEMPLATE_METHODS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
