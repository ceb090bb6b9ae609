"""The KRaft plane's properties of its features: the consumer group and its
coordinator, and CreatePartitions. Declared with the plane's others
(``properties.properties_for``) for the scenarios whose bounds have a group
(``members``) or CreatePartitions (``adds``).

always: GroupNoRecordSkipped, GroupNoStaleIncarnation, GroupAssignmentExact,
GroupCommitsPositions, CommittedOffsetsKnown; ReplicasDistinct (shared with the
ZooKeeper plane) with CreatePartitions.
quiescent: GroupReadsAll, GroupOwnsLivePartitions (settled, the group included).
sometimes: GroupAssignedRecreated, GroupOffsetsCommitted, GroupOwnsNewPartition, and
the CreatePartitions witnesses both planes share (ExpansionAfterDeletion,
ExpansionOfRecreated).
"""
from __future__ import annotations

from kmc.invariants.declare import declare
from kmc.invariants.logic import And, Not, Or, Rel, exists, forall, implies, variables
from kmc.model.kafka.kraft.group import COORDINATOR
from kmc.model.kafka.kraft.views import view
from kmc.model.kafka.lifecycle_properties import (
    Down, Plane, expansion_witnesses, recreates, replicas_distinct,
)

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

GroupSkipped = Rel("GroupSkipped", 3, ("inc", "partition", "offset"))
GroupStale = Rel("GroupStale", 3, ("member", "newest_inc", "read_inc"))
Assignment = Rel("Assignment", 2, ("member", "inc"))
Owns = Rel("Owns", 2, ("member", "partition"))
GroupPart = Rel("GroupPart", 1, ("partition",))
Committed = Rel("Committed", 2, ("partition", "offset"))
CoordinatorKnows = Rel("CoordinatorKnows", 1, ("partition",))
#: also read by the consumer's and the producer's settled properties (``properties``)
LeaderRecord = Rel("LeaderRecord", 3, ("inc", "partition", "offset"))
GroupRead = Rel("GroupRead", 3, ("inc", "partition", "offset"))
Presubscribed = Rel("Presubscribed", 3, ("inc", "partition", "offset"))
StoppedOn = Rel("StoppedOn", 1, ("partition",))
LivePart = Rel("LivePart", 2, ("inc", "partition"))
Busy = Rel("Busy", 1, ("client",))

b, c, g, i, m, n, o, p = variables("b c g i m n o p")

GROUP_NO_RECORD_SKIPPED = declare(
    "always", "GroupNoRecordSkipped",
    Not(exists((i, p, o), GroupSkipped(i, p, o))), view,
    "no member's position passes a record the group did not receive (the first "
    "incarnation's records written before the group subscribed excepted), whatever "
    "auto.offset.reset says",
    lambda m: f"a member's position passed offset {m['o']} of partition {m['p']} of "
              f"incarnation {m['i']} without the group receiving that record")

GROUP_NO_STALE_INCARNATION = declare(
    "always", "GroupNoStaleIncarnation",
    Not(exists((m, n, g), GroupStale(m, n, g))), view,
    "a member never receives records of an incarnation older than one it was already "
    "assigned partitions of",
    lambda v: f"member-{v['m']}, assigned partitions of incarnation {v['n']}, received a "
              f"record of the older incarnation {v['g']}")

GROUP_ASSIGNED_RECREATED = declare(
    "sometimes", "GroupAssignedRecreated",
    exists((m, i), And(Assignment(m, i), 2 <= i)), view,
    "the group rebalances onto the re-created topic")

GROUP_ASSIGNMENT_EXACT = declare(
    "always", "GroupAssignmentExact",
    And(forall((m, p), implies(Owns(m, p), GroupPart(p))),
        forall(p, implies(GroupPart(p), exists(m, Owns(m, p)))),
        forall((m, n, p), implies(And(Owns(m, p), Owns(n, p)), m == n))), view,
    "the members' assignments split the partitions of the count the group leader "
    "assigned from: each of them to exactly one member, and no other (RangeAssignor."
    "assign lays every partition of a subscribed topic out once among its members)")

GROUP_COMMITS_POSITIONS = declare(
    "always", "GroupCommitsPositions",
    forall((p, o), implies(Committed(p, o), 0 <= o)), view,
    "every committed offset is a position a member held (SubscriptionState.allConsumed "
    "commits only valid positions; OffsetAndMetadata refuses a negative offset)",
    lambda v: f"the offset {v['o']} is committed for partition {v['p']}")

GROUP_OFFSETS_COMMITTED = declare(
    "sometimes", "GroupOffsetsCommitted",
    exists((p, o), Committed(p, o)), view,
    "a member's position is committed to the group coordinator (the commit before a "
    "rebalance, ConsumerCoordinator.onJoinPrepare)")


def group_owns_new_partition(first: int):
    """GroupOwnsNewPartition: a member is assigned a partition beyond the ``first``
    ones the topic started with (the group followed a partition count change)."""
    return declare(
        "sometimes", "GroupOwnsNewPartition",
        exists((m, p), And(Owns(m, p), first <= p)), view,
        "a member is assigned a partition the topic did not have at first")


COMMITTED_OFFSETS_KNOWN = declare(
    "always", "CommittedOffsetsKnown",
    forall((p, o), implies(Committed(p, o), Or(
        CoordinatorKnows(p), exists(b, And(Down(b), b == COORDINATOR))))), view,
    "the group coordinator holds committed offsets only for partitions its broker's "
    "image knows: an OffsetCommit for another is refused (KafkaApis."
    "handleOffsetCommitRequest: UNKNOWN_TOPIC_OR_PARTITION), and a topic the image drops "
    "loses its offsets (BrokerMetadataPublisher.onMetadataUpdate -> "
    "GroupCoordinator.onPartitionsDeleted)",
    lambda v: f"the coordinator holds an offset ({v['o']}) for partition {v['p']}, "
              "which its broker's image does not know")


def group_reads_all(settled):
    """GroupReadsAll over ``settled``, a model's ``views.settled_view`` (it asks the
    model whether the group still has a step)."""
    return declare(
        "quiescent", "GroupReadsAll",
        forall((i, p, o), implies(LeaderRecord(i, p, o), Or(
            GroupRead(i, p, o), GroupSkipped(i, p, o), Presubscribed(i, p, o),
            StoppedOn(p), exists(c, And(Busy(c), c == "group"))))),
        settled,
        "settled, the group included (no member has a Metadata answer to take, a "
        "rebalance to make or a fetch to do): the group has received every record in "
        "the leader logs of the live incarnation, except what auto.offset.reset lets "
        "it pass (latest: the records written before it subscribed; none: a member "
        "stopped on the partition; a skip GroupNoRecordSkipped reports)",
        lambda v: f"nothing is left to do, yet the group never received the record at "
                  f"offset {v['o']} of partition {v['p']} (incarnation {v['i']})")


def group_owns_live_partitions(settled):
    """GroupOwnsLivePartitions over ``settled`` (``group_reads_all``)."""
    return declare(
        "quiescent", "GroupOwnsLivePartitions",
        forall((i, p), implies(LivePart(i, p), Or(
            exists(m, Owns(m, p)), exists(c, And(Busy(c), c == "group")),
            exists(b, Down(b))))),
        settled,
        "settled, the group included, every broker running: each partition of the live "
        "incarnation is assigned to a member (a partition count the group has not "
        "rebalanced to makes it rejoin: ConsumerCoordinator.rejoinNeededOrPending on a "
        "metadata snapshot that no longer matches; RangeAssignor lays out every "
        "partition)",
        lambda v: f"nothing is left to do, yet no member is assigned partition {v['p']} "
                  f"of incarnation {v['i']}")


#: the CreatePartitions properties both planes share (model.kafka.lifecycle_properties)
_PLANE = Plane(view=view, up="running")
EXPANSIONS = expansion_witnesses(_PLANE)
REPLICAS_DISTINCT = replicas_distinct(_PLANE)


def feature_properties(bounds, settled=None) -> tuple:
    """``(always, sometimes, quiescent)`` of the CreatePartitions and consumer group
    features (the quiescent ones only with ``settled``, a model's
    ``views.settled_view``)."""
    recreate = recreates(bounds)
    always, sometimes, quiescent = (), (), ()
    if bounds.members:
        always += (GROUP_NO_RECORD_SKIPPED, GROUP_NO_STALE_INCARNATION,
                   GROUP_ASSIGNMENT_EXACT, GROUP_COMMITS_POSITIONS,
                   COMMITTED_OFFSETS_KNOWN)
        if settled is not None:
            quiescent += (group_reads_all(settled), group_owns_live_partitions(settled))
        if recreate:
            sometimes += (GROUP_ASSIGNED_RECREATED,)
        if (bounds.deletes or bounds.adds) and bounds.reset != "none":
            # a count change makes the group rejoin, committing the positions it
            # holds (with reset none, a member without a committed offset holds none)
            sometimes += (GROUP_OFFSETS_COMMITTED,)
        grows = bounds.adds and bounds.target > bounds.partitions
        if grows or (recreate and bounds.recreate_partitions > bounds.partitions):
            sometimes += (group_owns_new_partition(bounds.partitions),)
    if bounds.adds:
        always += (REPLICAS_DISTINCT,)
    if bounds.adds and recreate:
        sometimes += EXPANSIONS
    return always, sometimes, quiescent
