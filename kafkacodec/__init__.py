"""kafkacodec: Apache Kafka's record formats, from Kaitai Struct schemas.

Reading: ``iter_batches(data)`` walks batches of any magic without decoding records;
``batch.records()`` decodes them. Writing: ``build_batch`` (v2), ``build_message_set``
(magic 0 and 1), ``build_control_batch`` (transaction markers).

The facade is imported on first use, so that ``kafkacodec generate`` runs even when
generated/ is stale or broken.
"""

from __future__ import annotations

import importlib

from .runtime.errors import *  # noqa: F403
from .runtime.errors import __all__ as _errors_all

__version__ = "0.1.0"

_LAZY = {
    "iter_batches": "batches", "BatchIterator": "batches", "RecordBatch": "batches",
    "LegacyBatch": "batches", "Record": "batches", "ControlInfo": "batches",
    "build_batch": "builders", "build_message_set": "builders",
    "build_control_batch": "builders", "control_record": "builders",
}  # fmt: skip
__all__ = [*_LAZY, *_errors_all]


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".records.{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kafkacodec' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
