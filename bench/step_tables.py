"""Tables of step answers for the ZooKeeper-era cluster's successor function, keyed by
the fields each step read: the design ``step_tables_bench.py`` measures (its docstring
says how it works). Not part of the product: no explorer uses it.
"""
from __future__ import annotations

from operator import itemgetter

from kmc.model.kafka.zk import failover
from kmc.model.kafka.zk.state import World
from kmc.model.records import fast_replace

FIELDS = World._fields
NET = FIELDS.index("net")
DELIVER, SEND, DROP = 0, 1, 2
#: the field indices read since the last clear (the recording World appends to it)
READ: list = []
#: (question, answer) of each question a recorded step asked the messages in flight
ASKED: list = []


class NetRead(Exception):
    """A step read the messages in flight other than by delivering, sending or dropping."""


class StandIn:
    """The network a recorded step sees: the operations applied to it so far, and the
    network it stands for (which answers the step's questions)."""
    __slots__ = ("ops", "base")

    def __init__(self, ops: tuple, base):
        self.ops, self.base = ops, base

    def _read(self, *_a, **_k):
        raise NetRead

    __iter__ = __len__ = __getitem__ = __eq__ = __hash__ = __lt__ = __bool__ = _read
    __contains__ = _read


class Recorder:
    """``model.net`` while a step is recorded: deliveries, sends and drops on the stand-in
    are recorded, questions (``ask``) asked before any of those answered and recorded,
    any other use of it (``any`` included) raises ``NetRead``; a real network value is served as
    usual."""

    def __init__(self, real):
        self.real, self.ordered = real, real.ordered

    def deliver(self, net, msg):
        if type(net) is StandIn:
            return StandIn(net.ops + ((DELIVER, msg),), net.base)
        return self.real.deliver(net, msg)

    lose = deliver

    def send(self, net, msg):
        if type(net) is StandIn:
            return StandIn(net.ops + ((SEND, msg),), net.base)
        return self.real.send(net, msg)

    def send_all(self, net, msgs):
        for x in msgs:
            net = self.send(net, x)
        return net

    def drop(self, net, pred):
        if type(net) is StandIn:
            return StandIn(net.ops + ((DROP, pred),), net.base)
        return self.real.drop(net, pred)

    def ask(self, net, question):
        if type(net) is not StandIn:
            return self.real.ask(net, question)
        if net.ops:
            raise NetRead  # a question after a change: not tabled
        answer = self.real.ask(net.base, question)
        try:
            hash(answer)
        except TypeError:
            raise NetRead from None  # an answer that cannot key a table
        ASKED.append((question, answer))
        return answer

    def __getattr__(self, name):  # every other reading of the network
        real = getattr(self.real, name)

        def guarded(net, *a, **k):
            if type(net) is StandIn:
                raise NetRead
            return real(net, *a, **k)
        return guarded


class Question:
    """A table entry whose answer depends on a question about the messages in flight
    (``model.net.ask``): the question the step asked, and an entry per answer."""
    __slots__ = ("question", "label", "then")

    def __init__(self, question, label):
        self.question, self.label, self.then = question, label, {}


def _meaning(question):
    """What a question asks, as a value: its code, defaults and the values it closes
    over (two questions made by one function for the same partition are one question),
    or the question itself when one of those is not hashable."""
    cells = question.__closure__ or ()
    try:
        got = (question.__code__, question.__defaults__,
               tuple(c.cell_contents for c in cells))
        hash(got)
        return got
    except (AttributeError, TypeError, ValueError):
        return question


class Kind:
    """One kind of step and its table: the fields its key is made of (every field the
    kind read so far), the key function, and the table's hits and misses."""
    __slots__ = ("name", "fields", "key", "table", "hits", "misses")

    def __init__(self, name: str):
        self.name, self.fields, self.key, self.table = name, (), None, {}
        self.hits = self.misses = 0


class Recording(World):
    """A World whose field reads are appended to ``READ``; its ``_replace`` makes another,
    so reads after a step's first update are recorded too."""
    __slots__ = ()


for _i, _name in enumerate(FIELDS):
    setattr(Recording, _name, property(lambda self, _i=_i, _g=tuple.__getitem__:
                                       (READ.append(_i), _g(self, _i))[1]))
fast_replace(Recording)


class Tables:
    """The tabled successor function of one cluster model (``step_tables_bench.py``
    says how it works)."""

    def __init__(self, model):
        self.m, self.real, self.rec = model, model.net, Recorder(model.net)
        self.ids = [{} for _ in FIELDS]
        self.vals = [[] for _ in FIELDS]
        self.kinds: dict = {}     # name -> Kind
        self.net_kinds: set = set()
        self.net_ops: dict = {}
        self.said: dict = {}      # (network, question) -> its answer
        self.offered: dict = {}   # (feature, network) -> the deliveries it offers
        self.labels: dict = {}    # a message, a drop's or a question's predicate -> its number
        self.actions: dict = {}   # an action -> its number
        self.plan = [(i, f, hasattr(f, "delivery_candidates"))
                     for i, f in enumerate(model.features)]

    def number(self, i, v) -> int:
        x = self.ids[i].get(v)
        if x is None:
            x = self.ids[i][v] = len(self.vals[i])
            self.vals[i].append(v)
        return x

    def label(self, v) -> int:
        return self.labels.setdefault(v, len(self.labels))

    def action_label(self, a) -> int:
        return self.actions.setdefault(a, len(self.actions))

    def encode(self, w) -> tuple:
        return tuple(self.number(i, v) for i, v in enumerate(w))

    def decode(self, s) -> World:
        return tuple.__new__(World, [self.vals[i][x] for i, x in enumerate(s)])

    def _record(self, fn, s, args, stand_in: bool):
        fields = list(self.decode(s))
        if stand_in:
            fields[NET] = StandIn((), fields[NET])
        w = tuple.__new__(Recording, fields)
        READ.clear()
        ASKED.clear()
        m = self.m
        m.net = self.rec if stand_in else self.real
        try:
            t = fn(m, w, *args)
        finally:
            m.net = self.real
        reads = set(READ)
        if stand_in:
            reads.discard(NET)
            if isinstance(t, World) and type(t[NET]) is not StandIn:
                raise NetRead  # a network made anew from the messages in flight
        else:
            reads.add(NET)
        return w, t, reads, list(ASKED)

    def _answer(self, kind, fn, s, args):
        """(the fields read, the questions asked and their answers, the answer: None, or
        (written fields, network operations))"""
        try:
            if kind.name in self.net_kinds:
                raise NetRead
            w, t, reads, asked = self._record(fn, s, args, True)
        except NetRead:
            self.net_kinds.add(kind.name)
            w, t, reads, asked = self._record(fn, s, args, False)
        if not isinstance(t, World):
            return reads, asked, t  # None (not enabled), or the candidates' parts
        stand_in = type(t[NET]) is StandIn
        written = tuple((i, self.number(i, t[i])) for i in range(len(FIELDS))
                        if not (stand_in and i == NET) and t[i] is not tuple.__getitem__(w, i))
        ops = tuple((c, a, self.label(a)) for c, a in t[NET].ops) if stand_in else ()
        return reads, asked, (written, ops)

    def kind(self, name: str) -> Kind:
        k = self.kinds.get(name)
        if k is None:
            k = self.kinds[name] = Kind(name)
        return k

    def _keep(self, kind, s, reads, asked, answer, label):
        if kind.key is None or not reads <= set(kind.fields):
            kind.fields = f = tuple(sorted(set(kind.fields) | reads))
            kind.key = itemgetter(*f) if len(f) > 1 else (lambda s, i=f[0]: s[i])
            kind.table = {}
        table, k = kind.table, (label, kind.key(s))
        for question, said in asked:  # in the order the step asked them
            node = table.get(k)
            if type(node) is not Question:
                node = table[k] = Question(question, self.label(_meaning(question)))
            table, k = node.then, said
        table[k] = answer

    def _said(self, s, q):
        """The answer of state ``s``'s messages in flight to question ``q``."""
        k = (s[NET], q.label)
        got = self.said.get(k, self)
        if got is self:
            got = self.said[k] = self.real.ask(self.vals[NET][s[NET]], q.question)
        return got

    def step(self, kind, label, fn, s, args):
        key = kind.key
        if key is not None:
            got = kind.table.get((label, key(s)), 0)
            while type(got) is Question:
                got = got.then.get(self._said(s, got), 0)
            if got != 0:
                kind.hits += 1
                return got
        kind.misses += 1
        reads, asked, answer = self._answer(kind, fn, s, args)
        self._keep(kind, s, reads, asked, answer, label)
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
        """[(kind, label, step, arguments, action)] of state ``s``, in the model's order:
        per feature, the deliveries the network offers (tabled by the network alone,
        when the feature lists them apart) and its other candidates, then the
        controller's failover; all but those deliveries tabled as one step."""
        parts = self.step(self.kind("candidates"), 0, self._parts, s, ())
        out = []
        for (i, f, split), part in zip(self.plan, parts):
            if split:
                k = (i, s[NET])
                got = self.offered.get(k)
                if got is None:
                    got = self.offered[k] = self._entries(
                        f.delivery_candidates(self.m, self.vals[NET][s[NET]]))
                out += got
            out += part
        out += parts[-1]
        return out

    def _parts(self, m, w) -> tuple:
        """Per feature its candidates (its non-deliveries, when it lists deliveries apart),
        then the failover's."""
        parts = [self._entries(f.other_candidates(m, w) if split else f.candidates(m, w))
                 for _i, f, split in self.plan]
        return tuple(parts) + (self._entries(failover.candidates(m, w)),)

    def _entries(self, acts) -> list:
        m, out = self.m, []
        for a in acts:
            if a[0] == "deliver":
                kind, fn, args = "deliver " + a[1].kind, m._deliver[a[1].kind], (a[1],)
            elif a[0] == "failover":
                kind, fn, args = a[0], failover.failover, a[1:]
            else:
                kind, fn, args = a[0], m._steps[a[0]], a[1:]
            out.append((self.kind(kind), self.action_label(a), fn, args, a))
        return out

    def successors(self, s) -> list:
        out = []
        for kind, label, fn, args, a in self.candidates(s):
            answer = self.step(kind, label, fn, s, args)
            if answer is not None:
                out.append((a, self.apply(s, answer)))
        return out


def bfs_count(init, successors, max_states=None, level=None):
    """(distinct states, transitions) of a plain BFS with a set; it stops at the first
    level boundary past ``max_states`` states, and calls ``level(depth, new states)``
    after each level."""
    seen, frontier, moves, depth = {init}, [init], 0, 0
    while frontier and (max_states is None or len(seen) < max_states):
        nxt = []
        for s in frontier:
            for _a, t in successors(s):
                moves += 1
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier, depth = nxt, depth + 1
        if level is not None:
            level(depth, len(nxt))
    return seen, moves
