"""Every engine explores the same state space: BFS and DFS agree on unique-state counts and
verdicts on every validation model (and on the generic toy model, with and without
symmetry); simulation is reproducible from its seed.

When DFS counts equal BFS's, and when they legitimately differ (docs/architecture.md):
- equal: a complete run (no property, or one that is never decided: a property that holds
  keeps both running to the end), and the unique states of a depth-bounded run;
- different: a run that stops once every property is decided (or at the first violation
  with stop_on_violation) — BFS finishes the level it is on, DFS has no levels and stops
  at the very state that decided it — and the generated count of a depth-bounded run
  (DFS expands a state again when it reaches it shallower)."""
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


@pytest.mark.parametrize("name", sorted(MODELS))
def test_runs_that_nothing_stops_early_count_alike(name):
    """With every declared property: a run that never decides them all is complete on
    both engines, with the same unique and generated counts."""
    a, b = bfs(MODELS[name]()), dfs(MODELS[name]())
    assert a.complete == b.complete
    if a.complete:
        assert (a.unique_states, a.generated_states) == (b.unique_states, b.generated_states)
    else:
        assert a.stopped_by == b.stopped_by == "all properties decided"


def test_depth_bounded_dfs_matches_depth_bounded_bfs():
    for depth in (3, 6, 9):
        a = _full(bfs, TwoPhase(3), max_depth=depth)
        b = _full(dfs, TwoPhase(3), max_depth=depth)
        assert a.unique_states == b.unique_states, depth
        assert a.stopped_by == b.stopped_by == "max_depth"


def test_a_depth_bound_stops_both_engines_alike():
    """The same unique states and the same verdict on "stopped by the bound": DFS decides
    it once the run is over (a successor left beyond the bound may be reached within it
    later). Its generated count is larger where it expands a state again."""
    for depth in (3, 5, 7, 8, 9):  # DieHard's diameter is 8
        a, b = _full(bfs, DieHard(), max_depth=depth), _full(dfs, DieHard(), max_depth=depth)
        assert a.unique_states == b.unique_states, depth
        assert a.stopped_by == b.stopped_by == ("max_depth" if depth < 8 else ""), depth
        assert b.generated_states >= a.generated_states
    assert _full(dfs, DieHard(), max_depth=5).generated_states > \
        _full(bfs, DieHard(), max_depth=5).generated_states


@pytest.mark.parametrize("stop_on_violation", [False, True])
def test_dfs_stops_at_once_where_bfs_finishes_its_level(stop_on_violation):
    """TwoPhase rm=5 with the broken commit: both decide TCConsistent and SomeCommit early.
    BFS finishes the level it is on: its counts are those of every state within its depth.
    DFS stops at the state that decided the last property: one state fewer and it would
    not have decided it."""
    why = "violation" if stop_on_violation else "all properties decided"
    a = bfs(TwoPhase(5, broken=True), stop_on_violation=stop_on_violation)
    b = dfs(TwoPhase(5, broken=True), stop_on_violation=stop_on_violation)
    assert a.stopped_by == b.stopped_by == why
    assert (a.unique_states, a.generated_states, a.max_depth) == (353, 888, 4)
    assert (b.unique_states, b.generated_states) == (40, 233)
    assert a.verdicts() == b.verdicts()
    assert _full(bfs, TwoPhase(5, broken=True), max_depth=a.max_depth).unique_states == 353
    short = dfs(TwoPhase(5, broken=True), max_states=b.unique_states - 1,
                stop_on_violation=stop_on_violation)
    assert short.stopped_by == "max_states" and short.verdict("TCConsistent") == "unknown"


def test_simulation_is_reproducible_from_its_seed():
    a = simulate(TwoPhase(4), walks=200, seed=11)
    b = simulate(TwoPhase(4), walks=200, seed=11)
    c = simulate(TwoPhase(4), walks=200, seed=12)
    assert (a.unique_states, a.generated_states) == (b.unique_states, b.generated_states)
    assert a.coverage == b.coverage
    assert (a.unique_states, a.generated_states) != (c.unique_states, c.generated_states)
    assert a.unique_states <= 1568 and not a.complete
