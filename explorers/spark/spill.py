"""A partition's visited keys and trace rows beyond ``KMC_SPARK_VISITED_MEM`` bytes: on
disk, as sorted runs (``explorers.visited_runs``), so a partition's visited set is
bounded by disk, not by memory.

A block ("B", ``level_tasks``) holds its visited keys as one sorted array, or, once they
outgrew the bound, as a ``Spilled``: a small in-memory buffer of the keys added since
the last spill plus the runs written so far, each named by its path. After a committed
level, a task whose block holds more than the bound in memory (buffer keys and trace
rows) writes the rows of its levels to files and, if the buffer alone is over the bound,
the buffer as a new run; once there are more than ``FAN_IN`` runs, the ``FAN_IN``
smallest are merged into one. A lookup checks the sorted candidates against the buffer
and against every run (``PartitionVisited.unseen_mask``), so a level gives the very
answers of the in-memory path.

Files and retries. A run is written under a temporary name and renamed (no task sees
half a run), never changes, and has a fresh name per task attempt, so a re-run task
writes its own runs and re-reads those its input block names. A run that a merge (or
a change of owners) replaced is still named by the block before, which a retried or
recomputed task may read again: the block lists it as ``retired`` with the job that
replaced it, and a later task deletes it once no task can read that block any more
(``settled``: on an embedded master the job before the running one, whose tasks have
all ended; on a cluster the job of the last lineage cut, since recovery starts there).
The whole directory goes with the run.

Where runs live: a directory every task of the run can read and write at the same
path (``spill_dir``): a private subdirectory of ``KMC_SPARK_SPILL_DIR``, storage the
driver and every executor share, so a task that Spark runs (or retries after an
executor loss) on another machine reads the runs its input block names; without it, the
driver's private temporary directory (``ship.private_dir``) when every executor runs on
this machine, and on a cluster of several machines no spill: visited keys stay in
memory.

Checkpoints keep the keys as before: a checkpoint (and a frontier moving back to the
driver) reads a block's runs and row files back into it (``inlined``), so a checkpoint
stays self-contained and resumes anywhere; the resumed run spills again as it goes.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
import weakref
from typing import NamedTuple

import numpy as np

from kmc.explorers import keyarrays, visited_runs
from kmc.explorers.keyarrays import insert_sorted, unseen
from kmc.explorers.spark import keycodec
from kmc.explorers.spark.tuning import env_number

#: bytes of visited keys and trace rows one partition keeps in memory (None: a quarter of
#: the memory of one executor core, ``default_bound``)
VISITED_MEM = env_number("KMC_SPARK_VISITED_MEM", None, int)
#: runs merged at once, and the most a partition keeps before merging
FAN_IN = 8
#: the bound when the memory is unknown
FALLBACK_MEM = 256 << 20


class RunRef(NamedTuple):
    """A run of visited keys: its file, its number of keys, and (for a partition-key
    model) the partition-key values among them, so a change of owners reads only the
    runs it concerns."""
    path: str
    count: int
    values: np.ndarray | None


class RowsRef(NamedTuple):
    """A level's trace rows in a file: its keys (ascending) and their parents' keys."""
    path: str
    count: int
    nbytes: int


class Spilled(NamedTuple):
    buffer: object  # the keys since the last spill (``keycodec.pack``ed)
    runs: tuple  # RunRef, oldest first
    retired: tuple  # (job, path): runs replaced, deleted once ``settled`` passes job


class Settings(NamedTuple):
    """What a level's tasks need to spill: the run's directory, the bound, the newest
    job whose input blocks no task reads any more, and the merge fan-in."""
    directory: str
    bound: int
    settled: int
    fan_in: int = FAN_IN


def default_bound(sc) -> int:
    """``KMC_SPARK_VISITED_MEM`` when set, else a quarter of one executor core's memory:
    ``spark.executor.memory`` over ``spark.executor.cores`` (an embedded master: this
    machine's memory, ``explorers.memory.default_max_memory``, over its cores)."""
    if VISITED_MEM is not None:
        return VISITED_MEM
    from kmc.explorers.spark.spool import embedded

    conf = sc.getConf()
    if embedded(sc.master):
        from kmc.explorers.memory import default_max_memory

        total = default_max_memory()
        cores = max(1, sc.defaultParallelism)
    else:
        total = _bytes(conf.get("spark.executor.memory", "1g"))
        cores = max(1, int(conf.get("spark.executor.cores", "1")))
    if not total:
        return FALLBACK_MEM
    return max(1 << 20, total // cores // 4)


def _bytes(text: str) -> int | None:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = text.strip().lower().rstrip("b")
    try:
        return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)
    except ValueError:
        return None


class RunDirectory:
    """The driver's side: the directory of one Spark frontier's runs, made in ``base``
    (``spill_dir.SpillSpace.runs_base``; default: the driver's private temporary
    directory) and removed with the frontier."""

    def __init__(self, base: str | None = None):
        if base is None:
            from kmc.explorers.spark.ship import private_dir

            base = private_dir()
        self.dir = tempfile.mkdtemp(prefix="visited-", dir=base)
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.dir, True)

    def close(self) -> None:
        self._finalizer()


class PartitionVisited:
    """A partition's visited keys during one task: an in-memory sorted buffer and the
    runs on disk (the executors' side). ``unseen_mask`` and ``add_new`` are what
    ``level.dedup`` asks of a visited set."""

    def __init__(self, held, dtype):
        if isinstance(held, Spilled):
            self.buffer = keycodec.unpack(held.buffer)
            self.runs, self.retired = list(held.runs), list(held.retired)
        else:
            self.buffer = keycodec.unpack(held)
            self.runs, self.retired = [], []
        self.dtype = dtype

    @property
    def spilled(self) -> bool:
        return bool(self.runs)

    @property
    def count(self) -> int:
        return int(self.buffer.size) + sum(r.count for r in self.runs)

    @property
    def nbytes(self) -> int:
        """Bytes of every key, in memory or on disk (the visited set's size)."""
        return self.count * self.dtype.itemsize

    @property
    def disk_bytes(self) -> int:
        return sum(r.count for r in self.runs) * self.dtype.itemsize

    def unseen_mask(self, keys: np.ndarray) -> np.ndarray:
        """True where ``keys[i]`` (ascending, distinct) is in neither the buffer nor any
        run."""
        fresh = unseen(self.buffer, keys)
        for ref in self.runs:
            idx = np.flatnonzero(fresh)
            if not idx.size:
                break
            fresh[idx] = visited_runs.Run(ref.path).unseen(keys[idx])
        return fresh

    def add_new(self, keys: np.ndarray) -> None:
        """Insert keys known to be absent (ascending, distinct)."""
        self.buffer = insert_sorted(self.buffer, keys)

    def held(self):
        """The block's visited field: the plain array until the first spill."""
        if not self.runs and not self.retired:
            return keycodec.pack(self.buffer)
        return Spilled(keycodec.pack(self.buffer), tuple(self.runs), tuple(self.retired))

    # ---- after a committed level ------------------------------------------------------
    def collect_garbage(self, settled: int) -> None:
        """Delete the retired runs that no block a task may still read names."""
        keep = []
        for job, path in self.retired:
            if job <= settled:
                _remove(path)
            else:
                keep.append((job, path))
        self.retired = keep

    def move_out(self, pid: int, nparts: int, shift: int, table, job: int, directory):
        """The keys of the runs whose owner is no longer ``pid`` under the owner table
        ``table`` (``level.owners``), taken out of them: {owner: keys}."""
        from kmc.explorers.spark.level import owners

        out: dict = {}
        for i, ref in enumerate(self.runs):
            if ref.values is None or not (table[ref.values.astype(np.int64)] != pid).any():
                continue
            path = _run_path(directory, job, pid)

            def mine(chunk):
                return owners(chunk, nparts, shift, table) == pid
            kept, gone = visited_runs.split(ref.path, path, mine)
            values = ref.values[table[ref.values.astype(np.int64)] == pid]
            self.retired.append((job, ref.path))
            self.runs[i] = RunRef(path, kept, values)
            dest = owners(gone, nparts, shift, table)
            for p in np.unique(dest).tolist():
                out.setdefault(p, []).append(gone[dest == p])
        return {p: keyarrays.sorted_keys(np.concatenate(a)) for p, a in out.items()}

    def spill(self, rows, bound: int, job: int, pid: int, directory: str, shift: int,
              fan_in: int = FAN_IN):
        """Keep at most ``bound`` bytes of keys and rows in memory: write the levels'
        rows (``rows``: (level, keys, parents) or (level, RowsRef)) to files, then, if the
        buffer holds more than half the bound, the buffer as a run; merge the
        ``fan_in`` smallest runs while there are more.
        Returns the rows as the block keeps them."""
        if self.buffer.nbytes + rows_bytes(rows) <= bound:
            return rows
        rows = tuple(_rows_to_file(r, directory, job, pid) for r in rows)
        if self.buffer.nbytes > bound // 2:
            path = _run_path(directory, job, pid)
            visited_runs.write(path, self.buffer)
            self.runs.append(RunRef(path, int(self.buffer.size),
                                    _values(self.buffer, shift)))
            self.buffer = keyarrays.empty(self.dtype)
        while len(self.runs) > max(2, fan_in):
            self._merge_smallest(job, pid, directory, max(2, fan_in))
        return rows

    def _merge_smallest(self, job, pid, directory, fan_in) -> None:
        order = sorted(range(len(self.runs)), key=lambda i: (self.runs[i].count, -i))
        pick = sorted(order[:fan_in])
        refs = [self.runs[i] for i in pick]
        path = _run_path(directory, job, pid)
        count = visited_runs.merge([r.path for r in refs], path)
        values = None if refs[0].values is None else \
            np.unique(np.concatenate([r.values for r in refs]))
        self.retired.extend((job, r.path) for r in refs)
        self.runs = [r for i, r in enumerate(self.runs) if i not in pick]
        self.runs.append(RunRef(path, count, values))

    def all_keys(self) -> np.ndarray:
        """Every key, ascending, in memory (a checkpoint, a move to the driver)."""
        parts = [self.buffer] + [visited_runs.Run(r.path).keys() for r in self.runs]
        if len(parts) == 1:
            return self.buffer
        return keyarrays.sorted_keys(np.concatenate(parts))


def rows_bytes(rows) -> int:
    return sum(int(r[1].nbytes) + int(r[2].nbytes) for r in rows if len(r) == 3)


def rows_of(entry):
    """A block's trace-row entry as (level, keys, parents) arrays."""
    if len(entry) == 3:
        return entry
    lvl, ref = entry
    f = visited_runs.Run(ref.path)
    return lvl, f.keys(0), f.keys(1)


def inlined(rec: tuple) -> tuple:
    """A block record with its runs and row files read back into it (a checkpoint, a
    frontier moving to the driver); other records as they are."""
    if rec[0] != "B":
        return rec
    visited, rows = rec[1], rec[6]
    if not isinstance(visited, Spilled) and all(len(r) == 3 for r in rows):
        return rec
    if isinstance(visited, Spilled):
        dtype = keycodec.unpack(visited.buffer).dtype
        visited = PartitionVisited(visited, dtype).all_keys()
    return (*rec[:1], visited, *rec[2:6], tuple(rows_of(r) for r in rows), *rec[7:])


def inlined_record(record):
    """``inlined`` on a (partition, record) pair."""
    return record[0], inlined(record[1])


def rows_disk_bytes(rows) -> int:
    """Bytes of trace rows in files (two keys a row)."""
    return sum(r[1].nbytes for r in rows if len(r) == 2)


def _values(keys: np.ndarray, shift: int):
    if not shift:
        return None
    return np.unique(keyarrays.high_word(keys) >> np.uint64(shift))


def _rows_to_file(entry, directory, job, pid):
    if len(entry) != 3:
        return entry
    lvl, keys, parents = entry
    path = os.path.join(directory, f"rows-{lvl}-{pid}-{job}-{uuid.uuid4().hex}")
    visited_runs.write(path, keys, parents)
    return lvl, RowsRef(path, int(keys.size), int(keys.nbytes + parents.nbytes))


def _run_path(directory, job, pid) -> str:
    return os.path.join(directory, f"run-{pid}-{job}-{uuid.uuid4().hex}")


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
