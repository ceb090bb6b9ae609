"""KRaftModel: the topic lifecycle on KRaft's control plane as one composed state machine.

Components, one module each: the controller quorum and its metadata log (``quorum``),
the active controller's record generation (``controller``, ``admin``), broker liveness
(``heartbeat``), the brokers' metadata publishing (``publisher``) and replica management
(``replicas``, ``logmanager``), broker restart (``startup``), and fetches and Metadata
requests (``clients``). ``actions`` lists every candidate step in a fixed order;
``next_state`` dispatches to the module that owns it.

Quiescence: ``is_fault`` marks the actions the cluster does not take by itself: faults
(crash, restart, failover, missed heartbeats) and inputs (admin and consumer requests).
Internal steps that would not change the state are not offered, so a state is settled
when the cluster has nothing left to do.
"""
from __future__ import annotations

from kmc.model.contract import Model
from kmc.model.kafka import broker as bk
from kmc.model.kafka.canon import replace_at
from kmc.model.kafka.kraft import (
    admin, clients, deletion, group, heartbeat, naming, partitions, publisher, startup,
)
from kmc.model.kafka.kraft import image as im
from kmc.model.kafka.kraft import quorum as qm
from kmc.model.kafka.kraft import records as rc
from kmc.model.kafka.kraft.properties import properties_for
from kmc.model.kafka.kraft.state import (
    DOWN, HALTED, RUNNING, TOPIC, Broker, Budget, Consumer, FeatureWorld, Ghost, Hosted, Log,
    Producer, World, id_of,
)
from kmc.model.kafka.kraft.variants import flags as variant_flags
from kmc.model.kafka.kraft.views import describe

FAULTS = frozenset({"crash", "restart", "failover", "miss-heartbeats"})
INPUTS = frozenset({"create", "delete", "consumer-refresh", "consumer-fetch",
                    "producer-refresh", "produce", "produce-hint", "send-create-partitions",
                    "member-refresh", "group-rebalance", "member-fetch"})
ENVIRONMENT = FAULTS | INPUTS


class KRaftModel(Model):
    name = "kraft"
    #: while ``successors`` asks ``actions``: action -> the step computed to enable it
    _probed = None
    #: (state, its actions) of the last ``successors`` call: ``enabled`` answers from it
    _last = (None, ())

    def __init__(self, variant: str, bounds):
        self.variant = variant
        self.flags = variant_flags(variant)
        self.bounds = bounds
        self.broker_ids = tuple(bk.broker_ids(bounds.brokers))
        # Reductions of the partition.metadata crash window (sound for every property):
        # without crashes nothing reads partition.metadata back from disk (brokers use
        # the topic ID in memory), and when a log without a topic ID is treated as
        # stray (missing_id "stray") it is an empty log deleted at startup and created
        # again if assigned, the same end state as the flushed one: in both cases the
        # flush is merged into the log's creation. Otherwise it is a step of its own
        # until the last crash is spent (startup.crash).
        self.window = bounds.crashes > 0 and self.flags.missing_id != "stray"
        self.flushed = not self.window
        # The deletion window (rename to -delete, later removal): deletion.py
        self.delete_window = deletion.has_window(bounds)
        self._steps = {
            "replicate": self._replicate, "failover": self._failover,
            "fetch-metadata": publisher.fetch_metadata, "load-logs": startup.load_logs,
            "apply-initial": startup.apply_initial, "fence": heartbeat.fence,
            "lease-expires": heartbeat.expire,
            "unfence": heartbeat.unfence, "miss-heartbeats": heartbeat.miss_heartbeats,
            "crash": startup.crash, "restart": startup.restart,
            "register": startup.register_again,
            "replica-fetch": clients.replica_fetch, "create": admin.create,
            "delete": admin.delete, "consumer-refresh": clients.consumer_refresh,
            "consumer-fetch": clients.consumer_fetch,
            "producer-refresh": clients.producer_refresh, "produce": clients.produce,
            "produce-hint": clients.produce_hint,
            "flush-metadata": publisher.flush_metadata,
            "send-create-partitions": partitions.send, "create-partitions": partitions.handle,
            "member-refresh": group.refresh, "group-rebalance": group.rebalance,
            "member-fetch": group.fetch, "delete-logs": deletion.delete_logs,
        }
        #: CreatePartitions or a group: states carry them (state.FeatureWorld)
        self.features = bounds.adds > 0 or bounds.members > 0

    # ---- the controller quorum -----------------------------------------------------------
    def append(self, q, records):
        """The active controller appends a batch; without failovers it commits at once
        (quorum.append)."""
        return qm.append(q, records, replicated=self.bounds.failovers == 0)

    @staticmethod
    def controller_image(q):
        """The active controller's state: its whole log replayed."""
        return im.build(q.log)

    @staticmethod
    def committed_image(q):
        return im.build(q.log[:q.hwm])

    # ---- initial state ------------------------------------------------------------------
    def init_states(self):
        """Every broker registered and unfenced; incarnation 1 of the topic created with
        ``initial_records`` records on every replica; all of it committed and published;
        controller-1 leads epoch 1."""
        bd = self.bounds
        tid = id_of(1)
        lay = admin.layouts(tuple(range(1, bd.rf + 1)), bd.partitions)
        first = tuple(rc.register_broker(b, 1, False) for b in self.broker_ids)
        first += (rc.topic(TOPIC, tid),)
        first += tuple(rc.partition(tid, p, r, r, r[0], bd.leader_epoch, bd.leader_epoch)
                       for p, r in enumerate(lay))
        q = qm.initial(first)
        img = im.build(q.log)
        brs = []
        for b in self.broker_ids:
            parts = [(p, r) for p, r in enumerate(lay) if b in r]
            logs = tuple(Log(p, tid, (1,) * bd.initial_records) for p, _r in parts)
            hosted = tuple(Hosted(p, tid, r[0], bd.leader_epoch) for p, r in parts)
            brs.append(Broker(RUNNING, (1,), img, logs, hosted))
        ghost = Ghost((), (), (), (), (1,) * bd.brokers, (), (), (), (), ())
        w = World(q, tuple(brs), tid + 1, Consumer((), 0, -1, -1, False, (), -1),
                  Producer((), 0, -1, bd.records),
                  Budget(bd.crashes, bd.failovers, bd.fences), ghost)
        if self.features:
            w = FeatureWorld(*w, requests=(), adds_left=bd.adds,
                             group=group.initial(bd.members) if bd.members else None,
                             expansions=())
        return [w]

    # ---- actions ------------------------------------------------------------------------
    def actions(self, w):
        f, q = self.flags, w.quorum
        out = [("replicate", c) for c in qm.VOTERS if qm.can_replicate(q, c)]
        for b, br in zip(self.broker_ids, w.brokers):
            if publisher.can_fetch(q, br, f.committed_only):
                out.append(("fetch-metadata", b))
            if startup.can_load_logs(self, w, b):
                out.append(("load-logs", b))
            if startup.is_loaded(w, b):
                out.append(("apply-initial", b))
            if heartbeat.can_expire(self, w, b):
                out.append(("lease-expires", b))
            if heartbeat.can_fence_expired(self, w, b):
                out.append(("fence", b))
            if heartbeat.can_unfence(self, w, b):
                out.append(("unfence", b))
            if self.window and w.budget.crashes > 0:
                out.extend(("flush-metadata", b, x.partition) for x in br.logs
                           if publisher.can_flush(br, x.partition))
        for b, p in clients.fetch_candidates(w):
            self.probe(out, ("replica-fetch", b, p), w)
        out.extend(admin.actions(self, w))
        if self.features:
            out.extend(partitions.actions(self, w))
        if self.bounds.consumer:
            for b, br in zip(self.broker_ids, w.brokers):
                if br.status == RUNNING:
                    self.probe(out, ("consumer-refresh", b), w)
            if clients.may_consumer_fetch(w):
                self.probe(out, ("consumer-fetch",), w)
        if self.bounds.records:
            for b, br in zip(self.broker_ids, w.brokers):
                if br.status == RUNNING:
                    self.probe(out, ("producer-refresh", b), w)
            if clients.can_produce(self, w):
                out.append(("produce",))
        if self.bounds.members:
            out.extend(group.actions(self, w))
        for b, br in zip(self.broker_ids, w.brokers):
            if br.status == DOWN:
                if startup.can_restart(self, w, b):
                    out.append(("restart", b))
            elif br.status != HALTED and w.budget.crashes > 0:
                out.append(("crash", b))
            if br.reregister and startup.can_register_again(self, w, b):
                out.append(("register", b))
            if heartbeat.can_miss_heartbeats(self, w, b):
                out.append(("miss-heartbeats", b))
        if w.budget.failovers > 0:
            out.extend(("failover", c) for c in qm.electable(q))
        if self.delete_window:  # last: the other actions keep their indices
            for b in self.broker_ids:
                out.extend(deletion.candidates(self, w, b))
        if self.bounds.records and self.flags.leader_hint:  # the same, KIP-951's hint
            self.probe(out, ("produce-hint",), w)
        return out

    def enabled(self, w) -> list:
        """``Model.enabled``: taken from the last ``successors`` call when it was asked
        about this very state (an explorer checks a state's quiescent properties right
        after computing its successors)."""
        last, acts = self._last
        return acts if last is w else self.actions(w)

    def next_state(self, w, action):
        return self._steps[action[0]](self, w, *action[1:])

    def probe(self, out: list, action, w) -> None:
        """``action`` is enabled when its step ``t = next_state(w, action)``, computed to
        tell, changes ``w``; ``successors`` then takes ``t`` instead of computing it
        again. The step is asked through ``next_state``, so that ``kmc mutate`` sees it
        as a step of its own (``mutate.recorder``'s ``probe``)."""
        t = self.next_state(w, action)
        if t != w:
            out.append(action)
            self.keep(action, t)

    def keep(self, action, t) -> None:
        """``t`` is ``next_state`` of ``action`` in the state ``actions`` was asked for."""
        if self._probed is not None:
            self._probed[action] = t

    def successors(self, w):
        """``Model.successors``, with the steps ``actions`` computed to decide that they
        are enabled (``probe``) taken as they are: the same list, each step computed
        once. One state at a time per model object, as every explorer asks (a Spark
        task runs in a Python worker process of its own)."""
        self._probed = probed = {}
        try:
            acts = self.actions(w)
        finally:
            self._probed = None
        self._last = (w, acts)
        out = []
        for a in acts:
            t = probed.get(a)
            if t is None:
                t = self.next_state(w, a)
            if t is not None:
                out.append((a, t))
        return out

    @staticmethod
    def _replicate(model, w, c):
        """A standby controller fetches the active controller's metadata log; the high
        watermark advances to a majority's length once a batch of the current epoch is in
        it (quorum.replicate). KIP-595 "Fetch"; raft/KafkaRaftClient.java
        ``handleFetchRequest``, raft/LeaderState.java ``maybeUpdateHighWatermark``."""
        return w._replace(quorum=qm.replicate(w.quorum, c))

    @staticmethod
    def _failover(model, w, c):
        """A standby controller wins an election (quorum.failover); the old leader's
        uncommitted batches beyond the new leader's log are lost. KIP-595 "Leader
        Election"; raft/KafkaRaftClient.java ``onBecomeLeader``, ``handleVoteRequest``;
        raft/QuorumState.java ``canGrantVote``. A broker whose registration is unanswered
        sends it again (``startup.unanswered_registrations``)."""
        q = w.quorum
        lost = any(r.kind == "RemoveTopicRecord" for e in qm.uncommitted(q)
                   for r in e.records)
        nq = qm.failover(q, c)
        ghost = w.ghost._replace(failovers=tuple(sorted(set(w.ghost.failovers) | {
            (nq.epoch, int(lost))})))
        brokers = w.brokers
        for b in startup.unanswered_registrations(model, w):
            brokers = replace_at(brokers, b - 1, brokers[b - 1]._replace(
                reregister=model.flags.registration_resent, lost_in=nq.epoch))
        return w._replace(quorum=nq, ghost=ghost, brokers=brokers,
                          budget=w.budget._replace(failovers=w.budget.failovers - 1))

    # ---- contract extras ----------------------------------------------------------------
    def properties(self):
        return properties_for(self.bounds, self.flags, self)

    @property
    def weakly_fair(self):
        """With the liveness properties: every step the cluster takes by itself (faults
        and inputs never are)."""
        if not self.bounds.liveness:
            return ()
        return tuple(n for n in self.action_names() if n not in ENVIRONMENT)

    def is_fault(self, action) -> bool:
        return action[0] in ENVIRONMENT

    def action_kind(self, action) -> str:
        if action[0] in FAULTS:
            return "fault"
        return "input" if action[0] in INPUTS else "step"

    def action_name(self, action) -> str:
        return action[0]

    def action_names(self):
        bd = self.bounds
        names = ["fetch-metadata"]
        if bd.deletes:
            names.append("delete")
        if bd.incarnations > 1:
            names.append("create")
        if bd.rf > 1:
            names.append("replica-fetch")
        if bd.crashes:
            names += ["crash", "restart", "fence", "load-logs", "apply-initial", "unfence"]
            if bd.fence_delay:
                names.append("lease-expires")
            if bd.incarnations > 1:
                names.append("flush-metadata")
            if bd.deletes:
                names.append("delete-logs")
        if bd.fences:
            names += ["miss-heartbeats", "unfence"]
        if bd.failovers:
            names += ["failover", "replicate"]
            if bd.crashes:
                names.append("register")
        if bd.consumer:
            names += ["consumer-refresh", "consumer-fetch"]
        if bd.records:
            names += ["producer-refresh", "produce"]
            if self.flags.leader_hint:
                names.append("produce-hint")
        if bd.adds:
            names += ["send-create-partitions", "create-partitions"]
        if bd.members:
            names += ["member-refresh", "group-rebalance", "member-fetch"]
        return sorted(set(names))

    def format_action(self, action) -> str:
        return naming.format_action(action)

    def format_state(self, w) -> str:
        return describe(w)

    def state_to_json(self, w):
        """The generic view, with a broker's ``deleting`` shown only when it holds a
        ``-delete`` directory and ``reregister`` and ``lost_in`` only when set (as its
        encoding: ``state.Broker.__repr__``), the quorum's ``expired`` only when set
        (``quorum.Quorum.__repr__``), and without
        the fields of the shared broker records that only the ZooKeeper plane sets (a
        log's ``start`` and ``inc``, a hosted partition's ``fetch_error``)."""
        js = super().state_to_json(w)
        if not js["quorum"]["expired"]:
            del js["quorum"]["expired"]
        for br in js["brokers"]:
            if not br["deleting"]:
                del br["deleting"]
            for k in ("reregister", "lost_in"):
                if not br[k]:
                    del br[k]
            for log in br["logs"]:
                del log["start"], log["inc"]
            for h in br["hosted"]:
                del h["fetch_error"]
        return js

    def action_actor(self, action) -> str:
        return naming.action_actor(action)

    def lanes(self):
        out = [qm.lane(c) for c in qm.VOTERS] + ["controller"]
        out += [bk.lane(b) for b in self.broker_ids] + ["admin"]
        if self.bounds.consumer:
            out.append("consumer")
        if self.bounds.records:
            out.append("producer")
        if self.bounds.members:
            out.append("group")
        return out
