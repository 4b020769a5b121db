"""The native interpreter of generated parse programs (runtime/_programs.c) against the
generated Python parsers, which are the reference: on every input the interpreter returns
the same object, or None (give up) so that the Python parser decides; it never accepts
what the parser rejects."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from internal_vectors import CODECS, ROWS

from kafkacodec.internal import DEFAULT
from kafkacodec.internal import codecs as C
from kafkacodec.runtime.errors import DecodeError

sys.path.insert(0, str(Path(__file__).parents[1] / "generator"))  # differential.py
from differential import ours_tree  # noqa: E402

pytestmark = pytest.mark.skipif(C._programs is None, reason="no native interpreter built")


def test_the_interpreter_is_built():
    # CI has a compiler; a silent fallback there would hide a broken extension.
    assert C._programs is not None


def structs():
    """(class, data, position of the struct, version) of every vector's struct."""
    out = []
    for r in ROWS:
        data = bytes.fromhex(r["hex"])
        if r["kind"] in ("metadata", "remote_metadata", "control"):
            continue  # their framing differs; the coordinator and consumer-protocol ones suffice
        from internal_vectors import decode

        m = decode(CODECS, r)
        out.append((type(m.obj), data, r["headerBytes"], m.version))
    return out


STRUCTS = structs()


def both(cls, data, pos, version):
    """(native, python) outcomes: a tree, "error", or None (native gave up)."""
    program = CODECS.program(cls)
    assert program is not None, f"{cls.__name__} has no program"
    done = C._programs.parse(program, data, pos, len(data), version)
    native = None if done is None else (ours_tree(done[0]), done[1])
    try:
        obj, after = cls.parse(data, pos, len(data), version)
        python = (ours_tree(obj), after)
    except DecodeError:
        python = "error"
    return native, python


@pytest.mark.parametrize("i", range(len(STRUCTS)))
def test_same_objects_on_every_vector(i):
    native, python = both(*STRUCTS[i])
    assert native is not None and native == python


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_damaged_vectors_give_the_same_or_give_up(data):
    cls, raw, pos, version = data.draw(st.sampled_from(STRUCTS))
    buf = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(buf) - 1))
        buf[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(pos, len(buf)))
    native, python = both(cls, bytes(buf[:cut]), pos, version)
    if native is not None:
        assert native == python


def test_coordinator_pairs_equal_one_record_a_call():
    """The bulk call gives, pair by pair, what coordinator_key and coordinator_value give:
    the vectors' group-coordinator keys with each value of their type, tombstones, and
    damaged pairs (their DecodeError, in place)."""
    keys = {int(r["hex"][:4], 16): bytes.fromhex(r["hex"]) for r in ROWS
            if r["module"] == "group-coordinator" and r["kind"] == "key"}  # fmt: skip
    pairs = [(keys[r["recordType"]], bytes.fromhex(r["hex"])) for r in ROWS
             if r["module"] == "group-coordinator" and r["kind"] == "value"]  # fmt: skip
    pairs += [(k, None) for k in keys.values()]
    pairs += [(pairs[0][0], pairs[0][1][:-3]), (b"\x00\x63\x00", b"\x00\x00"), (b"\x00", None)]
    got = CODECS.coordinator_pairs("__consumer_offsets", pairs)
    assert len(got) == len(pairs)
    for (key, value), item in zip(pairs, got):
        try:
            k = CODECS.coordinator_key("__consumer_offsets", key)
            v = (
                None
                if value is None
                else CODECS.coordinator_value("__consumer_offsets", k.record_type, value)
            )
        except DecodeError as err:
            assert isinstance(item, DecodeError) and str(item) == str(err)
            continue
        rt, kobj, version, vobj = item
        assert (rt, ours_tree(kobj)) == (k.record_type, ours_tree(k.obj))
        if v is None:
            assert (version, vobj) == (-1, None)
        else:
            assert (version, ours_tree(vobj)) == (v.version, ours_tree(v.obj))
    assert sum(isinstance(x, DecodeError) for x in got) == 3


def _key(group: bytes, topic: bytes, partition: int) -> bytes:
    """An OffsetCommitKey (record type 1) of raw group and topic bytes."""
    s16 = lambda raw: len(raw).to_bytes(2, "big") + raw  # noqa: E731
    return b"\x00\x01" + s16(group) + s16(topic) + partition.to_bytes(4, "big")


NAMES = st.one_of(
    st.sampled_from([b"", b"g", b"orders", b"x" * 64, b"x" * 65, "gr\u00fcn".encode()]),
    st.binary(max_size=80),  # invalid UTF-8 too: surrogateescape, as the Python parser does
    st.text(max_size=70).map(str.encode),
)


@settings(max_examples=150, deadline=None)
@given(
    names=st.lists(NAMES, min_size=1, max_size=12), picks=st.lists(st.integers(0, 11), max_size=60)
)
def test_bulk_strings_equal_the_python_parser(names, picks):
    """Names repeat in a real __consumer_offsets (the interpreter shares one str per short
    ASCII name): every string read in bulk equals the Python parser's, whatever the bytes,
    repeated or not, colliding in the cache or not."""
    pairs = [(_key(names[i % len(names)], names[(i + 1) % len(names)], i), None) for i in picks]
    python_only = C.Codecs()
    python_only.program = lambda cls: None  # type: ignore[method-assign]
    got = DEFAULT.coordinator_pairs("__consumer_offsets", pairs)
    want = python_only.coordinator_pairs("__consumer_offsets", pairs)
    for g, w in zip(got, want):
        assert ours_tree(g[1]) == ours_tree(w[1])
        assert (g[1].group, g[1].topic) == (w[1].group, w[1].topic)


def test_what_the_interpreter_makes_is_not_tracked_by_the_collector():
    """The interpreter makes trees of objects holding no cycle: the cyclic collector never
    has to walk them (see runtime/_programs.c)."""
    import gc

    def walk(obj):
        yield obj
        for name in getattr(type(obj), "__slots__", ()):
            yield from walk(getattr(obj, name))
        if isinstance(obj, list):
            for item in obj:
                yield from walk(item)

    seen = 0
    for cls, data, pos, version in STRUCTS:
        obj, _ = C._programs.parse(CODECS.program(cls), data, pos, len(data), version)
        for part in walk(obj):
            assert not gc.is_tracked(part), (cls.__name__, type(part).__name__)
            seen += 1
    assert seen > 5 * len(STRUCTS)
