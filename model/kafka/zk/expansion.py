"""CreatePartitions on the ZooKeeper plane: the admin's request, the controller broker's
ZooKeeper operations, and the controller's reaction to the topic znode's change
(KIP-195 "CreatePartitions"; Kafka 2.8-3.9 in ZooKeeper mode).

Kafka's order of steps, each an action here:

- ``send-create-partitions`` (an input): the admin sends CreatePartitions for the topic
  *name* and a target count (CreatePartitionsRequest names topics by name only;
  KafkaAdminClient sends it to the controller's broker).
- ``create-partitions-read``: the active controller's broker handles it on a request
  thread, not on the controller's event thread (KafkaApis.handleCreatePartitionsRequest:
  NOT_CONTROLLER unless ``controller.isActive``, INVALID_TOPIC_EXCEPTION while
  ``controller.isTopicQueuedForDeletion``; then ZkAdminManager.createPartitions). It
  reads the topic znode's assignment (``getFullReplicaAssignmentForTopics``): none is
  UNKNOWN_TOPIC_OR_PARTITION, a target not above the count INVALID_PARTITIONS. It
  places the new partitions on the registered brokers (``getBrokerMetadatas``, sorted by
  id) with AdminZkClient.createNewPartitionsAssignment: replication factor that of
  partition 0, a fixed start index (the first broker whose id is at least partition 0's
  first replica), so AdminUtils.assignReplicasToBrokersRackUnaware draws no random
  number and the placement is one outcome. Too few brokers: INVALID_REPLICATION_FACTOR.
- ``create-partitions-read-id`` (variants with topic IDs: the 2.8 code on):
  AdminZkClient.createPartitionsWithAssignment -> writeTopicPartitionAssignment(isUpdate
  = true) reads the topic znode's ID (KafkaZkClient.getTopicIdsForTopics, a getData of
  its own; no znode: no ID).
- ``create-partitions-write``: it then writes the assignment it read plus the new
  partitions, and the ID it read, into the topic znode with ``setData`` at any version
  (KafkaZkClient.setTopicAssignment -> setTopicAssignmentRaw: ``ZkVersion.
  MatchAnyVersion``; TopicZNode.encode writes schema version 3 and leaves ``topic_id``
  out when it read none). Nothing checks that the znode is still the one it read: if
  the name was deleted and created again in between, the write lands on the new
  incarnation and overwrites its partitions' assignment with the old one's, and, when
  the ID was read before the re-creation, its topic ID with the old incarnation's (or
  with none, when no znode was there). No znode: ``setData`` fails with NoNode, which
  reaches the admin as UNKNOWN_SERVER_ERROR (an AdminOperationException, not an
  ApiException). The running controller keeps the ID it has in memory (its
  PartitionModifications handler reads the assignment only); the next controller loads
  the znode's ID, or mints a new one for a znode without (``control.load_context``).
- ``partition-modifications``: the znode's watch queues a PartitionModifications event
  for the controller (KafkaController.processPartitionModifications). It reads the
  assignment again and takes only the partitions its context lacks: for a topic queued
  for deletion it writes the context's assignment back (restorePartitionReplicaAssignment)
  and adds nothing; otherwise onNewPartitionCreation moves them NewPartition ->
  OnlinePartition (PartitionStateMachine.initializeLeaderAndIsrForPartitions: leader the
  first live replica, ISR the live replicas, leader epoch 0, LeaderAndIsr to them). A new
  partition without a live replica stays NewPartition (leader epoch -1 here) until a
  broker registers or a controller fails over (triggerOnlinePartitionStateChange takes
  NewPartition and OfflinePartition alike). The partitions it had are not reloaded: an
  overwritten assignment stays in the znode only, until a failover loads it
  (initializeControllerContext).

Simplifications, each with its reason:
- A creation is one step (``control.create``): Kafka's controller reads a new topic's
  ID from its znode when it handles the TopicChange event (processTopicChange ->
  processTopicIds), so a write landing between the znode's creation and that event
  would give the running controller the wrong ID at once. Here only the next
  controller loads it.
- A successful write is answered at once; Kafka's DelayedCreatePartitions waits for the
  new partitions' leaders and answers REQUEST_TIMED_OUT if the controller skipped them.
  Nothing in the model reads the admin's answer.
- Clients' metadata lists a NewPartition partition without a leader; Kafka's metadata
  cache does not list it yet. Neither can be written or read.
- Which deletion the KIP-516 proposal's immediate znode removal leaves "queued" is not
  specified: only a /admin/delete_topics marker counts here.
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka import store as zk
from kmc.model.kafka.canon import bag_add, bag_remove, set_add
from kmc.model.kafka.zk import control, datapath
from kmc.model.kafka.zk.state import TOPIC

#: the action kinds of this module
KINDS = ("send-create-partitions", "create-partitions-read", "create-partitions-read-id",
         "create-partitions-write", "partition-modifications")
UNKNOWN = "UNKNOWN_TOPIC_OR_PARTITION"
INVALID_PARTITIONS = "INVALID_PARTITIONS"
INVALID_RF = "INVALID_REPLICATION_FACTOR"
QUEUED = "INVALID_TOPIC_EXCEPTION"
NO_NODE = "UNKNOWN_SERVER_ERROR"


def placement(brokers: tuple, count: int, rf: int, start: int, first: int) -> tuple:
    """AdminUtils.assignReplicasToBrokersRackUnaware with a fixed start index: replicas
    of partitions ``first`` .. ``first + count - 1`` over ``brokers`` (sorted ids)."""
    n, shift, out = len(brokers), start, []
    for p in range(first, first + count):
        if p > 0 and p % n == 0:
            shift += 1
        head = (p + start) % n
        reps = [brokers[head]]
        for j in range(rf - 1):
            reps.append(brokers[(head + 1 + (shift + j) % (n - 1)) % n])
        out.append(tuple(reps))
    return tuple(out)


def _answer(w, req, resolved: int, error: str, **kw):
    ghost = w.ghost._replace(expansions=set_add(w.ghost.expansions,
                                                (req[1], resolved, error)))
    return w._replace(requests=bag_remove(w.requests, req), ghost=ghost, **kw)



def actions(m, w) -> list:
    out = [("send-create-partitions",)] if w.budget.adds > 0 else []
    for i, req in enumerate(w.requests):
        if i and req == w.requests[i - 1]:
            continue  # equal requests in flight: handling either is the same step
        if len(req[2]) == 2 and m.flags.topic_ids:
            out.append(("create-partitions-read-id", req[3], i))
        elif req[2]:
            out.append(("create-partitions-write", req[3], i))
        else:
            out.append(("create-partitions-read", w.ctl.active, i))
    rec = zk.topic(w.store, TOPIC)
    if rec is not None and len(zk.assignment(w.store, TOPIC)) > len(rec.partitions):
        out.append(("partition-modifications", w.ctl.active))
    return out


def send(m, w):
    """The admin sends CreatePartitions for the name (``send-create-partitions``;
    KIP-195 "CreatePartitions"; KafkaAdminClient.createPartitions)."""
    req = (m.bounds.target, datapath.live_inc(w.store), (), 0)
    return w._replace(requests=bag_add(w.requests, req),
                      budget=w.budget._replace(adds=w.budget.adds - 1))


def read(m, w, c: int, i: int):
    """The controller's broker checks the request and reads the znode's assignment
    (KIP-195; KafkaApis.handleCreatePartitionsRequest -> ZkAdminManager.createPartitions,
    KafkaZkClient.getFullReplicaAssignmentForTopics,
    AdminZkClient.createNewPartitionsAssignment)."""
    if c != w.ctl.active:
        return None  # NOT_CONTROLLER: the admin sends it to the new controller
    req = w.requests[i]
    rec = zk.topic(w.store, TOPIC)
    if rec is None:
        return _answer(w, req, 0, UNKNOWN)
    if zk.marked(w.store, TOPIC):
        return _answer(w, req, rec.incarnation, QUEUED)
    existing = zk.assignment(w.store, TOPIC)
    if req[0] <= len(existing):
        return _answer(w, req, rec.incarnation, INVALID_PARTITIONS)
    brokers, rf = bk.live_ids(w.brokers), len(existing[0])
    if rf > len(brokers):
        return _answer(w, req, rec.incarnation, INVALID_RF)
    start = next((k for k, b in enumerate(brokers) if b >= existing[0][0]), 0)
    new = placement(brokers, req[0] - len(existing), rf, start, len(existing))
    return w._replace(requests=bag_add(bag_remove(w.requests, req),
                                       (req[0], req[1], (existing, new), c)))


def read_id(m, w, c: int, i: int):
    """Controller ``c``'s broker reads the topic znode's ID before it writes (KIP-516's ID in
    the znode; AdminZkClient.writeTopicPartitionAssignment -> KafkaZkClient.
    getTopicIdsForTopics: NONODE, or a znode without ``topic_id``, gives no ID)."""
    req = w.requests[i]
    tid = zk.znode_id(w.store, TOPIC)
    return w._replace(requests=bag_add(bag_remove(w.requests, req),
                                       (req[0], req[1], req[2] + (tid,), req[3])))


def write(m, w, c: int, i: int):
    """Controller ``c``'s broker writes the assignment it read plus the new partitions, with
    the topic ID it read (whether or not ``c`` is still the active controller: the write
    is not fenced). KIP-195; AdminZkClient.createPartitionsWithAssignment ->
    KafkaZkClient.setTopicAssignment at ZkVersion.MatchAnyVersion (no compare-and-set
    with the reads). Without topic IDs (``legacy``: 2.7) no ID is read or written."""
    req = w.requests[i]
    rec = zk.topic(w.store, TOPIC)
    if rec is None:
        return _answer(w, req, 0, NO_NODE)
    existing, new = req[2][:2]
    tid = req[2][2] if len(req[2]) > 2 else None
    store = zk.write_assignment(w.store, TOPIC, existing + new, tid)
    return _answer(w, req, rec.incarnation, "", store=store)


def modifications(m, w, c):
    """The controller handles the topic znode's change (``partition-modifications``;
    KIP-195; KafkaController.processPartitionModifications -> onNewPartitionCreation)."""
    if c != w.ctl.active:
        return None
    rec = zk.topic(w.store, TOPIC)
    znode = zk.assignment(w.store, TOPIC)
    have = len(rec.partitions)
    if zk.marked(w.store, TOPIC):  # restorePartitionReplicaAssignment: its own ID too
        keep = tuple(p.replicas for p in rec.partitions)
        return w._replace(store=zk.write_assignment(w.store, TOPIC, keep, rec.topic_id))
    parts = tuple(control.online(w, znode[k]) for k in range(have, len(znode)))
    rec = rec._replace(partitions=rec.partitions + parts)
    store = zk.write_assignment(zk.put_topic(w.store, rec), TOPIC, znode)
    changed = {have + k: p.isr for k, p in enumerate(parts) if p.isr}
    net = control.notify(m, w, w.net, store, changed)
    return w._replace(store=store, net=net, ghost=control.record_leaders(w.ghost, rec))
