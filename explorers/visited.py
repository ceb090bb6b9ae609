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
        return unseen(self._a, keys)

    def add_new(self, keys: np.ndarray) -> None:
        """Insert keys known to be absent and pairwise distinct."""
        self._a = insert_sorted(self._a, np.sort(keys))


def unseen(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """True where ``keys[i]`` is not in the sorted array ``sorted_keys``."""
    if sorted_keys.size == 0:
        return np.ones(keys.size, dtype=bool)
    pos = np.searchsorted(sorted_keys, keys)
    pos[pos == sorted_keys.size] = 0  # past-the-end probes compare against a[0]; any key works
    return sorted_keys[pos] != keys


def insert_sorted(sorted_keys: np.ndarray, new_keys: np.ndarray) -> np.ndarray:
    """``sorted_keys`` with the sorted ``new_keys`` (known to be absent) inserted: one pass,
    no re-sort of the old keys."""
    if new_keys.size == 0:
        return sorted_keys
    return np.insert(sorted_keys, np.searchsorted(sorted_keys, new_keys), new_keys)


def keys_array(keys, count: int) -> np.ndarray:
    return np.fromiter(keys, dtype=np.uint64, count=count)


def smallest(keys: np.ndarray, need: int) -> np.ndarray:
    """Mask of the ``need`` smallest of distinct ``keys``: the one rule by which every
    explorer keeps part of a level at ``--max-states``. It depends only on the states'
    keys, not on the order candidates were generated in nor on the partitioning, so BFS
    and Spark keep the same states and give the same verdicts."""
    if need <= 0:
        return np.zeros(keys.size, dtype=bool)
    if need >= keys.size:
        return np.ones(keys.size, dtype=bool)
    return keys <= np.partition(keys, need - 1)[need - 1]
