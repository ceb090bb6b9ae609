"""The ZooKeeper-era cluster as one model: features chosen by the scenario.

The state is one ``World`` (``zk.state``): the metadata store, the controller and its
memory, the brokers, the network, the clients. The cluster's own parts serve every
feature: the brokers' handling of the controller's requests (``zk.brokers.DELIVER``), the
network's rules, the controller's election (``model.kafka.controller``). A *feature* adds
the controller procedures, clients and properties of one story:

- the topic lifecycle (``zk.lifecycle``): CreateTopics, DeleteTopics and re-creation,
  CreatePartitions, broker crashes and restarts, reassignment, failover, a producer and a
  consumer (KIP-516, KIP-4, KIP-195);
- KIP-253's partition procedure (``kip253.procedure``): the AlterTopic expansion and
  deletion, keyed producers and a consumer group, on one broker.

A feature lists its candidate actions in a fixed order; the model lists the features' in
the scenario's order, then the controller's failover, and dispatches each action to its
step, with one step signature: ``step(model, world, *action arguments) -> next world or
None``. A delivery (``("deliver", message)``) goes to the cluster's handler of the
message's kind, whichever feature sent it. The failover (``("failover", winner)``,
``zk.failover``) is the cluster's too; each feature's ``on_elected`` then says what its
new controller does.

What a feature's steps read from the model: the brokers' release line (``flags``, the
variant's data), the network's rules (``net``), whether a StopReplica's deletion waits
for the purge step (``purge_delay``), whether the controller reads StopReplica answers
(``stop_replica_answered``), how many failovers a run allows (``failovers``), and each
feature's own parameters (the lifecycle's ``bounds``, the procedure's ``cfg``).

Two features that take the same action kind are refused: both would read and write the
same clients under one name (both have a producer: ``produce`` and its refresh).
"""
from __future__ import annotations

from operator import itemgetter

from kmc.model.contract import Model
from kmc.model.kafka import broker as bk
from kmc.model.kafka.zk import brokers, control, datapath, failover
from kmc.model.kafka.zk.state import FEATURE_FIELDS, TOPIC, format_without

#: the cluster's handling of each message kind a delivery carries: the controller's
#: requests at the brokers, and the answers the lifecycle's controller and followers read
DELIVER = {
    **brokers.DELIVER,
    "StopReplicaResponse": control.on_stop_replica_response,
    "FetchResponse": datapath.on_fetch_response,
}


def _conflict(kinds) -> str:  # pragma: no mutate
    """What is wrong with features that share an action kind (``kinds``: (kind,
    feature) of every feature's steps): an error message."""
    first = {}
    for kind, f in kinds:
        if kind in first:
            return (f"features {first[kind].name} and {f.name} both take {kind!r} "
                    "actions: they cannot run in one scenario")
        first[kind] = f
    return "features share an action kind"


class Cluster(Model):
    """One ZooKeeper-era cluster running ``features`` (see the module docstring)."""

    def __init__(self, features, *, flags, net, purge_delay: bool, failovers: int):
        if not features:
            raise ValueError("a cluster runs at least one feature")  # pragma: no mutate
        kinds = [(kind, f) for f in features for kind in f.steps]
        owner = dict(kinds)
        if len(owner) < len(kinds):  # no scenario runs two features yet: unit-tested
            raise ValueError(_conflict(kinds))  # pragma: no mutate
        self.features = tuple(features)
        self.name = "+".join(f.title for f in self.features)
        self.flags = flags
        self.net = net
        self.purge_delay = purge_delay
        self.failovers = failovers  # controller failovers a run allows (zk.failover)
        self.stop_replica_answered = any(f.reads_stop_replica_answers for f in features)
        for f in self.features:
            for attr, value in f.parameters().items():
                if hasattr(self, attr):  # two features' parameters of one name
                    raise ValueError(  # pragma: no mutate
                        f"feature {f.name}: model attribute {attr!r} is taken")
                setattr(self, attr, value)
        self._owner = owner
        self._steps = {kind: step for f in self.features for kind, step in f.steps.items()}
        self._steps["failover"] = failover.failover
        self._deliver = DELIVER
        self._one = one = self.features[0] if len(self.features) == 1 else None
        self.has_symmetry = one is not None and one.symmetric(self)
        self.partition_fields = one.partition_fields if one is not None else None
        if self.partition_fields:  # tuple(w[i] for i in partition_fields), in C
            self.partition_key = itemgetter(*self.partition_fields)
        self._props = None

    # ---- the contract ---------------------------------------------------------------------
    def init_states(self):
        """The first feature's initial World (its topic, brokers and clients); the other
        features' fields keep their defaults."""
        return [self.features[0].initial(self)]

    def actions(self, w):
        out = []
        for f in self.features:
            out.extend(f.actions(self, w))
        out.extend(failover.candidates(self, w))
        return out

    def next_state(self, w, a):
        kind = a[0]
        if kind == "deliver":
            return self._deliver[a[1].kind](self, w, a[1])
        step = self._steps.get(kind)
        if step is None:
            raise ValueError(f"unknown action {a!r}")  # pragma: no mutate
        return step(self, w, *a[1:])

    def successors(self, w):
        """``Model.successors`` with ``next_state``'s dispatch inlined (the hot path)."""
        out = []
        deliver, steps = self._deliver, self._steps
        for f in self.features:
            for a in f.candidates(self, w):
                if a[0] == "deliver":
                    t = deliver[a[1].kind](self, w, a[1])
                else:
                    t = steps[a[0]](self, w, *a[1:])
                if t is not None:
                    out.append((a, t))
        for a in failover.candidates(self, w):
            t = failover.failover(self, w, a[1])
            if t is not None:
                out.append((a, t))
        return out

    def properties(self):
        if self._props is None:
            self._props = [p for f in self.features for p in f.properties(self)]
        return self._props

    @property
    def weakly_fair(self):
        return tuple(n for f in self.features for n in f.weakly_fair(self))

    @property
    def strongly_fair(self):
        return tuple(n for f in self.features for n in f.strongly_fair(self))

    def representative(self, w):
        return self._one.representative(self, w) if self.has_symmetry else w

    def symmetric_images(self, w):
        return self._one.symmetric_images(self, w) if self.has_symmetry else None

    def code_modules(self):
        """The modules of the features the scenario runs (each imports this one)."""
        return tuple(dict.fromkeys(type(f).__module__ for f in self.features))

    # ---- what each action is, and its display ---------------------------------------------
    def _of(self, a):
        """The feature an action belongs to (a delivery: the first feature's display)."""
        return self._owner.get(a[0], self.features[0])

    def is_fault(self, a) -> bool:
        return self._of(a).is_fault(a)

    def action_kind(self, a) -> str:
        return self._of(a).action_kind(a)

    def action_name(self, a) -> str:
        return self._of(a).action_name(self, a)

    def action_names(self):
        names = []
        for f in self.features:
            names.extend(n for n in f.action_names(self) if n not in names)
        return names

    def format_action(self, a) -> str:
        return self._of(a).format_action(a)

    def format_state(self, w) -> str:
        return self.features[0].format_state(w)

    def state_to_json(self, w):
        """The state with components named as Kafka names them (brokers as ``broker-N``
        with their logs and hosted partitions as ``A-P``:
        ``brokers.broker-2.logs.A-0.records``), then as each feature names its clients;
        the fields of a feature the scenario does not run are left out (they keep their
        initial values)."""
        js = super().state_to_json(w)
        running = {f.name for f in self.features}
        for feature in FEATURE_FIELDS:
            if feature not in running:
                js = format_without(js, feature)
        js["brokers"] = bk.format_brokers(js["brokers"], TOPIC)
        for f in self.features:
            js = f.name_components(self, js)
        return js

    def action_actor(self, a) -> str:
        return self._of(a).action_actor(a)

    def action_message(self, a, state=None):
        return self._of(a).action_message(self, a, state)

    def lanes(self) -> list[str]:
        out = []
        for f in self.features:
            out.extend(x for x in f.lanes(self) if x not in out)
        return out
