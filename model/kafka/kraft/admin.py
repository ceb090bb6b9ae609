"""Admin requests to the active controller: CreateTopics and DeleteTopics for the one
topic name (KIP-4 "Create Topics Request" / "Delete Topics Request"; KIP-516
"CreateTopics" / "DeleteTopics").

The admin retries a request until its record is committed: a request whose records a
failover lost is answered NOT_CONTROLLER and sent again (QuorumController completes a
write's future only at commit). So the admin's budget counts the records in the log,
and a lost request can be issued again.
"""
from __future__ import annotations

from itertools import permutations

from kmc.model.kafka.kraft import controller as ctl
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft.state import TOPIC


def _count(log, kind: str) -> int:
    return sum(1 for e in log for r in e.records if r.kind == kind)


def actions(model, w) -> list:
    q, bd = w.quorum, model.bounds
    img = model.controller_image(q)
    t = im.topic_by_name(img, TOPIC)
    out = []
    if _delete_target(model, q) is not None and \
            _count(q.log, "RemoveTopicRecord") < bd.deletes:
        out.append(("delete",))
    if t is None and _count(q.log, "TopicRecord") < bd.incarnations:
        ok = im.unfenced(img)
        if len(ok) >= bd.rf:  # else INVALID_REPLICATION_FACTOR: nothing is written
            out.extend(("create", lay) for lay in permutations(ok, bd.rf))
    return out


def layouts(first: tuple, partitions: int) -> tuple:
    """Replica lists per partition, rotated like StripedReplicaPlacer's striping."""
    n = len(first)
    return tuple(first[p % n:] + first[:p % n] for p in range(partitions))


def create(model, w, first: tuple):
    """CreateTopics: the active controller appends the TopicRecord (a new topic ID) and
    one PartitionRecord per partition as one batch, replicas from ``first`` on
    (controller.create_topic). KIP-4 "Create Topics Request"; KIP-516 "CreateTopics";
    controller/ReplicationControlManager.java ``createTopics`` -> ``createTopic``,
    ControllerResult.atomicOf."""
    q = w.quorum
    bd = model.bounds
    recs = ctl.create_topic(model.controller_image(q), TOPIC, w.next_id,
                            layouts(first, bd.recreate_partitions or bd.partitions))
    return w._replace(quorum=model.append(q, recs), next_id=w.next_id + 1)


def _delete_target(model, q):
    """The topic a DeleteTopics for the name removes, or None (nothing written).
    ControllerApis.deleteTopics first resolves the name with QuorumController.
    findTopicIds, a read event at the last committed offset
    (``offsetControl.lastStableOffset()``: ReplicationControlManager.findTopicIds reads
    ``topicsByName`` at that offset; no topic of that name is
    UNKNOWN_TOPIC_OR_PARTITION), then deletes by ID against the controller's in-memory
    state (ReplicationControlManager.deleteTopic: UnknownTopicIdException when that ID
    is gone already). A topic whose creation is not committed yet cannot be deleted."""
    t = im.topic_by_name(model.committed_image(q), TOPIC)
    if t is None or im.topic_by_id(model.controller_image(q), t.topic_id) is None:
        return None
    return t


def delete(model, w):
    """DeleteTopics: the active controller appends a RemoveTopicRecord for the topic the
    name resolves to (``_delete_target``; controller.delete_topic). KIP-516
    "DeleteTopics", "Compatibility with KIP-500"; ControllerApis.deleteTopics ->
    QuorumController.findTopicIds, then ReplicationControlManager.java ``deleteTopics``
    -> ``deleteTopic``."""
    q = w.quorum
    t = _delete_target(model, q)
    return w._replace(quorum=model.append(q, ctl.delete_topic(t.topic_id)))
