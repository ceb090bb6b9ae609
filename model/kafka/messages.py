"""The message catalogue of the ZooKeeper-era cluster: every request and response the
models put on the network (``model.kafka.network``).

Both ZooKeeper-era models build their messages here: the topic lifecycle
(``model.kafka.zk``) and KIP-253's partition procedure (``model.kafka.kip253``). The KRaft
plane has no controller-to-broker requests (KIP-516 "Compatibility with KIP-500":
brokers read the metadata log instead); its metadata records are in
``model.kafka.kraft.records``.

Kafka's schemas of these messages are in clients/src/main/resources/common/message/:

| message              | sent by              | schema                                           |
| -------------------- | -------------------- | ------------------------------------------------ |
| LeaderAndIsr         | controller -> broker | LeaderAndIsrRequest.json                         |
| LeaderAndIsrResponse | broker -> controller | LeaderAndIsrResponse.json                        |
| UpdateMetadata       | controller -> broker | UpdateMetadataRequest.json                       |
| StopReplica          | controller -> broker | StopReplicaRequest.json (delete_partitions=true) |
| StopReplicaResponse  | broker -> controller | StopReplicaResponse.json                         |
| FetchResponse        | leader -> follower   | FetchResponse.json (one partition)               |

Each message keeps the fields the models read. Fields that only one feature reads have a
value that means "absent" elsewhere:

- ``LeaderAndIsr.lair_type``: "FULL" or "INCREMENTAL" from KIP-516 (version 5); "" where
  the request has no type field (legacy, and KIP-253's era).
- ``LeaderAndIsr.count`` and ``UpdateMetadata.undeleted``: KIP-253's proposed
  ``undeleted_partition_count`` (its Protocol 1 and 6). KIP-253 was never implemented, so
  only the KIP-253 model sets them; ``NO_COUNT`` elsewhere.
- ``topic_id``: ``ZERO_ID`` (``model.kafka.store``) where the request carries no topic ID
  (before KIP-516).

``LeaderAndIsr.ack`` says whether the controller waits for this request's response. Kafka's
broker answers every LeaderAndIsr; a model that never reads an answer (the topic model's
controller, and KIP-253's controller for requests it does not wait on) leaves the answer
out, since it changes nothing the controller does.

Endpoints: brokers are 1..n, controller candidate ``c`` is ``-c``. Every message is a
NamedTuple whose first field is a kind string distinct per type, with ints, strs, bools and
tuples of them as fields (no None), so messages in flight sort canonically; every type uses
the plain tuple ``repr`` (a C function), which fingerprints encode.
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.model.kafka.broker import EPOCH_STEP, label as record_label, lane as broker_lane
from kmc.model.kafka import store
from kmc.model.kafka.controller import lane as controller_lane
from kmc.model.records import fast_replace_all

LAIR, LAIR_RESP, UM = "LeaderAndIsr", "LeaderAndIsrResponse", "UpdateMetadata"
STOP, STOP_RESP, FETCH_RESP = "StopReplica", "StopReplicaResponse", "FetchResponse"
FULL, INCREMENTAL = "FULL", "INCREMENTAL"
NO_COUNT = store.NO_COUNT  # the request carries no undeleted_partition_count


def controller_endpoint(candidate: int) -> int:
    return -candidate


def endpoint_lane(x: int) -> str:
    """The sequence-picture lane of endpoint ``x`` (``broker-b`` or ``controller-c``)."""
    return broker_lane(x) if x > 0 else controller_lane(-x)


class PartitionState(NamedTuple):
    """One partition in a LeaderAndIsr request (LeaderAndIsrPartitionState)."""
    partition: int
    topic_id: int
    inc: int  # ghost: the topic incarnation the controller meant
    leader: int
    leader_epoch: int
    __repr__ = tuple.__repr__


class LeaderAndIsr(NamedTuple):
    kind: str  # LAIR
    src: int
    dst: int
    epoch: int     # controller epoch
    lair_type: str  # FULL | INCREMENTAL | ""
    parts: tuple   # PartitionState
    count: int = NO_COUNT  # KIP-253 undeleted_partition_count
    ack: bool = False      # the controller waits for the response
    __repr__ = tuple.__repr__


class LeaderAndIsrResponse(NamedTuple):
    kind: str  # LAIR_RESP
    src: int
    dst: int
    epoch: int  # the controller epoch of the request it answers
    __repr__ = tuple.__repr__


class UpdateMetadata(NamedTuple):
    kind: str  # UM
    src: int
    dst: int
    epoch: int
    undeleted: int  # KIP-253 undeleted_partition_count
    total: int      # partitions advertised (undeleted + marked for deletion)
    __repr__ = tuple.__repr__


class StopReplica(NamedTuple):
    kind: str  # STOP (delete_partitions = true)
    src: int
    dst: int
    epoch: int
    partition: int
    topic_id: int
    inc: int  # ghost
    __repr__ = tuple.__repr__


class StopReplicaResponse(NamedTuple):
    kind: str  # STOP_RESP
    src: int
    dst: int
    epoch: int
    partition: int
    topic_id: int
    inc: int  # ghost
    error: str
    __repr__ = tuple.__repr__


class FetchResponse(NamedTuple):
    kind: str  # FETCH_RESP
    src: int   # the leader
    dst: int   # the follower
    partition: int
    topic_id: int      # ZERO_ID when Fetch carries no ID
    leader_epoch: int  # the epoch the follower sent
    offset: int        # the fetch offset the follower sent
    records: tuple
    leader_end: int    # the leader's log end offset (for OFFSET_OUT_OF_RANGE truncation);
                       # with DIVERGING_EPOCH the divergingEpoch, packed
                       # (model.kafka.zk.epochs.pack)
    error: str
    asked_inc: int     # ghost: the incarnation the follower believed it fetched
    __repr__ = tuple.__repr__


fast_replace_all(globals())  # generated _replace: cheaper successor construction


# ---- building --------------------------------------------------------------------------
def lair(src, dst, epoch, lair_type, parts, count=NO_COUNT, ack=False) -> LeaderAndIsr:
    return LeaderAndIsr(LAIR, src, dst, epoch, lair_type, tuple(parts), count, ack)


def lair_response(req: LeaderAndIsr) -> LeaderAndIsrResponse:
    return LeaderAndIsrResponse(LAIR_RESP, req.dst, req.src, req.epoch)


def update_metadata(src, dst, epoch, undeleted, total) -> UpdateMetadata:
    return UpdateMetadata(UM, src, dst, epoch, undeleted, total)


def stop_replica(src, dst, epoch, partition, topic_id, inc) -> StopReplica:
    return StopReplica(STOP, src, dst, epoch, partition, topic_id, inc)


def stop_replica_response(req: StopReplica, error: str) -> StopReplicaResponse:
    return StopReplicaResponse(STOP_RESP, req.dst, req.src, req.epoch, req.partition,
                               req.topic_id, req.inc, error)


# ---- how they read ---------------------------------------------------------------------
def id_text(tid: int) -> str:
    """A topic ID as the pictures show it."""
    return f"id={tid}" if tid else "no-id"


def delivery_text(msg, verb: str = "deliver") -> str:
    """A delivery (or loss) of ``msg`` as traces show it: ``deliver controller-1->broker-2:
    LeaderAndIsr(...)``."""
    return f"{verb} {endpoint_lane(msg.src)}->{endpoint_lane(msg.dst)}: {label(msg)}"


def label(msg, topic: str = "A") -> str:
    """One line naming the message and the fields the models read, for traces and
    sequence pictures."""
    k = msg.kind
    if k == LAIR:
        typ = f" {msg.lair_type}" if msg.lair_type else ""
        count = f" undeleted_partition_count={msg.count}" if msg.count != NO_COUNT else ""
        parts = " ".join(f"[{topic}-{p.partition} {id_text(p.topic_id)} leader={p.leader} "
                         f"le={p.leader_epoch}]" for p in msg.parts) or "[]"
        return f"LeaderAndIsr{typ} ce={msg.epoch}{count} {parts}"
    if k == UM:
        return (f"UpdateMetadata ce={msg.epoch} undeleted_partition_count={msg.undeleted} "
                f"partitions={msg.total}")
    if k == STOP:
        return (f"StopReplica delete {topic}-{msg.partition} {id_text(msg.topic_id)} "
                f"ce={msg.epoch}")
    if k == STOP_RESP:
        return (f"StopReplicaResponse {topic}-{msg.partition} {id_text(msg.topic_id)} "
                f"{msg.error}")
    if k == FETCH_RESP:
        what = msg.error if msg.error != "NONE" else \
            "records=[" + ", ".join(map(record_label, msg.records)) + "]"
        if msg.error == "DIVERGING_EPOCH":  # model.kafka.zk.epochs.pack
            what = (f"divergingEpoch(epoch={msg.leader_end // EPOCH_STEP}, "
                    f"end={msg.leader_end % EPOCH_STEP})")
        return (f"FetchResponse {topic}-{msg.partition} {id_text(msg.topic_id)} "
                f"le={msg.leader_epoch} {what}")
    return f"{k} ce={msg.epoch}"
