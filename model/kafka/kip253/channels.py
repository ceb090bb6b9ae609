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


def hosts(zn: tuple, parts) -> list:
    """The brokers holding a replica of one of ``parts`` (partition znodes ``zn``), in id
    order: the brokers a LeaderAndIsr about ``parts`` goes to."""
    return sorted({b for p in parts for b in zn[p].replicas})


def leader_and_isr_requests(ctl, zn: tuple, count: int, parts, ack: bool) -> tuple:
    """LeaderAndIsr from the active controller about ``parts``, with KIP-253's
    undeleted_partition_count ``count``: one request per broker holding a replica of them
    (``hosts``), naming each of its partitions with its leader and leader epoch from the
    partition znodes ``zn`` (ControllerChannelManager.scala, 2.8:
    ControllerBrokerRequestBatch.addLeaderAndIsrRequestForBrokers keeps a controller
    event's partition states per broker, one request each); ``ack``: the controller waits
    for the responses."""
    return tuple(
        lair(controller_endpoint(ctl.active), b, ctl.epoch, "",
             (PartitionState(p, ZERO_ID, INCARNATION, zn[p].leader, zn[p].leader_epoch)
              for p in parts if b in zn[p].replicas), count, ack)
        for b in hosts(zn, parts))


def update_metadata_requests(ctl, undeleted: int, total: int, brokers) -> tuple:
    """UpdateMetadata to each of ``brokers`` (the controller sends it to every live
    broker: KafkaController.sendUpdateMetadataRequest with liveOrShuttingDownBrokerIds)."""
    return tuple(update_metadata(controller_endpoint(ctl.active), b, ctl.epoch, undeleted,
                                 total) for b in brokers)


def stop_replica_requests(ctl, p: int, replicas) -> tuple:
    """StopReplica(delete=true) of partition ``p`` to each of its ``replicas``."""
    return tuple(stop_replica(controller_endpoint(ctl.active), b, ctl.epoch, p, ZERO_ID,
                              INCARNATION) for b in replicas)


def heads_to(net: tuple, dst: int, network: Network = NET) -> list:
    """Messages deliverable to ``dst`` next (one per channel) on ``network``."""
    return [m for m in network.deliverable(net) if m.dst == dst]


def head_from(net: tuple, src: int, dst: int, network: Network = NET):
    for m in network.deliverable(net):
        if m.src == src and m.dst == dst:
            return m
    return None
