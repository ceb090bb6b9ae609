"""The KIP-253 model's channels: its one broker, the controller candidates' connections to
it, and the requests the procedure sends, built from the message catalogue
(``model.kafka.messages``).

The channels are FIFO per (src, dst) pair, as Kafka's controller channel is one ordered
connection per broker; each controller candidate has its own connection, so requests of a
dead controller can still arrive after the new controller's (the broker's epoch fence,
``model.kafka.controller.accepts``, rejects them). Endpoints follow the catalogue: the
broker is 1, controller candidate ``c`` is ``-c``.

KIP-253 predates topic IDs and LeaderAndIsr's type field: its requests carry
``ZERO_ID`` and no type, and the one topic is the model's only incarnation (1). The one
broker leads every partition.
"""
from __future__ import annotations

from kmc.model.kafka.messages import (
    PartitionState, controller_endpoint, lair, stop_replica, update_metadata,
)
from kmc.model.kafka.network import Network
from kmc.model.kafka.store import ZERO_ID

BROKER = 1
INCARNATION = 1
NET = Network(ordered=True)


def leader_and_isr(ctl, count: int, epochs: tuple, ack: bool):
    """LeaderAndIsr from the active controller with KIP-253's undeleted_partition_count
    ``count`` and the leader epoch of each partition it names (``epochs``: (partition,
    leader epoch) pairs); ``ack``: the controller waits for the response."""
    parts = (PartitionState(p, ZERO_ID, INCARNATION, BROKER, e) for p, e in epochs)
    return lair(controller_endpoint(ctl.active), BROKER, ctl.epoch, "", parts, count, ack)


def update_metadata_request(ctl, undeleted: int, total: int):
    return update_metadata(controller_endpoint(ctl.active), BROKER, ctl.epoch, undeleted,
                           total)


def stop_replica_request(ctl, p: int):
    return stop_replica(controller_endpoint(ctl.active), BROKER, ctl.epoch, p, ZERO_ID,
                        INCARNATION)


def heads_to(net: tuple, dst: int, network: Network = NET) -> list:
    """Messages deliverable to ``dst`` next (one per channel) on ``network``."""
    return [m for m in network.deliverable(net) if m.dst == dst]


def head_from(net: tuple, src: int, dst: int, network: Network = NET):
    for m in network.deliverable(net):
        if m.src == src and m.dst == dst:
            return m
    return None
