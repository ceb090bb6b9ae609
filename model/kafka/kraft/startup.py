"""Broker crash and restart, step by step in the order of BrokerServer.startup and the
first metadata publish (core/src/main/scala/kafka/server/BrokerServer.scala,
core/src/main/scala/kafka/server/metadata/BrokerMetadataPublisher.scala).

1. ``restart``: BrokerServer.startup creates the LogManager (nothing loaded yet) and
   BrokerLifecycleManager.start sends BrokerRegistrationRequest; the controller appends
   a fenced RegisterBrokerRecord (controller.register_broker). The local metadata log
   and its snapshot survive on disk, so the loader resumes where the broker stopped.
2. ``fetch-metadata`` (publisher): the loader catches up to the high watermark.
3. ``load-logs``: the first onMetadataUpdate sets the image (metadataCache.setImage) and
   runs initializeManagers: LogManager.startup loads the logs on disk, moving stray
   logs aside (isStray = LogManager.isStrayKraftReplica against the new image; KIP-516
   "Compatibility with KIP-500": stale replicas are found by topic ID at startup).
4. ``apply-initial``: the same onMetadataUpdate then applies the initial delta
   (everything in the image) with ReplicaManager.applyDelta: replicas are created.
   Before KAFKA-14616 (mutant stray-after-replicas), stray logs were removed only here,
   after the replicas (finishInitializingReplicaManager -> deleteStrayReplicas).
5. ``unfence`` (heartbeat): the controller unfences the broker once it is caught up.

A log created shortly before a crash may lack its partition.metadata (its flush is
asynchronous: ``flush-metadata``); step 3 then meets a log without a topic ID, which
each release line treats differently (variants.py, ``missing_id``); in 3.7.0 the broker
halts (status ``halted``) at every start.

Steps 3 and 4 run in one callback on the broker, but another broker or the controller
acts concurrently, and a crash can fall between them; the model makes them two steps.
"""
from __future__ import annotations

from kmc.model.kafka.kraft import controller as ctl
from kmc.model.kafka.kraft import deletion, heartbeat
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import logmanager as lm
from kmc.model.kafka.kraft import quorum as qm
from kmc.model.kafka.kraft import replicas
from kmc.model.kafka.kraft.publisher import raise_high
from kmc.model.kafka.kraft.state import CATCHING_UP, DOWN, HALTED, LOGS_LOADED, RUNNING


def _put(w, b, br):
    return w.brokers[:b - 1] + (br,) + w.brokers[b:]


def crash(model, w, b: int):
    """A broker process dies (a fault: no KIP section, no Kafka code): the in-memory
    image and hosted partitions are gone; logs, ``-delete`` directories and the local
    metadata log stay on disk. Its heartbeat lease runs out later
    (heartbeat.can_fence_expired)."""
    old = w.brokers[b - 1]
    br = old._replace(status=DOWN, image=None, hosted=(), logs=lm.after_crash(old.logs),
                      reregister=False, lost_in=0)
    brokers = _put(w, b, br)
    if w.budget.crashes == 1:  # the last crash: no later one can lose a pending flush
        brokers = tuple(x._replace(logs=tuple(y._replace(flushed=True) for y in x.logs))
                        for x in brokers)
        brokers = deletion.on_last_crash(brokers, b)
    return w._replace(brokers=brokers,
                      budget=w.budget._replace(crashes=w.budget.crashes - 1))


def can_restart(model, w, b: int) -> bool:
    """ClusterControlManager.registerBroker refuses a new incarnation while the old one
    still has a valid heartbeat lease (DuplicateBrokerRegistrationException; the broker
    retries): registration succeeds once the broker is fenced or, with the scenario's
    ``fence_delay``, once its lease has run out (``heartbeat.lease_valid``)."""
    return not heartbeat.lease_valid(model, w, b)


def _register(model, w, b: int):
    """The quorum after ClusterControlManager.registerBroker of a new incarnation of
    ``b``: a fenced RegisterBrokerRecord with a new broker epoch, and the old lease
    removed (heartbeatManager.remove: a lease that ran out is no longer fenced by the
    stale-broker scan; without ELR no partition record goes with it,
    ``controller.register_broker``)."""
    q = w.quorum
    return qm.lease_ended(model.append(q, ctl.register_broker(model.controller_image(q), b)),
                          b)


def restart(model, w, b: int):
    """Steps 1: BrokerServer.startup up to registration (see module docstring): the
    broker registers again, fenced, with a new broker epoch. KIP-631 "Broker
    Registration"; BrokerServer.scala ``startup``; ClusterControlManager.java
    ``registerBroker``."""
    br = w.brokers[b - 1]._replace(status=CATCHING_UP, image=None, hosted=())
    return w._replace(quorum=_register(model, w, b), brokers=_put(w, b, br))


def unanswered_registrations(model, w) -> tuple:
    """The brokers whose registration is still unanswered when the active controller
    resigns: a RegisterBrokerRecord at or beyond its high watermark (the answer comes at
    commit) of a broker process still alive (a crashed or halted one registers anew
    when, if ever, it starts). The controller fails the pending answer
    (QuorumController.renounce: deferredEventQueue.failAll with NOT_CONTROLLER) and the
    broker's channel to the controller sends the registration again
    (``register_again``), whether or not the record survives the failover. In the
    model a standby's fetch commits what a majority then holds, so these are the
    records the failover truncates."""
    q = w.quorum
    pending = {r.broker for e in q.log[q.hwm:] for r in e.records
               if r.kind == "RegisterBrokerRecord"}
    return tuple(b for b in sorted(pending) if w.brokers[b - 1].status not in (DOWN, HALTED))


def can_register_again(model, w, b: int) -> bool:
    """A broker whose registration a failover left unanswered registers again once the
    new controller's lease for its previous incarnation is no longer valid (as
    ``can_restart``: a valid lease makes registerBroker answer
    DuplicateBrokerRegistrationException, and the broker retries)."""
    return w.brokers[b - 1].reregister and not heartbeat.lease_valid(model, w, b)


def register_again(model, w, b: int):
    """KIP-631 "Broker Registration", after a failover (KIP-595 "Leader Election"):
    NodeToControllerRequestThread.handleResponse puts the request answered
    NOT_CONTROLLER back at the head of its queue and sends it to the new controller
    (BrokerLifecycleManager's BrokerRegistrationResponseEvent retries other errors),
    which writes a fenced RegisterBrokerRecord with a new broker epoch
    (ClusterControlManager.registerBroker; the model's epoch is the previous one plus
    one, Kafka's the record's offset). The broker's startup goes on meanwhile
    (BrokerServer.startup, from 3.5, installs the publishers before it waits for the
    controller); no heartbeat is sent, so nothing unfences it, before the answer
    (``heartbeat.can_unfence``)."""
    return w._replace(quorum=_register(model, w, b), brokers=_put(
        w, b, w.brokers[b - 1]._replace(reregister=False, lost_in=0)))


def can_load_logs(model, w, b: int) -> bool:
    br = w.brokers[b - 1]
    return br.status == CATCHING_UP and len(br.fetched) >= w.quorum.hwm


def load_logs(model, w, b: int):
    """Step 3: the first publish's image and LogManager.startup with stray detection
    (KIP-516 "Compatibility with KIP-500"; BrokerMetadataPublisher.initializeManagers;
    LogManager.loadLog renames a stray log to -stray and keeps it on disk, no longer
    served, for the operator to delete (nothing in LogManager removes -stray
    directories): the model drops it at once)."""
    f = model.flags
    br = w.brokers[b - 1]
    img = im.build(w.quorum.log[:len(br.fetched)])
    if f.stray_detection and f.strays_before_replicas and f.missing_id == "halt" and \
            any(x.topic_id == lm.NO_ID for x in br.logs):
        # LogManager.findStrayReplicas throws; initializeManagers: fatalFaultHandler
        return w._replace(brokers=_put(w, b, br._replace(status=HALTED)))
    logs, ghost = br.logs, raise_high(w.ghost, b, img.offset)
    stray = lm.strays(img, b, logs, f.topic_ids)
    if stray:
        ghost = ghost._replace(strays=tuple(sorted(set(ghost.strays) | {
            (b, x.topic_id) for x in stray})))
    if f.stray_detection and f.strays_before_replicas:
        for x in stray:
            logs = lm.delete_log(logs, x.partition)
    br = br._replace(status=LOGS_LOADED, image=img, logs=logs,
                     deleting=deletion.on_load(model, w, br.deleting))
    return w._replace(brokers=_put(w, b, br), ghost=ghost)


def apply_initial(model, w, b: int):
    """Step 4: ReplicaManager.applyDelta of the initial delta (from the empty image to
    the first published one; KIP-516 "Compatibility with KIP-500"). In the
    stray-after-replicas mutant, the stray logs found against the image are removed
    only now (BrokerMetadataPublisher.finishInitializingReplicaManager before
    KAFKA-14616: ReplicaManager.deleteStrayReplicas -> stopPartitions, which drops the
    hosted partition as well)."""
    f = model.flags
    br = w.brokers[b - 1]
    br = replicas.apply_delta(br, im.EMPTY, br.image, b, f.topic_ids,
                              model.flushed or w.budget.crashes == 0)
    stray = lm.strays(br.image, b, br.logs, f.topic_ids)
    if f.missing_id == "abort-strays" and any(x.topic_id == lm.NO_ID for x in br.logs):
        stray = ()  # findStrayPartitions throws; metadataPublishingFaultHandler logs it
    if f.stray_detection and not f.strays_before_replicas:
        for x in stray:
            br = br._replace(logs=lm.delete_log(br.logs, x.partition),
                             hosted=tuple(h for h in br.hosted
                                          if h.partition != x.partition))
    return w._replace(brokers=_put(w, b, br._replace(status=RUNNING)))


def is_loaded(w, b: int) -> bool:
    return w.brokers[b - 1].status == LOGS_LOADED
