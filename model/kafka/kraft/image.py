"""The metadata image: the state a metadata log prefix describes, and the delta between
two images as one broker sees it.

``replay`` follows Kafka's image/delta classes (metadata/src/main/java/org/apache/kafka/
image/: TopicsDelta.replay for TopicRecord, PartitionRecord, PartitionChangeRecord and
RemoveTopicRecord; ClusterDelta.replay for broker registrations). An image is rebuilt
from a log prefix by replaying every batch in order; ``build`` caches that, since the
same prefixes recur in millions of states.

``local_changes`` is TopicsDelta.localChanges(brokerId): the partitions a broker must
delete (its replicas of removed topics) and the partitions it must lead or follow (its
replicas of created or changed partitions), which ReplicaManager.applyDelta then acts on.
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from kmc.model import memo
from kmc.model.kafka.canon import keyed_del, keyed_get, keyed_put
from kmc.model.records import fast_replace_all


class Part(NamedTuple):
    """A partition in the image (PartitionRegistration)."""
    replicas: tuple
    isr: tuple
    leader: int
    leader_epoch: int
    partition_epoch: int


class TopicImage(NamedTuple):
    topic_id: int
    name: str
    parts: tuple  # Part per partition index


class Image(NamedTuple):
    """What a log prefix of ``offset`` batches describes: topics by ID (TopicsImage)
    and broker registrations ``(broker, broker_epoch, fenced)`` (ClusterImage)."""
    offset: int
    topics: tuple
    brokers: tuple


EMPTY = Image(0, (), ())


def replay(img: Image, rec) -> Image:
    """``img`` with one record applied (TopicsDelta, ClusterDelta); other records, and a
    partition's for a topic ``img`` lacks (a loader fault: docs/model-kraft.md), do not."""
    k = rec.kind
    if k == "TopicRecord":
        return img._replace(topics=keyed_put(img.topics, TopicImage(rec.topic_id, rec.name,
                                                                    ())))
    if k == "PartitionRecord" and keyed_get(img.topics, rec.topic_id) is not None:
        t = keyed_get(img.topics, rec.topic_id)
        part = Part(rec.replicas, rec.isr, rec.leader, rec.leader_epoch,
                    rec.partition_epoch)
        parts = t.parts[:rec.partition] + (part,) + t.parts[rec.partition + 1:]
        return img._replace(topics=keyed_put(img.topics, t._replace(parts=parts)))
    if k == "PartitionChangeRecord" and keyed_get(img.topics, rec.topic_id) is not None:
        t = keyed_get(img.topics, rec.topic_id)
        old = t.parts[rec.partition]
        part = old._replace(isr=rec.isr, leader=rec.leader, leader_epoch=rec.leader_epoch,
                            partition_epoch=rec.partition_epoch)
        parts = t.parts[:rec.partition] + (part,) + t.parts[rec.partition + 1:]
        return img._replace(topics=keyed_put(img.topics, t._replace(parts=parts)))
    if k == "RemoveTopicRecord":
        return img._replace(topics=keyed_del(img.topics, rec.topic_id))
    if k in ("RegisterBrokerRecord", "BrokerRegistrationChangeRecord"):
        return img._replace(brokers=keyed_put(img.brokers,
                                              (rec.broker, rec.broker_epoch, rec.fenced)))
    return img


@memo.pure()
def apply_batch(img: Image, entry) -> Image:
    """``img`` advanced by one log batch (MetadataLoader publishes at batch ends)."""
    for rec in entry.records:
        img = replay(img, rec)
    return img._replace(offset=img.offset + 1)


@lru_cache(maxsize=1 << 16)
def build(log: tuple) -> Image:
    """The image of a whole log prefix (a snapshot plus the log, replayed)."""
    if not log:
        return EMPTY
    return apply_batch(build(log[:-1]), log[-1])


# ---- queries ----------------------------------------------------------------------------
def topic_by_name(img: Image, name: str):
    for t in img.topics:
        if t.name == name:
            return t
    return None


def topic_by_id(img: Image, topic_id: int):
    return keyed_get(img.topics, topic_id)


def fenced(img: Image, broker: int) -> bool:
    """A broker is fenced when its registration says so; an unregistered broker counts
    as fenced (ClusterControlManager.isUnfenced is false for it)."""
    reg = keyed_get(img.brokers, broker)
    return reg is None or reg[2]


def broker_epoch(img: Image, broker: int) -> int:
    reg = keyed_get(img.brokers, broker)
    return 0 if reg is None else reg[1]


def unfenced(img: Image) -> tuple:
    return tuple(b for b, _e, f in img.brokers if not f)


# ---- the delta as one broker sees it ----------------------------------------------------
def local_changes(old: Image, new: Image, broker: int):
    """TopicsDelta.localChanges(brokerId): ``(deletes, changes)``.

    deletes: ``(partition, topic_id)`` of the broker's replicas whose topic was removed,
    or which no longer list the broker. changes: ``(partition, topic_id, Part)`` of the
    partitions listing the broker that were created or changed (become leader or
    follower)."""
    deletes, changes = [], []
    for t in old.topics:
        nt = keyed_get(new.topics, t.topic_id)
        for p, part in enumerate(t.parts):
            if broker not in part.replicas:
                continue
            if nt is None or p >= len(nt.parts) or broker not in nt.parts[p].replicas:
                deletes.append((p, t.topic_id))
    for t in new.topics:
        ot = keyed_get(old.topics, t.topic_id)
        for p, part in enumerate(t.parts):
            if broker not in part.replicas:
                continue
            if ot is None or p >= len(ot.parts) or ot.parts[p] != part:
                changes.append((p, t.topic_id, part))
    return deletes, changes


fast_replace_all(globals())  # generated _replace: cheaper successor construction
