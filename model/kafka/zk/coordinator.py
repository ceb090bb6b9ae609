"""The group coordinator on a broker: what a controller request delivered to the broker
does to the consumer group (``World.group``). Only KIP-253's procedure runs a group, so a
World without one (the topic lifecycle's) is left as it is; the switches below are the
procedure's variant (``m.cfg.flags``, ``model.kafka.kip253.variants``).

Both run after the broker's record took the request (``brokers``), in the order of Kafka's
request handlers (KafkaApis.handleLeaderAndIsrRequest and handleStopReplicaRequest: the
replica manager first, then the coordinators).
"""
from __future__ import annotations

from kmc.model.kafka.canon import replace_at


def on_leader_and_isr(m, w, msg):
    """KIP-253 §8.6: a LeaderAndIsr that changes undeleted_partition_count answers the
    group's parked Fetch with the fencing error, so the group must rejoin (the
    ``group-rebalance`` step). Kafka has no such fence: it is the KIP's proposal, on in the
    ``kip253`` variant and off in ``kip253-unfenced-park``."""
    g = w.group
    flags = m.cfg.flags
    if msg.count != g.basis[0] and not g.rejoin and flags.fetch_fencing \
            and flags.parked_fetch_fenced:
        return w._replace(group=g._replace(rejoin=True))
    return w


def on_stop_replica(m, w, msg):
    """The coordinator deletes the committed offsets of the deleted partition (and its
    copy of the positions KIP-253 §7 reports), so a partition created again later starts
    from offset 0 (GroupCoordinator.handleDeletedPartitions, KAFKA-2000; off in
    ``kip253-keeps-offsets``). Kafka calls it from handleUpdateMetadataRequest, for the
    partitions an UpdateMetadata shows deleted; the procedure's StopReplica stands for the
    deletion's requests (docs/model-partition-changes.md, "Simplifications")."""
    if not m.cfg.flags.reset_offsets_on_delete:
        return w
    g, p = w.group, msg.partition
    return w._replace(group=g._replace(committed=replace_at(g.committed, p, 0),
                                       reported=replace_at(g.reported, p, 0)))
