"""Deciding a mutant's run without exploring it: replay the baseline's state graph.

A mutant changes one statement, inside one function. On a run where that function is
called only while the model computes successors (never by the set-up, a property, the
symmetry reduction, or from inside a cached function), the mutant can change the run
only through the successors of the states whose expansion called it. The baseline's run
records its graph: every state it expanded, in order, with the successors (action,
state) the model gave and the functions of the mutated files it called. The mutant's
worker asks its own model for the successors of each recorded state that called the
mutated function (on every other state the mutant runs exactly the baseline's code), and
repeats the few other questions the run asked (``actions`` and ``next_state`` while
rebuilding a counterexample). When every answer equals the recorded one, the mutant's
exploration would take exactly the baseline's steps (the explorers are deterministic
and everything else runs unchanged code), so its run *is* the baseline's run: the same
verdicts, counts, counterexamples and state set. The first answer that differs stops
the replay, and the worker explores the run in full.

Most mutants that survive or are equivalent change nothing on most of the runs they
reach, and exploring those runs was most of a mutation run's time; a replay asks the
successors of a fraction of the states and checks no property.

States are compared by equality (a state of another type that compares equal, ``1``
for ``True``, counts as the same state). A run replays only if its states hold no
object of a class the mutant reloads (a mutated class would keep the old methods on the
recorded states).
"""
from __future__ import annotations

from kmc.model.encoding import fingerprint128

#: the most states a recorded graph holds; a larger run is not recorded (its replay
#: would hold too much memory in every worker)
MAX_STATES = 200_000


class Graph:
    """The states a run expanded, each with the successors the model gave it."""

    def __init__(self):
        self.states: list = []     # every state the run saw, expanded or not
        self.index: dict = {}      # 128-bit fingerprint -> position in ``states``
        self.expanded: list = []   # positions of the expanded states, in expansion order
        self.successors: list = []  # per expanded state: ((action, position), ...)
        #: per expanded state: the functions of the mutated files its successors called,
        #: as (file, first line); one frozenset object per distinct set
        self.touched: list = []
        self._sets: dict = {}
        #: other questions the run asked the model (a counterexample being rebuilt):
        #: (method, position of the state, other arguments, answer)
        self.calls: list = []
        self._done: set = set()
        self.overflow = False

    def _at(self, s) -> int:
        fp = fingerprint128(s)
        i = self.index.get(fp)
        if i is None:
            i = self.index[fp] = len(self.states)
            self.states.append(s)
        return i

    def add(self, s, out, called=None) -> None:
        """``s`` was expanded into ``out``, calling the functions ``called`` (None: not
        known, every function counts as called)."""
        if self.overflow:
            return
        i = self._at(s)
        if i in self._done:  # asked again (a counterexample being rebuilt)
            return
        self._done.add(i)
        self.expanded.append(i)
        self.successors.append(tuple((a, self._at(t)) for a, t in out))
        if called is not None:
            called = frozenset(called)
            called = self._sets.setdefault(called, called)
        self.touched.append(called)
        if len(self.states) > MAX_STATES:
            self.overflow = True

    def call(self, method: str, s, args: tuple, out) -> None:
        """The run asked ``method(s, *args)`` and got ``out`` (a state, a list of
        actions or None)."""
        if self.overflow:
            return
        i = self._at(s)
        if method == "next_state" and out is not None:
            out = self._at(out)
        self.calls.append((method, i, args, out if method == "next_state" else list(out)))

    def frozen(self):
        """What a worker keeps: None when the run was too large to record."""
        if self.overflow:
            return None
        return (self.states, tuple(self.expanded), tuple(self.successors),
                tuple(self.calls), tuple(self.touched))


def class_modules(graph) -> set:
    """Modules that define a class of some object inside the recorded states or
    actions (builtins left out)."""
    states, _expanded, successors, calls, _touched = graph
    out, seen = set(), set()
    todo = list(states)
    todo.extend(a for succ in successors for a, _i in succ)
    todo.extend(c[2] for c in calls)
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        t = type(x)
        if t.__module__ != "builtins":
            out.add(t.__module__)
        if isinstance(x, (tuple, list, frozenset, set)):
            todo.extend(x)
        elif isinstance(x, dict):
            todo.extend(x.keys())
            todo.extend(x.values())
    return out


def same_graph(model, graph, function=None) -> bool:
    """Does ``model`` give every recorded state exactly the recorded successors, and
    every other recorded question the recorded answer? With ``function`` ((file, first
    line): the one the mutant changed), only the states whose successors called it are
    asked again: on the others the mutant runs exactly the baseline's code."""
    states, expanded, recorded, calls, touched = graph
    succ = model.successors
    for i, want, called in zip(expanded, recorded, touched):
        if function is not None and called is not None and function not in called:
            continue
        got = succ(states[i])
        if len(got) != len(want):
            return False
        for (a, t), (b, j) in zip(got, want):
            if a != b or t != states[j]:
                return False
    for method, i, args, want in calls:
        got = getattr(model, method)(states[i], *args)
        if method == "actions":
            if list(got) != want:
                return False
        elif (got is None) != (want is None) or (got is not None and got != states[want]):
            return False
    return True
