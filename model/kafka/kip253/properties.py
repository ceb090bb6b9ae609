"""The partition model's properties: each declared once, as a formula over a relational view.

The view (``view``) turns a state into a few relations:

- ``Produced(key, producer, seq)``: the producer's message ``seq`` (key class ``key``) was
  acknowledged;
- ``Delivered(key, producer, seq, position, partition)``: the group delivered it, as the
  ``position``-th delivery of that key and producer, from ``partition``;
- ``ProducedTo(key, producer, seq, partition)``: the record sits in that partition's log;
- ``WaitsOn(member, partition, parent)`` / ``Waiting(member, partition)``: KIP-253 §8 step 4
  blocks ``partition`` (owned by ``member``) on ``parent``;
- ``Blocked(member, partition)``: the member may not deliver the partition's next offset (step
  4 or step 5); ``Undelivered(partition)``: the group's position is below the log end;
- ``Split(parent, child)``: ``child`` was created from ``parent``'s keys (its
  leaderEpochAfterCreation map and the partitioner); ``Merge(marked, survivor)``: a marked
  partition's keys now go to ``survivor``;
- ``Removed(p)``, ``Live(p)``, ``FailoverIn(kind)``, ``AdminError(code)``: history facts;
- ``Sent(producer, sent, script)``: messages the producer has sent, of its script's;
- ``InProcedure(phase)``: the controller is in a step of a procedure (its phase, other
  than idle; the liveness property ProcedureEventuallyCompletes reads it).

All properties of a run share one view (``relations_view``): each relation declares the
fields of the state it reads (``FIELDS``) and is memoised by their values, and the
property checker memoises a verdict by the fields of the property's relations.
"""
from __future__ import annotations

from kmc.invariants.declare import declare
from kmc.invariants.fieldview import FieldView
from kmc.invariants.logic import And, Rel, exists, forall, implies, variables
from kmc.model.kafka.kip253 import group
from kmc.model.kafka.kip253.broker import the_broker
from kmc.model.kafka.kip253.clients import LEGACY_FEWER, MARKED
from kmc.model.kafka.kip253.controller import IDLE
from kmc.model.kafka.kip253.state import log_end
from kmc.model.kafka.kip253.znodes import total, undeleted, znode, znodes

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

Produced = Rel("Produced", 3, ("key", "producer", "seq"))
Delivered = Rel("Delivered", 5, ("key", "producer", "seq", "position", "partition"))
ProducedTo = Rel("ProducedTo", 4, ("key", "producer", "seq", "partition"))
WaitsOn = Rel("WaitsOn", 3, ("member", "partition", "parent"))
Waiting = Rel("Waiting", 2, ("member", "partition"))
Blocked = Rel("Blocked", 2, ("member", "partition"))
Undelivered = Rel("Undelivered", 1, ("partition",))
Split = Rel("Split", 2, ("parent", "child"))
Merge = Rel("Merge", 2, ("marked", "survivor"))
Removed = Rel("Removed", 1, ("partition",))
Live = Rel("Live", 1, ("partition",))
FailoverIn = Rel("FailoverIn", 1, ("procedure",))
AdminError = Rel("AdminError", 1, ("code",))
Sent = Rel("Sent", 3, ("producer", "sent", "script"))

k, pr, s, s1, s2, i, i1, i2, q, q1, q2, c, p, x, n = variables(
    "k pr s s1 s2 i i1 i2 q q1 q2 c p x n")

# always: per key and producer, the group delivers messages in production order — no
# delivery of a message while an earlier acknowledged one of the same key is undelivered
IN_ORDER = forall((k, pr, s1, s2, i2, q2),
                  implies(Produced(k, pr, s1) & Delivered(k, pr, s2, i2, q2) & (s1 < s2),
                          exists((i1, q1), Delivered(k, pr, s1, i1, q1) & (i1 < i2))))
# always: a blocked new partition waits on exactly one parent (linear hashing's promise)
ONE_PARENT = forall((c, p), implies(Waiting(c, p), exists(q, WaitsOn(c, p, q) & forall(
    q2, implies(WaitsOn(c, p, q2), q2 == q)))))
# quiescent: once settled, every acknowledged message was delivered
NO_LOST = forall((k, pr, s), implies(Produced(k, pr, s),
                                     exists((i, q), Delivered(k, pr, s, i, q))))
# quiescent: once settled, no member is blocked on a partition that still has data
NOT_STUCK = forall((c, p), implies(Blocked(c, p), ~Undelivered(p)))
# quiescent: once settled, the group delivered every record of every partition's log, from
# that partition (a partition id created again is read from its start)
READS_ALL = forall((k, pr, s, q), implies(ProducedTo(k, pr, s, q),
                                          exists(i, Delivered(k, pr, s, i, q))))
# quiescent: once settled, every producer has sent its whole script
PRODUCER_FINISHES = forall((pr, s, n), implies(Sent(pr, s, n), s == n))
# always: an acknowledged message is in some partition's log until the group delivered it
NO_ACK_LOSS = forall((k, pr, s), implies(Produced(k, pr, s), exists(q, ProducedTo(
    k, pr, s, q)) | exists((i, q1), Delivered(k, pr, s, i, q1))))

# sometimes (witnesses that make the invariants meaningful)
KEY_MOVED_ON_SPLIT = exists((k, pr, s1, s2, q1, q2), And(
    ProducedTo(k, pr, s1, q1), ProducedTo(k, pr, s2, q2), Split(q1, q2), s1 < s2))
CHILD_AFTER_PARENT = exists((k, pr, s1, s2, i1, i2, q1, q2), And(
    Delivered(k, pr, s1, i1, q1), Delivered(k, pr, s2, i2, q2), Split(q1, q2), i1 < i2))
KEY_MOVED_ON_MERGE = exists((k, pr, s1, s2, q1, q2), And(
    ProducedTo(k, pr, s1, q1), ProducedTo(k, pr, s2, q2), Merge(q1, q2), s1 < s2))
REMOVED = exists(p, Removed(p))
EXPANDED_AFTER_REMOVAL = exists(p, Removed(p) & Live(p))
FAILOVER_MID_EXPANSION = exists(x, FailoverIn(x) & (x == "expand"))
FAILOVER_MID_SHRINK = exists(x, FailoverIn(x) & (x == "shrink"))
SHRINK_REJECTED = exists(x, AdminError(x) & (x == LEGACY_FEWER))
EXPANSION_REFUSED = exists(x, AdminError(x) & (x == MARKED))

#: name -> (kind, formula, description); the sometimes ones are chosen per scenario
DECLARATIONS = {
    "InOrderKeyedDelivery": ("always", IN_ORDER,
                             "per key and producer, deliveries follow production order"),
    "NewPartitionHasOneParent": ("always", ONE_PARENT,
                                 "a blocked new partition waits on exactly one parent"),
    "NoLostMessage": ("quiescent", NO_LOST, "settled: every acknowledged message delivered"),
    "NoConsumerStuck": ("quiescent", NOT_STUCK,
                        "settled: no member blocked on a partition with data"),
    "ConsumerReadsAll": ("quiescent", READS_ALL,
                         "settled: the group delivered every record of every partition's log"),
    "ProducerFinishes": ("quiescent", PRODUCER_FINISHES,
                         "settled: every producer has sent its whole script"),
    "NoAcknowledgedLoss": ("always", NO_ACK_LOSS,
                           "an acknowledged message stays in a log until it is delivered"),
    "KeyMovedOnSplit": ("sometimes", KEY_MOVED_ON_SPLIT,
                        "a split happened and a key's later message went to the child"),
    "ChildDeliveredAfterParent": ("sometimes", CHILD_AFTER_PARENT,
                                  "a key's message was delivered from a new partition after "
                                  "its earlier one was delivered from the parent"),
    "KeyMovedOnMerge": ("sometimes", KEY_MOVED_ON_MERGE,
                        "a key's later message went to the survivor of a marked partition"),
    "MarkedPartitionRemoved": ("sometimes", REMOVED, "a marked partition drained and removed"),
    "ExpandedAfterRemoval": ("sometimes", EXPANDED_AFTER_REMOVAL,
                             "a removed partition id was created again by an expansion"),
    "FailoverMidExpansion": ("sometimes", FAILOVER_MID_EXPANSION,
                             "a controller failover hit an unfinished expansion"),
    "FailoverMidShrink": ("sometimes", FAILOVER_MID_SHRINK,
                          "a controller failover hit an unfinished deletion"),
    "ShrinkRejected": ("sometimes", SHRINK_REJECTED,
                       "AlterTopic to fewer partitions got KIP-4's legacy error"),
    "ExpansionRefusedWhileMarked": ("sometimes", EXPANSION_REFUSED,
                                    "an expansion was refused while a partition was marked "
                                    "for deletion (KIP-253 Goals)"),
}

#: name -> the violation in words, from the offending tuple (``Property.sentence``)
SENTENCES = {
    "InOrderKeyedDelivery": lambda o: (
        f"the group delivered message {o['s2']} of key {o['k']} from producer{o['pr']} "
        f"(from partition {o['q2']}) while the key's earlier message {o['s1']} was still "
        "undelivered"),
    "NewPartitionHasOneParent": lambda o: (
        f"consumer{o['c']} waits on partition {o['p']} for more than one parent"),
    "NoLostMessage": lambda o: (
        f"nothing is left to do, yet message {o['s']} of key {o['k']} from producer{o['pr']} "
        "was acknowledged and never delivered"),
    "NoConsumerStuck": lambda o: (
        f"nothing is left to do, yet consumer{o['c']} is blocked on partition {o['p']}, "
        "which still has undelivered data"),
    "ConsumerReadsAll": lambda o: (
        f"nothing is left to do, yet message {o['s']} of key {o['k']} from producer{o['pr']} "
        f"sits in partition {o['q']} and the group never delivered it from there"),
    "ProducerFinishes": lambda o: (
        f"nothing is left to do, yet producer{o['pr']} has sent {o['s']} of the {o['n']} "
        "messages of its script"),
    "NoAcknowledgedLoss": lambda o: (
        f"message {o['s']} of key {o['k']} from producer{o['pr']} was acknowledged, yet no "
        "log holds it and the group never delivered it"),
}

INVARIANTS = ("InOrderKeyedDelivery", "NewPartitionHasOneParent", "NoLostMessage",
              "NoConsumerStuck", "ConsumerReadsAll", "ProducerFinishes", "NoAcknowledgedLoss")
WITNESSES = tuple(n for n in DECLARATIONS if n not in INVARIANTS)


# ---- the view -----------------------------------------------------------------------------
def _produced(cfg, w):
    return {(script[n], i, n) for i, (script, prod) in enumerate(zip(cfg.scripts, w.producers))
            for n in range(prod.sent)}


def _delivered(cfg, w):
    keys = cfg.keys
    return {(keys[ki], prod, seq, pos, part)
            for prod, per_key in enumerate(w.ghost.delivered)
            for ki, seqs in enumerate(per_key)
            for pos, (seq, part) in enumerate(seqs)}


def _produced_to(cfg, w):
    return {(key, prod, seq, log.partition) for log in the_broker(w).logs
            for key, prod, seq, _e in log.records}


def _waits_on(cfg, w):
    return {(m, part.p, parent) for m, parts in enumerate(w.group.members) for part in parts
            if not part.started and part.waits for parent, _thr in part.waits}


def _waiting(cfg, w):
    return {(m, part.p) for m, parts in enumerate(w.group.members) for part in parts
            if not part.started and part.waits is not None}


def _blocked(cfg, w):
    g = w.group
    return {(m, part.p) for m, parts in enumerate(g.members) for part in parts
            if not part.started or group.deletion_blocked(w, part, g.committed[part.p])}


def _undelivered(cfg, w):
    committed = w.group.committed
    return {(log.partition,) for log in the_broker(w).logs
            if committed[log.partition] < log_end(log)}


def _split(cfg, w):
    ks = cfg.keyspace
    return {(parent, child) for child, z in enumerate(znodes(w.store)) if z.after
            for parent in ks.parents(child, len(z.after), child + 1)}


def _merge(cfg, w):
    st, ks = w.store, cfg.keyspace
    u, t = undeleted(st), total(st)
    return {(m, p) for p in range(u) for m in ks.feeders(p, u, t)
            if znode(st, m) is not None and znode(st, m).before}


def _live(cfg, w):
    st = w.store
    return {(p,) for p in range(min(total(st), len(znodes(st))))}


RELATIONS = {
    "Produced": _produced, "Delivered": _delivered, "ProducedTo": _produced_to,
    "WaitsOn": _waits_on, "Waiting": _waiting, "Blocked": _blocked,
    "Undelivered": _undelivered, "Split": _split, "Merge": _merge, "Live": _live,
    "Removed": lambda cfg, w: {(p,) for p in w.ghost.removed},
    "FailoverIn": lambda cfg, w: {(kind,) for kind in w.ghost.failover_in},
    "AdminError": lambda cfg, w: {(e,) for e in w.admin.alter_errors},
    "Sent": lambda cfg, w: {(i, prod.sent, len(script))
                            for i, (script, prod) in enumerate(zip(cfg.scripts, w.producers))},
    "InProcedure": lambda cfg, w: {(w.mem.phase,)} if w.mem.phase != IDLE else set(),
}


#: the fields of the state each relation reads, and no other: the view memoises a
#: relation by these fields' values, and the property checker a verdict by the fields of
#: the property's relations (``invariants.fieldview``, ``invariants.fused``)
FIELDS = {
    "Produced": ("producers",), "Sent": ("producers",),
    "Delivered": ("ghost",), "Removed": ("ghost",), "FailoverIn": ("ghost",),
    "ProducedTo": ("brokers",),
    "WaitsOn": ("group",), "Waiting": ("group",),
    "Blocked": ("brokers", "group"), "Undelivered": ("brokers", "group"),
    "Split": ("store",), "Merge": ("store",), "Live": ("store",),
    "AdminError": ("admin",), "InProcedure": ("mem",),
}


def field_view(cfg, relations: dict, fields: dict) -> FieldView:
    """The view of ``relations`` (name -> ``fn(cfg, w)``) for one configuration: the
    relations that read the same fields (``fields``: name -> field names) are one part."""
    by_fields: dict = {}
    for name, fn in relations.items():
        by_fields.setdefault(fields[name], {})[name] = fn
    return FieldView([(f, _part(cfg, fns)) for f, fns in by_fields.items()])


def _part(cfg, fns: dict):
    return lambda w: {n: fn(cfg, w) for n, fn in fns.items()}


def relations_view(cfg) -> FieldView:
    """Every relation above, for configuration ``cfg``."""
    return field_view(cfg, RELATIONS, FIELDS)


def properties_for(cfg, view=None) -> list:
    """The invariants, plus the witnesses the run's scenario asks for, over ``view``
    (``relations_view(cfg)`` by default)."""
    unknown = [n for n in cfg.witnesses if n not in WITNESSES]
    if unknown:
        raise ValueError(f"unknown witness {unknown[0]!r}: use one of {', '.join(WITNESSES)}")
    view = relations_view(cfg) if view is None else view
    out = []
    for name in INVARIANTS + tuple(n for n in WITNESSES if n in cfg.witnesses):
        kind, formula, text = DECLARATIONS[name]
        out.append(declare(kind, name, formula, view, text,
                           SENTENCES.get(name)))
    return out
