"""The active controller's record generation (QuorumController with its
ReplicationControlManager and ClusterControlManager): what a request or a timer appends
to the metadata log. Each function takes the active controller's image (its log
replayed, uncommitted records included) and returns the records of one batch.

Admin requests are checked against that image, as QuorumController's write events run
against its in-memory (timeline) state.
"""
from __future__ import annotations

from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import records as rc

NO_LEADER = -1


def create_topic(img, name: str, topic_id: int, layouts) -> tuple:
    """CreateTopics (KIP-4 "Create Topics Request"; KIP-516 "CreateTopics": the
    controller assigns the topic ID). ReplicationControlManager.createTopics /
    createTopic: a TopicRecord and one PartitionRecord per partition, as one atomic
    batch; the first replica is the leader, the ISR is every replica, epochs start at 0.
    Placement (StripedReplicaPlacer) uses unfenced brokers only; the caller enumerates
    every placement over them."""
    out = [rc.topic(name, topic_id)]
    for p, replicas in enumerate(layouts):
        out.append(rc.partition(topic_id, p, replicas, replicas, replicas[0]))
    return tuple(out)


def delete_topic(topic_id: int) -> tuple:
    """DeleteTopics (KIP-516 "DeleteTopics": deletion is immediate; "Compatibility with
    KIP-500": no StopReplica, brokers see the RemoveTopicRecord).
    ReplicationControlManager.deleteTopics / deleteTopic: one RemoveTopicRecord."""
    return (rc.remove_topic(topic_id),)


def _elect(part, isr, acceptable) -> int:
    """PartitionChangeBuilder.electAnyLeader (Election.ONLINE): keep the leader while it
    is still valid, else the first replica in the target ISR that is acceptable, else
    NO_LEADER."""
    if part.leader in isr and acceptable(part.leader):
        return part.leader
    for r in part.replicas:
        if r in isr and acceptable(r):
            return r
    return NO_LEADER


def _change(topic_id, p, part, isr, leader) -> tuple:
    """PartitionChangeBuilder.build: a record only when something changed; a new leader
    bumps the leader epoch, any change bumps the partition epoch."""
    if isr == part.isr and leader == part.leader:
        return ()
    le = part.leader_epoch + (1 if leader != part.leader else 0)
    return (rc.partition_change(topic_id, p, isr, leader, le, part.partition_epoch + 1),)


def fence_broker(img, broker: int, move_leaders: bool = True) -> tuple:
    """BrokerHeartbeatManager: the heartbeat lease runs out -> ReplicationControlManager.
    maybeFenceOneStaleBroker -> handleBrokerFenced: remove the broker from every ISR
    (generateLeaderAndIsrUpdates; an ISR that would become empty keeps its last member,
    PartitionChangeBuilder without ELR), elect new leaders among unfenced ISR members,
    then a BrokerRegistrationChangeRecord with fenced set. ``move_leaders=False`` is the
    mutant that skips the partition changes."""
    out = []
    if move_leaders:
        def acceptable(r):
            return r != broker and not im.fenced(img, r)
        for t in img.topics:
            for p, part in enumerate(t.parts):
                if broker not in part.isr:
                    continue
                isr = tuple(r for r in part.isr if r != broker) or part.isr
                out.extend(_change(t.topic_id, p, part, isr, _elect(part, isr, acceptable)))
    out.append(rc.registration_change(broker, im.broker_epoch(img, broker), True))
    return tuple(out)


def unfence_broker(img, broker: int) -> tuple:
    """ReplicationControlManager.processBrokerHeartbeat -> handleBrokerUnfenced: a
    BrokerRegistrationChangeRecord clearing fenced, then leaders for the partitions
    without one whose ISR holds the broker (partitionsWithNoLeader)."""
    out = [rc.registration_change(broker, im.broker_epoch(img, broker), False)]

    def acceptable(r):
        return r == broker or not im.fenced(img, r)
    for t in img.topics:
        for p, part in enumerate(t.parts):
            if part.leader == NO_LEADER and broker in part.isr:
                out.extend(_change(t.topic_id, p, part, part.isr,
                                   _elect(part, part.isr, acceptable)))
    return tuple(out)


def register_broker(img, broker: int) -> tuple:
    """BrokerRegistrationRequest from a restarted broker (KIP-631 "Broker
    Registration"). ClusterControlManager.registerBroker: a new incarnation gets a new
    broker epoch and a fenced RegisterBrokerRecord; it is refused while the old
    incarnation's heartbeat lease is still valid (DuplicateBrokerRegistrationException),
    so the
    caller only offers it once the broker is fenced. The unclean-shutdown records
    (handleBrokerUncleanShutdown) are empty without ELR, the default in 3.9."""
    return (rc.register_broker(broker, im.broker_epoch(img, broker) + 1, True),)


def registration_offset(log: tuple, broker: int) -> int:
    """Offset (batch index) of the broker's latest RegisterBrokerRecord; -1 if none.
    The heartbeat's isCaughtUp compares the broker's metadata offset with it
    (processBrokerHeartbeat: currentMetadataOffset >= registerBrokerRecordOffset)."""
    for i in range(len(log) - 1, -1, -1):
        for rec in log[i].records:
            if rec.kind == "RegisterBrokerRecord" and rec.broker == broker:
                return i
    return -1
