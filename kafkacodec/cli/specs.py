"""`kafkacodec specs`: Kafka's JSON message specs (the internal topics' records).

- `specs diff OLD NEW`: what changed between two directories of specs (two Kafka
  releases), and which changes break a reader generated from the older ones
  (kafkacodec.generator.specs_diff). Exit codes as verify's: 0 when nothing breaks, 1 when
  something does, 2 when the specs could not be read.
- `specs import DIR`: one Kaitai schema per spec that describes stored bytes, plus the framing of each internal topic
  (kafkacodec.generator.specs_import), into schemas/internal/; then generated/ again.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..console import out, safe
from .common import local_path

HELP = "Kafka's JSON message specs: compare two releases' (diff), make the codecs (import)"
DIFF_HELP = "compare two directories of specs: what changed, what breaks older readers"
IMPORT_HELP = "turn a directory of specs into Kaitai schemas and regenerate the codecs"
EXAMPLE = "kafkacodec specs diff kafka_2.13-4.0.0/libs kafka_2.13-4.4.0/libs   # two Kafka releases' specs"


def define(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True)
    d = sub.add_parser("diff", help=DIFF_HELP, description=DIFF_HELP)
    d.add_argument(
        "old", type=local_path, metavar="OLD",
        help="a directory of specs (*.json, searched below it), a Kafka release's libs/ "
        "(the specs inside its kafka-*.jar), or one jar",
    )
    d.add_argument("new", type=local_path, metavar="NEW",
                   help="the newer release's directory of specs")  # fmt: skip
    d.add_argument("--json", action="store_true", help="the report as one JSON object")
    i = sub.add_parser("import", help=IMPORT_HELP, description=IMPORT_HELP)
    i.add_argument(
        "specs", type=local_path, metavar="DIR",
        help="a Kafka source tree (or a directory of its specs, searched below it), or a "
        "Kafka release's libs/ (the specs inside its kafka-*.jar); the folder or jar each "
        "spec is in (group-coordinator, metadata, ...) says its topic",
    )  # fmt: skip
    i.add_argument("--label", help="the name the schemas give the specs (default: DIR's name)")
    i.add_argument(
        "--schemas", type=local_path, metavar="OUT",
        help="where the schemas go (default: the project's schemas/internal/); the codecs "
        "are generated again only for the project's own schemas",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if args.action == "import":
        return _import(args)
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


def _import(args: argparse.Namespace) -> int:
    try:
        from kafkacodec.generator import render
        from kafkacodec.generator.specs import SpecError
        from kafkacodec.generator.specs_import import import_specs, write_schemas
    except ImportError as err:
        print(f"kafkacodec specs: the generator needs its extra: pip install "
              f"'kafkacodec[generator]' ({err})", file=sys.stderr)  # fmt: skip
        return 2
    label = args.label or args.specs.resolve().name
    try:
        result = import_specs(args.specs, label)
    except SpecError as err:
        print(f"kafkacodec specs: could not import: {safe(str(err))}", file=sys.stderr)
        return 2
    own = args.schemas is None
    target = render.SCHEMA_DIR / "internal" if own else args.schemas
    changed = write_schemas(result, target)
    out(f"{len(result.files)} schemas from the specs labelled {label} in {target}: "
        f"{len(changed)} changed")  # fmt: skip
    for name, why in result.skipped:
        out(f"  skipped {name}: {why}")
    if own:
        regenerated = render.generate()
        out(f"generated/: {len(regenerated)} files changed")
    return 0
