"""Brokers: the records both control planes keep on a broker, broker liveness, and
helpers over a tuple of per-broker records (index = broker id - 1).

A broker holds two kinds of partition state, as Kafka's broker does:

- ``Log``: LogManager's view, a partition's directory on disk with its
  partition.metadata file (the topic ID and whether the file is flushed). It survives a
  crash.
- ``Hosted``: ReplicaManager's view, a partition it hosts online
  (``HostedPartition.Online``) with the leader and leader epoch it was last told and
  its follower fetcher's last error. It lives in memory: a restarted broker hosts
  nothing until it is told its roles (the ZooKeeper plane's first LeaderAndIsr, the
  KRaft plane's first metadata publish).

Both planes use these two records (``model.kafka.zk``, ``model.kafka.kip253`` and
``model.kafka.kraft``); their broker records differ in what feeds them: the
ZooKeeper-era ``Broker`` below takes controller requests (its controller epoch, the
KIP-253 partition count and metadata cache), the KRaft broker a metadata image
(``model.kafka.kraft.state.Broker``). A field that only one plane or feature reads has
a value that means "absent" elsewhere, as the message catalogue's do
(``model.kafka.messages``).

A ZooKeeper-era broker is ``UP``, ``DOWN`` (crashed: connections broken) or
``RESTARTING`` (back, logs reloaded from disk, registered with the controller, hosting
nothing until the controller's first LeaderAndIsr). A down broker's record keeps the
partitions it hosted until its restart clears them (no step of a down broker reads
them). The helpers over a tuple of brokers only need a ``status`` field on its records.
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.model.kafka.canon import keyed_put, replace_at
from kmc.model.kafka.store import NO_COUNT
from kmc.model.records import fast_replace_all

UP = "up"
DOWN = "down"
RESTARTING = "restarting"
NO_ROLE = -1  # the leader of a partition a broker does not host (``leader_of``)


class Log(NamedTuple):
    """A partition's directory on disk (LogManager's log) with the topic ID of its
    partition.metadata file (0: none on disk) and whether that file is flushed
    (UnifiedLog records the ID when the log is created and flushes the file
    asynchronously or, at the latest, before the first append,
    ``maybeFlushMetadataFile``: a crash before the flush leaves a directory without a
    topic ID)."""
    partition: int
    topic_id: int
    records: tuple      # the ghost incarnation each record was produced into and its
                        # leader epoch (topic lifecycle: ``record`` below), or (key
                        # class, producer, seq, leader epoch) (KIP-253)
    flushed: bool = True
    start: int = 0      # log start offset (deleteRecords moves it: KIP-253 §3)
    inc: int = 0        # ghost: the incarnation whose log this is (ZooKeeper plane, where
                        # a legacy topic has no ID to tell; 0 on the KRaft plane, whose
                        # topic IDs tell incarnations apart)
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


#: a topic-lifecycle record on the ZooKeeper plane is one int: the ghost incarnation it
#: was produced into, plus ``EPOCH_STEP`` times the leader epoch of the leader that
#: appended it (``record``). A record of leader epoch 0 is its incarnation alone: ``[1]``
#: is one record of incarnation 1 at epoch 0, ``[1, 201]`` a second one at leader epoch
#: 2. Incarnations stay below ``EPOCH_STEP`` (the scenarios allow three). The KRaft
#: plane's records are incarnations alone (epoch 0 throughout).
EPOCH_STEP = 100


def record(inc: int, epoch: int) -> int:
    """The record produced into incarnation ``inc`` by a leader at ``epoch``."""
    return inc + EPOCH_STEP * epoch


def inc_of(rec) -> int | None:
    """The incarnation a record was produced into (None for a record that is not the
    topic lifecycle's: KIP-253's keyed records share the broker's logs)."""
    return rec % EPOCH_STEP if type(rec) is int else None


def epoch_of(rec: int) -> int:
    return rec // EPOCH_STEP


def label(rec) -> str:
    """``1`` for a record of incarnation 1 at epoch 0, ``1@e2`` at leader epoch 2."""
    if type(rec) is not int or rec < EPOCH_STEP:
        return repr(rec)
    return f"{inc_of(rec)}@e{epoch_of(rec)}"


class Hosted(NamedTuple):
    """A partition the broker's ReplicaManager hosts online (HostedPartition.Online):
    the leader and leader epoch it was last told, and the error of its follower
    fetcher's last response ("" none: a follower does not re-fetch into the same error)."""
    partition: int
    topic_id: int
    leader: int
    leader_epoch: int
    fetch_error: str = ""
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


class Broker(NamedTuple):
    """A ZooKeeper-era broker: what it holds on disk and online, and what its
    controller told it."""
    status: str          # UP / DOWN / RESTARTING
    logs: tuple          # Log sorted by partition (the one topic name): on disk
    hosted: tuple        # Hosted sorted by partition: in memory
    deleting: tuple      # staged in log.dir/deleting/: sorted (partition, topic_id, inc)
    ctl_epoch: int       # highest controller epoch applied
    applied_epoch: int   # ghost: controller epoch of the last applied request
    count: int = NO_COUNT  # KIP-253 §4: undeleted_partition_count of the latest
                           # LeaderAndIsr (NO_COUNT where the procedure does not run)
    meta: tuple = ()     # KIP-253: the metadata cache UpdateMetadata fills, (undeleted,
                         # total); () where clients read the store (the topic lifecycle)
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


def log_of(br, p: int):
    """``br``'s log of partition ``p`` on disk, or None."""
    for x in br.logs:
        if x.partition == p:
            return x
    return None


def hosted_of(br, p: int):
    """``br``'s online partition ``p``, or None."""
    for x in br.hosted:
        if x.partition == p:
            return x
    return None


def leader_of(br, p: int) -> int:
    """The leader of partition ``p`` as ``br`` hosts it; ``NO_ROLE`` when it does not."""
    h = hosted_of(br, p)
    return NO_ROLE if h is None else h.leader


def with_log(br, log):
    """``br`` with ``log`` in place of its log of the same partition, if any."""
    return br._replace(logs=keyed_put(br.logs, log))


def fetch_error(log, h, leader: int, topic_id: int, leader_epoch: int,
                offset: int = 0) -> str:
    """What a broker answers a Fetch of a partition sent to it as the leader ``leader``,
    naming ``topic_id`` (0: by name) and ``leader_epoch``, from ``offset``, where ``log``
    and ``h`` are its log and hosted partition (``log_of``, ``hosted_of``; None: none):
    "" to serve the records, or the error. The checks in Kafka's order, the same on both
    planes (ReplicaManager.readFromLog):

    1. the partition is hosted online (ReplicaManager.getPartitionOrException): a
       partition it does not host is NOT_LEADER_OR_FOLLOWER while its log is on disk and
       UNKNOWN_TOPIC_ID / UNKNOWN_TOPIC_OR_PARTITION (by ID / by name) without one (Kafka
       looks the name up in the metadata cache instead, which the ZooKeeper plane folds
       into the metadata store);
    2. the topic ID (KIP-516 "Fetch": ReplicaManager.hasConsistentTopicId against the
       log's partition.metadata; a partition without a log has no ID to differ):
       INCONSISTENT_TOPIC_ID;
    3. the leader epoch (KIP-320: Partition.checkCurrentLeaderEpoch): FENCED_LEADER_EPOCH
       for an older one, UNKNOWN_LEADER_EPOCH for a newer one;
    4. leadership, then the log (Partition.getLocalLog, ``requireLeader``):
       NOT_LEADER_OR_FOLLOWER;
    5. the offset (LocalLog.read): OFFSET_OUT_OF_RANGE beyond the log end.
    """
    if h is None:
        if log is None:
            return "UNKNOWN_TOPIC_ID" if topic_id else "UNKNOWN_TOPIC_OR_PARTITION"
        return "NOT_LEADER_OR_FOLLOWER"
    if topic_id and log is not None and log.topic_id != topic_id:
        return "INCONSISTENT_TOPIC_ID"
    if leader_epoch < h.leader_epoch:
        return "FENCED_LEADER_EPOCH"
    if leader_epoch > h.leader_epoch:
        return "UNKNOWN_LEADER_EPOCH"
    if h.leader != leader or log is None:
        return "NOT_LEADER_OR_FOLLOWER"
    if offset > len(log.records):
        return "OFFSET_OUT_OF_RANGE"
    return ""


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
    """A state's ZooKeeper-era brokers as JSON (``Model.state_to_json``), named as Kafka
    names them: ``broker-N``, their logs and hosted partitions ``TOPIC-P``, so diffs read
    ``broker-2.logs.A-0.records``."""
    out = {}
    for i, br in enumerate(brokers):
        named = {k: {f"{topic}-{x['partition']}": x for x in br[k]}
                 for k in ("logs", "hosted")}
        out[lane(i + 1)] = {**br, **named}
    return out


fast_replace_all(globals())  # generated _replace: cheaper successor construction
