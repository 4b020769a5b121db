"""The CRC range the schemas expose to other languages (instances crc_from and crc_to of
each type with a `-kafkacodec-crc` field) is the range kafkacodec's parsers check: the
number in the schema is the offset of the field the CRC starts at, and on every log vector
[crc_from, crc_to) of each entry is where the parser read the covered bytes."""

from __future__ import annotations

import importlib

import pytest
from conftest import VECTORS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacodec.generated.kafka_log import KafkaLog
from kafkacodec.generator.ir import SchemaSet
from kafkacodec.generator.render import SCHEMA_DIR
from kafkacodec.runtime.errors import DecodeError

CRC_TYPES = [(m.id, t) for m in SchemaSet(SCHEMA_DIR).modules() for t in m.types if t.crc_field]


@pytest.mark.parametrize("mod, t", CRC_TYPES, ids=lambda x: getattr(x, "class_name", ""))
def test_crc_from_is_the_offset_of_the_field_the_crc_starts_at(mod, t):
    fixed, offset = True, 0
    for f in t.fields:
        if f.name == t.crc_field.crc_from:
            break
        fixed &= f.fixed and not f.cond
        offset += f.width
    else:
        raise AssertionError(f"no field {t.crc_field.crc_from}")
    names = {i.name: i for i in t.value_instances}
    assert {"crc_from", "crc_to"} <= set(names)
    if fixed:  # else: the objects drawn below check it
        assert int(names["crc_from"].ksy["value"]) == offset


@pytest.mark.slow
@pytest.mark.parametrize("mod, t", CRC_TYPES, ids=lambda x: getattr(x, "class_name", ""))
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_range_is_the_parsers_on_drawn_objects(mod, t, data):
    module = importlib.import_module(f"kafkacodec.generated.{mod}")
    strategies = importlib.import_module(f"kafkacodec.generated.strategies.{mod}")
    obj = data.draw(getattr(strategies, mod)())
    encoded = obj.build()
    again = getattr(module, t.class_name).parse_all(encoded)
    assert (again.crc_from, again.crc_to) == (again.crc_start, again.crc_end)


def test_crc_to_is_where_the_parser_stops_the_crc_on_every_vector():
    checked = 0
    for path in sorted(VECTORS.rglob("*.bin")) + sorted(VECTORS.rglob("*.log")):
        data = path.read_bytes()
        try:
            log = KafkaLog.parse_all(data, verify=False)
        except DecodeError:
            continue
        at = 0
        for e in log.entries:
            if e.body is None:
                break
            b = e.body
            assert (at + b.crc_from, at + b.crc_to) == (b.crc_start, b.crc_end), path
            at = b.crc_end
            checked += 1
    assert checked > 100
