"""Controller <-> broker requests, carried by the shared network (``model.kafka.network``).

The channels are FIFO per (src, dst) pair, as Kafka's controller channel is one ordered
connection per broker; each controller candidate has its own connection, so requests of a
dead controller can still arrive after the new controller's (the broker's epoch fence,
``model.kafka.controller.accepts``, rejects them). Endpoints follow the topic model's
convention: the broker is 1, controller candidate ``c`` is ``-c``.
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.model.kafka.network import Network

BROKER = 1
NET = Network(ordered=True)

LAIR, UM, STOP, LAIR_RESP = "LeaderAndIsr", "UpdateMetadata", "StopReplica", \
    "LeaderAndIsrResponse"


def ctrl_endpoint(candidate: int) -> int:
    return -candidate


class LeaderAndIsr(NamedTuple):
    kind: str
    src: int
    dst: int
    ctrl_epoch: int
    count: int     # undeleted_partition_count (KIP-253 Protocol 1)
    epochs: tuple  # ((partition, leader epoch), ...): the partitions it names
    ack: bool      # the controller waits for the response
    __repr__ = tuple.__repr__  # C speed: fingerprints encode repr


class UpdateMetadata(NamedTuple):
    kind: str
    src: int
    dst: int
    ctrl_epoch: int
    undeleted: int  # undeleted_partition_count (KIP-253 Protocol 6)
    total: int      # partitions advertised (undeleted + marked for deletion)
    __repr__ = tuple.__repr__  # C speed: fingerprints encode repr


class StopReplica(NamedTuple):
    kind: str
    src: int
    dst: int
    ctrl_epoch: int
    partition: int  # delete=true
    __repr__ = tuple.__repr__  # C speed: fingerprints encode repr


class LeaderAndIsrResponse(NamedTuple):
    kind: str
    src: int
    dst: int
    ctrl_epoch: int
    __repr__ = tuple.__repr__  # C speed: fingerprints encode repr


def leader_and_isr(ctl, count: int, epochs: tuple, ack: bool) -> LeaderAndIsr:
    return LeaderAndIsr(LAIR, ctrl_endpoint(ctl.active), BROKER, ctl.epoch, count, epochs, ack)


def update_metadata(ctl, undeleted: int, total: int) -> UpdateMetadata:
    return UpdateMetadata(UM, ctrl_endpoint(ctl.active), BROKER, ctl.epoch, undeleted, total)


def stop_replica(ctl, p: int) -> StopReplica:
    return StopReplica(STOP, ctrl_endpoint(ctl.active), BROKER, ctl.epoch, p)


def response(req: LeaderAndIsr) -> LeaderAndIsrResponse:
    return LeaderAndIsrResponse(LAIR_RESP, BROKER, req.src, req.ctrl_epoch)


def heads_to(net: tuple, dst: int) -> list:
    """Messages deliverable to ``dst`` next (one per channel)."""
    return [m for m in NET.deliverable(net) if m.dst == dst]


def head_from(net: tuple, src: int, dst: int):
    for m in NET.deliverable(net):
        if m.src == src and m.dst == dst:
            return m
    return None
