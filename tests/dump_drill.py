"""The damaged-payload dump drill: for each seed, the internal topics' payloads damaged
(internal_segments.write_damaged_topics), every release's kafka-dump-log
(kafka_broker.DUMP_RELEASES, or --releases) and `kafkacodec dump --kafka-version` of it over
them, line for line (kafka_broker.same_dumps). CI runs seed 1
(tests/kafka/test_kafka_dump_releases.py); `make dump-drill` runs many.

    python dump_drill.py --seeds 1-20 [--releases 4.0.0,4.4.0] --root ../out/dump-drill
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "kafka"))

from internal_segments import write_damaged_topics  # noqa: E402
from kafka_broker import DUMP_RELEASES, same_dumps  # noqa: E402
from test_kafka_dump_releases import damaged_runs  # noqa: E402


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--seeds", default="1-20", help="a seed or a range of them (1-20)")
    p.add_argument("--releases", default=",".join(DUMP_RELEASES))
    p.add_argument("--root", type=Path, default=Path("../out/dump-drill"))
    args = p.parse_args()
    failed = 0
    for seed in _seeds(args.seeds):
        root = args.root / f"seed-{seed}"
        shutil.rmtree(root, ignore_errors=True)
        bulk, single = write_damaged_topics(root / "data", seed)
        for release in args.releases.split(","):
            runs = damaged_runs(bulk, single, release)
            try:
                same_dumps(release, runs, root / "build")
                print(f"seed {seed} Kafka {release}: {len(runs)} dumps the same", flush=True)
            except AssertionError as err:
                failed += 1
                print(f"seed {seed} Kafka {release}: DIFFERENT\n{str(err)[:3000]}", flush=True)
    print(f"{failed} (seed, release) pair(s) differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
