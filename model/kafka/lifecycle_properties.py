"""The topic-lifecycle properties both control planes share, each declared once.

The ZooKeeper-era plane (``model.kafka.zk``) and the KRaft plane (``model.kafka.kraft``)
state these properties over relations of the same names and meaning, which each plane's
view produces from its own state (``model/kafka/zk/views.py``,
``model/kafka/kraft/views.py``):

always: NoStaleRead, NoStaleReplication, NoWriteToDeletedTopic, BudgetsRespected,
MetadataFlushedFirst.
quiescent: StaleReplicasCleaned, AssignedReplicasHosted, DeletionCompletes (its pending
work and an optional extra conjunct are the plane's: a /admin/delete_topics marker on
ZooKeeper; on KRaft an uncommitted metadata batch, and no running broker hosting a
partition of a deleted topic, because there the brokers finish a deletion themselves).
sometimes: StaleFetchAttempted, FailoverMidDeletion; ExpansionAfterDeletion and
ExpansionOfRecreated for the scenarios with CreatePartitions (``expansion_witnesses``),
which also check ReplicasDistinct (always, ``replicas_distinct``).

``lifecycle_properties(plane)`` builds them for one plane; a ``Plane`` names its view
and the one word the planes use differently (a broker that takes part is "up" on
ZooKeeper, "running" on KRaft). The properties whose facts differ between the planes stay
in the plane's module: TopicIdUnique (znodes and the IDs in requests there, each
image's name-to-ID map here), NameRecreated (a znode of a later incarnation there, a
committed TopicRecord here), the epoch fencing of each plane's requests, and the
plane-specific ones (ControllerEpochFencing; MetadataMonotonic, NoUncommittedEffect,
NoFencedLeader).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from kmc.invariants.declare import declare
from kmc.invariants.logic import And, Not, Or, Rel, exists, forall, implies, variables

Read = Rel("Read", 3, ("reader", "asked_inc", "record_inc"))
Wrote = Rel("Wrote", 2, ("believed_inc", "landed_inc"))
Attempt = Rel("Attempt", 2, ("asked_inc", "served_inc"))
Record = Rel("Record", 4, ("broker", "partition", "serving_inc", "record_inc"))
Holds = Rel("Holds", 3, ("broker", "partition", "inc"))
Hosts = Rel("Hosts", 3, ("broker", "partition", "inc"))
Assigned = Rel("Assigned", 3, ("broker", "partition", "inc"))
Live = Rel("Live", 1, ("inc",))
Down = Rel("Down", 1, ("broker",))
Pending = Rel("Pending", 1, ("work",))
Failover = Rel("Failover", 2, ("epoch", "deletion_pending"))
Left = Rel("Left", 2, ("budget", "amount"))
#: a log on disk whose partition.metadata is not flushed, with its number of records
Unflushed = Rel("Unflushed", 3, ("broker", "partition", "records"))
#: the ``position``-th replica of a partition's assignment (0 = preferred leader)
AssignedAt = Rel("AssignedAt", 4, ("inc", "partition", "position", "broker"))
#: an answered CreatePartitions: the live incarnation when the admin sent it (0: none),
#: the one its name resolved to when it was handled (0: none), and the error ("" when it
#: took effect: it grew that incarnation)
Expansion = Rel("Expansion", 3, ("sent_inc", "resolved_inc", "error"))

r, a, g, b, p, s, i, d, e, n, k, x, t, j = variables("r a g b p s i d e n k x t j")


class Plane(NamedTuple):
    """What the shared declarations need from a control plane."""
    view: Callable            # state -> relations (the plane's ``views.view``)
    up: str                   # the word for a broker that takes part: "up", "running"


def reader(x) -> str:
    """A reader of the Read relation: the consumer (0) or a follower broker."""
    return "the consumer" if x == 0 else f"broker-{x}"


def _stale_sentence(up: str):
    return lambda m: (f"nothing is left to do and every broker is {up}, yet "
                      f"broker-{m['b']} still "
                      + (f"holds a record of deleted incarnation {m['g']}" if "g" in m
                         else f"holds a log of deleted incarnation {m['i']}")
                      + f" in partition {m['p']}")


def lifecycle_properties(plane: Plane) -> dict:
    """The shared properties over ``plane``'s view, by name."""
    view, up = plane.view, plane.up
    props = (
        declare(
            "always", "NoStaleRead",
            forall((r, a, g), implies(Read(r, a, g), a == g)), view,
            "a follower or the consumer never receives records of an incarnation other "
            "than the one it believes it reads",
            lambda m: f"{reader(m['r'])}, believing it reads incarnation {m['a']} of the "
                      f"topic, received a record of incarnation {m['g']}"),
        declare(
            "always", "NoStaleReplication",
            forall((b, p, s, g), implies(Record(b, p, s, g), s == g)), view,
            "every record in a log on disk belongs to the incarnation the log serves",
            lambda m: f"broker-{m['b']}'s log of partition {m['p']} serves incarnation "
                      f"{m['s']} of the topic, but holds a record of incarnation {m['g']}"),
        declare(
            "always", "NoWriteToDeletedTopic",
            forall((a, g), implies(Wrote(a, g), a == g)), view,
            "a produced record lands in the incarnation the producer addressed: never in "
            "a deleted topic's stale log, never in the successor of the topic it meant",
            lambda m: f"the producer, writing to incarnation {m['a']} of the topic, had "
                      f"its record appended to a log of incarnation {m['g']}"),
        declare(
            "always", "BudgetsRespected",
            forall((k, x), implies(Left(k, x), 0 <= x)), view,
            "no step spends more than the scenario's bounds allow (its crashes, controller "
            "failovers, admin requests, the producer's records, ...): a run past them "
            "checks behaviour outside the bounds it reports",
            lambda m: f"the scenario's {m['k']} budget was overspent: {m['x']} left"),
        declare(
            "always", "MetadataFlushedFirst",
            forall((b, p, n), implies(Unflushed(b, p, n), n == 0)), view,
            "partition.metadata (the log's topic ID) is flushed before the first record is "
            "appended to a log (Log.append, UnifiedLog.append from 3.1: "
            "maybeFlushMetadataFile, \"to ensure that any log data can be recovered with "
            "the correct topic ID in the case of failure\")",
            lambda m: f"broker-{m['b']}'s log of partition {m['p']} holds {m['n']} "
                      "record(s) but its partition.metadata was never flushed"),
        declare(
            "quiescent", "StaleReplicasCleaned",
            Or(exists(d, Down(d)),
               And(forall((b, p, i), implies(Holds(b, p, i), Live(i))),
                   forall((b, p, s, g), implies(Record(b, p, s, g), Live(g))))),
            view,
            f"settled with every broker {up}: no log on disk (those set aside for "
            "deletion excepted) serves or holds records of a deleted incarnation",
            _stale_sentence(up)),
        declare(
            "quiescent", "AssignedReplicasHosted",
            forall((b, p, i), implies(Assigned(b, p, i),
                                      Or(Hosts(b, p, i), exists(d, Down(d))))),
            view,
            f"settled with every broker {up}: every replica the metadata assigns to the "
            "live incarnation is hosted by its broker",
            lambda m: f"nothing is left to do and every broker is {up}, yet "
                      f"broker-{m['b']}, assigned partition {m['p']} of incarnation "
                      f"{m['i']}, holds no hosted replica of it"),
        declare(
            "sometimes", "StaleFetchAttempted",
            exists((a, s), And(Attempt(a, s), a != s)), view,
            "a fetch reaches a log of another incarnation than the fetcher's"),
    )
    return {x.name: x for x in props}


def deletion_completes(plane: Plane, description: str, extra=None, sentence=None):
    """DeletionCompletes: settled, nothing a deletion waits for is pending (the plane's
    ``Pending``), and ``extra`` holds when the plane names one more condition."""
    formula = Not(exists(n, Pending(n)))
    if extra is not None:
        formula = And(formula, extra)
    return declare("quiescent", "DeletionCompletes", formula, plane.view, description,
                   sentence)


def failover_mid_deletion(plane: Plane, description: str):
    """FailoverMidDeletion: the witness of a controller failover while a deletion is
    pending (what "pending" means is the plane's ``Failover`` relation)."""
    return declare("sometimes", "FailoverMidDeletion", exists(e, Failover(e, 1)),
                   plane.view, description)


def recreates(bounds) -> bool:
    """The scenario's bounds let a topic be deleted and its name created again."""
    return bounds.incarnations >= 2 and bounds.deletes >= 1


def witnesses_for(bounds, recreated, stale_fetch, failover, restart, stale_meta=None):
    """The witnesses a scenario's bounds make reachable in principle, in the order the
    reports list them."""
    out = []
    recreate = recreates(bounds)
    if recreate:
        out.append(recreated)
    if recreate and (bounds.rf >= 2 or bounds.consumer):
        out.append(stale_fetch)
    if recreate and bounds.consumer and stale_meta is not None:
        out.append(stale_meta)
    if bounds.failovers and bounds.deletes:
        out.append(failover)
    if bounds.crashes and bounds.deletes:
        out.append(restart)
    return tuple(out)


def replicas_distinct(plane: Plane):
    """ReplicasDistinct over ``plane``'s ``AssignedAt``: the placement of new partitions
    names each broker once per partition."""
    return declare(
        "always", "ReplicasDistinct",
        forall((i, p, k, j, b), implies(And(AssignedAt(i, p, k, b), AssignedAt(i, p, j, b)),
                                        k == j)),
        plane.view,
        "no partition's assignment names a broker twice (AdminUtils' placement on ZooKeeper, "
        "the replica placer on KRaft, each pick distinct brokers)",
        lambda m: f"partition {m['p']} of incarnation {m['i']} lists broker-{m['b']} "
                  f"twice in its assignment (positions {m['k']} and {m['j']})")


def expansion_witnesses(plane: Plane) -> tuple:
    """ExpansionAfterDeletion and ExpansionOfRecreated over ``plane``'s ``Expansion``:
    a CreatePartitions names the topic, and each plane resolves the name when it acts."""
    return (
        declare(
            "sometimes", "ExpansionAfterDeletion",
            exists((s, e), And(Expansion(s, 0, e), 1 <= s)), plane.view,
            "a CreatePartitions sent while the topic was live is answered after its "
            "deletion, without growing any incarnation"),
        declare(
            "sometimes", "ExpansionOfRecreated",
            exists((s, t, e), And(Expansion(s, t, e), 1 <= s, s < t, e == "")), plane.view,
            "a CreatePartitions sent while one incarnation was live grows a later one"),
    )
