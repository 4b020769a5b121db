"""The judged mutations at any scale (tests/kafka/test_kafka_judges_mutations.py runs a
seeded subset in CI): N seeded mutations of the shared vectors (peers/bytewise.py), read by
Kafka's record classes of each release (harness/src/KafkaJudge.java) and by every reading
path of kafkacodec; every disagreement is written to ROOT/disagreements-RELEASE.txt with the
mutation's file kept, and the counts printed. Exit status 1 when any path disagrees.

    cd tests && ../.venv/bin/python kafka_mutation_drill.py --cases 200000 --seed 1

(`make judge-drill` runs that; it needs `make harness`.)"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from kafka_judge import columns_disagree, judge, objects_disagree, report

from peers.bytewise import FAMILIES, Mutator, write


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--root", type=Path, default=Path("../out/judge-drill"))
    ap.add_argument("--release", action="append", help="Kafka releases (default: 4.0.0 and 4.4.0)")
    ap.add_argument("--family", action="append", choices=FAMILIES, help="mutation families (default: all)")
    args = ap.parse_args(argv)
    releases = args.release or ["4.0.0", "4.4.0"]
    start = time.monotonic()
    drawn = Mutator(args.seed).draw(args.cases, tuple(args.family or FAMILIES))
    files = write(args.root / f"seed-{args.seed}", drawn)
    print(f"{len(files)} mutations (seed {args.seed}) in {args.root}, {time.monotonic() - start:.0f} s")
    failed = False
    for version in releases:
        theirs = judge(version, args.root / "build", files)
        refused = sum("error" in k for k in theirs)
        for path, bad in (("objects", objects_disagree(files, theirs)),
                          ("objects, generated parsers", objects_disagree(files, theirs, generated=True)),
                          ("columns", columns_disagree(files, theirs))):  # fmt: skip
            print(f"Kafka {version} ({refused} refused, {len(files) - refused} read): {path}: "
                  f"{len(bad)} disagree  [{time.monotonic() - start:.0f} s]")  # fmt: skip
            if bad:
                failed = True
                out = args.root / f"disagreements-{version}-{path.split(',')[0]}.txt"
                out.write_text(report(bad) + "\n" + "\n".join(map(str, bad)) + "\n")
                print(report(bad))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
