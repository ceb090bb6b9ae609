"""Quality: deliberately broken models must be caught, by every engine, with a trace
that replays to a state that really violates the property."""
import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.dfs import dfs
from kmc.explorers.simulate import simulate
from kmc.model.trace import Trace
from kmc.model.validation.diehard import DieHard
from kmc.model.validation.twophase import TwoPhase
from toymodels import Workers


def _replays_to_violation(model, result, prop):
    d = result.discoveries[prop]
    t = Trace.replay(model, d.trace.init_index, d.trace.action_indices)
    check = {p.name: p for p in model.properties()}[prop].check
    assert not check(t.last)
    assert all(check(s) for s in t.states[:-1]) or result.explorer != "bfs"


@pytest.mark.parametrize("engine", [bfs, dfs])
def test_broken_twophase_commit_is_caught(engine):
    m = TwoPhase(3, broken=True)
    r = engine(m)
    assert r.verdict("TCConsistent") == "violated"
    _replays_to_violation(m, r, "TCConsistent")


def test_broken_twophase_bfs_trace_is_shortest():
    # TMAbort is not the bug; the shortest path commits with an RM still working, which
    # then aborts: init, TMCommit, RMChooseToAbort, RMRcvCommitMsg = 4 states
    r = bfs(TwoPhase(3, broken=True))
    r.assert_violated("TCConsistent", length=4)
    names = [TwoPhase(3).action_name(a) for a in r.discoveries["TCConsistent"].trace.actions]
    assert "TMCommit" in names


@pytest.mark.parametrize("engine", [bfs, dfs])
def test_diehard_is_solved(engine):
    m = DieHard()
    r = engine(m)
    _replays_to_violation(m, r, "NotSolved")


def test_simulation_finds_diehard_with_a_seed():
    r = simulate(DieHard(), walks=300, walk_length=30, seed=3)
    assert r.verdict("NotSolved") == "violated"
    _replays_to_violation(DieHard(), r, "NotSolved")


def test_generic_model_bug_found_with_and_without_symmetry():
    for sym in (False, True):
        m = Workers(3, 2, bug=True)
        r = bfs(m, symmetry=sym)
        r.assert_violated("CountBounded")
        _replays_to_violation(m, r, "CountBounded")


def test_quiescent_property_checked_only_in_settled_states():
    r = bfs(Workers(2, 1))
    # settled = only crashes enabled or nothing: no process busy then, so it holds
    assert r.verdict("SettledIdle") == "holds"
    assert r.verdict("AllDone") == "witness_found"
