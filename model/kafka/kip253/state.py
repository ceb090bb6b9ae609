"""State types of the partition split/merge model: immutable NamedTuples, canonical.

One topic, one broker that leads every partition, controller candidates (the active one's
in-memory state is lost on failover), one consumer group, a few producers. The group's
per-partition collections are tuples indexed by partition id (0 .. pmax-1).
Shared parts come from ``model.kafka``: the metadata store (its znodes as the topic
lifecycle has them, with KIP-253's fields: ``kip253.znodes``), the controller election
state, the controller's in-memory state (``Memory``: the procedure's phase, the count it
read, the epochs it recorded), the brokers (``model.kafka.broker``: the topic lifecycle's
broker and replica records, with KIP-253's count, metadata cache and log start offset;
``kip253.broker`` reads and writes them) and the network value.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from kmc.model.kafka.broker import Replica
from kmc.model.kafka.controller import ControllerState, Memory
from kmc.model.kafka.store import Store
from kmc.model.records import fast_replace_all


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


class Admin(NamedTuple):
    next: int      # index of the next scripted AlterTopic
    errors: tuple  # error codes returned so far
    __repr__ = tuple.__repr__  # C speed: fingerprints encode repr


class Ghost(NamedTuple):
    """History variables: they make the properties expressible; no action reads them."""
    delivered: tuple  # per producer, per key class: ((seq, partition), ...) in delivery order
    removed: tuple    # sorted: partitions removed after being marked for deletion
    failover_in: tuple  # sorted: procedure kinds ("expand", "shrink", "idle") a failover hit
    __repr__ = tuple.__repr__  # C speed: fingerprints encode repr


class World(NamedTuple):
    store: Store  # the shared metadata store (model.kafka.store; kip253.znodes reads it)
    ctl: ControllerState  # active candidate and controller epoch (model.kafka)
    mem: Memory  # the active controller's in-memory state (model.kafka.controller)
    brokers: tuple  # of model.kafka.broker.Broker: the one broker (id BROKER = 1)
    net: tuple  # the model.kafka.network value (FIFO channels)
    producers: tuple  # of Producer
    group: Group
    admin: Admin
    ghost: Ghost
    __repr__ = tuple.__repr__  # C speed: fingerprints encode repr


def log_end(r: Optional[Replica]) -> int:
    return 0 if r is None else len(r.log)


def end_offset(r: Replica, epoch: int) -> int:
    """OffsetsForLeaderEpoch(epoch): the first offset after the messages of leader epochs
    <= ``epoch``; the log end offset when ``epoch`` is still the leader's current epoch."""
    if r.leader_epoch <= epoch:
        return len(r.log)
    for off, rec in enumerate(r.log):
        if rec[3] > epoch:
            return off
    return len(r.log)


fast_replace_all(globals())  # generated _replace: cheaper successor construction
