"""Brokers: the ZooKeeper-era broker's records, broker liveness, and helpers over a tuple
of per-broker records (index = broker id - 1).

A broker is ``UP``, ``DOWN`` (crashed: its in-memory state is gone, connections broken) or
``RESTARTING`` (back, logs reloaded from disk, registered with the controller, but not yet
told its roles by the controller's first LeaderAndIsr). The helpers over a tuple of
brokers only need a ``status`` field on its records.

The ZooKeeper-era broker's records, ``Broker`` and its ``Replica``s, are shared by the
features that run on that control plane: the topic lifecycle (``model.kafka.zk``) and
KIP-253's partition procedure (``model.kafka.kip253``). A field that only one feature
reads has a value that means "absent" elsewhere, as the message catalogue's do
(``model.kafka.messages``). The KRaft plane's broker holds a metadata image instead
(``model.kafka.kraft.state``).
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.model.kafka.canon import replace_at
from kmc.model.kafka.store import NO_COUNT
from kmc.model.records import fast_replace_all

UP = "up"
DOWN = "down"
RESTARTING = "restarting"
NO_ROLE = -1  # Replica.leader before the first LeaderAndIsr after a restart


class Replica(NamedTuple):
    """A broker's log of one partition (LogManager's log with its partition.metadata,
    ReplicaManager's partition state)."""
    partition: int
    topic_id: int      # ZERO_ID: unknown (legacy, or partition.metadata never flushed)
    inc: int           # ghost: the incarnation this replica serves
    leader: int        # leader as last told by LeaderAndIsr; NO_ROLE after a restart
    leader_epoch: int  # -1 after a restart until the first LeaderAndIsr
    log: tuple         # records: the ghost incarnation each was produced into (topic
                       # lifecycle), or (key class, producer, seq, leader epoch) (KIP-253)
    durable: bool      # partition.metadata flushed (before the first append)
    fetch_error: str   # error of the last fetch response ("" none): no busy re-fetching
    start: int = 0     # log start offset (deleteRecords moves it: KIP-253 §3)
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


class Broker(NamedTuple):
    status: str          # UP / DOWN / RESTARTING
    replicas: tuple      # Replica sorted by partition (the one topic name)
    deleting: tuple      # staged in log.dir/deleting/: sorted (partition, topic_id, inc)
    ctl_epoch: int       # highest controller epoch applied
    applied_epoch: int   # ghost: controller epoch of the last applied request
    count: int = NO_COUNT  # KIP-253 §4: undeleted_partition_count of the latest
                           # LeaderAndIsr (NO_COUNT where the procedure does not run)
    meta: tuple = ()     # KIP-253: the metadata cache UpdateMetadata fills, (undeleted,
                         # total); () where clients read the store (the topic lifecycle)
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


def replica(br, p: int):
    """``br``'s replica of partition ``p``, or None."""
    for r in br.replicas:
        if r.partition == p:
            return r
    return None


def with_replica(br, r):
    """``br`` hosting ``r`` in place of its replica of the same partition, if any."""
    reps = [x for x in br.replicas if x.partition != r.partition]
    reps.append(r)
    reps.sort(key=_partition)
    return br._replace(replicas=tuple(reps))


def _partition(r) -> int:
    return r.partition


def broker_ids(n: int) -> range:
    return range(1, n + 1)


def get(brokers: tuple, b: int):
    return brokers[b - 1]


def put(brokers: tuple, b: int, rec) -> tuple:
    return replace_at(brokers, b - 1, rec)


def live_ids(brokers: tuple) -> tuple:
    return tuple(i + 1 for i, r in enumerate(brokers) if r.status != DOWN)


def lane(b: int) -> str:
    return f"broker-{b}"


def format_brokers(brokers: list, topic: str) -> dict:
    """A state's brokers as JSON (``Model.state_to_json``), named as Kafka names them:
    ``broker-N``, their replicas ``TOPIC-P`` (a second replica of one partition gets a
    prime), so diffs read ``broker-2.replicas.A-0.log``."""
    out = {}
    for i, br in enumerate(brokers):
        named: dict = {}
        for r in br["replicas"]:
            key = f"{topic}-{r['partition']}"
            while key in named:
                key += "'"
            named[key] = r
        out[lane(i + 1)] = {**br, "replicas": named}
    return out


fast_replace_all(globals())  # generated _replace: cheaper successor construction
