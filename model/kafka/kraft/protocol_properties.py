"""Invariants of the KRaft plane's fixed protocol: the controller's records, the Raft
quorum's log, the brokers' images and what their ReplicaManager and LogManager hold, and
what a settled cluster looks like. Each is a fact of Kafka's code, cited next to it
(docs/invariants.md, "The KRaft plane's own facts").

Their relations come from ``protocol_view`` (module ``protocol_view``), built from the
state alone (as ``views.view`` is).

always: PartitionChangeEpochs, NewPartitionRegistration, LeaderInIsr, FencedLeaveIsr,
BrokerEpochs, UnfencedRegistered, UnfencedCaughtUp, StaleLeaseUnfenced, RaftLogSound,
ImageIsReplay, HostedMatchesImage, NoStrayWhileRunning.
quiescent (settled: no internal step left): SettledConverged.
liveness (``-p liveness=true``, with crashes): DeleteDirsEventuallyRemoved (and
deletions), MetadataFileEventuallyFlushed.
"""
from __future__ import annotations

from kmc.invariants.declare import declare
from kmc.invariants.liveness import leads_to
from kmc.invariants.logic import And, Not, Or, exists, forall, implies, variables
from kmc.model.kafka.kraft.protocol_view import (
    NO_LEADER, Change, Created, PartShape, FencedInIsr, Registration, RegChange,
    RegisterAt, UnfenceAt, LostIn, RaftEntry, RaftState, ImageOf, HostedAt, ImagePart,
    StrayOnDisk, BrokerAt, Committed, Leaderless, NotRunning, PendingDelete, AwaitingFlush,
    StaleLease, protocol_view)

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

(b, c, d, e, f, g, h, i, k, l, m, n, o, p, r, s,
 t, u, x, y) = variables("b c d e f g h i k l m n o p r s t u x y")


def _bindings(z: dict) -> str:
    return ", ".join(f"{k_}={v_}" for k_, v_ in sorted(z.items()))


# ---- the active controller's records -----------------------------------------------------
PARTITION_CHANGE_EPOCHS = declare(
    "always", "PartitionChangeEpochs",
    forall((o, e, f, g, h, m, k),
           implies(Change(o, e, f, g, h, m, k),
                   And(h == g + 1, f == e + m, Or(m == 1, k == 1)))),
    protocol_view,
    "a PartitionChangeRecord changes the leader or the ISR, bumps the partition epoch by "
    "one and the leader epoch by one exactly when the leader changes "
    "(PartitionChangeBuilder.build: no record for a no-op change; "
    "PartitionRegistration.merge)",
    lambda z: f"the PartitionChangeRecord at offset {z['o']} takes leader epoch "
              f"{z['e']} -> {z['f']} and partition epoch {z['g']} -> {z['h']} "
              f"(leader changed: {z['m']}, ISR changed: {z['k']})")

NEW_PARTITION_REGISTRATION = declare(
    "always", "NewPartitionRegistration",
    forall((o, e, f, x), implies(Created(o, e, f, x), And(e == 0, f == 0, x == 1))),
    protocol_view,
    "a partition the controller creates starts at leader epoch 0 and partition epoch 0, "
    "led by the first member of its ISR (ReplicationControlManager."
    "buildPartitionRegistration: setLeader(isr.get(0)), setLeaderEpoch(0), "
    "setPartitionEpoch(0))",
    lambda z: f"the PartitionRecord at offset {z['o']} starts at leader epoch {z['e']} "
              f"and partition epoch {z['f']} (led by the ISR's first member: {z['x']})")

LEADER_IN_ISR = declare(
    "always", "LeaderInIsr",
    forall((i, p, l, x, y), implies(PartShape(i, p, l, x, y),
                                    And(Or(l == NO_LEADER, x == 1), y == 1))),
    protocol_view,
    "in the active controller's state every partition's leader is in its ISR (or there "
    "is none), and the ISR is a non-empty subset of the replicas "
    "(PartitionChangeBuilder.isValidNewLeader; without ELR an ISR never becomes empty)",
    lambda z: f"partition {z['p']} of incarnation {z['i']} has leader {z['l']} "
              f"(in the ISR: {z['x']}; ISR non-empty and within the replicas: {z['y']})")

FENCED_LEAVE_ISR = declare(
    "always", "FencedLeaveIsr",
    forall((i, p, b, n), implies(FencedInIsr(i, p, b, n), n == 1)),
    protocol_view,
    "in the active controller's state a fenced broker is in no ISR, unless as its last "
    "member (ReplicationControlManager.handleBrokerFenced -> "
    "generateLeaderAndIsrUpdates removes it from every ISR; without ELR an ISR never "
    "becomes empty)",
    lambda z: f"fenced broker-{z['b']} is still one of the {z['n']} members of the ISR "
              f"of partition {z['p']} of incarnation {z['i']}")

BROKER_EPOCHS = declare(
    "always", "BrokerEpochs",
    And(forall((o, b, e, g), implies(Registration(o, b, e, g), g < e)),
        forall((b, e, g), implies(RegChange(b, e, g), e == g))),
    protocol_view,
    "a broker's new registration gets a broker epoch above its previous one, and a "
    "fence or unfence record carries the broker's current epoch "
    "(ClusterControlManager.registerBroker: newBrokerEpoch; "
    "ReplicationControlManager.handleBrokerFenced / handleBrokerUnfenced)",
    lambda z: f"broker-{z['b']}: broker epoch {z['e']} recorded where its epoch was "
              f"{z['g']}")

UNFENCED_REGISTERED = declare(
    "always", "UnfencedRegistered",
    forall((b, e, o, f), implies(And(LostIn(b, e), UnfenceAt(o, b, f), f >= e),
                                 exists((k, g), And(RegisterAt(k, b, g), k < o, g >= e)))),
    protocol_view,
    "a broker process whose registration a controller failover lost is unfenced only "
    "after it registered again with the new controller (QuorumController.renounce fails "
    "the pending registration; BrokerLifecycleManager sends heartbeats only once its "
    "registration is answered, and sends it again after an error)",
    lambda z: f"broker-{z['b']} is unfenced at offset {z['o']} (Raft epoch {z['f']}) "
              f"while the registration of its process was lost in the failover to epoch "
              f"{z['e']} and not sent again")

UNFENCED_CAUGHT_UP = declare(
    "always", "UnfencedCaughtUp",
    forall((o, b, f, k, g, p, n, x),
           implies(And(UnfenceAt(o, b, f), RegisterAt(k, b, g), k < o, ImageOf(b, p, n, x)),
                   p > k)),
    protocol_view,
    "a broker is unfenced only once its published image holds its registration, and "
    "never goes back below it (BrokerHeartbeatManager.calculateNextBrokerState: "
    "currentMetadataOffset, the MetadataLoader's lastAppliedOffset, at or past the "
    "RegisterBrokerRecord's offset)",
    lambda z: f"broker-{z['b']} is unfenced at offset {z['o']} while its image is at "
              f"{z['p']} batches, short of its registration at offset {z['k']}")

STALE_LEASE_UNFENCED = declare(
    "always", "StaleLeaseUnfenced",
    forall((b, x), implies(StaleLease(b, x), x == 0)),
    protocol_view,
    "a lease the active controller holds as run out (``-p fence_delay=1``) is that of a "
    "broker its records count unfenced: the fence ends it, and a new incarnation's "
    "registration removes it (BrokerHeartbeatManager.findOneStaleBroker looks at the "
    "unfenced brokers only; ClusterControlManager.registerBroker: heartbeatManager.remove)",
    lambda z: f"the controller holds broker-{z['b']}'s lease as run out while its records "
              f"count it fenced")

# ---- the Raft quorum -------------------------------------------------------------------
RAFT_LOG_SOUND = declare(
    "always", "RaftLogSound",
    And(forall((o, e, g, l), implies(RaftEntry(o, e, g, l),
                                     And(g <= e, Or(g == e, l == 1)))),
        forall((o, e, g, l, c, h, n, d, m, u),
               implies(And(RaftEntry(o, e, g, l), RaftState(c, h, n, d, m, u)), e <= c)),
        forall((c, h, n, d, m, u), implies(RaftState(c, h, n, d, m, u),
                                           And(h <= m, h <= n, d == n,
                                               Or(m <= h, u != c))))),
    protocol_view,
    "the metadata log's epochs never go down and each new epoch starts with the new "
    "leader's LeaderChangeMessage (KafkaRaftClient.onBecomeLeader: "
    "appendStartOfEpochControlRecords); no batch is of an epoch above the current one; "
    "the leader holds its whole log, and the high watermark is what a majority holds, "
    "once that is a batch of the leader's epoch (LeaderState.maybeUpdateHighWatermark)",
    lambda z: f"the metadata log or its high watermark breaks Raft's rules ({_bindings(z)})")

# ---- the brokers -------------------------------------------------------------------------
IMAGE_IS_REPLAY = declare(
    "always", "ImageIsReplay",
    forall((b, o, n, x), implies(ImageOf(b, o, n, x), And(o == n, x == 1))),
    protocol_view,
    "a broker's published image is its whole local copy of the metadata log replayed: "
    "the topics, partitions and registrations its records set, at the offset it has "
    "fetched (MetadataLoader publishes the batches of each commit once caught up; "
    "TopicsDelta.replay, ClusterDelta.replay)",
    lambda z: f"broker-{z['b']} publishes an image at offset {z['o']} having fetched "
              f"{z['n']} batches (image equal to the replay: {z['x']})")

HOSTED_MATCHES_IMAGE = declare(
    "always", "HostedMatchesImage",
    forall((b, p, i, l, e, x), implies(HostedAt(b, p, i, l, e, x),
                                       And(x == 1, ImagePart(b, p, i, l, e)))),
    protocol_view,
    "a running broker hosts a partition only as its image says: the image lists it a "
    "replica, with the same leader and leader epoch, and the log on disk has the "
    "partition's topic ID (ReplicaManager.applyDelta -> Partition.makeLeader / "
    "makeFollower take the PartitionRegistration's leader and leader epoch)",
    lambda z: f"broker-{z['b']} hosts partition {z['p']} of incarnation {z['i']} with "
              f"leader {z['l']} at leader epoch {z['e']}, which its image does not say "
              f"(log with this topic ID: {z['x']})")

NO_STRAY_WHILE_RUNNING = declare(
    "always", "NoStrayWhileRunning",
    Not(exists((b, p, i), StrayOnDisk(b, p, i))),
    protocol_view,
    "a running broker holds no log its own image does not assign to it: a deleted "
    "replica's log goes when the broker applies the deletion (ReplicaManager.applyDelta "
    "-> stopPartitions with deleteLocalLog), a stray one at startup "
    "(LogManager.isStrayKraftReplica)",
    lambda z: f"running broker-{z['b']} holds a log of partition {z['p']} of "
              f"incarnation {z['i']} that its image does not assign to it")

SETTLED_CONVERGED = declare(
    "quiescent", "SettledConverged",
    And(forall((b, o, x, h), implies(And(BrokerAt(b, 1, o, x), Committed(h)),
                                     And(o == h, x == 0))),
        forall((b, o, x), implies(BrokerAt(b, 0, o, x), x == 1)),
        forall((i, p), implies(Leaderless(i, p), exists(d, NotRunning(d)))),
        Not(exists(b, PendingDelete(b)))),
    protocol_view,
    "settled: every running broker is unfenced and its image is at the committed "
    "offset, every broker that is not running is fenced, with every broker running "
    "each partition has a leader, and no running broker keeps a -delete directory "
    "(BrokerHeartbeatManager: an expired lease fences; processBrokerHeartbeat unfences a "
    "caught-up broker and handleBrokerUnfenced elects leaders for partitions without "
    "one; MetadataLoader publishes every committed batch; LogManager.deleteLogs removes "
    "the -delete directories)",
    lambda z: "settled, yet a broker is not caught up, fenced while running, unfenced "
              "while not running, keeps a -delete directory, or a partition has no "
              f"leader with every broker running ({_bindings(z)})")

ALWAYS = (PARTITION_CHANGE_EPOCHS, NEW_PARTITION_REGISTRATION, LEADER_IN_ISR,
          FENCED_LEAVE_ISR, BROKER_EPOCHS, UNFENCED_REGISTERED, UNFENCED_CAUGHT_UP,
          STALE_LEASE_UNFENCED, RAFT_LOG_SOUND, IMAGE_IS_REPLAY, HOSTED_MATCHES_IMAGE,
          NO_STRAY_WHILE_RUNNING)
QUIESCENT = (SETTLED_CONVERGED,)

def _eventually_gone(name, pending, what):
    """``pending ~> not pending, or a broker not running``: what a running broker's task
    leaves pending is eventually done; every step the cluster takes by itself is weakly
    fair."""
    return leads_to(name, pending, Or(Not(pending), exists(d, NotRunning(d))),
                    view=protocol_view,
                    description=f"{what}; every step the cluster takes by itself is "
                                "weakly fair")


DELETE_DIRS_EVENTUALLY_REMOVED = _eventually_gone(
    "DeleteDirsEventuallyRemoved", exists(b, PendingDelete(b)),
    "a running broker's -delete directory is eventually removed, unless a broker is not "
    "running (LogManager.startupWithConfigOverrides schedules the kafka-delete-logs task; "
    "LogManager.deleteLogs removes each queued directory)")

METADATA_FILE_EVENTUALLY_FLUSHED = _eventually_gone(
    "MetadataFileEventuallyFlushed", exists(b, AwaitingFlush(b)),
    "a new log's partition.metadata is eventually flushed, unless a broker is not running "
    "(UnifiedLog.initializeTopicId schedules the flush-metadata-file task, "
    "maybeFlushMetadataFile)")


def liveness_for(bounds) -> tuple:
    """The plane's own liveness facts a scenario's bounds make meaningful."""
    if not (bounds.liveness and bounds.crashes):
        return ()
    return ((DELETE_DIRS_EVENTUALLY_REMOVED,) if bounds.deletes else ()) + (
        METADATA_FILE_EVENTUALLY_FLUSHED,)
