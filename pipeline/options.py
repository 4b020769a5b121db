"""The options of a read (the data source's, as Spark passes them: strings) and the
partitions they name; the options are listed in source.py."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from kafkacodec import units
from kafkacodec.log import LogDirs, Partition, open_log
from kafkacodec.runtime.errors import KafkacodecError, LogError
from kafkacodec.storage import ObjectPath, StoragePath, as_path, is_url
from kafkacodec.storage.tiered import KeyRing

from .request import flag, isolation, normalized
from .scan import PipelineError

DEFAULT_SPLIT_SIZE = 128 << 20
_log = logging.getLogger("kafkacodec.pipeline")


def parse_size(name: str, raw) -> int:
    """A byte size option: 1048576, 64k, 128m, 1g."""
    try:
        return units.parse_size(raw)
    except ValueError as err:
        raise PipelineError(f"option {name}: {err}") from None


@dataclass(frozen=True)
class Options:
    verify_crc: bool = True
    include_control: bool = False
    read_committed: bool = False
    on_corrupt: str = "fail"
    split_size: int = DEFAULT_SPLIT_SIZE
    #: A tiered-storage root whose remote segments join the local partitions read (option
    #: tiered), and the object-store options (storage.*, their prefix taken off).
    tiered: str | None = None
    storage: tuple[tuple[str, str], ...] = ()
    #: Spark's includeHeaders: the headers column is there only when true, as in Spark's
    #: kafka source
    include_headers: bool = False
    #: the batch metadata columns after Spark's (base_offset ... position): include_metadata
    include_metadata: bool = False
    #: Spark's failOnDataLoss: offsets deleted before they were read stop the read
    fail_on_data_loss: bool = True

    @property
    def storage_options(self) -> dict:
        return dict(self.storage)

    @classmethod
    def parse(cls, raw: dict) -> Options:
        options = normalized(raw)
        on_corrupt = str(options.get("on_corrupt", "fail")).lower()
        if on_corrupt not in ("fail", "skip", "report"):
            raise PipelineError(f"option on_corrupt: fail, skip or report, got {on_corrupt!r}")
        split = parse_size("split_size", options.get("split_size", DEFAULT_SPLIT_SIZE))
        storage = tuple(sorted((k, str(v)) for k, v in storage_options(options).items()))
        tiered = options.get("tiered") or None
        if tiered is not None:
            tiered = str(resolve(tiered, dict(storage)))
        return cls(flag(options, "verify_crc", True), flag(options, "include_control", False),
                   isolation(options) == "read_committed", on_corrupt, split, tiered, storage,
                   flag(options, "includeheaders", False), flag(options, "include_metadata", False),
                   flag(options, "failondataloss", True))  # fmt: skip


#: The prefix of the data source options that configure an object store (storage.region,
#: storage.endpoint_override, storage.retries, ...: storage/objects.py).
STORAGE_PREFIX = "storage."


def storage_options(options: dict) -> dict:
    """The object-store options among a read's options, without their prefix."""
    return {k[len(STORAGE_PREFIX) :]: v for k, v in options.items() if k.startswith(STORAGE_PREFIX)}


def input_paths(options: dict) -> list[StoragePath]:
    """The paths given to load(): one (option path) or several (option paths, a JSON list),
    local or object-store URLs (configured by the storage.* options)."""
    raw = []
    if options.get("paths"):
        value = options["paths"]
        try:
            raw = json.loads(value) if value.lstrip().startswith("[") else value.split(",")
        except json.JSONDecodeError:
            raise PipelineError(f"option paths: not a JSON list: {value!r}") from None
    elif options.get("path"):
        raw = [options["path"]]
    if not raw:
        raise PipelineError("no path: use load(path), a partition directory or a log.dirs")
    storage = storage_options(options)
    return [resolve(p, storage) for p in raw]


def resolve(path, storage: dict | None = None) -> StoragePath:
    """A path as every process of a job must name it: absolute, resolved where the driver
    runs (executors run in directories of their own), a file:// URL as its path; an object
    store's URL as an ObjectPath with the storage options (it travels to the executors
    with them)."""
    if isinstance(path, ObjectPath):
        return path
    text = str(path)
    if text.startswith("file://"):
        text = text[len("file://") :]
    elif is_url(text):
        try:
            return as_path(text, storage)
        except LogError as err:
            raise PipelineError(str(err)) from None
    elif "://" in text:
        raise PipelineError(f"{text}: not a path nor an object store URL (s3, gs, abfs, abfss, "
                            "hdfs); other schemes are not read")  # fmt: skip
    return Path(os.path.abspath(text))


def partitions_of(paths: list[StoragePath], *, empty_ok: bool = False,
                  opts: Options | None = None) -> list[Partition]:  # fmt: skip
    """The partition directories at or below paths (tiered-storage layouts too, and with
    opts.tiered the remote segments joined to local partitions). A path with no Kafka data
    is an error unless empty_ok (a stream waits for data to arrive), or unless it is a
    broker's log directory (its meta.properties) among others that hold data: a JBOD
    log.dir a broker has not used yet is part of a cluster's disks, not a wrong path."""
    storage = opts.storage_options if opts is not None else {}
    logs = []
    for path in paths:
        try:
            log = open_log(path, keys=KeyRing(storage), options=storage,
                           tiered=opts.tiered if opts is not None else None)  # fmt: skip
        except LogError as err:
            raise PipelineError(f"{path}: {err}") from None
        found = log.partitions if isinstance(log, LogDirs) else [log]
        broker_dir = isinstance(log, LogDirs) and (log.path / "meta.properties").exists()
        if not empty_ok and not broker_dir and not any(p.segments for p in found):
            raise PipelineError(f"{path}: no Kafka data (no .log segments in it or below it)")
        logs.append(log)
    out = served_partitions(logs)
    for p in out:
        _say_what_is_missing(p)
    if not empty_ok and paths and not any(p.segments for p in out):
        where = ", ".join(map(str, paths))
        raise PipelineError(f"{where}: no Kafka data (no .log segments in {'it' if len(paths) == 1 else 'any of them'} "
                            "or below)")  # fmt: skip
    return out


def served_partitions(logs: list) -> list[Partition]:
    """Each partition once, from the replica Kafka would serve it from (kafkacodec.brokers:
    the disks of several brokers give several replicas of a partition), the directories
    that are no live replica (-future, -delete, -stray, unassigned) left out; each choice
    among replicas and each directory left out said on the driver."""
    from kafkacodec.brokers import open_disks

    try:
        disks = open_disks(logs)
    except KafkacodecError as err:
        raise PipelineError(str(err)) from None
    for s in disks.set_apart:
        _log.warning(f"{s.path} ({s.broker}): not read: {s.kind}: {s.why}")
    for problem in disks.problems:
        _log.warning(problem)
    for pr in disks.partitions.values():
        if len(pr.replicas) > 1 and pr.served is not None:
            _log.info(f"{pr.name}: {len(pr.replicas)} replicas; read from {pr.served.broker}'s ({pr.why})")
    return disks.served()


def _say_what_is_missing(p: Partition) -> None:
    """Offsets the log holds by its broker's records that no segment read holds (remote
    segments not given, or not under the tiered-storage root): said on the driver, as the
    command line says them, never skipped in silence."""
    from kafkacodec.internal.remote import learn_remote_extent

    learn_remote_extent(p)
    for gap in p.unreadable():
        _log.warning(f"{p.path}: {p.missing_text(gap)}; they are left out")
