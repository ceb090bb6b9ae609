"""How a mutant's successors of a recorded state are computed (``stepwise``: only what
its code can change) and compared with the recorded ones (``replay.same_graph``).

Exactly (``same_steps``): the same (action, state) pairs in the same order. Every
explorer then takes the same steps.

By the states they reach (``same_states``): the same set of successor states, and the
same answer to "are all of them faults" (``Model.is_fault``: the explorer's quiescence
and deadlock checks read it). A breadth-first run reads nothing else of a state's
successors: it keeps every level in order-key order, a state's parent is the one with
the smallest key, each property's discovery is the smallest violating key of the
shallowest level, and it stops only at level boundaries (``explorers.bfs``). Its
states, counts, verdicts and counterexample states are therefore functions of which
states each state leads to; only the actions a counterexample shows between them, and
the coverage of actions, may differ, and no outcome reads those. A liveness check reads
the actions (fairness), and a depth-first or random run their order: those compare
exactly (``by_states``).

A counterexample's rebuild (``Trace.from_keys``) takes, at each step, the first action
in ``actions`` order whose successor is the path's next state. Its question is compared
through the steps the actions take (``effective``): a mutant that lists one more
candidate doing nothing takes the same steps.
"""
from __future__ import annotations

from kmc.invariants.liveness import LIVENESS_KINDS
from kmc.model.contract import Model

#: a recorded step's next state that was the very state it was given (``probes``: a
#: model may tell it from an equal copy, as ``t is not w`` does)
SELF = -1

#: a recorded question -> the model's method that answers it
METHODS = {"actions": "actions", "rebuild-actions": "actions", "next_state": "next_state",
           "rebuild-next": "next_state"}


def by_states(explorer: str, model) -> bool:
    """May a run of ``explorer`` on ``model`` compare successors by their states? A
    breadth-first run (a Spark entry runs as one) that checks no liveness property."""
    return explorer in ("bfs", "spark") and \
        not any(p.kind in LIVENESS_KINDS for p in model.properties())


def effective(model, s) -> list:
    """The (action, successor) pairs of the actions that have an effect in ``s``, in
    ``actions`` order: what a rebuild can take (the contract's own ``successors``,
    through the model's ``actions`` and ``next_state``, whatever the model's fast path
    computes)."""
    return Model.successors(model, s)


def same_steps(model, got, want, states) -> bool:
    """``got`` (the mutant's (action, state) pairs) is ``want`` (the recorded (action,
    position in ``states``) pairs), pair by pair."""
    return len(got) == len(want) and \
        all(a == b and t == states[j] for (a, t), (b, j) in zip(got, want))


def same_states(model, got, want, states) -> bool:
    """``got`` and ``want`` lead to the same set of states, and either all of their
    actions are faults or neither's are. A recorded state is one object, held once in
    ``states`` (``graph.Graph`` keeps one per value), so when every state of ``got``
    is such an object (a step that ran the baseline's code hands out the recorded
    one), the sets compare by identity, without hashing a state."""
    wanted = {id(states[j]) for _b, j in want}
    ids = {id(t) for _a, t in got}
    if not ids <= wanted:
        if not _same_set(got, want, states):
            return False
    elif len(ids) != len(wanted):
        return False
    fault = model.is_fault
    return all(fault(a) for a, _t in got) == all(fault(b) for b, _j in want)


def _same_set(got, want, states) -> bool:
    """Do ``got`` and ``want`` lead to the same set of states? Pair by pair first: a
    mutant's step mostly gives the recorded next state again, as an equal object built
    from the same parent, and equality compares the parts they share by identity, where
    a set hashes every part of every state."""
    if len(got) == len(want) and \
            all(t is states[j] or t == states[j] for (_a, t), (_b, j) in zip(got, want)):
        return True
    return {t for _a, t in got} == {states[j] for _b, j in want}


def untouched(functions, called) -> bool:
    """Did a recorded expansion or question that called ``called`` (None: not known)
    call none of ``functions`` (None: every function counts as changed)?"""
    return functions is not None and called is not None and functions.isdisjoint(called)


def vouched(known, functions, called) -> bool:
    """May an expansion that called ``called`` be asked step by step (``known``:
    ``graph.Graph.steps``)? Only when each function of ``functions`` it called was
    also called by one of its steps. A model's own successors (a fast path) give its
    steps' list on the baseline's code; a changed function that only the fast path
    called (the fast path itself, or a helper no step calls) may make the fast path
    give another list than the steps, so the expansion is asked of the model's own
    successors."""
    every = known[5]
    if every is None or called is None or functions is None:
        return False
    return functions.intersection(called).issubset(every)


def stepwise(model, s, known, functions, mine, hand, raw=None) -> list:
    """``model``'s successors of the recorded state ``s`` (as the mutant's process
    holds it), computing only what the mutant may have changed. ``known``: the
    recorded expansion step by step (``graph.Graph.steps``). The contract's
    ``successors`` is ``next_state`` of each of the ``actions`` that has one, in order;
    a step that called none of ``functions`` runs exactly the baseline's code, so its
    recorded next state is the mutant's (``hand(position)`` gives it), and so are the
    actions when ``actions`` called none of them and each step it computed itself
    (``probes``) gives its recorded next state again (``raw(position)``: the recorded
    state to compare with; default ``hand``). Only the other steps, and the actions
    the baseline did not list, are asked of the model."""
    listed, acts, per, results, probed, _every = known
    fresh: dict = {}  # action -> the mutant's next state, computed once
    if untouched(functions, listed) and \
            probes(model, s, probed, functions, mine, raw or hand, fresh):
        todo = zip(map(mine, acts), results, per)
    else:
        at = {a: n for n, a in enumerate(acts)}
        todo = []
        for a in listing(model, s, probed, functions, mine, raw or hand, fresh):
            n = at.get(a)
            todo.append((a, None, None) if n is None else (a, results[n], per[n]))
    out = []
    disjoint = functions.isdisjoint  # untouched(), inline: it runs for every step
    for a, j, called in todo:
        if called is not None and disjoint(called):
            if j is not None:
                out.append((a, hand(j)))
            continue
        t = fresh[a] if a in fresh else model.next_state(s, a)
        if t is not None:
            out.append((a, t))
    return out


def listing(model, s, probed, functions, mine, raw, fresh) -> list:
    """``model.actions(s)``, where each step it computes itself (``probed``, as in
    ``probes``) that called none of ``functions`` is answered by its recorded next
    state instead of being computed (it runs exactly the baseline's code), and every
    other step it computes on ``s`` goes to ``fresh``. A mutant of the list's own code
    (which candidates it tries) thus computes only the steps its code may change: on
    KIP-253's procedure, whose ``actions`` computes every candidate's step to tell
    whether it is enabled, the list costs its candidates, not their steps."""
    recorded = {}
    disjoint = functions.isdisjoint
    for a, j, called in zip(*probed):
        if called is not None and disjoint(called):
            recorded[a] = j
    if not recorded or not hasattr(model, "__dict__"):
        return model.actions(s)
    own = model.__dict__.get("next_state", _NONE)  # a wrapper set on the model itself
    plain = model.next_state

    def next_state(w, a):
        if w is not s:
            return plain(w, a)
        j = recorded.get(a, _NONE)
        if j is not _NONE:
            return None if j is None else s if j == SELF else mine(raw(j))
        t = fresh[a] if a in fresh else plain(w, a)
        fresh[a] = t
        return t
    model.next_state = next_state
    try:
        return model.actions(s)
    finally:
        if own is _NONE:
            del model.next_state
        else:
            model.next_state = own


_NONE = object()


def probes(model, s, probed, functions, mine, raw, fresh) -> bool:
    """Does every step that ``actions`` computed itself in ``s`` (``probed``: their
    actions, next states' positions, functions called) and that called one of
    ``functions`` give the recorded next state in the mutant? Each one computed goes
    to ``fresh``. With the same answers, ``actions``, whose own code is the baseline's,
    lists what it listed."""
    disjoint = functions.isdisjoint  # untouched(), inline: it runs for every step
    for a, j, called in zip(*probed):
        if called is not None and disjoint(called):
            continue
        a = mine(a)
        t = fresh[a] = model.next_state(s, a)
        if j == SELF:  # the step returned the state it was given, the very object
            if t is not s:
                return False
        elif (t is None) != (j is None) or t is s or (t is not None and t != raw(j)):
            return False
    return True


def by_step(graph) -> tuple:
    """The recorded expansions step by step (``Graph.steps``; all None in a graph
    recorded without them)."""
    return graph[5] if len(graph) > 5 else (None,) * len(graph[1])
