"""Renaming brokers everywhere they occur, for the broker-symmetry representative."""
from __future__ import annotations

from kmc.model.kafka.store import PartitionRecord
from kmc.model.kafka.zk.state import Client, Meta


def _b(mp, x):
    return mp.get(x, x)  # controllers (negative) and NO_LEADER (-1) stay


def _msg(mp, m):
    k = m.kind
    m = m._replace(src=_b(mp, m.src), dst=_b(mp, m.dst))
    if k == "LeaderAndIsr":
        m = m._replace(parts=tuple(p._replace(leader=_b(mp, p.leader)) for p in m.parts))
    return m


def _client(mp, c: Client) -> Client:
    if c.meta is None:
        return c
    meta = Meta(c.meta.topic_id, c.meta.inc,
                tuple((_b(mp, lead), le) for lead, le in c.meta.leaders))
    return c._replace(meta=meta)


def rename(model, w, mp: dict):
    """``w`` with broker ``b`` renamed to ``mp[b]`` everywhere."""
    topics = tuple(
        t._replace(partitions=tuple(
            PartitionRecord(tuple(_b(mp, x) for x in p.replicas), _b(mp, p.leader),
                            p.leader_epoch, tuple(_b(mp, x) for x in p.isr))
            for p in t.partitions))
        for t in w.store.topics)
    brokers = [None] * len(w.brokers)
    for i, br in enumerate(w.brokers):
        hosted = tuple(h._replace(leader=_b(mp, h.leader)) for h in br.hosted)
        brokers[mp[i + 1] - 1] = br._replace(hosted=hosted)
    pending = tuple(sorted((_b(mp, b), p, t, inc) for b, p, t, inc in w.mem.pending))
    reads = tuple(sorted((_b(mp, r), a, g) for r, a, g in w.ghost.reads))
    return w._replace(
        store=w.store._replace(topics=topics),
        brokers=tuple(brokers),
        mem=w.mem._replace(pending=pending),
        net=model.net.rename(w.net, lambda m: _msg(mp, m)),
        producer=_client(mp, w.producer),
        consumer=_client(mp, w.consumer),
        ghost=w.ghost._replace(
            reads=reads,
            leaders=tuple(sorted((i, p, e, _b(mp, x)) for i, p, e, x in w.ghost.leaders)),
            appends=tuple(sorted((_b(mp, x), p, e, f) for x, p, e, f in w.ghost.appends))),
    )
