"""Controller candidates, the controller epoch, failover, and the broker-side epoch fence.

ZooKeeper-mode Kafka elects one active controller among candidates; each election writes
a higher ``/controller_epoch``. Every controller request carries that epoch, and a broker
rejects a request whose epoch is lower than the highest it has seen (a deposed "zombie"
controller may still have requests in flight).

A model keeps a ``ControllerState`` in its state and the active controller's in-memory
data (``Memory``) next to it; ``fail_over`` only moves the election forward: the model
decides what the new controller forgets (in-memory state) and what it sends on becoming
active.
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.model.kafka.store import NO_COUNT
from kmc.model.records import fast_replace_all

#: controller epoch of the first elected controller
FIRST_EPOCH = 1
#: KIP-253's procedure has no step under way (``Memory.phase``)
IDLE = "idle"


class ControllerState(NamedTuple):
    active: int  # candidate id of the active controller (1-based)
    epoch: int   # its controller epoch (the /controller_epoch znode)
    candidates: int  # number of controller candidates
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


class Memory(NamedTuple):
    """The active controller's in-memory state: a failover loses it (the new controller
    rebuilds what it needs from the metadata store)."""
    #: the deletion's StopReplica requests awaiting success: sorted (broker, partition,
    #: topic ID, incarnation) (the topic lifecycle, ``model.kafka.zk``)
    pending: tuple = ()
    #: the KIP-253 procedure's step that runs next (``model.kafka.kip253.controller``)
    phase: str = IDLE
    #: undeleted_partition_count as the controller last read it: its requests carry
    #: this, not whatever the store says by then (KIP-253)
    count: int = NO_COUNT
    #: ((partition, leader epoch), ...) read before an expansion's epoch bump (KIP-253)
    recorded: tuple = ()
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


def initial(candidates: int = 2, active: int = 1) -> ControllerState:
    if candidates < 1 or not 1 <= active <= candidates:
        raise ValueError("need at least one controller candidate and an active one among them")
    return ControllerState(active, FIRST_EPOCH, candidates)


def successors_of(ctl: ControllerState) -> tuple[int, ...]:
    """Candidates that can win the election when the active controller dies."""
    return tuple(c for c in range(1, ctl.candidates + 1) if c != ctl.active)


def fail_over(ctl: ControllerState, winner: int) -> ControllerState:
    """The active controller dies and ``winner`` is elected with the next epoch."""
    if winner == ctl.active or not 1 <= winner <= ctl.candidates:
        raise ValueError(f"candidate {winner} cannot win an election against {ctl.active}")
    return ControllerState(winner, ctl.epoch + 1, ctl.candidates)


def accepts(seen_epoch: int, request_epoch: int) -> bool:
    """The broker-side fence: a request from an older controller epoch is rejected
    (STALE_CONTROLLER_EPOCH)."""
    return request_epoch >= seen_epoch


def lane(candidate: int) -> str:
    return f"controller-{candidate}"


fast_replace_all(globals())  # generated _replace: cheaper successor construction
