"""The invariants of the topic lifecycle on the ZooKeeper-era plane, as first-order
formulas over the relational view (``model.kafka.zk.views``). The properties both control
planes share are declared once in ``model.kafka.lifecycle_properties``; this module adds
the plane's own.

always: NoStaleRead, NoStaleReplication, TopicIdUnique, NoWriteToDeletedTopic,
ControllerEpochFencing, RecreateAfterDelete (KAFKA-6098), LeaderEpochUnique,
FollowerFencing (KIP-320), NoAcknowledgedLoss, DeletedIncarnationInert, BudgetsRespected
(shared), BudgetsAccounted.
quiescent (settled: no internal step left): StaleReplicasCleaned, DeletionCompletes,
AssignedReplicasHosted; with
a producer ProducerFinishes, with a consumer ConsumerReadsAll (settled: the client has no
step left either) and, always, ConsumerReadsCommitted.
sometimes (witnesses that make a scenario meaningful): NameRecreated,
StaleFetchAttempted, FailoverMidDeletion, RestartWithStaleReplica — a scenario carries
the witnesses its bounds make possible (``properties_for``).
The protocol's own facts (leader election, connections, the fetch loop, acks=all) are in
``model.kafka.zk.protocol_properties``.

TopicIdUnique stays here: on this plane a topic ID lives in znodes (with their schema
version), replicas, deleting/ and requests, and the property also covers the znode
schema and the sentinel ID; on KRaft it is stated over each image's name-to-ID map.
"""
from __future__ import annotations

from kmc.invariants.declare import declare
from kmc.invariants.logic import And, Not, Or, Rel, exists, forall, implies, variables
from kmc.model.kafka import lifecycle_properties as lp
from kmc.model.kafka.lifecycle_properties import Holds, Live
from kmc.model.kafka.store import SENTINEL_ID, ZERO_ID
from kmc.model.kafka.zk.protocol_properties import protocol_liveness, protocol_properties
from kmc.model.kafka.zk.views import view, with_clients

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

Znode = Rel("Znode", 3, ("inc", "topic_id", "version"))
IdOf = Rel("IdOf", 2, ("inc", "topic_id"))
Restarting = Rel("Restarting", 1, ("broker",))
Fence = Rel("Fence", 3, ("broker", "highest_epoch", "last_epoch"))
CreateAfterDelete = Rel("CreateAfterDelete", 1, ("error",))
Assigned = lp.Assigned
LeaderOf = Rel("LeaderOf", 4, ("inc", "partition", "leader_epoch", "leader"))
Appended = Rel("Appended", 4, ("follower", "partition", "fetched_epoch", "follower_epoch"))
Acked = Rel("Acked", 3, ("inc", "partition", "offset"))
Stored = Rel("Stored", 3, ("inc", "partition", "offset"))
Consumed = Rel("Consumed", 3, ("inc", "partition", "offset"))
LeaderLog = Rel("LeaderLog", 3, ("inc", "partition", "offset"))
ProducerLeft = Rel("ProducerLeft", 1, ("records",))
Busy = Rel("Busy", 1, ("client",))
ReplicaState = Rel("ReplicaState", 6,
                   ("broker", "partition", "inc", "topic_id", "leader_epoch", "leader"))
Current = Rel("Current", 5, ("inc", "partition", "topic_id", "leader_epoch", "leader"))
Awaiting = Rel("Awaiting", 3, ("broker", "partition", "inc"))
Down = lp.Down
Spent = Rel("Spent", 4, ("budget", "left", "taken", "given"))

b, p, s, i, j, t, v, e, n, b2, f, o, c, ld, d = variables(
    "b p s i j t v e n b2 f o c ld d")
k, x, y, g = variables("k x y g")

PLANE = lp.Plane(view=view, up="up")
#: the properties both planes share (model.kafka.lifecycle_properties), by name
SHARED = lp.lifecycle_properties(PLANE)

TOPIC_ID_UNIQUE = declare(
    "always", "TopicIdUnique",
    And(forall((i, t, v), implies(Znode(i, t, v),
                                  And(t != SENTINEL_ID, Or(v < 3, t != ZERO_ID)))),
        forall((i, j, t), implies(And(IdOf(i, t), IdOf(j, t)),
                                  And(i == j, t != SENTINEL_ID)))),
    view,
    "a topic ID names one incarnation only, a version-3 znode never holds ZERO, and the "
    "sentinel ID is never assigned")

CONTROLLER_EPOCH_FENCING = declare(
    "always", "ControllerEpochFencing",
    forall((b, s, e), implies(Fence(b, s, e), s <= e)), view,
    "a broker never applies a request from an older controller epoch than one it applied",
    lambda o: f"broker-{o['b']} applied a request of controller epoch {o['e']} after it "
              f"had applied one of epoch {o['s']}")

RECREATE_AFTER_DELETE = declare(
    "always", "RecreateAfterDelete",
    forall(e, implies(CreateAfterDelete(e), e != "TOPIC_ALREADY_EXISTS")), view,
    "once DeleteTopics answered success, creating the name again is not refused with "
    "TOPIC_ALREADY_EXISTS (KAFKA-6098)",
    lambda o: f"DeleteTopics had answered success, yet CreateTopics of the same name "
              f"was refused with {o['e']}")

LEADER_EPOCH_UNIQUE = declare(
    "always", "LeaderEpochUnique",
    forall((i, p, e, b, b2), implies(And(LeaderOf(i, p, e, b), LeaderOf(i, p, e, b2)),
                                     b == b2)), view,
    "at most one leader per partition and leader epoch, ever: a leader epoch names one "
    "leadership",
    lambda o: f"leader epoch {o['e']} of partition {o['p']} (incarnation {o['i']}) named "
              f"two leaders: broker-{o['b']} and broker-{o['b2']}")

FOLLOWER_FENCING = declare(
    "always", "FollowerFencing",
    forall((b, p, e, f), implies(Appended(b, p, e, f), e == f)), view,
    "a follower appends only fetch responses fetched at its current leader epoch (KIP-320)",
    lambda o: f"broker-{o['b']}, a follower of partition {o['p']} at leader epoch "
              f"{o['f']}, appended records it had fetched at leader epoch {o['e']}")

NO_ACKNOWLEDGED_LOSS = declare(
    "always", "NoAcknowledgedLoss",
    forall((i, p, o), implies(And(Acked(i, p, o), Live(i)), Stored(i, p, o))), view,
    "a record acknowledged to the producer (every in-sync replica held it) in the live "
    "incarnation is never gone from every replica",
    lambda x: f"the record at offset {x['o']} of partition {x['p']} (incarnation {x['i']}, "
              "still live) was acknowledged, yet no replica holds it any more")

DELETED_INCARNATION_INERT = declare(
    "always", "DeletedIncarnationInert",
    And(forall((i, p, e, b), implies(LeaderOf(i, p, e, b), Live(i))),
        forall((i, p, o), implies(Acked(i, p, o), Live(i))),
        forall((i, p, o), implies(Consumed(i, p, o), Live(i)))), view,
    "once DeleteTopics marks an incarnation, it never gets a leader, an acknowledged "
    "record or a consumer read again (the history LeaderEpochUnique, NoAcknowledgedLoss "
    "and ConsumerReadsAll read is the live incarnation's)",
    lambda x: f"incarnation {x['i']} of the topic, deleted, still has a leader, an "
              "acknowledged record or a consumer read on record")

REPLICA_LEADER_NAMED = declare(
    "always", "ReplicaLeaderNamed",
    forall((b, p, i, t, e, ld), implies(And(ReplicaState(b, p, i, t, e, ld), Live(i),
                                            ld >= 1),
                                        LeaderOf(i, p, e, ld))), view,
    "a replica of the live incarnation follows a leader at a leader epoch that the "
    "controller named for it: brokers learn leadership from LeaderAndIsr only",
    lambda x: f"broker-{x['b']}'s replica of partition {x['p']} (incarnation {x['i']}) "
              f"follows broker-{x['ld']} at leader epoch {x['e']}, which the controller "
              "never named")

BUDGETS_ACCOUNTED = declare(
    "always", "BudgetsAccounted",
    forall((k, x, y, g), implies(Spent(k, x, y, g), x + y == g)), view,
    "each budget's counter and the steps it counts agree: what is left plus the creations, "
    "deletions, controller failovers and reassignments the store and the ghost show were "
    "taken is what the scenario gives (BudgetsRespected's counters, checked against the "
    "steps; a counter that is not spent lets a run take steps its bounds do not report)",
    lambda x: f"the {x['k']} budget shows {x['x']} left after {x['y']} taken, of "
              f"{x['g']} the scenario gives")

AWAITING_DELETED = declare(
    "always", "StopReplicaOfDeletedOnly",
    forall((b, p, i), implies(Awaiting(b, p, i), Not(Live(i)))), view,
    "the controller awaits StopReplica answers only for replicas of a deleted (or "
    "marked) incarnation",
    lambda x: f"the controller awaits broker-{x['b']}'s StopReplica of partition "
              f"{x['p']}, yet incarnation {x['i']} is live")

REPLICAS_FOLLOW_CONTROLLER = declare(
    "quiescent", "ReplicasFollowController",
    forall((b, p, i), implies(Assigned(b, p, i),
                              Or(exists(d, Down(d)),
                                 exists((t, e, ld), And(Current(i, p, t, e, ld),
                                                        ReplicaState(b, p, i, t, e, ld)))))),
    view,
    "settled with every broker up: each replica of the live incarnation's assignment has "
    "the store's topic ID, leader and leader epoch",
    lambda x: f"nothing is left to do and every broker is up, yet broker-{x['b']}'s "
              f"replica of partition {x['p']} (incarnation {x['i']}) disagrees with the "
              "controller's topic ID, leader or leader epoch")

STOP_REPLICAS_ANSWERED = declare(
    "quiescent", "StopReplicasAnswered",
    forall((b, p, i), implies(Awaiting(b, p, i), exists(d, Down(d)))), view,
    "settled with every broker up: the controller awaits no StopReplica answer (KIP-516 "
    "\"DeleteTopics\": unsuccessful StopReplica requests are retried)",
    lambda x: f"nothing is left to do and every broker is up, yet the controller still "
              f"awaits broker-{x['b']}'s answer to StopReplica of partition {x['p']} "
              f"(incarnation {x['i']})")

DELETION_COMPLETES = lp.deletion_completes(
    PLANE, "settled: no deletion is pending (no /admin/delete_topics marker)",
    sentence=lambda x: f"nothing is left to do, yet the deletion of topic {x['n']} is "
                       "still pending (its /admin/delete_topics marker remains)")

#: quiescent, declared per model (``clients_for``): their view asks the model whether a
#: client still has a step
CLIENT_PROPERTIES = {
    "ConsumerReadsAll": (
        forall((i, p, o), implies(And(LeaderLog(i, p, o), Acked(i, p, o)),
                                  Or(Consumed(i, p, o), exists(c, And(Busy(c),
                                                                     c == "consumer"))))),
        "settled, the consumer included: it has read every committed record (below the "
        "high watermark) of the live incarnation (auto.offset.reset=earliest: a new topic "
        "ID is read from its start)",
        lambda x: f"nothing is left to do, yet the consumer never read the record at "
                  f"offset {x['o']} of partition {x['p']} (incarnation {x['i']})"),
    "ProducerFinishes": (
        forall(n, implies(ProducerLeft(n), Or(exists(c, And(Busy(c), c == "producer")),
                                              Not(exists(i, Live(i)))))),
        "settled, the producer included: it has sent its whole script, or the topic is "
        "gone (the definitive error once delivery.timeout.ms expires)",
        lambda x: f"nothing is left to do, yet the producer still has {x['n']} record(s) "
                  "to send to a live topic"),
}

NAME_RECREATED = declare(
    "sometimes", "NameRecreated",
    exists((i, t, v), And(Znode(i, t, v), 2 <= i)), view,
    "the topic name is created again after a deletion")

FAILOVER_MID_DELETION = lp.failover_mid_deletion(
    PLANE, "the controller fails over while a deletion is pending")

RESTART_WITH_STALE_REPLICA = declare(
    "sometimes", "RestartWithStaleReplica",
    exists((b, p, i), And(Restarting(b), Holds(b, p, i), Not(Live(i)))), view,
    "a broker restarts holding a replica of a deleted incarnation")

ALWAYS = (SHARED["NoStaleRead"], SHARED["NoStaleReplication"], TOPIC_ID_UNIQUE,
          SHARED["NoWriteToDeletedTopic"], CONTROLLER_EPOCH_FENCING, RECREATE_AFTER_DELETE,
          LEADER_EPOCH_UNIQUE, FOLLOWER_FENCING, NO_ACKNOWLEDGED_LOSS,
          REPLICA_LEADER_NAMED, SHARED["MetadataFlushedFirst"], AWAITING_DELETED,
          SHARED["BudgetsRespected"], BUDGETS_ACCOUNTED, DELETED_INCARNATION_INERT)
QUIESCENT = (SHARED["StaleReplicasCleaned"], DELETION_COMPLETES,
             SHARED["AssignedReplicasHosted"], REPLICAS_FOLLOW_CONTROLLER,
             STOP_REPLICAS_ANSWERED)


EXPANSIONS = lp.expansion_witnesses(PLANE)
REPLICAS_DISTINCT = lp.replicas_distinct(PLANE)
Rewritten = Rel("Rewritten", 1, ("inc",))
ASSIGNMENT_AGREED = declare(
    "quiescent", "AssignmentAgreed",
    Not(exists(i, Rewritten(i))), view,
    "settled: the topic znode's assignment is the one the controller acts on (a "
    "CreatePartitions write is taken in, or written back for a topic being deleted); "
    "otherwise the next controller acts on another assignment",
    lambda x: f"nothing is left to do, yet the topic znode of incarnation {x['i']} "
              "assigns other replicas than the controller's record: the next controller "
              "will load them")


def expansion_properties(bounds) -> tuple:
    """ReplicasDistinct and AssignmentAgreed for a scenario with CreatePartitions."""
    return (REPLICAS_DISTINCT, ASSIGNMENT_AGREED) if bounds.adds else ()


def witnesses_for(bounds) -> tuple:
    """The witnesses a scenario's bounds make reachable in principle."""
    return lp.witnesses_for(bounds, NAME_RECREATED, SHARED["StaleFetchAttempted"],
                            FAILOVER_MID_DELETION, RESTART_WITH_STALE_REPLICA) + (
        EXPANSIONS if bounds.adds and lp.recreates(bounds) else ())


CONSUMER_READS_COMMITTED = declare(
    "always", "ConsumerReadsCommitted",
    forall((i, p, o), implies(And(Consumed(i, p, o), Live(i)), Acked(i, p, o))), view,
    "the consumer reads only committed records: each record it read of the live "
    "incarnation was below the high watermark, held by every in-sync replica "
    "(FetchIsolation.HIGH_WATERMARK for a consumer's Fetch)",
    lambda x: f"the consumer read the record at offset {x['o']} of partition {x['p']} "
              f"(incarnation {x['i']}, live) before every in-sync replica held it")


def clients_for(bounds, model) -> tuple:
    """ConsumerReadsCommitted, ConsumerReadsAll and ProducerFinishes, for the clients a
    scenario has."""
    client_view = with_clients(model)
    names = (("ConsumerReadsAll",) if bounds.consumer else ()) + \
        (("ProducerFinishes",) if bounds.records else ())
    out = [CONSUMER_READS_COMMITTED] if bounds.consumer else []
    for name in names:
        formula, text, sentence = CLIENT_PROPERTIES[name]
        out.append(declare("quiescent", name, formula, client_view, text, sentence))
    return tuple(out)


def properties_for(bounds, model=None) -> tuple:
    clients = () if model is None else clients_for(bounds, model)
    flags = None if model is None else model.flags
    return ALWAYS + QUIESCENT + expansion_properties(bounds) + clients + \
        witnesses_for(bounds) + protocol_properties(
        bounds, True if flags is None else flags.topic_ids) + protocol_liveness(
        bounds, flags is not None and flags.epoch_fencing)
