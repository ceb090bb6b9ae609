"""Controller-side steps: admin requests (KIP-4 / KIP-516), deletion, StopReplica retries,
reactions to broker crashes and restarts, and the new controller's resync after a
failover (the failover itself is the cluster's: ``zk.failover``).

Each public function is one action: ``f(m, w, ...) -> World | None`` where ``m`` is the
cluster model (``zk.cluster``: flags, bounds, network) and None means "not enabled / no
effect". The docstring names the KIP section it models.
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka import store as zk
from kmc.model.kafka.canon import set_add, set_remove, set_union
from kmc.model.kafka.messages import (
    FULL, INCREMENTAL, PartitionState, lair, stop_replica, stop_replica_response,
)
from kmc.model.kafka.store import ZERO_ID
from kmc.model.kafka.zk.state import TOPIC, Ghost

OK = "NONE"
#: the leader epoch of a partition the controller has not brought online (NewPartition)
NEW_PARTITION = -1


# ---- helpers ------------------------------------------------------------------------------
def live(w, b) -> bool:
    return w.brokers[b - 1].status != bk.DOWN


def post(m, w, net, msg):
    """Send ``msg`` unless its destination is a down broker or a deposed controller (no
    connection: the send fails and is lost)."""
    d = msg.dst
    if d > 0 and w.brokers[d - 1].status == bk.DOWN:
        return net
    if d < 0 and -d != w.ctl.active:
        return net
    return m.net.send(net, msg)


def active_topic(store):
    """The topic znode when it exists and is not being deleted (legacy marker)."""
    rec = zk.topic(store, TOPIC)
    if rec is None or zk.marked(store, TOPIC):
        return None
    return rec


def typed(m) -> bool:
    """The controller marks LeaderAndIsr FULL / INCREMENTAL (KIP-516 "LeaderAndIsr" v5);
    a ZooKeeper controller as shipped leaves the Type field unset."""
    return m.flags.topic_ids and m.flags.lair_type


def stop_id(m, rec) -> int:
    """The topic ID a StopReplica names: none when StopReplica goes by name (legacy, and
    StopReplicaRequest as shipped: no topic ID field in any version)."""
    return rec.topic_id if m.flags.stop_replica_ids else ZERO_ID


def parts_for(store, b, only=None) -> tuple:
    """LeaderAndIsr partition states for broker ``b`` (optionally only partitions in
    ``only``)."""
    rec = active_topic(store)
    if rec is None:
        return ()
    return tuple(PartitionState(i, rec.topic_id, rec.incarnation, p.leader, p.leader_epoch)
                 for i, p in enumerate(rec.partitions)
                 if b in p.replicas and p.leader_epoch != NEW_PARTITION
                 and (only is None or i in only))


def notify(m, w, net, store, changed: dict):
    """INCREMENTAL LeaderAndIsr to every live replica of the partitions in ``changed``
    (partition -> replicas to tell)."""
    targets: dict[int, set] = {}
    for p, reps in changed.items():
        for b in reps:
            if live(w, b):
                targets.setdefault(b, set()).add(p)
    src, ep = -w.ctl.active, w.ctl.epoch
    typ = INCREMENTAL if typed(m) else ""
    for b in sorted(targets):
        net = post(m, w, net, lair(src, b, ep, typ, parts_for(store, b, targets[b])))
    return net


def record_leaders(ghost, rec):
    """The ghost with every (incarnation, partition, leader epoch, leader) that ``rec``
    names (LeaderEpochUnique is stated over this history)."""
    named = ((rec.incarnation, i, p.leader_epoch, p.leader)
             for i, p in enumerate(rec.partitions) if p.leader != zk.NO_LEADER)
    return ghost._replace(leaders=set_union(ghost.leaders, named))


def initial_ghost(rec, initial_records: int):
    """History of the initial state: incarnation 1's leaders and its records, which every
    replica holds (acknowledged)."""
    acked = tuple((rec.incarnation, p, o) for p in range(len(rec.partitions))
                  for o in range(initial_records))
    return record_leaders(Ghost(acked=acked), rec)


def _admin_after(admin, op, error, **kw):
    return admin._replace(outcome=(op, error), **kw)


# ---- admin requests -----------------------------------------------------------------------
def create(m, w, assignment):
    """CreateTopics (KIP-4 "Create Topic Request"; KIP-516 "CreateTopicsResponse v7": the
    response carries the new topic ID). Refused with TOPIC_ALREADY_EXISTS while the znode
    exists — in legacy also while its deletion is pending, the KAFKA-6098 race. The
    controller writes /brokers/topics/[topic] with a fresh topic ID (KIP-516 "Proposed
    Changes") and sends INCREMENTAL LeaderAndIsr to the new replicas. Kafka:
    KafkaApis.handleCreateTopicsRequest -> ZkAdminManager.createTopics ->
    AdminZkClient.createTopicWithAssignment (the controller's broker draws the topic ID);
    KafkaController.processTopicChange -> onNewPartitionCreation."""
    a = w.admin
    if zk.topic(w.store, TOPIC) is not None:
        return w._replace(admin=_admin_after(a, "create", "TOPIC_ALREADY_EXISTS"))
    if not assignment:
        return w._replace(admin=_admin_after(a, "create", "INVALID_REPLICATION_FACTOR"))
    rf, n = len(assignment), m.bounds.partitions
    layouts = [assignment[p % rf:] + assignment[:p % rf] for p in range(n)]
    store, rec = zk.new_topic(w.store, TOPIC, layouts, m.flags.topic_ids)
    net = notify(m, w, w.net, store, {p: layouts[p] for p in range(n)})
    admin = _admin_after(a, "create", OK, creates=a.creates - 1, known_id=rec.topic_id,
                         next_op="delete" if a.deletes > 0 else "done")
    return w._replace(store=store, net=net, admin=admin,
                      ghost=record_leaders(w.ghost, rec))


def delete(m, w, by):
    """DeleteTopics by name (KIP-4 "Delete Topic Request") or by topic ID (KIP-516
    "DeleteTopicsRequest v6", UNKNOWN_TOPIC_ID when the ID does not exist).

    kip516 ("DeleteTopics"): the znode is removed and the request answered at once; the
    controller keeps the replicas to garbage-collect in memory and sends StopReplica.
    legacy: /admin/delete_topics/[topic] is written; the topic stays until every replica
    acknowledged StopReplica. The legacy response is also immediate: the broker answers
    once its metadata cache dropped the topic, which the deletion's first UpdateMetadata
    does (the root of KAFKA-6098). Kafka: KafkaApis.handleDeleteTopicsRequest ->
    ZkAdminManager.deleteTopics (the marker); KafkaController.processTopicDeletion ->
    TopicDeletionManager.enqueueTopicsForDeletion -> onTopicDeletion ->
    onPartitionDeletion."""
    a = w.admin
    rec = zk.topic(w.store, TOPIC)
    if by == "id" and (rec is None or rec.topic_id != a.known_id):
        return w._replace(admin=_admin_after(a, "delete", "UNKNOWN_TOPIC_ID"))
    if rec is None or zk.marked(w.store, TOPIC):
        return w._replace(admin=_admin_after(a, "delete", "UNKNOWN_TOPIC_OR_PARTITION"))
    tid = stop_id(m, rec)
    doomed = [(b, i, tid, rec.incarnation)
              for i, p in enumerate(rec.partitions) for b in p.replicas]
    if m.flags.immediate_delete:
        store = zk.remove_topic(w.store, TOPIC)
    else:
        store = zk.mark_for_deletion(w.store, TOPIC)
    net = w.net
    src, ep = -w.ctl.active, w.ctl.epoch
    for b, i, tid, inc in doomed:
        net = post(m, w, net, stop_replica(src, b, ep, i, tid, inc))
    admin = _admin_after(a, "delete", OK, deletes=a.deletes - 1,
                         next_op="create" if a.creates > 0 else "done")
    # the history the properties keep is the live incarnation's: a deleted one never gets
    # a leader, a record or a reader again
    ghost = w.ghost._replace(leaders=(), appends=(), acked=(), consumed=())
    return w._replace(store=store, net=net, admin=admin, ghost=ghost,
                      mem=w.mem._replace(pending=set_union(w.mem.pending, doomed)))


def reassign(m, w, p, b):
    """A reassignment that moves partition ``p`` away from the down broker ``b`` (KIP-516
    "Motivation": "partitions [can] be reassigned away from brokers while they are down and
    there are no guarantees that this state will ever be cleaned up"). The StopReplica
    for ``b`` cannot be sent while it is down and is not retried: Kafka's
    KafkaController.onPartitionReassignment -> stopRemovedReplicasOfReassignedPartition
    sends StopReplica only to live brokers and waits for no answer."""
    rec = active_topic(w.store)
    if rec is None or live(w, b):
        return None
    part = rec.partitions[p]
    if b not in part.replicas or len(part.replicas) < 2:
        return None
    part = zk.remove_replica(part, b)
    rec = zk.set_partition(rec, p, part)
    store = zk.put_topic(w.store, rec)
    # the reassignment's end writes the controller's assignment to the topic znode
    store = zk.write_assignment(store, TOPIC, tuple(x.replicas for x in rec.partitions))
    ghost = record_leaders(w.ghost, rec)._replace(reassigned=w.ghost.reassigned + 1)
    return w._replace(store=store, net=notify(m, w, w.net, store, {p: part.replicas}),
                      ghost=ghost, budget=w.budget._replace(reassign=w.budget.reassign - 1))


# ---- deletion -----------------------------------------------------------------------------
def on_stop_replica_response(m, w, msg):
    """The controller records a successful StopReplica (KIP-516 "DeleteTopics", step 3:
    finalize successful deletes). legacy: when the last replica of a marked topic
    answered, the znodes /brokers/topics/[topic] and /admin/delete_topics/[topic] go
    (KafkaController.processTopicDeletionStopReplicaResponseReceived ->
    TopicDeletionManager.completeReplicaDeletion, completeDeleteTopic)."""
    net = m.net.deliver(w.net, msg)
    if msg.epoch != w.ctl.epoch or msg.error != OK:
        return w._replace(net=net)
    pending = set_remove(w.mem.pending, (msg.src, msg.partition, msg.topic_id, msg.inc))
    store = w.store
    rec = zk.topic(store, TOPIC)
    if (rec is not None and zk.marked(store, TOPIC)
            and not any(e[3] == rec.incarnation for e in pending)):
        store = zk.remove_topic(store, TOPIC)
    return w._replace(net=net, mem=w.mem._replace(pending=pending), store=store)


def stop_replica_in_flight(m, w, b, p, tid) -> bool:
    """Whether the active controller's StopReplica to broker ``b`` for the partition and
    topic ID, or its answer, is in flight (one question to the network)."""
    ctl, ep = -w.ctl.active, w.ctl.epoch

    def question(msgs) -> bool:
        for x in msgs:
            k = x.kind
            if k == "StopReplica":
                if x.dst == b and x.src == ctl and x.partition == p and x.topic_id == tid \
                        and x.epoch == ep:
                    return True
            elif k == "StopReplicaResponse":
                if x.src == b and x.dst == ctl and x.partition == p and x.topic_id == tid \
                        and x.epoch == ep:
                    return True
        return False
    return m.net.ask(w.net, question)


def retry_stop(m, w, c, b, p, tid, inc):
    """Retry an unsuccessful StopReplica (KIP-516 "DeleteTopics", step 4: "Any unsuccessful
    StopReplicaRequest(s) will be retried after retryMs"): the broker is registered and
    neither the request nor its response is in flight (the timeout has passed). Kafka
    has no retry timer: a failed replica is marked ineligible
    (TopicDeletionManager.failReplicaDeletion) and its deletion resumed later
    (resumeDeletionForTopics, retryDeletionForIneligibleReplicas)."""
    if not m.flags.retry_stop_replica or not live(w, b) or c != w.ctl.active:
        return None
    if stop_replica_in_flight(m, w, b, p, tid):
        return None
    msg = stop_replica(-w.ctl.active, b, w.ctl.epoch, p, tid, inc)
    return w._replace(net=post(m, w, w.net, msg))


def respond_stop(m, w, net, msg, error=OK):
    return post(m, w, net, stop_replica_response(msg, error))


# ---- reactions to broker liveness ---------------------------------------------------------
def elect_for_crash(m, w, b, brokers):
    """Leader election for the partitions led by the crashed broker ``b`` (the controller
    reacts to the lost ZooKeeper session) and INCREMENTAL LeaderAndIsr to the survivors.
    Returns (store, network, ghost)."""
    rec = active_topic(w.store)
    if rec is None:
        return w.store, w.net, w.ghost
    changed = {}
    w2 = w._replace(brokers=brokers)
    for i, part in enumerate(rec.partitions):
        if part.leader == b:
            new = zk.elect_leader(part, lambda x: x != b and live(w2, x))
            if not m.flags.bump_leader_epoch:
                new = new._replace(leader_epoch=part.leader_epoch)
            rec = zk.set_partition(rec, i, new)
            changed[i] = new.replicas
    if not changed:
        return w.store, w.net, w.ghost
    store = zk.put_topic(w.store, rec)
    return store, notify(m, w2, w2.net, store, changed), record_leaders(w.ghost, rec)


def broker_registered(m, w, b):
    """The controller sees broker ``b`` register after a restart: partitions without a
    leader elect it, and it gets its initial LeaderAndIsr — FULL in kip516 (KIP-516
    "LeaderAndIsr": "the first LeaderAndIsrRequest sent to a broker by a controller
    contains all TopicPartitions that a broker is a replica for")."""
    rec = active_topic(w.store)
    store, net, changed, ghost = w.store, w.net, {}, w.ghost
    if rec is not None:
        for i, part in enumerate(rec.partitions):
            if part.leader_epoch == NEW_PARTITION and b in part.replicas:
                part = online(w, part.replicas)
                rec = zk.set_partition(rec, i, part)
                changed[i] = tuple(x for x in part.isr if x != b)
            elif part.leader == zk.NO_LEADER and b in part.replicas:
                part = part._replace(leader=b, leader_epoch=part.leader_epoch + 1)
                rec = zk.set_partition(rec, i, part)
                changed[i] = tuple(x for x in part.replicas if x != b)
        store = zk.put_topic(store, rec)
        ghost = record_leaders(ghost, rec)
    net = notify(m, w, net, store, changed)
    typ = FULL if typed(m) else ""
    net = post(m, w, net, lair(-w.ctl.active, b, w.ctl.epoch, typ, parts_for(store, b)))
    return w._replace(store=store, net=net, ghost=ghost)


# ---- failover -----------------------------------------------------------------------------
def resync(m, old, w):
    """The topic lifecycle's new controller, right after its election
    (``zk.failover``; KIP-516 "DeleteTopics": the new controller has lost the in-memory
    deletion state and "will send a FULL LeaderAndIsrRequest on becoming the leader";
    KIP-516 "Proposed Changes": it loads the topics from the store). legacy: it reloads
    /admin/delete_topics and resumes the deletion (StopReplica via the retry). ``old``:
    the state the dead controller left."""
    mid = 1 if (old.store.delete_markers or old.mem.pending) else 0
    ctl = w.ctl
    pending = ()
    store = load_context(m, w, w.store)
    rec = zk.topic(store, TOPIC)
    if store is not w.store:
        w = w._replace(store=store, ghost=record_leaders(w.ghost, rec))
    if rec is not None and zk.marked(w.store, TOPIC):
        pending = tuple(sorted((b, i, stop_id(m, rec), rec.incarnation)
                               for i, p in enumerate(rec.partitions) for b in p.replicas))
    w = w._replace(mem=w.mem._replace(pending=pending),
                   budget=w.budget._replace(failovers=w.budget.failovers - 1),
                   ghost=w.ghost._replace(failovers=set_add(w.ghost.failovers,
                                                            (ctl.epoch, mid))))
    # the initial LeaderAndIsr goes to every live broker, even with no partition: it also
    # stands for the initial UpdateMetadata, which carries the new epoch to every broker
    typ = "" if not typed(m) else FULL if m.flags.failover_sends_full else INCREMENTAL
    net = w.net
    for b in bk.live_ids(w.brokers):
        net = post(m, w, net, lair(-ctl.active, b, ctl.epoch, typ, parts_for(w.store, b)))
    return w._replace(net=net)


def online(w, replicas) -> zk.PartitionRecord:
    """NewPartition -> OnlinePartition (PartitionStateMachine.
    initializeLeaderAndIsrForPartitions): leader the first live replica, ISR the live
    ones, leader epoch 0; without a live replica it stays NewPartition."""
    alive = tuple(b for b in replicas if live(w, b))
    if not alive:
        return zk.PartitionRecord(tuple(replicas), zk.NO_LEADER, NEW_PARTITION, ())
    return zk.PartitionRecord(tuple(replicas), alive[0], 0, alive)


def load_context(m, w, store):
    """A new controller's record of the topic from the znodes (KafkaController.
    initializeControllerContext, then PartitionStateMachine.startup): the topic znode's
    assignment for every partition and its topic ID, which CreatePartitions may have
    rewritten (``model.kafka.zk.expansion``), and its NewPartition partitions brought
    online unless the topic is queued for deletion. A znode without an ID gets a new one,
    written to it (processTopicIds -> KafkaZkClient.setTopicIds, with topic IDs in use).
    ``store`` itself when nothing changes."""
    rec = zk.topic(store, TOPIC)
    if rec is None or not (store.assignments or any(
            p.leader_epoch == NEW_PARTITION for p in rec.partitions)):
        return store
    znode, tid = zk.assignment(store, TOPIC), zk.znode_id(store, TOPIC)
    if tid == ZERO_ID and m.flags.topic_ids:
        tid = zk.MINTED_ID + w.ctl.epoch
    parts = list(rec.partitions)
    for k, replicas in enumerate(znode):
        if k >= len(parts):
            parts.append(zk.PartitionRecord(tuple(replicas), zk.NO_LEADER, NEW_PARTITION, ()))
        elif parts[k].replicas != replicas:
            parts[k] = parts[k]._replace(replicas=tuple(replicas))
    if not zk.marked(store, TOPIC):
        parts = [online(w, p.replicas) if p.leader_epoch == NEW_PARTITION else p
                 for p in parts]
    rec = rec._replace(topic_id=tid, partitions=tuple(parts))
    return zk.write_assignment(zk.put_topic(store, rec), TOPIC, znode, tid)
