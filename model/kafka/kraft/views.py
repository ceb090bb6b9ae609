"""The relational view of a KRaft state: the facts the properties are stated over.

- ``Read(reader, asked_inc, record_inc)``, ``Wrote(believed_inc, landed_inc)``,
  ``Attempt(asked_inc, served_inc)``: as in the ZooKeeper-era model (reader 0 is the
  consumer, else a follower broker).
- ``Served(asked_leader_epoch, serving_leader_epoch)``: fetches a leader answered.
- ``Record(broker, partition, serving_inc, record_inc)``, ``Holds(broker, partition,
  inc)``: logs on disk (not moved aside); ``Unflushed(broker, partition, records)``:
  those whose partition.metadata is not flushed, with their number of records.
- ``Hosts(broker, partition, inc)``: partitions a running broker hosts with their log.
- ``Assigned(broker, partition, inc)``: replicas the committed metadata assigns;
  ``AssignedAt(inc, partition, position, broker)``: the same with each replica's place.
- ``Live(inc)``: the topic is in the committed image.
- ``InSyncEnd(inc, partition, end)``: for the topic in the committed image, the
  smallest log end among the in-sync replicas its committed metadata names (each
  replica's log of that topic ID on disk, running or not; 0 for one without it).
- ``Consumed(inc, partition, offset)``: records the consumer (partition 0) or the
  consumer group received.
- ``Left(budget, amount)``: what is left of each of the scenario's budgets (crashes,
  failovers, fences, the producer's records, CreatePartitions requests).
- ``Down(broker)``: not running. ``Pending(offset)``: a batch beyond the high watermark.
- ``Applied(broker, offset, epoch)``: batches in a broker's copy of the metadata log;
  ``Entry(offset, epoch)``: batches of the leader's log.
- ``Published(broker, offset, highest)``: a broker's image offset and the highest it
  ever published.
- ``FencedLeader(broker, inc)``: the committed metadata names a fenced broker leader.
- ``Named(source, name, topic_id)``: topics in each image (0: the controller's).
- ``Starting(broker)``: restarted and not yet running (halted included);
  ``Crashed(broker)``: down after a crash.
- ``Skipped(inc, offset)``: records the consumer's position passed unread.
- ``Stopped(reader)``: the consumer (reader 0) stopped by an error its
  ``auto.offset.reset`` policy raised; ``GroupStopped(member)``: a group member stopped
  so on a partition.
- ``StaleMeta(broker, topic_id)``, ``Failover(epoch, remove_lost)``,
  ``Stray(broker, topic_id)``: witnesses. ``ConsumerEpochs(last_seen, validated)``: the
  consumer's last seen leader epoch and the one its position was last validated
  against (while it has one).
- With a consumer group (``group``): ``GroupSkipped(inc, partition, offset)``: offsets
  a member's position passed without the group receiving them;
  ``GroupStale(member, newest_inc, read_inc)``: records of an older incarnation
  received after an assignment computed from ``newest_inc``;
  ``Assignment(member, inc)``: the incarnation the member's assignments were computed
  from, at their newest; ``Owns(member, partition)``: its current assignment;
  ``GroupPart(partition)``: the partitions of the count the last assignment was
  computed from; ``Committed(partition, offset)``: the coordinator's committed offsets;
  ``CoordinatorKnows(partition)``: the partitions of the topic in the coordinator's
  image (its broker running).
- With CreatePartitions (``partitions``): ``Expansion(sent_inc, resolved_inc,
  error)``: handled requests.

Each relation reads declared fields of the state and is memoised by their values
(``invariants.fieldview``), so the property checker can memoise verdicts by the fields
a property reads (``invariants.fused``).
"""
from __future__ import annotations

from kmc.model.kafka.kraft import clients
from kmc.model.kafka import clients as cm
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft.group import COORDINATOR, STOPPED
from kmc.model.kafka import broker as bk
from kmc.invariants.fieldview import FieldView, named
from kmc.model.kafka.kraft.state import (
    CATCHING_UP, DOWN, HALTED, LOGS_LOADED, RUNNING, TOPIC, FeatureWorld, World, inc_of,
)

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True

STARTING = (CATCHING_UP, LOGS_LOADED, HALTED)


def _quorum(w) -> dict:
    q = w.quorum
    committed = im.build(q.log[:q.hwm])
    full = im.build(q.log)
    assigned, fenced_leader, at = set(), set(), set()
    for t in committed.topics:
        for p, part in enumerate(t.parts):
            for k, r in enumerate(part.replicas):
                assigned.add((r, p, inc_of(t.topic_id)))
                at.add((inc_of(t.topic_id), p, k, r))
            if part.leader >= 0 and im.fenced(committed, part.leader):
                fenced_leader.add((part.leader, inc_of(t.topic_id)))
    return {"Live": {(inc_of(t.topic_id),) for t in committed.topics},
            "Assigned": assigned, "AssignedAt": at, "FencedLeader": fenced_leader,
            "Pending": {(o,) for o in range(q.hwm, len(q.log))},
            "Entry": {(o, e.epoch) for o, e in enumerate(q.log)},
            "_named": {(0, t.name, t.topic_id) for t in full.topics}}


def _brokers(w) -> dict:
    rec, hold, hosts, down, applied, named, unflushed = (set() for _ in range(7))
    for b, br in enumerate(w.brokers, 1):
        running = br.status == RUNNING
        if not running:
            down.add((b,))
        logs = {x.partition: x for x in br.logs}
        for x in br.logs:
            hold.add((b, x.partition, inc_of(x.topic_id)))
            if not x.flushed:
                unflushed.add((b, x.partition, len(x.records)))
            for g in set(x.records):
                rec.add((b, x.partition, inc_of(x.topic_id), g))
        if running:
            for h in br.hosted:
                x = logs.get(h.partition)
                if x is not None and x.topic_id == h.topic_id:
                    hosts.add((b, h.partition, inc_of(h.topic_id)))
        for o, e in enumerate(br.fetched):
            applied.add((b, o, e))
        if br.image is not None:
            named.update((b, t.name, t.topic_id) for t in br.image.topics)
    return {"Record": rec, "Holds": hold, "Hosts": hosts, "Down": down, "Applied": applied,
            "Unflushed": unflushed,
            "Starting": {(b,) for b, br in enumerate(w.brokers, 1) if br.status in STARTING},
            "Crashed": {(b,) for b, br in enumerate(w.brokers, 1) if br.status == DOWN},
            "_named_brokers": named}


def _in_sync(w) -> dict:
    t = im.topic_by_name(im.build(w.quorum.log[:w.quorum.hwm]), TOPIC)
    if t is None:
        return {"InSyncEnd": set()}
    def held(b, p):
        log = bk.log_of(w.brokers[b - 1], p)
        return len(log.records) if log is not None and log.topic_id == t.topic_id else 0
    return {"InSyncEnd": {(inc_of(t.topic_id), p, min(held(b, p) for b in part.isr))
                          for p, part in enumerate(t.parts) if part.isr}}


def _consumed(w) -> dict:
    out = {(i, 0, o) for i, o in w.ghost.consumed}
    grp = getattr(w, "group", None)
    if grp is not None:
        out.update(grp.consumed)
    return {"Consumed": out}


def _published(w) -> dict:
    return {"Published": {(b, br.image.offset, w.ghost.high[b - 1])
                          for b, br in enumerate(w.brokers, 1) if br.image is not None}}


def _ghost(w) -> dict:
    g = w.ghost
    return {"Read": set(g.reads), "Wrote": set(g.wrote), "Attempt": set(g.attempts),
            "Served": set(g.served), "StaleMeta": set(g.stale_meta),
            "Failover": set(g.failovers), "Stray": set(g.strays), "Skipped": set(g.skipped)}


def _consumer(w) -> dict:
    c = w.consumer
    return {"Stopped": {(0,)} if c.failed else set(),
            "ConsumerEpochs": {(c.last_epoch, c.pos_leader[1])} if c.pos_leader else set()}


def _left(w) -> dict:
    bg = w.budget
    left = {("crashes", bg.crashes), ("failovers", bg.failovers), ("fences", bg.fences),
            ("records", w.producer.left)}
    if type(w) is FeatureWorld:
        left.add(("create-partitions", w.adds_left))
    return {"Left": left}


def _named(parts) -> dict:
    return {"Named": parts["_named_brokers"] | parts["_named"]}


_NO_GROUP = {"GroupSkipped": (), "GroupStale": (), "Assignment": (), "Owns": (),
             "GroupStopped": (), "GroupPart": (), "Committed": (), "CoordinatorKnows": ()}


def _no_group(w) -> dict:
    return {**_NO_GROUP, "Expansion": ()}


def _group(w) -> dict:
    grp = w.group
    if grp is None:
        return _NO_GROUP
    return {"GroupSkipped": grp.skipped, "GroupStale": grp.stale,
            "Assignment": {(m, mem.newest) for m, mem in enumerate(grp.members)},
            "Owns": {(m, x[0]) for m, mem in enumerate(grp.members) for x in mem.pos},
            "GroupStopped": {(m,) for m, mem in enumerate(grp.members)
                             if any(x[1] == STOPPED for x in mem.pos)},
            "GroupPart": {(p,) for p in range(grp.snapshot)},
            "Committed": set(grp.committed)}


def _coordinator(w) -> dict:
    br = w.brokers[COORDINATOR - 1]
    t = None if br.status != RUNNING else im.topic_by_name(br.image, TOPIC)
    return {"CoordinatorKnows": set() if t is None else {(p,) for p in range(len(t.parts))}}


def _expansions(w) -> dict:
    return {"Expansion": w.expansions}


_PARTS = ((("quorum",), _quorum), (("brokers",), _brokers),
          (("brokers", "ghost"), _published), (("ghost",), _ghost),
          (("consumer",), _consumer), (("quorum", "brokers"), _in_sync))
_LEFT = {World: (("budget", "producer"), _left),
         FeatureWorld: (("budget", "producer", "adds_left"), _left)}
_DERIVED = ((("brokers", "quorum"), ("_named_brokers", "_named"), _named),)
_VIEWS = {World: FieldView(_PARTS + (_LEFT[World], ((), _no_group),
                                     (("ghost",), _consumed)), _DERIVED),
          FeatureWorld: FieldView(_PARTS + (_LEFT[FeatureWorld], (("group",), _group),
                                            (("ghost", "group"), _consumed),
                                            (("brokers",), _coordinator),
                                            (("expansions",), _expansions)), _DERIVED)}


class _View:
    """The view of a ``World`` or a ``FeatureWorld`` (the consumer group and the
    CreatePartitions requests are the latter's fields)."""

    def __call__(self, w) -> dict:
        return _VIEWS[type(w)](w)

    def sources(self, w) -> dict:
        return _VIEWS[type(w)].sources(w)

    def getter_of(self, names, w):
        return _VIEWS[type(w)].getter_of(names, w)

    def __reduce__(self):  # unpickled as this module's object: its memos stay warm
        return (named, (__name__ + ":view",))


view = _View()


def stuck_view(rule: str, client: str = "consumer"):
    """``Stuck(cached_inc, live_inc)``: the committed image holds incarnation
    ``live_inc`` of the topic, the client (the consumer, not stopped by an error, or the
    producer, with records left to write) does not point at it, and no running
    broker's Metadata answer, taken into its cache once or twice by ``rule``
    (model.kafka.clients.update), would make it (``cached_inc`` 0: no partition metadata
    cached)."""
    def stuck(w) -> dict:
        c = getattr(w, client)
        idle = c.failed if client == "consumer" else c.left == 0
        t = im.topic_by_name(im.build(w.quorum.log[:w.quorum.hwm]), TOPIC)
        if t is None or idle or (c.meta and c.meta[0] == t.topic_id):
            return {"Stuck": set()}
        for br in w.brokers:
            if br.status != RUNNING:
                continue
            bt = im.topic_by_name(br.image, TOPIC)
            ans = None if bt is None else (bt.topic_id, bt.parts[0].leader,
                                           bt.parts[0].leader_epoch)
            cache = cm.ClientMeta(*c[:3])
            for _ in range(2):
                cache = cm.update(cache, ans, rule)
            if cache.meta and cache.meta[0] == t.topic_id:
                return {"Stuck": set()}
        held = inc_of(c.meta[0]) if c.meta else 0
        return {"Stuck": {(held, inc_of(t.topic_id))}}
    return stuck


def settled_view(model):
    """What the clients' quiescent properties ask (ConsumerReadsAll, ProducerFinishes,
    GroupReadsAll): ``LeaderRecord(inc, partition, offset)``, the records in the logs of
    the live incarnation's leaders (committed image; the leader running and hosting the
    partition with that topic ID); ``ConsumerRead(inc, offset)`` and ``GroupRead(inc,
    partition, offset)``, the records the consumer / the group received;
    ``Presubscribed(inc, partition, offset)``, the first incarnation's records written
    before the clients subscribed, which ``auto.offset.reset=latest`` passes;
    ``StoppedOn(partition)``: a member stopped there by reset ``none``;
    ``LivePart(inc, partition)``: the partitions of the live incarnation (committed
    image), with ``view``'s ``Owns`` and ``Down``;
    ``ProducerLeft(records)``: records the producer has yet to write; ``Busy(client)``
    ("consumer", "producer", "group"): the client has a step that changes something
    (``busy``), asked only when a client has a record left to read or to write or a
    partition of the live topic is assigned to no member (else no property reads it: it
    is left empty); and ``view``'s ``Live``, ``Skipped``,
    ``Stopped`` and ``GroupSkipped``."""
    bd = model.bounds
    before = bd.initial_records if bd.reset == "latest" else 0
    presubscribed = {(1, p, o) for p in range(bd.partitions) for o in range(before)}

    def settled(w) -> dict:
        v, g, ghost = view(w), getattr(w, "group", None), w.ghost
        group_read = set() if g is None else set(g.consumed)
        t = im.topic_by_name(im.build(w.quorum.log[:w.quorum.hwm]), TOPIC)
        leader = _leader_records(w, t)
        unread = leader - presubscribed
        left = w.producer.left > 0 and bool(v["Live"])
        live_parts = set() if t is None else {
            (inc_of(t.topic_id), p) for p in range(len(t.parts))}
        if bd.members and (unread - group_read or
                           {p for _i, p in live_parts} - {p for _m, p in v["Owns"]}):
            left = True
        if bd.consumer and any(p == 0 and (i, o) not in ghost.consumed
                               for i, p, o in unread):
            left = True
        return {"Live": v["Live"], "Skipped": v["Skipped"], "Stopped": v["Stopped"],
                "GroupSkipped": v["GroupSkipped"], "LeaderRecord": leader,
                "ConsumerRead": set(ghost.consumed), "GroupRead": group_read,
                "Presubscribed": presubscribed, "LivePart": live_parts,
                "Owns": v["Owns"], "Down": v["Down"],
                "StoppedOn": set() if g is None else {
                    (x[0],) for mem in g.members for x in mem.pos if x[1] == STOPPED},
                "ProducerLeft": {(w.producer.left,)} if w.producer.left > 0 else set(),
                "Busy": busy(model, w) if left else set()}
    return settled


def _leader_records(w, t) -> set:
    """The committed records in the leader logs of ``t``, the topic in the committed
    image: those below the leader's high watermark (``clients.high_watermark``), the
    only ones a consumer is served."""
    out = set()
    for p, part in enumerate(() if t is None else t.parts):
        br = w.brokers[part.leader - 1] if part.leader > 0 else None
        if br is None or br.status != RUNNING:
            continue
        h, log = bk.hosted_of(br, p), bk.log_of(br, p)  # LogManager.getLog
        if h is not None and log is not None and h.topic_id == log.topic_id == t.topic_id:
            hw = clients.high_watermark(w, part.leader, p, log)
            out.update((inc_of(t.topic_id), p, o) for o in range(hw))
    return out


#: the steps of each client (``model.INPUTS``)
CLIENT_STEPS = (("consumer", frozenset({"consumer-refresh", "consumer-fetch"})),
                ("producer", frozenset({"producer-refresh", "produce", "produce-hint"})),
                ("group", frozenset({"member-refresh", "group-rebalance", "member-fetch"})))


def busy(model, w) -> set:
    """The clients with a step that changes something: those ``model.actions`` offers
    (it offers a client's step only when the step changes the state). Asked through
    the model's ``actions`` (``enabled``: the answer the state's own expansion just
    gave, when there was one), the one question about steps a property asks: `kmc
    mutate` records it and asks a mutant the same before it takes a run as unchanged."""
    kinds = {a[0] for a in model.enabled(w)}
    return {(c,) for c, steps in CLIENT_STEPS if kinds & steps}


def describe(w) -> str:
    """One state as compact text for counterexample listings."""
    q = w.quorum
    parts = [f"controller-{q.leader} epoch={q.epoch} log={len(q.log)} hwm={q.hwm} "
             f"repl={list(q.repl)}"]
    img = im.build(q.log)
    for t in img.topics:
        ps = " ".join(f"p{i}:r={list(p.replicas)},isr={list(p.isr)},L={p.leader},"
                      f"le={p.leader_epoch}" for i, p in enumerate(t.parts))
        parts.append(f"{t.name} id={t.topic_id} {ps}")
    fenced = [b for b, _e, f in img.brokers if f]
    if fenced:
        parts.append(f"fenced={fenced}")
    if q.expired:
        parts.append(f"lease run out, not fenced yet={list(q.expired)}")
    for b, br in enumerate(w.brokers, 1):
        off = "-" if br.image is None else br.image.offset
        logs = " ".join(f"A-{x.partition}(id={x.topic_id} log={list(x.records)})"
                        for x in br.logs)
        hosted = " ".join(f"A-{h.partition}(id={h.topic_id} L={h.leader} "
                          f"le={h.leader_epoch})" for h in br.hosted)
        disk = " ".join([logs] * bool(logs) + [f"A-{p}.delete(id={t})"
                                                for p, t in br.deleting])
        parts.append(f"broker-{b} {br.status} image@{off} fetched={len(br.fetched)} "
                     f"disk[{disk}] hosted[{hosted}]"
                     + (" registration lost: to send again" if br.reregister else
                        f" registration lost in the failover to epoch {br.lost_in}: not "
                        "sent again" if br.lost_in else ""))
    c = w.consumer
    if c.meta or c.pos >= 0 or c.last_epoch >= 0:
        parts.append(f"consumer meta={list(c.meta)} id={c.known_id} "
                     f"epoch={c.last_epoch} pos={c.pos}" + (" failed" if c.failed else ""))
    if w.producer.meta:
        parts.append(f"producer meta={list(w.producer.meta)} left={w.producer.left}")
    if getattr(w, "requests", ()):
        parts.append(f"CreatePartitions in flight {list(w.requests)}")
    grp = getattr(w, "group", None)
    if grp is not None:
        ms = " ".join(f"m{m}(meta={list(x.meta)} pos={list(x.pos)})"
                      for m, x in enumerate(grp.members))
        parts.append(f"group gen={grp.gen} snapshot={grp.snapshot} {ms} "
                     f"committed={list(grp.committed)}")
    return " | ".join(parts)
