"""`kafkacodec replicas LOG_DIR...`: a cluster's disks compared replica by replica, offline:
per partition, the replica Kafka would serve it from after a restart on these disks and
why, what a consumer sees then (up to the high watermark), and each other replica in sync,
lagging, or diverged: the offset Kafka's truncation by leader epoch will cut it to when it
rejoins and the records that cut drops (kafkacodec.brokers). Then the directories that are
not a live replica (-future, -delete, -stray, unassigned, duplicates)."""

from __future__ import annotations

import argparse
import json
import sys

from ..console import CLEAN, PROBLEMS, columns, counted, out, safe
from .common import storage_arguments, target

HELP = "a cluster's disks: each partition's replicas in sync, lagging or diverged, and where Kafka will cut them"
EXAMPLE = "kafkacodec replicas /backup/broker-*/kafka-logs*"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("log_dirs", nargs="+", metavar="LOG_DIR",
                   help="the log.dirs of every broker (and controller) whose disks you hold: "
                   "each one's meta.properties says whose it is")  # fmt: skip
    p.add_argument("--topic", action="append", help="only this topic (repeatable)")
    p.add_argument("--steps", action="store_true",
                   help="also each follower's fetch exchange with the leader, step by step")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="one JSON object per partition, then one per directory set apart")  # fmt: skip
    storage_arguments(p)


def _status(r) -> str:
    if r.status == "diverged":
        span = f", offsets {r.dropped_offsets[0]}-{r.dropped_offsets[1]}" if r.dropped_offsets else ""
        text = (f"diverged: Kafka truncates it to {r.truncate_to} when it rejoins, dropping "
                f"{counted(r.dropped_records, 'record')} ({r.dropped_bytes} bytes{span})")  # fmt: skip
        return text + (f"; then {r.lag_offsets} behind" if r.lag_offsets else "")
    if r.status == "restarts":
        return (f"behind the leader's log start: Kafka empties it and fetches from {r.restart_at} "
                f"({counted(r.dropped_records, 'record')} dropped)")  # fmt: skip
    if r.status == "lagging":
        return f"lagging by {counted(r.lag_offsets, 'offset')} ({r.lag_bytes} bytes of the leader's log)"
    return r.status


def _lines(rep, steps: bool) -> list[str]:
    head = f"{rep.partition}: served from {rep.served_broker or '-'} ({rep.why})"
    lines = [head]
    if rep.visible is not None:
        start, hw = rep.visible
        above = (f"; {counted(rep.above_high_watermark, 'offset')} above it, once its in-sync followers "
                 "have fetched them" if rep.above_high_watermark else "")  # fmt: skip
        lines.append(f"  after a restart, consumers read offsets {start} to {hw - 1} (high watermark "
                     f"{hw}){above}" if hw > start else f"  after a restart, consumers read nothing "
                     f"yet (high watermark {hw}){above}")  # fmt: skip
    if rep.metadata is not None:
        m = rep.metadata
        lines.append(f"  metadata: leader {m['leader']} epoch {m['leader_epoch']} replicas "
                     f"{m['replicas']} isr {m['isr']}" + (f" elr {m['elr']}" if m.get("elr") else ""))  # fmt: skip
    if rep.missing_brokers:
        lines.append(f"  no disk here of broker {', '.join(map(str, rep.missing_brokers))}, which "
                     "holds a replica")  # fmt: skip
    titles = ("BROKER", "LOG-START", "LOG-END", "HIGH-WATERMARK", "EPOCH", "ISR", "STATUS")
    rows = []
    for r in rep.replicas:
        hw = "-" if r.recorded_high_watermark is None else str(r.high_watermark)
        isr = "-" if r.in_isr is None else ("yes" if r.in_isr else "no")
        epoch = "-" if r.latest_epoch is None else str(r.latest_epoch)
        known = r.status != "unreadable"
        rows.append([r.broker, str(r.log_start) if known else "-", str(r.log_end) if known else "-", hw, epoch,
                     isr, _status(r)])  # fmt: skip
    lines += ["  " + line for line in columns(titles, rows)]
    for r in rep.replicas:
        for problem in r.problems:
            lines.append(f"  {r.broker}: {problem}")
        if steps and r.steps:
            lines += [f"  {r.broker}: {s}" for s in r.steps]
    return lines


def run(args: argparse.Namespace) -> int:
    from ..brokers import compare_all, open_disks
    from ..log import open_log

    disks = open_disks([open_log(target(args, d)) for d in args.log_dirs], metadata=True)
    reports = compare_all(disks)
    if args.topic:
        wanted = set(args.topic)
        reports = [r for r in reports if r.topic in wanted]
    apart = sorted(disks.set_apart, key=lambda s: s.path)
    if args.json:
        for rep in reports:
            out(json.dumps(rep.to_dict()))
        for s in apart:
            out(json.dumps({"set_apart": s.to_dict()}))
    else:
        for rep in reports:
            for line in _lines(rep, args.steps):
                out(safe(line))
        if apart:
            out("not read as a partition:")
            for s in apart:
                out(safe(f"  {s.path} ({s.broker}): {s.kind}: {s.why}"))
    if disks.metadata_from is not None:
        copies = len(disks.partitions[("__cluster_metadata", 0)].replicas)
        print(f"cluster metadata read from {safe(disks.metadata_from.path)} ({disks.metadata_from.broker}; "
              f"the most advanced of {counted(copies, 'copy', 'copies')})", file=sys.stderr)  # fmt: skip
    states = [r.status for rep in reports for r in rep.replicas]
    diverged = sum(s in ("diverged", "restarts") for s in states)
    offline = sum(rep.offline for rep in reports)
    where = (f"{counted(len(disks.brokers), 'broker')}" if disks.brokers else "no broker identified")
    if disks.controllers:
        where += f" and {counted(len(disks.controllers), 'controller')}"
    print(f"{counted(len(reports), 'partition')} on {where} ({counted(len(disks.log_dirs), 'log dir')}): "
          f"{states.count('in sync')} in sync, {states.count('lagging')} lagging, {diverged} diverged"
          + (f", {offline} offline" if offline else "")
          + ("" if disks.metadata is not None else "; no __cluster_metadata among them: leaders chosen "
             "from the replicas' own files"), file=sys.stderr)  # fmt: skip
    for problem in disks.problems:
        print(f"kafkacodec replicas: {safe(problem)}", file=sys.stderr)
    return PROBLEMS if diverged or offline or disks.problems else CLEAN
