"""Every spec's generated codec at every version it has: objects drawn by the generated
Hypothesis strategies build, parse back and build to the same bytes; the Construct
definition reads those bytes the same; Kafka's JSON of them is valid JSON."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkacodec.internal import DEFAULT
from kafkacodec.internal.codecs import _programs, in_versions
from kafkacodec.internal.kafka_json import to_json

sys.path.insert(0, str(Path(__file__).parents[1] / "generator"))  # differential.py
from differential import camel, construct_parse_all, ours_tree, project  # noqa: E402

pytestmark = pytest.mark.slow


def cases():
    out = []
    for spec in DEFAULT.specs():
        sid = DEFAULT.schema_of(spec)
        cls = DEFAULT.top(sid)
        valid = cls.MESSAGE["validVersions"]
        lo, _, hi = valid.partition("-")
        for v in range(int(lo), int(hi or lo) + 1):
            if in_versions(valid, v):
                out.append(pytest.param(sid, v, id=f"{spec}-v{v}"))
    return out


@pytest.mark.parametrize("schema_id, version", cases())
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_version_round_trips(schema_id, version, data):
    strategies = importlib.import_module(f"kafkacodec.generated.strategies.{schema_id}")
    cls = DEFAULT.top(schema_id)
    obj = data.draw(getattr(strategies, schema_id)(version))
    encoded = obj.build()
    again = cls.parse_all(encoded, version)
    assert again.build() == encoded
    cons = getattr(
        importlib.import_module(f"kafkacodec.generated.construct.{schema_id}"), camel(schema_id)
    )
    mine = ours_tree(again)
    assert project(construct_parse_all(cons(version), encoded), mine) == mine
    program = DEFAULT.program(cls)
    if program is not None:  # the native interpreter reads the same, or leaves it to Python
        done = _programs.parse(program, encoded, 0, len(encoded), version)
        if done is not None:
            assert ours_tree(done[0]) == mine and done[1] == len(encoded)
    json.loads(to_json(again, version))  # (drawn text that is not UTF-8: U+FFFD, as in Kafka)
