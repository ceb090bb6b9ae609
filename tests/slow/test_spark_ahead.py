"""The Spark level's job ahead (``SparkFrontier.run_level``'s ``ahead``), without a JVM:
the next level's job is submitted before the level ends, with a window one level
shorter (``lagged``); the next level then runs that very job, and a job ahead for a
level that does not come (the search stops, the frontier goes back to the driver) is
cancelled. Neither changes an answer."""
from __future__ import annotations

import gc

import pytest

from explorers.bfs import bfs
from explorers.core import Core
from explorers.spark.driver import DriverFrontier
from explorers.spark.explore import explore
from explorers.spark.placement import place_by_partition_key
from explorers.spark.run import Run
from model.validation.twophase import TwoPhase
from test_spark_level import MODELS, MutexByServed, SimulatedPartitions, summary


class _Jobs(SimulatedPartitions):
    """Notes every job: submitted (with its window's length and whether it lags),
    waited for, cancelled."""

    def __init__(self, *args):
        super().__init__(*args)
        self.submitted, self.awaited, self.cancelled = {}, [], []

    def _submit(self, parent, decided, window_bcs, dedup, commit, expand, table=None,
                lagged=False):
        job = super()._submit(parent, decided, window_bcs, dedup, commit, expand, table,
                              lagged)
        self.submitted[job.job] = (lagged, None if window_bcs is None else len(window_bcs))
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

    def to_spark(f):
        made.append(_Jobs(core, f, nparts))
        return made[-1]
    try:
        return explore(run, run.start(DriverFrontier), to_spark=to_spark), made
    finally:  # the executors' task switches the cyclic collector off for its process
        gc.unfreeze()
        gc.enable()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_level_runs_the_job_submitted_ahead(name):
    want = bfs(MODELS[name](), deadlock=True)
    got, (part,) = _run(MODELS[name]())
    assert summary(got) == summary(want)
    spark_levels = sum(lv["mode"] == "spark" for lv in got.extra["spark"]["levels"])
    # one expand-only job for the placed blocks, one per level (the last one found
    # nothing new, so it is not logged), none submitted twice
    assert sorted(part.awaited) == list(range(1, spark_levels + 3))
    lagged = [j for j, (lag, _w) in part.submitted.items() if lag]
    assert lagged == list(range(3, max(part.submitted) + 1))  # all but the first two
    assert all(w is None or w <= 2 for lag, w in part.submitted.values() if lag)
    # the job ahead of the level that found nothing new has no level to run
    assert part.cancelled == [max(part.submitted)] and max(part.submitted) not in part.awaited


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


def test_a_job_ahead_of_the_frontier_going_back_to_the_driver_is_cancelled():
    want = bfs(TwoPhase(6), deadlock=True)
    got, parts = _run(TwoPhase(6), 3, limit=300)
    modes = [lv["mode"] for lv in got.extra["spark"]["levels"]]
    assert summary(got) == summary(want)
    assert "spark" in modes and modes[-1] == "driver"
    for part in parts:
        assert set(part.submitted) == set(part.awaited) | set(part.cancelled)
        assert len(part.cancelled) <= 1


def test_lagged_windows_keep_answers_on_a_partition_key_model():
    """A partition-key model's Spark levels route by owner tables guessed a level further
    ahead for the jobs ahead; keys still reach their owners and answers stay BFS's."""
    want = bfs(MutexByServed(), deadlock=True, symmetry=True)
    core = Core(MutexByServed(), symmetry=True, deadlock=True)
    place_by_partition_key(core)
    run = Run(core, 0, False, None, None, None)
    try:
        got = explore(run, run.start(DriverFrontier),
                      to_spark=lambda f: _Jobs(core, f, 3))
    finally:
        gc.unfreeze()
        gc.enable()
    assert core.owner_shift and summary(got) == summary(want)
