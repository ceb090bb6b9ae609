"""The metadata store (ZooKeeper znodes in KIP-516's words) as immutable records.

- ``/brokers/topics/[topic]`` -> ``TopicRecord``: the name, the topic ID (KIP-516 adds it to
  the znode; ``ZERO_ID`` when the protocol has none), and per partition a
  ``PartitionRecord`` (replica assignment, leader, leader epoch, ISR). ``incarnation`` is a
  ghost field: the how-many-th creation of this name the znode records, so invariants can
  talk about "the deleted topic" and "its successor".
- ``/admin/delete_topics/[topic]`` -> ``Store.delete_markers`` (legacy deletion).
- KIP-253's proposed fields ("ZooKeeper changes" 1 and 2, never implemented in Kafka):
  the topic znode's ``undeleted_partition_count`` (``TopicRecord.undeleted``) and each
  partition state znode's ``leaderEpochAfterCreation`` / ``leaderEpochBeforeDeletion``
  (``PartitionRecord.after`` / ``before``: ((partition, leader epoch), ...)). Where the
  KIP-253 procedure does not run they keep their "absent" values, ``NO_COUNT`` and ().

A ``TopicRecord``'s partitions are what the controller acts on: its context, loaded from
the znodes at failover and kept in step with them by its own writes. CreatePartitions
writes the topic znode's assignment, and the topic ID its request thread read before,
behind the controller's back (a ZooKeeper watch tells it later); until the controller has
loaded that write, ``Store.assignments`` holds the znode's assignment, and its topic ID
when that differs from the record's (``assignment`` and ``znode_id`` read the znode
whichever way).

Helpers are pure (return new records). Partition records are indexed by position.
Records use the plain tuple ``repr`` (C-level; ``repr`` is the canonical encoding).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from kmc.model.kafka.canon import keyed_del, keyed_get, keyed_put, replace_at, set_add, set_remove
from kmc.model.records import fast_replace_all

NO_LEADER = -1
#: a topic znode without KIP-253's undeleted_partition_count
NO_COUNT = -1
#: KIP-516: the all-zero UUID is the null ID; a sentinel is reserved and never assigned
ZERO_ID = 0
SENTINEL_ID = 1
FIRST_ID = 2
#: a controller that finds a topic znode without an ID mints one (KafkaController.
#: processTopicIds -> KafkaZkClient.setTopicIds, a random UUID): here MINTED_ID plus its
#: controller epoch. Creations take FIRST_ID, FIRST_ID + 1, ... (at most a few
#: incarnations), and a controller mints at most once for the one topic, so the ID is fresh
MINTED_ID = 100


class PartitionRecord(NamedTuple):
    replicas: tuple  # assignment, in preference order (first = preferred leader)
    leader: int      # broker id or NO_LEADER
    leader_epoch: int
    isr: tuple
    after: tuple = ()   # KIP-253 leaderEpochAfterCreation
    before: tuple = ()  # KIP-253 leaderEpochBeforeDeletion (non-empty: marked)
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


class TopicRecord(NamedTuple):
    name: str
    topic_id: int
    incarnation: int  # ghost
    partitions: tuple  # of PartitionRecord, index = partition number
    version: int = 2   # znode schema version: KIP-516 bumps it to 3 with the "id" field
    undeleted: int = NO_COUNT  # KIP-253 undeleted_partition_count
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


class Store(NamedTuple):
    topics: tuple = ()          # TopicRecord sorted by name
    delete_markers: tuple = ()  # sorted names under /admin/delete_topics
    incarnations: int = 0       # ghost: creations so far (all names), the ID generator's seed
    assignments: tuple = ()     # sorted (name, replicas per partition[, topic ID]): a topic
                                # znode's assignment (and its ID, when that differs) while
                                # the znode differs from the controller's record
    __repr__ = tuple.__repr__  # C-level, canonical: fast fingerprints


fast_replace_all(globals())  # generated _replace: cheaper successor construction


def topic(store: Store, name: str):
    """The topic znode of ``name``, or None (a plain loop: asked several times per state,
    it is cheaper than ``keyed_get``'s key function)."""
    for rec in store.topics:
        if rec.name == name:
            return rec
    return None


def put_topic(store: Store, rec: TopicRecord) -> Store:
    return store._replace(topics=keyed_put(store.topics, rec))


def remove_topic(store: Store, name: str) -> Store:
    return store._replace(topics=keyed_del(store.topics, name),
                          delete_markers=set_remove(store.delete_markers, name),
                          assignments=keyed_del(store.assignments, name))


def assignment(store: Store, name: str) -> tuple:
    """The replicas per partition the topic znode of ``name`` holds (() without one)."""
    written = keyed_get(store.assignments, name)
    if written is not None:
        return written[1]
    rec = topic(store, name)
    return () if rec is None else tuple(p.replicas for p in rec.partitions)


def znode_id(store: Store, name: str) -> int:
    """The topic ID the topic znode of ``name`` holds (ZERO_ID: none, or no znode): the
    controller's record's, unless a write gave the znode another (``write_assignment``)."""
    written = keyed_get(store.assignments, name)
    if written is not None and len(written) > 2:
        return written[2]
    rec = topic(store, name)
    return ZERO_ID if rec is None else rec.topic_id


def write_assignment(store: Store, name: str, replicas: tuple, topic_id=None) -> Store:
    """The topic znode's assignment set to ``replicas`` (one tuple per partition), and its
    topic ID to ``topic_id`` (None: the ID it holds), without the controller's record
    changing; kept only while the znode differs from the record."""
    rec = topic(store, name)
    tid = znode_id(store, name) if topic_id is None else topic_id
    if rec is not None and tid != rec.topic_id:
        return store._replace(assignments=keyed_put(store.assignments, (name, replicas, tid)))
    if rec is not None and replicas == tuple(p.replicas for p in rec.partitions):
        return store._replace(assignments=keyed_del(store.assignments, name))
    return store._replace(assignments=keyed_put(store.assignments, (name, replicas)))


def mark_for_deletion(store: Store, name: str) -> Store:
    return store._replace(delete_markers=set_add(store.delete_markers, name))


def marked(store: Store, name: str) -> bool:
    return name in store.delete_markers


def new_topic(store: Store, name: str, assignments, with_id: bool) -> tuple[Store, TopicRecord]:
    """Create ``name`` with one partition per assignment (leader = first replica, leader
    epoch 0, ISR = all replicas). The topic ID is fresh: unique, never ZERO, never the
    sentinel (KIP-516 draws a random UUID; the model counts, which is what uniqueness
    needs)."""
    inc = store.incarnations + 1
    tid = FIRST_ID + inc - 1 if with_id else ZERO_ID
    parts = tuple(PartitionRecord(tuple(a), a[0], 0, tuple(a)) for a in assignments)
    rec = TopicRecord(name, tid, inc, parts, 3 if with_id else 2)
    return put_topic(store._replace(incarnations=inc), rec), rec


def set_partition(rec: TopicRecord, index: int, part: PartitionRecord) -> TopicRecord:
    return rec._replace(partitions=replace_at(rec.partitions, index, part))


def elect_leader(part: PartitionRecord, live: Callable[[int], bool]) -> PartitionRecord:
    """Leader election after the leader became unavailable: the first live replica of the
    ISR in assignment order (NO_LEADER when none), with the next leader epoch."""
    for b in part.replicas:
        if b in part.isr and live(b):
            return part._replace(leader=b, leader_epoch=part.leader_epoch + 1)
    return part._replace(leader=NO_LEADER, leader_epoch=part.leader_epoch + 1)


def remove_replica(part: PartitionRecord, broker: int) -> PartitionRecord:
    """A reassignment that drops ``broker`` from the assignment (and ISR); the leader epoch
    is bumped as the controller does when a reassignment completes."""
    reps = tuple(b for b in part.replicas if b != broker)
    isr = tuple(b for b in part.isr if b != broker)
    leader = part.leader if part.leader != broker else (isr[0] if isr else NO_LEADER)
    return part._replace(replicas=reps, leader=leader, leader_epoch=part.leader_epoch + 1,
                         isr=isr)
