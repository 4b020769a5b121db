"""What the commands share: exit codes, and opening what a path names (printing is
kafkacodec.console)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..console import safe
from ..runtime.errors import KafkacodecError

#: Exit codes of verify and recover (README: "Exit codes").
CLEAN, PROBLEMS, UNCHECKED = 0, 1, 2


def expand(paths, *, index_only: bool = False) -> list[Path]:
    """Files named on the command line, and the segment files of each directory named
    (only its index files when `index_only`)."""
    from ..runtime.errors import NotASegmentError

    wanted = {".index", ".timeindex", ".txnindex"} | (set() if index_only else {".log", ".kafka"})
    found = []
    for p in map(Path, paths):
        if p.is_dir():
            found.extend(sorted(c for c in p.iterdir() if c.suffix in wanted))
        elif p.exists():
            found.append(p)
        else:
            raise NotASegmentError(p, "no such file or directory")
    return found


def read_file(path: Path):
    from ..log.index import map_file
    from ..runtime.errors import NotASegmentError

    data = map_file(path)[0]
    if data is None:
        raise NotASegmentError(path, "no such file")
    return data


def open_partition(path):
    """The partition at `path`, each of its segments checked to start like a Kafka segment
    (a file of something else gets named, rather than read as an empty segment)."""
    from ..log import Partition

    p = Partition(path)
    for seg in p.segments:
        seg.sniff()
    return p


def open_kafka07(path):
    """A Kafka 0.7 partition (.kafka files, no .log), or None."""
    from ..log.kafka07 import Kafka07Partition

    p = Path(path)
    if not p.is_dir() or any(c.suffix == ".log" for c in p.iterdir()):
        return None
    try:
        return Kafka07Partition(p)
    except KafkacodecError:
        return None


def notes(p) -> None:
    """What the reads said about indexes they could not trust (on stderr)."""
    for seg in p.segments:
        for note in seg.notes:
            print(f"kafkacodec: note: {safe(note)}", file=sys.stderr)
