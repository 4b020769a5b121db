/*
 * Runs of PartitionChangeRecords applied to the cluster's state, as cluster.py's
 * _partition_change applies each (Kafka's PartitionRegistration.merge): the lists a record
 * carries replace the partition's (a null one leaves it as it is), a leader other than -2
 * (NO_LEADER_CHANGE) replaces it and bumps the leader epoch, and the partition epoch is
 * bumped. A metadata log is mostly these records; cluster.py's fold applies every other
 * record, and these too where this stops.
 *
 *   partition_changes(items, start, api_key, readers, topics, inert) -> the index it stopped at
 *       items: Codecs.metadata_items' output, (apiKey, version, object) or an error;
 *       inert: the apiKeys of records that change nothing cluster.py folds (NoOpRecord, ...),
 *       passed over;
 *       readers: {version: plan} of the fields read (kafka_json plans of cluster.py's
 *       _CHANGE: TopicId, PartitionId, Isr, Replicas, AddingReplicas, RemovingReplicas,
 *       EligibleLeaderReplicas, LastKnownElr, Leader, LeaderRecoveryState, Directories,
 *       in that order); topics: ClusterState.topics. A record carrying Directories is
 *       left to cluster.py (its Uuids as text).
 *   From items[start] on, each PartitionChangeRecord of a partition the state holds is
 *   applied; it stops at the first item that is anything else (another record, an error,
 *   a partition no PartitionRecord created, a version with no reader), which the caller
 *   applies, then calls again from the one after it.
 */
#include "_native.h"

#define N_READ 11
enum { R_TOPIC, R_PARTITION, R_ISR, R_REPLICAS, R_ADDING, R_REMOVING, R_ELR, R_LAST_ELR,
       R_LEADER, R_RECOVERY, R_DIRECTORIES };
#define N_LISTS 6 /* R_ISR .. R_LAST_ELR, stored under K_ISR .. K_LAST_ELR */

/* The state's keys (cluster.py's partition dicts), interned once. */
enum { K_ISR, K_REPLICAS, K_ADDING, K_REMOVING, K_ELR, K_LAST_ELR, K_PARTITIONS, K_LEADER,
       K_LEADER_EPOCH, K_PARTITION_EPOCH, K_RECOVERY, N_KEYS };
static const char *const KEY_NAMES[N_KEYS] = {
    "isr", "replicas", "adding_replicas", "removing_replicas", "elr", "last_known_elr",
    "partitions", "leader", "leader_epoch", "partition_epoch", "leader_recovery_state",
};
static PyObject *KEYS[N_KEYS];

static int
intern_keys(void)
{
    for (int k = 0; k < N_KEYS; k++)
        if (KEYS[k] == NULL && (KEYS[k] = PyUnicode_InternFromString(KEY_NAMES[k])) == NULL)
            return -1;
    return 0;
}

/* The state's key of a topic id (Kafka's Uuid.toString), the last one remembered: a log's
 * changes come topic after topic. A new reference, or NULL with an exception. */
static PyObject *
topic_key(PyObject *raw)
{
    static uint8_t last[16];
    static PyObject *last_text = NULL;
    const Py_ssize_t n = PyBytes_GET_SIZE(raw);
    if (last_text != NULL && n == 16 && memcmp(last, PyBytes_AS_STRING(raw), 16) == 0)
        return Py_NewRef(last_text);
    Out o = {NULL, 0, 0};
    if (emit_base64(&o, (const uint8_t *)PyBytes_AS_STRING(raw), n, 1, 0) < 0)
        return NULL;
    PyObject *text = out_str(&o);
    if (text != NULL && n == 16) {
        memcpy(last, PyBytes_AS_STRING(raw), 16);
        Py_XSETREF(last_text, Py_NewRef(text));
    }
    return text;
}

/* d[key] += 1: 0, or -1 with an exception (also when d has no such key). */
static int
bump(PyObject *d, PyObject *key)
{
    PyObject *old = PyDict_GetItemWithError(d, key);
    if (old == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, key);
        return -1;
    }
    PyObject *one = PyLong_FromLong(1);
    PyObject *sum = one == NULL ? NULL : PyNumber_Add(old, one);
    Py_XDECREF(one);
    const int done = sum == NULL ? -1 : PyDict_SetItem(d, key, sum);
    Py_XDECREF(sum);
    return done;
}

/* Apply one record's fields to its partition: 1 applied, 0 left to the caller (its topic or
 * partition is not in the state, a field of another type), -1 an exception. */
static int
apply_change(PyObject *topics, PyObject *v[N_READ])
{
    if (!PyBytes_CheckExact(v[R_TOPIC]) || !PyLong_CheckExact(v[R_LEADER])
        || !PyLong_CheckExact(v[R_RECOVERY]) || v[R_DIRECTORIES] != Py_None)
        return 0;
    PyObject *tid = topic_key(v[R_TOPIC]);
    if (tid == NULL)
        return -1;
    PyObject *topic = PyDict_GetItemWithError(topics, tid);
    Py_DECREF(tid);
    if (topic == NULL)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *partitions = PyDict_Check(topic) ? PyDict_GetItemWithError(topic, KEYS[K_PARTITIONS]) : NULL;
    PyObject *p = partitions != NULL && PyDict_Check(partitions)
        ? PyDict_GetItemWithError(partitions, v[R_PARTITION]) : NULL;
    if (p == NULL || !PyDict_Check(p))
        return PyErr_Occurred() ? -1 : 0;
    for (int k = 0; k < N_LISTS; k++) {
        PyObject *value = v[R_ISR + k];
        if (value == Py_None)
            continue;
        PyObject *copy = PySequence_List(value);
        const int done = copy == NULL ? -1 : PyDict_SetItem(p, KEYS[K_ISR + k], copy);
        Py_XDECREF(copy);
        if (done < 0)
            return -1;
    }
    int overflow = 0;
    const long long recovery = PyLong_AsLongLongAndOverflow(v[R_RECOVERY], &overflow);
    if ((overflow || recovery != -1) && PyDict_SetItem(p, KEYS[K_RECOVERY], v[R_RECOVERY]) < 0)
        return -1;
    overflow = 0;
    const long long leader = PyLong_AsLongLongAndOverflow(v[R_LEADER], &overflow);
    if (overflow || leader != -2) { /* NO_LEADER_CHANGE */
        if (PyDict_SetItem(p, KEYS[K_LEADER], v[R_LEADER]) < 0 || bump(p, KEYS[K_LEADER_EPOCH]) < 0)
            return -1;
    }
    return bump(p, KEYS[K_PARTITION_EPOCH]) < 0 ? -1 : 1;
}

PyDoc_STRVAR(partition_changes_doc,
"partition_changes(items, start, api_key, readers, topics, inert) -> the index it stopped at\n\n"
"Apply the PartitionChangeRecords from items[start] on to the cluster's topics, up to the\n"
"first item it does not apply (see the file's comment).");

static PyObject *
partition_changes(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *items, *api_key, *readers, *topics, *inert;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "O!nO!O!O!O:partition_changes", &PyList_Type, &items, &start,
                          &PyLong_Type, &api_key, &PyDict_Type, &readers, &PyDict_Type, &topics,
                          &inert))
        return NULL;
    if (!PyAnySet_Check(inert))
        return PyErr_Format(PyExc_TypeError, "partition_changes: inert is a set");
    if (intern_keys() < 0)
        return NULL;
    Py_ssize_t i = start < 0 ? 0 : start;
    for (; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 3)
            break;
        const int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(item, 0), api_key, Py_EQ);
        if (same < 0)
            return NULL;
        if (!same) {
            const int nothing = PySet_Contains(inert, PyTuple_GET_ITEM(item, 0));
            if (nothing < 0)
                return NULL;
            if (nothing)
                continue;
            break;
        }
        PyObject *reader = PyDict_GetItemWithError(readers, PyTuple_GET_ITEM(item, 1));
        if (reader == NULL) {
            if (PyErr_Occurred())
                return NULL;
            break;
        }
        const Plan *p = plan_of(reader);
        if (p == NULL)
            return NULL;
        PyObject *v[N_READ];
        const int got = p->n == N_READ ? read_fields(PyTuple_GET_ITEM(item, 2), p, v) : 0;
        if (got < 0)
            return NULL;
        if (got == 0)
            break;
        const int done = apply_change(topics, v);
        for (int k = 0; k < N_READ; k++)
            Py_DECREF(v[k]);
        if (done < 0)
            return NULL;
        if (done == 0)
            break;
    }
    return PyLong_FromSsize_t(i);
}

PyMethodDef METADATA_METHODS[] = {
    {"partition_changes", partition_changes, METH_VARARGS, partition_changes_doc},
    {NULL, NULL, 0, NULL},
};
