"""The relational view of a state: the facts the invariants are stated over.

``view(w)`` maps relation names to sets of tuples of ints/strs:

- ``Read(reader, asked_inc, record_inc)``: a read delivered to a follower (reader = broker
  id) or the consumer (reader 0), of a record of ``record_inc``, by a reader that believed
  it read ``asked_inc``.
- ``Wrote(believed_inc, landed_inc)``: a producer record appended to a log of
  ``landed_inc`` by a producer that believed it wrote to ``believed_inc``.
- ``Attempt(asked_inc, served_inc)``: a fetch that reached a replica of ``served_inc``.
- ``Record(broker, partition, serving_inc, record_inc)``: a log (on disk, outside
  deleting/) holds a record of ``record_inc`` in a replica serving ``serving_inc``.
- ``Holds(broker, partition, inc)``: a replica outside deleting/; ``Hosts(broker,
  partition, inc)``: the same, on a broker that is up (a broker serves every replica it
  holds outside deleting/).
- ``Live(inc)``: the incarnation's znode exists and is not marked for deletion.
- ``Znode(inc, topic_id, schema_version)``, ``IdOf(inc, topic_id)`` (every place an ID
  occurs: znodes, replicas, deleting/, requests), ``Marker(name)``; ``Pending(name)``,
  what a deletion still waits for: the same /admin/delete_topics markers.
- ``Down(broker)`` (not up: down or restarting), ``Restarting(broker)``.
- ``Fence(broker, highest_epoch_applied, last_epoch_applied)``.
- ``CreateAfterDelete(error)``: the answer to the admin's last CreateTopics, which it
  issues only after its DeleteTopics succeeded.
- ``Failover(new_epoch, deletion_pending)``.
- ``Expansion(sent_inc, resolved_inc, error)``: an answered CreatePartitions
  (``model.kafka.zk.expansion``).
- ``LeaderOf(inc, partition, leader_epoch, leader)``: every leader the store ever named.
- ``Appended(follower, partition, fetched_epoch, follower_epoch)``: a follower appended a
  FetchResponse fetched at ``fetched_epoch`` while at ``follower_epoch``.
- ``Acked(inc, partition, offset)``: a record acknowledged (every in-sync replica held it);
  ``Stored(inc, partition, offset)``: some replica outside deleting/, on a broker up or
  down, holds a record of ``inc`` at that offset.
- ``Consumed(inc, partition, offset)``: the consumer read it; ``LeaderLog(inc, partition,
  offset)``: a record of the live incarnation in the log of its leader (as the store
  names it), the leader up; ``ProducerLeft(records)``: the producer has records to send.
- ``Assigned(broker, partition, inc)``: the live incarnation's assignment in the store;
  ``AssignedAt(inc, partition, position, broker)``: the assignment each topic znode
  holds; ``Rewritten(inc)``: the topic znode's assignment differs from the controller's
  (``model.kafka.zk.expansion``).
- ``ReplicaState(broker, partition, inc, topic_id, leader_epoch, leader)``: a replica
  outside deleting/ as its broker knows it (leader and epoch -1 while it does not host
  the partition: after a restart, until the first LeaderAndIsr); ``Current(inc,
  partition, topic_id, leader_epoch, leader)``: the store's partition state of every
  incarnation it holds.
- ``Unflushed(broker, partition, records)``: a replica whose partition.metadata is not
  flushed, with the number of records in its log.
- ``Staged(broker, partition, inc)``: a replica moved to log.dir/deleting/, not purged yet.
- ``Awaiting(broker, partition, inc)``: a StopReplica the active controller keeps in
  memory until the broker answers it with success.
- ``Left(budget, amount)``: what is left of each of the scenario's budgets (CreateTopics
  and DeleteTopics requests, the producer's records, crashes, failovers, reassignments,
  CreatePartitions requests).
- ``Spent(budget, left, taken, given)``: for the budgets the state counts twice, what
  the counter says is left, how many of the budget's steps the store and the ghost show
  were taken, and what the scenario gives.
- ``Busy(client)`` ("producer", "consumer"): the client has a step that changes
  something; model-dependent, so added by ``with_clients(model)`` for the properties that
  need it.

Each relation reads declared fields of the state (``view.sources``, by field name), and
the relations one set of fields gives are computed together and memoised by those
fields' values (``invariants.fieldview``): a state's view is mostly parts already built
for other states, and the property checker (``invariants.fused``) can memoise verdicts
by the fields a property reads. The last state's view is memoised as well (every
property of a state is checked in a row); the memo is one (state, view) tuple replaced
atomically, so threads never see a torn pair.
"""
from __future__ import annotations

from kmc.invariants.fieldview import FieldView
from kmc.model.kafka import broker as bk
from kmc.model.kafka import store as zk
from kmc.model.kafka.zk import datapath, epochs

#: it checks states and never makes one: `kmc mutate` leaves it out unless --files names it
PROPERTY_CODE = True


def messages(net):
    """Messages of either network shape (a view is a function of the state alone): a bag
    holds messages, FIFO channels hold (channel, messages) pairs."""
    if net and not hasattr(net[0], "kind"):
        for _ch, msgs in net:
            yield from msgs
    else:
        yield from net


def _brokers(w) -> dict:
    rec, hold, ids, down, restarting, fence = set(), set(), set(), set(), set(), set()
    stored, hosts, rstate, unflushed, staged = set(), set(), set(), set(), set()
    for i, br in enumerate(w.brokers):
        b = i + 1
        up = br.status == bk.UP
        if not up:
            down.add((b,))
            if br.status == bk.RESTARTING:
                restarting.add((b,))
        fence.add((b, br.ctl_epoch, br.applied_epoch))
        for r in br.logs:
            hold.add((b, r.partition, r.inc))
            h = bk.hosted_of(br, r.partition)
            rstate.add((b, r.partition, r.inc, r.topic_id, -1, -1) if h is None else
                       (b, r.partition, r.inc, r.topic_id, h.leader_epoch, h.leader))
            if not r.flushed:
                unflushed.add((b, r.partition, len(r.records)))
            if up:
                hosts.add((b, r.partition, r.inc))
            if r.topic_id:
                ids.add((r.inc, r.topic_id))
            for g in set(map(epochs.inc_of, r.records)):
                rec.add((b, r.partition, r.inc, g))
            stored.update((epochs.inc_of(g), r.partition, o) for o, g in enumerate(r.records))
        for x in br.deleting:
            staged.add((b, x[0], x[2]))
            if x[1]:
                ids.add((x[2], x[1]))
    return {"Record": rec, "Holds": hold, "Hosts": hosts, "Down": down,
            "Restarting": restarting, "Fence": fence, "Stored": stored,
            "ReplicaState": rstate, "Unflushed": unflushed, "Staged": staged,
            "_ids_brokers": ids}


def _store(w) -> dict:
    live, znode, marker, current, ids = set(), set(), set(), set(), set()
    for t in w.store.topics:
        zid = zk.znode_id(w.store, t.name)  # the controller's, unless a write changed it
        znode.add((t.incarnation, zid, t.version))
        current.update((t.incarnation, p, t.topic_id, part.leader_epoch, part.leader)
                       for p, part in enumerate(t.partitions))
        ids.add((t.incarnation, t.topic_id))
        ids.add((t.incarnation, zid))
        if t.name in w.store.delete_markers:
            marker.add((t.name,))
        else:
            live.add((t.incarnation,))
    assigned = {(b, p, t.incarnation) for t in w.store.topics if (t.incarnation,) in live
                for p, part in enumerate(t.partitions) for b in part.replicas}
    at = {(t.incarnation, p, k, b) for t in w.store.topics
          for p, reps in enumerate(zk.assignment(w.store, t.name))
          for k, b in enumerate(reps)}
    incs = {t.name: t.incarnation for t in w.store.topics}
    rewritten = {(incs[x[0]],) for x in w.store.assignments
                 if x[1] != tuple(p.replicas for p in zk.topic(w.store, x[0]).partitions)}
    return {"Live": live, "Znode": znode, "Marker": marker, "Pending": marker,
            "Current": current, "Assigned": assigned, "AssignedAt": at,
            "Rewritten": rewritten, "_ids_store": ids}


def _ids_in(m) -> frozenset:
    if m.kind == "LeaderAndIsr":
        return frozenset((p.inc, p.topic_id) for p in m.parts if p.topic_id)
    if m.kind in ("StopReplica", "StopReplicaResponse") and m.topic_id:
        return frozenset(((m.inc, m.topic_id),))
    return frozenset()


_MSG_IDS: dict = {}  # message -> the topic IDs it carries (a message recurs in many states)


def _net(w) -> dict:
    ids = set()
    for m in messages(w.net):
        got = _MSG_IDS.get(m)
        if got is None:
            if len(_MSG_IDS) >= 1 << 14:
                _MSG_IDS.clear()
            got = _MSG_IDS[m] = _ids_in(m)
        ids |= got
    return {"_ids_net": ids}


def _ghost(w) -> dict:
    g = w.ghost
    return {"Read": set(g.reads), "Wrote": set(g.wrote), "Attempt": set(g.attempts),
            "Failover": set(g.failovers), "LeaderOf": set(g.leaders),
            "Appended": set(g.appends), "Acked": set(g.acked), "Consumed": set(g.consumed),
            "Expansion": set(g.expansions)}


def _admin(w) -> dict:
    out = w.admin.outcome
    return {"CreateAfterDelete": {(out[1],)} if out and out[0] == "create" else set()}


def _producer(w) -> dict:
    return {"ProducerLeft": {(w.producer.left,)} if w.producer.left > 0 else set()}


def _left(w) -> dict:
    ad, bg = w.admin, w.budget
    return {"Left": {("creates", ad.creates), ("deletes", ad.deletes),
                     ("records", w.producer.left), ("crashes", bg.crashes),
                     ("failovers", bg.failovers), ("reassignments", bg.reassign),
                     ("adds", bg.adds)}}


def _spent(w) -> dict:
    """Each budget the state counts twice: what its counter says is left, and how many of
    its steps the store and the ghost show were taken (a creation is a new incarnation; a
    deletion leaves an incarnation that is no longer live; a failover adds a controller
    epoch to the ghost's list; a reassignment is counted by the ghost)."""
    given = dict(w.budget.given)
    if not given:
        return {"Spent": set()}
    st, ad = w.store, w.admin
    live = 1 if datapath.live_inc(st) else 0
    taken = {"creates": (ad.creates, st.incarnations - 1),
             "deletes": (ad.deletes, st.incarnations - live),
             "failovers": (w.budget.failovers, len(w.ghost.failovers)),
             "reassignments": (w.budget.reassign, w.ghost.reassigned)}
    return {"Spent": {(k, *taken[k], g) for k, g in given.items()}}


def _mem(w) -> dict:
    return {"Awaiting": {(x[0], x[1], x[3]) for x in w.mem.pending}}


def _id_of(parts) -> dict:
    ids = parts["_ids_brokers"] | parts["_ids_store"] | parts["_ids_net"]
    return {"IdOf": {x for x in ids if x[1]}}


def _leader_log(w) -> dict:
    live = {(t.incarnation,) for t in w.store.topics if t.name not in w.store.delete_markers}
    out = set()
    for t in w.store.topics:
        if (t.incarnation,) not in live:
            continue
        for p, part in enumerate(t.partitions):
            if part.leader < 1 or w.brokers[part.leader - 1].status != bk.UP:
                continue
            for r in w.brokers[part.leader - 1].logs:
                if r.partition == p and r.inc == t.incarnation:
                    out.update((r.inc, p, o) for o, g in enumerate(r.records)
                               if epochs.inc_of(g) == r.inc)
    return {"LeaderLog": out}


view = FieldView((
    (("brokers",), _brokers), (("store",), _store), (("net",), _net),
    (("ghost",), _ghost), (("admin",), _admin), (("producer",), _producer),
    (("mem",), _mem), (("admin", "producer", "budget"), _left),
    (("store", "admin", "budget", "ghost"), _spent),
    (("store", "brokers"), _leader_log),
), (
    (("brokers", "store", "net"), ("_ids_brokers", "_ids_store", "_ids_net"), _id_of),
), name=__name__ + ":view")


def busy(m, w) -> set:
    """The clients that have a step changing something (not settled yet), asked of the
    model (``next_state``), as a property asks: ``kmc mutate`` then replays a mutant of
    a client's step on these runs too, asking the model again."""
    out = set()
    bd = m.bounds
    step = m.next_state
    parts = range(m.max_partitions)
    if bd.records and (step(w, ("producer-refresh",)) is not None or any(
            step(w, ("produce", p)) is not None for p in parts)):
        out.add(("producer",))
    if bd.consumer and (step(w, ("consumer-refresh",)) is not None or any(
            step(w, ("consumer-fetch", p)) is not None for p in parts)):
        out.add(("consumer",))
    return out


def with_clients(m):
    """``view`` plus ``Busy``, which depends on the model's variant and bounds."""
    def client_view(w):
        return {**view(w), "Busy": busy(m, w)}
    return client_view


def _role(br, p) -> str:
    h = bk.hosted_of(br, p)
    return " unhosted" if h is None else f" L={h.leader} le={h.leader_epoch}"


def _records(records) -> str:
    """A log's records as ``[1, 1@e2]``: incarnation, and the leader epoch when not 0."""
    return "[" + ", ".join(map(epochs.label, records)) + "]"


def describe(w) -> str:
    """One state as compact text for counterexample listings."""
    parts = []
    for t in w.store.topics:
        ps = " ".join(f"p{i}:r={list(p.replicas)},L={p.leader},le={p.leader_epoch}"
                      for i, p in enumerate(t.partitions))
        mark = " DELETING" if t.name in w.store.delete_markers else ""
        zid = zk.znode_id(w.store, t.name)  # a CreatePartitions write may have changed it
        if zid != t.topic_id:
            mark = f" (znode id={zid or 'none'}){mark}"
        parts.append(f"zk {t.name}#{t.incarnation} id={t.topic_id}{mark} {ps}")
    if not w.store.topics:
        parts.append("zk: no topic")
    parts.append(f"controller-{w.ctl.active} ce={w.ctl.epoch} pending={list(w.mem.pending)}")
    for i, br in enumerate(w.brokers):
        reps = " ".join(f"A-{r.partition}(#{r.inc} id={r.topic_id}{'' if r.flushed else '*'}"
                        f"{_role(br, r.partition)} log={_records(r.records)})"
                        for r in br.logs)
        dl = f" deleting={list(br.deleting)}" if br.deleting else ""
        parts.append(f"broker-{i + 1} {br.status} ce={br.ctl_epoch} {reps or '-'}{dl}")
    n = sum(1 for _ in messages(w.net))
    parts.append(f"net={n} admin={w.admin.next_op}{list(w.admin.outcome)}")
    g = w.ghost
    if g.reads or g.wrote:
        parts.append(f"reads={list(g.reads)} wrote={list(g.wrote)}")
    return " | ".join(parts)
