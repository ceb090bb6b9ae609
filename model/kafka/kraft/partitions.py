"""CreatePartitions on KRaft: the admin's request in flight, and the active controller
handling it (KIP-195 "CreatePartitions"; KRaft: QuorumController.createPartitions ->
ReplicationControlManager.createPartitions).

- ``send-create-partitions`` (an input): the admin sends CreatePartitions for the topic
  *name* with a target count (CreatePartitionsRequest.json names topics by name only;
  KafkaAdminClient.getCreatePartitionsCall; in KRaft the broker forwards it to the
  active controller, KafkaApis.handleCreatePartitionsRequest ->
  maybeForwardToController). The request stays in flight until the controller handles
  it, so a deletion and a re-creation of the name can fall in between.
- ``create-partitions`` (a controller step): the write event resolves the name against
  the controller's in-memory state at the moment it runs (ReplicationControlManager.
  createPartitions(context, topic, records): ``topicsByName.get(name)``, then
  ``topics.get(topicId)``; both read the timeline state, uncommitted records
  included). No topic by that name: UNKNOWN_TOPIC_OR_PARTITION, nothing written. A
  target not above the current count: INVALID_PARTITIONS. Otherwise one
  PartitionRecord per new partition, replication factor that of the topic's first
  partition, replicas placed on unfenced brokers (ClusterControlManager.replicaPlacer,
  StripedReplicaPlacer; the model enumerates every placement), ISR the replicas that
  are active, leader the first replica, epochs 0 (PartitionRegistration.toRecord),
  appended as one atomic batch (ControllerResult.atomicOf). Too few unfenced brokers:
  INVALID_REPLICATION_FACTOR (the placer throws), nothing written.

So a request sent for one incarnation and handled after the name was deleted and
created again grows the new incarnation: the controller has no way to tell which
incarnation the admin meant. DeleteTopics, by contrast, resolves the name when it is
handled too (ControllerApis.deleteTopics: findTopicIds at the last stable offset, then
deleteTopics by ID), which the model's one-step ``delete`` matches.

Simplifications: the admin's per-topic errors are final (KafkaAdminClient completes
the future exceptionally; only THROTTLING_QUOTA_EXCEEDED is retried), so a handled
request leaves the flight. A request whose batch a controller failover loses would be
answered NOT_CONTROLLER and sent again; the CreatePartitions scenarios have no
failover, and with failovers the model does not send it again.
"""
from __future__ import annotations

from itertools import permutations, product

from kmc.model.kafka.canon import bag_add, bag_remove, set_add
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import records as rc
from kmc.model.kafka.kraft.state import TOPIC, inc_of

UNKNOWN = "UNKNOWN_TOPIC_OR_PARTITION"
INVALID_PARTITIONS = "INVALID_PARTITIONS"
INVALID_RF = "INVALID_REPLICATION_FACTOR"


def outcomes(img, target: int):
    """What the controller can do with a CreatePartitions to ``target`` partitions
    against ``img`` (its in-memory state): ``[(error, records)]``, one entry per
    replica placement when it succeeds."""
    t = im.topic_by_name(img, TOPIC)
    if t is None:
        return [(UNKNOWN, ())]
    have = len(t.parts)
    if target <= have:
        return [(INVALID_PARTITIONS, ())]
    rf = len(t.parts[0].replicas)
    ok = im.unfenced(img)
    if len(ok) < rf:
        return [(INVALID_RF, ())]
    out = []
    for lays in product(permutations(ok, rf), repeat=target - have):
        recs = tuple(rc.partition(t.topic_id, have + k, lay, lay, lay[0])
                     for k, lay in enumerate(lays))
        out.append(("", recs))
    return out


def actions(model, w) -> list:
    out = []
    if w.adds_left > 0:
        out.append(("send-create-partitions",))
    img = model.controller_image(w.quorum)
    for i, req in enumerate(w.requests):
        if i and req == w.requests[i - 1]:
            continue  # equal requests in flight: handling either is the same step
        for j in range(len(outcomes(img, req[0]))):
            out.append(("create-partitions", i, j))
    return out


def send(model, w):
    """The admin sends CreatePartitions for the name and the scenario's target count
    (``send-create-partitions``); the request stays in flight. KIP-195
    "CreatePartitions"; clients/admin/KafkaAdminClient.java ``getCreatePartitionsCall``;
    KafkaApis.scala ``maybeForwardToController`` (no topic ID in the request)."""
    t = im.topic_by_name(model.committed_image(w.quorum), TOPIC)
    sent = 0 if t is None else inc_of(t.topic_id)
    return w._replace(requests=bag_add(w.requests, (model.bounds.target, sent)),
                      adds_left=w.adds_left - 1)


def handle(model, w, i: int, j: int):
    """The active controller handles in-flight request ``i`` (placement ``j``): an
    error, or one PartitionRecord per new partition in one batch (``outcomes``). KIP-195;
    controller/QuorumController.java ``createPartitions``; ReplicationControlManager.java
    ``createPartitions``; ControllerApis.scala ``createPartitions``."""
    q = w.quorum
    req = w.requests[i]
    img = model.controller_image(q)
    error, recs = outcomes(img, req[0])[j]
    t = im.topic_by_name(img, TOPIC)
    resolved = 0 if t is None else inc_of(t.topic_id)
    if recs:
        q = model.append(q, recs)
    return w._replace(quorum=q, requests=bag_remove(w.requests, req),
                      expansions=set_add(w.expansions, (req[1], resolved, error)))


def format_action(action) -> str:
    if action[0] == "send-create-partitions":
        return f"admin sends CreatePartitions {TOPIC}"
    return f"controller handles CreatePartitions {TOPIC} (outcome {action[2]})"
