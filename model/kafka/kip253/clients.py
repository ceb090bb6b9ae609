"""Producers and the admin: the clients that change what the topic holds.

Producers (KIP-253 §5): a metadata cache (undeleted_partition_count), the partitioner
(modulo or linear hashing), a script of keyed messages sent one at a time with per-producer
sequence numbers (max.in.flight = 1, so the order is the production order), and a retry with
refreshed metadata after a retriable error. A Produce is one action: the request and its
response, which is exact for one message in flight.

Admin (KIP-4 AlterTopic / CreatePartitions, KIP-253 §2-§3 first bullets): a script of target
partition counts, each validated against the metadata store and either written to the topic
znode or answered with an error code; plus deleteRecords on marked partitions.
"""
from __future__ import annotations

from kmc.model.kafka.kip253.broker import epoch_at, log_at, produce_error, put_log, the_broker
from kmc.model.kafka.kip253.controller import expansion_pending
from kmc.model.kafka.kip253.znodes import total, undeleted, written, znode, znodes
from kmc.model.kafka.canon import replace_at

# error codes an AlterTopic can return
LEGACY_FEWER = "IncreasePartitionsNotAllowed"  # KIP-4 Alter Topic 3.1 (fewer partitions)
MARKED = "PartitionMarkedForDeletion"          # KIP-253 Goals: no expansion while marked
BELOW_INITIAL = "BelowInitialPartitionCount"   # KIP-253 §3: no shrink below the initial count
IN_PROGRESS = "ExpansionInProgress"            # while partition znodes are still missing
UNCHANGED = "InvalidPartitions"                # the count the topic already has


# ---- producers ---------------------------------------------------------------------------
def produce(m, w, i: int):
    """§5 + §4: pick the partition with the producer's count, send Produce carrying that
    count; on InvalidPartitionMetadataException (or an unknown partition) mark the metadata
    stale so the producer refreshes and retries the same message."""
    cfg = m.cfg
    pr = w.producers[i]
    script = cfg.scripts[i]
    if pr.stale or pr.sent >= len(script):
        return None
    key = script[pr.sent]
    p = cfg.keyspace.partition(key, pr.count)
    if produce_error(cfg, w, p, pr.count) is not None:
        return w._replace(producers=replace_at(w.producers, i, pr._replace(stale=True)))
    log = log_at(w, p)
    log = log._replace(records=log.records + ((key, i, pr.sent, epoch_at(w, p)),))
    return put_log(w, log)._replace(
        producers=replace_at(w.producers, i, pr._replace(sent=pr.sent + 1)))


def refresh_metadata(m, w, i: int):
    """§5 bullet 3: "Producer will update metadata and retry" — and, as every Kafka client,
    refresh periodically (metadata.max.age.ms), which is how today's producers learn a new
    count. Only a producer with messages left to send refreshes (afterwards it is idle)."""
    cfg = m.cfg
    pr = w.producers[i]
    if pr.sent >= len(cfg.scripts[i]):
        return None
    count = the_broker(w).meta[0]
    new = pr._replace(count=count, stale=pr.stale and not cfg.flags.retry_after_refresh)
    if new == pr:
        return None
    return w._replace(producers=replace_at(w.producers, i, new))


# ---- admin -------------------------------------------------------------------------------
def alter_error(cfg, st, n: int):
    """The error code of AlterTopic(partitions=n) against store ``st``, or None."""
    u = undeleted(st)
    if n > u:
        if len(znodes(st)) > u:
            return MARKED  # a partition is marked (or being marked) for deletion
        if expansion_pending(st):
            return IN_PROGRESS
        return None
    if n < u:
        if not cfg.flags.allow_shrink:
            return LEGACY_FEWER
        if n < cfg.N:
            return BELOW_INITIAL
        if expansion_pending(st):
            return IN_PROGRESS
        return None
    return UNCHANGED


def alter_topic(m, w):
    """KIP-4 AlterTopic (Partitions defined) / KIP-253 §2 bullet 1 and §3 bullet 1: a larger
    count writes the new assignment to the topic znode; a smaller one writes
    undeleted_partition_count; both trigger the controller's topic znode listener."""
    cfg = m.cfg
    a = w.admin
    if a.alters >= len(cfg.ops):
        return None
    n = cfg.ops[a.alters]
    st = w.store
    err = alter_error(cfg, st, n)
    if err is not None:
        return w._replace(admin=a._replace(alters=a.alters + 1,
                                           alter_errors=a.alter_errors + (err,)))
    st = written(st, total_=n) if n > undeleted(st) else written(st, undeleted_=n)
    return w._replace(store=st, admin=a._replace(alters=a.alters + 1))


def delete_records(m, w, p: int):
    """§3 bullet 4: a marked partition's "size reaches zero, due to either retention or
    AdminClient.deleteRecords(...)": modelled as one deleteRecords once the group has consumed
    the whole partition (retention of unconsumed data is data loss outside this KIP)."""
    st = w.store
    if p >= total(st) or p < undeleted(st):
        return None
    z = znode(st, p)
    log = log_at(w, p)
    if z is None or not z.before or log is None:
        return None
    end = len(log.records)
    if log.start == end or w.group.committed[p] != end:
        return None
    return put_log(w, log._replace(start=end))
