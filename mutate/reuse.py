"""Exploring a mutant's run with the recorded successors of the states it cannot have
changed (``reusing``): the run a replay found another answer in (``replay``)."""
from __future__ import annotations

from kmc.mutate.rebuild import Rebuild
from kmc.mutate.replay import asked
from kmc.mutate.steps import by_step as _by_step
from kmc.mutate.steps import stepwise, vouched


def by_value(graph) -> dict:
    """Each expanded state of ``graph`` -> its expansion's number: how a reusing run
    finds a recorded state that the mutant computed anew. Hashing a state reads all of
    it, so the process that forks the workers builds it once per graph (``runner``)."""
    states, expanded = graph[0], graph[1]
    return {states[i]: n for n, i in enumerate(expanded)}


def keys_by_id(graph) -> dict:
    """The id of each state of ``graph`` -> its ``fingerprint128``: a reusing run
    hands these very objects to the explorer, which takes their keys from here
    (``Model.known_keys``) instead of computing them. Built once per graph by the
    process that forks the workers; the ids hold in the workers, which share its
    objects."""
    return dict(zip(map(id, graph[0]), graph[7]))


def reusing(succ, graph, functions, reloaded=(), known=None, model=None, values=None):
    """``succ`` (a mutant's successor function) that gives a recorded state whose
    successors did not call ``functions`` its recorded successors instead of computing
    them: on such a state the mutant runs exactly the baseline's code (the argument of
    ``same_graph``, state by state), so the answer is the one the mutant would compute.
    A run the replay could not decide is explored with it: only the states whose
    successors called the changed code, and the states the baseline never expanded, are
    computed; with the mutant's ``model``, a recorded state's successors are computed
    ``steps.stepwise`` (only its steps that called the changed code). ``known``
    (``answers.Known``) notes every recorded state handed out (every recorded state at
    once, when no class is rebuilt: each is then handed out as the very object).
    ``values``: ``by_value`` of ``graph`` (default: built here)."""
    states, expanded, recorded, _calls, touched = graph[:5]
    mine = Rebuild(reloaded) if reloaded else (lambda x: x)
    by_step = _by_step(graph) if model is not None and functions is not None else None
    # the explorer mostly expands the very objects ``hand`` gave it: those are found
    # by identity (each stays alive in ``states``, so no other object has its id),
    # without hashing a state; a state the mutant computed or rebuilt anew, by value
    by_id = {id(states[i]): n for n, i in enumerate(expanded)}
    values = by_value(graph) if values is None else values
    changed = set(asked(graph, functions))

    def decide(n):
        """(recorded successors, None), (None, its steps: ``stepwise``), or None: the
        mutant's successor function computes them."""
        if n not in changed:
            return (recorded[n], None)
        if by_step is not None and by_step[n] is not None and \
                vouched(by_step[n], functions, touched[n]):
            return (None, by_step[n])
        return None

    if reloaded:
        def hand(j):
            t = mine(states[j])
            if known is not None:
                known.note(j, t)
            return t

        def handed(want):
            return [(mine(a), hand(j)) for a, j in want]
    else:  # the recorded objects themselves: their answers are noted once, here
        if known is not None:
            known.note_all(states)
        hand = states.__getitem__

        def handed(want):
            return [(a, states[j]) for a, j in want]

    def successors(s):
        n = by_id.get(id(s))
        if n is None:
            n = values.get(s)
            if n is None:
                return succ(s)
        got = decide(n)
        if got is None:
            return succ(s)
        want, step = got
        if step is not None:
            return stepwise(model, s, step, functions, mine, hand, states.__getitem__)
        return handed(want)
    return successors
