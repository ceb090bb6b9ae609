"""A broker's ReplicaManager applying a metadata delta (ReplicaManager.applyDelta in
core/src/main/scala/kafka/server/ReplicaManager.scala), called by
BrokerMetadataPublisher.onMetadataUpdate for every published delta.

KIP-516 "Compatibility with KIP-500": the delta replaces LeaderAndIsr and StopReplica.
"""
from __future__ import annotations

from kmc.model import memo
from kmc.model.kafka.canon import keyed_del, keyed_get, keyed_put
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import logmanager as lm
from kmc.model.kafka.kraft.state import Hosted


@memo.pure()
def apply_delta(br, old, new, broker: int, by_id: bool = True, flushed: bool = True,
                rename: bool = False):
    """The broker record after applying the delta ``old -> new`` (TopicsDelta.
    localChanges, then applyDelta):

    1. deletes first ("we might subsequently create new partitions with the same
       names"): stopPartitions with deleteLocalLog: the hosted partition is dropped and
       its log (looked up by name) deleted: LogManager.asyncDelete renames it to
       ``-delete`` (kept in ``deleting`` with ``rename``, until the kafka-delete-logs
       task removes it: ``logmanager``) or, without ``rename``, removes it at once;
    2. leaders and followers (applyLocalLeadersDelta / applyLocalFollowersDelta):
       getOrCreatePartition, then Partition.makeLeader / makeFollower, which open the log
       with LogManager.getOrCreateLog. A hosted partition with another topic ID raises
       IllegalStateException and a log with another ID InconsistentTopicIdException; in
       both cases the partition is left as it was and the rest of the delta applied (in
       Kafka the exception ends the whole delta: docs/model-kraft.md "Simplifications").
       A follower's log is truncated and refetched by the replica fetcher; the model
       leaves truncation to the next fetch, which copies the leader's log."""
    deletes, changes = im.local_changes(old, new, broker)
    hosted, logs, deleting = br.hosted, br.logs, br.deleting
    for p, _tid in deletes:
        hosted = keyed_del(hosted, p)
        if rename:
            logs, deleting = lm.rename_for_deletion(logs, deleting, p)
        else:
            logs = lm.delete_log(logs, p)
    for p, tid, part in changes:
        h = keyed_get(hosted, p)
        if h is not None and h.topic_id != tid and by_id:
            continue  # getOrCreatePartition: IllegalStateException
        logs, ok = lm.get_or_create_log(logs, p, tid, by_id, flushed)
        if not ok:
            continue  # getOrCreateLog: InconsistentTopicIdException
        hosted = keyed_put(hosted, Hosted(p, tid, part.leader, part.leader_epoch))
    return br._replace(hosted=hosted, logs=logs, deleting=deleting)
