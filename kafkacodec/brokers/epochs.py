"""What a replica does when it rejoins its partition's leader, from the two logs alone:
Kafka's truncation by leader epoch (KIP-101, KIP-279; since KIP-320 on the fetch path
itself), replayed step by step with Kafka's own rules:

- the leader epoch cache of each replica as Kafka loads it (LeaderEpochFileCache read from
  `leader-epoch-checkpoint`, then LogLoader's truncateFromEnd at the log end offset and
  truncateFromStart at the log start offset), with the leader's new epoch assigned at its
  log end offset when it becomes leader (Partition.makeLeader: maybeAssignEpochStartOffset);
- the leader's answer for the follower's last fetched epoch (LeaderEpochFileCache.endOffsetFor)
  and when it is a diverging epoch (Partition.readRecords: an answer below the fetched
  epoch or the fetch offset);
- the follower's truncation offset for that answer (AbstractFetcherThread.
  getOffsetTruncationState), repeated until the leader finds no divergence;
- an out-of-range fetch (AbstractFetcherThread.fetchOffsetAndTruncate): truncate to the
  leader's end when the follower is past it, start over at the leader's log start when the
  follower ends before it;
- a follower with no epoch at all truncates to its high watermark first
  (AbstractFetcherThread.truncateToHighWatermark; ReplicaManager.initialFetchOffset).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from kafkacodec.log.partition import EpochEntry

__all__ = ["EpochCache", "Rejoin", "rejoin", "UNDEFINED_EPOCH", "UNDEFINED_OFFSET"]

UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1
#: Rounds of the exchange before giving up (each round truncates further; Kafka's logs
#: settle in a handful).
MAX_ROUNDS = 10_000


class EpochCache:
    """A replica's leader epoch cache (Kafka's LeaderEpochFileCache): (epoch, start offset)
    entries, epochs and start offsets both increasing."""

    def __init__(self, entries: list[EpochEntry] | tuple[EpochEntry, ...] = ()) -> None:
        self.entries: list[EpochEntry] = []
        for e in entries:
            self.assign(e.epoch, e.start_offset)

    def copy(self) -> EpochCache:
        c = EpochCache()
        c.entries = list(self.entries)
        return c

    @property
    def latest_epoch(self) -> int | None:
        return self.entries[-1].epoch if self.entries else None

    def assign(self, epoch: int, start_offset: int) -> None:
        """LeaderEpochFileCache.assign: a new latest entry, after removing every entry whose
        epoch or start offset is not below it; nothing when the latest entry already has
        that epoch at or below that offset."""
        if epoch < 0 or start_offset < 0:
            return
        if self.entries:
            last = self.entries[-1]
            if last.epoch == epoch and start_offset >= last.start_offset:
                return
        while self.entries and (self.entries[-1].epoch >= epoch or self.entries[-1].start_offset >= start_offset):
            self.entries.pop()
        self.entries.append(EpochEntry(epoch, start_offset))

    def truncate_from_end(self, end_offset: int) -> None:
        """LeaderEpochFileCache.truncateFromEnd: entries starting at or after end_offset go
        (when the latest does)."""
        if end_offset >= 0 and self.entries and self.entries[-1].start_offset >= end_offset:
            while self.entries and self.entries[-1].start_offset >= end_offset:
                self.entries.pop()

    def truncate_from_start(self, start_offset: int) -> None:
        """LeaderEpochFileCache.truncateFromStart: entries starting at or before
        start_offset go, the last of them kept with start_offset as its start."""
        removed = [e for e in self.entries if e.start_offset <= start_offset]
        if removed:
            self.entries = [EpochEntry(removed[-1].epoch, start_offset)] + [
                e for e in self.entries if e.start_offset > start_offset
            ]

    def end_offset_for(self, requested: int, log_end_offset: int) -> tuple[int, int]:
        """LeaderEpochFileCache.endOffsetFor: (the largest epoch <= requested, the start of
        the next epoch, or the log end offset for the latest epoch); (-1, -1) when the
        requested epoch is undefined or above every epoch."""
        if requested == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if self.latest_epoch == requested:
            return requested, log_end_offset
        epochs = [e.epoch for e in self.entries]
        higher = bisect.bisect_right(epochs, requested)
        if higher == len(epochs):
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if higher == 0:  # below every known epoch
            return requested, self.entries[0].start_offset
        return self.entries[higher - 1].epoch, self.entries[higher].start_offset


@dataclass
class LogEnds:
    """What the exchange needs of one replica, as Kafka loaded it."""

    log_start: int
    log_end: int
    epochs: EpochCache
    high_watermark: int


@dataclass
class Rejoin:
    """A follower's rejoining of the leader: where its log is cut (None: nowhere), whether
    it starts over at the leader's log start, and the steps, each in Kafka's words."""

    truncate_to: int | None = None
    restart_at: int | None = None
    steps: list[str] = field(default_factory=list)
    settled: bool = True

    @property
    def end(self) -> int | None:
        """The follower's log end offset once it is done (None: not cut)."""
        return self.restart_at if self.restart_at is not None else self.truncate_to


def rejoin(leader: LogEnds, follower: LogEnds) -> Rejoin:
    """Replay a follower's first fetches from the leader (its cache as it will be after
    makeLeader). The follower's values are not changed."""
    out = Rejoin()
    cache = follower.epochs.copy()
    leo = follower.log_end

    def cut(to: int, why: str) -> None:
        nonlocal leo
        if to < leo:
            out.truncate_to = to if out.truncate_to is None else min(out.truncate_to, to)
            out.steps.append(f"{why}: truncated to {to}")
            leo = to
            cache.truncate_from_end(to)
        else:
            out.steps.append(f"{why}: nothing to truncate (log end {leo})")

    def out_of_range(why: str) -> None:
        # AbstractFetcherThread.fetchOffsetAndTruncate
        if leader.log_end < leo:
            cut(leader.log_end, f"{why}; the leader's log end offset {leader.log_end} is below "
                                f"the replica's {leo} (fetchOffsetAndTruncate)")  # fmt: skip
        elif leader.log_start > leo:
            out.restart_at = leader.log_start
            out.truncate_to = leo if out.truncate_to is None else out.truncate_to
            out.steps.append(f"{why}; the replica ends ({leo}) before the leader's log start "
                             f"{leader.log_start}: truncated fully, fetching from {leader.log_start}")  # fmt: skip
        else:
            out.steps.append(f"{why}; fetching on from {leo}")

    if cache.latest_epoch is None:
        # ReplicaManager.initialFetchOffset: no epoch, the high watermark; state Truncating
        hw = min(max(follower.high_watermark, follower.log_start), leo)
        cut(hw, "the replica has no leader epoch: it truncates to its high watermark "
                f"{follower.high_watermark} (truncateToHighWatermark)")  # fmt: skip
        if leo < leader.log_start or leo > leader.log_end:
            out_of_range(f"fetch at {leo} is out of range")
        return out
    for _ in range(MAX_ROUNDS):
        last = cache.latest_epoch
        if last is None:  # (truncated below its first epoch: fetches as a new replica)
            if leo > leader.log_end or leo < leader.log_start:
                out_of_range(f"fetch at {leo} is out of range")
            return out
        if leo < leader.log_start:
            out_of_range(f"fetch at {leo} is below the leader's log start {leader.log_start}")
            return out
        epoch, end = leader.epochs.end_offset_for(last, leader.log_end)
        if end == UNDEFINED_OFFSET or epoch == UNDEFINED_EPOCH:
            out_of_range(f"the leader knows no end for epoch {last} (Partition.readRecords: "
                         "OffsetOutOfRange)")  # fmt: skip
            return out
        if not (epoch < last or end < leo):
            out.steps.append(f"fetch at {leo}, last epoch {last}: the leader's epoch {epoch} "
                             f"ends at {end}, no divergence")  # fmt: skip
            return out
        # a diverging epoch: AbstractFetcherThread.getOffsetTruncationState
        said = f"fetch at {leo}, last epoch {last}: diverging epoch {epoch} ending at {end}"
        f_epoch, f_end = cache.end_offset_for(epoch, leo)
        if f_end == UNDEFINED_OFFSET:
            cut(min(end, leo), f"{said}; the replica tracks no epoch at or below {epoch}")
        elif f_epoch != epoch:
            cut(min(f_end, leo), f"{said}; the replica does not know epoch {epoch}, its "
                                 f"epoch {f_epoch} ends at {f_end}")  # fmt: skip
        else:
            cut(min(f_end, end, leo), f"{said}; the replica's epoch {epoch} ends at {f_end}")
    out.settled = False
    out.steps.append(f"no agreement after {MAX_ROUNDS} rounds (not what Kafka's logs do)")
    return out
