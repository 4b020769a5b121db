"""One shape for what each decoder makes of some bytes, so that the differential tests can
compare kafkacodec's generated parsers with other readers of the same schemas.

An outcome is ("ok", tree) or ("error", family). Trees hold the schema's stored fields
only (no instances), bytes as bytes, nested types as dicts; lazily read regions are read.
Error families are coarse on purpose: readers check in different orders, so a damaged
input may fail a length check in one and a validity check in another; a bad CRC is
the one family every reader must agree on exactly, when the CRC is the only damage.
"""

from __future__ import annotations

import construct as cs

import kafkacodec as kc
from kafkacodec.runtime import _prim


def camel(schema_id: str) -> str:
    """A schema id as its generated class name (kafka_record_batch -> KafkaRecordBatch)."""
    return "".join(p[:1].upper() + p[1:] for p in schema_id.split("_"))


POSITIONS = {"crc_start", "crc_end"}  # where a CRC's bytes are, kept by kafkacodec's parsers


def _types():
    from kafkacodec.generator.ir import SchemaSet
    from kafkacodec.generator.render import SCHEMA_DIR

    return [t for m in SchemaSet(SCHEMA_DIR).modules() for t in m.types]


#: Each class's positional instances: bytes of its fields read ahead (the length and magic
#: of a log entry), which a recompressed encoding changes with the field.
_TYPES = _types()
READ_AHEAD = {t.class_name: {i.name for i in t.pos_instances} for t in _TYPES if t.pos_instances}
#: Each class's sized bodies that kafkacodec reads inline (-kafkacodec-inline) and the
#: official compiler as objects of their own (a record's `body`).
INLINED = {t.class_name: [b.name for b in t.inlined] for t in _TYPES if t.inlined}


def _kaitai_field(kobj, name: str):
    """A field of an official-compiler object, looked for in its inlined bodies too."""
    for via in INLINED.get(type(kobj).__name__, ()):
        body = getattr(kobj, via, None)
        if body is not None and name in vars(body):
            return getattr(body, name)
    return getattr(kobj, name, None)


def ours_tree(obj, derived: bool = True, verify: bool = True):
    """obj as a tree; derived=False leaves out what builders compute (lengths, counts,
    CRCs) and what is read ahead from them: what stays is the content, equal after
    recompression."""
    if isinstance(obj, _prim.Generated):
        cls = type(obj)
        out = {}
        for name in cls.FIELDS:
            if name in POSITIONS or (
                not derived and (name in cls.DERIVED or name in READ_AHEAD.get(cls.__name__, ()))
            ):
                continue
            if name.endswith("_raw") and hasattr(cls, "read_" + name[:-4]):
                continue
            if hasattr(cls, "read_" + name):
                out[name] = ours_tree(getattr(obj, "read_" + name)(verify=verify), derived, verify)
            else:
                out[name] = ours_tree(getattr(obj, name), derived, verify)
        return out
    if isinstance(obj, (list, tuple)):
        return [ours_tree(x, derived, verify) for x in obj]
    return _plain(obj)


def project(container, like):
    """A Construct parse result cut to the shape of an ours_tree (its instances dropped)."""
    if isinstance(like, dict):
        if not isinstance(container, cs.Container):
            return container
        return {
            k: project(container[k], v) if k in container else "<missing>" for k, v in like.items()
        }
    if isinstance(like, list) and isinstance(container, list):
        return [project(c, v) for c, v in zip(container, like)] + container[len(like) :]
    return _plain(container)


def _plain(obj):
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj)
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    if isinstance(obj, int) and not isinstance(obj, bool):
        return int(obj)
    return obj


def construct_parse_all(definition, data):
    """Parse data with a Construct definition, refusing bytes after it (as parse_all does)."""
    import io

    stream = io.BytesIO(bytes(data))
    obj = definition.parse_stream(stream)
    if stream.tell() != len(data):
        raise cs.TerminatedError(f"{len(data) - stream.tell()} bytes after the structure")
    return obj


def outcome(fn, *args, **kwargs):
    try:
        return "ok", fn(*args, **kwargs)
    except kc.ChecksumError:
        return "error", "checksum"
    except cs.ChecksumError:
        return "error", "checksum"
    except (kc.KafkacodecError, cs.ConstructError):
        return "error", "invalid"


VARINTS = {"ZigzagVarint", "UnsignedVarint"}


def kaitai_project(kobj, like):
    """An official-compiler Python object cut to the shape of an ours_tree: varints
    (objects there) become their value, absent fields None. A positional instance ours
    did not read (None: the data ends before it) is not asked of Kaitai's object either:
    its instances are read when first asked, at the stream's position then."""
    if type(kobj).__name__ in VARINTS:
        return kobj.value
    if isinstance(like, dict):
        ahead = READ_AHEAD.get(type(kobj).__name__, set())
        return {
            k: None if (v is None and k in ahead) else kaitai_project(_kaitai_field(kobj, k), v)
            for k, v in like.items()
        }
    if isinstance(like, list) and isinstance(kobj, list):
        return [kaitai_project(x, v) for x, v in zip(kobj, like)] + kobj[len(like) :]
    return _plain(kobj)


def kafka_python_records(data):
    """(offset, timestamp, key, value, headers) of every record kafka-python reads, and
    whether every batch's CRC matched."""
    from kafka.record.memory_records import MemoryRecords

    out, crc_ok = [], True
    records = MemoryRecords(bytes(data))
    while (batch := records.next_batch()) is not None:
        crc_ok &= batch.validate_crc()
        for r in batch:
            out.append((r.offset, r.timestamp, r.key, r.value, list(r.headers)))
    return out, crc_ok


def kafkacodec_records(data):
    out = []
    for batch in kc.iter_batches(data):
        if getattr(batch, "is_control", False):
            continue
        for r in batch.records():
            headers = [(k, v) for k, v in r.headers]
            out.append((r.offset, r.timestamp, r.key, r.value, headers))
    return out
