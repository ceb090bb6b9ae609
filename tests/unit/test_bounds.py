"""Bounds, stop rules, deadlock, witnesses and coverage on the shared core."""
import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.dfs import dfs
from kmc.explorers.simulate import simulate
from kmc.model.validation.twophase import TwoPhase
from toymodels import Workers


@pytest.mark.parametrize("engine", [bfs, dfs])
def test_max_states_is_exact(engine):
    r = engine(TwoPhase(4), max_states=200)
    assert r.unique_states == 200 and not r.complete and r.stopped_by == "max_states"
    assert r.verdict("TCConsistent") == "unknown"
    assert r.exit_code() == 4  # stopped at a bound with TCConsistent undecided


def test_max_depth_bounds_the_diameter():
    r = bfs(TwoPhase(3), max_depth=4)
    assert r.max_depth == 4 and r.stopped_by == "max_depth" and not r.complete
    full = bfs(TwoPhase(3), max_depth=11)  # the diameter: nothing beyond it
    assert full.complete and full.unique_states == 288


def test_time_limit_stops_a_big_run():
    r = bfs(TwoPhase(8), time_limit=0.2)
    assert r.stopped_by == "time_limit" and not r.complete and r.elapsed_s < 5


def test_stop_on_violation_stops_at_the_level_boundary():
    # CountBounded breaks early; the AllDone witness is only found deep down
    a = bfs(Workers(3, 2, bug=True), stop_on_violation=True)
    b = bfs(Workers(3, 2, bug=True))
    assert a.stopped_by == "violation" and a.unique_states < b.unique_states
    assert a.verdict("AllDone") == "unknown" and b.verdict("AllDone") == "witness_found"
    assert len(a.discoveries["CountBounded"].trace) == len(b.discoveries["CountBounded"].trace)


def test_missing_witness_fails_the_verdict():
    r = bfs(Workers(2, 1, witness_never=True))
    assert r.complete and r.verdict("AllDone") == "witness_missing"
    assert r.exit_code() == 1


def test_deadlock_detection_is_optional():
    assert "Deadlock" not in bfs(TwoPhase(3)).properties
    r = bfs(TwoPhase(3), deadlock=True)
    # every TwoPhase run ends with all RMs decided and nothing enabled but self-loops:
    # RMRcv*Msg stay enabled, so TwoPhase never deadlocks
    assert r.verdict("Deadlock") == "holds"
    w = bfs(Workers(1, 1), deadlock=True)  # one worker crashed: no action left
    assert w.verdict("Deadlock") == "violated"
    assert len(w.discoveries["Deadlock"].trace) == 2


def test_coverage_counts_and_never_fired():
    r = bfs(TwoPhase(3))
    assert r.coverage["TMCommit"] == 1  # only one state has every RM prepared
    assert sum(r.coverage.values()) == r.generated_states - 1  # all but the initial state
    assert r.never_fired == []
    g = bfs(Workers(2, 1))
    assert set(g.coverage) == {"Start", "Finish", "Crash"}


def test_simulation_never_claims_holds():
    r = simulate(TwoPhase(3), walks=50, seed=1)
    assert r.verdict("TCConsistent") == "unknown" and r.extra["seed"] == 1
