"""Lineage cuts on Spark (``SparkFrontier._cut``): when a run cuts its lineage, what a cut
keeps and releases (the known windows' broadcasts, an embedded master's local checkpoint),
and the time limit during a cut."""
from __future__ import annotations

import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.spark import spark_bfs
from kmc.model.validation.twophase import TwoPhase
from spark_answers import summary

pytestmark = pytest.mark.slow


def test_known_windows_behind_a_lineage_cut_are_destroyed(sc, monkeypatch):
    """Each level's keys are broadcast once, when they enter the known window, and shared
    by every window that holds them. A run of more than LINEAGE_EVERY Spark levels cuts
    the lineage; the broadcasts then kept are only the current window's (later windows
    still hold them), the rest at the end, and the answers stay BFS's."""
    from kmc.explorers.spark import explore
    from kmc.explorers.spark.frontier import SparkFrontier
    from kmc.explorers.spark.run import WINDOW_LEVELS

    LINEAGE_EVERY = 10
    monkeypatch.setattr(explore, "LINEAGE_EVERY", LINEAGE_EVERY)
    monkeypatch.setattr(explore, "LINEAGE_BYTES", 0)

    drops, made, real_drop, real_bc = [], [], SparkFrontier._drop_windows, \
        SparkFrontier._broadcast

    def drop(self, keep):
        real_drop(self, keep)
        drops.append((self.levels, [lvl for lvl, _k, _bc in self._windows],
                      all(any(k is a for a in keep) for _lvl, k, _bc in self._windows)))

    def broadcast(self, keys):
        bc = real_bc(self, keys)
        made.append(bc._jbroadcast.id())
        return bc
    monkeypatch.setattr(SparkFrontier, "_drop_windows", drop)
    monkeypatch.setattr(SparkFrontier, "_broadcast", broadcast)
    want = bfs(TwoPhase(5))
    got = spark_bfs(TwoPhase(5), driver_level_max=0)
    assert summary(got) == summary(want)
    spark_levels = sum(lv["mode"] == "spark" for lv in got.extra["spark"]["levels"])
    assert spark_levels > LINEAGE_EVERY
    # one broadcast per level's keys: a window of three levels after the first ones
    assert len(set(made)) == spark_levels + 1 < len(made)
    # at the cut, only broadcasts of the current window's levels stay (made at its last
    # levels; the newest may not be made yet: the level's job was submitted ahead, with
    # a window one level shorter)
    at, kept, in_window = drops[0]
    assert at == LINEAGE_EVERY and in_window
    assert kept and set(kept) <= set(range(LINEAGE_EVERY - WINDOW_LEVELS + 1,
                                           LINEAGE_EVERY + 1))
    assert drops[-1][1] == []  # released at the end


def test_an_embedded_master_keeps_the_cut_in_the_block_manager(sc, monkeypatch):
    """On local[N] the lineage cut is a local checkpoint (no files: the only executor
    to lose is the driver), the state it kept is released at the next cut and at the
    end, and every level's shuffle is written with Java serialization (not a Kryo
    instance built per task)."""
    from kmc.explorers.spark import explore, frontier as fr
    from kmc.explorers.spark.jobs import LevelJobs

    LINEAGE_EVERY = 10
    monkeypatch.setattr(explore, "LINEAGE_EVERY", LINEAGE_EVERY)
    monkeypatch.setattr(explore, "LINEAGE_BYTES", 0)

    cuts, kept, shuffles = [], [], []
    real_cut, real_launch = fr.SparkFrontier._cut, LevelJobs.launch

    def stored(rdd):
        return rdd._jrdd.rdd().getStorageLevel().useDisk()

    def cut(self, window, deadline=None):
        real_cut(self, window, deadline)
        cuts.append((self.state.isCheckpointed(), self.state.getCheckpointFile(),
                     self._kept is self.state, stored(self.state)))
        kept.append(self.state)
        cuts.append(tuple(stored(k) for k in kept[:-1]))  # the cuts before: released

    def launch(self, parent, task):  # each level's shuffle, as LevelJobs built it
        out, future = real_launch(self, parent, task)
        dep = out._jrdd.rdd().dependencies().head().rdd().dependencies().head()
        shuffles.append(dep.serializer().getClass().getSimpleName())
        return out, future
    monkeypatch.setattr(fr.SparkFrontier, "_cut", cut)
    monkeypatch.setattr(LevelJobs, "launch", launch)
    got = spark_bfs(TwoPhase(6), driver_level_max=0)
    assert summary(got) == summary(bfs(TwoPhase(6)))
    assert sc.getCheckpointDir() is None
    assert len(kept) >= 2
    assert cuts[0::2] == [(True, None, True, True)] * len(kept)
    assert cuts[1::2] == [(False,) * i for i in range(len(kept))]
    assert not any(stored(k) for k in kept)  # the last one, when the run ended
    assert len(shuffles) > 2 * LINEAGE_EVERY and set(shuffles) == {"JavaSerializer"}


def test_the_lineage_is_cut_once_its_levels_held_lineage_bytes(sc, monkeypatch):
    """A lineage cut ends the first level after the levels since the last cut held
    LINEAGE_BYTES of visited keys (8 bytes a key, summed over those levels); with the
    defaults a small run cuts nothing."""
    from kmc.explorers.spark import explore, frontier as fr

    cuts, real_cut = [], fr.SparkFrontier._cut

    def cut(self, window, deadline=None):
        done = real_cut(self, window, deadline)
        cuts.append((self.levels, done))
        return done
    monkeypatch.setattr(fr.SparkFrontier, "_cut", cut)
    want = summary(bfs(TwoPhase(6)))
    got = spark_bfs(TwoPhase(6), driver_level_max=0)
    assert summary(got) == want and cuts == []
    totals = [lv["total"] for lv in got.extra["spark"]["levels"] if lv["mode"] == "spark"]
    limit = 4 * totals[-1]  # the visited keys of half of the whole state space
    expected, held = [], 0
    for lvl, total in enumerate(totals, 1):
        if held >= limit:
            expected.append((lvl, True))
            held = 0
        else:
            held += 8 * total
    assert len(expected) >= 2
    monkeypatch.setattr(explore, "LINEAGE_EVERY", 0)
    monkeypatch.setattr(explore, "LINEAGE_BYTES", limit)
    got = spark_bfs(TwoPhase(6), driver_level_max=0)
    assert summary(got) == want and cuts == expected


def _sleepy(record):
    import time
    time.sleep(30)
    return record


def test_the_time_limit_holds_during_a_lineage_cut(sc):
    """A lineage cut that the time limit reaches is left undone: with the deadline
    already past it starts nothing, and a deadline that passes while its job runs
    cancels that job there and then (the run stops before another level, so nothing
    will recover through the cut)."""
    import time

    from kmc.explorers.spark.driver import owner_of
    from kmc.explorers.spark.frontier import SparkFrontier

    def frontier():  # a state whose shuffle takes 30 s to compute
        rdd = sc.parallelize([(0, ("B",)), (1, ("B",))], 2).map(_sleepy)
        return SparkFrontier(sc, None, 2, rdd.partitionBy(2, owner_of), 2)

    for ahead in (-1.0, 1.0):
        f = frontier()
        t = time.perf_counter()
        f._cut(None, t + ahead)
        took = time.perf_counter() - t
        assert not f.state.isCheckpointed()
        assert took < 15.0  # the cut's job takes 30 s: it never ran to its end
        f.release()
    waited = 0.0
    while sc.statusTracker().getActiveJobsIds() and waited < 10:
        time.sleep(0.1)
        waited += 0.1
    assert not sc.statusTracker().getActiveJobsIds()
