"""Broker-side steps: handling LeaderAndIsr, StopReplica and UpdateMetadata, crash, restart
and purging the deleting/ directory. partition.metadata is flushed before the first append
to a log (``datapath``), as Kafka's ``maybeFlushMetadataFile`` does; a crash before that
loses the partition's topic ID.

Each public function is one action ``f(m, w, ...) -> World | None`` (None: not enabled or no
effect); the docstring names the KIP section it models. A controller request is delivered
the same way whichever feature a scenario runs (``DELIVER``: the topic lifecycle, and
KIP-253's procedure through ``model.kafka.kip253.broker``): the broker's own record takes
it (``leader_and_isr_applied``, ``stop_replica_applied``, ``update_metadata_applied``),
then what follows from it on the broker (the high watermark's acknowledgements, the group
coordinator: ``coordinator``), then the answer the controller reads. They read the model's
release line (``m.flags``), whether deleting/ is purged by a later step
(``m.purge_delay``) and whether its controller reads StopReplica answers
(``m.stop_replica_answered``).
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka.broker import NO_ROLE, Replica
from kmc.model.kafka.canon import replace_at, set_add
from kmc.model.kafka.store import ZERO_ID
from kmc.model.kafka.zk import control, coordinator
from kmc.model.kafka.zk.datapath import acknowledge
from kmc.model.kafka.messages import FULL, LAIR, NO_COUNT, STOP, UM, lair_response


def _put(w, b, rec):
    return w._replace(brokers=replace_at(w.brokers, b - 1, rec))


def _fenced(m, br, epoch) -> bool:
    return m.flags.epoch_fencing and epoch < br.ctl_epoch


def _seen(br, epoch):
    return br._replace(ctl_epoch=max(br.ctl_epoch, epoch), applied_epoch=epoch)


def _stage(m, deleting, r):
    """KIP-516 "Deletion": move the partition to log.dir/deleting/{topic_id}_{partition}.
    Without the ``purge_delay`` option the delayed purge is folded in (nothing observes
    deleting/, and the extra step triples the state space)."""
    if not m.purge_delay:
        return deleting
    return set_add(deleting, (r.partition, r.topic_id, r.inc))


def fresh_replica(m, ps) -> Replica:
    """A new, empty log for ``ps``. It holds the request's topic ID when the log is created
    with it (LogManager.getOrCreateLog(topicId), 3.0 on); 2.8 creates it without one."""
    tid = ps.topic_id if m.flags.id_at_creation else ZERO_ID
    return Replica(ps.partition, tid, ps.inc, ps.leader, ps.leader_epoch, (),
                   not m.flags.topic_ids, "")


def on_leader_and_isr(m, w, msg):
    """LeaderAndIsr delivered to its broker (KafkaApis.handleLeaderAndIsrRequest). The
    broker's record takes it (``leader_and_isr_applied``; ReplicaManager.
    becomeLeaderOrFollower); a leader may advance its high watermark at once, since the
    request's ISR may have shrunk (Partition.makeLeader -> maybeIncrementLeaderHW, then
    tryCompleteDelayedRequests completes the acks=all produces it waited for); the group
    coordinator reacts (``coordinator.on_leader_and_isr``). The answer is sent when the
    controller waits for it (``msg.ack``) and is still the one at the request's epoch (a
    dead controller's connection is gone)."""
    b = msg.dst
    net = m.net.deliver(w.net, msg)
    br = leader_and_isr_applied(m, w.brokers[b - 1], msg)
    if br is None:
        return w._replace(net=net)  # STALE_CONTROLLER_EPOCH
    w = _put(w, b, br)._replace(net=net)
    ghost = w.ghost
    for ps in msg.parts:
        r = bk.replica(br, ps.partition)
        if r is not None and r.leader == b:
            ghost = acknowledge(w.store, w.brokers, ghost, r.inc, ps.partition)
    if ghost is not w.ghost:
        w = w._replace(ghost=ghost)
    if w.group is not None:
        w = coordinator.on_leader_and_isr(m, w, msg)
    if msg.ack and msg.epoch == w.ctl.epoch:
        w = w._replace(net=m.net.send(w.net, lair_response(msg)))
    return w


def leader_and_isr_applied(m, br, msg):
    """The broker record ``br`` after LeaderAndIsr ``msg`` (KIP-516 "LeaderAndIsr"); None
    when the request is fenced (an older controller epoch). A partition not present locally
    is created. With topic IDs, a local partition whose ID differs is stale: staged for
    deletion and replaced (FULL, and INCREMENTAL per "Reconciliation may also be necessary
    if type = INCREMENTAL"; the broker answers INCONSISTENT_TOPIC_ID). A FULL request also
    stages every local partition it does not list. A local partition without an ID (legacy,
    or partition.metadata lost in a crash) takes the request's ID (KIP-516 "Migration").
    Otherwise the state applies when its leader epoch is not older than the local one.

    Release lines: ``id_mismatch_stages`` off, a mismatch is answered INCONSISTENT_TOPIC_ID
    and the partition is left as it is (ReplicaManager.becomeLeaderOrFollower, 2.8-3.9).
    ``id_check_on_disk`` off (2.8, Partition.checkOrSetTopicId): only a log a LeaderAndIsr
    attached since the broker started is checked, and one without an ID takes the
    request's at once, whatever the leader epoch; a log loaded at restart (no role yet)
    is attached by makeLeader/makeFollower as it is on disk, its own topic ID kept.

    KIP-253 §4: the broker records the request's undeleted_partition_count (``count``)
    atomically with the new leader epochs; a request without one leaves it."""
    f = m.flags
    if _fenced(m, br, msg.epoch):
        return None
    full = msg.lair_type == FULL
    reps = {r.partition: r for r in br.replicas}
    deleting = br.deleting
    listed = set()
    for ps in msg.parts:
        listed.add(ps.partition)
        r = reps.get(ps.partition)
        if r is None:
            reps[ps.partition] = fresh_replica(m, ps)
            continue
        checked = f.id_check_on_disk or r.leader != NO_ROLE
        if checked and not f.id_check_on_disk and f.topic_ids and r.topic_id == ZERO_ID:
            r = r._replace(topic_id=ps.topic_id, durable=True)  # checkOrSetTopicId
            reps[ps.partition] = r
        mismatch = f.topic_ids and checked and r.topic_id not in (ZERO_ID, ps.topic_id)
        if mismatch and (full or f.incremental_id_check):
            if not f.id_mismatch_stages:
                continue  # INCONSISTENT_TOPIC_ID: nothing changes for this partition
            deleting = _stage(m, deleting, r)
            reps[ps.partition] = fresh_replica(m, ps)
        elif not f.lair_keeps_log and ps.leader_epoch > r.leader_epoch:
            reps[ps.partition] = fresh_replica(m, ps)
        elif ps.leader_epoch >= r.leader_epoch:
            if checked:
                same = r.topic_id == ps.topic_id and r.inc == ps.inc
                tid, durable = ps.topic_id, r.durable if same else not f.topic_ids
            else:  # attached unchecked: the log keeps the topic ID it has on disk
                tid, durable = r.topic_id, r.durable
            reps[ps.partition] = r._replace(
                leader=ps.leader, leader_epoch=ps.leader_epoch, fetch_error="",
                topic_id=tid, inc=ps.inc, durable=durable)
    if full and f.full_reconcile:
        for p in list(reps):
            if p not in listed:
                deleting = _stage(m, deleting, reps.pop(p))
    status = bk.UP if br.status == bk.RESTARTING else br.status
    count = br.count if msg.count == NO_COUNT else msg.count
    return _seen(br, msg.epoch)._replace(status=status, deleting=deleting, count=count,
                                         replicas=tuple(reps[p] for p in sorted(reps)))


def on_stop_replica(m, w, msg):
    """StopReplica delivered to its broker (KafkaApis.handleStopReplicaRequest): the
    broker's record takes it (``stop_replica_applied``; ReplicaManager.stopReplicas), the
    group coordinator reacts (``coordinator.on_stop_replica``), and the broker answers
    success either way (nothing of that topic ID is left) when its controller reads the
    answer (``m.stop_replica_answered``: the topic lifecycle's deletion waits for it,
    KIP-253's controller never reads one)."""
    b = msg.dst
    net = m.net.deliver(w.net, msg)
    br = stop_replica_applied(m, w.brokers[b - 1], msg)
    if br is None:
        return w._replace(net=net)  # STALE_CONTROLLER_EPOCH, to a deposed controller
    w = _put(w, b, br)
    if w.group is not None:
        w = coordinator.on_stop_replica(m, w, msg)
    if not m.stop_replica_answered:
        return w._replace(net=net)
    return w._replace(net=control.respond_stop(m, w, net, msg))


def stop_replica_applied(m, br, msg):
    """The broker record ``br`` after StopReplica with delete_partitions ``msg`` (KIP-516
    "StopReplica" v4: by topic ID); None when the request is fenced. The partition is staged
    for deletion when it is the one addressed: by name in legacy and the release lines
    (ReplicaManager.stopReplicas takes TopicPartitions), by topic ID in kip516 (a partition
    of another or unknown ID is left alone; a FULL LeaderAndIsr reconciles it)."""
    if _fenced(m, br, msg.epoch):
        return None
    reps = br.replicas
    deleting = br.deleting
    for i, r in enumerate(reps):
        if r.partition == msg.partition and (not m.flags.topic_ids
                                             or not m.flags.stop_replica_ids
                                             or not m.flags.stop_replica_checks_id
                                             or r.topic_id == msg.topic_id):
            deleting = _stage(m, deleting, r)
            reps = reps[:i] + reps[i + 1:]
            break
    return _seen(br, msg.epoch)._replace(replicas=reps, deleting=deleting)


def update_metadata_applied(m, br, msg):
    """The broker record ``br`` after UpdateMetadata ``msg``; None when the request is
    fenced (ReplicaManager.maybeUpdateMetadataCache, 2.8: an older controller epoch is
    rejected, otherwise MetadataCache.updateMetadata runs and the epoch is taken). The
    metadata cache clients read takes KIP-253's counts, (undeleted_partition_count,
    partitions) (its "Protocol" 6). The topic lifecycle sends none: its clients refresh
    their metadata from the store (``datapath.snapshot``), and the controller's initial
    LeaderAndIsr after a failover stands for the UpdateMetadata that carries the new
    epoch."""
    if _fenced(m, br, msg.epoch):
        return None
    return _seen(br, msg.epoch)._replace(meta=(msg.undeleted, msg.total))


def on_update_metadata(m, w, msg):
    """UpdateMetadata delivered to its broker (KafkaApis.handleUpdateMetadataRequest): the
    broker's metadata cache takes it (``update_metadata_applied``), then the group
    coordinator may drop the offsets of partitions it no longer advertises
    (``coordinator.on_update_metadata``); no answer is modelled (no controller reads
    one)."""
    b = msg.dst
    net = m.net.deliver(w.net, msg)
    before = w.brokers[b - 1]
    br = update_metadata_applied(m, before, msg)
    if br is None:
        return w._replace(net=net)  # STALE_CONTROLLER_EPOCH
    w = _put(w, b, br)._replace(net=net)
    if w.group is not None:
        w = coordinator.on_update_metadata(m, w, msg, before.meta)
    return w


#: controller request kind -> its delivery to the addressed broker
DELIVER = {LAIR: on_leader_and_isr, STOP: on_stop_replica, UM: on_update_metadata}


def crash(m, w, b):
    """A broker crashes: connections break (in-flight traffic to and from it is lost), and
    the controller elects new leaders for what it led. Its disk survives; what it held
    only in memory is rebuilt at restart."""
    br = w.brokers[b - 1]
    if br.status == bk.DOWN or w.budget.crashes <= 0:
        return None
    brokers = replace_at(w.brokers, b - 1, br._replace(status=bk.DOWN))
    net = m.net.drop(w.net, lambda x: x.src == b or x.dst == b)
    w = w._replace(net=net, budget=w.budget._replace(crashes=w.budget.crashes - 1))
    store, net, ghost = control.elect_for_crash(m, w, b, brokers)
    return w._replace(brokers=brokers, store=store, net=net, ghost=ghost)


def restart(m, w, b):
    """A crashed broker restarts: logs are reloaded from disk; a partition whose
    partition.metadata was never flushed has lost its topic ID (KIP-516 "Partition
    Metadata file": the file is what lets the broker "reload the broker's view of topic
    ID on startup"); roles and leader epochs are unknown until the controller's initial
    LeaderAndIsr."""
    br = w.brokers[b - 1]
    if br.status != bk.DOWN:
        return None
    reps = tuple(r._replace(topic_id=r.topic_id if r.durable else ZERO_ID, leader=NO_ROLE,
                            leader_epoch=-1, fetch_error="") for r in br.replicas)
    br = br._replace(status=bk.RESTARTING, replicas=reps, ctl_epoch=0, applied_epoch=0)
    return control.broker_registered(m, _put(w, b, br), b)


def purge(m, w, b):
    """delete.topic.delay.ms elapses: the deleting/ directory is cleared (KIP-516
    "Deletion", step 3)."""
    br = w.brokers[b - 1]
    if br.status == bk.DOWN or not br.deleting:
        return None
    return _put(w, b, br._replace(deleting=()))
