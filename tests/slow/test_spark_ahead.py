"""The Spark level's job ahead (``SparkFrontier.run_level``'s ``ahead``), without a JVM:
the next level's job is submitted before the level ends, with a window one level
shorter (``lagged``); the next level then runs that very job, even when its frontier
is small enough to go back to the driver. A job ahead of a stop is cancelled, and the
one after the last level is waited for (it expands nothing; a cancelled task costs its
Python worker). None of it changes an answer."""
from __future__ import annotations


import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.spark.placement import place_by_partition_key
from kmc.explorers.spark.run import Run
from kmc.model.validation.twophase import TwoPhase
from spark_partitions import (MODELS, MutexByServed, SimulatedPartitions, explore_partitioned,
                              summary)


class _Jobs(SimulatedPartitions):
    """Notes every job: submitted (with its window's length and whether it lags),
    waited for, cancelled."""

    def __init__(self, *args):
        super().__init__(*args)
        self.submitted, self.awaited, self.cancelled = {}, [], []
        self.flags = {}  # job -> (dedup, commit, expand)

    def _submit(self, parent, decided, window_bcs, dedup, commit, expand, table=None,
                lagged=False):
        job = super()._submit(parent, decided, window_bcs, dedup, commit, expand, table,
                              lagged)
        self.submitted[job.job] = (lagged, None if window_bcs is None else len(window_bcs))
        self.flags[job.job] = (dedup, commit, expand)
        return job

    def _await(self, job, deadline, also=None):
        self.awaited.append(job.job)
        return super()._await(job, deadline, also)

    def _cancel(self, job):
        self.cancelled.append(job.job)


def _run(model, nparts=2, limit=0, **opts):
    core = Core(model, deadlock=True)
    place_by_partition_key(core)
    run = Run(core, limit, opts.get("stop_on_violation", False), opts.get("max_states"),
              opts.get("max_depth"), None)
    made = []
    return explore_partitioned(run, lambda f: _Jobs(core, f, nparts), made), made


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_level_runs_the_job_submitted_ahead(name):
    want = bfs(MODELS[name](), deadlock=True)
    got, (part,) = _run(MODELS[name]())
    assert summary(got) == summary(want)
    spark_levels = sum(lv["mode"] == "spark" for lv in got.extra["spark"]["levels"])
    # one expand-only job for the placed blocks, one per level (the last one found
    # nothing new, so it is not logged), and the one ahead of it, which expands nothing;
    # none submitted twice, none cancelled
    assert sorted(part.awaited) == list(range(1, spark_levels + 4)) == sorted(part.submitted)
    assert part.cancelled == []
    lagged = [j for j, (lag, _w) in part.submitted.items() if lag]
    assert lagged == list(range(3, max(part.submitted) + 1))  # all but the first two
    assert all(w is None or w <= 2 for lag, w in part.submitted.values() if lag)


@pytest.mark.parametrize("opts", [{"max_depth": 6}, {"max_states": 700},
                                  {"stop_on_violation": True}])
def test_a_job_ahead_of_a_stop_is_cancelled(opts):
    model = TwoPhase(5, broken=True) if "stop_on_violation" in opts else TwoPhase(5)
    want = bfs(model, deadlock=True, **opts)
    got, (part,) = _run(model, **opts)
    assert summary(got) == summary(want)
    assert got.stopped_by == want.stopped_by != ""
    assert set(part.submitted) == set(part.awaited) | set(part.cancelled)
    assert not set(part.awaited) & set(part.cancelled)
    # at the depth bound the last level neither commits nor gets a job ahead
    assert "max_depth" not in opts or not part.cancelled


def test_a_level_that_may_fill_max_states_is_not_expanded():
    """Under ``max_states`` a level whose candidates could fill the bound keeps its new
    states without expanding them: the run stops there, or (they were fewer) the next
    level expands them first. Answers stay BFS's whatever level the bound falls in."""
    total = bfs(TwoPhase(5), deadlock=True).unique_states
    continued = 0
    for bound in range(7, total, 61):
        want = bfs(TwoPhase(5), deadlock=True, max_states=bound)
        got, parts = _run(TwoPhase(5), max_states=bound)
        assert summary(got) == summary(want), bound
        if not parts:  # every level ran on the driver
            continue
        (part,) = parts
        if got.stopped_by == "max_states":  # the level that stopped it expanded nothing
            assert part.flags[max(part.awaited)] == (True, True, False), bound
        kept = [j for j, f in part.flags.items() if f == (True, True, False)]
        for j in kept:  # a level kept unexpanded that did not stop the run
            if j < max(part.awaited):
                assert part.flags[j + 1] == (False, True, True), bound  # expanded first
                continued += 1
    assert continued  # some bound fell where the candidates were more than the new states


def test_a_level_with_a_job_ahead_stays_on_spark():
    """A frontier small enough to go back to the driver stays on Spark for the level
    whose job was submitted ahead (the frontier shrank faster than the level before
    suggested); the next one goes back, and nothing is cancelled."""
    want = bfs(TwoPhase(6), deadlock=True)
    limit = 680  # TwoPhase(6)'s tail: 855 -> 306 states, where 855 x 855/1938 was the guess
    got, parts = _run(TwoPhase(6), 3, limit=limit)
    levels = got.extra["spark"]["levels"]
    assert summary(got) == summary(want)
    small = [i for i, lv in enumerate(levels)
             if lv["mode"] == "spark" and lv["expanded"] <= limit // 2]
    assert small and all(levels[i + 1]["mode"] == "driver" for i in small)
    for part in parts:
        assert sorted(part.submitted) == sorted(part.awaited) and part.cancelled == []


class _Failing(_Jobs):
    """A level whose job fails (the 4th job) while the job ahead of it is submitted."""

    def _await(self, job, deadline, also=None):
        if job.job == 4:
            self.awaited.append(job.job)
            raise RuntimeError("executor lost for good")
        return super()._await(job, deadline, also)


def test_a_failed_level_cancels_the_job_ahead_of_it():
    core = Core(TwoPhase(5))
    run = Run(core, 0, False, None, None, None)
    made = []
    with pytest.raises(RuntimeError, match="executor lost"):
        explore_partitioned(run, lambda f: _Failing(core, f, 2), made)
    (part,) = made
    assert 5 in part.submitted and part.cancelled == [5] and part._ahead is None


def test_lagged_windows_keep_answers_on_a_partition_key_model():
    """A partition-key model's Spark levels route by owner tables guessed a level further
    ahead for the jobs ahead; keys still reach their owners and answers stay BFS's."""
    want = bfs(MutexByServed(), deadlock=True, symmetry=True)
    core = Core(MutexByServed(), symmetry=True, deadlock=True)
    place_by_partition_key(core)
    run = Run(core, 0, False, None, None, None)
    got = explore_partitioned(run, lambda f: _Jobs(core, f, 3))
    assert core.owner_shift and summary(got) == summary(want)
