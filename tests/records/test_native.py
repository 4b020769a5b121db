"""The native records loop (kafkacodec/records/_native_decode.c) against the generated parser.

The generated parser is the reference: on every input the native loop must return the
same records, or None (give up) so that the generated parser decides. It must never
accept what the parser rejects, and never reject what the parser accepts.
"""

import pytest
from conftest import KAFKA_JAVA, PEERS, mutate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafkacodec as kc
from kafkacodec.records import _native
from kafkacodec.records import batches as B
from kafkacodec.runtime import compression as C
from kafkacodec.runtime.varint import encode_varint

FIELDS = (
    "offset",
    "timestamp",
    "timestamp_type",
    "key",
    "value",
    "headers",
    "sequence",
    "control",
    "attributes",
)


def test_native_loop_is_built():
    # CI has a compiler; a silent fallback there would hide a broken extension.
    assert B._native_records is not None


def test_legacy_crcs_use_isa_l_where_it_is_installed():
    # `make` installs libisal-dev; a build that quietly fell back to zlib's CRC-32 would be
    # about 6x slower on every legacy message.
    from pathlib import Path

    from kafkacodec.records import _native

    want = "isa-l" if Path("/usr/include/isa-l/crc.h").exists() else "zlib"
    assert _native.CRC32 == want


@settings(max_examples=300)
@given(st.binary(max_size=600), st.integers(0, 7))
def test_legacy_crcs_are_zlibs(payload, shift):
    """The native CRC-32 of a legacy message (ISA-L's or zlib's) is zlib.crc32's, at every
    alignment: the native walk (scan_batches, which stops rather than decide) takes a
    message whose CRC is zlib's and stops at one off by a bit."""
    import zlib

    from kafkacodec.records import _native
    from kafkacodec.runtime.crc import crc32c

    # magic 1, attributes, timestamp, null key, the payload as value
    body = (b"\x01\x00" + (123).to_bytes(8, "big") + (-1).to_bytes(4, "big", signed=True)
            + len(payload).to_bytes(4, "big") + payload)  # fmt: skip
    for crc, whole in ((zlib.crc32(body), True), (zlib.crc32(body) ^ 1, False)):
        msg = (7).to_bytes(8, "big") + (4 + len(body)).to_bytes(4, "big") + crc.to_bytes(4, "big")
        data = bytes(shift) + msg + body
        _entries, stop = _native.scan_batches(data, shift, len(data), crc32c, zlib.crc32)
        assert stop == (len(data) if whole else shift)


def as_tuples(recs):
    return [tuple(getattr(r, f) for f in FIELDS) for r in recs]


def reference(batch, data):
    ts_type = B.TIMESTAMP_TYPES[1 if batch.attributes & 0x08 else 0]
    return B._parse_records(batch, data, ts_type)


def native(batch, data):
    log_append = batch.attributes & 0x08
    return B._native_records(
        data, batch.num_records, batch.base_offset, batch.base_timestamp,
        batch.max_timestamp if log_append else None, batch.base_sequence,
        B.TIMESTAMP_TYPES[1 if log_append else 0], B.Record,
    )  # fmt: skip


def compare(batch, data):
    """Native and reference agree, or native gives up where the reference raises; and the
    native framing check (verify's count) accepts exactly what the reference accepts."""
    checked = _native.check_v2_records(data, batch.num_records)
    try:
        want = reference(batch, data)
    except kc.DecodeError:
        assert native(batch, data) is None
        assert checked is False, "the framing check passed records the generated parser refuses"
        return None
    assert checked is True, "the framing check refused records the generated parser accepts"
    got = native(batch, data)
    assert got is not None, "native loop refused records the generated parser accepts"
    assert as_tuples(got) == as_tuples(want)
    return want


def region(batch):
    if batch.attributes & 7 == 0:
        return bytes(batch.records_region_raw)
    return C.decompress(batch.attributes & 7, batch.records_region_raw, 2)


def v2_batches():
    out = []
    for path in (
        sorted(KAFKA_JAVA.rglob("*.bin"))
        + sorted(KAFKA_JAVA.rglob("*.log"))
        + sorted(PEERS.rglob("*.bin"))
    ):
        try:
            for b in kc.iter_batches(path.read_bytes(), verify_crc=False):
                if b.magic == 2:
                    out.append(pytest.param(b, id=f"{path.name}@{b.position}"))
        except kc.DecodeError:
            continue
    return out


@pytest.mark.parametrize("batch", v2_batches())
def test_every_vector_batch_agrees(batch):
    try:
        data = region(batch)
    except kc.DecodeError:
        pytest.skip("records region does not decompress (a corrupt vector)")
    compare(batch, data)


blob = st.one_of(st.none(), st.binary(max_size=300))
records = st.lists(
    st.builds(kc.Record, timestamp=st.integers(0, 2**62), key=blob, value=blob,
              headers=st.lists(st.tuples(st.text(max_size=8), blob), max_size=3)),
    min_size=1, max_size=12,
)  # fmt: skip


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.integers(0, 2**62), st.integers(-1, 2**31 - 1), st.booleans())
def test_generated_batches_agree(recs, base, seq, log_append):
    raw = kc.build_batch(
        recs,
        base_offset=base,
        base_sequence=seq,
        log_append_time=1_700_000_000_000 if log_append else None,
    )
    (batch,) = kc.iter_batches(raw)
    assert compare(batch, region(batch)) is not None


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.data())
def test_mutated_regions_agree(recs, data):
    raw = kc.build_batch(recs, base_offset=5)
    (batch,) = kc.iter_batches(raw)
    compare(batch, mutate(region(batch), data))


@pytest.mark.parametrize(
    "tail",
    [
        encode_varint(2**31 - 1),  # a huge offset delta is fine for varint bounds
        b"\xff\xff\xff\xff\x0f",  # 5-byte varint at the limit
        b"\xff\xff\xff\xff\x1f",  # out of range
        b"\xff\xff\xff\xff\xff\x01",  # longer than 5 bytes
    ],
)
def test_edge_varints_agree(tail):
    # A one-record region whose offset delta is the varint under test.
    body = b"\x00" + b"\x00" + tail + b"\x01" + b"\x01" + b"\x00"
    data = encode_varint(len(body)) + body
    (batch,) = kc.iter_batches(kc.build_batch([kc.Record(None, 0, None, None)]))
    compare(batch, data)


@pytest.mark.parametrize("change", ["byte after", "one record less", "one record more", "cut"])
def test_a_region_that_is_not_its_count_of_records_is_refused_by_both(change):
    recs = [kc.Record(None, 0, b"k%d" % i, b"v" * i, [("h", b"x")]) for i in range(3)]
    (batch,) = kc.iter_batches(kc.build_batch(recs))
    data = region(batch)
    count = batch.num_records
    data, count = {"byte after": (data + b"\x00", count), "one record less": (data, count - 1),
                   "one record more": (data, count + 1), "cut": (data[:-1], count)}[change]  # fmt: skip
    assert _native.check_v2_records(data, count) is False
    assert B._native_records(data, count, 0, 0, None, -1, "CreateTime", B.Record) is None
    batch.num_records = count
    with pytest.raises(kc.DecodeError):
        reference(batch, data)


def test_overflowing_offset_defers_to_parser():
    (batch,) = kc.iter_batches(
        kc.build_batch([kc.Record(None, 0, b"k", b"v")], base_offset=2**63 - 1)
    )
    body = b"\x00\x00" + encode_varint(2**30) + b"\x01\x01\x00"
    data = encode_varint(len(body)) + body
    assert native(batch, data) is None
    assert reference(batch, data)[0].offset == 2**63 - 1 + 2**30


# ---------------------------------------------------------------------------- encoding

from kafkacodec.records import builders as W  # noqa: E402


def build_both(recs, **kw):
    native = kc.build_batch(list(recs), **kw)
    with no_native_encoders():
        reference = kc.build_batch(list(recs), **kw)
    return native, reference


class no_native_encoders:  # noqa: N801 - a context manager used as a statement
    """The generated builders alone (no native region, no native batch)."""

    def __enter__(self):
        self.saved = W._native_records, W._native_batch
        W._native_records = W._native_batch = None

    def __exit__(self, *exc):
        W._native_records, W._native_batch = self.saved


def _encoded(build):
    """The bytes build() makes, or the EncodeError it raises as (type, message)."""
    try:
        return build()
    except kc.EncodeError as err:
        return type(err), str(err)


int_or_edge = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([-(2**31) - 1, 2**31,
                        -(2**15) - 1, 2**15, 2**63, -(2**63) - 1, True]))  # fmt: skip


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(
        st.builds(kc.Record, offset=st.one_of(st.none(), st.integers(0, 2**31)),
                  timestamp=st.integers(-(2**62), 2**62), key=blob, value=blob,
                  headers=st.lists(st.tuples(st.text(max_size=8), blob), max_size=3)),
        st.tuples(st.none(), st.integers(0, 2**41), blob, blob, st.just([])),
        st.fixed_dictionaries({"timestamp": st.integers(0, 2**41), "key": blob}),
    ), max_size=8),
    st.integers(0, 2**40), st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]),
    st.sampled_from(["CreateTime", "LogAppendTime"]), st.integers(-(2**62), 2**62),
    st.booleans(), st.booleans(), int_or_edge, int_or_edge, int_or_edge, int_or_edge,
    st.booleans(),
)  # fmt: skip
def test_native_batches_are_the_generated_builders(recs, base, codec, ts_type, stamp, txn, control,
                                                   epoch, pid, pepoch, seq, as_iterator):
    """Whole batches in C (encode_v2_batch) byte for byte what the generated builder writes
    from the same records and header values, for every codec (the same compressor on the
    same region) and timestamp type; a value that does not fit its field is the
    generated builder's to refuse, with its own message."""
    kw = dict(base_offset=base, compression=codec, timestamp_type=ts_type,
              log_append_time=stamp if ts_type == "LogAppendTime" else None,
              is_transactional=txn, is_control=control, partition_leader_epoch=epoch,
              producer_id=pid, producer_epoch=pepoch, base_sequence=seq)  # fmt: skip
    native = _encoded(lambda: kc.build_batch(iter(recs) if as_iterator else list(recs), **kw))
    with no_native_encoders():
        reference = _encoded(lambda: kc.build_batch(list(recs), **kw))
    if isinstance(native, bytes) or isinstance(reference, bytes):
        assert native == reference
    else:  # the same refusal as with the native region alone (which the builder reports)
        saved, W._native_batch = W._native_batch, None
        try:
            assert native == _encoded(lambda: kc.build_batch(list(recs), **kw))
        finally:
            W._native_batch = saved
        assert native[0] is reference[0]


@pytest.mark.parametrize("base", [2**63, -(2**63) - 1, 1.5, "7", True, 2**63 - 1])
@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_a_base_offset_the_native_encoders_cannot_take_is_the_builders_to_refuse(base, compression):
    """A base offset that is no int64 (too large, a float, a str) gives the generated
    builders' EncodeError, never a bare OverflowError or TypeError from the C argument
    parsing; one that is, the same bytes."""
    recs = [kc.Record(None, 1, b"k", b"v")]
    for build in (lambda: kc.build_batch(list(recs), base_offset=base, compression=compression),
                  lambda: kc.build_message_set(list(recs), base_offset=base, compression=compression)):  # fmt: skip
        native = _encoded(build)
        with no_native_encoders():
            saved, W._native_legacy = W._native_legacy, None
            try:
                reference = _encoded(build)
            finally:
                W._native_legacy = saved
        assert type(native) is type(reference)
        if isinstance(native, bytes):
            assert native == reference
        else:
            assert native[0] is kc.EncodeError


def test_native_batches_are_built():
    assert W._native_batch is not None
    recs = [kc.Record(None, 5, b"k", b"v")]
    reference = build_both(recs)[1]
    calls = []
    saved = W._native_batch
    W._native_batch = lambda *a: calls.append(a) or saved(*a)
    try:
        assert kc.build_batch(recs) == reference
    finally:
        W._native_batch = saved
    assert len(calls) == 1


def test_native_encoder_is_built():
    assert W._native_records is not None


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.builds(kc.Record, offset=st.one_of(st.none(), st.integers(0, 2**31)), timestamp=st.integers(-(2**62), 2**62),
                  key=blob, value=blob,
                  headers=st.lists(st.tuples(st.text(max_size=8), blob), max_size=3)),
        max_size=12,
    ),
    st.integers(0, 2**40), st.one_of(st.none(), st.integers(-(2**62), 2**62)),
    st.sampled_from(["none", "gzip", "lz4"]),
)  # fmt: skip
def test_native_encoder_matches_generated_builder(recs, base, base_ts, codec):
    kw = dict(base_offset=base, base_timestamp=base_ts, compression=codec)
    try:
        native, reference = build_both(recs, **kw)
    except kc.EncodeError:
        # The native loop defers; the generated builder refuses with its own message.
        with no_native_encoders(), pytest.raises(kc.EncodeError):
            kc.build_batch(list(recs), **kw)
        return
    if codec == "none":
        assert native == reference
    else:  # compressed bytes may differ by codec framing; compare the decoded content
        (a,), (b,) = kc.iter_batches(native), kc.iter_batches(reference)
        assert as_tuples(a.records()) == as_tuples(b.records())


@pytest.mark.parametrize(
    "recs",
    [
        [kc.Record(None, 1, "text key", bytearray(b"v"))],  # converted by the Python builder
        [(None, 1, b"k", b"v", [])],  # tuples, not Records
        [kc.Record(None, 1, b"k", b"v", [["h", b"x"]])],  # a header as a list
        [kc.Record(None, 1, b"k", b"v", [("h\udcff", b"x")])],  # surrogate-escaped key
        [
            kc.Record(None, 2**63 - 1, b"k", b"v"),
            kc.Record(None, -(2**63), b"k", b"v"),
        ],  # delta overflows
        [kc.Record(2**40, 1, b"k", b"v")],  # offset delta beyond int32
    ],
)
def test_native_encoder_defers_or_agrees(recs):
    try:
        native, reference = build_both(recs)
    except kc.EncodeError:
        return
    assert native == reference


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.integers(0, 2**31)), st.integers(-(2**62), 2**62), blob, blob,
                  st.lists(st.tuples(st.text(max_size=8), blob), max_size=3)),
        max_size=12,
    ),
    st.integers(0, 2**40),
)  # fmt: skip
def test_tuples_encode_as_the_records_they_stand_for(rows, base):
    """A producer's 5-tuples (offset, timestamp, key, value, headers) go through the native
    loop as they are, and give the bytes of the Records they stand for, native or not."""
    records = [kc.Record(*r) for r in rows]
    try:
        from_records = kc.build_batch(records, base_offset=base)
    except kc.EncodeError:  # an offset delta beyond int32: refused whatever the shape
        with pytest.raises(kc.EncodeError):
            kc.build_batch(rows, base_offset=base)
        return
    from_tuples = kc.build_batch(rows, base_offset=base)
    assert from_tuples == from_records
    saved, W._native_records = W._native_records, None
    try:
        assert kc.build_batch(rows, base_offset=base) == from_records
    finally:
        W._native_records = saved


@pytest.mark.parametrize(
    "rows",
    [
        [(None, 1, b"k")],  # a shorter tuple: converted to a Record first
        [{"timestamp": 1, "key": b"k", "value": b"v"}],  # a mapping
        [(None, 1, "text key", b"v", [])],  # text: the Python builder converts it
        [(None, "1", b"k", b"v", [])],  # a wrong type: refused by the Python builder
        [(None, 1, b"k", b"v", (("h", b"x"),))],  # headers as a tuple
    ],
)
def test_other_shapes_defer_to_the_python_builder(rows):
    try:
        got = kc.build_batch(rows)
    except kc.EncodeError:
        saved, W._native_records = W._native_records, None
        try:
            with pytest.raises(kc.EncodeError):
                kc.build_batch(rows)
        finally:
            W._native_records = saved
        return
    want = kc.build_batch(
        [
            r
            if isinstance(r, kc.Record)
            else (kc.Record(**r) if isinstance(r, dict) else kc.Record(*r))
            for r in rows
        ]
    )
    assert got == want


# --------------------------------------------------------------------- legacy encoding


def _outcome(fn):
    try:
        return ("ok", fn())
    except kc.KafkacodecError as err:
        return ("error", type(err).__name__, str(err))


def legacy_both(recs, **kw):
    native = _outcome(lambda: kc.build_message_set(list(recs), **kw))
    saved, W._native_legacy = W._native_legacy, None
    try:
        reference = _outcome(lambda: kc.build_message_set(list(recs), **kw))
    finally:
        W._native_legacy = saved
    return native, reference


def test_native_legacy_encoder_is_built():
    assert W._native_legacy is not None


legacy_value = st.one_of(st.none(), st.binary(max_size=40), st.text(max_size=5),
                         st.just(bytearray(b"ba")), st.just(7))  # fmt: skip
legacy_row = st.one_of(
    st.builds(kc.Record, offset=st.one_of(st.none(), st.integers(-5, 2**63 + 5)),
              timestamp=st.one_of(st.integers(-(2**63) - 1, 2**63), st.just(None)),
              key=legacy_value, value=legacy_value,
              headers=st.one_of(st.just([]), st.lists(st.tuples(st.text(max_size=3), blob), max_size=1))),
    st.tuples(st.one_of(st.none(), st.integers(0, 2**40)), st.integers(-1, 2**45), legacy_value,
              legacy_value, st.sampled_from([[], (), None, [("h", b"v")]])),
    st.tuples(st.none(), st.integers(0, 9)),  # a shorter tuple
)  # fmt: skip


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(legacy_row, max_size=8), st.sampled_from([0, 1]),
       st.sampled_from(["none", "gzip", "snappy", "lz4"]), st.integers(0, 2**62),
       st.sampled_from([None, 1_700_000_000_000]))  # fmt: skip
def test_native_legacy_encoder_matches_the_generated_builder(recs, magic, codec, base, log_append):
    """Byte for byte, or the same error, whatever the records hold: offsets near 2^63,
    timestamps out of range or missing, text, bytearrays, headers, tuples of any shape."""
    kw = dict(magic=magic, compression=codec, base_offset=base)
    if log_append is not None and magic == 1:
        kw.update(timestamp_type="LogAppendTime", log_append_time=log_append)
    native, reference = legacy_both(recs, **kw)
    assert native == reference


def test_the_native_legacy_encoder_takes_what_a_producer_gives(monkeypatch):
    # an encoder that deferred on everything would pass the differential test
    monkeypatch.setattr(W, "_as_record", None)
    rows = [(None, 1_700_000_000_000 + i, b"k%d" % i, b"v", []) for i in range(3)]
    for magic in (0, 1):
        for codec in ("none", "gzip", "lz4"):
            raw = kc.build_message_set(rows, magic=magic, compression=codec, base_offset=9)
            recs = [r for b in kc.iter_batches(raw) for r in b.records()]
            assert [(r.offset, r.key) for r in recs] == [(9, b"k0"), (10, b"k1"), (11, b"k2")]


# ------------------------------------------------------------------- Record.__init__

init_args = st.lists(st.one_of(st.none(), st.integers(-1, 2**64), st.binary(max_size=4),
                               st.lists(st.tuples(st.text(max_size=2), blob), max_size=2)),
                     max_size=7)  # fmt: skip
init_kwargs = st.dictionaries(
    st.sampled_from(["offset", "timestamp", "key", "value", "headers", "timestamp_type",
                     "sequence", "control", "attributes", "crc"]),
    st.one_of(st.none(), st.integers(-1, 9), st.just("LogAppendTime"), st.just([("h", None)]),
              st.just((("g", b"x"),))),
    max_size=4,
)  # fmt: skip


def _made(init, args, kwargs):
    r = B.Record.__new__(B.Record)
    try:
        init(r, *args, **kwargs)
    except TypeError as err:
        return ("TypeError", str(err).replace("record_init_reference", "__init__"))
    return [getattr(r, f) for f in FIELDS]


def test_record_init_is_native():
    assert B.Record.__init__ is not B.record_init_reference


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(init_args, init_kwargs)
def test_record_init_in_c_is_the_python_one(args, kwargs):
    """Every field, the headers copied into a new list, the same TypeError for a wrong call
    (too many positional arguments, an unknown or repeated keyword, headers not iterable)."""
    native = _made(B.Record.__init__, args, kwargs)
    reference = _made(B.record_init_reference, args, kwargs)
    if isinstance(reference, tuple):  # a TypeError (which of two faults it names may differ)
        assert isinstance(native, tuple)
        if "unexpected keyword" in reference[1] and len(args) <= 5:
            assert native[1] == reference[1]
    else:
        assert native == reference
    headers = kwargs.get("headers")
    if not isinstance(native, tuple) and isinstance(headers, list):
        assert B.Record(headers=headers).headers is not headers


def test_record_init_reads_the_python_signature():
    with pytest.raises(TypeError, match="each record slot once"):

        class Other:
            __slots__ = FIELDS

            def __init__(self, offset=None, timestamp=-1):
                pass

        from kafkacodec.records._native import native_record_init

        native_record_init(Other)


def test_calling_record_is_calling_its_init():
    """Record(...) goes through the class's C vectorcall; a subclass, and Record once its
    __init__ is the Python one again, through type's usual call: the same values each way."""

    class Sub(B.Record):
        __slots__ = ("extra",)

    args, kwargs = (7, 9, b"k"), {"headers": (("h", b"v"),), "sequence": 4}
    want = [getattr(B.Record(*args, **kwargs), f) for f in FIELDS]
    assert [getattr(Sub(*args, **kwargs), f) for f in FIELDS] == want
    from kafkacodec.records._native import native_record_init

    try:
        B.Record.__init__ = B.record_init_reference
        assert [getattr(B.Record(*args, **kwargs), f) for f in FIELDS] == want
        with pytest.raises(TypeError, match="unexpected keyword argument 'crc'"):
            B.Record(crc=1)
    finally:
        B.Record.__init__ = B.record_init_reference
        native_record_init(B.Record)  # as at import: the method, the slot and the vectorcall
    assert B.Record.__init__ is not B.record_init_reference
    with pytest.raises(TypeError, match="unexpected keyword argument 'crc'"):
        B.Record(crc=1)


def test_an_interrupt_in_the_compressor_stays_an_interrupt(monkeypatch):
    """Ctrl-C while the native encoder has Python compress a region: the KeyboardInterrupt
    goes up (the fast path used to drop every error to let the generated builder compress
    again, which took Ctrl-C away from `kafkacodec sample`)."""
    import kafkacodec.records.builders as B

    if B._native_batch is None:
        pytest.skip("no native extension")

    calls = []
    real = B._encoder

    def encoder(*args):
        encode = real(*args)

        def interrupted_once(*a):  # as a signal is: raised once, where Python code runs next
            calls.append(a)
            if len(calls) == 1:
                raise KeyboardInterrupt
            return encode(*a)

        return interrupted_once

    monkeypatch.setattr(B, "_encoder", encoder)
    with pytest.raises(KeyboardInterrupt):
        kc.build_batch([kc.Record(None, 1, b"k", b"v" * 100)], compression="gzip")
