"""The partition model's bookkeeping invariants: what the procedures leave behind.

properties.py states what the application sees (ordering, completeness). The invariants
here state what the protocol's own records must say, each from a sentence of KIP-253
(`../shared/seeds/001_*.txt`) or of the Kafka client it extends; a bug in a procedure step
usually breaks one of these before it reorders a key:

- quiescent **MetadataPropagated**: once settled, the controller is idle and the broker's
  undeleted_partition_count (from LeaderAndIsr, §4), its metadata cache (from
  UpdateMetadata, §2 bullet 5 and §3 bullet 3) and the group's assignment basis all equal
  the topic znode's counts;
- quiescent **ReplicasMatchStore**: once settled, no partition is marked for deletion any
  more (§3 bullet 4: drained, StopReplica, removed from the assignment and the znode), a
  partition znode exists exactly for the partitions of the assignment, and the broker hosts
  exactly those, each at its znode's leader epoch (§2 bullet 3, §3 bullet 2);
- always **PositionWithinLog**: the group's position in a hosted partition lies between the
  log start and the log end, and the coordinator's copy (§7) never runs ahead of it; a
  position outside the log is what a consumer that kept a deleted partition's offset sees;
- always **AssignmentIsRange**: every partition of the group's metadata is assigned to
  exactly one member, and each member's share of the undeleted and of the marked
  partitions differs from another member's by at most one (§6: both lists with the range
  assignor, Kafka's RangeAssignor.assignPartitions);
- always **EpochBumpedAtSplit**: a partition created by an expansion names, in its
  leaderEpochAfterCreation, epochs its parents have left behind: each parent's znode epoch is
  above the recorded one (§2 bullets 3-4: the controller increments the existing
  partitions' epochs, then creates the new znodes with the epochs from before the
  increment), so the split offset OffsetsForLeaderEpoch(parent, recorded) is final;
- always **MarksAgree**: the partitions one deletion marks record the same epochs in their
  leaderEpochBeforeDeletion (§3 bullet 2: the controller writes the map of every partition
  P1 >= undeleted_partition_count from the current epochs, then bumps them once). Two
  marks whose maps name the same partitions come from one deletion: a later deletion
  lowers undeleted_partition_count, and no expansion runs while a partition is marked;
- always **EpochBumpedAtMark**: once the deletion's bump is done (no mark left to write,
  the controller neither before its bump nor recovering after a failover), every marked
  partition's leaderEpochBeforeDeletion names epochs the undeleted partitions have left
  behind, so the threshold OffsetsForLeaderEpoch(P2, recorded) is final (§3 bullet 2,
  §8 step 5.2; a new controller that skips the bump breaks it, the docs' first finding);
- always **ResponsesAwaited**: a LeaderAndIsrResponse is on the wire only to the active
  controller, while it waits for one (§2 bullets 3-4 and §3 bullets 2-3: "waits for
  LeaderAndIsrResponse"), and never more than one from a broker: a response nobody waits
  for would answer the controller's next request before that broker applied it;
- always **FencedGroupRejoins**: with Fetch fencing (§8.6), once the broker's
  undeleted_partition_count differs from the one the group's assignment was computed from,
  the group is rejoining: its parked Fetch came back with InvalidPartitionMetadataException;
- always **BlockedOnlyBeforeStart**: a member holds back a partition under §8 step 4 only
  if it is a partition >= initial_partition_count that the group has not started reading
  (its position is the log's earliest offset).
"""
from __future__ import annotations

from kmc.invariants.declare import declare
from kmc.invariants.logic import And, Rel, exists, forall, implies, variables
from kmc.model.kafka.kip253.broker import log_at, the_broker
from kmc.model.kafka.kip253.controller import IDLE, marked, unrecorded_marks
from kmc.model.kafka.kip253.channels import NET
from kmc.model.kafka.messages import LAIR_RESP, controller_endpoint
from kmc.model.kafka.kip253.properties import field_view
from kmc.model.kafka.kip253.znodes import total, undeleted, znodes

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

Meta = Rel("Meta", 3, ("holder", "undeleted", "total"))
LeaderCount = Rel("LeaderCount", 1, ("count",))
Phase = Rel("Phase", 1, ("phase",))
Assigned = Rel("Assigned", 1, ("partition",))
HasZnode = Rel("HasZnode", 1, ("partition",))
Hosted = Rel("Hosted", 1, ("partition",))
Marked = Rel("Marked", 1, ("partition",))
Epochs = Rel("Epochs", 3, ("partition", "znode_epoch", "broker_epoch"))
Position = Rel("Position", 5, ("partition", "start", "committed", "reported", "end"))
Owns = Rel("Owns", 2, ("member", "partition"))
InBasis = Rel("InBasis", 1, ("partition",))
Load = Rel("Load", 3, ("member", "list", "count"))
NotStarted = Rel("NotStarted", 2, ("member", "partition"))
Fresh = Rel("Fresh", 1, ("partition",))
Response = Rel("Response", 4, ("index", "broker", "controller", "epoch"))
Awaiting = Rel("Awaiting", 2, ("controller", "epoch"))
GroupCount = Rel("GroupCount", 3, ("broker_count", "basis_count", "rejoin"))
SplitEpoch = Rel("SplitEpoch", 4, ("child", "parent", "recorded", "parent_epoch"))
MarkEpoch = Rel("MarkEpoch", 5, ("marked", "size", "partition", "recorded", "epoch"))
Unbumped = Rel("Unbumped", 1, ("phase",))

x, u, t, n, p, e1, e2, b, cm, r, end = variables("x u t n p e1 e2 b cm r end")
i1, i2, c, c1, c2, n1, n2, kind = variables("i1 i2 c c1 c2 n1 n2 kind")
q1, q2, e3, e4 = variables("q1 q2 e3 e4")

METADATA_PROPAGATED = And(
    forall(x, implies(Phase(x), x == IDLE)),
    forall((x, u, t), implies(Meta(x, u, t), Meta("store", u, t))),
    forall(n, implies(LeaderCount(n), exists(t, Meta("store", n, t)))))
REPLICAS_MATCH_STORE = And(
    ~exists(p, Marked(p)),
    forall(p, implies(Assigned(p), HasZnode(p) & Hosted(p))),
    forall(p, implies(HasZnode(p), Assigned(p))),
    forall((p, e1, e2), implies(Epochs(p, e1, e2), e1 == e2)))
POSITION_WITHIN_LOG = forall((p, b, cm, r, end), implies(
    Position(p, b, cm, r, end), (b <= cm) & (cm <= end) & (r <= cm)))
ASSIGNMENT_IS_RANGE = And(
    forall(p, implies(InBasis(p), exists(c, Owns(c, p)))),
    forall((c1, c2, p), implies(Owns(c1, p) & Owns(c2, p), c1 == c2)),
    forall((c, p), implies(Owns(c, p), InBasis(p))),
    forall((c1, c2, kind, n1, n2), implies(Load(c1, kind, n1) & Load(c2, kind, n2),
                                           n1 <= n2 + 1)))
EPOCH_BUMPED_AT_SPLIT = forall((c, p, e1, e2), implies(SplitEpoch(c, p, e1, e2), e1 < e2))
MARKS_AGREE = forall((q1, q2, n, p, e1, e2, e3, e4), implies(
    MarkEpoch(q1, n, p, e1, e3) & MarkEpoch(q2, n, p, e2, e4), e1 == e2))
EPOCH_BUMPED_AT_MARK = forall((q1, n, p, e1, e2), implies(
    MarkEpoch(q1, n, p, e1, e2) & ~exists(x, Unbumped(x)), e1 < e2))
RESPONSES_AWAITED = And(
    forall((i1, b, c, e1), implies(Response(i1, b, c, e1), Awaiting(c, e1))),
    forall((i1, i2, b, c, c1, e1, e2),
           implies(Response(i1, b, c, e1) & Response(i2, b, c1, e2), i1 == i2)))
FENCED_GROUP_REJOINS = forall((n1, n2, r), implies(GroupCount(n1, n2, r),
                                                  (n1 == n2) | (r == True)))  # noqa: E712
BLOCKED_ONLY_BEFORE_START = forall((c, p), implies(NotStarted(c, p), Fresh(p)))

#: name -> (kind, formula, description)
DECLARATIONS = {
    "MetadataPropagated": ("quiescent", METADATA_PROPAGATED,
                           "settled: the controller is idle and the broker, its metadata "
                           "cache and the group hold the topic znode's counts"),
    "ReplicasMatchStore": ("quiescent", REPLICAS_MATCH_STORE,
                           "settled: nothing marked, and the znodes and the broker's "
                           "replicas are exactly the assignment's, at the znode epochs"),
    "PositionWithinLog": ("always", POSITION_WITHIN_LOG,
                          "the group's position lies within the partition's log, the "
                          "coordinator's copy not ahead of it"),
    "AssignmentIsRange": ("always", ASSIGNMENT_IS_RANGE,
                          "each partition of the group's metadata has exactly one owner, "
                          "shares differ by at most one per list"),
    "EpochBumpedAtSplit": ("always", EPOCH_BUMPED_AT_SPLIT,
                           "a new partition's parents are past the epochs recorded in its "
                           "leaderEpochAfterCreation"),
    "MarksAgree": ("always", MARKS_AGREE,
                   "the partitions one deletion marks record the same epochs in their "
                   "leaderEpochBeforeDeletion"),
    "EpochBumpedAtMark": ("always", EPOCH_BUMPED_AT_MARK,
                          "after a deletion's bump, the undeleted partitions are past the "
                          "epochs every marked partition records"),
    "ResponsesAwaited": ("always", RESPONSES_AWAITED,
                         "a LeaderAndIsrResponse is on the wire only while the active "
                         "controller waits for it, at most one per broker"),
    "FencedGroupRejoins": ("always", FENCED_GROUP_REJOINS,
                           "with Fetch fencing, a group whose count differs from the "
                           "broker's is rejoining"),
    "BlockedOnlyBeforeStart": ("always", BLOCKED_ONLY_BEFORE_START,
                               "only a new partition the group has not started reading "
                               "is held back for its parent"),
}

SENTENCES = {
    "MetadataPropagated": lambda o: (
        "nothing is left to do, yet the controller, the broker or the group does not hold "
        "the topic znode's partition counts" + (f" ({o['x']})" if "x" in o else "")),
    "ReplicasMatchStore": lambda o: (
        f"nothing is left to do, yet partition {o.get('p')} is marked, lacks its znode or "
        "replica, or its replica's leader epoch differs from the znode's"),
    "PositionWithinLog": lambda o: (
        f"the group's position {o['cm']} in partition {o['p']} lies outside its log "
        f"[{o['b']}, {o['end']}] or behind the coordinator's copy {o['r']}"),
    "AssignmentIsRange": lambda o: (
        "the group's assignment leaves a partition unowned, gives one to two members, or "
        "is not a range assignment"),
    "EpochBumpedAtSplit": lambda o: (
        f"partition {o['c']} records leader epoch {o['e1']} of its parent {o['p']} in its "
        f"leaderEpochAfterCreation, and the parent's znode is still at {o['e2']}"),
    "MarksAgree": lambda o: (
        f"partitions {o['q1']} and {o['q2']} are marked by one deletion, yet their "
        f"leaderEpochBeforeDeletion name epochs {o['e1']} and {o['e2']} for partition "
        f"{o['p']}"),
    "EpochBumpedAtMark": lambda o: (
        f"partition {o['q1']} records leader epoch {o['e1']} of partition {o['p']} in its "
        f"leaderEpochBeforeDeletion, and the deletion is past its bump with {o['p']}'s "
        f"znode still at {o['e2']}"),
    "ResponsesAwaited": lambda o: (
        "a LeaderAndIsrResponse is on the wire that no controller waits for, or a second "
        "one from the same broker"),
    "FencedGroupRejoins": lambda o: (
        f"the broker's undeleted_partition_count is {o['n1']}, the group's assignment was "
        f"computed from {o['n2']}, and the group is not rejoining"),
    "BlockedOnlyBeforeStart": lambda o: (
        f"consumer{o['c']} holds back partition {o['p']}, which the group has already "
        "started reading (or which is not a new partition)"),
}

NAMES = tuple(DECLARATIONS)


# ---- the view -----------------------------------------------------------------------------
def _meta(cfg, w):
    st = w.store
    return {("store", undeleted(st), total(st)), ("cache",) + tuple(the_broker(w).meta),
            ("group",) + tuple(w.group.basis)}


def _epochs(cfg, w):
    zn = znodes(w.store)
    return {(h.partition, zn[h.partition].leader_epoch, h.leader_epoch)
            for h in the_broker(w).hosted if h.partition < len(zn)}


def _position(cfg, w):
    g = w.group
    return {(log.partition, log.start, g.committed[log.partition],
             g.reported[log.partition], len(log.records)) for log in the_broker(w).logs}


def _owns(cfg, w):
    return {(m, part.p) for m, parts in enumerate(w.group.members) for part in parts}


def _load(cfg, w):
    u = w.group.basis[0]
    return {(m, lst, sum((part.p < u) == (lst == "undeleted") for part in parts))
            for m, parts in enumerate(w.group.members) for lst in ("undeleted", "marked")}


def _fresh(cfg, w):
    g = w.group
    return {(p,) for p in range(cfg.N, cfg.pmax)
            if g.committed[p] == _start(log_at(w, p))}


def _start(log) -> int:
    return 0 if log is None else log.start


#: controller phases that wait for a LeaderAndIsrResponse (controller.py)
WAITING = ("expand-create", "shrink-um", "resync-um")


def _responses(cfg, w):
    return {(i, m.src, m.dst, m.epoch) for i, m in enumerate(
        m for m in NET.messages(w.net) if m.kind == LAIR_RESP)}


def _awaiting(cfg, w):
    ctl = w.ctl
    return {(controller_endpoint(ctl.active), ctl.epoch)} if w.mem.phase in WAITING else set()


def _group_count(cfg, w):
    if not cfg.flags.fetch_fencing:
        return set()
    return {(the_broker(w).count, w.group.basis[0], w.group.rejoin)}


def _split_epoch(cfg, w):
    zn, ks = znodes(w.store), cfg.keyspace
    out = set()
    for child, z in enumerate(zn):
        if not z.after:
            continue
        after = dict(z.after)
        for parent in ks.parents(child, len(after), child + 1):
            if parent in after and parent < len(zn):
                out.add((child, parent, after[parent], zn[parent].leader_epoch))
    return out


#: controller phases between a deletion's marks and its bump: ``shrink-bump`` (the marks
#: being written) and ``recover`` (a new controller before it re-drives the bump)
BEFORE_BUMP = ("shrink-bump", "recover")


def _mark_epoch(cfg, w):
    zn = znodes(w.store)
    return {(q, len(z.before), p, e, zn[p].leader_epoch)
            for q, z in enumerate(zn) if z.before for p, e in z.before if p < len(zn)}


def _unbumped(cfg, w):
    ph = w.mem.phase
    return {(ph,)} if ph in BEFORE_BUMP or unrecorded_marks(w.store) else set()


#: the fields each relation reads, and no other (as ``properties.FIELDS``)
FIELDS = {
    "Meta": ("store", "brokers", "group"), "LeaderCount": ("brokers",), "Phase": ("mem",),
    "Assigned": ("store",), "HasZnode": ("store",), "Hosted": ("brokers",),
    "Marked": ("store",), "Epochs": ("store", "brokers"), "Position": ("brokers", "group"),
    "Owns": ("group",), "InBasis": ("group",), "Load": ("group",), "NotStarted": ("group",),
    "Fresh": ("brokers", "group"), "SplitEpoch": ("store",), "MarkEpoch": ("store",),
    "Unbumped": ("mem", "store"), "Response": ("net",),
    "Awaiting": ("ctl", "mem"), "GroupCount": ("brokers", "group"),
}

RELATIONS = {
    "Meta": _meta,
    "LeaderCount": lambda cfg, w: {(the_broker(w).count,)},
    "Phase": lambda cfg, w: {(w.mem.phase,)},
    "Assigned": lambda cfg, w: {(p,) for p in range(total(w.store))},
    "HasZnode": lambda cfg, w: {(p,) for p in range(len(znodes(w.store)))},
    "Hosted": lambda cfg, w: {(h.partition,) for h in the_broker(w).hosted},
    "Marked": lambda cfg, w: {(p,) for p in marked(w.store)},
    "Epochs": _epochs,
    "Position": _position,
    "Owns": _owns,
    "InBasis": lambda cfg, w: {(p,) for p in range(w.group.basis[1])},
    "Load": _load,
    "NotStarted": lambda cfg, w: {(m, part.p) for m, parts in enumerate(w.group.members)
                                  for part in parts if not part.started},
    "Fresh": _fresh,
    "SplitEpoch": _split_epoch,
    "MarkEpoch": _mark_epoch,
    "Unbumped": _unbumped,
    "Response": _responses,
    "Awaiting": _awaiting,
    "GroupCount": _group_count,
}


def bookkeeping_for(cfg) -> list:
    """The invariants above as Properties (``-p bookkeeping=true``)."""
    view = field_view(cfg, RELATIONS, FIELDS)
    out = []
    for name in NAMES:
        kind, formula, text = DECLARATIONS[name]
        out.append(declare(kind, name, formula, view, text, SENTENCES.get(name)))
    return out
