"""A consumer group on the topic: a simplified classic group (JoinGroup / SyncGroup with
the eager range assignor, the 3.9 default) with one or two members and a group
coordinator on broker ``COORDINATOR``.

Steps (all inputs: the clients act when the application polls):

- ``member-refresh``: a Metadata request of a member, answered from one broker's image
  (KafkaApis.handleTopicMetadataRequest -> KRaftMetadataCache; it may lag). The answer
  replaces the member's view of the topic by the clients' rule (Metadata.java
  updateLatestMetadata; ``model.kafka.clients.accepts_view``).
- ``group-rebalance``: the group leader's metadata shows another partition count than
  the one its last assignment was computed from (ConsumerCoordinator.
  rejoinNeededOrPending: ``assignmentSnapshot`` against ``metadataSnapshot``; the
  snapshot is the partitions per topic, MetadataSnapshot.partitionsPerTopic, and only
  the leader keeps an assignment snapshot: ConsumerCoordinator.onLeaderElected), or the
  group has never joined. Every member commits its positions first (onJoinPrepare ->
  maybeAutoCommitOffsetsSync, enable.auto.commit's default), revokes everything
  (eager), and the leader assigns partitions 0..n-1 of its own metadata with the range
  assignor (RangeAssignor); positions are dropped and looked up again.
- ``member-fetch``: a member fetches one assigned partition from the leader its
  metadata names, with the leader epoch and topic ID (as ``clients.consumer_fetch``).
  Without a position the member asks the coordinator for the committed offset
  (OffsetFetch, ConsumerCoordinator.refreshCommittedOffsetsIfNeeded, from 3.7
  initWithCommittedOffsetsIfNeeded) and its leader epoch, which raises the member's
  last seen epoch of the partition and is validated like a position
  (ConsumerUtils.refreshCommittedOffsets); without one, with one beyond the log end
  (OFFSET_OUT_OF_RANGE) or with an undefined validation, ``auto.offset.reset``
  decides (SubscriptionState.requestOffsetReset; ``none`` stops the member on that
  partition). KIP-320 validation after a leader change as in ``clients``.

The coordinator (GroupCoordinator / GroupMetadataManager on the broker leading the
group's __consumer_offsets partition) keeps committed offsets per topic *name* and
partition (OffsetCommitRequest has no topic ID in 3.9). It accepts an OffsetCommit
for a partition its own image knows by name, else UNKNOWN_TOPIC_OR_PARTITION
(KafkaApis.handleOffsetCommitRequest: ``metadataCache.contains(topic)``,
``getPartitionInfo``), and deletes the committed offsets of a topic's partitions when
its image drops the topic (BrokerMetadataPublisher.onMetadataUpdate ->
groupCoordinator.onPartitionsDeleted with the deleted topic's name and partitions).

Simplifications, each with its reason (docs/model-kraft.md):
- a rebalance is one step (JoinGroup, SyncGroup and the revocation commit): the
  stories here hinge on which metadata the leader assigns from and which positions
  are committed, not on the protocol's round trips;
- the periodic auto-commit is not a step of its own: a commit between rebalances
  writes the same positions by name as the rebalance's commit does;
- the coordinator stays on broker 1 and OffsetFetch is answered even while broker 1
  is not running (no scenario with a group crashes a broker);
- a member's metadata is one view of the topic, replaced or kept whole by the
  answer's topic ID and its partitions' leader epochs (Metadata.java decides per
  partition; with one topic whose partitions change together the outcome is the same);
  a partition whose last seen epoch a committed one raised shows as no leader at that
  epoch; an UNKNOWN_TOPIC_OR_PARTITION answer empties the view, its epochs included
  (Metadata.java keeps lastSeenLeaderEpochs: the 2.8.0-2.8.1 and 3.0.0 client lines
  would refuse a lower epoch after it, which the model's member takes);
- a position's leader epoch is the leader's epoch at the fetch that set it; Kafka's is
  the epoch of the last record batch read (CompletedFetch: partitionLeaderEpoch): the
  same at the group scenarios' default bounds, where no partition changes its leader
  within an incarnation; with ``-p fences`` or ``-p crashes`` the model's may be newer.
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka import clients as cl
from kmc.model.kafka.canon import keyed_get, map_del, map_get, map_put, replace_at, set_add
from kmc.model.kafka.clients import range_assign
from kmc.model.kafka.kraft import clients
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft.state import RUNNING, TOPIC, Group, Member, inc_of

COORDINATOR = 1
STOPPED = -2


def initial(members: int) -> Group:
    return Group(0, -1, tuple(Member((), (), 0) for _ in range(members)), (), (), (), ())


def answer(img):
    """A Metadata answer for the topic from ``img``: None (UNKNOWN_TOPIC_OR_PARTITION)
    or ``(topic_id, ((leader, leader_epoch), ...))``."""
    t = im.topic_by_name(img, TOPIC)
    if t is None:
        return None
    return (t.topic_id, tuple((p.leader, p.leader_epoch) for p in t.parts))


def refresh(model, w, m: int, b: int):
    """Member ``m``'s Metadata request answered by broker ``b`` from its image; the
    answer replaces the member's view by the client library's rule
    (model.kafka.clients.accepts_view). KIP-4 "Metadata"; KafkaApis.scala
    ``handleTopicMetadataRequest``; clients/Metadata.java ``updateLatestMetadata``."""
    ans = answer(w.brokers[b - 1].image)
    g = w.group
    mem = g.members[m]
    if ans is None:
        meta = ()
    elif cl.accepts_view(mem.meta, ans, model.flags.client_rule):
        meta = ans
    else:
        return w
    if meta == mem.meta:
        return w
    return w._replace(group=g._replace(members=replace_at(g.members, m, mem._replace(
        meta=meta))))


def _count(mem) -> int:
    return len(mem.meta[1]) if mem.meta else 0


def needs_rebalance(g) -> bool:
    n = _count(g.members[0])
    return n > 0 if g.gen == 0 else n != g.snapshot


def _commit_ok(w, p: int) -> bool:
    """KafkaApis.handleOffsetCommitRequest on the coordinator: the partition must be in
    its image, looked up by name."""
    br = w.brokers[COORDINATOR - 1]
    t = None if br.image is None else im.topic_by_name(br.image, TOPIC)
    return br.status == RUNNING and t is not None and p < len(t.parts)


def rebalance(model, w):
    """The group rebalances (eager, classic protocol: no KIP section): every member
    commits its positions, the leader assigns partitions 0..n-1 of its metadata by
    ranges, positions are dropped. consumer/internals/ConsumerCoordinator.java
    ``rejoinNeededOrPending``, ``onJoinPrepare``, ``onLeaderElected``;
    consumer/RangeAssignor.java; KafkaApis.scala ``handleOffsetCommitRequest``."""
    g = w.group
    committed, epochs = g.committed, g.committed_epochs
    for mem in g.members:
        for p, pos, _l, e in mem.pos:
            if pos >= 0 and _commit_ok(w, p):
                committed = map_put(committed, p, pos)
                epochs = map_put(epochs, p, e) if e >= 0 else map_del(epochs, p)
    lead = g.members[0]
    n = _count(lead)
    inc = inc_of(lead.meta[0]) if lead.meta else 0
    parts = range_assign(range(n), len(g.members))
    members = tuple(mem._replace(pos=tuple((p, -1, -1, -1) for p in mine),
                                 newest=max(mem.newest, inc))
                    for mem, mine in zip(g.members, parts))
    return w._replace(group=g._replace(gen=1, snapshot=n, members=members,
                                       committed=committed, committed_epochs=epochs))


def fetch(model, w, m: int, p: int):
    """Member ``m`` fetches assigned partition ``p`` (see the module docstring): KIP-516
    "Fetch", KIP-320 validation; ConsumerCoordinator.java
    ``refreshCommittedOffsetsIfNeeded``; SubscriptionState.java ``requestOffsetReset``,
    ``maybeValidatePositionForCurrentLeader``; ReplicaManager.scala ``readFromLog``."""
    g, f, bd = w.group, model.flags, model.bounds
    mem = g.members[m]
    entry = keyed_get(mem.pos, p)
    if entry is None or entry[1] == STOPPED or not mem.meta or p >= len(mem.meta[1]):
        return w
    tid = mem.meta[0]
    leader, le = mem.meta[1][p]
    c = map_get(g.committed, p)
    ce = map_get(g.committed_epochs, p)
    if entry[1] < 0 and c is not None and ce is not None:
        # the committed offset and its epoch (ConsumerUtils.refreshCommittedOffsets): the
        # epoch first raises the last seen one (Metadata.updateLastSeenEpochIfNewer);
        # above the cached partition's epoch no leader is current (Metadata.
        # currentLeader), so nothing is fetched until a Metadata answer of that epoch or
        # of another topic ID is taken; else the offset is a position to validate at
        # that epoch (SubscriptionState.seekUnvalidated), as the fetch below does
        if ce > le:
            view = (tid, replace_at(mem.meta[1], p, (clients.NO_LEADER, ce)))
            g = g._replace(members=replace_at(g.members, m, mem._replace(meta=view)))
            return _put_entry(w, g, m, (p, c, clients.NO_LEADER, ce))
        entry, c = (p, c, clients.NO_LEADER, ce), None
    log, _reached = clients.serve(model, w, leader, p, tid, le,
                                  f.topic_ids and f.client_fetch_ids)
    if log is None:
        return w
    lh = bk.hosted_of(w.brokers[leader - 1], p)
    end = len(log.records)
    hw = clients.fetchable_end(model, w, leader, p, log)
    # a member validates with the leader epoch of its last fetch (the consumer: of the
    # last record it received), which is the same epoch whenever that fetch read records
    pos = cl.start_offset(entry[1], entry[3], (entry[2], entry[3]), (leader, le),
                          lh.leader_epoch, end, hw, bd.reset, -1 if c is None else c)
    if pos is None:
        return _put_entry(w, g, m, (p, STOPPED, leader, le))
    served = inc_of(log.topic_id)
    before = bd.initial_records if served == 1 and p < bd.partitions else 0
    consumed, skipped, stale = g.consumed, g.skipped, g.stale
    for o in range(before, pos):
        if (served, p, o) not in consumed:
            skipped = set_add(skipped, (served, p, o))
    ghost = w.ghost
    upto = max(pos, hw)  # records below the high watermark only
    for o in range(pos, upto):
        rec = log.records[o]
        consumed = set_add(consumed, (served, p, o))
        ghost = ghost._replace(reads=set_add(ghost.reads, (0, inc_of(tid), rec)))
        if rec < mem.newest:
            stale = set_add(stale, (m, mem.newest, rec))
    g = g._replace(consumed=consumed, skipped=skipped, stale=stale)
    return _put_entry(w._replace(ghost=ghost), g, m, (p, upto, leader, le))


def _put_entry(w, g, m, entry):
    mem = g.members[m]
    pos = tuple(entry if x[0] == entry[0] else x for x in mem.pos)
    return w._replace(group=g._replace(members=replace_at(g.members, m, mem._replace(
        pos=pos))))


def on_partitions_deleted(model, w, b: int, old, new):
    """BrokerMetadataPublisher.onMetadataUpdate on the coordinator's broker: the
    committed offsets of a removed topic's partitions (by name) are deleted
    (groupCoordinator.onPartitionsDeleted)."""
    g = w.group
    if g is None or b != COORDINATOR or not model.flags.group_offsets_deleted:
        return w
    committed, epochs = g.committed, g.committed_epochs
    for t in old.topics:
        if im.topic_by_id(new, t.topic_id) is None:
            for p in range(len(t.parts)):
                committed, epochs = map_del(committed, p), map_del(epochs, p)
    if committed == g.committed:
        return w
    return w._replace(group=g._replace(committed=committed, committed_epochs=epochs))


def actions(model, w) -> list:
    g = w.group
    out = []
    for m in range(len(g.members)):
        for b, br in enumerate(w.brokers, 1):
            if br.status == RUNNING:
                a = ("member-refresh", m, b)
                t = model.next_state(w, a)
                if t is not w:
                    out.append(a)
                    model.keep(a, t)
    if needs_rebalance(g):
        out.append(("group-rebalance",))
    for m, mem in enumerate(g.members):
        for p, _pos, _l, _e in mem.pos:
            model.probe(out, ("member-fetch", m, p), w)
    return out


def format_action(action) -> str:
    k = action[0]
    if k == "member-refresh":
        return f"member-{action[1]}: Metadata answered by broker-{action[2]}"
    if k == "group-rebalance":
        return "the group rebalances (commit, join, range assignment)"
    return f"member-{action[1]} fetches {TOPIC}-{action[2]} from the leader it knows"
