"""How actions look in traces and message-sequence pictures.

``message`` returns (from lane, to lane, label) for actions that send or deliver a request;
labels carry what matters for KIP-253: the request, partition counts and epochs. Lane names
follow the shared helpers (``controller-c``, ``broker-1``).
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka.broker import lane as broker_lane
from kmc.model.kafka.controller import lane as controller_lane
from kmc.model.kafka.kip253 import clients, controller
from kmc.model.kafka.kip253.broker import log_at, produce_error, the_broker
from kmc.model.kafka.kip253.channels import BROKER
from kmc.model.kafka.kip253.znodes import total, undeleted, znode, znodes
from kmc.model.kafka.messages import delivery_text, endpoint_lane
from kmc.model.kafka.messages import label as request_label

BROKER_LANE = broker_lane(BROKER)


def lanes(cfg, candidates: int) -> list[str]:
    return (["admin"] + [controller_lane(c) for c in range(1, candidates + 1)]
            + ["zookeeper", BROKER_LANE]
            + [f"producer{i}" for i in range(len(cfg.scripts))]
            + ["coordinator"] + [f"consumer{c}" for c in range(cfg.members)])


def actor(a) -> str:
    kind = a[0]
    if kind in ("admin-alter", "delete-records"):
        return "admin"
    if kind.startswith("ctrl-") or kind == "failover":
        return controller_lane(a[1])
    if kind == "deliver":
        return endpoint_lane(a[1].dst)
    if kind in ("produce", "producer-refresh"):
        return f"producer{a[1]}"
    if kind == "group-rebalance":
        return "coordinator"
    return f"consumer{a[1]}"


def format_action(a) -> str:
    kind = a[0]
    if kind in ("produce", "producer-refresh"):
        return f"{kind}(producer{a[1]})"
    if kind in ("report-position", "lookup-epochs", "unblock", "member-deliver"):
        return f"{kind}(consumer{a[1]}, p{a[2]})"
    if kind == "delete-records":
        return f"DeleteRecords(p{a[1]})"
    if kind == "deliver":
        return delivery_text(a[1])
    if kind == "failover":
        return f"failover({controller_lane(a[1])} elected)"
    return f"{kind}({controller_lane(a[1])})" if kind.startswith("ctrl-") else kind


def _epochs(pairs) -> str:
    return "{" + ", ".join(f"p{p}:{e}" for p, e in pairs) + "}"


def message(m, a, w):
    """(from lane, to lane, label) of the request action ``a`` sends or delivers in ``w``
    (``m``: the model), or None (also for a send when ``w`` is None)."""
    cfg, kind = m.cfg, a[0]
    if kind == "deliver":  # the message is in the action: no state needed
        msg = a[1]
        return (endpoint_lane(msg.src), endpoint_lane(msg.dst), request_label(msg))
    if kind == "failover" or w is None:
        return None
    if kind.startswith("ctrl-"):
        return _controller_message(m, a, w)
    if kind == "admin-alter":
        n = cfg.ops[w.admin.alters]
        err = clients.alter_error(cfg, w.store, n)
        return ("admin", "zookeeper",
                f"AlterTopic(partitions={n})" + (f" -> {err}" if err else ""))
    if kind == "delete-records":
        return ("admin", BROKER_LANE,
                f"DeleteRecords(p{a[1]}, before={w.group.committed[a[1]]})")
    if kind == "produce":
        return _produce_message(cfg, a[1], w)
    if kind == "producer-refresh":
        return (BROKER_LANE, f"producer{a[1]}",
                f"Metadata(undeleted_partition_count={the_broker(w).meta[0]})")
    return _group_message(a, w)


def _produce_message(cfg, i, w):
    pr = w.producers[i]
    key = cfg.scripts[i][pr.sent]
    p = cfg.keyspace.partition(key, pr.count)
    err = produce_error(cfg, w, p, pr.count)
    return (f"producer{i}", BROKER_LANE,
            f"Produce(key={key}, seq={pr.sent}, p{p}, "
            f"undeleted_partition_count={pr.count}) -> {err or 'ok'}")


def _group_message(a, w):
    kind, g = a[0], w.group
    if kind == "group-rebalance":
        u, t = the_broker(w).meta
        return ("coordinator", "consumer0",
                f"SyncGroup(undeleted_partition_count={u}, partitions={t})")
    c, p = a[1], a[2]
    if kind == "report-position":
        return (f"consumer{c}", "coordinator",
                f"ConsumerGroupPositionRequest(p{p} position={g.committed[p]}) "
                f"[onPartitionKeyMaybeRevoked(p{p})]")
    if kind == "lookup-epochs":
        z = znode(w.store, p)
        return ("coordinator", f"consumer{c}",
                f"PartitionLeaderEpochsForPartitionsResponse(p{p} "
                f"leader_epoch_after_creation={_epochs(z.after)})")
    if kind == "unblock":
        part = next(x for x in g.members[c] if x.p == p)
        seen = ", ".join(f"p{q} position={g.reported[q]} >= {thr}" for q, thr in part.waits)
        return ("coordinator", f"consumer{c}",
                f"ConsumerGroupPositionResponse({seen}) [onPartitionKeyAssigned(p{p})]")
    if kind == "member-deliver":
        off = g.committed[p]
        key, prod, seq, epoch = log_at(w, p).records[off]
        return (BROKER_LANE, f"consumer{c}",
                f"Fetch(p{p}, offset={off}, undeleted_partition_count={g.basis[0]}) -> "
                f"key={key} producer{prod} seq={seq} leader_epoch={epoch}")
    return None


def _controller_message(m, a, w):
    kind = a[0]
    after = controller.STEPS[kind](m, w)
    if after is None:
        return None
    me = controller_lane(w.ctl.active)
    sent = [ch for ch in after.net if ch not in w.net]  # channels that changed
    labels = []
    for ch, msgs in sent:
        old = dict(w.net).get(ch, ())
        labels += [request_label(x) for x in msgs[len(old):] if x.dst == BROKER]
    if labels:
        return (me, BROKER_LANE, "; ".join(labels))
    st0, st1 = w.store, after.store
    if kind == "ctrl-recover":
        return ("zookeeper", me, f"read topic znode (undeleted_partition_count="
                f"{undeleted(st0)}, partitions={total(st0)}) -> {after.mem.phase}")
    return (me, "zookeeper", "; ".join(_store_changes(st0, st1)) or kind)


def _store_changes(st0, st1) -> list:
    changes = []
    if undeleted(st1) != undeleted(st0):
        changes.append(f"undeleted_partition_count={undeleted(st1)}")
    if total(st1) != total(st0):
        changes.append(f"assignment: {total(st1)} partitions")
    for p in range(max(len(znodes(st0)), len(znodes(st1)))):
        z0, z1 = znode(st0, p), znode(st1, p)
        if z0 == z1:
            continue
        if z1 is None:
            changes.append(f"delete p{p} znode")
        elif z0 is None:
            changes.append(f"create p{p} leaderEpochAfterCreation={_epochs(z1.after)}")
        elif z1.before != z0.before:
            changes.append(f"p{p} leaderEpochBeforeDeletion={_epochs(z1.before)}")
        elif z1.leader_epoch != z0.leader_epoch:
            changes.append(f"p{p} leaderEpoch {z0.leader_epoch}->{z1.leader_epoch}")
    return changes


def format_state(w) -> str:
    """One state as compact readable text, parts joined by " | " (``repr`` is the canonical
    encoding the fingerprint hashes)."""
    st, b, g = w.store, the_broker(w), w.group
    zn = " ".join(f"p{p}:e{z.leader_epoch}" + (f" after={_epochs(z.after)}" if z.after else "")
                  + (f" before={_epochs(z.before)}" if z.before else "")
                  for p, z in enumerate(znodes(st)))
    logs = " ".join(f"p{log.partition}:e{bk.hosted_of(b, log.partition).leader_epoch}"
                    f"[{log.start}:{len(log.records)}]" for log in b.logs)
    members = "; ".join(
        f"consumer{c}: " + ", ".join(
            f"p{x.p}" + ("" if x.started else " waiting" if x.waits is None
                         else f" waits {_epochs(x.waits)}")
            + (f" feeders {_epochs(x.feeders)}" if x.feeders else "") for x in parts)
        for c, parts in enumerate(g.members))
    return " | ".join([
        f"store: partitions={total(st)} undeleted_partition_count={undeleted(st)} {zn}",
        f"controller: {controller_lane(w.ctl.active)} epoch={w.ctl.epoch} "
        f"phase={w.mem.phase}",
        f"broker: ctl_epoch={b.ctl_epoch} count={b.count} metadata={b.meta} {logs}",
        "in flight: " + ("; ".join(request_label(m) for _ch, msgs in w.net for m in msgs)
                         or "-"),
        "producers: " + ", ".join(f"count={p.count} sent={p.sent}" + (" stale" if p.stale
                                                                       else "")
                                  for p in w.producers),
        f"group: basis={g.basis} committed={g.committed} reported={g.reported}"
        + (" rejoin" if g.rejoin else "") + f"; {members}",
    ])
