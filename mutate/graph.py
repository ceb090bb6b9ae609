"""What the baseline records of a run for the replays (``replay``): its state graph.

``Graph`` keeps every state the run saw, each expansion's successors and the functions
of the mutated files it called (step by step, where the Recorder tells them), and the
other questions the run asked the model; ``frozen`` is what a mutant's worker gets.
States are found by ``fingerprint128``, made from memoised field reprs for records
(``model.encoding.FieldReprs``), as the explorers key them.
"""
from __future__ import annotations

from array import array
from operator import is_not

from kmc.model.encoding import FieldReprs, fields_key, fieldwise, fingerprint128
from kmc.mutate.steps import SELF

#: the most states a recorded graph holds; a larger run is not recorded (its replay
#: would hold too much memory in every worker)
MAX_STATES = 200_000


class _NONE:
    """The states' class when their keys are not made from field reprs: no state's."""


class Graph:
    """The states a run expanded, each with the successors the model gave it."""

    def __init__(self):
        self.states: list = []     # every state the run saw, expanded or not
        self.index: dict = {}      # 128-bit fingerprint -> position in ``states``
        self.expanded: list = []   # positions of the expanded states, in expansion order
        self.successors: list = []  # per expanded state: ((action, position), ...)
        #: per expanded state: the functions of the mutated files its successors called,
        #: as (file, first line); one tuple object per distinct set (``_intern``)
        self.touched: list = []
        self._sets: dict = {}
        #: per expanded state, step by step (``Recorder``'s ``by_step``; None: not
        #: known): the functions ``actions`` called, every action it listed, per
        #: action the functions its ``next_state`` called and the position of its next
        #: state (None: none), the steps ``actions`` computed itself to tell
        #: which actions are enabled (``_probed``), and every function all of these
        #: called (None: one of them is not known). Its successors are the listed
        #: actions with a next state, in order (the contract's ``successors``)
        self.steps: list = []
        #: other questions the run asked the model (a counterexample being rebuilt, a
        #: property asking ``actions``): (method, position of the state, other
        #: arguments, answer, the functions of the mutated files it called)
        self.calls: list = []
        self._done: set = set()
        self.overflow = False
        # one object per distinct action, (action, position) pair and tuple of those:
        # a graph repeats a few hundred actions over millions of successors and steps,
        # and the process that forks the workers holds every graph (``_value``, ``_one``)
        self._values: dict = {}
        self._ones: dict = {}
        #: the states' ``fieldwise`` class (the first state's, if its key from field
        #: reprs is its ``fingerprint128``; else ``_NONE``), its memoised field reprs
        #: and key: a successor's reprs come from its parent's
        #: (``model.encoding.FieldReprs``)
        self._cls = None
        self._reprs = self._key = None

    def _pieces(self, s, parent=None, pieces=None):
        """The reprs of the fields of ``s`` (None: not of the states' class); from
        its ``parent``'s ``pieces`` when given."""
        if self._cls is None:
            self._cls = _NONE
            if fieldwise(type(s)):  # checked on the first state, as the explorers do
                reprs, key = FieldReprs(len(type(s)._fields)), fields_key(type(s))
                if key(reprs.of(s)) == fingerprint128(s):
                    self._cls, self._reprs, self._key = type(s), reprs, key
        if type(s) is not self._cls:
            return None
        if pieces is None or type(parent) is not self._cls:
            return self._reprs.of(s)
        return self._reprs.of_child(s, parent, pieces)

    def _at(self, s, pieces=None) -> int:
        """The position of ``s``, added if new; ``pieces``: its field reprs, when
        known (``_pieces``)."""
        if pieces is None:
            pieces = self._pieces(s)
        fp = fingerprint128(s) if pieces is None else self._key(pieces)
        i = self.index.get(fp)
        if i is None:
            i = self.index[fp] = len(self.states)
            self.states.append(s)
        return i

    def wants(self) -> bool:
        """Does ``add`` keep expansions still (the graph is not too large)?"""
        return not self.overflow

    def add(self, s, out, called=None, steps=None) -> None:
        """``s`` was expanded into ``out``, calling the functions ``called`` (None: not
        known, every function counts as called); ``steps``: (the functions ``actions``
        called, its actions, per action the functions ``next_state`` called), or
        None."""
        if self.overflow:
            return
        sp = self._pieces(s)
        i = self._at(s, sp)
        if i in self._done:  # asked again (a counterexample being rebuilt)
            return
        self._done.add(i)
        self.expanded.append(i)
        self.successors.append(tuple(self._one((self._value(a),
                                                self._at(t, self._pieces(t, s, sp))))
                                     for a, t in out))
        self.touched.append(self._intern(called))
        self.steps.append(None if steps is None else
                          self._steps(self.successors[-1], i, s, out, *steps))
        if len(self.states) > MAX_STATES:
            self.overflow = True

    def _steps(self, want, i, s, out, listed, acts, per, probes=()):
        """``steps`` as kept, with ``want`` (the expansion's recorded (action, position)
        pairs, a subsequence of ``acts`` in order; ``out`` the same pairs with their
        states; ``i`` the position of ``s``): the sets interned, each listed action the
        very object of its successor's where it has one, per action the position of its
        next state (None: it has none), and the steps ``actions`` computed itself as
        three tuples (their actions, next states' positions, functions called), and
        the functions called by any of them. None when such a step led to a state the
        run never saw."""
        probed = self._probed(want, i, s, out, probes)
        if probed is None:
            return None
        kept, results, k = [], [], 0
        for a in acts:
            if k < len(want) and a == want[k][0]:
                kept.append(want[k][0])
                results.append(want[k][1])
                k += 1
            else:
                kept.append(self._value(a))
                results.append(None)
        every = (listed, *per, *probed[2])
        return (self._intern(listed), self._one(tuple(kept)),
                self._one(tuple(map(self._intern, per))), tuple(results), probed,
                None if None in every else self._intern(set().union(*every)))

    def _probed(self, want, i, s, out, probes):
        """``probes`` ((action, next state, functions called) of the steps ``actions``
        computed) as kept: three tuples, next states as positions (``SELF``: the very
        object expanded, which a model may tell from an equal copy); None when one is
        a state the run never saw."""
        if not probes:
            return (), (), ()
        listed = {a: (t, b, j) for (a, t), (b, j) in zip(out, want)}
        actions, positions = [], []
        for a, t, _called in probes:
            hit = listed.get(a)  # an enabled action: its successor, computed apart
            actions.append(a if hit is None else hit[1])  # one object per action
            if t is None or t is s:
                positions.append(None if t is None else SELF)
            elif hit is not None and (hit[0] is t or hit[0] == t):
                positions.append(hit[2])
            elif t == s:
                positions.append(i)
            else:
                j = self.index.get(fingerprint128(t))
                if j is None:
                    return None
                positions.append(j)
        return (self._one(tuple(map(self._value, actions))), tuple(positions),
                self._one(tuple(self._intern(c) for _a, _t, c in probes)))

    def call(self, method: str, s, args: tuple, out, called=None) -> None:
        """The run asked ``method(s, *args)`` and got ``out`` (a state, a list of
        actions or None), calling the functions ``called`` (None: not known)."""
        if self.overflow:
            return
        i = self._at(s)
        state = method in ("next_state", "rebuild-next")
        if state and out is not None:
            out = self._at(out)
        self.calls.append((method, i, args, out if state else list(out),
                           self._intern(called)))

    def _value(self, x):
        """``x``, or the object kept for an equal value of the same repr (an action:
        two that print alike and compare equal are the same to every reader)."""
        got = self._values.setdefault(repr(x), x)
        return got if got is x or got == x else x

    def _one(self, parts: tuple) -> tuple:
        """``parts`` (a tuple of kept objects: ``_value``'s, ``_intern``'s, positions),
        or the equal tuple of the very same objects kept before."""
        return self._ones.setdefault(tuple(map(id, parts)), parts)

    def _intern(self, called):
        """``called`` as a tuple, one object per distinct set (None stays None): a few
        times less memory than a frozenset of the same functions (a graph holds one
        per expansion and per step), and ``untouched`` only iterates it."""
        if called is None:
            return None
        key = frozenset(called)
        kept = self._sets.get(key)
        if kept is None:
            kept = self._sets[key] = tuple(key)
        return kept

    def frozen(self):
        """What a worker keeps: None when the run was too large to record. Its states'
        equal fields are made one object (``shared``); the last part is each state's
        ``fingerprint128``, in order."""
        if self.overflow:
            return None
        shared(self.states)
        keys = [0] * len(self.states)
        for fp, i in self.index.items():
            keys[i] = fp
        return (self.states, tuple(self.expanded), tuple(self.successors),
                tuple(self.calls), tuple(self.touched), tuple(self.steps),
                by_called(self.touched), keys)


def shared(states: list) -> None:
    """Make the equal fields of ``states`` (records of one class) one object, in place:
    each state is replaced by an equal copy whose fields at each position are the first
    equal value seen there. A replay hands these states to the explorer, which tells a
    successor's changed fields from its parent's by identity and looks up only those
    (``encoding.FieldReprs``): the explorer recorded a state from one parent, and from
    any other parent its fields would be equal objects, not the same ones, each looked
    up (hashed and compared whole). A state of any other type, or with an unhashable
    field, is left as it is; so is every state when there are none of one class."""
    cls = type(states[0]) if states else None
    make = getattr(cls, "_make", None)
    if make is None or not isinstance(getattr(cls, "_fields", None), tuple):
        return
    memos = [{} for _ in cls._fields]
    for i, s in enumerate(states):
        if type(s) is not cls:
            continue
        try:
            fields = [m.setdefault(v, v) for m, v in zip(memos, s)]
        except TypeError:
            continue
        if any(map(is_not, fields, s)):
            states[i] = make(fields)


def by_called(touched) -> tuple:
    """The expansions grouped by what they called: (the interned set, or None, the
    numbers of the expansions that called it, ascending), one pair per distinct set. A
    replay asks again only the expansions whose set holds a changed function
    (``asked``): it finds them without a look at every expansion of a large graph."""
    groups: dict = {}
    for n, called in enumerate(touched):
        got = groups.get(id(called))
        if got is None:
            got = groups[id(called)] = (called, array("l"))
        got[1].append(n)
    return tuple(groups.values())
