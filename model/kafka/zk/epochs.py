"""The leader epoch cache Kafka derives from the leader epochs of a topic-lifecycle log's
records (KIP-101, KIP-279), and the truncation on fetch it decides (AbstractFetcherThread,
Partition.readRecords). A record's encoding, its incarnation and its leader epoch in one
int, is the shared broker records' (``model.kafka.broker.record``).

The cache (LeaderEpochFileCache) is the list of ``(epoch, start offset)`` the appends of
the records assigned, ascending, and for a leader its current leader epoch, which
Partition.makeLeader adds at its log end (maybeAssignEpochStartOffset) when no record
has it yet. The model keeps no cache of its own: a follower that once led without
appending has that epoch in Kafka's cache and not in the model's (docs, simplifications).
"""
from __future__ import annotations

from kmc.model.kafka.broker import (  # noqa: F401 (the record encoding, used from here)
    EPOCH_STEP, epoch_of, inc_of, label, record,
)


def _assign(entries: list, epoch: int, start: int) -> None:
    """LeaderEpochFileCache.assign: a new epoch, or an earlier start of the latest one,
    first removes the entries from the end whose epoch or start is not below it
    (maybeTruncateNonMonotonicEntries: a stale log taken over by a leader at a lower
    epoch keeps only the new entry)."""
    if entries and entries[-1][0] == epoch and start >= entries[-1][1]:
        return
    while entries and (entries[-1][0] >= epoch or entries[-1][1] >= start):
        entries.pop()
    entries.append((epoch, start))


def cache(records: tuple, leading: int | None = None) -> list:
    """The leader epoch cache of a log: ``(epoch, start offset)`` per epoch, ascending,
    as the appends of its records assigned them (UnifiedLog.append -> assign);
    ``leading``: the leader epoch of a replica that leads (None for a follower)."""
    out: list = []
    for o, rec in enumerate(records):
        _assign(out, epoch_of(rec), o)
    if leading is not None:
        _assign(out, leading, len(records))
    return out


def end_offset_for(entries: list, requested: int, log_end: int):
    """LeaderEpochFileCache.endOffsetFor: ``(epoch, end offset)`` of the largest epoch
    not above ``requested`` (its end: the next epoch's start, or the log end for the
    latest), ``(requested, first start)`` below every epoch, None when undefined (an
    empty cache, or ``requested`` above every epoch)."""
    if entries and entries[-1][0] == requested:
        return requested, log_end
    higher = next((x for x in entries if x[0] > requested), None)
    if higher is None:
        return None
    floor = [x for x in entries if x[0] <= requested]
    return (floor[-1][0] if floor else requested), higher[1]


def diverging(leader_records: tuple, leader_epoch: int, fetched: tuple):
    """The leader's check of a follower's Fetch (Partition.readRecords): None when the
    follower's log ``fetched`` is empty (no lastFetchedEpoch) or agrees with the
    leader's; "undefined" when the leader cannot place its last epoch
    (OffsetOutOfRangeException); else the leader's ``(epoch, end offset)`` for it, the
    response's divergingEpoch."""
    if not fetched:
        return None
    last = epoch_of(fetched[-1])
    got = end_offset_for(cache(leader_records, leader_epoch), last, len(leader_records))
    if got is None:
        return "undefined"
    if got[0] < last or got[1] < len(fetched):
        return got
    return None


def pack(diverged) -> int:
    """A divergingEpoch ``(epoch, end offset)`` as one int, the way records are written
    (``model.kafka.broker.record``: the end offset in the units, the epoch above):
    a FetchResponse carries it in its ``leader_end`` field."""
    epoch, end = diverged
    assert 0 <= end < EPOCH_STEP, end  # pragma: no mutate (logs hold a few records)
    return end + EPOCH_STEP * epoch


def unpack(value: int) -> tuple:
    return value // EPOCH_STEP, value % EPOCH_STEP


def truncation_offset(records: tuple, diverged) -> int:
    """Where a follower with log ``records`` truncates on a divergingEpoch ``(epoch,
    end offset)`` (AbstractFetcherThread.getOffsetTruncationState, against its own
    cache): to the smaller end of that epoch when it has the epoch, else to the end of
    its largest epoch below it (its next Fetch goes on from there)."""
    epoch, end = diverged
    leo = len(records)
    mine = end_offset_for(cache(records), epoch, leo)
    if mine is None:
        return min(end, leo)
    if mine[0] != epoch:
        return min(mine[1], leo)
    return min(mine[1], end, leo)


def common_prefix(a: tuple, b: tuple) -> int:
    """How many records two logs share from the start, epochs included."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
