"""What a read of the kafkacodec format asks for, in the terms of Spark's own Kafka source
(org.apache.spark.sql.kafka010.KafkaSourceProvider): which partitions (assign, subscribe,
subscribePattern), from and to which offsets (startingOffsets / endingOffsets, their
ByTimestamp forms, startingTimestamp / endingTimestamp), how the read is cut into input
partitions (minPartitions, maxRecordsPerPartition) and, for a stream, how much each
micro-batch reads. The offsets are resolved against the log directories as Spark's source
resolves them against a broker (KafkaOffsetReaderAdmin): earliest is the partition's log
start offset, latest the offset after its last complete batch (read_committed: its last
stable offset), a timestamp Kafka's ListOffsets answer read from the files
(Partition.list_offsets).

A job written for a broker runs on log.dirs by changing the format name and giving a path:
the options of a broker connection (kafka.bootstrap.servers, kafka.security.protocol,
kafkaConsumer.pollTimeoutMs, groupIdPrefix, ...) are accepted and named in one warning as
ignored; those Spark's source refuses (kafka.auto.offset.reset, the deserializers,
kafka.enable.auto.commit, kafka.interceptor.classes) are refused with Spark's reason. The
option names are case-insensitive, as Spark's are.

kafkacodec's earlier names stay: topics (subscribe), isolation (kafka.isolation.level),
starting_offsets, max_offsets_per_trigger, fail_on_data_loss (their Spark names); and
partitions, starting_offset, ending_offset (the same offsets for every partition) and
starting_timestamp (a filter on each record's timestamp, where Spark's startingTimestamp
is where reading starts), which Spark's source has no name for.
"""

from __future__ import annotations

import json
import logging
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from kafkacodec.internal.topics import UNLISTED
from kafkacodec.log import Partition

from .meter import OPTION as METER
from .scan import PipelineError, complete_end

_log = logging.getLogger("kafkacodec.pipeline")

#: The resolution of an offset in Spark's JSON (KafkaOffsetRangeLimit.EARLIEST / LATEST).
EARLIEST, LATEST = -2, -1

#: Spark's names of kafkacodec's earlier options, where they mean the same thing.
ALIASES = {
    "topics": "subscribe",
    "isolation": "kafka.isolation.level",
    "starting_offsets": "startingoffsets",
    "max_offsets_per_trigger": "maxoffsetspertrigger",
    "fail_on_data_loss": "failondataloss",
}

#: Options of a broker connection, a consumer group or an offset fetch's retries, which
#: mean nothing to files: accepted (a job written for a broker runs unchanged) and named as
#: ignored. Every kafka.* option but kafka.isolation.level is one too.
CONNECTION = frozenset({
    "kafkaconsumer.polltimeoutms", "fetchoffset.numretries", "fetchoffset.retryintervalms",
    "groupidprefix",
})  # fmt: skip

#: kafka.* options Spark's source refuses (KafkaSourceProvider.validateGeneralOptions), with
#: its reason.
REFUSED = {
    "kafka.auto.offset.reset": "set the source option startingOffsets to earliest or latest "
    "to say where to start",
    "kafka.key.deserializer": "keys are bytes (the key column); deserialize them with "
    "DataFrame operations",
    "kafka.value.deserializer": "values are bytes (the value column); deserialize them with "
    "DataFrame operations",
    "kafka.enable.auto.commit": "a read commits no offset",
    "kafka.interceptor.classes": "interceptors can change the records",
}

@dataclass(frozen=True)
class Option:
    """An option of the kafkacodec data sources: its names (as Spark spells them), what it
    takes and means on files, and whose it is ("spark": Spark's kafka source's, with its
    meaning; "kafkacodec": kafkacodec's own). The table below is what the parsers accept
    and what the documentation's option reference lists (options_reference)."""

    names: tuple[str, ...]
    values: str
    meaning: str
    origin: str = "spark"


#: Every option the records format takes, besides storage.* and kafka.* (KNOWN, lower case,
#: is read from it; the documentation's tables are written from it).
OPTIONS = (
    Option(("assign", "subscribe", "subscribePattern"), "exactly one, as in Spark",
           "the same: `subscribePattern` keeps a topic whose name the pattern is found in, anywhere "
           "(Spark's `findFirstIn`; anchor it with `^...$`), a `subscribe` topic the log.dirs do not "
           "hold is an error (Spark's source fails on it); none given reads every topic. `topics` is "
           "the earlier name of `subscribe`; `partitions` (numbers) narrows any of them"),
    Option(("startingOffsets",), "`earliest` (batch default), `latest` (stream default), JSON per partition "
           "with `-2` / `-1`",
           "the same: earliest is the log start offset (its checkpoint's, moved by retention and "
           "DeleteRecords), latest the end of the last complete batch, or the last stable offset with "
           "`read_committed`. JSON must name every partition read, as Spark requires"),
    Option(("endingOffsets",), "`latest` (default), JSON", "the same (batch only)"),
    Option(("startingTimestamp", "endingTimestamp", "startingOffsetsByTimestamp", "endingOffsetsByTimestamp"),
           "ms since the epoch; JSON per partition",
           "the same: each partition starts (ends) at Kafka's ListOffsets answer for the timestamp, "
           "read from the `.timeindex` and the batches"),
    Option(("startingOffsetsByTimestampStrategy",), "`error` (default), `latest`", "the same"),
    Option(("includeHeaders",), "`false` (default), `true`", "the same: no `headers` column unless true"),
    Option(("failOnDataLoss",), "`true` (default), `false`",
           "the same: offsets deleted before they were read, an end past a partition's end (Spark's "
           "consumer fails there too), are errors; `false` warns and goes on"),
    Option(("minPartitions", "maxRecordsPerPartition"), "a positive number",
           "the same cut of offset ranges (Spark's KafkaOffsetRangeCalculator), then `split_size`"),
    Option(("maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay"), "numbers; a duration",
           "the same (streams): shares in proportion to what each partition has waiting, as Spark's "
           "rateLimit"),
    Option(("kafka.isolation.level",), "`read_uncommitted` (default), `read_committed`",
           "the same; `isolation` is its earlier name"),
    Option(("path", "paths"), "a path or URL; a JSON list of them",
           "what `load()` reads: a partition directory or a log.dirs, local or an object store's URL, "
           "or a tiered-storage partition or root", "kafkacodec"),
    Option(("verify_crc",), "`true` (default), `false`", "check every batch's CRC", "kafkacodec"),
    Option(("include_control",), "`false` (default), `true`",
           "`false`: transaction markers are left out", "kafkacodec"),
    Option(("include_metadata",), "`false` (default), `true`",
           "`true` adds the batch metadata columns after Spark's", "kafkacodec"),
    Option(("on_corrupt",), "`fail` (default), `skip`, `report`",
           "`fail`: stop, naming file and byte. `skip`: leave out a batch that does not decode, or the "
           "rest of a segment after damage that stops the walk, with a warning. `report`: the same "
           "silently; `kafkacodec_problems` lists it", "kafkacodec"),
    Option(("split_size",), "`128m` (default); `0` never cuts a segment",
           "segments above it are read as several input partitions, cut at indexed batch boundaries",
           "kafkacodec"),
    Option(("partitions",), "comma-separated partition numbers (default: all)",
           "only these partitions of the topics read", "kafkacodec"),
    Option(("starting_offset", "ending_offset"), "offsets",
           "the same first (inclusive) and last (exclusive) offset in every partition", "kafkacodec"),
    Option(("starting_timestamp",), "ms since the epoch",
           "only records with a timestamp at or after it (magic 0 records have none and are left out): "
           "a filter, where Spark's `startingTimestamp` says where reading starts", "kafkacodec"),
    Option(("tiered",), "a tiered-storage root",
           "its remote segments join the local partitions `load()` names, read as Kafka serves them",
           "kafkacodec"),
)  # fmt: skip

#: Every option the records format knows (lower case), besides storage.* and kafka.*: the
#: table's, the earlier names, and the fetch meter the jobs pass to their own reads.
KNOWN = frozenset({*(n.lower() for o in OPTIONS for n in o.names), METER, *ALIASES})


def options_reference() -> str:
    """The documentation's reference of the data sources' options (Markdown), written from
    the table the parsers read (OPTIONS, ALIASES, CONNECTION, REFUSED)."""

    def names(o: Option) -> str:
        return ", ".join(f"`{n}`" for n in o.names)

    out = [
        "# Spark data source options",
        "",
        "Written from the table the data sources parse their options with",
        "(`kafkacodec.pipeline.request.OPTIONS`): the site's page and `kafkacodec spark",
        "options` print it. Names are case-insensitive, as in Spark.",
        "",
        "## Spark's options",
        "",
        "| Spark's `kafka` source | values | `kafkacodec` on log.dirs |",
        "|---|---|---|",
        *(f"| {names(o)} | {o.values} | {o.meaning} |" for o in OPTIONS if o.origin == "spark"),
        "| `kafka.bootstrap.servers`, other `kafka.*`, "
        + ", ".join(f"`{n}`" for n in sorted(CONNECTION))
        + " | | accepted and named in a warning as ignored (they configure a connection) |",
        *(f"| `{n}` | | refused with Spark's reason: {why} |" for n, why in REFUSED.items()),
        "| (any other option) | | an error naming it: a misspelt `startingOffset` never reads everything in silence |",
        "",
        "## kafkacodec's options",
        "",
        "| option | values | meaning |",
        "|---|---|---|",
        *(f"| {names(o)} | {o.values} | {o.meaning} |" for o in OPTIONS if o.origin == "kafkacodec"),
        "| `storage.KEY` | | an option of the object store `load()` names (`storage.region`, "
        "`storage.endpoint_override`, `storage.encryption_key[.ID]`, ...: any the scheme's pyarrow "
        "filesystem takes) |",
        "",
        "## Earlier names",
        "",
        "The earlier names still work: " + ", ".join(f"`{a}` (now `{b}`)" for a, b in ALIASES.items()) + ".",
        "",
    ]  # fmt: skip
    return "\n".join(out)


def normalized(options: Mapping) -> dict[str, str]:
    """The options with lower-case names (Spark's are case-insensitive) and Spark's names
    for kafkacodec's earlier ones; an option given under both names is refused."""
    out: dict[str, str] = {}
    for key, value in options.items():
        if value is None:
            continue
        name = key.lower()
        if name.startswith("storage."):  # an object store's option: its key id kept as given
            name = "storage." + key[len("storage.") :]
        spark = ALIASES.get(name, name)
        if spark in out:
            raise PipelineError(f"option {key}: given twice (as {spark} and as {name}); give one")
        out[spark] = str(value)
    return out


def check_names(options: dict[str, str], *, known=KNOWN) -> None:
    """Refuse an option no one knows (a misspelt startingOffset would read everything) or
    one Spark's source refuses; name in one warning those that only concern a broker."""
    ignored = []
    for name in sorted(options):
        if name in REFUSED:
            raise PipelineError(f"option {name} is not supported, as in Spark's kafka source: "
                                f"{REFUSED[name]}")  # fmt: skip
        if name in CONNECTION or (name.startswith("kafka.") and name != "kafka.isolation.level"):
            ignored.append(name)
        elif name not in known and not name.startswith("storage."):
            raise PipelineError(f"unknown option {name!r} (the options are Spark's kafka "
                                "source's and kafkacodec's: `kafkacodec spark options` lists them)")  # fmt: skip
    if ignored:
        _log.warning("options of a broker connection, ignored on log directories: %s",
                     ", ".join(ignored))  # fmt: skip


def _json(name: str, raw: str, example: str):
    try:
        doc = json.loads(raw)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise PipelineError(f"option {name}: expected e.g. {example}, got {raw!r}")
    return doc


def _long(name: str, raw) -> int:
    try:
        return int(str(raw).strip())
    except ValueError:
        raise PipelineError(f"option {name}: expected a single long value, got {raw!r}") from None


def partition_values(name: str, raw: str) -> dict[tuple[str, int], int]:
    """{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}} (Spark's JsonUtils.partitionOffsets and
    partitionTimestamps) as {(topic, partition): value}."""
    example = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
    doc = _json(name, raw, example)
    try:
        return {(str(t), int(p)): int(v) for t, parts in doc.items() for p, v in parts.items()}
    except (AttributeError, TypeError, ValueError):
        raise PipelineError(f"option {name}: expected e.g. {example}, got {raw!r}") from None


def assigned_partitions(raw: str) -> frozenset[tuple[str, int]]:
    """{"topicA":[0,1],"topicB":[2,4]} (Spark's JsonUtils.partitions)."""
    if not raw.strip().startswith("{"):
        raise PipelineError(f"No topicpartitions to assign as specified value for option "
                            f"'assign' is '{raw}'")  # fmt: skip
    doc = _json("assign", raw, '{"topicA":[0,1],"topicB":[2,4]}')
    try:
        return frozenset((str(t), int(p)) for t, parts in doc.items() for p in parts)
    except (TypeError, ValueError):
        raise PipelineError(
            f'option assign: expected e.g. {{"topicA":[0,1],"topicB":[2,4]}}, got {raw!r}'
        ) from None


# ------------------------------------------------------------------------ subscription


@dataclass(frozen=True)
class Subscription:
    """Which partitions a read takes (Spark's ConsumerStrategy): subscribe's topics, a
    subscribePattern (a regular expression the whole topic name matches), or assign's
    partitions; with kafkacodec's partitions option, only those partition numbers. Nothing
    given: every partition of the log directories. A pattern keeps a topic when it is found
    anywhere in the name, as Spark's SubscribePatternStrategy keeps it (Regex.findFirstIn):
    `t.*` keeps `orders-t1`; anchor it (`^t.*$`) for whole names. Kafka's internal topics,
    which Admin.listTopics does not list, are never taken by a pattern."""

    topics: frozenset | None = None
    pattern: str | None = None
    assigned: frozenset | None = None
    partitions: frozenset | None = None

    @classmethod
    def parse(cls, options: dict[str, str]) -> Subscription:
        given = [k for k in ("assign", "subscribe", "subscribepattern") if k in options]
        if len(given) > 1:
            raise PipelineError("Only one of the following options can be specified for Kafka "
                                "source: subscribe, subscribepattern, assign")  # fmt: skip
        topics = pattern = assigned = None
        if "subscribe" in options:
            topics = frozenset(t.strip() for t in options["subscribe"].split(",") if t.strip())
            if not topics:
                raise PipelineError("No topics to subscribe to as specified value for option "
                                    f"'subscribe' is '{options['subscribe']}'")  # fmt: skip
        elif "subscribepattern" in options:
            pattern = options["subscribepattern"].strip()
            if not pattern:
                raise PipelineError("Pattern to subscribe is empty as specified value for "
                                    f"option 'subscribePattern' is '{options['subscribepattern']}'")  # fmt: skip
            try:
                re.compile(pattern)
            except re.error as err:
                raise PipelineError(f"option subscribePattern: {err}") from None
        elif "assign" in options:
            assigned = assigned_partitions(options["assign"])
        parts = options.get("partitions")
        numbers = None
        if parts not in (None, ""):
            try:
                numbers = frozenset(int(v) for v in parts.split(",") if v.strip())
            except ValueError:
                raise PipelineError(f"option partitions: expected numbers separated by commas, "
                                    f"got {parts!r}") from None  # fmt: skip
        return cls(topics, pattern, assigned, numbers)

    def wants(self, topic: str, partition: int) -> bool:
        if self.partitions is not None and partition not in self.partitions:
            return False
        if self.topics is not None:
            return topic in self.topics
        if self.pattern is not None:  # Spark's SubscribePatternStrategy: findFirstIn, anywhere,
            # over the topics Admin.listTopics lists (not the internal ones)
            return topic not in UNLISTED and re.search(self.pattern, topic) is not None
        if self.assigned is not None:
            return (topic, partition) in self.assigned
        return True


# ----------------------------------------------------------------------- offset limits


@dataclass(frozen=True)
class Limit:
    """One end of a read (Spark's KafkaOffsetRangeLimit): earliest, latest, offsets per
    partition (-2 earliest, -1 latest), timestamps per partition, or one timestamp for
    every partition; a timestamp's offset is the first with a timestamp at or after it,
    and where there is none, startingOffsetsByTimestampStrategy says: error, or latest."""

    kind: str  # earliest | latest | offsets | timestamps | timestamp
    values: tuple = ()  # ((topic, partition), offset or timestamp) pairs
    timestamp: int | None = None
    strategy: str = "error"

    @classmethod
    def parse(cls, options: dict[str, str], side: str, default: str) -> Limit:
        """Spark's KafkaSourceProvider.getKafkaOffsetRangeLimit: a global timestamp first,
        then timestamps per partition, then earliest / latest / offsets."""
        strategy = options.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
        if strategy not in ("error", "latest"):
            raise PipelineError(f"option startingOffsetsByTimestampStrategy: error or latest, "
                                f"got {strategy!r}")  # fmt: skip
        if f"{side}timestamp" in options:
            return cls("timestamp", timestamp=_long(f"{side}Timestamp", options[f"{side}timestamp"]),
                       strategy=strategy)  # fmt: skip
        if f"{side}offsetsbytimestamp" in options:
            name = f"{side}OffsetsByTimestamp"
            values = partition_values(name, options[f"{side}offsetsbytimestamp"])
            return cls("timestamps", tuple(sorted(values.items())), strategy=strategy)
        raw = options.get(f"{side}offsets", default).strip()
        if raw.lower() in ("earliest", "latest"):
            return cls(raw.lower())
        return cls("offsets", tuple(sorted(partition_values(f"{side}Offsets", raw).items())))

    @property
    def named(self) -> frozenset | None:
        """The partitions the limit names (None: it applies to every partition)."""
        return (
            frozenset(k for k, _ in self.values) if self.kind in ("offsets", "timestamps") else None
        )


# ------------------------------------------------------------------------- the request


@dataclass(frozen=True)
class Range:
    """Offsets [start, end) of one partition to read."""

    partition: Partition = field(compare=False)
    key: tuple[str, int]
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Request:
    """The Spark options of one read (batch or stream), parsed."""

    subscription: Subscription
    starting: Limit
    ending: Limit
    fail_on_data_loss: bool = True
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    read_committed: bool = False
    #: kafkacodec's starting_offset / ending_offset (every partition) and starting_timestamp
    first: int | None = None
    end: int | None = None
    since: int | None = None

    @classmethod
    def parse(cls, raw: Mapping, *, stream: bool = False, known=KNOWN) -> Request:
        options = normalized(raw)
        check_names(options, known=known)
        starting = Limit.parse(options, "starting", "latest" if stream else "earliest")
        if stream:
            for name in (
                "endingoffsets",
                "endingoffsetsbytimestamp",
                "endingtimestamp",
                "ending_offset",
            ):
                if name in options:
                    raise PipelineError(f"option {name}: an ending offset is not valid in "
                                        "streaming queries")  # fmt: skip
            ending = Limit("latest")
        else:
            ending = Limit.parse(options, "ending", "latest")
            _batch_limits(starting, ending)
        return cls(
            Subscription.parse(options), starting, ending,
            fail_on_data_loss=flag(options, "failondataloss", True),
            min_partitions=_positive(options, "minpartitions", "minPartitions"),
            max_records_per_partition=_positive(options, "maxrecordsperpartition", "maxRecordsPerPartition"),
            read_committed=isolation(options) == "read_committed",
            first=_optional(options, "starting_offset"), end=_optional(options, "ending_offset"),
            since=_optional(options, "starting_timestamp"),
        )  # fmt: skip

    def wants(self, p: Partition) -> bool:
        return self.subscription.wants(p.topic, p.partition)

    # -- resolution against the files
    def range_of(self, p: Partition, *, on_corrupt_fail: bool = True) -> Range:
        """The offsets [start, end) of one partition read (once assigned checked the
        partitions), as Spark's source resolves its options against a broker
        (KafkaOffsetReaderAdmin.getOffsetRangesFromUnresolvedOffsets), with kafkacodec's
        starting_offset / ending_offset narrowing them."""
        key = (p.topic, p.partition)
        ends = Ends(p, self.read_committed, on_corrupt_fail)
        start = self.resolve(self.starting, key, ends, starting=True)
        end = self.resolve(self.ending, key, ends, starting=False)
        if start > end:
            raise PipelineError(f"{p.path}: the resolved start offset {start} is greater than "
                                f"the end offset {end} for {key[0]}-{key[1]}")  # fmt: skip
        start = self.available(p, start, ends)
        if end > ends.latest:
            self._loss(p, f"offsets {ends.latest} to {end - 1} are past the end of the log")
            end = ends.latest
        if self.first is not None:
            start = max(start, self.first)
        if self.end is not None:
            end = min(end, self.end)
        return Range(p, key, start, max(start, end))

    def check_topics(self, partitions: list[Partition], where) -> None:
        """subscribe's topics must all be held (Spark's SubscribeStrategy describes them,
        and a topic the cluster does not have fails the query with
        UnknownTopicOrPartitionException): a topic no partition directory of the log
        directories read holds is refused, naming them, rather than read as no rows."""
        topics = self.subscription.topics
        if topics is None:
            return
        unknown = sorted(topics - {p.topic for p in partitions})
        if unknown:
            places = ", ".join(str(w) for w in where)
            raise PipelineError(f"option subscribe: no partition of {', '.join(unknown)} in the log "
                                f"directories read ({places}): as Spark's kafka source, which fails "
                                "with UnknownTopicOrPartitionException, the read stops")  # fmt: skip

    def assigned(self, partitions: list[Partition]) -> dict[tuple[str, int], Partition]:
        """The partitions read, by (topic, partition); assign's partitions must all be
        there, and JSON offsets must name exactly them (Spark's
        startOffsetDoesNotMatchAssigned)."""
        mine = {(p.topic, p.partition): p for p in partitions if self.wants(p)}
        missing = (self.subscription.assigned or frozenset()) - set(mine)
        if missing:
            raise PipelineError(f"option assign: no partition directory for {_names(missing)}")
        for name, limit in (("startingOffsets", self.starting), ("endingOffsets", self.ending)):
            named = limit.named
            if named is not None and named != set(mine):
                raise PipelineError(
                    f"option {name}: it must name every partition read, as in Spark's kafka "
                    f"source (-1 for latest, -2 for earliest): it names {_names(named)}, the "
                    f"read takes {_names(mine)}"
                )  # fmt: skip
        return mine

    def resolve(self, limit: Limit, key: tuple[str, int], ends: Ends, *, starting: bool) -> int:
        """One end of one partition's range as an offset."""
        if limit.kind == "earliest":
            return ends.earliest
        if limit.kind == "latest":
            return ends.latest
        value = dict(limit.values)[key] if limit.kind != "timestamp" else limit.timestamp
        if limit.kind == "offsets":
            return ends.earliest if value == EARLIEST else ends.latest if value == LATEST else value
        found = ends.by_timestamp(value)
        if found is not None:
            return found
        if starting and limit.strategy == "error":
            note = ends.partition.mtime_note()
            raise PipelineError(f"{ends.partition.path}: No offset matched from request of "
                                f"topic-partition {key[0]}-{key[1]} and timestamp {value}."
                                + ("" if note is None else f" ({note})"))  # fmt: skip
        return ends.latest

    def available(self, p: Partition, start: int, ends: Ends) -> int:
        """start, or the log start offset where retention or DeleteRecords already
        removed it (failOnDataLoss=false; true: an error, as Spark's reader raises)."""
        if start >= ends.earliest:
            return start
        self._loss(p, f"offsets {start} to {ends.earliest - 1} were deleted before they were read")
        return ends.earliest

    def _loss(self, p: Partition, what: str) -> None:
        """Report data loss as Spark's source does: an error (failOnDataLoss=true) or a
        warning (false, and the read goes on)."""
        if self.fail_on_data_loss:
            raise PipelineError(f"{p.path}: {what} (option failOnDataLoss=false goes on "
                                "without them)")  # fmt: skip
        warnings.warn(f"{p.path}: {what}; failOnDataLoss=false: going on", stacklevel=3)


class Ends:
    """A partition's earliest and latest offsets and its ListOffsets answers by timestamp,
    each computed once (a read resolves both ends of every partition)."""

    def __init__(self, p: Partition, read_committed: bool, on_corrupt_fail: bool = True):
        self.partition = p
        self.read_committed = read_committed
        self.on_corrupt_fail = on_corrupt_fail
        self._latest: int | None = None

    @property
    def earliest(self) -> int:
        return self.partition.kafka_log_start_offset()

    @property
    def latest(self) -> int:
        """The offset after the last complete batch when the read started (what a broker
        calls the log end offset; its high watermark is not on disk), or with
        read_committed the last stable offset (ListOffsets' latest with that isolation)."""
        if self._latest is None:
            self._latest = complete_end(self.partition, read_committed=self.read_committed,
                                        on_corrupt_fail=self.on_corrupt_fail)  # fmt: skip
        return self._latest

    def by_timestamp(self, timestamp: int) -> int | None:
        """The first offset with a timestamp >= timestamp, as Kafka's ListOffsets answers
        it, and only below the last fetchable offset (ReplicaManager.fetchOffset drops an
        answer at or past it); None where there is none."""
        if timestamp < 0:
            raise PipelineError(f"{self.partition.path}: a timestamp must be >= 0, got {timestamp}")
        found = self.partition.list_offsets(timestamp)
        if found is None or found.offset < 0 or found.offset >= self.latest:
            return None
        return max(found.offset, self.earliest)


def _batch_limits(starting: Limit, ending: Limit) -> None:
    """Spark's KafkaSourceProvider.validateBatchOptions and checkOffsetLimitValidity."""
    if starting.kind == "latest":
        raise PipelineError("starting offset can't be latest for batch queries on Kafka")
    if ending.kind == "earliest":
        raise PipelineError("ending offset can't be earliest for batch queries on Kafka")
    for (t, p), v in starting.values if starting.kind == "offsets" else ():
        if v == LATEST:
            raise PipelineError(
                f"startingOffsets for {t}-{p} can't be latest for batch queries on Kafka"
            )
    for (t, p), v in ending.values if ending.kind == "offsets" else ():
        if v == EARLIEST:
            raise PipelineError(
                f"ending offset for {t}-{p} can't be earliest for batch queries on Kafka"
            )
    if starting.kind == ending.kind and starting.kind in ("offsets", "timestamps"):
        s, e = dict(starting.values), dict(ending.values)
        if set(s) != set(e):
            raise PipelineError(f"startingOffsets and endingOffsets name different partitions: "
                                f"{_names(s)} and {_names(e)}")  # fmt: skip
        for key, v in s.items():
            if v > e[key] >= 0:
                raise PipelineError(f"the start offset {v} is greater than the end offset {e[key]} "
                                    f"for {key[0]}-{key[1]}")  # fmt: skip


def _names(keys) -> str:
    return ", ".join(f"{t}-{p}" for t, p in sorted(keys)) or "none"


_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def flag(options: Mapping, name: str, default: bool) -> bool:
    raw = str(options.get(name, default)).strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise PipelineError(f"option {name}: expected true or false, got {options[name]!r}")


def isolation(options: Mapping) -> str:
    """kafka.isolation.level (or kafkacodec's isolation): read_uncommitted, the default of
    Kafka's consumer and Spark's source, or read_committed."""
    level = str(options.get("kafka.isolation.level", "read_uncommitted")).strip().lower()
    if level not in ("read_uncommitted", "read_committed"):
        raise PipelineError(f"option kafka.isolation.level: read_uncommitted or read_committed, "
                            f"got {level!r}")  # fmt: skip
    return level


def _optional(options: Mapping, name: str) -> int | None:
    raw = options.get(name)
    if raw in (None, ""):
        return None
    try:
        return int(str(raw).strip())
    except ValueError:
        raise PipelineError(f"option {name}: expected a number, got {raw!r}") from None


def _positive(options: Mapping, name: str, spark_name: str) -> int | None:
    value = _optional(options, name)
    if value is not None and value <= 0:
        raise PipelineError(f"{spark_name} must be positive")
    return value


# ------------------------------------------------------------------ input partitions


def divided(ranges: list[Range], min_partitions: int | None,
            max_records: int | None) -> list[Range]:  # fmt: skip
    """Ranges cut as Spark's KafkaOffsetRangeCalculator.getRanges cuts them: without
    minPartitions above the number of ranges nor maxRecordsPerPartition, one per partition;
    else first into pieces of at most maxRecordsPerPartition offsets, then the large ones
    into pieces in proportion to their size until there are about minPartitions. Empty
    ranges are dropped, as Spark drops them."""
    ranges = [r for r in ranges if r.size > 0]
    if (min_partitions is None or len(ranges) >= min_partitions) and max_records is None:
        return ranges
    if max_records is not None:
        ranges = [piece for r in ranges for piece in _pieces(r, -(-r.size // max_records))]
    if min_partitions is not None and min_partitions > len(ranges):
        total = sum(r.size for r in ranges)
        unsplit = [r for r in ranges if _part_count(r.size, total, min_partitions) == 1]
        split_total = total - sum(r.size for r in unsplit)
        split_min = max(min_partitions - len(unsplit), 1)
        unsplit_keys = {r.key for r in unsplit}
        ranges = [
            piece for r in ranges
            for piece in _pieces(r, 1 if r.key in unsplit_keys else _part_count(r.size, split_total, split_min))
        ]  # fmt: skip
    return [r for r in ranges if r.size > 0]


def _part_count(size: int, total: int, parts: int) -> int:
    # Spark: math.max(math.round(size.toDouble / totalSize * minParts), 1); Scala's round
    # is half up
    return max(int(size / total * parts + 0.5), 1) if total else 1


def _pieces(r: Range, parts: int) -> list[Range]:
    """Spark's getDividedPartition: `parts` pieces, the last taking the rounding."""
    out, remaining, start = [], r.size, r.start
    for part in range(parts):
        this = remaining // (parts - part)
        remaining -= this
        end = min(start + this, r.end)
        out.append(Range(r.partition, r.key, start, end))
        start = end
    return out
