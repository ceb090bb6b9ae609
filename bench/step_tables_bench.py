"""What tables of step answers, keyed by the fields each step read, would make of the
ZooKeeper-era cluster's successor function: a measurement of a design, not the product.

    python bench/step_tables_bench.py                          # lifecycle-large kip516
    python bench/step_tables_bench.py stale-read --variant legacy
    python bench/step_tables_bench.py split-merge-spark --verify 0

The design: a state is a tuple of numbers, one per field of ``World``, each the index of
the field's value in a table of the values met. A step (a delivery's handler, an admin
request, a crash...) runs once on a decoded World whose field reads are recorded; its
answer (the fields it wrote, as numbers) is kept under the numbers of the fields it read.
Every later state that agrees on those fields takes the answer from the table. Per step
kind the key is the union of every field the kind read so far (a read outside it widens
the key and empties the kind's table), which is sound for deterministic steps: a state
that agrees on the fields read takes the same path. The messages in flight are most of
the state space's variety, so a step does not read them as a field: it runs on a stand-in
network that records its deliveries, sends and drops as operations, replayed on each
state's own messages (a table of its own maps (network, operation) to the next network).
A step that reads the network otherwise (a scan for a message in flight) raises on the
stand-in; its kind then reads the network as a field. Memo tables are off while a step
is recorded (an answer taken from one would hide its reads). The candidate actions of a
state are tabled the same way. Reads are recorded where a step names a field
(``w.brokers``); the cluster's steps read the World no other way, which the verification
below checks by its results.

Prints, for a plain BFS over World states with ``model.successors`` and for the tabled
BFS over number states (twice: with empty tables, then with the tables the first run
filled): distinct states, transitions and CPU seconds; then per step kind its table's
hits and misses and the fields it read. ``--verify N`` compares the successors of N
sampled states (0: none) with the model's own, decoded. Figures, never assertions.
"""
from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from operator import itemgetter

from kmc.api import build
from kmc.model import memo
from kmc.model.kafka.zk import failover
from kmc.model.kafka.zk.cluster import Cluster
from kmc.model.kafka.zk.state import World
from kmc.model.records import fast_replace

FIELDS = World._fields
NET = FIELDS.index("net")
DELIVER, SEND, DROP = 0, 1, 2
#: the field indices read since the last clear (the recording World appends to it)
READ: list = []


class NetRead(Exception):
    """A step read the messages in flight other than by delivering, sending or dropping."""


class StandIn:
    """The network a recorded step sees: the operations applied to it so far."""
    __slots__ = ("ops",)

    def __init__(self, ops: tuple):
        self.ops = ops

    def _read(self, *_a, **_k):
        raise NetRead

    __iter__ = __len__ = __getitem__ = __eq__ = __hash__ = __lt__ = __bool__ = _read
    __contains__ = _read


class Recorder:
    """``model.net`` while a step is recorded: operations on the stand-in are recorded,
    any other use of it raises ``NetRead``; a real network value is served as usual."""

    def __init__(self, real):
        self.real, self.ordered = real, real.ordered

    def _op(self, code, name):
        def op(net, arg):
            if type(net) is StandIn:
                return StandIn(net.ops + ((code, arg),))
            return getattr(self.real, name)(net, arg)
        return op

    def __getattr__(self, name):
        if name in ("deliver", "lose"):
            return self._op(DELIVER, name)
        if name == "send":
            return self._op(SEND, name)
        if name == "drop":
            return self._op(DROP, name)
        if name == "send_all":
            send = self._op(SEND, "send")

            def send_all(net, msgs):
                for x in msgs:
                    net = send(net, x)
                return net
            return send_all
        real = getattr(self.real, name)

        def guarded(net, *a, **k):
            if type(net) is StandIn:
                raise NetRead
            return real(net, *a, **k)
        return guarded


class Recording(World):
    """A World whose field reads are appended to ``READ``; its ``_replace`` makes another,
    so reads after a step's first update are recorded too."""
    __slots__ = ()


for _i, _name in enumerate(FIELDS):
    setattr(Recording, _name, property(lambda self, _i=_i, _g=tuple.__getitem__:
                                       (READ.append(_i), _g(self, _i))[1]))
fast_replace(Recording)


class Tables:
    """The tabled successor function of one cluster model (see the module docstring)."""

    def __init__(self, model):
        self.m, self.real, self.rec = model, model.net, Recorder(model.net)
        self.ids = [{} for _ in FIELDS]
        self.vals = [[] for _ in FIELDS]
        self.keys: dict = {}      # kind -> the field indices its table is keyed by
        self.getters: dict = {}
        self.tables: dict = {}
        self.net_kinds: set = set()
        self.net_ops: dict = {}
        self.labels: dict = {}    # an action or a drop's predicate -> its number
        self.hits: dict = {}
        self.misses: dict = {}

    def number(self, i, v) -> int:
        x = self.ids[i].get(v)
        if x is None:
            x = self.ids[i][v] = len(self.vals[i])
            self.vals[i].append(v)
        return x

    def label(self, v) -> int:
        return self.labels.setdefault(v, len(self.labels))

    def encode(self, w) -> tuple:
        return tuple(self.number(i, v) for i, v in enumerate(w))

    def decode(self, s) -> World:
        return tuple.__new__(World, [self.vals[i][x] for i, x in enumerate(s)])

    def _record(self, fn, s, args, stand_in: bool):
        fields = list(self.decode(s))
        if stand_in:
            fields[NET] = StandIn(())
        w = tuple.__new__(Recording, fields)
        READ.clear()
        m = self.m
        m.net = self.rec if stand_in else self.real
        on, memo._on[0] = memo._on[0], False
        try:
            t = fn(m, w, *args)
        finally:
            m.net, memo._on[0] = self.real, on
        reads = set(READ)
        if stand_in:
            reads.discard(NET)
            if isinstance(t, World) and type(t[NET]) is not StandIn:
                raise NetRead  # a network made anew from the messages in flight
        else:
            reads.add(NET)
        return w, t, reads

    def _answer(self, kind, fn, s, args):
        """(the fields read, the answer: None, or (written fields, network operations))"""
        try:
            if kind in self.net_kinds:
                raise NetRead
            w, t, reads = self._record(fn, s, args, True)
        except NetRead:
            self.net_kinds.add(kind)
            w, t, reads = self._record(fn, s, args, False)
        if not isinstance(t, World):
            return reads, t  # None (the step is not enabled), or the candidates
        stand_in = type(t[NET]) is StandIn
        written = tuple((i, self.number(i, t[i])) for i in range(len(FIELDS))
                        if not (stand_in and i == NET) and t[i] is not tuple.__getitem__(w, i))
        ops = tuple((c, a, self.label(a)) for c, a in t[NET].ops) if stand_in else ()
        return reads, (written, ops)

    def _keep(self, kind, s, reads, answer, label):
        key = self.keys.get(kind, ())
        if not reads <= set(key):
            key = self.keys[kind] = tuple(sorted(set(key) | reads))
            self.getters[kind] = itemgetter(*key) if len(key) > 1 else \
                (lambda s, i=key[0]: s[i])
            self.tables[kind] = {}
        self.tables[kind][(label, self.getters[kind](s))] = answer

    def step(self, kind, label, fn, s, args):
        g = self.getters.get(kind)
        if g is not None:
            got = self.tables[kind].get((label, g(s)), 0)
            if got != 0:
                self.hits[kind] = self.hits.get(kind, 0) + 1
                return got
        self.misses[kind] = self.misses.get(kind, 0) + 1
        reads, answer = self._answer(kind, fn, s, args)
        self._keep(kind, s, reads, answer, label)
        return answer

    def apply(self, s, answer):
        written, ops = answer
        out = list(s)
        for i, x in written:
            out[i] = x
        if ops:
            n, table = out[NET], self.net_ops
            for code, arg, label in ops:
                nxt = table.get((n, code, label))
                if nxt is None:
                    net = self.vals[NET][n]
                    net = (self.real.deliver(net, arg) if code == DELIVER else
                           self.real.send(net, arg) if code == SEND else
                           self.real.drop(net, arg))
                    nxt = table[(n, code, label)] = self.number(NET, net)
                n = nxt
            out[NET] = n
        return tuple(out)

    def candidates(self, s) -> list:
        """[(kind, label, step, arguments, action)] of state ``s``, tabled as a step."""
        return self.step("candidates", 0, self._candidates, s, ())

    def _candidates(self, m, w):
        acts = [a for f in m.features for a in f.candidates(m, w)]
        acts += failover.candidates(m, w)
        out = []
        for a in acts:
            if a[0] == "deliver":
                kind, fn, args = "deliver " + a[1].kind, m._deliver[a[1].kind], (a[1],)
            else:
                kind, fn, args = a[0], m._steps[a[0]], a[1:]
            out.append((kind, self.label(("action",) + a), fn, args, a))
        return out

    def successors(self, s) -> list:
        out = []
        for kind, label, fn, args, a in self.candidates(s):
            answer = self.step(kind, label, fn, s, args)
            if answer is not None:
                out.append((a, self.apply(s, answer)))
        return out


def bfs_count(init, successors):
    """(distinct states, transitions) of a plain BFS with a set."""
    seen, frontier, moves = {init}, [init], 0
    while frontier:
        nxt = []
        for s in frontier:
            for _a, t in successors(s):
                moves += 1
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return seen, moves


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="step_tables_bench", description=__doc__.splitlines()[0])
    ap.add_argument("scenario", nargs="?", default="lifecycle-large")
    ap.add_argument("--variant", default=None, help="default: kip516 for lifecycle-large")
    ap.add_argument("-p", dest="params", action="append", default=[], metavar="NAME=INT")
    ap.add_argument("--verify", type=int, default=3000, metavar="N")
    a = ap.parse_args(argv)
    variant = a.variant or ("kip516" if a.scenario == "lifecycle-large" else None)
    model = build(a.scenario, variant, {k: int(v) for k, v in
                                        (p.split("=", 1) for p in a.params)})
    if type(model) is not Cluster:
        print(f"step_tables_bench: {a.scenario} is not a ZooKeeper-era cluster scenario",
              file=sys.stderr)
        return 2
    gc.disable()
    clock = time.process_time
    t = clock()
    seen, moves = bfs_count(model.init_states()[0], model.successors)
    print(f"plain BFS:  {len(seen):,} states, {moves:,} transitions, {clock() - t:.2f} CPU s")
    tables = Tables(model)
    init = tables.encode(model.init_states()[0])
    for run in ("empty", "filled"):
        t = clock()
        states, moves = bfs_count(init, tables.successors)
        el = clock() - t
        print(f"tabled BFS, tables {run}: {len(states):,} states, {moves:,} transitions, "
              f"{el:.2f} CPU s ({len(states) / el:,.0f} states/s)")
        if run == "empty":
            hits, misses = dict(tables.hits), dict(tables.misses)
    for kind in sorted(misses, key=lambda k: -misses[k]):
        read = ", ".join(FIELDS[i] for i in tables.keys.get(kind, ()))
        print(f"  {kind:28s} {hits.get(kind, 0):9,} hits {misses[kind]:9,} misses   reads {read}")
    print("  values per field:", ", ".join(f"{f} {len(v):,}" for f, v in zip(FIELDS, tables.vals)))
    sample = random.Random(1).sample(sorted(states), min(a.verify, len(states)))
    wrong = sum(model.successors(tables.decode(s)) !=
                [(x, tables.decode(y)) for x, y in tables.successors(s)] for s in sample)
    print(f"verified: {len(sample):,} sampled states, {wrong} whose successors differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
