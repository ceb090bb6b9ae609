"""KIP-253's znodes on the shared metadata store (``model.kafka.store``).

The KIP-253 procedure reads and writes the same records as the topic lifecycle: the
topic znode (``TopicRecord``, with KIP-253's ``undeleted`` count) and its partition
state znodes (``PartitionRecord``, with the ``after`` / ``before`` epoch maps). In the
KIP's words ("ZooKeeper changes"):

- the assignment in the topic znode: ``store.assignment``, partitions 0 .. total-1;
- undeleted_partition_count: ``TopicRecord.undeleted``;
- a partition's znode: ``TopicRecord.partitions[p]``. Partition ids stay a prefix: an
  expansion writes the assignment first and creates the missing znodes later (until
  then the assignment is longer than the znodes), a removal takes the highest partition
  out of the assignment first and deletes its znode after (until then it is an orphan);
- a znode's leaderEpoch: ``PartitionRecord.leader_epoch``. The one broker (``BROKER``)
  is the only replica, leader and ISR of every partition.

One topic (``TOPIC``), created once (incarnation 1) before topic IDs (``ZERO_ID``).
"""
from __future__ import annotations

from kmc.model.kafka import store as zk
from kmc.model.kafka.kip253.channels import BROKER, INCARNATION
from kmc.model.kafka.store import PartitionRecord, TopicRecord, ZERO_ID

TOPIC = "A"
_ALONE = (BROKER,)


def record(st) -> TopicRecord:
    """The topic znode."""
    return zk.topic(st, TOPIC)


def total(st, rec: TopicRecord | None = None) -> int:
    """Partitions in the topic znode's assignment (undeleted + marked for deletion):
    ``len(store.assignment(st, TOPIC))``. ``rec``: the topic znode, when the caller has
    it."""
    for name, replicas, *_id in st.assignments:
        if name == TOPIC:
            return len(replicas)
    return len((rec or record(st)).partitions)


def beyond_count(st) -> tuple:
    """``(znodes, partitions)``: the partition znodes, and the partitions at or above
    undeleted_partition_count that are in the assignment and have a znode."""
    rec = record(st)
    zn = rec.partitions
    return zn, range(rec.undeleted, min(total(st, rec), len(zn)))


def undeleted(st) -> int:
    """undeleted_partition_count of the topic znode."""
    return record(st).undeleted


def znodes(st) -> tuple:
    """The partition znodes, partition p at index p (a prefix of the partition ids)."""
    return record(st).partitions


def znode(st, p: int):
    """Partition ``p``'s znode, or None."""
    parts = record(st).partitions
    return parts[p] if p < len(parts) else None


def new_znode(epoch: int, after: tuple = ()) -> PartitionRecord:
    return PartitionRecord(_ALONE, BROKER, epoch, _ALONE, after, ())


def bumped(z: PartitionRecord) -> PartitionRecord:
    """The znode with its leaderEpoch incremented."""
    return z._replace(leader_epoch=z.leader_epoch + 1)


def initial(n: int, parts: tuple):
    """The store of a topic with ``n`` partitions, all with znodes ``parts``."""
    rec = TopicRecord(TOPIC, ZERO_ID, INCARNATION, parts, 2, n)
    return zk.put_topic(zk.Store(incarnations=INCARNATION), rec)


def written(st, total_: int | None = None, undeleted_: int | None = None,
            parts: tuple | None = None):
    """The store with the assignment's partition count, undeleted_partition_count or the
    partition znodes replaced (the others kept)."""
    rec = record(st)
    n = total(st) if total_ is None else total_
    if undeleted_ is not None or parts is not None:
        rec = rec._replace(undeleted=rec.undeleted if undeleted_ is None else undeleted_,
                           partitions=rec.partitions if parts is None else parts)
        st = zk.put_topic(st, rec)
    return zk.write_assignment(st, TOPIC, (_ALONE,) * n)
