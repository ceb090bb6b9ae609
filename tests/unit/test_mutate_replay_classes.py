"""`kmc mutate` replays the runs of a model whose states are of its own classes: a mutant
that reloads the module defining them is replayed on the recorded states rebuilt as the
reloaded classes, and a state class that cannot be rebuilt is explored instead."""
import sys

import pytest

from kmc.mutate.runner import make_plan, mutate
from kmc.reports.regress.suite import Entry
from mutate_toy import lines_of, load, model_file, outcome, watched


#: states of a NamedTuple class with a method the successors call, and a frozen
#: dataclass (``FROZEN`` swaps it in): a mutant reloads the module defining them
CLASSY = '''from dataclasses import dataclass
from typing import NamedTuple

from kmc import Model, always


class S(NamedTuple):
    x: int

    def step(self):
        return S(self.x + 1)


@dataclass(frozen=True)
class D:
    x: int

    def step(self):
        return D(self.x + 1)


class Classy(Model):
    name = "classy"

    def __init__(self, kind):
        self.kind = kind

    def init_states(self):
        return [self.kind(0)]

    def actions(self, s):
        out = []
        if s.x < 3:
            out.append("inc")
        if s.x > 100:
            out.append("never")
        else:  # an `if` with an `else`: no probe watches its drop
            pass
        return out

    def next_state(self, s, a):
        return s.step() if a == "inc" else None

    def properties(self):
        return [always("Bounded", lambda s: s.x <= 3)]


def make():
    return Classy(S)


def frozen():
    return Classy(D)
'''


@pytest.fixture(scope="module")
def classy(tmp_path_factory):
    return model_file(tmp_path_factory, "mutate_classy_model", CLASSY)


def test_a_reloaded_state_class_is_rebuilt_for_the_replay(classy):
    def run(replay, factory="make"):
        plan = make_plan([Entry(id="classy", scenario=f"{classy}:{factory}")])
        return mutate(plan, jobs=2, replay=replay)["mutants"]

    fast, full = run(True), run(False)
    assert [outcome(r) for r in fast] == [outcome(r) for r in full]
    step = CLASSY.splitlines().index("        return S(self.x + 1)") + 1
    # the method of the state class, mutated: the replay asks the mutant's own method
    # (the recorded states rebuilt as the reloaded class), sees other successors and
    # explores the run, where the property kills it
    plus = [r for r in fast if r["line"] == step and r["description"] == "1 -> 2"]
    assert plus and plus[0]["outcome"] == "property" and not plus[0]["replayed"]
    # the guard that never fires is decided by replay despite the reloaded class
    never = [r for r in fast if r["line"] in lines_of("if s.x > 100:", CLASSY)
             and r["outcome"] == "equivalent"]
    assert never and all(r["replayed"] == 1 for r in never)
    # a dataclass cannot be rebuilt: with it in the states nothing is replayed from the
    # graph (a probe that never saw a mutant differ still decides it)
    frozen = run(True, "frozen")
    assert frozen and all(watched(r) for r in frozen if r["replayed"])
    assert [r for r in frozen if r["operator"] == "drop-stmt" and not r["replayed"]
            and r["line"] in lines_of("if s.x > 100:", CLASSY)]
    assert [r for r in frozen if r["line"] in lines_of("if s.x > 100:", CLASSY)
            and r["outcome"] == "equivalent"]


def test_rebuild_makes_the_reloaded_class_and_keeps_the_rest(tmp_path, monkeypatch):
    from kmc.mutate.rebuild import CannotRebuild, Rebuild

    path = tmp_path / "mutate_rebuild_probe.py"
    path.write_text(CLASSY)
    old = load(str(path), "mutate_rebuild_probe")
    shared = old.S(1)
    state = (shared, (shared, 2), frozenset({3}), "x")
    new = load(str(path), "mutate_rebuild_probe")  # the module loaded again
    monkeypatch.setitem(sys.modules, "mutate_rebuild_probe", new)
    got = Rebuild({"mutate_rebuild_probe"})(state)
    assert got == state and type(got[0]) is new.S and type(got[0]) is not old.S
    assert got[1][0] is got[0]  # shared parts stay shared
    assert got[2] is state[2]  # nothing reloaded inside: the object itself
    assert Rebuild({"elsewhere"})(state) is state
    with pytest.raises(CannotRebuild):
        Rebuild({"mutate_rebuild_probe"})((old.D(1),))
