"""Sorted runs of state keys on disk (``explorers.visited_runs``) and a partition's
visited set spread over a memory buffer and runs (``explorers.spark.spill``): lookups,
merges and owner splits give exactly the answers of one sorted in-memory array, for
packed (64-bit) and 128-bit keys, including 128-bit keys that share their high word."""
from __future__ import annotations

import os

import numpy as np
import pytest

from kmc.explorers import keyarrays, visited_runs
from kmc.explorers.keyarrays import NARROW, WIDE
from kmc.explorers.spark import spill
from kmc.explorers.spark.level import owners

KINDS = ["narrow", "wide", "wide-shared-high"]


def _keys(kind: str, n: int, seed: int) -> np.ndarray:
    """``n`` distinct keys, ascending; for "wide-shared-high" the high words take only
    a few values, so equal high words (a run of them in a file) are common."""
    rng = np.random.default_rng(seed)
    if kind == "narrow":
        return np.unique(rng.integers(0, 2 ** 63, size=n, dtype=np.uint64))
    hi_span = 7 if kind == "wide-shared-high" else 2 ** 63
    ints = {(int(rng.integers(0, hi_span)) << 64) | int(rng.integers(0, 2 ** 63))
            for _ in range(n)}
    return keyarrays.sorted_keys(keyarrays.from_ints(sorted(ints), len(ints), WIDE))


def _ints(a) -> list:
    return keyarrays.to_ints(np.asarray(a))


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_file_holds_its_keys_and_answers_lookups(tmp_path, kind):
    keys = _keys(kind, 3000, 1)
    path = str(tmp_path / "run")
    visited_runs.write(path, keys)
    run = visited_runs.Run(path)
    assert run.count == keys.size and run.dtype == keys.dtype
    assert _ints(run.keys()) == _ints(keys)
    assert os.path.getsize(path) == visited_runs.HEADER.size + keys.nbytes
    extra = _keys(kind, 500, 2)
    extra = extra[keyarrays.unseen(keys, extra)]  # probes must be distinct
    probe = keyarrays.sorted_keys(np.concatenate([keys[::3], extra]))
    have = set(_ints(keys))
    want = np.array([k not in have for k in _ints(probe)])
    assert (run.unseen(probe) == want).all()
    assert want.sum() and (~want).sum()  # both answers occur
    # chunks cover the keys in order
    assert _ints(np.concatenate(list(run.chunks(7)))) == _ints(keys)


def test_rows_files_hold_two_key_sets(tmp_path):
    keys = _keys("wide", 100, 3)
    parents = keys[::-1].copy()
    visited_runs.write(str(tmp_path / "rows"), keys, parents)
    f = visited_runs.Run(str(tmp_path / "rows"))
    assert _ints(f.keys(0)) == _ints(keys) and _ints(f.keys(1)) == _ints(parents)


def test_empty_runs_and_damaged_files(tmp_path):
    path = str(tmp_path / "empty")
    visited_runs.write(path, keyarrays.empty(WIDE))
    run = visited_runs.Run(path)
    assert run.count == 0 and run.unseen(_keys("wide", 5, 1)).all()
    with open(path, "ab") as f:
        f.write(b"x")
    with pytest.raises(visited_runs.RunFileError):
        visited_runs.Run(path)
    (tmp_path / "short").write_bytes(b"KMC")
    with pytest.raises(visited_runs.RunFileError):
        visited_runs.Run(str(tmp_path / "short"))


def test_a_failed_write_leaves_no_file(tmp_path):
    path = str(tmp_path / "run")
    with pytest.raises(RuntimeError):
        with visited_runs.RunWriter(path, NARROW, 10) as w:
            w.append(np.arange(5, dtype=np.uint64))
            raise RuntimeError("the task died")
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError):  # fewer keys than announced: never renamed into place
        with visited_runs.RunWriter(path, NARROW, 10) as w:
            w.append(np.arange(5, dtype=np.uint64))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("chunk", [1, 5, 64, 10 ** 6])
def test_merge_of_disjoint_runs_is_their_sorted_union(tmp_path, kind, chunk):
    every = _keys(kind, 4000, 5)
    rng = np.random.default_rng(6)
    part = rng.integers(0, 5, size=every.size)  # five disjoint runs, uneven sizes
    paths = []
    for p in range(5):
        paths.append(str(tmp_path / f"r{p}"))
        visited_runs.write(paths[-1], every[part == p])
    assert visited_runs.merge(paths, str(tmp_path / "m"), chunk) == every.size
    assert _ints(visited_runs.Run(str(tmp_path / "m")).keys()) == _ints(every)


@pytest.mark.parametrize("kind", ["narrow", "wide"])
def test_split_keeps_the_masked_keys_and_returns_the_others(tmp_path, kind):
    keys = _keys(kind, 1000, 7)
    visited_runs.write(str(tmp_path / "r"), keys)
    kept, rest = visited_runs.split(str(tmp_path / "r"), str(tmp_path / "k"),
                                    lambda c: keyarrays.high_word(c) % np.uint64(3) != 0,
                                    chunk=33)
    mask = keyarrays.high_word(keys) % np.uint64(3) != 0
    assert kept == int(mask.sum())
    assert _ints(visited_runs.Run(str(tmp_path / "k")).keys()) == _ints(keys[mask])
    assert _ints(rest) == _ints(keys[~mask])


@pytest.mark.parametrize("kind", KINDS)
def test_a_spilling_partition_answers_as_one_sorted_array(tmp_path, kind):
    """Keys added level by level with a tiny memory bound: several runs are written and
    merged (FAN_IN), retired runs are deleted only once settled, and every lookup gives
    the in-memory answer."""
    every = _keys(kind, 6000, 8)
    rng = np.random.default_rng(9)
    level_of = rng.integers(0, 3 * spill.FAN_IN, size=every.size)
    pv = spill.PartitionVisited(keyarrays.empty(every.dtype), every.dtype)
    held = keyarrays.empty(every.dtype)
    merges = 0
    for job in range(1, 3 * spill.FAN_IN + 1):
        cand = every[(level_of == job - 1) | (level_of == job)]  # half of them seen already
        fresh = pv.unseen_mask(cand)
        assert (fresh == keyarrays.unseen(held, cand)).all()
        new = cand[fresh]
        pv.add_new(new)
        held = keyarrays.insert_sorted(held, new)
        before = len(pv.retired)
        pv.collect_garbage(job - 1)
        rows = pv.spill((), 64, job, 0, str(tmp_path), 0)
        merges += len(pv.retired) > before
        assert rows == () and len(pv.runs) <= spill.FAN_IN
        assert pv.count == held.size
        for _job, path in pv.retired:  # a retired run stays until settled
            assert os.path.exists(path)
        assert _ints(pv.all_keys()) == _ints(held)
        # the block's form travels and comes back the same
        again = spill.PartitionVisited(pv.held(), every.dtype)
        assert _ints(again.all_keys()) == _ints(held)
    assert merges >= 2 and pv.runs
    pv.collect_garbage(10 ** 9)
    assert not pv.retired
    live = {r.path for r in pv.runs}
    assert {str(tmp_path / n) for n in os.listdir(tmp_path)} == live


def test_owner_changes_move_run_keys_to_their_new_owner(tmp_path):
    """With an owner table (a partition-key model), the keys of runs whose values now
    belong elsewhere leave the runs and go to their owners; the rest stay."""
    shift, nparts = 48, 3
    every = _keys("wide", 3000, 10)
    pv = spill.PartitionVisited(keyarrays.empty(WIDE), WIDE)
    pv.add_new(every)
    pv.spill((), 0, 1, 0, str(tmp_path), shift)
    assert len(pv.runs) == 1 and pv.runs[0].values is not None
    table = np.zeros(1 << 16, dtype=np.int64)
    values = pv.runs[0].values.astype(np.int64)
    table[values[::2]] = 1  # every other value goes to partition 1, one to partition 2
    table[values[1]] = 2
    moved = pv.move_out(0, nparts, shift, table, 2, str(tmp_path))
    dest = owners(every, nparts, shift, table)
    assert _ints(pv.all_keys()) == _ints(every[dest == 0])
    for p in (1, 2):
        assert _ints(moved[p]) == _ints(every[dest == p])
    assert pv.retired and pv.retired[0][0] == 2


def test_blocks_read_back_whole(tmp_path):
    """``inlined``: a block whose keys and rows went to files, read back into arrays (a
    checkpoint, a frontier moving back to the driver)."""
    keys = _keys("narrow", 5000, 11)
    parents = keys[::-1].copy()
    pv = spill.PartitionVisited(keyarrays.empty(NARROW), NARROW)
    pv.add_new(keys)
    rows = pv.spill(((3, keys, parents),), 0, 1, 0, str(tmp_path), 0)
    assert len(rows[0]) == 2 and spill.rows_disk_bytes(rows) == keys.nbytes * 2
    block = ("B", pv.held(), None, None, (), 3, rows)
    out = spill.inlined(block)
    assert _ints(out[1]) == _ints(keys)
    lvl, k, p = out[6][0]
    assert lvl == 3 and _ints(k) == _ints(keys) and _ints(p) == _ints(parents)
    assert spill.inlined(("C", 1, 2)) == ("C", 1, 2)


class _Conf(dict):
    def get(self, key, default=None):
        return super().get(key, default)


class _Context:
    def __init__(self, master, conf, parallelism=2):
        self.master, self._conf, self.defaultParallelism = master, _Conf(conf), parallelism

    def getConf(self):
        return self._conf


def test_the_default_bound_is_a_quarter_of_an_executor_core(monkeypatch):
    monkeypatch.setattr(spill, "VISITED_MEM", None)
    sc = _Context("spark://127.0.0.1:7077", {"spark.executor.memory": "4g",
                                             "spark.executor.cores": "2"})
    assert spill.default_bound(sc) == (4 << 30) // 2 // 4
    assert spill.default_bound(_Context("spark://127.0.0.1:7077", {})) == (1 << 30) // 4
    monkeypatch.setattr(spill, "VISITED_MEM", 12345)
    assert spill.default_bound(sc) == 12345


def test_a_bad_bound_is_one_line_before_spark_starts():
    import subprocess
    import sys

    env = {**os.environ, "KMC_SPARK_VISITED_MEM": "lots"}
    p = subprocess.run([sys.executable, "-m", "kmc", "check", "diehard", "--explorer",
                        "spark"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "kmc: error: KMC_SPARK_VISITED_MEM='lots' is not a whole number >= 0: fix it or "
        "unset it"]
