"""Property answers a mutant's run takes from the baseline instead of computing them.

A run the replay could not decide is explored on the mutant (``reuse.reusing``), and
its explorer checks every state it reaches against the run's invariants. A mutant is
replayed only where its code is never called outside the model's successors and
set-up, and only when the set-up built what the baseline's did: the invariants' code,
and everything it calls, then runs in the mutant's process exactly as in the
baseline's. An invariant's verdict on a state is then a function of the state alone,
and the baseline's answer on a state is the mutant's answer on an equal state.

So the baseline's worker, after its run, checks the invariants (the properties that
must hold in every state) on every state of its recorded graph once (``record``), and
the witnesses (the properties some state must satisfy) the same way. A
mutant's reusing run hands out recorded states as the successors of the states its
mutant cannot have changed; those objects, and their answers, are noted by identity
(``Known.note``: the recorded graph, or the replay's rebuilt copies, keep them alive
for the whole run, so no other object can take their id). While the run lasts, the
explorer's check of the invariants on a noted state is the recorded answer
(``Known.installed``); every other state, the initial states and every state the
mutant's own code computed included, is checked as usual. The answer is the list of
the failing properties' indices, so a recorded violation (or witness) is found again
exactly where the baseline's run found it.
"""
from __future__ import annotations

from contextlib import contextmanager

from kmc.invariants.fused import Checker
from kmc.invariants.properties import ALWAYS

_CLEAN: tuple = ()


def record(model, states, kind: str = ALWAYS) -> tuple | None:
    """The invariants' answers on ``states`` (a recorded graph's, in order): (their
    names in the explorer's order, per position the indices of the invariants false
    there: ``()`` where all hold, None where checking raised (no answer is taken
    there); one tuple object per distinct answer). None when the model has no
    invariant, or when an invariant asks the model for its actions or steps: the
    mutant's code may answer those (a replay asks them again, ``replay.same_graph``),
    so its verdicts are not the baseline's. ``kind``: the properties of another kind
    checked on every new state instead (``SOMETIMES``: the witnesses; their answers
    are the same list, of those false)."""
    asked = []
    for name in ("actions", "next_state", "successors"):
        setattr(model, name, _noting(getattr(model, name), asked))
    always = [p for p in model.properties() if p.kind == kind]
    if not always:
        return None
    check = Checker(always).false_at
    answers, one = [], {(): _CLEAN}
    for s in states:
        try:
            out = tuple(check(s))
        except Exception:  # a state the explorer never checks (outside the bounds)
            out = None
        answers.append(out if out is None else one.setdefault(out, out))
        if asked:
            return None
    return tuple(p.name for p in always), tuple(answers)


def _noting(method, asked: list):
    def noted(*args):
        asked.append(True)
        return method(*args)
    return noted


class Known:
    """The recorded answers a reusing run may take (``record``'s, one set per kind of
    property; None where a kind has none), by the identity of the state objects it
    handed out."""

    def __init__(self, *answers):
        self._sets = [(names, per, {}) for names, per in
                      (a for a in answers if a is not None)]

    def note(self, position: int, state) -> None:
        """``state`` (alive for the whole run) is the recorded state at ``position``."""
        for _names, per, by_id in self._sets:
            if per[position] is not None:
                by_id[id(state)] = per[position]

    def note_all(self, states) -> None:
        """``note`` of every state of ``states`` (a recorded graph's, in order: alive
        for the whole run)."""
        for _names, per, by_id in self._sets:
            by_id.update((id(s), a) for s, a in zip(states, per) if a is not None)

    @contextmanager
    def installed(self):
        """While the block runs, a ``Checker`` of exactly the properties of one set of
        recorded answers gives a noted state its recorded answer."""
        plain = Checker.false_at
        sets = {names: by_id for names, _per, by_id in self._sets}
        seen = {}

        def false_at(chk, state, pieces=None):
            mine = seen.get(id(chk))
            if mine is None or mine[0] is not chk:
                mine = seen[id(chk)] = (chk, sets.get(tuple(p.name for p in chk.props)))
            if mine[1] is not None:
                hit = mine[1].get(id(state))
                if hit is not None:
                    return list(hit)
            return plain(chk, state, pieces)

        Checker.false_at = false_at
        try:
            yield self
        finally:
            Checker.false_at = plain
