"""Broker liveness and helpers over a tuple of per-broker records (index = broker id - 1).

A broker is ``UP``, ``DOWN`` (crashed: its in-memory state is gone, connections broken) or
``RESTARTING`` (back, logs reloaded from disk, registered with the controller, but not yet
told its roles by the controller's first LeaderAndIsr). A model keeps its own broker
record type; these helpers only need a ``status`` field on it.
"""
from __future__ import annotations

from kmc.model.kafka.canon import replace_at

UP = "up"
DOWN = "down"
RESTARTING = "restarting"


def broker_ids(n: int) -> range:
    return range(1, n + 1)


def get(brokers: tuple, b: int):
    return brokers[b - 1]


def put(brokers: tuple, b: int, rec) -> tuple:
    return replace_at(brokers, b - 1, rec)


def registered(rec) -> bool:
    """Known to the controller (its ZooKeeper session exists): up or restarting."""
    return rec.status != DOWN


def live_ids(brokers: tuple) -> tuple:
    return tuple(i + 1 for i, r in enumerate(brokers) if r.status != DOWN)


def up_ids(brokers: tuple) -> tuple:
    return tuple(i + 1 for i, r in enumerate(brokers) if r.status == UP)


def all_up(brokers: tuple) -> bool:
    return all(r.status == UP for r in brokers)


def lane(b: int) -> str:
    return f"broker-{b}"
