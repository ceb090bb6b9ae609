"""The broker (one broker leads every partition): controller requests, Produce, Fetch checks.

KIP-253 §4: the broker records undeleted_partition_count from each LeaderAndIsr, atomically
with the new leader epochs, and rejects a Produce (and, §8.6, a Fetch) that carries another
count with InvalidPartitionMetadataException.
"""
from __future__ import annotations

from kmc.model.kafka.canon import replace_at
from kmc.model.kafka.controller import accepts
from kmc.model.kafka.kip253.channels import BROKER, head_from, leader_epochs
from kmc.model.kafka.messages import LAIR, STOP, UM, lair_response
from kmc.model.kafka.kip253.state import Log

INVALID_PARTITION_METADATA = "InvalidPartitionMetadataException"
UNKNOWN_PARTITION = "UnknownTopicOrPartition"


def handle(m, w, src: int):
    """Process the oldest request on the channel from controller endpoint ``src``.

    LeaderAndIsr (§4 bullet 1): take the count and every higher leader epoch, create the
    replicas it names that the broker does not host, answer when asked to; a count change
    fences the group's parked Fetch (§8.6), so the group must rejoin. UpdateMetadata:
    refresh the metadata cache clients read. StopReplica(delete=true): delete the replica;
    the group coordinator on this broker deletes the committed offsets of the deleted
    partition (Kafka's handleDeletedPartitions). A request from an older controller epoch is
    rejected (``model.kafka.controller.accepts``)."""
    cfg = m.cfg
    msg = head_from(w.net, src, BROKER, m.net)
    if msg is None:
        return None
    net = m.net.deliver(w.net, msg)
    b = w.broker
    if not accepts(b.ctrl_epoch, msg.epoch):
        return w._replace(net=net)
    b = b._replace(ctrl_epoch=msg.epoch)
    if msg.kind == LAIR:
        logs = b.logs
        for p, e in leader_epochs(msg):
            log = logs[p]
            if log is None:
                logs = replace_at(logs, p, Log(e, 0, ()))
            elif e > log.epoch:
                logs = replace_at(logs, p, log._replace(epoch=e))
        g = w.group
        if msg.count != g.basis[0] and not g.rejoin and cfg.flags.fetch_fencing \
                and cfg.flags.parked_fetch_fenced:
            g = g._replace(rejoin=True)  # the parked Fetch returns fenced
        if msg.ack and msg.epoch == w.ctl.epoch:
            net = m.net.send(net, lair_response(msg))  # a dead sender's connection is gone
        return w._replace(broker=b._replace(count=msg.count, logs=logs), net=net, group=g)
    if msg.kind == UM:
        return w._replace(broker=b._replace(meta=(msg.undeleted, msg.total)), net=net)
    if msg.kind == STOP:
        p = msg.partition
        g = w.group
        if cfg.flags.reset_offsets_on_delete:
            g = g._replace(committed=replace_at(g.committed, p, 0),
                           reported=replace_at(g.reported, p, 0))
        return w._replace(broker=b._replace(logs=replace_at(b.logs, p, None)), net=net,
                          group=g)
    raise ValueError(f"unknown controller request {msg!r}")  # pragma: no mutate


def produce_error(cfg, w, p: int, count: int):
    """The error a Produce to partition ``p`` carrying ``count`` gets, or None (§4 bullet 2)."""
    if w.broker.logs[p] is None:
        return UNKNOWN_PARTITION
    if cfg.flags.produce_fencing and count != w.broker.count:
        return INVALID_PARTITION_METADATA
    return None


def fetch_allowed(cfg, w, count: int) -> bool:
    """§8.6: a Fetch carrying another undeleted_partition_count is rejected; the consumer
    then refreshes metadata and rejoins (the Rebalance action)."""
    return not cfg.flags.fetch_fencing or count == w.broker.count
