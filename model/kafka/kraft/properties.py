"""The KRaft plane's invariants, as first-order formulas over the relational view
(``views``). The properties both control planes share are declared once in
``model.kafka.lifecycle_properties``; this module adds the plane's own.

always: NoStaleRead, NoStaleReplication, TopicIdUnique, NoWriteToDeletedTopic,
LeaderEpochFencing,
NoFencedLeader, MetadataMonotonic, NoUncommittedEffect, BudgetsRespected and
MetadataFlushedFirst (shared); with a consumer or a group ConsumerReadsCommitted.
quiescent (settled: no internal step left): StaleReplicasCleaned, DeletionCompletes,
AssignedReplicasHosted; with a consumer NoRecordSkipped (always), ConsumerNotStuck and
ConsumerReadsAll, with a producer ProducerNotStuck and ProducerFinishes (the last two
of each: settled, the client included). The consumer group's and CreatePartitions'
properties are declared in ``group_properties``.
liveness (``-p liveness=true``): BrokerFinishesStartup, ReplicasEventuallyHosted.
sometimes: the witnesses a scenario's bounds and flags make reachable
(``witnesses_for``).
The plane's own facts of its controller, quorum, publisher and logs are declared in
``protocol_properties`` and checked with these in every KRaft run.

TopicIdUnique stays here: on this plane it is stated over each image's name-to-ID map
(each broker's and the controller's); on ZooKeeper over znodes and the IDs in requests.
NameRecreated counts a committed TopicRecord of a later incarnation, not a znode.
"""
from __future__ import annotations

from kmc.invariants.declare import declare
from kmc.invariants.liveness import leads_to
from kmc.invariants.logic import And, Not, Or, Rel, exists, forall, implies, variables
from kmc.model.kafka import lifecycle_properties as lp
from kmc.model.kafka.kraft import protocol_properties as pp
from kmc.model.kafka.kraft import protocol_view as pv
from kmc.model.kafka.kraft.group_properties import (
    Busy, LeaderRecord, Presubscribed, feature_properties,
)
from kmc.model.kafka.kraft.views import settled_view, stuck_view, view
from kmc.model.kafka.lifecycle_properties import Assigned, Down, Hosts, Live

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

Served = Rel("Served", 2, ("asked_epoch", "serving_epoch"))
Applied = Rel("Applied", 3, ("broker", "offset", "epoch"))
Entry = Rel("Entry", 2, ("offset", "epoch"))
Published = Rel("Published", 3, ("broker", "offset", "highest"))
FencedLeader = Rel("FencedLeader", 2, ("broker", "inc"))
Named = Rel("Named", 3, ("source", "name", "topic_id"))
StaleMeta = Rel("StaleMeta", 2, ("broker", "topic_id"))
ConsumerEpochs = Rel("ConsumerEpochs", 2, ("last_seen", "validated"))
Stray = Rel("Stray", 2, ("broker", "topic_id"))
Stopped = Rel("Stopped", 1, ("reader",))
GroupStopped = Rel("GroupStopped", 1, ("member",))
Skipped = Rel("Skipped", 2, ("inc", "offset"))
Starting = Rel("Starting", 1, ("broker",))
Crashed = Rel("Crashed", 1, ("broker",))
Stuck = Rel("Stuck", 2, ("cached_inc", "live_inc"))
ConsumerRead = Rel("ConsumerRead", 2, ("inc", "offset"))
ProducerLeft = Rel("ProducerLeft", 1, ("records",))
Consumed = Rel("Consumed", 3, ("inc", "partition", "offset"))
InSyncEnd = Rel("InSyncEnd", 3, ("inc", "partition", "end"))

a, b, d, e, g, h, i, m, n, o, p, s, t, u, x = variables("a b d e g h i m n o p s t u x")

PLANE = lp.Plane(view=view, up="running")
#: the properties both planes share (model.kafka.lifecycle_properties), by name
SHARED = lp.lifecycle_properties(PLANE)

TOPIC_ID_UNIQUE = declare(
    "always", "TopicIdUnique",
    And(forall((s, n, t, u), implies(And(Named(s, n, t), Named(s, n, u)), t == u)),
        forall((s, d, n, x, t), implies(And(Named(s, n, t), Named(d, x, t)), n == x))),
    view,
    "in every image (each broker's and the controller's) a name maps to one topic ID, "
    "and an ID names one topic everywhere")

LEADER_EPOCH_FENCING = declare(
    "always", "LeaderEpochFencing",
    forall((a, s), implies(Served(a, s), a == s)), view,
    "a leader answers a fetch only at the leader epoch the fetcher names (KIP-320)",
    lambda m: f"a fetch naming leader epoch {m['a']} was answered by a leader at epoch "
              f"{m['s']}")

FETCH_ANSWERED = declare(
    "sometimes", "FetchAnswered",
    exists((a, s), Served(a, s)), view,
    "a leader answers a fetch of a follower or the consumer (ReplicaManager.fetchMessages "
    "-> Partition.fetchRecords): the history LeaderEpochFencing is stated over is not "
    "empty; declared with rf >= 2 or a consumer")

NO_FENCED_LEADER = declare(
    "always", "NoFencedLeader",
    Not(exists((b, i), FencedLeader(b, i))), view,
    "the committed metadata never names a fenced broker leader of a partition",
    lambda m: f"the committed metadata names fenced broker-{m['b']} leader of "
              f"incarnation {m['i']}")

METADATA_MONOTONIC = declare(
    "always", "MetadataMonotonic",
    forall((b, o, h), implies(Published(b, o, h), h == o)), view,
    "a broker's published image never goes back to an older offset: it is at the "
    "highest offset the broker ever published",
    lambda m: f"broker-{m['b']} published an image at offset {m['o']} after one at "
              f"offset {m['h']}")

NO_UNCOMMITTED_EFFECT = declare(
    "always", "NoUncommittedEffect",
    forall((b, o, e), implies(Applied(b, o, e), Entry(o, e))), view,
    "no broker holds or acts on a metadata batch the quorum lost, i.e. one that was "
    "never committed",
    lambda m: f"broker-{m['b']} applied the batch at offset {m['o']} of epoch {m['e']}, "
              "which the controller quorum lost (it was never committed)")

DELETION_COMPLETES = lp.deletion_completes(
    PLANE, "settled: every metadata record is committed and no running broker hosts a "
           "partition of a deleted topic",
    extra=forall((b, p, i), implies(Hosts(b, p, i), Live(i))))

NAME_RECREATED = declare(
    "sometimes", "NameRecreated",
    exists(i, And(Live(i), 2 <= i)), view,
    "the topic name is created again after a deletion, and committed")

CONSUMER_STOPPED = declare(
    "sometimes", "ConsumerStoppedByError",
    Or(exists(x, Stopped(x)), exists(m, GroupStopped(m))), view,
    "the consumer (or a group member) stops with the error auto.offset.reset=none "
    "raises instead of choosing a position (NoOffsetForPartitionException, "
    "LogTruncationException)")

BROKER_FENCED = declare(
    "sometimes", "RunningBrokerFenced",
    exists((b, o), pp.BrokerAt(b, 1, o, 1)), pp.protocol_view,
    "a running broker is fenced in the committed metadata: its heartbeats stopped "
    "reaching the controller for a lease (BrokerHeartbeatManager; "
    "ReplicationControlManager.maybeFenceOneStaleBroker), or it registered again and is "
    "not caught up yet")

CRASH_WITH_DELETE_DIR = declare(
    "sometimes", "CrashWithDeleteDir",
    exists(b, pv.CrashedWithDelete(b)), pp.protocol_view,
    "a broker goes down while a log of a removed topic is renamed -delete and not yet "
    "removed (ReplicaManager.applyDelta -> LogManager.asyncDelete renames it; the "
    "kafka-delete-logs task removes it later): its restart finds the directory "
    "(LogManager.loadLog, the DeleteDirSuffix branch)")

STALE_METADATA_SERVED = declare(
    "sometimes", "StaleMetadataServed",
    exists((b, t), StaleMeta(b, t)), view,
    "a lagging broker answers a Metadata request with a topic already deleted")

LOWER_EPOCH_ACCEPTED = declare(
    "sometimes", "LowerEpochAccepted",
    exists((e, h), And(ConsumerEpochs(e, h), 0 <= e, e < h)), view,
    "the consumer takes the re-created topic's metadata at a leader epoch below the one "
    "it last fetched at: the topic ID changed, or the consumer lost it with an "
    "UNKNOWN_TOPIC_OR_PARTITION answer (Metadata.updateLatestMetadata, KAFKA-12257 and "
    "KAFKA-13488; clients up to 2.8.1 compare epochs only and never do)")

FAILOVER_MID_DELETION = lp.failover_mid_deletion(
    PLANE, "the controller fails over while a RemoveTopicRecord is not yet committed")

RESTART_WITH_STRAY_LOG = declare(
    "sometimes", "RestartWithStrayLog",
    exists((b, t), Stray(b, t)), view,
    "a restarting broker finds a stray log on disk")

NO_RECORD_SKIPPED = declare(
    "always", "NoRecordSkipped",
    Not(exists((i, o), Skipped(i, o))), view,
    "the consumer's position never passes a record it did not receive (records written "
    "before it subscribed excepted), whatever auto.offset.reset says",
    lambda m: f"the consumer's position passed offset {m['o']} of incarnation {m['i']} "
              "without receiving that record")

CONSUMER_READS_COMMITTED = declare(
    "always", "ConsumerReadsCommitted",
    forall((i, p, o, n), implies(And(Consumed(i, p, o), InSyncEnd(i, p, n)), o < n)),
    view,
    "the consumer and the group read only committed records: every record they "
    "received of the live incarnation is held by every in-sync replica the committed "
    "metadata names (FetchIsolation.HIGH_WATERMARK for a consumer's Fetch; the ISR "
    "only shrinks and leaders are elected from it, so a committed record stays)",
    lambda m: f"a consumer received the record at offset {m['o']} of partition "
              f"{m['p']} (incarnation {m['i']}, live), but an in-sync replica's log "
              f"ends at {m['n']}")


def client_not_stuck(rule: str, client: str):
    """ConsumerNotStuck / ProducerNotStuck for the clients' metadata rule ``rule``
    (views.stuck_view)."""
    name = client.capitalize()
    return declare(
        "quiescent", f"{name}NotStuck",
        Not(exists((a, g), Stuck(a, g))), stuck_view(rule, client),
        f"settled with the topic live: a Metadata answer from some running broker would "
        f"point the {client} at the live incarnation (it is never left on a deleted one)",
        lambda m, c=client: f"nothing is left to do and incarnation {m['g']} of the topic "
                            f"is live, yet the {c} (holding incarnation {m['a']}; 0: "
                            "none) rejects every broker's Metadata answer for it")


def clients_finish(bounds, settled) -> tuple:
    """ConsumerReadsAll and ProducerFinishes for the clients ``bounds`` have, over
    ``settled``, the model's ``views.settled_view`` (it asks the model whether a client
    still has a step)."""
    bd, out = bounds, ()
    if bd.consumer:
        out += (declare(
            "quiescent", "ConsumerReadsAll",
            forall((i, o), implies(LeaderRecord(i, 0, o), Or(
                ConsumerRead(i, o), Skipped(i, o), Presubscribed(i, 0, o),
                exists(x, Stopped(x)), exists(u, And(Busy(u), u == "consumer"))))),
            settled,
            "settled, the consumer included (no Metadata answer to take, no fetch to "
            "do): it has received every record in the live incarnation's leader log, "
            "except what auto.offset.reset lets it pass (latest: the records written "
            "before it subscribed; none: it stopped with the error; a skip "
            "NoRecordSkipped reports)",
            lambda v: f"nothing is left to do, yet the consumer never received the "
                      f"record at offset {v['o']} of incarnation {v['i']}"),)
    if bd.records:
        out += (declare(
            "quiescent", "ProducerFinishes",
            forall(n, implies(ProducerLeft(n), Or(
                exists(u, And(Busy(u), u == "producer")), Not(exists(i, Live(i)))))),
            settled,
            "settled, the producer included (no Metadata answer to take, no record it "
            "can send): it has written its whole script, or the topic is gone (its "
            "sends end with UNKNOWN_TOPIC_OR_PARTITION once delivery.timeout.ms runs "
            "out)",
            lambda v: f"nothing is left to do and the topic is live, yet the producer "
                      f"still has {v['n']} record(s) it cannot send"),)
    return out


BROKER_FINISHES_STARTUP = leads_to(
    "BrokerFinishesStartup", exists(b, Starting(b)),
    Or(Not(exists(b, Starting(b))), exists(d, Crashed(d))), view=view,
    description="a restarted broker eventually finishes starting up and runs, unless a "
                "broker crashes (again); every step the cluster takes by itself is "
                "weakly fair")


UNHOSTED = exists((b, p, i), And(Assigned(b, p, i), Not(Hosts(b, p, i))))

REPLICAS_EVENTUALLY_HOSTED = leads_to(
    "ReplicasEventuallyHosted", UNHOSTED, Or(Not(UNHOSTED), exists(d, Down(d))), view=view,
    description="a replica the committed metadata assigns is eventually hosted by its "
                "broker with the right topic ID, unless a broker is not running")


ALWAYS = (SHARED["NoStaleRead"], SHARED["NoStaleReplication"], TOPIC_ID_UNIQUE,
          SHARED["NoWriteToDeletedTopic"], LEADER_EPOCH_FENCING, NO_FENCED_LEADER,
          METADATA_MONOTONIC, NO_UNCOMMITTED_EFFECT, SHARED["BudgetsRespected"],
          SHARED["MetadataFlushedFirst"])
QUIESCENT = (SHARED["StaleReplicasCleaned"], DELETION_COMPLETES,
             SHARED["AssignedReplicasHosted"])


def witnesses_for(bounds, flags) -> tuple:
    """The witnesses a scenario's bounds and variant flags make reachable in principle:
    with a consumer or a group whose ``auto.offset.reset`` is ``none``, its error
    (nothing is committed when the story starts, so a first fetch raises it); with
    missed heartbeats, a running broker fenced; with a crash and a deletion, a broker
    down with a ``-delete`` directory; with a follower (rf >= 2) or a consumer, an
    answered fetch; with a consumer that fetches (not stopped by ``none`` at its first
    fetch), a re-created topic whose first incarnation starts above leader epoch 0 (the
    new one starts at 0) and a client rule that keeps topic IDs, the consumer taking
    the lower epoch."""
    readers = bounds.consumer or bounds.members
    stopped = (CONSUMER_STOPPED,) if readers and bounds.reset == "none" else ()
    fenced = (BROKER_FENCED,) if bounds.fences else ()
    delete_dir = (CRASH_WITH_DELETE_DIR,) if bounds.crashes and bounds.deletes else ()
    answered = (FETCH_ANSWERED,) if bounds.rf >= 2 or bounds.consumer else ()
    lower = bounds.consumer and bounds.reset != "none" and lp.recreates(bounds) and \
        bounds.leader_epoch >= 1 and flags.client_rule != "epoch"
    return lp.witnesses_for(bounds, NAME_RECREATED, SHARED["StaleFetchAttempted"],
                            FAILOVER_MID_DELETION, RESTART_WITH_STRAY_LOG,
                            stale_meta=STALE_METADATA_SERVED) + stopped + fenced + \
        delete_dir + answered + ((LOWER_EPOCH_ACCEPTED,) if lower else ())


def properties_for(bounds, flags, model=None) -> tuple:
    """The properties of a KRaft run with these bounds and variant flags; ``model``
    (the run's model) adds those whose view asks it for steps."""
    consumer = (NO_RECORD_SKIPPED, client_not_stuck(flags.client_rule, "consumer")) \
        if bounds.consumer else ()
    if bounds.records:
        consumer += (client_not_stuck(flags.client_rule, "producer"),)
    readers = (CONSUMER_READS_COMMITTED,) if bounds.consumer or bounds.members else ()
    live = ()
    if bounds.liveness:
        live = ((BROKER_FINISHES_STARTUP,) if bounds.crashes else ()) + (
            REPLICAS_EVENTUALLY_HOSTED,)
    settled = None if model is None else settled_view(model)
    always, sometimes, quiescent = feature_properties(bounds, settled)
    if settled is not None:
        quiescent = clients_finish(bounds, settled) + quiescent
    return (ALWAYS + pp.ALWAYS + consumer[:1] + readers + always + QUIESCENT + pp.QUIESCENT
            + consumer[1:] + quiescent
            + witnesses_for(bounds, flags) + sometimes + live + pp.liveness_for(bounds))
