"""The fingerprint set: a sorted numpy uint64 array (8 bytes per state, no Python objects).

BFS looks up a whole level of candidate keys at once (``searchsorted``) and merges the new
keys once per level, so the per-state cost stays in C and memory stays at 8 B/state.
"""
from __future__ import annotations

import numpy as np

MASK64 = (1 << 64) - 1


class SortedKeySet:
    def __init__(self):
        self._a = np.empty(0, dtype=np.uint64)

    def __len__(self) -> int:
        return int(self._a.size)

    @property
    def nbytes(self) -> int:
        return int(self._a.nbytes)

    def unseen_mask(self, keys: np.ndarray) -> np.ndarray:
        """Boolean mask: True where ``keys[i]`` is not in the set."""
        a = self._a
        if a.size == 0:
            return np.ones(keys.size, dtype=bool)
        pos = np.searchsorted(a, keys)
        pos[pos == a.size] = 0  # past-the-end probes compare against a[0]; any key works
        return a[pos] != keys

    def add_new(self, keys: np.ndarray) -> None:
        """Insert keys known to be absent and pairwise distinct."""
        if keys.size == 0:
            return
        k = np.sort(keys)
        self._a = np.insert(self._a, np.searchsorted(self._a, k), k)


def keys_array(keys, count: int) -> np.ndarray:
    return np.fromiter(keys, dtype=np.uint64, count=count)
