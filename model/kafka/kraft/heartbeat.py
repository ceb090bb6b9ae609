"""Broker liveness at the controller: heartbeat leases, fencing and unfencing (KIP-631
"Broker
Fencing"; metadata/src/main/java/org/apache/kafka/controller/BrokerHeartbeatManager.java
and ReplicationControlManager.processBrokerHeartbeat / maybeFenceOneStaleBroker)."""
from __future__ import annotations

from kmc.model.kafka.kraft import controller as ctl
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft.state import DOWN, HALTED, RUNNING


def can_fence_expired(model, w, b: int) -> bool:
    """A broker's heartbeat lease runs out while the controller still counts it
    unfenced: the broker is down, or its new process has no registration yet (a
    failover left it unanswered, ``startup.unanswered_registrations``): the new
    controller gives every unfenced broker a fresh lease (ClusterControlManager.
    activate), which no heartbeat renews."""
    br = w.brokers[b - 1]
    return ((br.status in (DOWN, HALTED) or br.reregister)
            and not im.fenced(model.controller_image(w.quorum), b))


def fence(model, w, b: int):
    """The controller fences a broker whose heartbeats stopped: ISR shrink, new leaders
    among the unfenced ISR members, then the fenced registration (controller.
    fence_broker). KIP-631 "Broker Fencing"; ReplicationControlManager.java
    ``maybeFenceOneStaleBroker`` -> ``handleBrokerFenced``."""
    q = w.quorum
    recs = ctl.fence_broker(model.controller_image(q), b, model.flags.fence_moves_leaders)
    return w._replace(quorum=model.append(q, recs))


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
