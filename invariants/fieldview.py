"""A relational view built from parts, each reading declared fields of a record state.

    view = FieldView(((("brokers",), from_brokers), (("ghost",), from_ghost)),
                     ((("brokers", "store"), derived),))

A part is ``(field names, fn)``: ``fn(state)`` returns a dict of relations (name -> set of
tuples) computed from those fields only (no field: the same relations in every state). A
derived part is ``(field names, inputs, fn)``: ``fn(parts)`` computes its relations from
the relations ``inputs`` of the plain parts (``parts``: every relation they gave), which
read only those fields. Relation names starting with ``_`` are intermediate results for
derived parts, never in the view.

Each plain part's relations are memoised by the values of its fields, a derived part's
by the values of its inputs, so a state's view is mostly parts already built for states
that share those fields (the Kafka models' states share most fields with their
parents). ``view.sources(state)`` tells which fields each
relation reads, which lets ``invariants.fused`` memoise a property's verdict by the
fields its relations read. A part must read no other field: a test compares every
memoised answer with a fresh computation.
"""
from __future__ import annotations

from operator import attrgetter, itemgetter

#: entries per part's memo before it starts over (a bound on memory, not on meaning)
MEMO_LIMIT = 1 << 16


def getter(fields):
    """``state -> the values of these fields`` (one value for one field; None for none:
    a part of relations that are the same in every state)."""
    return attrgetter(*fields) if fields else _none


def _none(_state):
    return None


class _Part:
    __slots__ = ("fields", "get", "fn", "memo", "inputs", "last", "by_repr", "entries",
                 "names")

    def __init__(self, fields, fn, inputs=None):
        self.fields = tuple(fields)
        self.get = getter(self.fields)
        self.fn, self.memo, self.inputs = fn, {}, inputs
        self.last = (None, None)  # (state, entry): the entry of the state asked last
        self.by_repr: dict = {}  # the same entries keyed by the fields' reprs
        #: each distinct entry once, by its relations: the memos' entries share them
        self.entries: dict = {}
        self.names = ()  # the relation names of the entries computed last

    def __getstate__(self):  # the memo stays in the process that built it
        return (self.fields, self.fn, self.inputs)

    def __setstate__(self, st):
        self.__init__(*st)

    def compute(self, state, base):
        """The part's entry for ``state`` (``base``: a derived part's inputs): (the
        relations the view shows, every relation it gave), the very object of an equal
        entry computed before, so that the memos of many field values hold a few
        entries (the messages in flight take tens of thousands of values, their
        relations a handful)."""
        rels = self.fn(base) if self.inputs is not None else self.fn(state)
        every = {k: relation(v) for k, v in rels.items()}
        names = tuple(every)
        if names != self.names:  # kept as one object while the names stay the same
            self.names = names
        same = (self.names, *every.values())  # the names once, not a pair per relation
        got = self.entries.get(same)
        if got is None:
            shown = {k: v for k, v in every.items() if not k.startswith("_")}
            # a part with no intermediate relation shows them all: one dict for both
            got = keep(self.entries, same, (every if len(shown) == len(every) else shown,
                                            every))
        return got


class FieldView:
    """``view(state) -> dict`` of relations, from memoised parts (module docstring)."""

    def __init__(self, parts, derived=(), name=None):
        """``name``: ``"module:attribute"`` where this view is defined, so that a pickled
        view (a property's, shipped to a Spark executor) is that module's own object
        there, and keeps its memos from one task to the next."""
        self._parts = [_Part(f, fn) for f, fn in parts]
        self._derived = [_Part(f, fn, tuple(inputs)) for f, inputs, fn in derived]
        self._last = (None, None)
        self.name = name

    def __reduce__(self):
        if self.name is not None:
            return (named, (self.name,))
        return (_rebuilt, ({k: v for k, v in self.__dict__.items() if k != "_last"},))

    def extended(self, parts=(), derived=(), name=None) -> "FieldView":
        """A view with this one's relations and more (same forms as the constructor):
        how a module adds relations to a view and keeps them memoised."""
        return FieldView([(p.fields, p.fn) for p in self._parts] + list(parts),
                         [(p.fields, p.inputs, p.fn) for p in self._derived] + list(derived),
                         name)

    def __call__(self, state) -> dict:
        last = self._last
        if last[0] is state:
            return last[1]
        view: dict = {}
        entries = []
        for part in self._parts:
            key = part.get(state)
            e = part.memo.get(key)
            if e is None:
                e = keep(part.memo, key, part.compute(state, None))
            entries.append(e)
            view.update(e[0])
        if self._derived:
            base: dict = {}
            for x in entries:
                base.update(x[1])
            for part in self._derived:
                key = tuple([base[r] for r in part.inputs])
                e = part.memo.get(key)
                if e is None:
                    e = keep(part.memo, key, part.compute(state, base))
                view.update(e[0])
        self._last = (state, view)
        return view

    def getter_of(self, names, state):
        """``get(state, pieces=None) -> (the values of the relations names, in that
        order)``, computed from the parts that give them (and the plain parts a derived
        one reads) alone, each memoised as ``view(state)`` memoises it; by the reprs of
        the part's fields when ``pieces`` gives the state's (``model.encoding.
        FieldReprs``). A part's entry for the state asked last is kept (``last``), so
        the getters of several groups reading one part look it up once per state.
        ``state``: any state of the view's model, to learn which part gives which
        relation."""
        self(state)  # every part has an entry now
        gives = {id(p): next(iter(p.memo.values()))[1] for p in self._parts + self._derived}
        wanted = set(names)
        derived = [p for p in self._derived if wanted & gives[id(p)].keys()]
        inputs = wanted.union(*(p.inputs for p in derived))
        plain = [p for p in self._parts if inputs & gives[id(p)].keys()]
        at = {r: j for j, p in enumerate(plain) for r in gives[id(p)]}
        steps = [(p, field_positions(p.fields, state)) for p in plain]
        mixes = [(p, tuple((at[r], r) for r in p.inputs)) for p in derived]
        out = [(at.get(n, -1), n) for n in names]

        def assemble(state, entries):
            got = [e[1] for e in entries]
            mixed: dict = {}
            for part, srcs in mixes:
                key = tuple([got[j][r] for j, r in srcs])
                e = part.memo.get(key)
                if e is None:
                    e = keep(part.memo, key, part.compute(
                        state, {r: got[j][r] for j, r in srcs}))
                mixed.update(e[1])
            return tuple([got[j][n] if j >= 0 else mixed[n] for j, n in out])

        def get(state, pieces=None):
            entries = []
            for part, rget in steps:
                last = part.last
                if last[0] is state:
                    e = last[1]
                else:
                    if pieces is None or rget is None:
                        memo, key = part.memo, part.get(state)
                    else:
                        memo, key = part.by_repr, rget(pieces)
                    e = memo.get(key)
                    if e is None:
                        e = keep(memo, key, part.compute(state, None))
                    part.last = (state, e)
                entries.append(e)
            return assemble(state, entries)
        return get

    def sources(self, state) -> dict:
        """relation name -> the field names it reads (its part's fields)."""
        self(state)
        out = {}
        for part in self._parts + self._derived:
            for e in part.memo.values():
                for name in e[0]:
                    out[name] = part.fields
                break
        return out


#: each distinct relation value the parts gave, once (``relation``)
_RELATIONS: dict = {}


def relation(tuples) -> frozenset:
    """``frozenset(tuples)``, as the object of the first equal relation a part gave: the
    entries of all parts share each value (kraft-large's 22,420 entries hold 1,951
    distinct relation values, where each entry held its own), and entries and verdicts
    keyed by relations compare them by identity."""
    value = frozenset(tuples)
    got = _RELATIONS.get(value)
    return keep(_RELATIONS, value, value) if got is None else got


def keep(memo: dict, key, entry, limit: int = MEMO_LIMIT):
    """``memo[key] = entry``, the memo started over once it holds ``limit`` entries."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = entry
    return entry


def positions(fields, state):
    """The positions of ``fields`` in ``state``'s record type, which index a state's
    field reprs (``model.encoding.FieldReprs``); None when there is no field or one of
    them is not such a position."""
    order = getattr(type(state), "_fields", None) or ()
    if not fields or not all(f in order for f in fields):
        return None
    return tuple(order.index(f) for f in fields)


def field_positions(fields, state):
    """``itemgetter`` of ``positions(fields, state)``; None where those are None."""
    at = positions(fields, state)
    return None if at is None else itemgetter(*at)


def named(name: str):
    """The object ``"module:attribute"`` names (how a named view is unpickled)."""
    import importlib

    module, _, attr = name.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = obj[part] if isinstance(obj, dict) else getattr(obj, part)
    return obj


def _rebuilt(state: dict) -> FieldView:
    """An unnamed view, unpickled without its memos (``_Part`` drops them)."""
    view = FieldView.__new__(FieldView)
    view.__dict__.update(state)
    view._last = (None, None)
    return view
