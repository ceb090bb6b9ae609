"""The Spark explorer gives BFS's answers: unique and generated counts, depth, how the run
ended, every verdict and every counterexample length — on each pinned validation model and
on every scenario of kmc.catalog (Kafka scenarios included, whatever they are when the test
runs), each in several variants, every variant on at least one scenario
(tests/catalog_cases.py). The tests' embedded local[2] SparkContext (tests/conftest.py) runs them.

Per-case cost is kept small (a Spark level costs a fixed ~0.2-0.4 s here): short
validation runs put every level on Spark; a scenario larger
than BUDGET states is compared on a depth bound (both engines stop at the same level, so the
comparison stays exact), and its driver threshold is set so that the widest level and the
ones after it run on Spark.
"""
from __future__ import annotations

import numpy as np
import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.spark import spark_bfs
from kmc.explorers.spark.explore import explore
from kmc.explorers.spark.driver import DriverFrontier
from kmc.explorers.spark.level import TASK_REPRS_LIMIT
from kmc.explorers.spark.placement import place_by_partition_key
from kmc.explorers.spark.run import Run, driver_seconds
from kmc import catalog
from kmc.model.validation.diehard import DieHard
from kmc.model.validation.tcommit import TCommit
from kmc.model.validation.twophase import TwoPhase
from catalog_cases import covering_cases
from spark_answers import summary

pytestmark = pytest.mark.slow

BUDGET = 400  # states per scenario case (a depth bound keeps bigger ones comparable)

PINNED = {
    "twophase-rm3": lambda: TwoPhase(3), "twophase-rm4": lambda: TwoPhase(4),
    "twophase-rm5": lambda: TwoPhase(5), "twophase-broken-commit": lambda: TwoPhase(3, True),
    "tcommit-rm3": lambda: TCommit(3), "diehard": DieHard,
}


def _scenario_cases():
    scenarios = [sc for _name, sc in sorted(catalog.scenarios().items())
                 if sc.family != "validation"]
    return [(sc.name, v) for sc, v in covering_cases(scenarios)]


@pytest.mark.parametrize("name", sorted(PINNED))
def test_pinned_model(sc, name):
    """Short runs put every level on Spark (3 owner partitions on 2 cores); longer ones
    the widest level and what follows (the driver takes the tail back)."""
    want = bfs(PINNED[name]())
    every = want.max_depth <= 11
    limit = 0 if every else _widest_level(PINNED[name](), None, False) - 1
    got = spark_bfs(PINNED[name](), partitions=3, driver_level_max=limit)
    assert summary(got) == summary(want)
    assert got.coverage == want.coverage
    levels = got.extra["spark"]["levels"]
    modes = [lv["mode"] for lv in levels]
    assert set(modes) == {"spark"} if every else "spark" in modes
    # every new state arrived at its owner as a candidate at least once
    assert all(lv["new"] <= lv["candidates"] for lv in levels)
    assert sum(lv["candidates"] for lv in levels) >= want.unique_states - levels[0]["total"]


def test_pinned_model_with_symmetry_and_bounds(sc):
    for opts in ({"symmetry": True}, {"max_depth": 6}, {"stop_on_violation": True}):
        want = bfs(TwoPhase(4, broken=True), **opts)
        got = spark_bfs(TwoPhase(4, broken=True), driver_level_max=0, **opts)
        assert summary(got) == summary(want), opts
        assert got.extra["spark"]["partitions"] == 2  # uniform owners: one per core


def test_adaptive_driver_budget(sc, monkeypatch):
    """With KMC_SPARK_DRIVER_SECONDS=auto, levels leave the driver by the budget of a
    local[2] master (``run.driver_seconds``), reported with the result."""
    from kmc.explorers.spark import run as run_mod

    monkeypatch.setattr(run_mod, "DRIVER_SECONDS_SET", "auto")
    got = spark_bfs(TwoPhase(5))
    assert summary(got) == summary(bfs(TwoPhase(5)))
    assert got.extra["spark"]["driver_seconds"] == driver_seconds(True, 2) < 0.4
    assert spark_bfs(TwoPhase(3), driver_level_max=0).extra["spark"]["driver_seconds"] is None


def test_every_level_that_can_be_split_runs_on_spark(sc):
    """By default a level runs on Spark as soon as its frontier has as many states as
    there are owner partitions: the main job explores on Spark and its summary says so."""
    from kmc.api import check
    from kmc.reports.summary import render_text

    got = check("stale-read", explorer="spark")
    spark = got.extra["spark"]
    assert spark["driver_seconds"] is None and spark["driver_level_max"] == \
        spark["partitions"] - 1
    levels = spark["levels"]
    assert all((lv["mode"] == "spark") == (lv["expanded"] >= spark["partitions"])
               for lv in levels)
    on_spark = sum(lv["mode"] == "spark" for lv in levels)
    assert on_spark > len(levels) // 2
    assert f"  levels: {on_spark} on Spark, {len(levels) - on_spark} on the driver" in \
        render_text(got).splitlines()
    want = check("stale-read")
    assert (got.unique_states, got.generated_states, got.max_depth, got.verdicts()) == \
        (want.unique_states, want.generated_states, want.max_depth, want.verdicts())


@pytest.mark.parametrize("name,variant", _scenario_cases())
def test_catalog_scenario(sc, name, variant):
    scenario = catalog.scenarios()[name]
    # safety here; liveness on Spark against bfs: test_liveness_spark.py
    raw = {"liveness": False} if any(p.name == "liveness" for p in scenario.params) else {}
    model, _v, _p = scenario.make(variant, raw)
    deadlock = scenario.options.get("deadlock", False)
    probe = bfs(model, max_states=BUDGET, deadlock=deadlock)
    max_depth = None if probe.complete else max(1, probe.max_depth - 1)
    want = bfs(model, max_depth=max_depth, deadlock=deadlock)
    got = spark_bfs(scenario.make(variant, raw)[0], max_depth=max_depth, deadlock=deadlock,
                    driver_level_max=_widest_level(model, max_depth, deadlock) - 1)
    assert summary(got) == summary(want)
    assert "spark" in {lv["mode"] for lv in got.extra["spark"]["levels"]}
    core = Core(scenario.make(variant, raw)[0])
    place_by_partition_key(core)  # by default two owners per core for a partition key
    assert got.extra["spark"]["partitions"] == (4 if core.owner_shift else 2)


def test_a_kafka_tail_comes_back_to_the_driver(sc):
    """A frontier leaving Spark brings its states from the blocks and takes the visited
    keys from the driver's own trace rows (``SparkFrontier.to_driver``): on a model whose
    states are not their keys, levels on Spark and then back on the driver give BFS's
    answers."""
    scenario = catalog.scenarios()["stale-read"]
    deadlock = scenario.options.get("deadlock", False)
    model = scenario.make("legacy", {})[0]
    want = bfs(model, deadlock=deadlock)
    core = Core(scenario.make("legacy", {})[0], deadlock=deadlock)
    got = spark_bfs(core.model, deadlock=deadlock, core=core,
                    driver_level_max=_widest_level(model, None, deadlock) - 1)
    modes = [lv["mode"] for lv in got.extra["spark"]["levels"]]
    assert not core.packed
    # the Spark path's field-repr memos and candidates (explorers.spark.level.for_tasks)
    assert (core.reprs_limit, core.share_fields) == (TASK_REPRS_LIMIT, False)
    assert summary(got) == summary(want)
    assert "spark" in modes and modes[-1] == "driver"


def _widest_level(model, max_depth, deadlock) -> int:
    """The widest frontier the run expands (found without Spark): a threshold just below
    it puts that level on Spark."""
    run = Run(Core(model, deadlock=deadlock), 0, False, None, max_depth, None)
    r = explore(run, run.start(DriverFrontier))
    return max([1] + [lv["expanded"] for lv in r.extra["spark"]["levels"]])


def test_time_limit_and_progress(sc):
    """A time limit stops at a level boundary (or cancels the running level) with the
    counts of the completed levels; progress is reported after every level."""
    calls = []
    # rm=8: 1,745,408 states in 25 Spark levels, about 4.5 s on local[2] here: far over
    # the limit on a machine several times faster (rm=7's levels last about 1.3 s)
    got = spark_bfs(TwoPhase(8), driver_level_max=0, time_limit=0.5,
                    progress=lambda *a: calls.append(a))
    assert got.stopped_by == "time_limit" and not got.complete
    assert got.unique_states < 1_745_408  # bfs(TwoPhase(8)).unique_states
    assert got.verdict("TCConsistent") == "unknown"
    assert got.elapsed_s < 30
    levels = got.extra["spark"]["levels"]
    assert [c[2] for c in calls] == [lv["level"] for lv in levels]  # depth after each level
    assert all(c[0] == lv["total"] for c, lv in zip(calls, levels))
    assert got.unique_states == (levels[-1]["total"] if levels else 1)


def test_each_level_runs_the_job_submitted_ahead_of_it(sc, monkeypatch):
    """On Spark a level's job is submitted while the level before runs: one job per
    level (and one for the placed blocks), and the one after the last level, which
    expands nothing, is waited for rather than cancelled (the Python workers stay); the
    summaries of every job are taken out of the accumulator. A time limit that cancels
    a running level cancels the job ahead of it too: no job is left running."""
    import os
    import time

    from kmc.explorers.spark.frontier import SparkFrontier

    def workers():
        return set(sc.parallelize(range(2), 2).mapPartitions(lambda _it: [os.getpid()])
                   .collect())

    ends, real_release = [], SparkFrontier.release

    def release(self):
        ends.append((self.jobs, self._ahead is not None, dict(self.summaries.value)))
        real_release(self)
    monkeypatch.setattr(SparkFrontier, "release", release)
    before = workers()
    got = spark_bfs(TwoPhase(5), driver_level_max=0)
    assert summary(got) == summary(bfs(TwoPhase(5)))
    # the workers seen before are still alive: no cancelled job killed them (which ones
    # serve the next job is the pool's choice when it holds more than two)
    assert all(os.path.exists(f"/proc/{pid}") for pid in before)
    jobs, ahead, left = ends[-1]
    levels = sum(lv["mode"] == "spark" for lv in got.extra["spark"]["levels"])
    assert ahead and jobs == levels + 3  # placed blocks, levels, the empty one, ahead
    assert {job for job, _pid in left} <= {jobs}  # only the job ahead's, if any
    # rm=9 (10,340,352 states) is far over the limit on any machine
    cut = spark_bfs(TwoPhase(9), driver_level_max=0, time_limit=2.0)
    assert cut.stopped_by == "time_limit"
    deadline = time.monotonic() + 20
    while sc.statusTracker().getActiveJobsIds() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sc.statusTracker().getActiveJobsIds()


def test_blocks_placed_from_the_driver_need_no_shuffle(sc):
    """``SparkFrontier.from_records`` puts block p in partition p as it is (parallelize
    slices a list of one block per partition that way): no shuffle before the first
    level's job, which finds each block where its task runs (every Spark run here
    starts so); blocks out of partition order are refused."""
    from kmc.explorers.spark.frontier import SparkFrontier

    records = [(p, ("B", np.full(p + 1, p, dtype=np.uint64))) for p in range(3)]
    f = SparkFrontier.from_records(sc, None, 3, records, 3)
    placed = f.state.glom().collect()
    assert [[(p, rec[1].tolist()) for p, rec in part] for part in placed] == \
        [[(0, [0])], [(1, [1, 1])], [(2, [2, 2, 2])]]
    assert f.state._jrdd.rdd().dependencies().size() == 0
    f.release()
    with pytest.raises(ValueError, match="one block per partition"):
        SparkFrontier.from_records(sc, None, 3, records[::-1], 3)


def test_an_embedded_master_keeps_each_levels_records_in_files(sc, monkeypatch):
    """On local[N] a level's records (blocks, candidates) and trace rows wait for the
    next level in one file per task of the run's spool (``spool``), not in the
    shuffle: when the driver has waited for a job, its files are there, one per
    partition, and those of the jobs before it are gone; the directory goes with the
    run, and the answers are BFS's."""
    import os

    from kmc.explorers.spark import spool

    seen, real_prune = [], spool.Spool.prune

    def prune(self, job):
        real_prune(self, job)
        seen.append((self.dir, job, sorted(os.listdir(self.dir))))
    monkeypatch.setattr(spool.Spool, "prune", prune)
    got = spark_bfs(TwoPhase(5), driver_level_max=0)
    assert summary(got) == summary(bfs(TwoPhase(5)))
    # one wait per Spark level, and one for the last, which found nothing (not logged)
    assert len(seen) == sum(lv["mode"] == "spark" for lv in got.extra["spark"]["levels"]) + 1
    for _dir, job, names in seen:
        mine = [n for n in names if int(n.split("-")[0]) == job]
        assert sorted(mine) == [f"{job}-0", f"{job}-1"]
        assert all(int(n.split("-")[0]) >= job for n in names)  # the job ahead's, if any
    assert not os.path.exists(seen[0][0])


def _gc_after(read):
    def run(_it):
        import gc

        import numpy as np
        gc.disable()
        value = read()
        return [(int(np.sum(value)), gc.isenabled())]
    return run


def test_reading_a_broadcast_keeps_the_cyclic_collector_off(sc):
    """PySpark's Broadcast.load switches the cyclic collector back on; executors read
    broadcasts with level_tasks.broadcast_value, which keeps it off (with it on, Kafka
    levels took 1.4x longer)."""
    import numpy as np

    from kmc.explorers.spark import level_tasks

    plain, ours = sc.broadcast(np.arange(5)), sc.broadcast(np.arange(5))
    one = sc.parallelize([0], 1)
    assert one.mapPartitions(_gc_after(lambda: plain.value)).collect() == [(10, True)]
    assert one.mapPartitions(_gc_after(lambda: level_tasks.broadcast_value(ours))) \
        .collect() == [(10, False)]


def test_shuffles_on_this_machine_are_not_compressed(sc):
    """Compression and shuffle checksums only pay when shuffled bytes cross a network:
    an embedded or loopback master turns them off, a remote one keeps Spark's
    defaults."""
    from kmc.explorers.spark.session import build_conf

    for key in ("spark.shuffle.compress", "spark.shuffle.checksum.enabled"):
        assert sc.getConf().get(key) == "false"
        assert build_conf("spark://127.0.0.1:7077", 2, False)[key] == "false"
        assert key not in build_conf("spark://10.1.2.3:7077", 2, False)


def test_an_embedded_jvm_collects_garbage_with_the_serial_collector(sc):
    """The embedded master's one JVM runs the serial collector (``session.GC_OPTS``);
    a cluster's driver and executors keep the JVM's default."""
    from kmc.explorers.spark.session import build_conf

    beans = sc._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    assert sorted(b.getName() for b in beans) == ["Copy", "MarkSweepCompact"]
    for master in ("spark://127.0.0.1:7077", "spark://10.1.2.3:7077"):
        conf = build_conf(master, 2, False)
        assert "-XX:+UseSerialGC" not in conf["spark.driver.extraJavaOptions"]
        assert "-XX:+UseSerialGC" not in conf["spark.executor.extraJavaOptions"]
    assert "-XX:+UseSerialGC" in build_conf(None, 2, False)["spark.driver.extraJavaOptions"]
