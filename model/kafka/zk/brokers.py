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

from kmc.model import memo
from kmc.model.kafka import broker as bk
from kmc.model.kafka.broker import Hosted, Log
from kmc.model.kafka.canon import keyed_del, replace_at, set_add
from kmc.model.kafka.messages import FULL, LAIR, NO_COUNT, STOP, UM, lair_response
from kmc.model.kafka.store import ZERO_ID
from kmc.model.kafka.zk import control, coordinator
from kmc.model.kafka.zk.datapath import acknowledge


def _config(m):  # pragma: no mutate (kmc mutate's workers keep no memo: never called)
    """What a broker record's handling reads of the model (``memo.pure``)."""
    return m.flags, m.purge_delay


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


def fresh_replica(m, ps) -> tuple:
    """A new, empty log for ``ps`` and the partition hosted on it, as (Log, Hosted). The
    log holds the request's topic ID when it is created with it
    (LogManager.getOrCreateLog(topicId), 3.0 on); 2.8 creates it without one."""
    tid = ps.topic_id if m.flags.id_at_creation else ZERO_ID
    return (Log(ps.partition, tid, (), not m.flags.topic_ids, 0, ps.inc),
            Hosted(ps.partition, tid, ps.leader, ps.leader_epoch))


def on_leader_and_isr(m, w, msg):
    """LeaderAndIsr delivered to its broker (KIP-516 "LeaderAndIsr";
    KafkaApis.handleLeaderAndIsrRequest). The
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
    brokers = replace_at(w.brokers, b - 1, br)
    ghost = w.ghost
    for ps in msg.parts:
        h = bk.hosted_of(br, ps.partition)
        if h is not None and h.leader == b:
            inc = bk.log_of(br, ps.partition).inc
            ghost = acknowledge(w.store, brokers, ghost, inc, ps.partition)
    if msg.ack and msg.epoch == w.ctl.epoch:
        net = m.net.send(net, lair_response(msg))
    w = w._replace(brokers=brokers, net=net, ghost=ghost)  # one new World, not three
    if w.group is not None:
        w = coordinator.on_leader_and_isr(m, w, msg)
    return w


@memo.pure(_config)
def leader_and_isr_applied(m, br, msg):
    """The broker record ``br`` after LeaderAndIsr ``msg`` (KIP-516 "LeaderAndIsr"); None
    when the request is fenced (an older controller epoch). A partition not present locally
    is created. With topic IDs, a local partition whose ID differs is stale: staged for
    deletion and replaced (FULL, and INCREMENTAL per "Reconciliation may also be necessary
    if type = INCREMENTAL"; the broker answers INCONSISTENT_TOPIC_ID). A FULL request also
    stages every local partition it does not list. A local partition without an ID (legacy,
    or partition.metadata lost in a crash) takes the request's ID (KIP-516 "Migration").
    Otherwise the state applies when its leader epoch is not older than the local one;
    on the release lines (no ``lair_type``) only when it is newer: ZooKeeper-mode
    becomeLeaderOrFollower answers an equal leader epoch STALE_CONTROLLER_EPOCH and only
    assigns the request's topic ID to a log without one (the equal-epoch exception is
    for KRaft controllers only).

    Release lines: ``id_mismatch_stages`` off, a mismatch is answered INCONSISTENT_TOPIC_ID
    and the partition is left as it is (ReplicaManager.becomeLeaderOrFollower, 2.8-3.9).
    ``id_check_on_disk`` off (2.8, Partition.checkOrSetTopicId): only a log a LeaderAndIsr
    attached since the broker started is checked, and one without an ID takes the
    request's at once, whatever the leader epoch; a log loaded at restart (not hosted yet)
    is attached by makeLeader/makeFollower as it is on disk, its own topic ID kept.

    KIP-253 §4: the broker records the request's undeleted_partition_count (``count``)
    atomically with the new leader epochs; a request without one leaves it."""
    f = m.flags
    if _fenced(m, br, msg.epoch):
        return None
    full = msg.lair_type == FULL
    logs = {x.partition: x for x in br.logs}
    hosted = {x.partition: x for x in br.hosted}
    deleting = br.deleting
    listed = set()
    for ps in msg.parts:
        p = ps.partition
        listed.add(p)
        log = logs.get(p)
        if log is None:
            logs[p], hosted[p] = fresh_replica(m, ps)
            continue
        h = hosted.get(p)
        epoch = -1 if h is None else h.leader_epoch
        checked = f.id_check_on_disk or h is not None  # attached since the start
        if checked and not f.id_check_on_disk and f.topic_ids and log.topic_id == ZERO_ID:
            # Partition.checkOrSetTopicId -> Log.assignTopicId (2.8.1): the ID is recorded
            # and its flush scheduled (KAFKA-13092), here done before the next append
            log = logs[p] = log._replace(topic_id=ps.topic_id, flushed=False)
            h = hosted[p] = h._replace(topic_id=ps.topic_id)
        mismatch = f.topic_ids and checked and log.topic_id not in (ZERO_ID, ps.topic_id)
        if mismatch and (full or f.incremental_id_check):
            if not f.id_mismatch_stages:
                continue  # INCONSISTENT_TOPIC_ID: nothing changes for this partition
            deleting = _stage(m, deleting, log)
            logs[p], hosted[p] = fresh_replica(m, ps)
        elif not f.lair_keeps_log and ps.leader_epoch > epoch:
            logs[p], hosted[p] = fresh_replica(m, ps)
        elif ps.leader_epoch == epoch and not f.lair_type and not (
                f.topic_ids and checked and log.topic_id == ZERO_ID):
            continue  # ZooKeeper mode: an equal leader epoch changes nothing (below)
        elif ps.leader_epoch >= epoch:
            if checked:
                # partition.metadata already holds a (non-ZERO) ID the request names, even
                # for another incarnation (a CreatePartitions write can give the
                # re-created topic the deleted one's ID: ``expansion``)
                same = log.topic_id == ps.topic_id and (
                    log.inc == ps.inc or log.topic_id != ZERO_ID)
                tid, flushed = ps.topic_id, log.flushed if same else not f.topic_ids
            else:  # attached unchecked: the log keeps the topic ID it has on disk
                tid, flushed = log.topic_id, log.flushed
            logs[p] = log._replace(topic_id=tid, inc=ps.inc, flushed=flushed)
            hosted[p] = Hosted(p, tid, ps.leader, ps.leader_epoch)
    if full and f.full_reconcile:
        for p in list(logs):
            if p not in listed:
                deleting = _stage(m, deleting, logs.pop(p))
                hosted.pop(p, None)
    status = bk.UP if br.status == bk.RESTARTING else br.status
    count = br.count if msg.count == NO_COUNT else msg.count
    return _seen(br, msg.epoch)._replace(status=status, deleting=deleting, count=count,
                                         logs=tuple(logs[p] for p in sorted(logs)),
                                         hosted=tuple(hosted[p] for p in sorted(hosted)))


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
    brokers = replace_at(w.brokers, b - 1, br)
    if w.group is not None:
        w = coordinator.on_stop_replica(m, w._replace(brokers=brokers), msg)
        brokers = w.brokers
    if m.stop_replica_answered:  # to the controller, whose state the request left
        net = control.respond_stop(m, w, net, msg)
    return w._replace(brokers=brokers, net=net)


@memo.pure(_config)
def stop_replica_applied(m, br, msg):
    """The broker record ``br`` after StopReplica with delete_partitions ``msg`` (KIP-516
    "StopReplica" v4: by topic ID); None when the request is fenced. The partition is staged
    for deletion when it is the one addressed: by name in legacy and the release lines
    (ReplicaManager.stopReplicas takes TopicPartitions), by topic ID in kip516 (a partition
    of another or unknown ID is left alone; a FULL LeaderAndIsr reconciles it)."""
    if _fenced(m, br, msg.epoch):
        return None
    logs, hosted, deleting = br.logs, br.hosted, br.deleting
    for i, log in enumerate(logs):
        if log.partition == msg.partition and (not m.flags.topic_ids
                                               or not m.flags.stop_replica_ids
                                               or not m.flags.stop_replica_checks_id
                                               or log.topic_id == msg.topic_id):
            deleting = _stage(m, deleting, log)
            logs = logs[:i] + logs[i + 1:]
            hosted = keyed_del(hosted, msg.partition)
            break
    return _seen(br, msg.epoch)._replace(logs=logs, hosted=hosted, deleting=deleting)


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
    """UpdateMetadata delivered to its broker (KIP-253 §2 bullet 5, §3 bullet 3;
    KafkaApis.handleUpdateMetadataRequest -> ReplicaManager.maybeUpdateMetadataCache ->
    ZkMetadataCache.updateMetadata): the broker's metadata cache takes it
    (``update_metadata_applied``), then the group coordinator may drop the offsets of
    partitions it no longer advertises (``coordinator.on_update_metadata``); no answer
    is modelled (no controller reads one)."""
    b = msg.dst
    net = m.net.deliver(w.net, msg)
    before = w.brokers[b - 1]
    br = update_metadata_applied(m, before, msg)
    if br is None:
        return w._replace(net=net)  # STALE_CONTROLLER_EPOCH
    w = w._replace(brokers=replace_at(w.brokers, b - 1, br), net=net)
    if w.group is not None:
        w = coordinator.on_update_metadata(m, w, msg, before.meta)
    return w


#: controller request kind -> its delivery to the addressed broker
DELIVER = {LAIR: on_leader_and_isr, STOP: on_stop_replica, UM: on_update_metadata}


def crash(m, w, b):
    """A broker crashes (a fault: no KIP section; the process dies, no Kafka code):
    connections break (in-flight traffic to and from it is lost), and the controller
    elects new leaders for what it led (KafkaController.processBrokerChange ->
    onBrokerFailure; PartitionStateMachine.electLeaderForPartitions with
    OfflinePartitionLeaderElectionStrategy). Its disk survives; what it held only in
    memory is rebuilt at restart."""
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
    LeaderAndIsr. Kafka: KafkaServer.startup (LogManager.startup -> loadLogs,
    UnifiedLog.initializeTopicId; KafkaZkClient.registerBroker);
    KafkaController.onBrokerStartup."""
    br = w.brokers[b - 1]
    if br.status != bk.DOWN:
        return None
    logs = tuple(x if x.flushed else x._replace(topic_id=ZERO_ID) for x in br.logs)
    br = br._replace(status=bk.RESTARTING, logs=logs, hosted=(), ctl_epoch=0,
                     applied_epoch=0)
    return control.broker_registered(m, _put(w, b, br), b)


def purge(m, w, b):
    """delete.topic.delay.ms elapses: the deleting/ directory is cleared (KIP-516
    "Deletion", step 3; LogManager.deleteLogs after file.delete.delay.ms, of the
    directories LogManager.asyncDelete renamed to ``-delete``)."""
    br = w.brokers[b - 1]
    if br.status == bk.DOWN or not br.deleting:
        return None
    return _put(w, b, br._replace(deleting=()))
