"""A mutant's run explored after a replay takes the invariants' answers on the states
the baseline recorded instead of checking them again: the same result as the mutant's
own run, with fewer checks."""
import importlib.util

import pytest

from kmc import always, sometimes
from kmc.api import check
from kmc.invariants.properties import SOMETIMES
from kmc.mutate.answers import Known, record
from kmc.mutate.reuse import reusing
from mutate_toy import record_graph, toy_file


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    path = toy_file(tmp_path_factory)
    spec = importlib.util.spec_from_file_location("mutate_answers_toy", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return path, mod


def _tight(mod, limit, asked, marked=None):
    """The toy with an invariant that fails once x passes 2; ``asked`` collects every
    state the invariant is evaluated on (``marked``: the witness)."""
    class Tight(mod.Toy):
        def properties(self):
            def small(s):
                asked.append(s)
                return s.x <= 2

            def mark(s):
                if marked is not None:
                    marked.append(s)
                return s.y == 1
            return [always("Small", small), sometimes("Marked", mark)]
    return Tight(limit)


def test_record_gives_the_failing_invariants_per_recorded_state(toy):
    _path, mod = toy
    states = record_graph(mod.make(3))[0]
    names, per = record(_tight(mod, 3, []), states)
    assert names == ("Small",)
    assert per == tuple((0,) if s.x > 2 else () for s in states) and (0,) in per
    names, per = record(_tight(mod, 3, []), states, SOMETIMES)
    assert names == ("Marked",)
    assert per == tuple((0,) if s.y != 1 else () for s in states) and () in per
    assert len({id(a) for a in per}) == 2  # one object per distinct answer

    class Raising(mod.Toy):  # no answer where checking raised
        def properties(self):
            return [always("NotTwo", lambda s: 1 // (s.x - 2) != 5)]
    names, per = record(Raising(3), states)
    assert per == tuple(None if s.x == 2 else () for s in states) and None in per
    assert record(type("NoInvariant", (mod.Toy,), {"properties": lambda self: []})(3),
                  states) is None

    class Asking(mod.Toy):  # an invariant the mutant's actions may answer
        def properties(self):
            return [always("Busy", lambda s: bool(self.actions(s)) or s.x == 3)]
    assert record(Asking(3), states) is None


def test_a_reusing_run_with_the_recorded_answers_is_the_mutants_own_run(toy):
    path, mod = toy
    graph = record_graph(mod.make(3))
    states, expanded, successors, calls, _touched = graph[:5]
    answers = record(_tight(mod, 3, []), states)
    # the mutant (x may reach 4) changed the expansions of the states where x >= 2
    touched = tuple(frozenset({(path, 1)}) if states[i].x >= 2 else frozenset()
                    for i in expanded)
    own_asked, reused_asked = [], []
    own = check(_tight(mod, 4, own_asked))
    mutant = _tight(mod, 4, reused_asked)
    computed, plain = [], mutant.successors

    def computing(s):  # the mutant's own code (kept alive: ids stay unique)
        out = plain(s)
        computed.extend(t for _a, t in out)
        return out
    known = Known(answers)
    mutant.successors = reusing(computing, (states, expanded, successors, calls, touched),
                                {(path, 1)}, known=known)
    with known.installed():
        reused = check(mutant)

    def seen(r):
        return (r.unique_states, r.generated_states, r.max_depth, r.verdicts(),
                {n: [str(s) for s in d.trace.states] for n, d in r.discoveries.items()})
    assert seen(reused) == seen(own) and reused.verdict("Small") == "violated"
    # only the initial state and states the mutant's code computed were checked again
    mine = {id(t) for t in computed}
    assert reused_asked and all(id(s) in mine or s == mod.S(0, 0) for s in reused_asked)
    assert len(reused_asked) < len(own_asked)


def test_the_witnesses_answers_are_taken_too(toy):
    """With the witnesses' answers recorded as well, a reusing run evaluates the
    witness only on the states the mutant's code computed (and the initial state)."""
    path, mod = toy
    graph = record_graph(mod.make(3))
    states, expanded, successors, calls, _touched = graph[:5]
    answers = [record(_tight(mod, 3, []), states, kind) for kind in ("always", SOMETIMES)]
    touched = tuple(frozenset({(path, 1)}) if states[i].x >= 2 else frozenset()
                    for i in expanded)
    own_marked, reused_marked = [], []
    own = check(_tight(mod, 4, [], own_marked))
    mutant = _tight(mod, 4, [], reused_marked)
    computed, plain = [], mutant.successors

    def computing(s):
        out = plain(s)
        computed.extend(t for _a, t in out)
        return out
    known = Known(*answers)
    mutant.successors = reusing(computing, (states, expanded, successors, calls, touched),
                                {(path, 1)}, known=known)
    with known.installed():
        reused = check(mutant)
    assert reused.verdicts() == own.verdicts() and reused.verdict("Marked") == "witness_found"
    assert reused.discoveries["Marked"].trace.states == own.discoveries["Marked"].trace.states
    mine = {id(t) for t in computed}
    assert all(id(s) in mine or s == mod.S(0, 0) for s in reused_marked)
    assert len(reused_marked) < len(own_marked)
