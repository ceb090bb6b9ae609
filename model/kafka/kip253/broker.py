"""The broker (one broker leads every partition): controller requests, Produce, Fetch checks.

KIP-253 §4: the broker records undeleted_partition_count from each LeaderAndIsr, atomically
with the new leader epochs, and rejects a Produce (and, §8.6, a Fetch) that carries another
count with InvalidPartitionMetadataException.

The broker is the cluster's ZooKeeper-era broker record (``model.kafka.broker``): its
``count`` and ``meta`` fields are KIP-253's, each partition's log a ``Replica`` that the
one broker leads, whose records are (key class, producer, seq, leader epoch).
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka.canon import replace_at
from kmc.model.kafka.kip253.channels import BROKER, INCARNATION, head_from
from kmc.model.kafka.messages import LAIR, STOP, UM, lair_response
from kmc.model.kafka.store import ZERO_ID
from kmc.model.kafka.zk.brokers import (
    leader_and_isr_applied, stop_replica_applied, update_metadata_applied,
)

INVALID_PARTITION_METADATA = "InvalidPartitionMetadataException"
UNKNOWN_PARTITION = "UnknownTopicOrPartition"


def the_broker(w):
    """The one broker's record."""
    return w.brokers[BROKER - 1]


def put(w, br):
    """``w`` with the one broker's record ``br``."""
    return w._replace(brokers=bk.put(w.brokers, BROKER, br))


def put_log(w, log):
    """``w`` with the one broker's log ``log`` in place of its partition's."""
    return put(w, bk.with_replica(w.brokers[BROKER - 1], log))


def hosted(w, p: int):
    """The broker's replica of partition ``p`` (its log), or None."""
    return bk.replica(w.brokers[BROKER - 1], p)


def new_log(p: int, epoch: int):
    """An empty log of partition ``p`` at leader ``epoch``, led by the one broker
    (KIP-253 predates topic IDs: ``ZERO_ID``)."""
    return bk.Replica(p, ZERO_ID, INCARNATION, BROKER, epoch, (), True, "")


#: request kind -> what it does to the broker's record (None: fenced)
APPLIED = {LAIR: leader_and_isr_applied, UM: update_metadata_applied,
           STOP: stop_replica_applied}


def deliver(m, w, msg):
    """Deliver the controller's request ``msg``, the oldest on its channel to the broker.

    Each request changes the broker's record as in the topic lifecycle
    (``model.kafka.zk.brokers``: ``leader_and_isr_applied`` takes the count and every higher
    leader epoch and creates the replicas the broker does not host; ``stop_replica_applied``
    deletes the replica; ``update_metadata_applied`` refreshes the metadata cache clients
    read), on the model's release line (``m.flags``). Besides, a LeaderAndIsr is answered
    when the controller asks for an answer, and a count change fences the group's parked
    Fetch (§8.6), so the group must rejoin; after a StopReplica the group coordinator on
    this broker deletes the committed offsets of the deleted partition (Kafka's
    handleDeletedPartitions), and no answer is sent (KIP-253's controller never reads one).
    A request from an older controller epoch changes nothing (the handlers' fence:
    STALE_CONTROLLER_EPOCH)."""
    cfg = m.cfg
    if head_from(w.net, msg.src, BROKER, m.net) != msg:
        return None
    net = m.net.deliver(w.net, msg)
    applied = APPLIED.get(msg.kind)
    if applied is None:
        raise ValueError(f"unknown controller request {msg!r}")  # pragma: no mutate
    b = applied(m, the_broker(w), msg)
    if b is None:
        return w._replace(net=net)  # fenced
    w = put(w, b)._replace(net=net)
    g = w.group
    if msg.kind == LAIR:
        if msg.count != g.basis[0] and not g.rejoin and cfg.flags.fetch_fencing \
                and cfg.flags.parked_fetch_fenced:
            g = g._replace(rejoin=True)  # the parked Fetch returns fenced
        if msg.ack and msg.epoch == w.ctl.epoch:
            net = m.net.send(net, lair_response(msg))  # a dead sender's connection is gone
        return w._replace(net=net, group=g)
    if msg.kind == STOP and cfg.flags.reset_offsets_on_delete:
        p = msg.partition
        g = g._replace(committed=replace_at(g.committed, p, 0),
                       reported=replace_at(g.reported, p, 0))
        return w._replace(group=g)
    return w


def produce_error(cfg, w, p: int, count: int):
    """The error a Produce to partition ``p`` carrying ``count`` gets, or None (§4 bullet 2)."""
    if hosted(w, p) is None:
        return UNKNOWN_PARTITION
    if cfg.flags.produce_fencing and count != the_broker(w).count:
        return INVALID_PARTITION_METADATA
    return None


def fetch_allowed(cfg, w, count: int) -> bool:
    """§8.6: a Fetch carrying another undeleted_partition_count is rejected; the consumer
    then refreshes metadata and rejoins (the Rebalance action)."""
    return not cfg.flags.fetch_fencing or count == the_broker(w).count
