"""The KIP-253 model's channels: its one broker, the controller candidates' connections to
it, and the UpdateMetadata and StopReplica requests the procedure sends, built from the
message catalogue (``model.kafka.messages``; its LeaderAndIsr requests are built as the
topic lifecycle's controller builds them: ``controller._lair``).

The channels are FIFO per (src, dst) pair, as Kafka's controller channel is one ordered
connection per broker; each controller candidate has its own connection, so requests of a
dead controller can still arrive after the new controller's (the broker's epoch fence
rejects them: ``model.kafka.zk.brokers``). Endpoints follow the catalogue: the
broker is 1, controller candidate ``c`` is ``-c``.

KIP-253 predates topic IDs and LeaderAndIsr's type field: its requests carry
``ZERO_ID`` (the topic znode's) and no type, and the one topic is the model's only
incarnation (1). The scenarios' one broker leads every partition.
"""
from __future__ import annotations

from kmc.model.kafka.messages import controller_endpoint, stop_replica, update_metadata
from kmc.model.kafka.network import Network
from kmc.model.kafka.store import ZERO_ID

BROKER = 1
INCARNATION = 1
NET = Network(ordered=True)


def hosts(zn: tuple, parts) -> list:
    """The brokers holding a replica of one of ``parts`` (partition znodes ``zn``), in id
    order: the brokers a LeaderAndIsr about ``parts`` goes to."""
    return sorted({b for p in parts for b in zn[p].replicas})


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
