"""`kafkacodec corpus`: a test corpus for any Kafka parser (kafkacodec.corpus)."""

from __future__ import annotations

import argparse
from collections import Counter

from ..console import out
from ..runtime.errors import KafkacodecError, RefusedError
from ..units import integer
from .common import local_path

HELP = "write a test corpus for any Kafka parser: valid and damaged images with the expected values"
EXAMPLE = "kafkacodec corpus /tmp/kafka-corpus --count 20 --seed 7"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", metavar="OUT", type=local_path, help="a new directory (refused if not empty)")
    p.add_argument("--count", type=integer(1), default=12, metavar="N",
                   help="objects drawn per schema (default 12)")  # fmt: skip
    p.add_argument("--internal-count", type=integer(0), default=3, metavar="N",
                   help="per version of each schema made from Kafka's specs (default 3)")  # fmt: skip
    p.add_argument("--seed", type=integer(), default=0, metavar="S",
                   help="the same seed writes the same corpus (default 0)")  # fmt: skip
    p.add_argument("--no-internal", action="store_true",
                   help="only the log and index formats, not Kafka's internal-topic payloads")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    try:
        from ..corpus import write_corpus
    except ImportError as err:  # hypothesis draws the objects
        raise KafkacodecError(f"kafkacodec corpus needs the dev extra ({err.name} is missing): "
                              "pip install 'kafkacodec[dev]'") from None  # fmt: skip
    try:
        manifest = write_corpus(args.out, count=args.count, internal_count=args.internal_count,
                                seed=args.seed, internal=not args.no_internal)  # fmt: skip
    except FileExistsError:
        raise RefusedError(args.out, "is not empty: corpus writes a new directory") from None
    cases = manifest["cases"]
    kinds = Counter(
        (c["kind"], "ok" if "ok" in c["expect"] else c["expect"]["error"]["family"]) for c in cases
    )
    schemas = len({c["schema"] for c in cases})
    out(f"wrote {args.out}: {len(cases)} cases over {schemas} schemas "
        f"({', '.join(f'{k} {v}: {n}' for (k, v), n in sorted(kinds.items()))}); "
        f"expected values in {args.out / 'MANIFEST.json'}")  # fmt: skip
    return 0
