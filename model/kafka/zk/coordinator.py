"""The group coordinator on a broker: what a controller request delivered to the broker
does to the consumer group (``World.group``). Only KIP-253's procedure runs a group, so a
World without one (the topic lifecycle's) is left as it is; the switches below are the
procedure's variant (``m.cfg.flags``, ``model.kafka.kip253.variants``).

Each runs after the broker's record took the request (``brokers``), in the order of
Kafka's request handlers (KafkaApis.handleLeaderAndIsrRequest, handleStopReplicaRequest,
handleUpdateMetadataRequest: the replica manager or the metadata cache first, then the
coordinators).
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
    ``kip253-keeps-offsets``). Kafka's broker does it on an UpdateMetadata instead
    (``on_update_metadata``); here the procedure's StopReplica stands for the deletion's
    requests, except in ``kip253-offsets-by-metadata``."""
    flags = m.cfg.flags
    if not flags.reset_offsets_on_delete or flags.offsets_by_metadata:
        return w
    return _reset(w, (msg.partition,))


def on_update_metadata(m, w, msg, before):
    """``kip253-offsets-by-metadata``: the coordinator deletes the committed offsets (and
    the reported positions) of the partitions an UpdateMetadata no longer advertises, as
    Kafka's broker does (KafkaApis.handleUpdateMetadataRequest passes the partitions
    ZkMetadataCache.updateMetadata found deleted to GroupCoordinator.
    handleDeletedPartitions). ``before``: the broker's metadata cache before the request,
    (undeleted, total). Kafka's request marks each deleted partition (leader
    LeaderDuringDelete); KIP-253's carries the topic's counts, so the partitions from the
    request's total up to the cache's are the deleted ones. A fenced request (an older
    controller epoch) never gets here, and its deletions are never made."""
    flags = m.cfg.flags
    if not flags.offsets_by_metadata or not flags.reset_offsets_on_delete \
            or msg.total >= before[1]:
        return w
    return _reset(w, range(msg.total, before[1]))


def _reset(w, partitions):
    g = w.group
    committed, reported = g.committed, g.reported
    for p in partitions:
        committed = replace_at(committed, p, 0)
        reported = replace_at(reported, p, 0)
    return w._replace(group=g._replace(committed=committed, reported=reported))
