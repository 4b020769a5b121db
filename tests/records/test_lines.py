"""The native text formatters (kafkacodec/records/_native_text.c) against the Python ones
they stand in for: `kafkacodec records`' text and JSON lines (cli/records.py) and
kafka-dump-log's record lines (dump._record_lines). The Python formatters are the
reference: the native ones give the same characters, or None so that Python formats.
"""

from __future__ import annotations

import pytest
from conftest import KAFKA_JAVA, PEERS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafkacodec as kc
from kafkacodec import dump
from kafkacodec.cli import records as cli_records
from kafkacodec.records import _native, lines
from kafkacodec.records.batches import ControlInfo, Record

MODES = lines.MODES


def reference(recs, mode):
    if mode == "text":
        return "".join(cli_records._record_line(r) + "\n" for r in recs)
    return "".join(cli_records._record_json(r, mode) + "\n" for r in recs)


def dump_reference(recs, print_data, previous):
    """dump._record_lines' Python path over a v2 batch holding recs."""

    class Batch:
        magic, is_control = 2, False

        @staticmethod
        def kafka_records():
            return recs, None

    last = [previous, []]
    text = "".join(line + "\n" for line in dump._record_lines(Batch, print_data, last))
    return text, last[0], last[1]


def vector_records():
    out = []
    for path in (sorted(KAFKA_JAVA.rglob("*.bin")) + sorted(KAFKA_JAVA.rglob("*.log"))
                 + sorted(PEERS.rglob("*.bin"))):  # fmt: skip
        try:
            for b in kc.iter_batches(path.read_bytes(), verify_crc=False):
                recs = b.records(verify_crc=False)
                if recs:
                    out.append(pytest.param(b.magic, recs, id=f"{path.name}@{b.position}"))
        except kc.DecodeError:
            continue
    return out


VECTORS = vector_records()


def test_the_formatters_are_built():
    # CI has a compiler; a silent fallback there would hide a broken extension
    assert lines._native_lines is not None and lines._native_dump is not None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("magic", "recs"), VECTORS)
def test_every_vector_prints_as_python_prints_it(magic, recs, mode):
    got = _native.record_lines(recs, Record, mode)
    if any(r.control is not None for r in recs):
        assert got is None  # Python prints control records
    else:
        assert got == reference(recs, mode)
    assert lines.record_lines(recs, mode, lambda r: reference([r], mode)[:-1]) == reference(
        recs, mode
    )


@pytest.mark.parametrize("print_data", [False, True])
@pytest.mark.parametrize(("magic", "recs"), [p for p in VECTORS if p.values[0] == 2])
def test_every_v2_vector_dumps_as_python_dumps_it(magic, recs, print_data):
    got = _native.dump_lines(recs, Record, print_data, None)
    if any(r.control is not None for r in recs):
        assert got is None
    else:
        assert got == dump_reference(recs, print_data, None)


# Bytes that reach every branch: printable ASCII, control characters, DEL, valid UTF-8 of
# every length (non-printable ones among them: U+0085, U+2028, U+E000, U+E0001), invalid
# UTF-8 (lone continuation bytes, overlongs, encoded surrogates, past U+10FFFF, truncated).
PIECES = [b"a", b" ", b"~", b'"', b"\\", b"'", b"\x00", b"\t", b"\n", b"\r", b"\x1b", b"\x7f",
          b"\x08", b"\x0c", "é".encode(), "\u0085".encode(), "\u00a0".encode(), "\u2028".encode(),
          "€".encode(), "\ue000".encode(), "😀".encode(), "\U000e0001".encode(), "\ufeff".encode(),
          b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\xff"]  # fmt: skip
blob = st.one_of(
    st.none(),
    st.binary(max_size=12),
    st.lists(st.sampled_from(PIECES), max_size=8).map(b"".join),
)
header_key = st.one_of(
    st.text(max_size=6),
    # a header key as the parser decodes bytes that are not UTF-8 (surrogateescape)
    st.binary(max_size=6).map(lambda b: b.decode("utf-8", "surrogateescape")),
)
record = st.builds(
    Record,
    offset=st.integers(-(2**63), 2**63 - 1),
    timestamp=st.integers(-(2**63), 2**63 - 1),
    key=blob,
    value=blob,
    headers=st.lists(st.tuples(header_key, blob), max_size=3),
    timestamp_type=st.sampled_from(["CreateTime", "LogAppendTime", "NoTimestampType"]),
    sequence=st.integers(-1, 2**31 - 1),
)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record, max_size=6), st.sampled_from(MODES))
def test_generated_records_print_as_python_prints_them(recs, mode):
    assert _native.record_lines(recs, Record, mode) == reference(recs, mode)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(record, max_size=6),
    st.booleans(),
    st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
)
def test_generated_records_dump_as_python_dumps_them(recs, print_data, previous):
    got = _native.dump_lines(recs, Record, print_data, previous)
    if any(not k.isascii() for r in recs for k, _ in r.headers):
        assert got is None  # Python joins such keys (and may not be able to print them)
    else:
        assert got == dump_reference(recs, print_data, previous)


def odd(**kw):
    return Record(offset=1, timestamp=2, key=b"k", value=b"v", **kw)


@pytest.mark.parametrize("rec", [
    odd(control=ControlInfo(0, 0, 0)),  # a control record: Python names it
    Record(offset=2**63, timestamp=0, key=None, value=None),  # past 64 bits
    Record(offset=1, timestamp=0, key=bytearray(b"k"), value=None),  # not bytes
    odd(headers=[("k", memoryview(b"v"))]),
    odd(headers=[(b"k", b"v")]),
], ids=["control", "offset-past-64-bits", "bytearray", "memoryview-header", "bytes-header-key"])  # fmt: skip
def test_what_the_native_formatters_do_not_take_is_pythons(rec):
    recs = [odd(), rec]
    for mode in MODES:
        assert _native.record_lines(recs, Record, mode) is None
    assert _native.dump_lines(recs, Record, True, None) is None
    # and the wrapper falls back to the reference formatter for the whole list
    assert (
        lines.record_lines(recs, "text", lambda r: f"<{r.offset}>")
        == "<1>\n<" + str(rec.offset) + ">\n"
    )


def test_a_subclass_of_record_is_pythons():
    class Mine(Record):
        __slots__ = ()

    assert _native.record_lines([Mine(offset=1, timestamp=2)], Record, "text") is None


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="mode"):
        _native.record_lines([], Record, "xml")
    with pytest.raises(ValueError, match="mode"):
        lines.record_lines([], "xml", str)


def test_dump_gaps_carry_across_calls():
    recs = [Record(offset=o, timestamp=0, key=None, value=None) for o in (5, 6, 9)]
    text, last, gaps = _native.dump_lines(recs, Record, False, 3)
    assert (last, gaps) == (9, [(3, 5), (6, 9)])
    assert text.count("\n") == 3
    assert _native.dump_lines([], Record, False, 7) == ("", 7, [])
    assert _native.dump_lines([recs[0]], Record, False, 2**63 - 1)[2] == [(2**63 - 1, 5)]
