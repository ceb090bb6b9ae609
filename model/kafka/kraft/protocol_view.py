"""The relations the KRaft plane's own facts are stated over (``protocol_properties``):
the controller's records, the Raft quorum's log, the brokers' images and what their
ReplicaManager and LogManager hold, computed from the quorum and the brokers alone.

The metadata log is read with a replay of its own (``_replay``), written from the record
schemas and Kafka's replay rules, so a broker's image can be compared with what its log
prefix says.
"""
from __future__ import annotations

from functools import lru_cache

from kmc.invariants.fieldview import FieldView
from kmc.invariants.logic import Rel
from kmc.model import memo
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
RegisterAt = Rel("RegisterAt", 3, ("offset", "broker", "raft_epoch"))
UnfenceAt = Rel("UnfenceAt", 3, ("offset", "broker", "raft_epoch"))
LostIn = Rel("LostIn", 2, ("broker", "raft_epoch"))
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
AwaitingFlush = Rel("AwaitingFlush", 1, ("broker",))
StaleLease = Rel("StaleLease", 2, ("broker", "fenced"))


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
    register_at, unfence_at = set(), set()
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
            elif k_ == "RegisterBrokerRecord":
                register_at.add((o, rec.broker, entry.epoch))
                if o > 0:
                    reg.add((o, rec.broker, rec.broker_epoch,
                             state["brokers"].get(rec.broker, (-1, True))[0]))
            elif k_ == "BrokerRegistrationChangeRecord":
                regchange.add((rec.broker, rec.broker_epoch,
                               state["brokers"].get(rec.broker, (-1, True))[0]))
                if not rec.fenced:
                    unfence_at.add((o, rec.broker, entry.epoch))
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
            "FencedInIsr": fenced_in_isr, "RegisterAt": register_at,
            "UnfenceAt": unfence_at, "prefixes": tuple(prefixes)}


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
    - ``RegisterAt(offset, broker, raft_epoch)``, ``UnfenceAt(offset, broker,
      raft_epoch)``: every RegisterBrokerRecord, and every BrokerRegistrationChangeRecord
      that unfences, with the Raft epoch of its batch; ``LostIn(broker, raft_epoch)``
      (a ghost): a live broker process whose registration the failover to that epoch
      lost, and which has not registered again.
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
      down after a crash with one; ``AwaitingFlush(broker)``: a broker that is up
      (not down or halted) with a log whose partition.metadata is not flushed.
    """
    q = w.quorum
    facts = _log_facts(q.log)
    held = sorted(q.repl, reverse=True)[len(q.repl) // 2]
    committed = _log_facts(q.log[:q.hwm])["prefixes"][-1]
    fenced = {bb: fe for bb, _ep, fe in committed[1]}
    current = {bb: fe for bb, _ep, fe in facts["prefixes"][-1][1]}  # the whole log's
    image_of, hosted_at, image_part, stray, broker_at, down = (set() for _ in range(6))
    pending = {(bn,) for bn, br in enumerate(w.brokers, 1)
               if br.deleting and br.status == RUNNING}
    crashed_with = {(bn,) for bn, br in enumerate(w.brokers, 1)
                    if br.deleting and br.status == DOWN}
    unflushed = {(bn,) for bn, br in enumerate(w.brokers, 1)
                 if br.status not in (DOWN, HALTED) and not all(x.flushed for x in br.logs)}
    leaderless = {(inc_of(tid), pn) for tid, _nm, parts in committed[0]
                  for pn, part in enumerate(parts) if part[2] == NO_LEADER}
    rows = (image_of, hosted_at, image_part, stray, broker_at, down)
    for bn, br in enumerate(w.brokers, 1):
        for rel, got in zip(rows, _broker_rows(bn, br, q.log, fenced.get(bn, True))):
            rel.update(got)
    return {
        "Change": facts["Change"], "Created": facts["Created"],
        "PartShape": facts["PartShape"], "FencedInIsr": facts["FencedInIsr"],
        "Registration": facts["Registration"],
        "RegChange": facts["RegChange"], "RaftEntry": facts["RaftEntry"],
        "RegisterAt": facts["RegisterAt"], "UnfenceAt": facts["UnfenceAt"],
        "LostIn": {(bn, br.lost_in) for bn, br in enumerate(w.brokers, 1) if br.lost_in},
        "RaftState": {(q.epoch, q.hwm, len(q.log), q.repl[q.leader - 1], held,
                       q.log[held - 1].epoch if held else 0)},
        "ImageOf": image_of, "HostedAt": hosted_at, "ImagePart": image_part,
        "StrayOnDisk": stray, "BrokerAt": broker_at, "Committed": {(q.hwm,)},
        "Leaderless": leaderless, "NotRunning": down, "PendingDelete": pending,
        "CrashedWithDelete": crashed_with, "AwaitingFlush": unflushed,
        "StaleLease": {(bb, int(current.get(bb, True))) for bb in q.expired},
    }


def _tuples(rows) -> tuple:
    return tuple(map(tuple, rows))


@memo.pure()
def _broker_rows(bn, br, log, fenced) -> tuple:
    """The rows broker ``bn`` (record ``br``) adds to ImageOf, HostedAt, ImagePart,
    StrayOnDisk, BrokerAt and NotRunning, given the leader's log and whether the
    committed metadata fences it (``_protocol_relations``): a function of those alone,
    memoised, since a broker's record recurs in many states."""
    facts = _log_facts(log)
    image_of, hosted_at, image_part, stray, broker_at, down = rows = \
        tuple([] for _ in range(6))
    running = br.status == RUNNING
    if not running:
        down.append((bn,))
    img = br.image
    broker_at.append((bn, int(running), -1 if img is None else img.offset, int(fenced)))
    if img is None:
        return _tuples(rows)
    o = img.offset
    same = tuple(br.fetched[:o]) == tuple(x.epoch for x in log[:o])
    ok = not same or o > len(log) or facts["prefixes"][o] == _image_canon(img)
    image_of.append((bn, o, len(br.fetched), int(ok)))
    if not running:
        return _tuples(rows)
    mine = {}
    for t in img.topics:
        for pn, part in enumerate(t.parts):
            if bn in part.replicas:
                mine[(pn, t.topic_id)] = part
                image_part.append((bn, pn, inc_of(t.topic_id), part.leader,
                                   part.leader_epoch))
    logs = {x.partition: x.topic_id for x in br.logs}
    for hp in br.hosted:
        hosted_at.append((bn, hp.partition, inc_of(hp.topic_id), hp.leader,
                          hp.leader_epoch, int(logs.get(hp.partition) == hp.topic_id)))
    for x in br.logs:
        if (x.partition, x.topic_id) not in mine:
            stray.append((bn, x.partition, inc_of(x.topic_id)))
    return _tuples(rows)


#: the protocol's relations, memoised by the quorum and the brokers (every other field
#: of a state leaves them unchanged), so the properties over them are checked once per
#: distinct pair of those fields
protocol_view = FieldView(((("quorum", "brokers"), _protocol_relations),),
                          name=__name__ + ":protocol_view")
