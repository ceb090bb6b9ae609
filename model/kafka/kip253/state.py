"""State types of the partition split/merge procedure: immutable NamedTuples, canonical.

One topic, one broker that leads every partition, controller candidates (the active one's
in-memory state is lost on failover), one consumer group, a few producers. The group's
per-partition collections are tuples indexed by partition id (0 .. pmax-1).
The state is the ZooKeeper-era cluster's ``World`` (``model.kafka.zk.state``), the one the
topic lifecycle runs on: the metadata store (its znodes with KIP-253's fields:
``kip253.znodes``), the controller election state, the controller's in-memory state
(``Memory``: the procedure's phase, the count it read, the epochs it recorded), the
brokers (``model.kafka.broker``, with KIP-253's count, metadata cache and log start
offset; ``kip253.broker`` reads and writes them) and the network value. The procedure's
own parts of it are defined here: its keyed producers (``World.producers``) and its
consumer group (``World.group``); its AlterTopic script and history are fields of the
cluster's ``Admin`` (``alters``, ``alter_errors``) and ``Ghost`` (``delivered``,
``removed``, ``failover_in``).
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kmc.model.kafka.broker import Log
from kmc.model.kafka.zk.state import Admin, Ghost, World
from kmc.model.records import fast_replace_all

__all__ = ["Admin", "Ghost", "World", "Producer", "Part", "Group", "log_end", "end_offset"]


class Producer(NamedTuple):
    count: int    # undeleted_partition_count in the producer's metadata cache
    sent: int     # messages acknowledged so far = the next sequence number
    stale: bool   # a retriable metadata error arrived: refresh before retrying
    __repr__ = tuple.__repr__  # C speed: fingerprints encode repr


class Part(NamedTuple):
    """A partition assigned to a group member, with the blocking data KIP-253 §8 derives."""
    p: int
    waits: object   # step 4: ((parent, lowerOffsetThreshold), ...) (linear hashing: one);
                    # None while the look-up of p's znode failed (retried: lookup-epochs)
    feeders: tuple  # step 5: ((marked partition P3, upperOffsetThreshold in p), ...)
    started: bool   # False while step 4 blocks p; onPartitionKeyAssigned sets it
    __repr__ = tuple.__repr__  # C speed: fingerprints encode repr


class Group(NamedTuple):
    basis: tuple      # (undeleted, total) the current assignment was computed from
    members: tuple    # per member: tuple of Part
    committed: tuple  # the group's position per partition id (committed on every delivery)
    reported: tuple   # coordinator's copy per partition id (ConsumerGroupPositionRequest)
    rejoin: bool      # a Fetch was fenced (InvalidPartitionMetadataException): rejoin first
    __repr__ = tuple.__repr__  # C speed: fingerprints encode repr


def log_end(r: Optional[Log]) -> int:
    return 0 if r is None else len(r.records)


def end_offset(r: Log, leader_epoch: int, epoch: int) -> int:
    """OffsetsForLeaderEpoch(epoch) on log ``r`` hosted at ``leader_epoch``: the first
    offset after the messages of leader epochs <= ``epoch``; the log end offset when
    ``epoch`` is still the leader's current epoch."""
    if leader_epoch <= epoch:
        return len(r.records)
    for off, rec in enumerate(r.records):
        if rec[3] > epoch:
            return off
    return len(r.records)


fast_replace_all(globals())  # generated _replace: cheaper successor construction
