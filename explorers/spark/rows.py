"""The driver's trace rows, level by level, in bounded memory.

A Spark run's driver keeps every level's keys (ascending) and their parents' keys: the
counterexamples are rebuilt from them (``Run.trace_for``), and the last levels also make
the known window and the owner table. At 32 bytes a state (16 for a packed model) that
is 32 GB for 10^9 states. ``LevelRows`` is a list of those arrays that keeps in memory
the newest levels and as many older ones as ``memory`` bytes allow; the others go to
one ``.npy`` file each in a private directory (``mkdtemp``: mode 0700, removed with the
object), read back memory-mapped on use. A counterexample's walk reads one row of each
level it crosses, so rebuilding one costs a few page reads per level, not a load.
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
        self._items: list = []  # np.ndarray in memory, or the path of its .npy file
        self._held = 0  # bytes in memory
        self._dir = None
        self._cleanup = None

    def append(self, arr: np.ndarray) -> None:
        self._items.append(arr)
        self._held += int(arr.nbytes)
        self._spill()

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
        return np.load(x, mmap_mode="r", allow_pickle=False) if isinstance(x, str) else x

    def _spill(self) -> None:
        """Write the oldest in-memory levels (never the newest KEEP_LEVELS) to files
        until what stays in memory fits ``memory``."""
        i = 0
        while self._held > self.memory and i < len(self._items) - KEEP_LEVELS:
            x = self._items[i]
            if not isinstance(x, str):
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
