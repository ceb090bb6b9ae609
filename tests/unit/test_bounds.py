"""Bounds, stop rules, deadlock, witnesses and coverage on the shared core."""
import time

import pytest

from kmc import Model, always
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


class SlowChain(Model):
    """A chain of 40 states whose every step takes 25 ms: one state per BFS level, and
    fewer steps than any count-based check would wait for."""

    def init_states(self):
        return [0]

    def actions(self, s):
        return ["inc"] if s < 40 else []

    def next_state(self, s, a):
        time.sleep(0.025)
        return s + 1

    def properties(self):
        return [always("Small", lambda s: s <= 40)]


@pytest.mark.parametrize("engine", [bfs, dfs])
def test_time_limit_holds_for_small_levels_and_slow_steps(engine):
    r = engine(SlowChain(), time_limit=0.2)
    assert r.stopped_by == "time_limit" and r.unique_states < 40


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


@pytest.mark.parametrize("bound", [400, 866, 1100])
def test_max_states_keeps_the_states_spark_keeps(bound):
    """A model with a partition key: BFS keeps the states with the smallest order keys (the
    Spark explorer's keys, ``Core.order_key``), so the Spark explorer's own logic (here on
    the driver alone) gives the same verdicts and the same counterexamples."""
    from kmc import catalog
    from kmc.explorers.core import Core
    from kmc.explorers.spark.driver import DriverFrontier
    from kmc.explorers.spark.explore import explore
    from kmc.explorers.spark.placement import place_by_partition_key
    from kmc.explorers.spark.run import Run

    scenario = catalog.scenarios()["stale-read"]
    a = bfs(scenario.make("legacy", {})[0], max_states=bound)
    core = Core(scenario.make("legacy", {})[0])
    place_by_partition_key(core)
    assert core.owner_shift  # the Spark keys are not BFS's fingerprints
    run = Run(core, 0, False, bound, None, None)
    b = explore(run, run.start(DriverFrontier))
    assert (a.unique_states, a.stopped_by) == (b.unique_states, b.stopped_by) == \
        (bound, "max_states")
    assert a.verdicts() == b.verdicts()
    assert {n: d.trace.action_indices for n, d in a.discoveries.items()} == \
        {n: d.trace.action_indices for n, d in b.discoveries.items()}
