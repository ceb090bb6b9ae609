"""The consumer group: leader assignment, positions through the coordinator, blocking rules.

KIP-253 §6: the leader assigns undeleted and marked-for-deletion partitions separately (each
list with the range assignor). §7: members report positions with ConsumerGroupPositionRequest
and read other members' positions from the coordinator. §8: the blocking rules — a new
partition waits until the group's position in its single parent passes the split offset
(step 4); a surviving partition delivers offsets beyond the threshold only after the marked
partitions that feed it are drained (step 5). The PartitionKeyRebalanceListener callbacks are
the unblock action (onPartitionKeyAssigned) and report-position (onPartitionKeyMaybeRevoked).

Simplifications (docs/model-partition-changes.md): members share one metadata view and a
rebalance (JoinGroup + SyncGroup + the epoch/offset look-ups of §8 steps 2-5.2) is one step;
a delivery commits its offset, so the group position is the committed offset.
"""
from __future__ import annotations

from kmc.model.kafka.kip253.broker import epoch_at, fetch_allowed, log_at, the_broker
from kmc.model.kafka.canon import replace_at
from kmc.model.kafka.clients import range_assign
from kmc.model.kafka.kip253.state import Part, end_offset, log_end
from kmc.model.kafka.kip253.znodes import znode


def blocking(cfg, w, p: int, u: int, t: int) -> Part:
    """§8 steps 2-5.2 for partition ``p`` under metadata (undeleted=u, total=t)."""
    if not cfg.flags.consumer_blocking:
        return Part(p, (), (), True)
    st, ks = w.store, cfg.keyspace
    waits, started = (), True
    log = log_at(w, p)
    earliest = 0 if log is None else log.start
    # step 4: startPosition not available or at the earliest offset, p >= initial count
    if p >= cfg.N and w.group.committed[p] == earliest:
        started = False
        waits = parent_thresholds(cfg, w, p)
    feeders = ()
    if p < u:  # step 5.1-5.2: marked partitions whose keys now go to p
        fs = []
        for q in ks.feeders(p, u, t):
            zq = znode(st, q)
            before = dict(zq.before) if zq is not None else {}
            fs.append((q, _threshold(w, p, before[p]) if p in before else 0))
        feeders = tuple(fs)
    return Part(p, waits, feeders, started)


def parent_thresholds(cfg, w, p: int):
    """§8 steps 4.1-4.3: ((parent, lowerOffsetThreshold), ...) from p's
    leaderEpochAfterCreation (PartitionLeaderEpochsForPartitionsRequest) and
    OffsetsForLeaderEpoch; None when p has no znode (the metadata ran ahead of or behind
    the store): the member retries the look-up (lookup-epochs)."""
    z = znode(w.store, p)
    if z is None:
        return None
    after = dict(z.after)
    return tuple((q, _threshold(w, q, after[q]))
                 for q in cfg.keyspace.parents(p, len(after), p + 1) if q in after)


def _threshold(w, p: int, epoch: int) -> int:
    """OffsetsForLeaderEpoch on partition ``p``: the offset after the last message of
    ``epoch`` (§8 4.3, 5.2)."""
    log = log_at(w, p)
    return 0 if log is None else end_offset(log, epoch_at(w, p), epoch)


def rebalance(m, w):
    """§6 + §8 steps 1-5.2: on a metadata change (a refresh, or a Fetch rejected for its
    count, §8.6), the members rejoin; the leader assigns undeleted and marked partitions
    separately; each member derives the blocking data of its partitions. A group whose
    metadata is still older than the broker's count stays fenced (``rejoin``) and rejoins
    again once newer metadata arrives."""
    cfg = m.cfg
    g = w.group
    basis = the_broker(w).meta
    if basis == g.basis and not g.rejoin:
        return None
    u, t = basis
    # metadata older than the broker's count would be fenced on the first Fetch: the
    # members keep refreshing until the UpdateMetadata that follows the LeaderAndIsr lands
    if not fetch_allowed(cfg, w, u):
        return None
    if cfg.flags.separate_lists:
        live = range_assign(range(u), cfg.members)
        gone = range_assign(range(u, t), cfg.members)
    else:
        live, gone = range_assign(range(t), cfg.members), ((),) * cfg.members
    members = tuple(tuple(blocking(cfg, w, p, u, t) for p in live[c] + gone[c])
                    for c in range(cfg.members))
    return w._replace(group=g._replace(basis=basis, members=members, rejoin=False))


def interesting(g) -> set:
    """Partitions whose position some member waits on (the coordinator's interest map, §7)."""
    out = set()
    for parts in g.members:
        for part in parts:
            if not part.started and part.waits:
                for q, _thr in part.waits:
                    out.add(q)
            for q, _thr in part.feeders:
                out.add(q)
    return out


def owner_part(g, c: int, p: int):
    for part in g.members[c]:
        if part.p == p:
            return part
    return None


def report_position(m, w, c: int, p: int):
    """§7: the owner of ``p`` sends its position in a ConsumerGroupPositionRequest because
    some member is interested (onPartitionKeyMaybeRevoked runs for ``p``)."""
    g = w.group
    if owner_part(g, c, p) is None or g.reported[p] == g.committed[p] \
            or p not in interesting(g):
        return None
    return w._replace(group=g._replace(reported=replace_at(g.reported, p, g.committed[p])))


def lookup_epochs(m, w, c: int, p: int):
    """§8 step 4.1 retried: p's partition znode exists now; derive its parent and
    lowerOffsetThreshold (the member still waits for the parent's position)."""
    cfg = m.cfg
    g = w.group
    part = owner_part(g, c, p)
    if part is None or part.started or part.waits is not None:
        return None
    waits = parent_thresholds(cfg, w, p)
    if waits is None:
        return None
    parts = tuple(x._replace(waits=waits) if x.p == p else x for x in g.members[c])
    return w._replace(group=g._replace(members=replace_at(g.members, c, parts)))


def unblock(m, w, c: int, p: int):
    """§8 step 4.4: the coordinator's position of the parent passed lowerOffsetThreshold:
    onPartitionKeyAssigned(p) runs and the member starts consuming ``p``."""
    g = w.group
    part = owner_part(g, c, p)
    if part is None or part.started or part.waits is None:
        return None
    if any(g.reported[q] < thr for q, thr in part.waits):
        return None
    parts = tuple(x._replace(started=True) if x.p == p else x for x in g.members[c])
    return w._replace(group=g._replace(members=replace_at(g.members, c, parts)))


def deletion_blocked(w, part: Part, offset: int) -> bool:
    """§8 step 5.3: delivering ``offset`` of ``part.p`` must wait for a feeding marked
    partition P3 unless the group drained P3 (its position reached P3's log end) or the
    offset is below the upperOffsetThreshold."""
    g = w.group
    for q, thr in part.feeders:
        if offset >= thr:
            log = log_at(w, q)
            if log is not None and g.reported[q] < log_end(log):
                return True
    return False


def deliver(m, w, c: int, p: int):
    """§8: member ``c`` fetches (carrying its undeleted_partition_count, step 6) and delivers
    the next message of ``p`` to the application; the offset is committed."""
    cfg = m.cfg
    g = w.group
    part = owner_part(g, c, p)
    if part is None or not part.started or g.rejoin \
            or not fetch_allowed(cfg, w, g.basis[0]):
        return None
    log = log_at(w, p)
    if log is None:
        return None
    off = g.committed[p]
    if off >= len(log.records) or deletion_blocked(w, part, off):
        return None
    key, prod, seq, _epoch = log.records[off]
    k = cfg.key_index[key]
    per_prod = w.ghost.delivered[prod]
    per_prod = replace_at(per_prod, k, per_prod[k] + ((seq, p),))
    ghost = w.ghost._replace(delivered=replace_at(w.ghost.delivered, prod, per_prod))
    committed = replace_at(g.committed, p, off + 1)
    return w._replace(group=g._replace(committed=committed), ghost=ghost)
