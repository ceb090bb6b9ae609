"""Invariants of the ZooKeeper-era plane's fixed protocol: leader election, the network's
connections, DeleteTopics by topic ID, acks=all, and witnesses of replication, of the
delayed purge and of a topic ID lost in a crash. Each is a fact of Kafka's code, cited
next to it (docs/invariants.md, "The protocol's own facts").

Their relations extend ``model.kafka.zk.views.view`` with the messages in flight, the
active controller and the admin's last answer (``protocol_view``), built from the state
alone as ``view`` is.

always: LeaderIsReplica, LeaderIsLive, NoTrafficWithCrashedBroker,
NoTrafficToFormerController, DeleteByIdFindsLiveTopic.
quiescent (settled: no internal step left): LeadersElected, ReplicatedRecordsAcknowledged.
sometimes (where the bounds make them reachable): StagedBeforePurge, FollowerReplicated,
FollowersFetchTogether, TopicIdLostInRestart.
leads_to (with ``-p liveness=true``): StaleRequestsEventuallyDropped.
"""
from __future__ import annotations

from kmc.invariants.declare import declare
from kmc.invariants.liveness import leads_to
from kmc.invariants.logic import And, Not, Or, Rel, exists, forall, implies, variables
from kmc.model.kafka import broker as bk
from kmc.model.kafka import lifecycle_properties as lp
from kmc.model.kafka.lifecycle_properties import Live
from kmc.model.kafka.store import ZERO_ID
from kmc.model.kafka.zk.views import messages, view

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

Current = Rel("Current", 5, ("inc", "partition", "topic_id", "leader_epoch", "leader"))
Assigned = lp.Assigned
Down = lp.Down
Crashed = Rel("Crashed", 1, ("broker",))
BrokerTraffic = Rel("BrokerTraffic", 3, ("kind", "src", "dst"))
ToController = Rel("ToController", 2, ("kind", "controller"))
Active = Rel("Active", 1, ("controller",))
Answered = Rel("Answered", 2, ("op", "error"))
KnownId = Rel("KnownId", 1, ("topic_id",))
Znode = Rel("Znode", 3, ("inc", "topic_id", "version"))
LeaderLog = Rel("LeaderLog", 3, ("inc", "partition", "offset"))
Acked = Rel("Acked", 3, ("inc", "partition", "offset"))
Staged = Rel("Staged", 3, ("broker", "partition", "inc"))
Appended = Rel("Appended", 4, ("follower", "partition", "fetched_epoch", "follower_epoch"))
Restarting = Rel("Restarting", 1, ("broker",))
Fetching = Rel("Fetching", 2, ("follower", "partition"))
StaleRequest = Rel("StaleRequest", 3, ("kind", "broker", "epoch"))
ReplicaState = Rel("ReplicaState", 6,
                   ("broker", "partition", "inc", "topic_id", "leader_epoch", "leader"))

b, p, i, t, e, ld, d, k, x, y, c, n, o, v = variables("b p i t e ld d k x y c n o v")


def _traffic(w) -> dict:
    traffic, to_ctl, fetching, requests = set(), set(), set(), set()
    for msg in messages(w.net):
        src, dst = msg.src, msg.dst
        if src > 0:
            traffic.add((msg.kind, src, dst if dst > 0 else 0))
        if dst > 0:
            traffic.add((msg.kind, src if src > 0 else 0, dst))
            if src < 0:
                requests.add((msg.kind, dst, msg.epoch))
        else:
            to_ctl.add((msg.kind, -dst))
        if msg.kind == "FetchResponse":
            fetching.add((dst, msg.partition))
    return {"BrokerTraffic": traffic, "ToController": to_ctl, "Fetching": fetching,
            "_requests": requests}


def _stale(parts) -> dict:
    applied = {f[0]: f[1] for f in parts["Fence"]}
    return {"StaleRequest": {r for r in parts["_requests"] if r[2] < applied[r[1]]}}


def _crashed(w) -> dict:
    return {"Crashed": {(j + 1,) for j, br in enumerate(w.brokers) if br.status == bk.DOWN}}


def _controller(w) -> dict:
    return {"Active": {(w.ctl.active,)}}


def _answered(w) -> dict:
    out = w.admin.outcome
    return {"Answered": {tuple(out)} if out else set(), "KnownId": {(w.admin.known_id,)}}


#: ``view``'s relations plus:
#:
#: - ``Crashed(broker)``: a broker that is down (not restarting: a restarting broker has
#:   registered again and has connections).
#: - ``BrokerTraffic(kind, src, dst)``: a message in flight between two brokers or between
#:   a broker and a controller, one tuple per broker endpoint (the other endpoint 0 when
#:   it is a controller).
#: - ``ToController(kind, controller)``: a message in flight to a controller.
#: - ``Active(controller)``: the active controller.
#: - ``Fetching(follower, partition)``: a FetchResponse in flight to a follower.
#: - ``StaleRequest(kind, broker, epoch)``: a controller request in flight to a broker
#:   that has applied a newer controller epoch than the request's.
#: - ``Answered(op, error)``: the admin's last answer; ``KnownId(topic_id)``: the topic
#:   ID of its last successful CreateTopics (0 before one, or without topic IDs).
#:
#: Each part reads the fields it names (``invariants.fieldview``), so the properties over
#: it are memoised by those fields, or by the values of the relations they read.
protocol_view = view.extended(
    ((("net",), _traffic), (("brokers",), _crashed), (("ctl",), _controller),
     (("admin",), _answered)),
    ((("net", "brokers"), ("_requests", "Fence"), _stale),),
    name=__name__ + ":protocol_view")


# ---- leader election -----------------------------------------------------------------------
LEADER_IS_REPLICA = declare(
    "always", "LeaderIsReplica",
    forall((i, p, t, e, ld), implies(And(Current(i, p, t, e, ld), Live(i), ld >= 1),
                                     Assigned(ld, p, i))),
    protocol_view,
    "the leader the store names for a partition of the live incarnation is one of its "
    "assigned replicas (PartitionLeaderElectionAlgorithms: every election picks from the "
    "assignment)",
    lambda z: f"the store names broker-{z['ld']} leader of partition {z['p']} "
              f"(incarnation {z['i']}, leader epoch {z['e']}), which is not one of its "
              "replicas")

LEADER_IS_LIVE = declare(
    "always", "LeaderIsLive",
    forall((i, p, t, e, ld), implies(And(Current(i, p, t, e, ld), Live(i), ld >= 1),
                                     Not(Crashed(ld)))),
    protocol_view,
    "the leader the store names for a partition of the live incarnation is not down "
    "(KafkaController.onReplicasBecomeOffline elects a live in-sync replica, and "
    "ReplicaStateMachine.removeReplicasFromIsr writes NoLeader for a dead leader)",
    lambda z: f"the store names broker-{z['ld']} leader of partition {z['p']} "
              f"(incarnation {z['i']}, leader epoch {z['e']}), yet broker-{z['ld']} is down")

LEADERS_ELECTED = declare(
    "quiescent", "LeadersElected",
    forall((i, p, t, e, ld), implies(And(Current(i, p, t, e, ld), Live(i)),
                                     Or(ld >= 1, exists(d, Down(d))))),
    protocol_view,
    "settled with every broker up: every partition of the live incarnation has a leader "
    "(KafkaController.onBrokerStartup elects the offline partitions' leaders)",
    lambda z: f"nothing is left to do and every broker is up, yet partition {z['p']} "
              f"(incarnation {z['i']}) has no leader")

# ---- connections ----------------------------------------------------------------------------
NO_TRAFFIC_WITH_CRASHED = declare(
    "always", "NoTrafficWithCrashedBroker",
    forall((k, x, y), implies(BrokerTraffic(k, x, y), And(Not(Crashed(x)), Not(Crashed(y))))),
    protocol_view,
    "no message is in flight to or from a crashed broker: a crash breaks its connections "
    "(NetworkClient fails a disconnected node's in-flight requests) and it sends nothing",
    lambda z: f"a {z['k']} from {z['x'] or 'the controller'} to {z['y'] or 'the controller'} "
              "is in flight although one of them is down")

NO_TRAFFIC_TO_FORMER_CONTROLLER = declare(
    "always", "NoTrafficToFormerController",
    forall((k, c), implies(ToController(k, c), Active(c))),
    protocol_view,
    "no message is in flight to a controller that resigned "
    "(KafkaController.onControllerResignation shuts its ControllerChannelManager down)",
    lambda z: f"a {z['k']} is in flight to controller {z['c']}, which is not the active "
              "controller")

STALE = exists((k, x, e), StaleRequest(k, x, e))
STALE_REQUESTS_DROPPED = leads_to(
    "StaleRequestsEventuallyDropped", STALE, Not(STALE), view=protocol_view,
    description="a request of an older controller epoch than its broker applied is "
                "eventually handled and gone: the broker answers it "
                "STALE_CONTROLLER_EPOCH once (KafkaApis.handleLeaderAndIsrRequest, "
                "ReplicaManager.stopReplicas)")

# ---- admin ------------------------------------------------------------------------------------
DELETE_BY_ID = declare(
    "always", "DeleteByIdFindsLiveTopic",
    forall(t, implies(And(Answered("delete", "UNKNOWN_TOPIC_ID"), KnownId(t)),
                      Not(exists((i, v), And(Znode(i, t, v), Live(i)))))),
    protocol_view,
    "DeleteTopics by topic ID answers UNKNOWN_TOPIC_ID only when no live topic has that ID "
    "(KafkaApis.handleDeleteTopicsRequest)",
    lambda z: f"DeleteTopics by topic ID {z['t']} was answered UNKNOWN_TOPIC_ID, yet the live "
              "topic has that ID")

# ---- acks=all ----------------------------------------------------------------------------------
REPLICATED_ACKED = declare(
    "quiescent", "ReplicatedRecordsAcknowledged",
    forall((i, p, o), implies(LeaderLog(i, p, o), Or(Acked(i, p, o), exists(d, Down(d))))),
    protocol_view,
    "settled with every broker up: every record in a live partition leader's log is "
    "acknowledged (acks=all: Partition.maybeIncrementLeaderHW completes the DelayedProduce "
    "once every in-sync replica fetched it)",
    lambda z: f"nothing is left to do and every broker is up, yet the record at offset "
              f"{z['o']} of partition {z['p']} (incarnation {z['i']}) in its leader's log "
              "was never acknowledged")

# ---- the delayed purge ---------------------------------------------------------------------------
STAGED_BEFORE_PURGE = declare(
    "sometimes", "StagedBeforePurge",
    exists((b, p, i), Staged(b, p, i)), protocol_view,
    "a deleted replica waits in log.dir/deleting/ before its purge (LogManager.asyncDelete "
    "renames the log, file.delete.delay.ms later it is deleted)")

FOLLOWER_REPLICATED = declare(
    "sometimes", "FollowerReplicated",
    exists((x, p, e, y), Appended(x, p, e, y)), protocol_view,
    "a follower appends records it fetched from its leader (the history FollowerFencing "
    "is stated over is not empty)")

FOLLOWERS_FETCH_TOGETHER = declare(
    "sometimes", "FollowersFetchTogether",
    exists((x, y, p), And(Fetching(x, p), Fetching(y, p), x != y)), protocol_view,
    "two followers of one partition have fetches in flight at once: each follower broker "
    "fetches with its own fetcher threads (ReplicaFetcherManager, AbstractFetcherThread)")

TOPIC_ID_LOST = declare(
    "sometimes", "TopicIdLostInRestart",
    exists((b, p, i, e, ld), And(Restarting(b), ReplicaState(b, p, i, ZERO_ID, e, ld))),
    protocol_view,
    "a broker restarts with a log whose topic ID it lost: partition.metadata had not been "
    "flushed (Log.maybeFlushMetadataFile runs before the first append only)")

ALWAYS = (LEADER_IS_REPLICA, LEADER_IS_LIVE, NO_TRAFFIC_WITH_CRASHED,
          NO_TRAFFIC_TO_FORMER_CONTROLLER, DELETE_BY_ID)


def protocol_liveness(bounds, fencing: bool) -> tuple:
    """StaleRequestsEventuallyDropped, with the liveness properties (``-p liveness=true``)
    of a scenario with a failover whose variant fences requests by controller epoch."""
    return (STALE_REQUESTS_DROPPED,) if bounds.liveness and bounds.failovers and fencing \
        else ()


def protocol_properties(bounds, topic_ids: bool = True) -> tuple:
    """The properties above that a scenario's bounds (and whether its variant has topic
    IDs) make meaningful. The witnesses: the purge one with a delayed purge,
    FollowerReplicated with a producer and followers (FollowersFetchTogether with two
    followers), TopicIdLostInRestart with topic IDs, a crash and a re-created topic (whose
    logs start without records)."""
    out = ALWAYS + (LEADERS_ELECTED, REPLICATED_ACKED)
    if bounds.purge_delay:
        out += (STAGED_BEFORE_PURGE,)
    if bounds.records and bounds.rf >= 2:
        out += (FOLLOWER_REPLICATED,)
    if bounds.records and bounds.rf >= 3:
        out += (FOLLOWERS_FETCH_TOGETHER,)
    if topic_ids and bounds.crashes and bounds.incarnations >= 2 and bounds.deletes:
        out += (TOPIC_ID_LOST,)
    return out
