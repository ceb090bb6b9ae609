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
from itertools import chain
from typing import NamedTuple

from kmc.mutate import steps
from kmc.mutate.graph import by_called
from kmc.mutate.rebuild import Rebuild
from kmc.mutate.steps import by_step as _by_step
from kmc.mutate.steps import stepwise, untouched, vouched


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
