"""`kafkacodec specs diff OLD NEW`: what changed between two directories of Kafka's JSON
message specs (two Kafka releases), and which changes break a reader generated from the
older ones (kafkacodec.generator.specs_diff). Exit codes as verify's: 0 when nothing
breaks, 1 when something does, 2 when the specs could not be read."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..console import out, safe

HELP = (
    "compare two directories of Kafka's JSON message specs: what changed, what breaks older readers"
)
EXAMPLE = "kafkacodec specs diff kafka-3.9/ kafka-4.1/      # the specs of two Kafka releases"


def define(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True)
    d = sub.add_parser("diff", help=HELP, description=HELP)
    d.add_argument(
        "old", type=Path, metavar="OLD", help="a directory of specs (*.json, searched below it)"
    )
    d.add_argument("new", type=Path, metavar="NEW")
    d.add_argument("--json", action="store_true", help="the report as one JSON object")


def run(args: argparse.Namespace) -> int:
    try:
        from kafkacodec.generator.specs import SpecError, load_specs
        from kafkacodec.generator.specs_diff import diff_specs
    except ImportError as err:
        print(f"kafkacodec specs: the generator needs its extra: pip install "
              f"'kafkacodec[generator]' ({err})", file=sys.stderr)  # fmt: skip
        return 2
    try:
        old, new = load_specs(args.old), load_specs(args.new)
    except SpecError as err:
        print(f"kafkacodec specs: could not compare: {safe(str(err))}", file=sys.stderr)
        return 2
    report = diff_specs(old, new, old_label=str(args.old), new_label=str(args.new))
    if args.json:
        out(json.dumps(report.to_dict()))
    else:
        for line in report.lines():
            out(line)
    return 1 if report.breaking else 0
