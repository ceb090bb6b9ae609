"""The driver's trace rows, level by level, in bounded memory.

Counterexamples are rebuilt from every level's keys (ascending) and their parents' keys
(``Run.trace_for``), and the last levels also make the known window and the owner table.
At 32 bytes a state (16 for a packed model) that is 32 GB for 10^9 states. The rows of a
level explored on Spark stay with the visited keys in the executors' blocks
(``level_tasks.step_task``): the driver keeps only the newest of those levels and
forgets the others (``remote``), and a trace walks them back with lookups on the
executors. The rows of the levels the driver explored itself are held by
``LevelRows``: the newest levels and as many older ones as ``memory`` bytes allow in
memory, the others in one ``.npy`` file each in a private directory (``mkdtemp``: mode
0700, removed with the object), read back memory-mapped on use. A counterexample's walk
reads one row of each level it crosses, so rebuilding one costs a few page reads per
level, not a load.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import weakref

import numpy as np

from kmc.explorers.spark.tuning import env_number

#: bytes of trace rows (keys and parents) the driver keeps in memory; older levels spill
#: to its temporary directory
ROWS_MEMORY = env_number("KMC_SPARK_ROWS_MEMORY", 256 << 20, int)
#: the newest levels always stay in memory (the known window and the owner table read
#: them, and ``frontier.SparkFrontier`` shares broadcasts by the arrays' identity)
KEEP_LEVELS = 4


class LevelRows:
    """A list of arrays, one per level, with older levels spilled to files beyond
    ``memory`` bytes held (list-like: ``append``, ``+=``, indexing, slicing, ``len``,
    iteration)."""

    def __init__(self, memory: int | None = None, name: str = "rows"):
        self.memory = ROWS_MEMORY if memory is None else memory
        self.name = name
        self._items: list = []  # np.ndarray in memory, the path of its .npy file, or
        # None: the level's rows are held by the executors only
        self._remote: list = []  # per level: whether the executors hold its rows
        self._nbytes: list = []  # per level: the rows' size, wherever they are
        self._held = 0  # bytes in memory
        self._dir = None
        self._cleanup = None

    def append(self, arr: np.ndarray, remote: bool = False) -> None:
        """Add the next level; ``remote``: the executors hold its rows too, so the
        driver forgets them once the level is no longer among the newest."""
        self._items.append(arr)
        self._remote.append(remote)
        self._nbytes.append(int(arr.nbytes))
        self._held += int(arr.nbytes)
        self._spill()

    def append_absent(self, nbytes: int) -> None:
        """Add the next level, whose rows only the executors hold (the driver did not
        ask for them)."""
        self._items.append(None)
        self._remote.append(True)
        self._nbytes.append(int(nbytes))

    def install(self, i: int, arr: np.ndarray) -> None:
        """Level ``i``'s rows, handed back by the executors: the driver holds them from
        now on."""
        if self._items[i] is None:
            self._items[i] = arr
            self._remote[i] = False
            self._held += int(arr.nbytes)
            self._spill()

    def pin(self) -> None:
        """Keep every level the driver holds: the executors' blocks are going away."""
        self._remote = [False] * len(self._remote)

    def held(self, i: int) -> bool:
        """Whether the driver holds level ``i``'s rows (in memory or in its files)."""
        return self._items[i] is not None

    @property
    def complete(self) -> bool:
        """Whether the driver holds every level's rows."""
        return all(x is not None for x in self._items)

    @property
    def nbytes(self) -> int:
        """The rows' size over every level, wherever they are held."""
        return sum(self._nbytes)

    @property
    def held_bytes(self) -> int:
        """The rows' size the driver holds in memory."""
        return self._held

    def __iadd__(self, arrays):
        for a in arrays:
            self.append(a)
        return self

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._load(x) for x in self._items[i]]
        return self._load(self._items[i])

    def __iter__(self):
        return (self._load(x) for x in self._items)

    @property
    def spilled(self) -> int:
        """Levels held in files."""
        return sum(isinstance(x, str) for x in self._items)

    def close(self) -> None:
        if self._cleanup is not None:
            self._cleanup()

    def _load(self, x):
        if x is None:
            return None
        return np.load(x, mmap_mode="r", allow_pickle=False) if isinstance(x, str) else x

    def _spill(self) -> None:
        """Forget the older levels the executors hold, and write the oldest other
        in-memory levels to files until what stays in memory fits ``memory`` (never the
        newest KEEP_LEVELS)."""
        old = len(self._items) - KEEP_LEVELS
        for i in range(max(0, old)):
            x = self._items[i]
            if self._remote[i] and isinstance(x, np.ndarray):
                self._items[i] = None
                self._held -= int(x.nbytes)
        i = 0
        while self._held > self.memory and i < old:
            x = self._items[i]
            if isinstance(x, np.ndarray):
                path = os.path.join(self._directory(), f"{self.name}-{i}.npy")
                np.save(path, x, allow_pickle=False)
                self._items[i] = path
                self._held -= int(x.nbytes)
            i += 1

    def _directory(self) -> str:
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="kmc-rows-")
            self._cleanup = weakref.finalize(self, shutil.rmtree, self._dir, True)
        return self._dir


def in_blocks(modes) -> list:
    """Per level (``modes``: where each level of a checkpoint ran, level 0 first),
    whether the blocks saved after the last level hold its trace rows: the levels run on
    Spark since the frontier last went there from the driver. Blocks placed from the
    driver start without rows (the driver keeps its own levels' rows) and a frontier
    coming back to the driver hands its rows to it, so those are the trailing "spark"
    levels."""
    out = [False] * len(modes)
    for d in range(len(modes) - 1, 0, -1):
        if modes[d] != "spark":
            break
        out[d] = True
    return out
