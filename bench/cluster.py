"""Reading a cluster's disks against reading one broker's: the same records, once from three
brokers' log.dirs (replication factor 3: every partition three times on disk, one replica
of each read, chosen by kafkacodec.brokers) and once from one log.dirs holding one copy of
each partition (the served replicas, copied). The cluster's read may cost the planning
(meta.properties, the metadata log folded, a replica chosen per partition) and nothing
else: the goal is within 10% of the one broker's (issue 56).

    python -m bench.cluster [--records N] [--partitions P] [--repeat R]

Each repetition times, in turn (alternating which goes first): opening and planning
(kafkacodec.log.open_log + kafkacodec.brokers.open_disks / the log.dirs' partitions), then
every record of every partition read with CRCs checked (Partition.read_batches), and the
Spark path's planning alone (pipeline.options.partitions_of). Medians go to
bench/results/cluster.json.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench import save
from kafkacodec.brokers import open_disks
from kafkacodec.log import open_log
from kafkacodec.sample import write_cluster_disks


def _read(partitions) -> int:
    n = 0
    for p in partitions:
        for _seg, _batch, records in p.read_batches(verify_crc=True):
            n += len(records)
    return n


def cluster_read(dirs: list[Path]) -> tuple[float, float, int]:
    t = time.perf_counter()
    served = open_disks([open_log(d) for d in dirs]).served()
    plan = time.perf_counter() - t
    n = _read(served)
    return plan, time.perf_counter() - t, n


def broker_read(root: Path) -> tuple[float, float, int]:
    t = time.perf_counter()
    parts = open_log(root).partitions
    plan = time.perf_counter() - t
    n = _read(parts)
    return plan, time.perf_counter() - t, n


def spark_planning(paths: list[Path]) -> float:
    from pipeline.options import partitions_of

    t = time.perf_counter()
    partitions_of(paths)
    return time.perf_counter() - t


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=250_000, help="records per partition")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    try:
        t = time.perf_counter()
        written = write_cluster_disks(work / "cluster", topics=(("sample", args.partitions),),
                                      records=args.records, batch_records=50, codecs=("none", "lz4"),
                                      record_bytes=100)  # fmt: skip
        wrote = time.perf_counter() - t
        dirs = [Path(d) for ds in written["log_dirs"].values() for d in ds]
        single = work / "one-broker"
        single.mkdir()
        for p in open_disks([open_log(d) for d in dirs]).served():  # (the metadata log's copy too)
            shutil.copytree(p.path, single / p.path.name)
        runs: dict[str, list] = {"cluster": [], "broker": [], "spark_plan_cluster": [], "spark_plan_broker": []}
        for i in range(args.repeat):
            order = [("cluster", lambda: cluster_read(dirs)), ("broker", lambda: broker_read(single))]
            for name, fn in order if i % 2 == 0 else order[::-1]:
                runs[name].append(fn())
            runs["spark_plan_cluster"].append(spark_planning(dirs))
            runs["spark_plan_broker"].append(spark_planning([single]))
        counts = {r[2] for name in ("cluster", "broker") for r in runs[name]}
        assert len(counts) == 1, f"the two reads read different numbers of records: {counts}"
        med = {name: {"plan_s": statistics.median(r[0] for r in runs[name]),
                      "total_s": statistics.median(r[1] for r in runs[name])}
               for name in ("cluster", "broker")}  # fmt: skip
        records = counts.pop()
        res = {
            "records": records, "partitions": args.partitions, "replicas": 3, "write_s": wrote,
            "bytes_on_disk_cluster": sum(f.stat().st_size for d in dirs for f in d.rglob("*") if f.is_file()),
            "cluster": med["cluster"], "broker": med["broker"],
            "records_per_s_cluster": records / med["cluster"]["total_s"],
            "records_per_s_broker": records / med["broker"]["total_s"],
            "ratio_total": med["cluster"]["total_s"] / med["broker"]["total_s"],
            "spark_plan_cluster_s": statistics.median(runs["spark_plan_cluster"]),
            "spark_plan_broker_s": statistics.median(runs["spark_plan_broker"]),
            "repeat": args.repeat,
        }  # fmt: skip
        save("cluster", res)
        print(f"{records} records, {args.partitions} partitions x 3 replicas: cluster read "
              f"{med['cluster']['total_s']:.3f} s (planning {med['cluster']['plan_s'] * 1000:.1f} ms), one broker's "
              f"{med['broker']['total_s']:.3f} s (planning {med['broker']['plan_s'] * 1000:.1f} ms): "
              f"ratio {res['ratio_total']:.3f}; Spark planning {res['spark_plan_cluster_s'] * 1000:.1f} ms "
              f"vs {res['spark_plan_broker_s'] * 1000:.1f} ms")  # fmt: skip
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
