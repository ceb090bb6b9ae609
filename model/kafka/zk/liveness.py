"""Liveness properties of the topic lifecycle, and the fairness they rely on.

Fairness (docs/model-topic-lifecycle.md, "Liveness and fairness"): every step the cluster
takes by itself is fair. Deliveries of controller requests and responses (``deliver-*``)
are strongly fair: a message loss may take every copy away, so delivery is enabled only
now and then, and a weakly fair delivery could be starved by losses forever. The
controller's StopReplica retry (``retry-stop``), follower fetches (``fetch``) and the
delayed purge of a deleted replica (``purge``) are weakly fair. Faults (crash, restart,
failover, message loss) and the environment's inputs (admin and client requests) are
never fair: they may happen, and need not.

- DeletionEventuallyCompletes: a pending deletion (an /admin/delete_topics marker)
  eventually completes — unless a broker is down, which ZooKeeper-era deletion waits for
  (a restart is a fault, never assumed to come).
- StaleReplicasEventuallyCleaned: a replica, or a record, of a deleted incarnation is
  eventually removed from its broker, unless a broker is down: the liveness form of the
  quiescent StaleReplicasCleaned.
- DeletingEventuallyPurged (with ``-p purge_delay=true``): a replica staged in deleting/
  is eventually purged (KIP-516 "Deletion", step 3: delete.topic.delay.ms elapses),
  unless a broker is down.
- ReplicasEventuallyInSync: a replica assigned to an up broker, of a live topic whose
  leader is up, is eventually created there and holds the leader's log, unless a broker
  is down (its own view, ``sync_view``: the assignment and the logs).
"""
from __future__ import annotations

from kmc.invariants.liveness import leads_to
from kmc.invariants.logic import And, Not, Or, Rel, exists, variables
from kmc.model.kafka import broker as bk
from kmc.model.kafka.zk.views import view

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

Marker = Rel("Marker", 1, ("name",))
Down = Rel("Down", 1, ("broker",))
Holds = Rel("Holds", 3, ("broker", "partition", "inc"))
Record = Rel("Record", 4, ("broker", "partition", "serving_inc", "record_inc"))
Live = Rel("Live", 1, ("inc",))
n, d, b, p, i, s, g = variables("n d b p i s g")

DELETION_EVENTUALLY_COMPLETES = leads_to(
    "DeletionEventuallyCompletes", exists(n, Marker(n)),
    Or(Not(exists(n, Marker(n))), exists(d, Down(d))), view=view,
    description="a pending deletion (an /admin/delete_topics marker) eventually "
                "completes, or a broker is down")

STALE = Or(exists((b, p, i), And(Holds(b, p, i), Not(Live(i)))),
           exists((b, p, s, g), And(Record(b, p, s, g), Not(Live(g)))))

STALE_REPLICAS_EVENTUALLY_CLEANED = leads_to(
    "StaleReplicasEventuallyCleaned", STALE, Or(Not(STALE), exists(d, Down(d))), view=view,
    description="a replica (or a record) of a deleted incarnation is eventually removed, "
                "or a broker is down")


Staged = Rel("Staged", 3, ("broker", "partition", "inc"))
STAGED = exists((b, p, i), Staged(b, p, i))
DELETING_EVENTUALLY_PURGED = leads_to(
    "DeletingEventuallyPurged", STAGED, Or(Not(STAGED), exists(d, Down(d))), view=view,
    description="a replica staged in deleting/ is eventually purged, or a broker is down")

OutOfSync = Rel("OutOfSync", 2, ("broker", "partition"))


def sync_view(w) -> dict:
    """``OutOfSync(b, p)``: broker ``b``, up, is assigned partition ``p`` of a live
    topic (one without a deletion marker) whose leader is up, and does not hold that
    incarnation's replica with the leader's log; ``Down(b)``: broker ``b`` is not up."""
    out, down = set(), set()
    for i, br in enumerate(w.brokers):
        if br.status != bk.UP:
            down.add((i + 1,))
    for t in w.store.topics:
        if t.name in w.store.delete_markers:
            continue
        for p, part in enumerate(t.partitions):
            lead = _replica(w, part.leader, p, t.incarnation)
            if lead is None:
                continue
            for b in part.replicas:
                if (b,) in down:
                    continue
                mine = _replica(w, b, p, t.incarnation)
                if mine is None or mine.records != lead.records:
                    out.add((b, p))
    return {"OutOfSync": out, "Down": down}


def _replica(w, b, p, inc):
    """Up broker ``b``'s log of partition ``p`` of incarnation ``inc``, or None."""
    if not 1 <= b <= len(w.brokers) or w.brokers[b - 1].status != bk.UP:
        return None
    return next((r for r in w.brokers[b - 1].logs if r.partition == p and r.inc == inc), None)


OUT_OF_SYNC = exists((b, p), OutOfSync(b, p))
REPLICAS_EVENTUALLY_IN_SYNC = leads_to(
    "ReplicasEventuallyInSync", OUT_OF_SYNC, Or(Not(OUT_OF_SYNC), exists(d, Down(d))),
    view=sync_view,
    description="a replica assigned to an up broker is eventually created and holds the "
                "leader's log, or a broker is down")


def fair_steps(model, never_fair) -> tuple:
    """The action names of ``model``'s scenario that are the cluster's own steps: every
    name whose kind is not in ``never_fair`` (faults and inputs; ``lose-StopReplica`` is
    a loss)."""
    return tuple(a for a in model.action_names()
                 if a not in never_fair and a.split("-")[0] not in never_fair)


def weakly_fair(model, never_fair) -> tuple:
    """Retries, fetches and purges (module docstring)."""
    return tuple(a for a in fair_steps(model, never_fair) if not a.startswith("deliver-"))


def strongly_fair(model, never_fair) -> tuple:
    """Deliveries: a message that a loss can take away again and again is delivered when
    the network offers it infinitely often (weak fairness would let every copy be lost)."""
    return tuple(a for a in fair_steps(model, never_fair) if a.startswith("deliver-"))


def liveness_for(bounds) -> tuple:
    """The liveness properties, when the scenario asks for them (``-p liveness=true``)
    and its bounds make them meaningful: the two about a deletion need one;
    ReplicasEventuallyInSync is about the live topic and applies with or without."""
    if not bounds.liveness:
        return ()
    deletion = ((DELETION_EVENTUALLY_COMPLETES, STALE_REPLICAS_EVENTUALLY_CLEANED)
                if bounds.deletes else ())
    purge = (DELETING_EVENTUALLY_PURGED,) if bounds.purge_delay else ()
    return deletion + purge + (REPLICAS_EVENTUALLY_IN_SYNC,)
