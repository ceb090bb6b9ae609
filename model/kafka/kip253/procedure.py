"""KIP-253's partition procedure, a feature of the ZooKeeper-era cluster (``zk.cluster``):
partition expansion and deletion with in-order keyed delivery, on one broker.

Each action is a tuple whose first element is its kind. Steps live with their component
(controller.py, clients.py, group.py; the broker's handling of the controller's requests
is the cluster's, ``zk.brokers``) and take the cluster's one step signature; this module
lists the enabled actions in a fixed order.
"""
from __future__ import annotations

from kmc.model.kafka import broker as bk
from kmc.model.kafka import controller as election
from kmc.model.kafka.broker import Broker
from kmc.model.kafka.clients import range_assign
from kmc.model.kafka.kip253 import broker, clients, controller, display, group
from kmc.model.kafka.kip253 import znodes as zn
from kmc.model.kafka.kip253.channels import BROKER, NET, heads_to
from kmc.model.kafka.kip253.config import Config
from kmc.model.kafka.kip253.controller import IDLE
from kmc.model.kafka.kip253.state import Group, Part, Producer
from kmc.model.kafka.store import ZERO_ID
from kmc.model.kafka.zk.cluster import Cluster
from kmc.model.kafka.zk.state import Admin, Budget, Client, Ghost, World
from kmc.model.kafka.zk.variants import flags as zk_flags

FAILOVER = "failover"
#: controller candidates: a failover elects the other one
CANDIDATES = 2

#: controller steps a phase can enable (the cluster lists the failover, after them all)
_PHASE_STEPS = {
    IDLE: ("ctrl-expand-count", "ctrl-shrink-record", "ctrl-check-drained"),
    "expand-bump": ("ctrl-expand-bump",),
    "expand-lair": ("ctrl-expand-leader-and-isr",),
    "expand-create": ("ctrl-expand-create",),
    "expand-online": ("ctrl-expand-online",),
    "shrink-bump": ("ctrl-shrink-record", "ctrl-shrink-bump"),
    "shrink-lair": ("ctrl-shrink-leader-and-isr",),
    "shrink-um": ("ctrl-shrink-update-metadata",),
    "remove-assignment": ("ctrl-remove-assignment",),
    "remove-znode": ("ctrl-remove-znode",),
    "recover": ("ctrl-recover",),
    "resync-um": ("ctrl-resync-update-metadata",),
}


def _as_candidate(step):
    """Controller actions name the candidate that takes them (its lane in pictures)."""
    def run(m, w, candidate):
        return step(m, w) if candidate == w.ctl.active else None
    run.__wrapped__, run.__doc__ = step, step.__doc__  # the step's KIP citation
    return run


#: every action kind, in listing order (coverage reports the ones that never fired)
ACTION_NAMES = ("admin-alter",) + tuple(controller.STEPS) + (
    FAILOVER, "deliver-LeaderAndIsr", "deliver-UpdateMetadata", "deliver-StopReplica", "produce",
    "producer-refresh", "group-rebalance", "report-position", "lookup-epochs", "unblock",
    "member-deliver", "delete-records")


def partition_procedure(cfg: Config, *, liveness: bool, bookkeeping: bool) -> Cluster:
    """The cluster running KIP-253's procedure as ``cfg`` says. Its broker's requests
    are handled on the ``legacy`` release line (KIP-253 was written for ZooKeeper-era
    Kafka before topic IDs; the procedure's own variant is ``cfg.flags``), over FIFO
    channels, and a StopReplica deletes the log at once (no deleting/ step)."""
    return Cluster((Procedure(cfg, liveness, bookkeeping),), flags=zk_flags("legacy"),
                   net=NET, purge_delay=False, failovers=cfg.failovers)


#: the topic lifecycle's admin script, clients and fault budgets, which the procedure's
#: scenarios do not use: no CreateTopics or DeleteTopics, no client of the datapath, no
#: broker crash or reassignment (the procedure's failovers are counted by controller
#: epoch, ``failover``); its AlterTopic script starts at the first entry
_ADMIN = Admin("done", 0, 0, ZERO_ID, ())
_NO_CLIENT = Client(None, 0, ())
_NO_BUDGET = Budget(0, 0, 0)


class Procedure:
    """The AlterTopic script, the controller's expansion and deletion steps and its
    recovery after a failover, keyed producers, a consumer group and DeleteRecords (the
    scenario's ``cfg``)."""
    name = "procedure"
    title = "partitions"
    #: KIP-253's controller never reads a StopReplica's answer: none is sent
    reads_stop_replica_answers = False
    #: action kind -> step(model, world, *action arguments) -> next world or None (the
    #: step reads the scenario's ``Config`` as ``m.cfg``)
    steps = {
        "admin-alter": clients.alter_topic,
        **{name: _as_candidate(step) for name, step in controller.STEPS.items()},
        "produce": clients.produce,
        "producer-refresh": clients.refresh_metadata,
        "group-rebalance": group.rebalance,
        "report-position": group.report_position,
        "lookup-epochs": group.lookup_epochs,
        "unblock": group.unblock,
        "member-deliver": group.deliver,
        "delete-records": clients.delete_records,
    }
    partition_fields = None

    def __init__(self, cfg: Config, liveness: bool, bookkeeping: bool):
        self.cfg = cfg
        self.liveness = liveness  # also the liveness properties (-p liveness=true)
        self.bookkeeping = bookkeeping  # also bookkeeping_properties (-p bookkeeping=true)

    def parameters(self) -> dict:
        return {"cfg": self.cfg, "liveness": self.liveness, "bookkeeping": self.bookkeeping}

    def initial(self, m) -> World:
        """A settled topic with ``cfg.start`` partitions: if start > N, partitions N.. came
        from an expansion long ago (their afterCreation map names epoch 0; the old
        partitions' epochs were bumped to 1) and the group has caught up with it."""
        cfg = m.cfg
        n, split = cfg.start, cfg.start > cfg.N
        znodes = tuple(zn.new_znode(1 if split else 0) if p < cfg.N else
                       zn.new_znode(0, tuple((q, 0) for q in range(cfg.N)))
                       for p in range(n))
        parts = [broker.new_partition(p, z.leader_epoch) for p, z in enumerate(znodes)]
        logs, hosted = tuple(x[0] for x in parts), tuple(x[1] for x in parts)
        members = tuple(tuple(Part(p, (), (), True) for p in ps)
                        for ps in range_assign(range(n), cfg.members))
        zeros = (0,) * cfg.pmax
        return World(
            store=zn.initial(n, znodes),
            ctl=election.initial(CANDIDATES),
            mem=election.Memory(phase=IDLE, count=n),
            brokers=(Broker(bk.UP, logs, hosted, (), election.FIRST_EPOCH,
                            election.FIRST_EPOCH, n, (n, n)),),
            net=(),
            admin=_ADMIN,
            producer=_NO_CLIENT,
            consumer=_NO_CLIENT,
            budget=_NO_BUDGET,
            ghost=Ghost(delivered=tuple(tuple(() for _ in cfg.keys) for _ in cfg.scripts)),
            producers=tuple(Producer(n, 0, False) for _ in cfg.scripts),
            group=Group((n, n), members, zeros, zeros, False),
        )

    # ---- actions ------------------------------------------------------------------------
    def candidates(self, m, w):
        """Actions worth trying, in a fixed order. The cheap pre-checks here only skip
        actions whose step would return None; the steps check their guards in full."""
        cfg = m.cfg
        if w.admin.alters < len(cfg.ops):
            yield ("admin-alter",)
        me = w.ctl.active
        for name in _PHASE_STEPS[w.mem.phase]:
            yield (name, me)
        for msg in heads_to(w.net, BROKER, m.net):
            yield ("deliver", msg)
        br = broker.the_broker(w)
        meta = br.meta
        for i, pr in enumerate(w.producers):
            if pr.sent < len(cfg.scripts[i]):
                if not pr.stale:
                    yield ("produce", i)
                if pr.stale or pr.count != meta[0]:
                    yield ("producer-refresh", i)
        g = w.group
        if g.rejoin or g.basis != meta:
            yield ("group-rebalance",)
        interest = group.interesting(g) if cfg.flags.consumer_blocking else ()
        committed, reported = g.committed, g.reported
        for c, parts in enumerate(g.members):
            for part in parts:
                p = part.p
                if not part.started:
                    yield ("unblock", c, p) if part.waits is not None \
                        else ("lookup-epochs", c, p)
                elif not g.rejoin:
                    log = bk.log_of(br, p)
                    if log is not None and committed[p] < len(log.records):
                        yield ("member-deliver", c, p)
                if p in interest and reported[p] != committed[p]:
                    yield ("report-position", c, p)
        for p in controller.marked(w.store):
            yield ("delete-records", p)

    def actions(self, m, w):
        """The enabled actions (a trace's action index counts these)."""
        return [a for a in self.candidates(m, w) if m.next_state(w, a) is not None]

    def on_elected(self, m, old, w):
        """After a failover (``zk.failover``): the new controller recovers the procedure."""
        return controller.on_elected(m, old, w)

    # ---- properties, fairness -------------------------------------------------------------
    def properties(self, m):
        from kmc.model.kafka.kip253.bookkeeping_properties import bookkeeping_for
        from kmc.model.kafka.kip253.liveness import liveness_for
        from kmc.model.kafka.kip253.properties import properties_for, relations_view
        view = relations_view(m.cfg)  # one view: its memos serve every property
        return list(properties_for(m.cfg, view)) + \
            (bookkeeping_for(m.cfg) if m.bookkeeping else []) + \
            (liveness_for(m.cfg, view) if m.liveness else [])

    def weakly_fair(self, m):  # every protocol step (model.kafka.kip253.liveness)
        from kmc.model.kafka.kip253.liveness import weakly_fair
        return weakly_fair(m)

    def strongly_fair(self, m):
        return ()

    def symmetric(self, m) -> bool:
        return False  # one broker: no broker renaming

    def is_fault(self, a) -> bool:
        return a[0] == FAILOVER

    def action_kind(self, a) -> str:
        """A failover is a fault, the admin's AlterTopic an input, the rest protocol."""
        return "fault" if a[0] == FAILOVER else "input" if a[0] == "admin-alter" else "step"

    # ---- display and sequence pictures ----------------------------------------------------
    def action_name(self, m, a) -> str:
        """The action's kind; a delivery's names the message, as in the topic lifecycle
        (``deliver-LeaderAndIsr``)."""
        return f"deliver-{a[1].kind}" if a[0] == "deliver" else a[0]

    def action_names(self, m):
        return ACTION_NAMES

    def format_action(self, a) -> str:
        return display.format_action(a)

    def format_state(self, w) -> str:
        return display.format_state(w)

    def name_components(self, m, js):
        """Producers as ``producerI``, the group's members as ``consumerC``."""
        js["producers"] = {f"producer{i}": pr for i, pr in enumerate(js["producers"])}
        js["group"]["members"] = {f"consumer{c}": mb
                                  for c, mb in enumerate(js["group"]["members"])}
        return js

    def action_actor(self, a) -> str:
        return display.actor(a)

    def action_message(self, m, a, state=None):
        return display.message(m, a, state)

    def lanes(self, m):
        return display.lanes(m.cfg, CANDIDATES)
