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
"""
from __future__ import annotations

from kmc.invariants.liveness import leads_to
from kmc.invariants.logic import And, Not, Or, Rel, exists, variables
from kmc.model.topics.views import view

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
    and its bounds make them meaningful."""
    if not bounds.liveness or not bounds.deletes:
        return ()
    return (DELETION_EVENTUALLY_COMPLETES, STALE_REPLICAS_EVENTUALLY_CLEANED)
