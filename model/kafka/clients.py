"""The client library: what Kafka's producer and consumer decide on their own side, the
same whatever control plane runs the cluster. Each plane's client steps (``zk/datapath``,
``kraft/clients``, ``kraft/group``, ``kip253/group``) send the requests; the decisions
below are the clients' own.

- **Metadata cache** (clients/src/main/java/org/apache/kafka/clients/Metadata.java):
  whether a Metadata answer replaces the cached partition metadata, by client release
  line (``RULES``, ``accepts``, ``update``; a consumer group member's whole view of a
  topic: ``accepts_view``).
- **Position** (consumer/internals/SubscriptionState.java, the fetcher's offset
  validation of KIP-320): where a consumer's next Fetch starts (``start_offset``), the
  leader's answer to OffsetsForLeaderEpoch (``end_offset_for``) and ``auto.offset.reset``
  (``reset_position``).
- **Range assignor** (consumer/RangeAssignor.java): ``range_assign``.

The cache holds three things per partition: the partition's metadata from the last
accepted answer (topic ID, leader, leader epoch: ``meta``), the topic ID the cache knows
for the name (``known_id``; 0 when none), and the last seen leader epoch
(``lastSeenLeaderEpochs``: ``last_epoch``; -1 when none).

Metadata.handleMetadataResponse takes the topic ID of every topic in the answer into the
new cache, whatever happens to its partitions, and drops the ID of a topic the answer
does not name (UNKNOWN_TOPIC_OR_PARTITION). The last seen leader epoch survives such an
answer. For each partition of a topic in the answer, Metadata.updateLatestMetadata
decides whether the answer replaces the cached partition metadata. Three rules, by
client release line:

- ``epoch`` (clients up to 2.8.1): accepted when no epoch was seen or the answer's
  leader epoch is at least the last seen one.
- ``ids-both`` (3.0.0; KAFKA-12257's first form: commit 52ca4bc3e27 in 3.0.0,
  06dfa54be75 on trunk (first in 3.2.0), 1ffafb9519d for 2.8.2): also accepted when the
  cached and the answered topic IDs are both known and differ.
- ``ids`` (2.8.2, 3.0.1, 3.1.0 and later; KAFKA-13488: commits acc8b0c0b20 in 2.8.2,
  b2a9dfd5a0b in 3.0.1, 0a51be27ddd in 3.1.0, f653cb7b588 on trunk, first in 3.2.0):
  accepted when the answer's topic ID differs from the cached one, the cached one
  unknown included. From 3.5.0 (commit 6d9d65e6664) "no epoch seen" is checked first,
  which accepts the same answers.

Which form each release has was read from Metadata.java at the release tags (2.8.1:
epoch only; 2.8.2: ids; 3.0.0: ids-both; 3.0.1, 3.1.0, 3.2.0, 3.3.0, 3.8.0: ids).

A rejected answer leaves the cached partition metadata as it was
(``cache.partitionMetadata(tp)``, ``metadataSnapshot`` from 3.8.0); after an
UNKNOWN_TOPIC_OR_PARTITION answer there is none, so the client has no leader to send
to. (Kafka would pair kept partition metadata with the answer's topic ID; with these
rules that happens only when no partition metadata is kept or the ID is unchanged, so
the model keeps the cached triple.)

The ZooKeeper plane's producer and consumer take the metadata store's view instead of a
broker's answer (``zk/datapath.snapshot``): that plane folds the brokers' metadata
caches into the store, so no answer is older than the client's last refresh and no rule
has an older answer to refuse.
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


def accepts_view(view: tuple, answer: tuple, rule: str) -> bool:
    """A whole view of one topic, ``(topic_id, ((leader, leader_epoch), ...))``, against
    an answer of the same shape: ``accepts`` for each partition both name, with the
    view's topic ID as the known one and its leader epochs as the last seen ones. The
    view is replaced when every such partition accepts the answer (a new topic ID under
    ``ids`` or ``ids-both``, or no lower leader epoch), and kept whole otherwise;
    Metadata.java decides per partition, and with one topic whose partitions change
    together the outcome is the same."""
    if not view:
        return True
    tid = answer[0]
    return all(accepts(ClientMeta((), view[0], old[1]), tid, new[1], rule)
               for old, new in zip(view[1], answer[1]))


# ---- the consumer's position ---------------------------------------------------------------
def end_offset_for(epoch: int, leader_epoch: int, end: int) -> int:
    """The leader's answer to OffsetsForLeaderEpoch for ``epoch``
    (LeaderEpochFileCache.endOffsetFor): the log end for its current epoch, undefined
    (-1: the consumer treats it as a truncation) for an epoch above every epoch it
    knows. For an older epoch the model answers the log end: it keeps no epoch cache
    per log, and no scenario with a consumer changes a leader epoch within one
    incarnation."""
    return -1 if epoch > leader_epoch else end


def reset_position(policy: str, end: int):
    """SubscriptionState's reset by ``auto.offset.reset``: the log start, ``end`` (the
    leader's last fetchable offset), or None for ``none`` (the error is raised to the
    application)."""
    if policy == "earliest":
        return 0
    if policy == "latest":
        return end
    return None


def start_offset(pos: int, epoch: int, validated: tuple, leader: tuple, leader_epoch: int,
                 end: int, fetchable: int, policy: str, committed: int = -1):
    """Where a consumer's Fetch from ``leader`` (``(broker, leader epoch)`` as its
    metadata names them) starts, or None when the consumer stops on an error.

    ``pos`` is its position (-1: none), ``epoch`` the leader epoch it last read at and
    ``validated`` the ``(broker, leader epoch)`` the position was last used with. KIP-320:
    when the leader differs from ``validated``, the position is first validated
    (SubscriptionState.maybeValidatePositionForCurrentLeader): OffsetsForLeaderEpoch for
    ``epoch``, answered by the leader whose current epoch is ``leader_epoch`` and whose
    log ends at ``end`` (``end_offset_for``). An undefined end is handled as
    OFFSET_OUT_OF_RANGE is (SubscriptionState.maybeCompleteValidation ->
    requestOffsetReset); an end below the position moves the position back to it, or
    with ``none`` stops the consumer (LogTruncationException; SubscriptionState.
    maybeCompleteValidation). Without a position the committed offset is used
    (``committed``; -1: none, ConsumerCoordinator.refreshCommittedOffsetsIfNeeded,
    initWithCommittedOffsetsIfNeeded from 3.7);
    without either, or beyond the log end (OFFSET_OUT_OF_RANGE), ``auto.offset.reset``
    decides (``reset_position``, ``fetchable``: ListOffsets LATEST, the high watermark)."""
    if pos >= 0 and validated != leader and epoch >= 0:
        valid = end_offset_for(epoch, leader_epoch, end)
        if valid < 0:  # undefined end offset: reset by the policy, never the committed one
            return reset_position(policy, fetchable)
        elif valid < pos:
            if policy == "none":
                return None
            pos = valid  # seekValidated to the first offset known to diverge
    if pos < 0:
        pos = committed
    if pos < 0 or pos > end:
        return reset_position(policy, fetchable)
    return pos


# ---- the group's assignor --------------------------------------------------------------------
def range_assign(parts, members: int) -> tuple:
    """Kafka's RangeAssignor on one sorted sequence of partitions: consecutive runs, the
    first members get one extra when the sequence does not divide evenly."""
    parts = tuple(parts)
    out, i = [], 0
    n, extra = divmod(len(parts), members)
    for m in range(members):
        k = n + (1 if m < extra else 0)
        out.append(parts[i:i + k])
        i += k
    return tuple(out)


fast_replace_all(globals())  # generated _replace: cheaper successor construction
