"""Invariants of the KRaft plane's fixed protocol: the controller's records, the Raft
quorum's log, the brokers' images and what their ReplicaManager and LogManager hold, and
what a settled cluster looks like. Each is a fact of Kafka's code, cited next to it
(docs/invariants.md, "The KRaft plane's own facts").

Their relations come from ``protocol_view``, built from the state alone (as
``views.view`` is). The metadata log is read with a replay of its own (``_replay``),
written from the record schemas and Kafka's replay rules, so a broker's image can be
compared with what its log prefix says.

always: PartitionChangeEpochs, NewPartitionRegistration, LeaderInIsr, FencedLeaveIsr,
BrokerEpochs, RaftLogSound, ImageIsReplay, HostedMatchesImage, NoStrayWhileRunning.
quiescent (settled: no internal step left): SettledConverged.
liveness (``-p liveness=true``, with crashes): DeleteDirsEventuallyRemoved (and
deletions), MetadataFileEventuallyFlushed.
"""
from __future__ import annotations

from functools import lru_cache

from kmc.invariants.declare import declare
from kmc.invariants.fieldview import FieldView
from kmc.invariants.liveness import leads_to
from kmc.invariants.logic import And, Not, Or, Rel, exists, forall, implies, variables
from kmc.model.kafka.kraft.state import DOWN, HALTED, RUNNING, inc_of

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

NO_LEADER = -1

Change = Rel("Change", 7, ("offset", "le_before", "le_after", "pe_before", "pe_after",
                           "moved", "isr_changed"))
Created = Rel("Created", 4, ("offset", "leader_epoch", "partition_epoch", "first_isr"))
PartShape = Rel("PartShape", 5, ("inc", "partition", "leader", "leader_in_isr",
                                 "isr_ok"))
FencedInIsr = Rel("FencedInIsr", 4, ("inc", "partition", "broker", "isr_size"))
Registration = Rel("Registration", 4, ("offset", "broker", "epoch", "previous"))
RegChange = Rel("RegChange", 3, ("broker", "epoch", "current"))
RaftEntry = Rel("RaftEntry", 4, ("offset", "epoch", "previous", "leader_change"))
RaftState = Rel("RaftState", 6, ("epoch", "hwm", "length", "leader_held",
                                 "majority_held", "majority_epoch"))
ImageOf = Rel("ImageOf", 4, ("broker", "offset", "fetched", "replay_ok"))
HostedAt = Rel("HostedAt", 6, ("broker", "partition", "inc", "leader", "leader_epoch",
                               "log_ok"))
ImagePart = Rel("ImagePart", 5, ("broker", "partition", "inc", "leader",
                                 "leader_epoch"))
StrayOnDisk = Rel("StrayOnDisk", 3, ("broker", "partition", "inc"))
BrokerAt = Rel("BrokerAt", 4, ("broker", "running", "offset", "fenced"))
Committed = Rel("Committed", 1, ("hwm",))
Leaderless = Rel("Leaderless", 2, ("inc", "partition"))
NotRunning = Rel("NotRunning", 1, ("broker",))
PendingDelete = Rel("PendingDelete", 1, ("broker",))
CrashedWithDelete = Rel("CrashedWithDelete", 1, ("broker",))
Unflushed = Rel("Unflushed", 1, ("broker",))

(b, c, d, e, f, g, h, i, k, l, m, n, o, p, r, s,
 t, u, x, y) = variables("b c d e f g h i k l m n o p r s t u x y")


# ---- the metadata log, replayed -------------------------------------------------------
def _replay(state: dict, rec) -> None:
    """One record applied to ``{"topics": {tid: (name, {p: part})}, "brokers": {b:
    (epoch, fenced)}}``: TopicsDelta.replay (TopicRecord, PartitionRecord,
    PartitionChangeRecord: the fields it carries replace the partition's;
    RemoveTopicRecord) and ClusterDelta.replay (RegisterBrokerRecord,
    BrokerRegistrationChangeRecord)."""
    k_ = rec.kind
    topics = state["topics"]
    if k_ == "TopicRecord":
        topics[rec.topic_id] = (rec.name, {})
    elif k_ == "PartitionRecord":
        topics[rec.topic_id][1][rec.partition] = (
            rec.replicas, rec.isr, rec.leader, rec.leader_epoch, rec.partition_epoch)
    elif k_ == "PartitionChangeRecord":
        parts = topics[rec.topic_id][1]
        old = parts[rec.partition]
        parts[rec.partition] = (old[0], rec.isr, rec.leader, rec.leader_epoch,
                                rec.partition_epoch)
    elif k_ == "RemoveTopicRecord":
        topics.pop(rec.topic_id, None)
    elif k_ in ("RegisterBrokerRecord", "BrokerRegistrationChangeRecord"):
        state["brokers"][rec.broker] = (rec.broker_epoch, rec.fenced)


def _canon(state: dict) -> tuple:
    """A replayed state in the image's shape: topics by ID with their partitions in
    order, registrations by broker."""
    topics = tuple(sorted((tid, name, tuple(parts[q] for q in sorted(parts)))
                          for tid, (name, parts) in state["topics"].items()))
    return topics, tuple(sorted((bb, ep, fe) for bb, (ep, fe) in state["brokers"].items()))


def _image_canon(img) -> tuple:
    return (tuple((t.topic_id, t.name, tuple(tuple(pt) for pt in t.parts))
                  for t in img.topics), tuple(tuple(x) for x in img.brokers))


@lru_cache(maxsize=1 << 14)
def _log_facts(log: tuple) -> dict:
    """The relations a metadata log defines, and the replayed state after each of its
    prefixes (``prefixes[o]``: the first ``o`` batches)."""
    state = {"topics": {}, "brokers": {}}
    change, created, reg, regchange, entries, prefixes = (set(), set(), set(), set(),
                                                          set(), [_canon(state)])
    prev_epoch = 0
    for o, entry in enumerate(log):
        entries.add((o, entry.epoch, prev_epoch if o else entry.epoch,
                     int(bool(entry.records)
                         and entry.records[0].kind == "LeaderChangeMessage")))
        prev_epoch = entry.epoch
        for rec in entry.records:
            k_ = rec.kind
            if k_ == "PartitionChangeRecord" and rec.topic_id in state["topics"]:
                old = state["topics"][rec.topic_id][1].get(rec.partition)
                if old is not None:
                    change.add((o, old[3], rec.leader_epoch, old[4], rec.partition_epoch,
                                int(rec.leader != old[2]), int(rec.isr != old[1])))
            elif k_ == "PartitionRecord" and o > 0:
                created.add((o, rec.leader_epoch, rec.partition_epoch,
                             int(bool(rec.isr) and rec.leader == rec.isr[0])))
            elif k_ == "RegisterBrokerRecord" and o > 0:
                reg.add((o, rec.broker, rec.broker_epoch,
                         state["brokers"].get(rec.broker, (-1, True))[0]))
            elif k_ == "BrokerRegistrationChangeRecord":
                regchange.add((rec.broker, rec.broker_epoch,
                               state["brokers"].get(rec.broker, (-1, True))[0]))
            _replay(state, rec)
        prefixes.append(_canon(state))
    shape, fenced_in_isr = set(), set()
    brokers = state["brokers"]
    for tid, _name, parts in prefixes[-1][0]:
        for q, (replicas, isr, leader, _le, _pe) in enumerate(parts):
            shape.add((inc_of(tid), q, leader, int(leader in isr),
                       int(bool(isr) and set(isr) <= set(replicas))))
            fenced_in_isr.update((inc_of(tid), q, r, len(isr)) for r in isr
                                 if brokers.get(r, (0, True))[1])
    return {"Change": change, "Created": created, "Registration": reg,
            "RegChange": regchange, "RaftEntry": entries, "PartShape": shape,
            "FencedInIsr": fenced_in_isr,
            "prefixes": tuple(prefixes)}


def _bindings(z: dict) -> str:
    return ", ".join(f"{k_}={v_}" for k_, v_ in sorted(z.items()))


def _protocol_relations(w) -> dict:
    """The relations, from the quorum and the brokers alone (``protocol_view``):

    - ``Change(offset, le_before, le_after, pe_before, pe_after, moved, isr_changed)``:
      each PartitionChangeRecord of the active controller's log against the partition
      it changes (``moved``, ``isr_changed``: 1 if the leader / the ISR differs).
    - ``Created(offset, leader_epoch, partition_epoch, first_isr)``: PartitionRecords
      written after the initial batch (CreateTopics, CreatePartitions); ``first_isr``: 1
      if the leader is the ISR's first member.
    - ``PartShape(inc, partition, leader, leader_in_isr, isr_ok)``: the partitions of the
      active controller's state (``isr_ok``: non-empty and within the replicas);
      ``FencedInIsr(inc, partition, broker, isr_size)``: fenced (or unregistered)
      brokers in an ISR of that state.
    - ``Registration(offset, broker, epoch, previous)``: RegisterBrokerRecords after the
      initial batch, with the broker's epoch before them; ``RegChange(broker, epoch,
      current)``: BrokerRegistrationChangeRecords with the broker's current epoch.
    - ``RaftEntry(offset, epoch, previous_epoch, leader_change)``: the leader's log
      batches; ``RaftState(epoch, hwm, length, leader_held, majority_held,
      majority_epoch)`` (``majority_epoch``: the epoch of the last batch a majority holds).
    - ``ImageOf(broker, offset, fetched, replay_ok)``: a published image, its broker's
      count of fetched batches, and whether it is what its log prefix replays to
      (1 also when the broker's batches differ from the leader's: a lost batch).
    - ``HostedAt(broker, partition, inc, leader, leader_epoch, log_ok)``: partitions a
      running broker hosts (``log_ok``: its log on disk has the same topic ID);
      ``ImagePart(broker, partition, inc, leader, leader_epoch)``: the partitions a
      running broker's image lists it a replica of.
    - ``StrayOnDisk(broker, partition, inc)``: logs of a running broker its own image
      does not assign to it.
    - ``BrokerAt(broker, running, offset, fenced)``: every broker, its image offset
      (-1 without one) and whether the committed metadata fences it;
      ``Committed(hwm)``; ``Leaderless(inc, partition)``: committed partitions without a
      leader; ``NotRunning(broker)``; ``PendingDelete(broker)``: a running broker
      with a ``-delete`` directory on disk; ``CrashedWithDelete(broker)``: a broker
      down after a crash with one; ``Unflushed(broker)``: a broker that is up
      (not down or halted) with a log whose partition.metadata is not flushed.
    """
    q = w.quorum
    facts = _log_facts(q.log)
    held = sorted(q.repl, reverse=True)[len(q.repl) // 2]
    committed = _log_facts(q.log[:q.hwm])["prefixes"][-1]
    fenced = {bb: fe for bb, _ep, fe in committed[1]}
    image_of, hosted_at, image_part, stray, broker_at, down = (set() for _ in range(6))
    pending = {(bn,) for bn, br in enumerate(w.brokers, 1)
               if br.deleting and br.status == RUNNING}
    crashed_with = {(bn,) for bn, br in enumerate(w.brokers, 1)
                    if br.deleting and br.status == DOWN}
    unflushed = {(bn,) for bn, br in enumerate(w.brokers, 1)
                 if br.status not in (DOWN, HALTED) and not all(x.flushed for x in br.logs)}
    leaderless = {(inc_of(tid), pn) for tid, _nm, parts in committed[0]
                  for pn, part in enumerate(parts) if part[2] == NO_LEADER}
    for bn, br in enumerate(w.brokers, 1):
        running = br.status == RUNNING
        if not running:
            down.add((bn,))
        img = br.image
        broker_at.add((bn, int(running), -1 if img is None else img.offset,
                       int(fenced.get(bn, True))))
        if img is None:
            continue
        o = img.offset
        same = tuple(br.fetched[:o]) == tuple(x.epoch for x in q.log[:o])
        ok = not same or o > len(q.log) or facts["prefixes"][o] == _image_canon(img)
        image_of.add((bn, o, len(br.fetched), int(ok)))
        if not running:
            continue
        mine = {}
        for t in img.topics:
            for pn, part in enumerate(t.parts):
                if bn in part.replicas:
                    mine[(pn, t.topic_id)] = part
                    image_part.add((bn, pn, inc_of(t.topic_id), part.leader,
                                    part.leader_epoch))
        logs = {x.partition: x.topic_id for x in br.logs}
        for hp in br.hosted:
            hosted_at.add((bn, hp.partition, inc_of(hp.topic_id), hp.leader,
                           hp.leader_epoch, int(logs.get(hp.partition) == hp.topic_id)))
        for x in br.logs:
            if (x.partition, x.topic_id) not in mine:
                stray.add((bn, x.partition, inc_of(x.topic_id)))
    return {
        "Change": facts["Change"], "Created": facts["Created"],
        "PartShape": facts["PartShape"], "FencedInIsr": facts["FencedInIsr"],
        "Registration": facts["Registration"],
        "RegChange": facts["RegChange"], "RaftEntry": facts["RaftEntry"],
        "RaftState": {(q.epoch, q.hwm, len(q.log), q.repl[q.leader - 1], held,
                       q.log[held - 1].epoch if held else 0)},
        "ImageOf": image_of, "HostedAt": hosted_at, "ImagePart": image_part,
        "StrayOnDisk": stray, "BrokerAt": broker_at, "Committed": {(q.hwm,)},
        "Leaderless": leaderless, "NotRunning": down, "PendingDelete": pending,
        "CrashedWithDelete": crashed_with, "Unflushed": unflushed,
    }


#: the protocol's relations, memoised by the quorum and the brokers (every other field
#: of a state leaves them unchanged), so the properties over them are checked once per
#: distinct pair of those fields
protocol_view = FieldView(((("quorum", "brokers"), _protocol_relations),),
                          name=__name__ + ":protocol_view")


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
    "fetched (MetadataLoader publishes at each batch end once caught up; "
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
          FENCED_LEAVE_ISR, BROKER_EPOCHS, RAFT_LOG_SOUND, IMAGE_IS_REPLAY, HOSTED_MATCHES_IMAGE,
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
    "MetadataFileEventuallyFlushed", exists(b, Unflushed(b)),
    "a new log's partition.metadata is eventually flushed, unless a broker is not running "
    "(UnifiedLog.initializeTopicId schedules the flush-metadata-file task, "
    "maybeFlushMetadataFile)")


def liveness_for(bounds) -> tuple:
    """The plane's own liveness facts a scenario's bounds make meaningful."""
    if not (bounds.liveness and bounds.crashes):
        return ()
    return ((DELETE_DIRS_EVENTUALLY_REMOVED,) if bounds.deletes else ()) + (
        METADATA_FILE_EVENTUALLY_FLUSHED,)
