"""The driver's trace rows in bounded memory (``explorers.spark.rows``): older levels
spill to files, read back memory-mapped, equal to what was appended; the newest levels
stay the very arrays appended; the files go with the rows."""
from __future__ import annotations

import os

import numpy as np

from kmc.explorers import keyarrays
from kmc.explorers.spark.rows import KEEP_LEVELS, LevelRows


def _levels():
    rng = np.random.default_rng(7)
    out = []
    for n in (1, 40, 300, 2000, 900, 60, 5):
        ints = sorted(set(int(x) << 64 | int(y) for x, y in
                          rng.integers(0, 2 ** 63, (n, 2), dtype=np.uint64)))
        out.append(keyarrays.from_ints(ints, len(ints), keyarrays.WIDE))
    return out


def test_older_levels_spill_and_read_back_equal():
    levels = _levels()
    rows = LevelRows(memory=0)
    rows += levels
    assert len(rows) == len(levels) and rows.spilled == len(levels) - KEEP_LEVELS
    for got, want in zip(rows, levels):
        assert got.dtype == keyarrays.WIDE and np.array_equal(got, want)
    assert all(a is b for a, b in zip(rows[-KEEP_LEVELS:], levels[-KEEP_LEVELS:]))
    assert keyarrays.key_at(rows[2], 17) == keyarrays.key_at(levels[2], 17)
    files = [x for x in rows._items if isinstance(x, str)]
    assert files and all(os.path.exists(f) for f in files)
    assert oct(os.stat(os.path.dirname(files[0])).st_mode & 0o777) == "0o700"
    rows.close()
    assert not os.path.exists(os.path.dirname(files[0]))


def test_rows_within_their_memory_stay_in_memory():
    rows = LevelRows(memory=1 << 20)
    rows += _levels()
    assert rows.spilled == 0 and rows._dir is None
    small = LevelRows(memory=40_000)  # the 2,000-key level (32 KB) fits, not with the rest
    small += _levels()
    assert 0 < small.spilled < len(small) - KEEP_LEVELS + 1
    small.close()


def test_levels_the_executors_hold_are_forgotten_beyond_the_newest():
    """A Spark level's rows stay with the executors' blocks: the driver forgets them
    once they leave the newest KEEP_LEVELS, whatever its memory allows, keeps its own
    levels, and holds again what the blocks hand back."""
    levels = _levels()
    rows = LevelRows(memory=1 << 30)
    for i, arr in enumerate(levels):
        rows.append(arr, remote=i % 2 == 1)
    old = len(levels) - KEEP_LEVELS
    assert [rows.held(i) for i in range(len(levels))] == \
        [i % 2 == 0 or i >= old for i in range(len(levels))]
    assert rows[1] is None and not rows.complete and rows.spilled == 0
    assert rows.nbytes == sum(int(a.nbytes) for a in levels)
    rows.install(1, levels[1])
    assert np.array_equal(rows[1], levels[1])
    rows.pin()  # the blocks are going away: nothing held is forgotten from now on
    rows.append(levels[0][:1], remote=True)
    rows += levels[:KEEP_LEVELS]  # the new remote level leaves the newest
    assert [i for i in range(len(rows)) if not rows.held(i)] == [len(levels)]
    rows.close()
