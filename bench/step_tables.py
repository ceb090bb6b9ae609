"""Tables of step answers for the ZooKeeper-era cluster's successor function, keyed by
the fields each step read: the design ``step_tables_bench.py`` measures (its docstring
says how it works), and ``step_tables_expander.py`` runs the product's BFS over. Not
part of the product: no explorer uses it.

A step that reads the recorded World other than field by field (indexes, iterates,
hashes, compares or prints it) raises ``WholeRead`` there, and its kind then reads
every field. ``entries()`` says how large the tables are; they only grow.
"""
from __future__ import annotations

from operator import itemgetter

from kmc.model.kafka.zk import failover
from kmc.model.kafka.zk.state import World

FIELDS = World._fields
NET = FIELDS.index("net")
DELIVER, SEND, DROP = 0, 1, 2
#: the field indices read since the last clear (the recording World appends to it)
READ: list = []
#: (question, answer) of each question a recorded step asked the messages in flight
ASKED: list = []
_getitem, _iter, _at = tuple.__getitem__, tuple.__iter__, list.__getitem__
_AT = {name: i for i, name in enumerate(FIELDS)}
ALL = frozenset(range(len(FIELDS)))


class NetRead(Exception):
    """A step read the messages in flight other than by delivering, sending, dropping or
    asking."""


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
    are recorded, questions asked before any of those answered and recorded, any other
    use of the stand-in raises ``NetRead``; a real network value is served as usual."""

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
    """A table entry whose answer depends on a question about the messages in flight:
    the question the step asked, its label, and an entry per answer."""
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
    __slots__ = ("name", "fields", "read", "key", "table", "hits", "misses")

    def __init__(self, name: str):
        self.name, self.fields, self.read, self.key, self.table = name, (), set(), None, {}
        self.hits = self.misses = 0


class WholeRead(Exception):
    """A step read the World other than field by field (indexed, iterated, hashed,
    compared or printed it)."""


class Recording(World):
    """A World whose field reads are appended to ``READ``; its ``_replace`` makes another,
    so reads after a step's first update are recorded too. Any other reading of it
    raises ``WholeRead``: the step's kind then reads every field."""
    __slots__ = ()

    def _whole(self, *_a, **_k):
        raise WholeRead

    __getitem__ = __iter__ = __len__ = __contains__ = __hash__ = __eq__ = __ne__ = \
        __lt__ = __le__ = __gt__ = __ge__ = __repr__ = __reduce__ = count = index = _whole

    def _replace(self, /, **changes):
        values = list(_iter(self))
        for name, v in changes.items():
            values[_AT[name]] = v
        return tuple.__new__(Recording, values)


for _i, _name in enumerate(FIELDS):
    setattr(Recording, _name, property(lambda self, _i=_i, _g=_getitem:
                                       (READ.append(_i), _g(self, _i))[1]))


def _nothing(_s) -> tuple:
    """The key of a step that read no field."""
    return ()


class Tables:
    """The tabled successor function of one cluster model (``step_tables_bench.py``
    says how it works)."""

    def __init__(self, model):
        self.m, self.real, self.rec = model, model.net, Recorder(model.net)
        self.ids = [{} for _ in FIELDS]
        self.vals = [[] for _ in FIELDS]
        self.kinds: dict = {}     # name -> Kind
        self.net_kinds: set = set()    # the kinds that read the network as a field
        self.whole_kinds: set = set()  # the kinds that read the World whole
        self.net_ops: dict = {}   # (network, operation, label) -> the next network
        self.said: dict = {}      # (network, question) -> its answer
        self.offered: dict = {}   # (feature, network) -> the deliveries it offers
        self.labels: dict = {}    # a message, a drop's or a question's predicate -> its number
        self.actions: dict = {}   # an action -> its number
        self.plan = [(i, f, hasattr(f, "delivery_candidates"))
                     for i, f in enumerate(model.features)]
        self.listing = self.kind("candidates")  # the candidates' own kind

    def entries(self) -> int:
        """How many values and answers the tables hold (the answers behind a question
        count as one)."""
        return (sum(map(len, self.vals)) + sum(len(k.table) for k in self.kinds.values())
                + len(self.net_ops) + len(self.said) + len(self.offered) + len(self.labels)
                + len(self.actions))

    def number(self, i, v) -> int:
        x = self.ids[i].get(v)
        if x is None:
            x = self.ids[i][v] = len(self.vals[i])
            self.vals[i].append(v)
        return x

    def label(self, v) -> int:
        return self.labels.setdefault(v, len(self.labels))

    def encode(self, w) -> tuple:
        return tuple([self.number(i, v) for i, v in enumerate(w)])

    def decode(self, s) -> World:
        return tuple.__new__(World, map(_at, self.vals, s))

    def _record(self, fn, s, args, stand_in: bool):
        fields = list(map(_at, self.vals, s))
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
            if isinstance(t, World) and type(_getitem(t, NET)) is not StandIn:
                raise NetRead  # a network made anew from the messages in flight
        else:
            reads.add(NET)
        return w, t, reads, list(ASKED)

    def _run(self, kind, fn, s, args):
        """(the World the step ran on, its answer, the fields read, the questions asked
        and their answers), recorded on the stand-in network unless the kind reads it as
        a field, and run on a plain World when the kind reads the World whole."""
        if kind.name not in self.whole_kinds:
            try:
                if kind.name not in self.net_kinds:
                    try:
                        return self._record(fn, s, args, True)
                    except NetRead:
                        self.net_kinds.add(kind.name)
                return self._record(fn, s, args, False)
            except WholeRead:
                self.whole_kinds.add(kind.name)
        w = self.decode(s)
        return w, fn(self.m, w, *args), set(ALL), []

    def _answer(self, kind, fn, s, args):
        """(the fields read, the questions asked and their answers, the answer: None, or
        (written fields, network operations))"""
        w, t, reads, asked = self._run(kind, fn, s, args)
        if not isinstance(t, World):
            return reads, asked, t  # None (not enabled), or the candidates' parts
        net = _getitem(t, NET)
        stand_in = type(net) is StandIn
        number = self.number
        written = tuple([(i, number(i, v)) for i, v in enumerate(_iter(t))
                         if v is not _getitem(w, i) and not (stand_in and i == NET)])
        ops = tuple([(c, a, self.label(a)) for c, a in net.ops]) if stand_in else ()
        return reads, asked, (written, ops)

    def kind(self, name: str) -> Kind:
        k = self.kinds.get(name)
        if k is None:
            k = self.kinds[name] = Kind(name)
        return k

    def _keep(self, kind, s, reads, asked, answer, label):
        if kind.key is None or not reads <= kind.read:
            kind.read |= reads
            kind.fields = f = tuple(sorted(kind.read))
            kind.key = itemgetter(*f) if len(f) > 1 else \
                (lambda s, i=f[0]: s[i]) if f else _nothing
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
        parts = self.step(self.listing, 0, self._parts, s, ())
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
        m, out, actions = self.m, [], self.actions
        for a in acts:
            if a[0] == "deliver":
                kind, fn, args = "deliver " + a[1].kind, m._deliver[a[1].kind], (a[1],)
            elif a[0] == "failover":
                kind, fn, args = a[0], failover.failover, a[1:]
            else:
                kind, fn, args = a[0], m._steps[a[0]], a[1:]
            label = actions.setdefault(a, len(actions))
            out.append((self.kind(kind), label, fn, args, a))
        return out

    def successors(self, s) -> list:
        """[(action, numbered successor)] of numbered state ``s``, as
        ``Cluster.successors`` gives them for its decoded World."""
        out = []
        step, apply = self.step, self.apply
        for kind, label, fn, args, a in self.candidates(s):
            answer = step(kind, label, fn, s, args)
            if answer is not None:
                out.append((a, apply(s, answer)))
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
