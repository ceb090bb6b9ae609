"""A client's metadata cache for one partition, as Kafka's client code keeps it
(clients/src/main/java/org/apache/kafka/clients/Metadata.java), shared by the consumer
and the producer.

The cache holds three things per partition: the partition's metadata from the last
accepted answer (topic ID, leader, leader epoch: ``meta``), the topic ID the cache knows
for the name (``known_id``; 0 when none), and the last seen leader epoch
(``lastSeenLeaderEpochs``: ``last_epoch``; -1 when none).

Metadata.handleMetadataResponse takes the topic ID of every topic in the answer into the
new cache, whatever happens to its partitions, and drops the ID of a topic the answer
does not name (UNKNOWN_TOPIC_OR_PARTITION). The last seen leader epoch survives such an
answer. For each partition of a topic in the answer, Metadata.updateLatestMetadata
decides whether the answer replaces the cached partition metadata. Three rules, by
client release line (``RULES``):

- ``epoch`` (clients up to 2.8.1): accepted when no epoch was seen or the answer's
  leader epoch is at least the last seen one.
- ``ids-both`` (3.0.0; KAFKA-12257's first form: commit 06dfa54be75 on trunk,
  1ffafb9519d for 2.8.2): also accepted when the cached and the answered topic IDs are
  both known and differ.
- ``ids`` (2.8.2, 3.0.1, 3.1.0 and later; KAFKA-13488: commit f653cb7b588 on trunk,
  b2a9dfd5a0b on the 3.1 line): accepted when the answer's topic ID differs from the
  cached one, the cached one unknown included. Kafka 3.8 checks "no epoch seen" first,
  which accepts the same answers.

Which form each release has was read from Metadata.java at the release tags (2.8.1:
epoch only; 2.8.2: ids; 3.0.0: ids-both; 3.0.1, 3.1.0, 3.2.0, 3.3.0, 3.8.0: ids).

A rejected answer leaves the cached partition metadata as it was
(``cache.partitionMetadata(tp)``); after an UNKNOWN_TOPIC_OR_PARTITION answer there is
none, so the client has no leader to send to. (Kafka would pair kept partition metadata
with the answer's topic ID; with these rules that happens only when no partition
metadata is kept or the ID is unchanged, so the model keeps the cached triple.)
"""
from __future__ import annotations

from typing import NamedTuple

from kmc.model.records import fast_replace_all

RULES = ("epoch", "ids-both", "ids")


class ClientMeta(NamedTuple):
    meta: tuple       # (topic_id, leader, leader_epoch) or ()
    known_id: int     # the topic ID the cache knows for the name, 0 when none
    last_epoch: int   # lastSeenLeaderEpochs, -1 when none


EMPTY = ClientMeta((), 0, -1)


def accepts(cache: ClientMeta, topic_id: int, leader_epoch: int, rule: str) -> bool:
    """Metadata.updateLatestMetadata: does an answer naming ``topic_id`` at
    ``leader_epoch`` replace the cached partition metadata?"""
    if cache.last_epoch < 0 or leader_epoch >= cache.last_epoch:
        return True
    if rule == "ids":
        return topic_id != cache.known_id
    if rule == "ids-both":
        return cache.known_id != 0 and topic_id != cache.known_id
    return False


def update(cache: ClientMeta, answer, rule: str) -> ClientMeta:
    """The cache after one Metadata answer: ``answer`` is ``(topic_id, leader,
    leader_epoch)`` or None for UNKNOWN_TOPIC_OR_PARTITION."""
    if answer is None:
        return ClientMeta((), 0, cache.last_epoch)
    tid, _leader, le = answer
    known = 0 if rule == "epoch" else tid  # 2.8 clients keep no topic IDs
    if accepts(cache, tid, le, rule):
        return ClientMeta(tuple(answer), known, le)
    return cache._replace(known_id=known)


fast_replace_all(globals())  # generated _replace: cheaper successor construction
