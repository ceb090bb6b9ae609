"""The invariants of the topic lifecycle, each declared once as a first-order formula over
the relational view (``model.topics.views``).

always: NoStaleRead, NoStaleReplication, TopicIdUnique, NoWriteToDeletedTopic,
ControllerEpochFencing, RecreateAfterDelete (KAFKA-6098), LeaderEpochUnique,
FollowerFencing (KIP-320), NoAcknowledgedLoss.
quiescent (settled: no internal step left): StaleReplicasCleaned, DeletionCompletes,
AssignedReplicasHosted; with
a producer ProducerFinishes, with a consumer ConsumerReadsAll (settled: the client has no
step left either).
sometimes (witnesses that make a scenario meaningful): NameRecreated,
StaleFetchAttempted, FailoverMidDeletion, RestartWithStaleReplica — a scenario carries
the witnesses its bounds make possible (``properties_for``).
"""
from __future__ import annotations

from kmc.invariants.declare import declare
from kmc.invariants.logic import And, Not, Or, Rel, exists, forall, implies, variables
from kmc.model.kafka.store import SENTINEL_ID, ZERO_ID
from kmc.model.topics.views import view, with_clients

Read = Rel("Read", 3, ("reader", "asked_inc", "record_inc"))
Wrote = Rel("Wrote", 2, ("believed_inc", "landed_inc"))
Attempt = Rel("Attempt", 2, ("asked_inc", "served_inc"))
Record = Rel("Record", 4, ("broker", "partition", "serving_inc", "record_inc"))
Holds = Rel("Holds", 3, ("broker", "partition", "inc"))
Live = Rel("Live", 1, ("inc",))
Znode = Rel("Znode", 3, ("inc", "topic_id", "version"))
IdOf = Rel("IdOf", 2, ("inc", "topic_id"))
Marker = Rel("Marker", 1, ("name",))
Down = Rel("Down", 1, ("broker",))
Restarting = Rel("Restarting", 1, ("broker",))
Fence = Rel("Fence", 3, ("broker", "highest_epoch", "last_epoch"))
CreateAfterDelete = Rel("CreateAfterDelete", 1, ("error",))
Failover = Rel("Failover", 2, ("epoch", "deletion_pending"))
LeaderOf = Rel("LeaderOf", 4, ("inc", "partition", "leader_epoch", "leader"))
Appended = Rel("Appended", 4, ("follower", "partition", "fetched_epoch", "follower_epoch"))
Acked = Rel("Acked", 3, ("inc", "partition", "offset"))
Stored = Rel("Stored", 3, ("inc", "partition", "offset"))
Consumed = Rel("Consumed", 3, ("inc", "partition", "offset"))
LeaderLog = Rel("LeaderLog", 3, ("inc", "partition", "offset"))
ProducerLeft = Rel("ProducerLeft", 1, ("records",))
Busy = Rel("Busy", 1, ("client",))
Assigned = Rel("Assigned", 3, ("broker", "partition", "inc"))



def reader(r) -> str:
    """A reader of the Read relation: the consumer (0) or a follower broker."""
    return "the consumer" if r == 0 else f"broker-{r}"


r, a, g, b, p, s, i, j, t, v, d, d2, e, n = variables("r a g b p s i j t v d d2 e n")
b2, f, o, c = variables("b2 f o c")

NO_STALE_READ = declare(
    "always", "NoStaleRead",
    forall((r, a, g), implies(Read(r, a, g), a == g)), view,
    "a follower or the consumer never receives records of an incarnation other than the "
    "one it believes it reads",
    lambda o: f"{reader(o['r'])}, believing it reads incarnation {o['a']} of the topic, "
              f"received a record of incarnation {o['g']}")

NO_STALE_REPLICATION = declare(
    "always", "NoStaleReplication",
    forall((b, p, s, g), implies(Record(b, p, s, g), s == g)), view,
    "every record in a replica's log belongs to the incarnation the replica serves",
    lambda o: f"broker-{o['b']}'s replica of partition {o['p']} serves incarnation "
              f"{o['s']} of the topic, but its log holds a record of incarnation {o['g']}")

TOPIC_ID_UNIQUE = declare(
    "always", "TopicIdUnique",
    And(forall((i, t, v), implies(Znode(i, t, v),
                                  And(t != SENTINEL_ID, Or(v < 3, t != ZERO_ID)))),
        forall((i, j, t), implies(And(IdOf(i, t), IdOf(j, t)),
                                  And(i == j, t != SENTINEL_ID)))),
    view,
    "a topic ID names one incarnation only, a version-3 znode never holds ZERO, and the "
    "sentinel ID is never assigned")

NO_WRITE_TO_DELETED_TOPIC = declare(
    "always", "NoWriteToDeletedTopic",
    forall((a, g), implies(Wrote(a, g), a == g)), view,
    "a produced record lands in the incarnation the producer addressed: never in a "
    "deleted topic's stale log, never in the successor of the topic it meant",
    lambda o: f"the producer, writing to incarnation {o['a']} of the topic, had its "
              f"record appended to a log of incarnation {o['g']}")

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

STALE_REPLICAS_CLEANED = declare(
    "quiescent", "StaleReplicasCleaned",
    Or(exists(d, Down(d)),
       And(forall((b, p, i), implies(Holds(b, p, i), Live(i))),
           forall((b, p, s, g), implies(Record(b, p, s, g), Live(g))))),
    view,
    "settled with every broker up: no replica outside deleting/ serves or holds records "
    "of a deleted incarnation",
    lambda o: f"nothing is left to do and every broker is up, yet broker-{o['b']} still "
              + (f"holds a record of deleted incarnation {o['g']}" if "g" in o else
                 f"serves deleted incarnation {o['i']}")
              + f" in partition {o['p']}")

ASSIGNED_REPLICAS_HOSTED = declare(
    "quiescent", "AssignedReplicasHosted",
    forall((b, p, i), implies(Assigned(b, p, i), Or(Holds(b, p, i), exists(d, Down(d))))),
    view,
    "settled with every broker up: every broker the live incarnation is assigned to holds "
    "a replica of it",
    lambda o: f"nothing is left to do and every broker is up, yet broker-{o['b']}, assigned "
              f"partition {o['p']} of incarnation {o['i']}, holds no replica of it")

DELETION_COMPLETES = declare(
    "quiescent", "DeletionCompletes",
    Not(exists(n, Marker(n))), view,
    "settled: no deletion is pending (no /admin/delete_topics marker)",
    lambda o: f"nothing is left to do, yet the deletion of topic {o['n']} is still "
              "pending (its /admin/delete_topics marker remains)")

#: quiescent, declared per model (``clients_for``): their view asks the model whether a
#: client still has a step
CLIENT_PROPERTIES = {
    "ConsumerReadsAll": (
        forall((i, p, o), implies(LeaderLog(i, p, o),
                                  Or(Consumed(i, p, o), exists(c, And(Busy(c),
                                                                     c == "consumer"))))),
        "settled, the consumer included: it has read every record of the live incarnation "
        "(auto.offset.reset=earliest: a new topic ID is read from its start)",
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

STALE_FETCH_ATTEMPTED = declare(
    "sometimes", "StaleFetchAttempted",
    exists((a, s), And(Attempt(a, s), a != s)), view,
    "a fetch reaches a replica of another incarnation than the fetcher's")

FAILOVER_MID_DELETION = declare(
    "sometimes", "FailoverMidDeletion",
    exists(e, Failover(e, 1)), view,
    "the controller fails over while a deletion is pending")

RESTART_WITH_STALE_REPLICA = declare(
    "sometimes", "RestartWithStaleReplica",
    exists((b, p, i), And(Restarting(b), Holds(b, p, i), Not(Live(i)))), view,
    "a broker restarts holding a replica of a deleted incarnation")

ALWAYS = (NO_STALE_READ, NO_STALE_REPLICATION, TOPIC_ID_UNIQUE, NO_WRITE_TO_DELETED_TOPIC,
          CONTROLLER_EPOCH_FENCING, RECREATE_AFTER_DELETE, LEADER_EPOCH_UNIQUE,
          FOLLOWER_FENCING, NO_ACKNOWLEDGED_LOSS)
QUIESCENT = (STALE_REPLICAS_CLEANED, DELETION_COMPLETES, ASSIGNED_REPLICAS_HOSTED)


def witnesses_for(bounds) -> tuple:
    """The witnesses a scenario's bounds make reachable in principle."""
    out = []
    recreate = bounds.incarnations >= 2 and bounds.deletes >= 1
    if recreate:
        out.append(NAME_RECREATED)
    if recreate and (bounds.rf >= 2 or bounds.consumer):
        out.append(STALE_FETCH_ATTEMPTED)
    if bounds.failovers and bounds.deletes:
        out.append(FAILOVER_MID_DELETION)
    if bounds.crashes and bounds.deletes:
        out.append(RESTART_WITH_STALE_REPLICA)
    return tuple(out)


def clients_for(bounds, model) -> tuple:
    """ConsumerReadsAll and ProducerFinishes, for the clients a scenario has."""
    client_view = with_clients(model)
    names = (("ConsumerReadsAll",) if bounds.consumer else ()) + \
        (("ProducerFinishes",) if bounds.records else ())
    out = []
    for name in names:
        formula, text, sentence = CLIENT_PROPERTIES[name]
        out.append(declare("quiescent", name, formula, client_view, text, sentence))
    return tuple(out)


def properties_for(bounds, model=None) -> tuple:
    clients = () if model is None else clients_for(bounds, model)
    return ALWAYS + QUIESCENT + clients + witnesses_for(bounds)
