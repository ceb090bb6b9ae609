"""Liveness properties of the partition model (KIP-253), and the fairness they rely on.

Fairness (docs/model-partition-changes.md, "Liveness and fairness"): every protocol step
is weakly fair — the controller's steps, the broker handling a request
(``deliver-LeaderAndIsr``, ``deliver-UpdateMetadata``, ``deliver-StopReplica``),
producers (``produce``, ``producer-refresh``) and the consumer group
(``group-rebalance``, ``lookup-epochs``, ``unblock``, ``member-deliver``,
``report-position``) and the deletion of a marked partition's records
(``delete-records``). The network is in order and loses nothing, so no step is enabled
only now and then by a fault: weak fairness is enough. The admin's AlterTopic request (an
input) and a controller failover (a fault) are never fair.

- ExpansionEventuallyUnblocks: a member blocked on a partition that has data to deliver
  (KIP-253 §8, steps 4 and 5) is eventually unblocked or has delivered it — the liveness
  form of the quiescent NoConsumerStuck.
- ConsumerEventuallyProgresses: a partition with records the group has not delivered is
  eventually read to its end (while producers may still append).
- ProcedureEventuallyCompletes: a controller that has started a step of a procedure (an
  expansion, a shrink, a removal, a new controller's recovery) eventually returns to
  idle: KIP-253's "this procedure is fault tolerant" notes, as a liveness claim (the
  in-procedure phases are ``Memory.phase`` other than idle; ``controller.py``).
"""
from __future__ import annotations

from kmc.invariants.liveness import leads_to
from kmc.invariants.logic import And, Not, Rel, exists, variables

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

Blocked = Rel("Blocked", 2, ("member", "partition"))
Undelivered = Rel("Undelivered", 1, ("partition",))
InProcedure = Rel("InProcedure", 1, ("phase",))
c, h, p = variables("c h p")

STUCK = exists((c, p), And(Blocked(c, p), Undelivered(p)))
PENDING = exists(p, Undelivered(p))
BUSY = exists(h, InProcedure(h))

#: action names that are never fair: the admin's request (an input) and failovers
NEVER_FAIR = ("admin-alter", "failover")


def weakly_fair(model) -> tuple:
    """Every protocol step of ``model`` (module docstring)."""
    return tuple(a for a in model.action_names() if a not in NEVER_FAIR)


def liveness_for(cfg, view=None) -> list:
    """Over ``view`` (``properties.relations_view(cfg)`` by default)."""
    if view is None:
        from kmc.model.kafka.kip253.properties import relations_view
        view = relations_view(cfg)
    return [
        leads_to("ExpansionEventuallyUnblocks", STUCK, Not(STUCK), view=view,
                 description="a member blocked on a partition with data to deliver is "
                             "eventually unblocked, or has delivered it"),
        leads_to("ConsumerEventuallyProgresses", PENDING, Not(PENDING), view=view,
                 description="records the group has not delivered are eventually "
                             "delivered: every partition is read to its end"),
        leads_to("ProcedureEventuallyCompletes", BUSY, Not(BUSY), view=view,
                 description="a procedure the controller started (an expansion, a "
                             "shrink, a removal, a new controller's recovery) "
                             "eventually returns it to idle"),
    ]
