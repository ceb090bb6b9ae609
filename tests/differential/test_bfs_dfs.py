"""Every engine explores the same state space: BFS and DFS agree on unique-state counts and
verdicts on every validation model (and on the generic toy model, with and without
symmetry); simulation is reproducible from its seed."""
import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.dfs import dfs
from kmc.explorers.simulate import simulate
from kmc.model.validation.diehard import DieHard
from kmc.model.validation.tcommit import TCommit
from kmc.model.validation.twophase import TwoPhase
from toymodels import Workers

MODELS = {
    "twophase-3": lambda: TwoPhase(3), "twophase-4": lambda: TwoPhase(4),
    "twophase-5": lambda: TwoPhase(5), "twophase-broken": lambda: TwoPhase(3, broken=True),
    "tcommit-3": lambda: TCommit(3), "tcommit-5": lambda: TCommit(5),
    "diehard": DieHard, "workers": lambda: Workers(3, 2),
}


def _full(engine, m, **kw):
    # no early stop: compare whole state spaces, not where each engine happened to stop
    props = [p for p in m.properties() if p.kind == "always"][:0]
    return engine(m, properties=props, **kw)


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("symmetry", [False, True])
def test_bfs_and_dfs_count_the_same_states(name, symmetry):
    a = _full(bfs, MODELS[name](), symmetry=symmetry)
    b = _full(dfs, MODELS[name](), symmetry=symmetry)
    assert a.complete and b.complete
    assert a.unique_states == b.unique_states
    assert a.generated_states == b.generated_states


@pytest.mark.parametrize("name", sorted(MODELS))
def test_bfs_and_dfs_agree_on_verdicts(name):
    a, b = bfs(MODELS[name]()), dfs(MODELS[name]())
    assert a.verdicts() == b.verdicts()
    for prop, d in a.discoveries.items():
        assert len(d.trace) <= len(b.discoveries[prop].trace)  # BFS traces are shortest


def test_depth_bounded_dfs_matches_depth_bounded_bfs():
    for depth in (3, 6, 9):
        a = _full(bfs, TwoPhase(3), max_depth=depth)
        b = _full(dfs, TwoPhase(3), max_depth=depth)
        assert a.unique_states == b.unique_states, depth
        assert not a.complete and not b.complete


def test_simulation_is_reproducible_from_its_seed():
    a = simulate(TwoPhase(4), walks=200, seed=11)
    b = simulate(TwoPhase(4), walks=200, seed=11)
    c = simulate(TwoPhase(4), walks=200, seed=12)
    assert (a.unique_states, a.generated_states) == (b.unique_states, b.generated_states)
    assert a.coverage == b.coverage
    assert (a.unique_states, a.generated_states) != (c.unique_states, c.generated_states)
    assert a.unique_states <= 1568 and not a.complete
