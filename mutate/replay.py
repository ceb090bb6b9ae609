"""Deciding a mutant's run without exploring it: replay the baseline's state graph.

A mutant changes some code (``affected``): the function whose body holds it, or, outside
any function's body, the functions that read a global it changed. On a run where that
code is called only by the set-up and while the model computes successors (never by a
property, the symmetry reduction, or from inside a cached function), the mutant can
change the run only through what the set-up built and the successors of the states
whose expansion called it. The baseline's run records what its set-up built
(``snapshot.setup_image``) and its graph: every state it expanded, in order, with the
successors (action, state) the model gave and the functions it called. The mutant's
worker compares its own set-up with the baseline's when the set-up ran the changed code
or the mutant is outside any function's body, asks its own model for the successors of
each recorded state that called the changed code (on every other state the mutant runs
exactly the baseline's code), and repeats the few other questions the run asked
(``actions`` and ``next_state`` while rebuilding a counterexample, where only the
steps the actions take count, and a property's own questions). When every answer
equals the recorded one, the mutant's exploration would take exactly the baseline's
steps (the explorers are deterministic and everything else runs unchanged code), so its
run *is* the baseline's run: the same verdicts, counts, counterexample states and state
set (``steps``: where the answers compare by the steps or states they lead to, a
counterexample may show another action between the same two states).
The first answer that differs stops the replay, and the worker explores the run, asking
the mutant's model only for what the replay could not vouch for (``reuse.reusing``): the
successors of the states whose expansion called the changed code, and of the states the
baseline never reached; every other recorded state gets its recorded successors.

Most mutants that survive or are equivalent change nothing on most of the runs they
reach, and exploring those runs was most of a mutation run's time; a replay asks the
successors of a fraction of the states and checks no property.

States are compared by equality (a state of another type that compares equal, ``1``
for ``True``, counts as the same state). A recorded state may hold objects of a class
that the mutant's process has loaded again (a mutant of the module defining it, or of a
module it imports): a NamedTuple is rebuilt as the mutant's class before the mutant's
model sees it, so a mutated method runs as it would in a full run. A run whose states
hold an object of any other reloaded class (one a replay cannot rebuild) is explored in
full.
"""
from __future__ import annotations

import os
from array import array
from itertools import chain
from operator import is_not
from typing import NamedTuple

from kmc.model.encoding import fingerprint128
from kmc.mutate import steps
from kmc.mutate.rebuild import Rebuild
from kmc.mutate.steps import by_step as _by_step
from kmc.mutate.steps import SELF, stepwise, untouched, vouched

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

    def _at(self, s) -> int:
        fp = fingerprint128(s)
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
        i = self._at(s)
        if i in self._done:  # asked again (a counterexample being rebuilt)
            return
        self._done.add(i)
        self.expanded.append(i)
        self.successors.append(tuple(self._one((self._value(a), self._at(t)))
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


def asked(graph, functions):
    """The numbers of the recorded expansions, ascending, that called one of
    ``functions`` (``steps.untouched``): all of them when ``functions`` is None."""
    expanded, touched = graph[1], graph[4]
    if functions is None:
        return range(len(expanded))
    groups = graph[6] if len(graph) > 6 else by_called(touched)
    hit = [ns for called, ns in groups if not untouched(functions, called)]
    if len(hit) == 1:
        return hit[0]
    return sorted(chain.from_iterable(hit))


def same_graph(model, graph, functions=None, reloaded=(), by_states=False) -> bool:
    """Does ``model`` give every recorded state the recorded successors, and every other
    recorded question the recorded answer? With ``functions`` (a set of (file, first
    line): the code the mutant changes), only the states whose successors called one
    of them are asked again: on the others the mutant runs exactly the baseline's code.
    ``reloaded``: the modules the mutant's process loaded again (``rebuild.Rebuild``).
    ``by_states``: a run whose outcome reads only which states each state leads to
    (``steps.by_states``): successors compare as sets of states, not as lists of
    (action, state)."""
    states, expanded, recorded, calls, touched = graph[:5]
    succ = model.successors
    mine = Rebuild(reloaded) if reloaded else (lambda x: x)
    same = steps.same_states if by_states else steps.same_steps
    by_step = _by_step(graph) if functions is not None else None
    expansions = None  # position -> recorded successors, once a rebuild's step needs it
    for n in asked(graph, functions):
        i, want, called = expanded[n], recorded[n], touched[n]
        known = by_step[n] if by_step is not None else None
        if known is not None and not vouched(known, functions, called):
            known = None
        got = succ(mine(states[i])) if known is None else \
            stepwise(model, mine(states[i]), known, functions, mine, states.__getitem__)
        if not same(model, got, want, states):
            return False
    for method, i, args, want, called in calls:
        if untouched(functions, called):
            continue
        s = mine(states[i])
        # a rebuild reads only the steps the actions take: with the states they lead
        # to as the recorded expansion's, it takes the same path (its step's own
        # answer may differ where another action takes the same step)
        if method == "rebuild-actions" or method == "rebuild-next" and by_states:
            expansions = expansions if expansions is not None else _expansions(graph)
            if i in expansions:
                if not same(model, steps.effective(model, s), expansions[i], states):
                    return False
                continue
        got = getattr(model, steps.METHODS[method])(s, *mine(args))
        if method in ("actions", "rebuild-actions"):
            if list(got) != want:
                return False
        elif (got is None) != (want is None) or (got is not None and got != states[want]):
            return False
    return True


def _expansions(graph) -> dict:
    _states, expanded, recorded, _calls, _touched = graph[:5]
    return dict(zip(expanded, recorded))


class Spec(NamedTuple):
    """What a mutant's worker needs to replay one entry's run."""
    graph: tuple       # Graph.frozen()
    run: dict          # the baseline's run: the replay's result when it matches
    rebuild: frozenset  # reloaded modules whose NamedTuples the states hold (Rebuild)
    image: tuple       # what the set-up built (snapshot.setup_image)
    outside: frozenset  # (file, first line) called outside successors and set-up
    setup: frozenset   # (file, first line) called by the set-up
    #: the invariants' and the witnesses' answers on its states (``answers.record``)
    answers: tuple | None = None
    values: dict | None = None  # its expanded states -> their numbers (reuse.by_value)
    #: the model object's attributes read outside the traced files, and those watched
    #: (``outside_reads.Watch.read``); None: not watched
    read_outside: tuple | None = None
    keys: dict | None = None  # id of each of its states -> its key (reuse.keys_by_id)
    #: the part of ``outside`` called by or inside a cached function (``tracer``)
    cached: frozenset = frozenset()
    #: the code the answers called, and the model's attributes they read (as
    #: ``(outside_reads.MODEL, name)``); None: not known
    answer_calls: frozenset | None = None


def set_up_matters(spec: Spec, where, functions) -> bool:
    """Must the mutant's set-up be compared with the baseline's? When the set-up called
    code the mutant changes (``functions``), or the mutant is outside any function's
    body (``where`` None): what it changed may be held by what the set-up built."""
    return where is None or not functions.isdisjoint(spec.setup)


def affected(mutant, snapshot, where=None, namespaces=None, tracked=None) -> set | None:
    """The code through which ``mutant``, loaded in this process, can change a run, as
    (file, first line); None when it cannot be told (every run is then explored).

    A mutant inside a function's body (``where``: the function's first line) changes
    that function. A mutant outside any function's body (a constant, a class body, a
    default argument) changes globals of its module, and the globals of the modules
    importing it computed from them: those are found by comparing each reloaded
    module's globals with the baseline's (``namespaces``: module ->
    ``snapshot.namespace``), and the code it reaches a run through is every function
    that reads a changed name (``snapshot.readers``), and the changed functions and
    classes themselves (``tracked``: real path -> file name as the tracer gives it)."""
    import importlib

    from kmc.mutate import snapshot as sn

    if where is not None:
        return {(mutant.path, where)}
    if namespaces is None:
        return None
    own = frozenset(namespaces)
    pairs, attributes, direct = set(), set(), set()
    order = [mutant.module, *sorted(snapshot)]
    if any(name not in namespaces for name in order):
        return None
    # every module is loaded before any is compared, as the baseline's were: a module's
    # import-time code may change another's globals (give its classes a generated method)
    try:
        mods = [importlib.import_module(name) for name in order]
    except Exception:  # the mutant breaks an import: its runs record it
        return None
    for name, mod in zip(order, mods):
        names, attrs = sn.changed(namespaces[name], sn.namespace(mod, own))
        pairs |= {(name, k) for k in names}
        attributes |= attrs
        for k in names:
            for code in sn.codes_of(getattr(mod, k, None), name):
                direct.add((tracked.get(os.path.realpath(code.co_filename)),
                            code.co_firstlineno))
    found = sn.readers(mods, pairs, attributes, tracked)
    if found is None or any(f is None for f, _n in direct):
        return None
    return found | direct
