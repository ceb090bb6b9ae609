"""The topic lifecycle of KIP-516, a feature of the ZooKeeper-era cluster (``zk.cluster``).

Its steps live with their component: the metadata store and the controller (``control``),
brokers (``brokers``), replication and clients (``datapath``), CreatePartitions
(``expansion``), the network (``model.kafka.network``). ``candidates`` lists every step
worth trying in a fixed order; the cluster dispatches.

Quiescence: ``is_fault`` marks every action the cluster does not take by itself — faults
(crash, restart, failover, message loss) and environment inputs (admin and client
requests). A state is settled when no internal step (delivery, retry, fetch, purge) is
enabled, whatever the environment might still do.
"""
from __future__ import annotations

from itertools import permutations

from kmc.model.kafka import broker as bk
from kmc.model.kafka import controller as kc
from kmc.model.kafka import store as zk
from kmc.model.kafka import symmetry as ksym
from kmc.model.kafka.broker import Broker, Hosted, Log
from kmc.model.kafka.network import Network
from kmc.model.kafka.zk import brokers, control, datapath, expansion, liveness, pictures
from kmc.model.kafka.zk import symmetry as tsym
from kmc.model.kafka.zk.cluster import Cluster
from kmc.model.kafka.zk.properties import properties_for
from kmc.model.kafka.zk.state import TOPIC, Admin, Budget, Client, Memory, Meta, World
from kmc.model.kafka.zk.variants import flags as variant_flags
from kmc.model.kafka.zk.views import describe

#: actions the cluster does not take by itself (see module docstring)
ENVIRONMENT = frozenset({"crash", "restart", "failover", "lose", "create", "delete",
                         "reassign", "produce", "producer-refresh", "consumer-fetch",
                         "consumer-refresh", "send-create-partitions"})
#: the environment actions that are faults (the rest of ENVIRONMENT is input)
FAULTS = frozenset({"crash", "restart", "failover", "lose"})


def lose(m, w, msg):
    """Fault: the network loses ``msg`` (``-p loss=true``: a StopReplica; KIP-516
    "DeleteTopics": "unsuccessful StopReplicaRequest(s)"; no Kafka code: Kafka's
    ControllerChannelManager RequestSendThread re-sends a request until its broker is
    removed, so a loss stands for a broker bounce or a controller move)."""
    return w._replace(net=m.net.lose(w.net, msg))


def topic_lifecycle(variant: str, bounds) -> Cluster:
    """The cluster running the topic lifecycle with ``bounds`` (``zk.state.Bounds``) on
    the release line or mutant ``variant`` (``zk.variants``)."""
    return Cluster((Lifecycle(variant, bounds),), flags=variant_flags(variant),
                   net=Network(ordered=not bounds.reorder), purge_delay=bounds.purge_delay,
                   failovers=bounds.failovers)


class Lifecycle:
    """CreateTopics, DeleteTopics, re-creation, CreatePartitions, crashes, reassignment,
    a producer and a consumer (the scenario's ``bounds``), and what a new controller
    does after a failover."""
    name = "lifecycle"
    title = "topics"
    #: the deletion waits for every StopReplica's answer (``zk.brokers.on_stop_replica``)
    reads_stop_replica_answers = True
    steps = {
        "lose": lose,
        "retry-stop": control.retry_stop, "create": control.create,
        "delete": control.delete, "reassign": control.reassign,
        "crash": brokers.crash,
        "restart": brokers.restart,
        "purge": brokers.purge, "fetch": datapath.follower_fetch,
        "produce": datapath.produce, "producer-refresh": datapath.producer_refresh,
        "consumer-fetch": datapath.consumer_fetch,
        "consumer-refresh": datapath.consumer_refresh,
        "send-create-partitions": expansion.send,
        "create-partitions-read": expansion.read,
        "create-partitions-read-id": expansion.read_id,
        "create-partitions-write": expansion.write,
        "partition-modifications": expansion.modifications,
    }
    # what changes on few transitions and still takes a few hundred values (measured on
    # lifecycle-large kip516: 9% of transitions change these fields, 305 values, the
    # largest 1.7% of the states). The controller's pending deletions (``mem``) are left
    # out: they change on 8% of transitions; with them in, 15% changed the key, and on
    # Spark 2 owners received 1.24 candidates per new state instead of 1.15 (4: 1.38
    # instead of 1.23)
    partition_fields = tuple(World._fields.index(f)
                             for f in ("store", "ctl", "admin", "budget", "ghost"))

    def __init__(self, variant: str, bounds):
        self.variant = variant
        self.bounds = bounds

    def parameters(self) -> dict:
        """What the lifecycle's steps read from the model besides the cluster's own."""
        bd = self.bounds
        ids = tuple(bk.broker_ids(bd.brokers))
        return {
            "variant": self.variant, "bounds": bd, "broker_ids": ids,
            "_maps": ksym.mappings(ids),
            #: partitions the clients may come to know (CreatePartitions grows the topic)
            "max_partitions": max(bd.partitions, bd.target) if bd.adds else bd.partitions,
        }

    # ---- initial state ------------------------------------------------------------------
    def initial(self, m) -> World:
        """Incarnation 1 of the topic exists, fully replicated, with ``initial_records``
        records; every broker is up; controller-1 is active with epoch 1."""
        bd, ids = m.bounds, m.flags.topic_ids
        first = tuple(range(1, bd.rf + 1))
        layouts = [first[p % bd.rf:] + first[:p % bd.rf] for p in range(bd.partitions)]
        store, rec = zk.new_topic(zk.Store(), TOPIC, layouts, ids)
        ctl = kc.initial(2)
        brs = []
        for b in m.broker_ids:
            mine = [(p, part) for p, part in enumerate(rec.partitions) if b in part.replicas]
            logs = tuple(Log(p, rec.topic_id, (1,) * bd.initial_records, True, 0, 1)
                         for p, _part in mine)
            hosted = tuple(Hosted(p, rec.topic_id, part.leader, 0) for p, part in mine)
            brs.append(Broker(bk.UP, logs, hosted, (), ctl.epoch, ctl.epoch))
        meta = Meta(rec.topic_id, 1, tuple((p.leader, p.leader_epoch)
                                           for p in rec.partitions))
        admin = Admin("delete" if bd.deletes > 0 else "done", bd.incarnations - 1,
                      bd.deletes, rec.topic_id, ())
        producer = Client(meta if bd.records else None, bd.records, ())
        consumer = Client(meta if bd.consumer else None, 0, (0,) * m.max_partitions)
        return World(store, ctl, Memory(), tuple(brs), (), admin, producer, consumer,
                     Budget(bd.crashes, bd.failovers, bd.reassign, bd.adds,
                            (("creates", bd.incarnations - 1), ("deletes", bd.deletes),
                             ("failovers", bd.failovers), ("reassignments", bd.reassign))),
                     control.initial_ghost(rec, bd.initial_records))

    # ---- actions ------------------------------------------------------------------------
    def candidates(self, m, w):
        """Every step worth trying, in a fixed order (the steps check their guards): the
        deliveries (and losses) of the messages in flight, then the other steps."""
        out = self.delivery_candidates(m, w.net)
        out += self.other_candidates(m, w)
        return out

    def delivery_candidates(self, m, net) -> list:
        """The deliveries (and, with ``loss``, the losses) the messages in flight offer: a
        function of the network alone."""
        if m.bounds.loss:
            out = []
            for msg in m.net.deliverable(net):
                out.append(("deliver", msg))
                if msg.kind == "StopReplica":
                    out.append(("lose", msg))
            return out
        return [("deliver", msg) for msg in m.net.deliverable(net)]

    def other_candidates(self, m, w) -> list:
        """The steps other than deliveries worth trying, in a fixed order."""
        bd, f, out = m.bounds, m.flags, []
        stops, fetching = _in_flight(m, w, f.retry_stop_replica and w.mem.pending)
        if stops is not None:
            out.extend(("retry-stop", w.ctl.active) + e for e in w.mem.pending
                       if e[:3] not in stops)
        for b, br in zip(m.broker_ids, w.brokers):
            if br.status == bk.DOWN:
                continue
            for h in br.hosted:
                if h.leader not in (b, -1) and (b, h.partition) not in fetching:
                    out.append(("fetch", b, h.partition))
            if br.deleting:
                out.append(("purge", b))
        out.extend(_admin_actions(m, w))
        if bd.adds:
            out.extend(expansion.actions(m, w))
        if bd.records:
            out.append(("producer-refresh",))
            out.extend(("produce", p) for p in range(m.max_partitions))
        if bd.consumer:
            out.append(("consumer-refresh",))
            out.extend(("consumer-fetch", p) for p in range(m.max_partitions))
        for b, br in zip(m.broker_ids, w.brokers):
            if br.status == bk.DOWN:
                out.append(("restart", b))
            elif w.budget.crashes > 0:
                out.append(("crash", b))
        return out

    #: a trace's action index counts these candidates, enabled or not
    actions = candidates

    def on_elected(self, m, old, w):
        """After a failover (``zk.failover``): the new controller's resync."""
        return control.resync(m, old, w)

    # ---- properties, fairness, symmetry ---------------------------------------------------
    def properties(self, m):
        return properties_for(m.bounds, m) + liveness.liveness_for(m.bounds)

    def weakly_fair(self, m):  # the cluster's own steps (model.kafka.zk.liveness)
        return liveness.weakly_fair(m, ENVIRONMENT)

    def strongly_fair(self, m):
        return liveness.strongly_fair(m, ENVIRONMENT)

    def symmetric(self, m) -> bool:
        # CreatePartitions places replicas by broker id (expansion.placement): renaming
        # brokers is then no symmetry of the model
        return not m.bounds.adds

    def representative(self, m, w):
        return ksym.representative(w, m._maps, lambda s, mp: tsym.rename(m, s, mp))

    def symmetric_images(self, m, w):
        """``w`` under every other renaming of the brokers (``--check-symmetry``)."""
        return [tsym.rename(m, w, mp) for mp in m._maps[1:]]

    def is_fault(self, action) -> bool:
        return action[0] in ENVIRONMENT

    def action_kind(self, action) -> str:
        """Crashes, restarts, failovers and message loss are faults; admin requests and
        client calls are the environment's input; the rest is the protocol's step."""
        if action[0] in FAULTS:
            return "fault"
        return "input" if action[0] in ENVIRONMENT else "step"

    # ---- display --------------------------------------------------------------------------
    def action_name(self, m, action) -> str:
        return pictures.action_name(action)

    def action_names(self, m):
        """Action kinds this scenario's bounds make possible (coverage lists the ones that
        never fired)."""
        bd, f = m.bounds, m.flags
        names = ["deliver-LeaderAndIsr"]
        if bd.deletes:
            names += ["delete", "deliver-StopReplica", "deliver-StopReplicaResponse"]
        if bd.purge_delay:
            names.append("purge")
        if bd.rf > 1 and (bd.initial_records or bd.records):
            names.append("deliver-FetchResponse")
        if bd.rf > 1:
            names.append("fetch")
        if bd.incarnations > 1:
            names.append("create")
        if bd.loss:
            names.append("lose-StopReplica")
        if bd.loss and f.retry_stop_replica:
            names.append("retry-stop")
        if bd.crashes:
            names += ["crash", "restart"]
        if bd.failovers:
            names.append("failover")
        if bd.reassign:
            names.append("reassign")
        if bd.records:
            names += ["produce", "producer-refresh"]
        if bd.consumer:
            names += ["consumer-fetch", "consumer-refresh"]
        if bd.adds:
            names += [k for k in expansion.KINDS
                      if f.topic_ids or k != "create-partitions-read-id"]
        return sorted(names)

    def format_action(self, action) -> str:
        return pictures.format_action(action)

    def format_state(self, w) -> str:
        return describe(w)

    def name_components(self, m, js):
        """The network's channels as ``controller-1 -> broker-2`` (FIFO channels: (src,
        dst) -> messages in send order)."""
        if m.net.ordered:
            js["net"] = {f"{pictures.endpoint(src)} -> {pictures.endpoint(dst)}": msgs
                         for (src, dst), msgs in js["net"]}
        return js

    def action_actor(self, action) -> str:
        return pictures.action_actor(action)

    def action_message(self, m, action, state=None):
        return pictures.action_message(action, state, m.flags)

    def lanes(self, m):
        out = [kc.lane(c) for c in (1, 2)] + ["store"]
        out += [bk.lane(b) for b in m.broker_ids] + ["admin"]
        if m.bounds.records:
            out.append("producer")
        if m.bounds.consumer:
            out.append("consumer")
        return out


def _in_flight(m, w, retries):
    """(broker, partition, topic ID) of the current controller's StopReplica requests and
    responses in flight (None unless ``retries``: nothing reads them then); (follower,
    partition) of fetches in flight. One question to the network (one pass over it), so
    the retry and fetch candidates are not re-scanned one by one."""
    if not retries:
        return None, m.net.ask(w.net, _fetching)
    return m.net.ask(w.net, _stops_and_fetches(-w.ctl.active, w.ctl.epoch))


def _fetching(msgs) -> frozenset:
    """(follower, partition) of the fetches among ``msgs``."""
    return frozenset([(x.dst, x.partition) for x in msgs if x.kind == "FetchResponse"])


def _stops_and_fetches(ctl: int, ep: int):
    """The question: (StopReplica requests and responses between controller ``ctl`` at
    epoch ``ep`` and the brokers, fetches) among the messages in flight."""
    def question(msgs) -> tuple:
        stops, fetching = set(), set()
        for x in msgs:
            k = x.kind
            if k == "StopReplica":
                if x.src == ctl and x.epoch == ep:
                    stops.add((x.dst, x.partition, x.topic_id))
            elif k == "StopReplicaResponse":
                if x.dst == ctl and x.epoch == ep:
                    stops.add((x.src, x.partition, x.topic_id))
            elif k == "FetchResponse":
                fetching.add((x.dst, x.partition))
        return frozenset(stops), frozenset(fetching)
    return question


def _admin_actions(m, w):
    a, out = w.admin, []
    if a.next_op == "delete":
        out.append(("delete", "name"))
        if m.flags.topic_ids:
            out.append(("delete", "id"))
    elif a.next_op == "create":
        live = bk.live_ids(w.brokers)
        if zk.topic(w.store, TOPIC) is not None or len(live) < m.bounds.rf:
            out.append(("create", ()))
        else:
            out.extend(("create", p) for p in permutations(live, m.bounds.rf))
    if w.budget.reassign > 0:
        rec = control.active_topic(w.store)
        if rec is not None:
            for p, part in enumerate(rec.partitions):
                if len(part.replicas) >= 2:
                    out.extend(("reassign", p, b) for b in part.replicas
                               if w.brokers[b - 1].status == bk.DOWN)
    return out
