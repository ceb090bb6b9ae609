"""The Spark explorer's per-partition logic, without a JVM (continued): which keys a
block carries, keys whose high words collide, and trace rows kept by the partitions or
spilled to files, each against BFS's answers."""
from __future__ import annotations


import pytest
import xxhash

from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.spark.frontier import SparkFrontier
from kmc.explorers.spark.placement import place_by_partition_key
from kmc.explorers.spark.run import Run
from kmc.model.validation.twophase import TwoPhase
from toymodels import reachable

from spark_partitions import (MODELS, SimulatedPartitions, explore_partitioned, run_levels,
                              summary)


class _RecordingPartitions(SimulatedPartitions):
    """Notes, per Spark level, whether a known window was given and how many levels of
    recently shipped keys the blocks carry on to the next level."""

    def __init__(self, *args):
        super().__init__(*args)
        self.seen = []

    def run_level(self, decided, commit, deadline=None, window=None, weigh=None,
                  ahead=False, rows=True, room=None):
        self._window_given = window is not None
        return super().run_level(decided, commit, deadline, window, weigh, ahead, rows,
                                 room)

    def _launch(self, parent, task):
        owned, handle = super()._launch(parent, task)
        carried = {len(rec[4]) for part in owned for _p, rec in part if rec[0] == "B"}
        self.seen.append((self._window_given, carried))
        return owned, handle


def test_blocks_carry_recent_keys_only_while_there_is_no_window():
    """Under the driver's window the blocks carry no recently shipped keys (they would
    travel through every shuffle unused); without it they carry the last two levels'.
    A window that ends mid-run (the keys outgrew WINDOW_MAX) changes no answer."""
    want = bfs(TwoPhase(5), deadlock=True)
    core = Core(TwoPhase(5), deadlock=True)
    run = Run(core, 0, False, None, None, None)
    calls, real_window = [0], run.window

    def window():  # the window ends after the sixth level
        calls[0] += 1
        return real_window() if calls[0] <= 6 else None
    run.window = window
    parts = []
    got = explore_partitioned(run, lambda f: _RecordingPartitions(core, f, 3), parts)
    assert summary(got) == summary(want)
    seen = [s for p in parts for s in p.seen]
    assert any(given for given, _c in seen) and not all(given for given, _c in seen)
    for given, carried in seen:
        assert carried <= ({0} if given else {1, 2})
    assert {2} in [c for given, c in seen if not given]


def test_a_level_past_max_states_is_cut_by_the_rows_its_blocks_hold():
    """Beyond the known window a bounded run's levels send the driver their numbers only;
    the level that crosses ``max_states`` has its rows read from the blocks, and the
    smallest keys are kept as on BFS, whatever level the bound falls in."""
    total = bfs(TwoPhase(5), deadlock=True).unique_states
    cut_from_blocks = 0
    for bound in range(5, total, 83):
        want = bfs(TwoPhase(5), deadlock=True, max_states=bound)
        core = Core(TwoPhase(5), deadlock=True)
        run = Run(core, 0, False, bound, None, None)
        run.window = lambda: None  # as past WINDOW_MAX keys
        got = explore_partitioned(run, lambda f: _RecordingPartitions(core, f, 3))
        assert summary(got) == summary(want), bound
        # the levels on Spark before the last one kept only their numbers on the driver
        cut_from_blocks += got.stopped_by == "max_states" and not run.level_keys.complete
    assert cut_from_blocks


def _weak128(data: bytes) -> int:
    """A deliberately weak 128-bit hash: 16 values in its top 64 bits (a 64-bit key cut
    from it merges states), a good hash in its low 64."""
    return ((xxhash.xxh3_64_intdigest(data) & 15) << 64) | \
        xxhash.xxh3_64_intdigest(data, seed=1)


@pytest.mark.parametrize("name", ["mutex3", "mutex3-by-served", "stale-read"])
def test_keys_whose_high_words_collide_give_bfs_answers_on_partitions(name, monkeypatch):
    """With the weak hash injected (a partition key's keys too), the executors' task
    code on 3 partitions keeps every state apart: BFS's counts, verdicts and
    counterexample lengths."""
    from kmc.api import build
    from kmc.explorers import core as core_mod
    from kmc.explorers.spark import placement

    make = (lambda: build("stale-read", "legacy", None)) if name == "stale-read" \
        else MODELS[name]
    want = bfs(make(), deadlock=True)
    weak = lambda s: _weak128(repr(s).encode())  # noqa: E731
    monkeypatch.setattr(core_mod, "fingerprint128", weak)
    monkeypatch.setattr(placement, "fingerprint128", weak)
    monkeypatch.setattr(placement, "hash128", _weak128)
    for nparts in (1, 3):
        got = run_levels(make(), nparts, deadlock=True)
        # the properties the Spark explorer checks (it leaves liveness to the local ones)
        mine = set(got.verdicts())
        assert summary(got)[:3] == summary(want)[:3] and summary(got)[6] == summary(want)[6]
        assert got.verdicts() == {n: v for n, v in want.verdicts().items() if n in mine}
        assert {n: len(d.trace) for n, d in got.discoveries.items()} == \
            {n: len(d.trace) for n, d in want.discoveries.items() if n in mine}
    core = Core(make())
    place_by_partition_key(core)
    keys = [core.rkey(s) for s in reachable(make(), limit=500)]
    assert len({k >> 64 for k in keys}) < len(keys) == len(set(keys))


@pytest.mark.parametrize("name", ["twophase4-broken", "toy-workers", "mutex3-by-served"])
def test_trace_rows_spilled_to_files_give_the_same_answers(name, monkeypatch):
    """With no memory for trace rows, every level but the newest is read back from the
    driver's files: BFS's answers and the very counterexamples of a run that kept them
    all in memory."""
    from kmc.explorers.spark import rows

    def traces(r):
        return {n: (d.trace.init_index, tuple(d.trace.action_indices))
                for n, d in r.discoveries.items()}
    kept = run_levels(MODELS[name](), 3, deadlock=True)
    spilled = []
    real = rows.LevelRows.close

    def close(self):
        spilled.append(self.spilled)
        real(self)
    monkeypatch.setattr(rows, "ROWS_MEMORY", 0)
    monkeypatch.setattr(rows.LevelRows, "close", close)
    got = run_levels(MODELS[name](), 3, deadlock=True)
    assert summary(got) == summary(bfs(MODELS[name](), deadlock=True))
    assert traces(got) == traces(kept) and traces(got)
    assert max(spilled) > 0


@pytest.mark.parametrize("window", [True, False])
@pytest.mark.parametrize("spooled", [False, True])
@pytest.mark.parametrize("name", ["twophase4-broken", "mutex3", "mutex3-by-served"])
def test_counterexamples_walk_back_through_the_rows_the_partitions_hold(name, spooled,
                                                                         window, monkeypatch):
    """The rows of a level explored on the partitions stay in their blocks; the driver
    forgets them beyond its newest levels (and, with no known window and no owner
    table, never receives them: only their number) and a counterexample looks its
    parents up on the partitions: the very traces BFS gives (the same initial state and
    actions)."""
    def traces(r):
        return {n: (d.trace.init_index, tuple(d.trace.action_indices))
                for n, d in r.discoveries.items()}
    lookups = []
    real = SparkFrontier.parents

    def parents(self, lvl, keys):
        found = real(self, lvl, keys)
        lookups.append((lvl, len(found)))
        return found
    monkeypatch.setattr(SparkFrontier, "parents", parents)
    counted = []
    real_count = Run._absorb_count

    def absorb_count(self, outcome, *args):
        counted.append(outcome.new_count)
        return real_count(self, outcome, *args)
    monkeypatch.setattr(Run, "_absorb_count", absorb_count)
    want = bfs(MODELS[name](), deadlock=True)
    got = run_levels(MODELS[name](), 3, spooled=spooled, window=window, deadlock=True)
    assert summary(got) == summary(want)
    assert traces(got) == traces(want) and traces(got)
    assert lookups and all(n == 1 for _lvl, n in lookups)
    # levels whose rows never reached the driver: only without a window, and never for
    # a partition-key model (its owner table weighs the frontier's rows)
    assert bool(counted) == (not window and name != "mutex3-by-served")
