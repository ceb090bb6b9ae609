"""Broker liveness at the controller: heartbeat leases, fencing and unfencing (KIP-631
"Broker
Fencing"; metadata/src/main/java/org/apache/kafka/controller/BrokerHeartbeatManager.java
and ReplicationControlManager.processBrokerHeartbeat / maybeFenceOneStaleBroker).

A lease running out and the fence are one step (``fence``) unless the scenario's
``fence_delay`` is set. Then they are two, as in Kafka: ``lease-expires``
(BrokerHeartbeatManager.hasValidSession turns false once ``broker.session.timeout.ms``
passes without a heartbeat) and, later, ``fence`` (QuorumController's deferred
maybeFenceReplicas event -> ReplicationControlManager.maybeFenceOneStaleBroker, which
takes the stale brokers from the heartbeat manager's unfenced list). In between, a new
incarnation of the broker may register (``startup.can_restart``): registerBroker removes
the old lease (heartbeatManager.remove), so the fence event never finds it, and
without ELR the unclean-shutdown records are empty (ReplicationControlManager.
handleBrokerUncleanShutdown returns early below metadata version 4.0-IV0, every 3.x
release): the committed metadata keeps the broker as leader and in the ISR while its new
registration is fenced."""
from __future__ import annotations

from kmc.model.kafka.kraft import controller as ctl
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import quorum as qm
from kmc.model.kafka.kraft.state import DOWN, HALTED, RUNNING


def _silent(model, w, b: int) -> bool:
    """No heartbeat renews the broker's lease while the controller counts it unfenced:
    the broker is down, or its new process has no registration yet (a failover left it
    unanswered, ``startup.unanswered_registrations``): the new controller gives every
    unfenced broker a fresh lease (ClusterControlManager.activate), which no heartbeat
    renews."""
    br = w.brokers[b - 1]
    return ((br.status in (DOWN, HALTED) or br.reregister)
            and not im.fenced(model.controller_image(w.quorum), b))


def lease_valid(model, w, b: int) -> bool:
    """BrokerHeartbeatManager.hasValidSession: the controller counts the broker
    unfenced and its lease has not run out (with ``fence_delay``: not ``expired``)."""
    return b not in w.quorum.expired and not im.fenced(model.controller_image(w.quorum), b)


def can_expire(model, w, b: int) -> bool:
    """With ``fence_delay``: the lease of a broker no heartbeat renews runs out."""
    return model.bounds.fence_delay and b not in w.quorum.expired and _silent(model, w, b)


def expire(model, w, b: int):
    """``lease-expires``: broker.session.timeout.ms passes without a heartbeat from the
    broker; the controller's records still count it unfenced until the fence event runs.
    KIP-631 "Broker Fencing"; BrokerHeartbeatManager.java ``hasValidSession``,
    ``findOneStaleBroker``."""
    q = w.quorum
    return w._replace(quorum=q._replace(expired=tuple(sorted(q.expired + (b,)))))


def can_fence_expired(model, w, b: int) -> bool:
    """The controller fences a broker whose lease ran out: at once, or, with
    ``fence_delay``, a broker the heartbeat manager still holds as expired (a new
    registration took it out: ``startup.restart``)."""
    if model.bounds.fence_delay:
        return b in w.quorum.expired
    return _silent(model, w, b)


def fence(model, w, b: int):
    """The controller fences a broker whose heartbeats stopped: ISR shrink, new leaders
    among the unfenced ISR members, then the fenced registration (controller.
    fence_broker). KIP-631 "Broker Fencing"; ReplicationControlManager.java
    ``maybeFenceOneStaleBroker`` -> ``handleBrokerFenced``."""
    q = w.quorum
    recs = ctl.fence_broker(model.controller_image(q), b, model.flags.fence_moves_leaders)
    return w._replace(quorum=qm.lease_ended(model.append(q, recs), b))


def can_miss_heartbeats(model, w, b: int) -> bool:
    """A running broker's heartbeats stop reaching the controller for a lease
    timeout (a fault: a network partition or a long pause)."""
    return (w.budget.fences > 0 and w.brokers[b - 1].status == RUNNING
            and not im.fenced(model.controller_image(w.quorum), b))


def miss_heartbeats(model, w, b: int):
    """A running broker's heartbeats stop reaching the controller (a fault, within the
    scenario's ``fences``): the controller fences it, as ``fence``. KIP-631 "Broker
    Fencing"; BrokerHeartbeatManager.java (broker.session.timeout.ms),
    ReplicationControlManager.java ``handleBrokerFenced``."""
    w = fence(model, w, b)
    return w._replace(budget=w.budget._replace(fences=w.budget.fences - 1))


def can_unfence(model, w, b: int) -> bool:
    """processBrokerHeartbeat unfences a broker that wants to be unfenced (it has
    published its first image: BrokerLifecycleManager.setReadyToUnfence) and is caught
    up (its metadata offset has reached its RegisterBrokerRecord). The broker sends
    heartbeats once its registration is answered (BrokerRegistrationResponseEvent:
    ``registered``), which the controller does once the record is committed
    (QuorumController's write events complete at the high watermark); a registration
    a failover lost is sent again first (``startup.register_again``)."""
    br = w.brokers[b - 1]
    if br.status != RUNNING or br.reregister:
        return False
    q = w.quorum
    if not im.fenced(model.controller_image(q), b):
        return False
    at = ctl.registration_offset(q.log, b)
    return at < q.hwm and len(br.fetched) > at


def unfence(model, w, b: int):
    """A running, caught-up broker is unfenced; leaderless partitions whose ISR holds it
    get it as leader (controller.unfence_broker). KIP-631 "Broker Fencing";
    ReplicationControlManager.java ``processBrokerHeartbeat`` -> ``handleBrokerUnfenced``;
    BrokerServer.scala ``startup`` -> BrokerLifecycleManager.setReadyToUnfence."""
    q = w.quorum
    recs = ctl.unfence_broker(model.controller_image(q), b)
    return w._replace(quorum=model.append(q, recs))
