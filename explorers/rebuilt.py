"""A discovery's trace, rebuilt through the model's steps and confirmed.

An explorer keeps only the state keys along a discovery's path; its trace is regenerated
through the model (``Trace.from_keys``), as TLC rebuilds its traces. Under ``--symmetry``
the keys are the representatives', so the rebuilt path is a concrete one through the
same orbits, and its states are only symmetric to the ones the explorer checked. With a
sound symmetry they have the same verdicts. With an unsound one (a property that tells
symmetric states apart, a representative that merges orbits, a renaming that misses a
field) no such path may exist, or the rebuilt trace may not show what the explorer found.
Neither is reported as a finding: ``rebuilt`` says that the trace could not be rebuilt,
and, under symmetry, confirms the property on the rebuilt trace (a safety property's
last state, a lasso's states), raising ``SymmetryError`` when it disagrees.
"""
from __future__ import annotations

from kmc.explorers.symcheck import SymmetryError, _one_line
from kmc.invariants.properties import SOMETIMES
from kmc.model.trace import ReplayError

_HINT = "run with --check-symmetry to find where"


def rebuilt(core, prop, name: str, kind: str, make, entered_at: int = 0):
    """``make()``'s trace of the discovery of property ``prop`` (None: Deadlock) named
    ``name``, of kind ``kind``. ``entered_at``: a lasso's step where it starts waiting."""
    try:
        trace = make()
    except ReplayError as e:
        cause = (f"the model's symmetry is likely unsound ({_HINT}), or its actions() or "
                 "next_state() is not deterministic") if core.symmetry else \
            ("the model's actions() or next_state() is likely not deterministic, or its "
             "successors() does not agree with them")
        raise ReplayError(f"the {_what(kind)} of {name} could not be rebuilt through the "
                          f"model's steps (at step {e.step}, no enabled action leads to "
                          f"the state the explorer recorded): {cause}", e.step) from e
    if core.symmetry:
        wrong = _disagrees(core, prop, kind, trace, entered_at)
        if wrong is not None:
            raise SymmetryError(
                f"the model's symmetry is unsound for {name}: the {_what(kind)} found on "
                f"representatives, rebuilt through the model's steps, {wrong}, so it is "
                f"not reported; {_HINT} (the last state: "
                f"{_one_line(core.model, trace.last)})")
    return trace


def _what(kind: str) -> str:
    return "witness" if kind == SOMETIMES else "counterexample"


def _disagrees(core, prop, kind, trace, entered_at):
    """What the rebuilt trace gets wrong about its discovery, or None."""
    states = trace.states
    if prop is None:  # Deadlock
        m = core.model
        succ = [t for _a, t in m.successors(trace.last)
                if not core.bounded or m.within_boundary(t)]
        return "ends in a state where an action is enabled" if succ else None
    if kind == SOMETIMES:
        return None if prop.check(trace.last) else "ends in a state where it does not hold"
    if getattr(prop, "target", None) is None:  # always, quiescent
        return "ends in a state where it holds" if prop.check(trace.last) else None
    for k in range(entered_at, len(states)):
        if prop.awaited(states[k]):
            return f"reaches the awaited state at step {k}"
    if not prop.triggered(states[entered_at]):
        return f"does not satisfy the trigger at step {entered_at}"
    return None
