"""Where the Spark explorer's visited keys live, without a JVM (the level's real task in
``SimulatedPartitions``): after every job each key is with the owner that the job's
candidates were routed by — the balanced owner table of a partition-key model, which
moves keys between owners from level to level, or the hash — and blocks may travel in
``keycodec``'s compact form; the answers stay BFS's."""
from __future__ import annotations


import pytest

from kmc.explorers.bfs import bfs
from kmc.explorers.core import Core
from kmc.explorers.spark import keycodec, level
from kmc.explorers.spark.placement import place_by_partition_key
from kmc.explorers.spark.run import Run
from kmc.model.validation.twophase import TwoPhase
from spark_partitions import MutexByServed, SimulatedPartitions, explore_partitioned, summary


class _Checked(SimulatedPartitions):
    """Checks, after each job, that every visited key and candidate went to its owner
    under the job's owner table; counts the moved keys and the compact blocks."""
    moved = packed = tables = 0

    def _submit(self, parent, decided, window_bcs, dedup, commit, expand, table=None,
                lagged=False):
        self._table = table
        _Checked.tables += table is not None
        return super()._submit(parent, decided, window_bcs, dedup, commit, expand, table,
                               lagged)

    def _launch(self, parent, task):
        owned, handle = super()._launch(parent, task)
        for q, part in enumerate(owned):
            for _dest, rec in part:
                keys = keycodec.unpack(rec[1])
                own = level.owners(keys, self.nparts, self.shift, self._table)
                assert (own == q).all(), rec[0]
                _Checked.moved += rec[0] == "V"
                _Checked.packed += rec[0] == "B" and not isinstance(rec[1], type(keys))
        return owned, handle


def _run(model, nparts, opts=None):
    opts = opts or {}
    core = Core(model, symmetry=opts.get("symmetry", False), deadlock=True)
    place_by_partition_key(core)
    run = Run(core, 0, False, None, opts.get("max_depth"), None)
    _Checked.moved = _Checked.packed = _Checked.tables = 0
    return explore_partitioned(run, lambda f: _Checked(core, f, nparts))


@pytest.mark.parametrize("nparts", [2, 3])
@pytest.mark.parametrize("opts", [{}, {"symmetry": True}, {"max_depth": 5}],
                         ids=["plain", "symmetry", "max_depth"])
def test_balanced_owners_move_visited_keys_and_keep_bfs_answers(nparts, opts):
    model = MutexByServed(4)
    want = bfs(MutexByServed(4), deadlock=True, **opts)
    got = _run(model, nparts, opts)
    assert summary(got) == summary(want)
    assert _Checked.tables
    if "max_depth" not in opts:  # over the whole search, owners did change
        assert _Checked.moved


def test_hashed_owners_never_move_keys():
    got = _run(TwoPhase(4), 3)
    assert summary(got) == summary(bfs(TwoPhase(4), deadlock=True))
    assert _Checked.tables == 0 and _Checked.moved == 0


def test_blocks_travel_compact_and_keep_bfs_answers(monkeypatch):
    monkeypatch.setattr(keycodec, "MIN_KEYS", 8)  # TwoPhase(5)'s blocks are small
    got = _run(TwoPhase(5), 2)
    assert summary(got) == summary(bfs(TwoPhase(5), deadlock=True))
    assert _Checked.packed
