"""`make demo`: write a sample log.dirs with the project's writer, then run the command line
over it as an operator would: verify everything, dump a segment, search, read records;
then the Spark jobs on an embedded local Spark: verify, stats (with the HTML report), and
an export of the committed records to Parquet."""

from __future__ import annotations

import shlex
import shutil
import sys

from . import cli
from .cli.common import read_file
from .dump import dump_text
from .sample import (
    write_cluster_disks,
    write_consumer_offsets,
    write_damaged_copy,
    write_sample_log_dirs,
)


def run(*argv: str) -> int:
    print(f"\n$ kafkacodec {shlex.join(argv)}", flush=True)
    return cli.main(list(argv))


def main(out: str = "out/logdirs") -> int:
    root = write_sample_log_dirs(out)
    parts = sorted(p.name for p in root.iterdir())
    segs = sum(1 for _ in root.glob("*/*.log"))
    print(f"wrote {root}: {len(parts)} partitions ({', '.join(parts)}), {segs} segments")
    orders = root / "orders-0"
    # what the README's repair and internal-topic examples read: a damaged copy of
    # orders-0, and a __consumer_offsets partition (both written anew)
    for extra in ("damaged", "consumer-offsets", "cluster"):
        shutil.rmtree(root.parent / extra, ignore_errors=True)
    damaged = write_damaged_copy(orders, root.parent / "damaged")
    offsets = write_consumer_offsets(root.parent / "consumer-offsets")
    print(f"wrote {damaged} (two batches damaged) and {offsets} (300 offset commits)")
    # what the cluster page's examples read: three brokers' disks after an unclean election
    cluster = write_cluster_disks(root.parent / "cluster", scenario="unclean", set_apart=True)
    print(f"wrote {cluster['root']}: the disks of 3 brokers after an unclean leader election")
    first = sorted(orders.glob("*.log"))[0]
    status = run("verify", "--quiet", str(root))
    print(f"\n$ kafkacodec dump --deep-iteration {first} | head -5")
    for _, line in zip(range(5), dump_text(first, read_file(first), deep=True)):
        print(line)
    status |= run("lookup", str(orders), "--offset", "1500")
    status |= run("lookup", str(orders), "--timestamp", "1700000004000")
    status |= run("records", str(orders), "--from-offset", "30", "--limit", "4", "--read-committed")
    status |= run("records", str(root / "legacy-events-0"), "--limit", "2")
    status |= run("recover", "--quiet", str(orders))
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print(
            "\n(pyspark is not installed: the Spark jobs are left out; pip install 'kafkacodec[pipeline]')"
        )
    else:
        status |= run("spark", "verify", str(root))
        status |= run("spark", "stats", str(root), "--html", str(root.parent / "report.html"))
        status |= run("spark", "export", str(root), str(root.parent / "parquet"), "--overwrite",
                      "--isolation", "read_committed")  # fmt: skip
    print("\ndemo " + ("finished: every check passed" if status == 0 else "FAILED"))
    return status


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
